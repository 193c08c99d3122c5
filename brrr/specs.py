"""Spec-sheet peaks of common GPUs, each figure with its source.

All FLOP/s are *dense* (NVIDIA's datasheets quote tensor-core numbers "with
sparsity"; the dense figure is half of that). Bandwidth is DRAM (HBM/GDDR)
bandwidth in bytes/s, L2 in bytes. These are data, not measurements: the timer
and the roofline compare measurements against them.
"""
from dataclasses import dataclass, asdict
from typing import Optional

MiB = 1024 ** 2
T = 1e12
G = 1e9


@dataclass(frozen=True)
class GpuSpec:
    """Peak figures of one GPU model (FLOP/s, bytes/s, bytes)."""
    name: str
    fp32: float                    # general (CUDA-core) FP32 FLOP/s
    tf32_tensor: Optional[float]   # TF32 tensor-core FLOP/s, dense (None: no TF32)
    fp16_tensor: float             # FP16 tensor-core FLOP/s, dense, FP32 accumulate
    bf16_tensor: Optional[float]   # BF16 tensor-core FLOP/s, dense (None: no BF16)
    fp64: Optional[float]          # FP64 (non-tensor) FLOP/s
    bandwidth: float               # DRAM bandwidth, bytes/s
    l2_bytes: int                  # L2 cache size, bytes
    sm_count: int
    source: str                    # where the figures come from
    match: tuple = ()              # lower-case substrings of the CUDA device name

    def as_dict(self) -> dict:
        return asdict(self)


_DATASHEET = "NVIDIA {} datasheet"

GPU_SPECS = {
    "T4": GpuSpec(
        "Tesla T4", fp32=8.1 * T, tf32_tensor=None, fp16_tensor=65 * T, bf16_tensor=None,
        fp64=0.25 * T, bandwidth=320 * G, l2_bytes=4 * MiB, sm_count=40,
        source="NVIDIA T4 Tensor Core GPU datasheet (2019); L2 and SMs: NVIDIA Turing architecture whitepaper",
        match=("t4",)),
    "L4": GpuSpec(
        "NVIDIA L4", fp32=30.3 * T, tf32_tensor=60 * T, fp16_tensor=121 * T, bf16_tensor=121 * T,
        fp64=None, bandwidth=300 * G, l2_bytes=48 * MiB, sm_count=58,
        source="NVIDIA L4 Tensor Core GPU datasheet (2023), sparsity figures halved; L2: Ada Lovelace architecture whitepaper",
        match=("l4",)),
    "V100": GpuSpec(
        "Tesla V100 SXM2", fp32=15.7 * T, tf32_tensor=None, fp16_tensor=125 * T, bf16_tensor=None,
        fp64=7.8 * T, bandwidth=900 * G, l2_bytes=6 * MiB, sm_count=80,
        source="NVIDIA Tesla V100 datasheet (SXM2, 2020); L2 and SMs: Volta architecture whitepaper",
        match=("v100",)),
    "A100-40GB": GpuSpec(
        "NVIDIA A100 40GB", fp32=19.5 * T, tf32_tensor=156 * T, fp16_tensor=312 * T, bf16_tensor=312 * T,
        fp64=9.7 * T, bandwidth=1555 * G, l2_bytes=40 * MiB, sm_count=108,
        source="NVIDIA A100 Tensor Core GPU datasheet (2021), 40GB SXM/PCIe; L2 and SMs: Ampere GA100 whitepaper",
        match=("a100-sxm4-40gb", "a100-pcie-40gb", "a100 40gb")),
    "A100-80GB-SXM": GpuSpec(
        "NVIDIA A100 80GB SXM", fp32=19.5 * T, tf32_tensor=156 * T, fp16_tensor=312 * T, bf16_tensor=312 * T,
        fp64=9.7 * T, bandwidth=2039 * G, l2_bytes=40 * MiB, sm_count=108,
        source="NVIDIA A100 Tensor Core GPU datasheet (2021), 80GB SXM; L2 and SMs: Ampere GA100 whitepaper",
        match=("a100-sxm4-80gb", "a100-sxm-80gb")),
    "A100-80GB-PCIe": GpuSpec(
        "NVIDIA A100 80GB PCIe", fp32=19.5 * T, tf32_tensor=156 * T, fp16_tensor=312 * T, bf16_tensor=312 * T,
        fp64=9.7 * T, bandwidth=1935 * G, l2_bytes=40 * MiB, sm_count=108,
        source="NVIDIA A100 Tensor Core GPU datasheet (2021), 80GB PCIe; L2 and SMs: Ampere GA100 whitepaper",
        match=("a100 80gb pcie", "a100-pcie-80gb")),
    "H100-SXM": GpuSpec(
        "NVIDIA H100 SXM", fp32=67 * T, tf32_tensor=494.5 * T, fp16_tensor=989.5 * T, bf16_tensor=989.5 * T,
        fp64=34 * T, bandwidth=3.35e12, l2_bytes=50 * MiB, sm_count=132,
        source="NVIDIA H100 Tensor Core GPU datasheet (2023), SXM, sparsity figures halved; L2 and SMs: Hopper architecture whitepaper",
        match=("h100 80gb hbm3", "h100-sxm", "h100 sxm")),
    "H100-PCIe": GpuSpec(
        "NVIDIA H100 PCIe", fp32=51 * T, tf32_tensor=378 * T, fp16_tensor=756.5 * T, bf16_tensor=756.5 * T,
        fp64=26 * T, bandwidth=2.0e12, l2_bytes=50 * MiB, sm_count=114,
        source="NVIDIA H100 Tensor Core GPU datasheet (2023), PCIe, sparsity figures halved; L2 and SMs: Hopper architecture whitepaper",
        match=("h100 pcie",)),
    "H200": GpuSpec(
        "NVIDIA H200 SXM", fp32=67 * T, tf32_tensor=494.5 * T, fp16_tensor=989.5 * T, bf16_tensor=989.5 * T,
        fp64=34 * T, bandwidth=4.8e12, l2_bytes=50 * MiB, sm_count=132,
        source="NVIDIA H200 Tensor Core GPU datasheet (2024), SXM, sparsity figures halved; L2 and SMs: Hopper architecture whitepaper",
        match=("h200",)),
    "RTX-4090": GpuSpec(
        "NVIDIA GeForce RTX 4090", fp32=82.6 * T, tf32_tensor=82.6 * T, fp16_tensor=165.2 * T, bf16_tensor=165.2 * T,
        fp64=1.29 * T, bandwidth=1008 * G, l2_bytes=72 * MiB, sm_count=128,
        source="NVIDIA Ada Lovelace GPU architecture whitepaper (2022), appendix table, dense, FP32 accumulate",
        match=("rtx 4090",)),
    "RTX-3090": GpuSpec(
        "NVIDIA GeForce RTX 3090", fp32=35.6 * T, tf32_tensor=35.6 * T, fp16_tensor=71 * T, bf16_tensor=71 * T,
        fp64=0.56 * T, bandwidth=936 * G, l2_bytes=6 * MiB, sm_count=82,
        source="NVIDIA Ampere GA102 GPU architecture whitepaper (2020), dense, FP32 accumulate",
        match=("rtx 3090",)),
}

# The figures the seed article quotes for an A100 (He, "Making Deep Learning Go Brrrr").
SEED_A100 = {"fp32": 19.5 * T, "fp16_tensor": 312 * T, "bandwidth": 1.5e12,
             "source": "He, 'Making Deep Learning Go Brrrr From First Principles' (2022)"}


def lookup(device_name: str) -> Optional[GpuSpec]:
    """The spec whose match strings occur in ``device_name`` (case-insensitive), else None."""
    if not isinstance(device_name, str):
        raise TypeError(f"device_name must be a str, got {type(device_name).__name__}")
    lowered = device_name.lower()
    best = None
    for spec in GPU_SPECS.values():
        for pattern in spec.match:
            if pattern in lowered and (best is None or len(pattern) > best[0]):
                best = (len(pattern), spec)
    return best[1] if best else None


def spec_table():
    """The spec table as a pandas DataFrame in TFLOP/s, GB/s and MiB (for the appendix)."""
    import pandas as pd
    rows = []
    for key, s in GPU_SPECS.items():
        rows.append({
            "GPU": s.name, "FP32 TFLOP/s": s.fp32 / T,
            "TF32 tensor": s.tf32_tensor / T if s.tf32_tensor else None,
            "FP16 tensor": s.fp16_tensor / T,
            "BF16 tensor": s.bf16_tensor / T if s.bf16_tensor else None,
            "DRAM GB/s": s.bandwidth / G, "L2 MiB": s.l2_bytes / MiB, "SMs": s.sm_count,
            "ridge FP32 (FLOP/B)": s.fp32 / s.bandwidth,
            "ridge FP16 tensor (FLOP/B)": s.fp16_tensor / s.bandwidth,
            "source": s.source,
        })
    return pd.DataFrame(rows)


def tensor_vs_general():
    """Per GPU, the FP16 tensor-core peak, the FP32 general-math peak (both TFLOP/s, dense,
    from the spec sheets above) and their ratio: how much faster matmuls can be than the rest."""
    import pandas as pd
    return pd.DataFrame([{"GPU": s.name, "FP16 tensor (TFLOP/s)": s.fp16_tensor / T,
                          "FP32 general (TFLOP/s)": s.fp32 / T, "ratio": s.fp16_tensor / s.fp32}
                         for s in GPU_SPECS.values()])
