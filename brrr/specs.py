"""Spec-sheet peaks of common GPUs, each figure with its source.

All FLOP/s are *dense*: where NVIDIA's datasheets quote tensor-core numbers "with
sparsity", the dense figure is half of that, and the entry's source says so.
Tensor-core FP16/BF16 figures are with FP32 accumulation (GeForce cards run that at
half their FP16-accumulate rate). Bandwidth is DRAM (HBM/GDDR) bandwidth in bytes/s,
L2 in bytes. These are data, not measurements: the timer and the roofline compare
measurements against them.

A GPU is found by the exact name CUDA reports (after :func:`normalise_name`), never by
a piece of another model's name. A GPU the table lacks gets peaks derived from its
device properties (:func:`derived_spec`), labelled as derived.
"""
import re
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
    fp16_tensor: Optional[float]   # FP16 tensor-core FLOP/s, dense, FP32 accumulate (None: not known)
    bf16_tensor: Optional[float]   # BF16 tensor-core FLOP/s, dense (None: no BF16)
    fp64: Optional[float]          # FP64 (non-tensor) FLOP/s (None: not on the datasheet)
    bandwidth: float               # DRAM bandwidth, bytes/s
    l2_bytes: int                  # L2 cache size, bytes
    sm_count: int
    compute_capability: tuple      # (major, minor)
    source: str                    # where the figures come from
    match: tuple = ()              # aliases: the names CUDA reports for this model (exact, see normalise_name)

    def as_dict(self) -> dict:
        return asdict(self)


_HALVED = "sparsity figures halved"

GPU_SPECS = {
    # --- data-centre and cloud GPUs ---
    "T4": GpuSpec(
        "Tesla T4", fp32=8.1 * T, tf32_tensor=None, fp16_tensor=65 * T, bf16_tensor=None,
        fp64=0.25 * T, bandwidth=320 * G, l2_bytes=4 * MiB, sm_count=40, compute_capability=(7, 5),
        source="NVIDIA T4 Tensor Core GPU datasheet (2019); L2 and SMs: NVIDIA Turing architecture whitepaper",
        match=("Tesla T4",)),
    "L4": GpuSpec(
        "NVIDIA L4", fp32=30.3 * T, tf32_tensor=60 * T, fp16_tensor=121 * T, bf16_tensor=121 * T,
        fp64=None, bandwidth=300 * G, l2_bytes=48 * MiB, sm_count=58, compute_capability=(8, 9),
        source=f"NVIDIA L4 Tensor Core GPU datasheet (2023), {_HALVED}; L2: Ada Lovelace architecture whitepaper",
        match=("NVIDIA L4",)),
    "A10": GpuSpec(
        "NVIDIA A10", fp32=31.2 * T, tf32_tensor=62.5 * T, fp16_tensor=125 * T, bf16_tensor=125 * T,
        fp64=None, bandwidth=600 * G, l2_bytes=6 * MiB, sm_count=72, compute_capability=(8, 6),
        source=f"NVIDIA A10 Tensor Core GPU datasheet (2021), {_HALVED}; L2 and SMs: NVIDIA Ampere GA102 "
               "GPU architecture whitepaper",
        match=("NVIDIA A10",)),
    "L40S": GpuSpec(
        "NVIDIA L40S", fp32=91.6 * T, tf32_tensor=183 * T, fp16_tensor=362.05 * T, bf16_tensor=362.05 * T,
        fp64=None, bandwidth=864 * G, l2_bytes=96 * MiB, sm_count=142, compute_capability=(8, 9),
        source=f"NVIDIA L40S GPU datasheet (2023), {_HALVED}; SMs: its 142 RT cores, one per SM; L2: the "
               "AD102 of the L40 in the NVIDIA Ada GPU architecture whitepaper (v2.01)",
        match=("NVIDIA L40S",)),
    "V100": GpuSpec(
        "Tesla V100 SXM2", fp32=15.7 * T, tf32_tensor=None, fp16_tensor=125 * T, bf16_tensor=None,
        fp64=7.8 * T, bandwidth=900 * G, l2_bytes=6 * MiB, sm_count=80, compute_capability=(7, 0),
        source="NVIDIA Tesla V100 datasheet (SXM2, 2020); L2 and SMs: Volta architecture whitepaper",
        match=("Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB")),
    "V100-PCIe": GpuSpec(
        "Tesla V100 PCIe", fp32=14 * T, tf32_tensor=None, fp16_tensor=112 * T, bf16_tensor=None,
        fp64=7 * T, bandwidth=900 * G, l2_bytes=6 * MiB, sm_count=80, compute_capability=(7, 0),
        source="NVIDIA Tesla V100 datasheet (PCIe, 2020); L2 and SMs: Volta architecture whitepaper",
        match=("Tesla V100-PCIE-16GB", "Tesla V100-PCIE-32GB")),
    "A100-40GB": GpuSpec(
        "NVIDIA A100 40GB", fp32=19.5 * T, tf32_tensor=156 * T, fp16_tensor=312 * T, bf16_tensor=312 * T,
        fp64=9.7 * T, bandwidth=1555 * G, l2_bytes=40 * MiB, sm_count=108, compute_capability=(8, 0),
        source="NVIDIA A100 Tensor Core GPU datasheet (2021), 40GB SXM/PCIe, dense; L2 and SMs: Ampere GA100 "
               "whitepaper",
        match=("NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB")),
    "A100-80GB-SXM": GpuSpec(
        "NVIDIA A100 80GB SXM", fp32=19.5 * T, tf32_tensor=156 * T, fp16_tensor=312 * T, bf16_tensor=312 * T,
        fp64=9.7 * T, bandwidth=2039 * G, l2_bytes=40 * MiB, sm_count=108, compute_capability=(8, 0),
        source="NVIDIA A100 Tensor Core GPU datasheet (2021), 80GB SXM, dense; L2 and SMs: Ampere GA100 whitepaper",
        match=("NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM-80GB")),
    "A100-80GB-PCIe": GpuSpec(
        "NVIDIA A100 80GB PCIe", fp32=19.5 * T, tf32_tensor=156 * T, fp16_tensor=312 * T, bf16_tensor=312 * T,
        fp64=9.7 * T, bandwidth=1935 * G, l2_bytes=40 * MiB, sm_count=108, compute_capability=(8, 0),
        source="NVIDIA A100 Tensor Core GPU datasheet (2021), 80GB PCIe, dense; L2 and SMs: Ampere GA100 whitepaper",
        match=("NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-80GB")),
    "H100-SXM": GpuSpec(
        "NVIDIA H100 SXM", fp32=67 * T, tf32_tensor=494.5 * T, fp16_tensor=989.5 * T, bf16_tensor=989.5 * T,
        fp64=34 * T, bandwidth=3.35e12, l2_bytes=50 * MiB, sm_count=132, compute_capability=(9, 0),
        source=f"NVIDIA H100 Tensor Core GPU datasheet (2023), SXM, {_HALVED}; L2 and SMs: Hopper architecture "
               "whitepaper",
        match=("NVIDIA H100 80GB HBM3",)),
    "H100-PCIe": GpuSpec(
        "NVIDIA H100 PCIe", fp32=51 * T, tf32_tensor=378 * T, fp16_tensor=756.5 * T, bf16_tensor=756.5 * T,
        fp64=26 * T, bandwidth=2.0e12, l2_bytes=50 * MiB, sm_count=114, compute_capability=(9, 0),
        source=f"NVIDIA H100 Tensor Core GPU datasheet (2023), PCIe, {_HALVED}; L2 and SMs: Hopper architecture "
               "whitepaper",
        match=("NVIDIA H100 PCIe",)),
    "H100-NVL": GpuSpec(
        "NVIDIA H100 NVL", fp32=60 * T, tf32_tensor=417.5 * T, fp16_tensor=835.5 * T, bf16_tensor=835.5 * T,
        fp64=30 * T, bandwidth=3.9e12, l2_bytes=50 * MiB, sm_count=132, compute_capability=(9, 0),
        source=f"NVIDIA H100 Tensor Core GPU datasheet (2023), H100 NVL per GPU, {_HALVED}; SMs: NVIDIA H100 NVL "
               "product brief; L2: Hopper architecture whitepaper",
        match=("NVIDIA H100 NVL",)),
    "H200": GpuSpec(
        "NVIDIA H200 SXM", fp32=67 * T, tf32_tensor=494.5 * T, fp16_tensor=989.5 * T, bf16_tensor=989.5 * T,
        fp64=34 * T, bandwidth=4.8e12, l2_bytes=50 * MiB, sm_count=132, compute_capability=(9, 0),
        source=f"NVIDIA H200 Tensor Core GPU datasheet (2024), SXM, {_HALVED}; L2 and SMs: Hopper architecture "
               "whitepaper",
        match=("NVIDIA H200",)),
    "H200-NVL": GpuSpec(
        "NVIDIA H200 NVL", fp32=60 * T, tf32_tensor=417.5 * T, fp16_tensor=835.5 * T, bf16_tensor=835.5 * T,
        fp64=30 * T, bandwidth=4.8e12, l2_bytes=50 * MiB, sm_count=132, compute_capability=(9, 0),
        source=f"NVIDIA H200 Tensor Core GPU datasheet (2024), H200 NVL, {_HALVED}; L2 and SMs: Hopper "
               "architecture whitepaper",
        match=("NVIDIA H200 NVL",)),
    "GH200-96GB": GpuSpec(
        "NVIDIA GH200 (96GB HBM3)", fp32=67 * T, tf32_tensor=494.5 * T, fp16_tensor=989.5 * T,
        bf16_tensor=989.5 * T, fp64=34 * T, bandwidth=4.0e12, l2_bytes=50 * MiB, sm_count=132,
        compute_capability=(9, 0),
        source=f"NVIDIA GH200 Grace Hopper Superchip datasheet (2024), 96GB HBM3 GPU, {_HALVED}; L2 and SMs: "
               "Hopper architecture whitepaper (H100 SXM5)",
        match=("NVIDIA GH200 480GB",)),
    "GH200-144GB": GpuSpec(
        "NVIDIA GH200 (144GB HBM3e)", fp32=67 * T, tf32_tensor=494.5 * T, fp16_tensor=989.5 * T,
        bf16_tensor=989.5 * T, fp64=34 * T, bandwidth=4.9e12, l2_bytes=50 * MiB, sm_count=132,
        compute_capability=(9, 0),
        source=f"NVIDIA GH200 Grace Hopper Superchip datasheet (2024), 144GB HBM3e GPU, {_HALVED}; L2 and SMs: "
               "Hopper architecture whitepaper (H100 SXM5)",
        match=("NVIDIA GH200 144G HBM3e",)),
    # --- workstation and desktop GPUs ---
    "RTX-A6000": GpuSpec(
        "NVIDIA RTX A6000", fp32=38.7 * T, tf32_tensor=77.4 * T, fp16_tensor=154.8 * T, bf16_tensor=154.8 * T,
        fp64=None, bandwidth=768 * G, l2_bytes=6 * MiB, sm_count=84, compute_capability=(8, 6),
        source="NVIDIA Ampere GA102 GPU architecture whitepaper (v2.0), Appendix C (RTX A6000), dense, FP32 "
               "accumulate",
        match=("NVIDIA RTX A6000",)),
    "RTX-3070": GpuSpec(
        "NVIDIA GeForce RTX 3070", fp32=20.3 * T, tf32_tensor=20.3 * T, fp16_tensor=40.6 * T, bf16_tensor=40.6 * T,
        fp64=None, bandwidth=448 * G, l2_bytes=4 * MiB, sm_count=46, compute_capability=(8, 6),
        source="NVIDIA Ampere GA102 GPU architecture whitepaper (2020), Appendix A (RTX 3070), dense, FP32 "
               "accumulate",
        match=("NVIDIA GeForce RTX 3070",)),
    "RTX-3080": GpuSpec(
        "NVIDIA GeForce RTX 3080", fp32=29.8 * T, tf32_tensor=29.8 * T, fp16_tensor=59.5 * T, bf16_tensor=59.5 * T,
        fp64=None, bandwidth=760 * G, l2_bytes=5 * MiB, sm_count=68, compute_capability=(8, 6),
        source="NVIDIA Ampere GA102 GPU architecture whitepaper (2020), RTX 3080 (10GB) table, dense, FP32 "
               "accumulate",
        match=("NVIDIA GeForce RTX 3080",)),
    "RTX-3090": GpuSpec(
        "NVIDIA GeForce RTX 3090", fp32=35.6 * T, tf32_tensor=35.6 * T, fp16_tensor=71 * T, bf16_tensor=71 * T,
        fp64=0.56 * T, bandwidth=936 * G, l2_bytes=6 * MiB, sm_count=82, compute_capability=(8, 6),
        source="NVIDIA Ampere GA102 GPU architecture whitepaper (2020), dense, FP32 accumulate",
        match=("NVIDIA GeForce RTX 3090",)),
    "RTX-4080": GpuSpec(
        "NVIDIA GeForce RTX 4080", fp32=48.7 * T, tf32_tensor=48.7 * T, fp16_tensor=97.5 * T, bf16_tensor=97.5 * T,
        fp64=None, bandwidth=716.8 * G, l2_bytes=64 * MiB, sm_count=76, compute_capability=(8, 9),
        source="NVIDIA Ada Lovelace GPU architecture whitepaper (2022), appendix table (RTX 4080 16GB), dense, "
               "FP32 accumulate",
        match=("NVIDIA GeForce RTX 4080",)),
    "RTX-4090": GpuSpec(
        "NVIDIA GeForce RTX 4090", fp32=82.6 * T, tf32_tensor=82.6 * T, fp16_tensor=165.2 * T, bf16_tensor=165.2 * T,
        fp64=1.29 * T, bandwidth=1008 * G, l2_bytes=72 * MiB, sm_count=128, compute_capability=(8, 9),
        source="NVIDIA Ada Lovelace GPU architecture whitepaper (2022), appendix table, dense, FP32 accumulate",
        match=("NVIDIA GeForce RTX 4090",)),
    "RTX-5070": GpuSpec(
        "NVIDIA GeForce RTX 5070", fp32=30.9 * T, tf32_tensor=30.9 * T, fp16_tensor=61.7 * T, bf16_tensor=61.7 * T,
        fp64=None, bandwidth=672 * G, l2_bytes=48 * MiB, sm_count=48, compute_capability=(12, 0),
        source="NVIDIA RTX Blackwell GPU architecture whitepaper (2025), appendix table (RTX 5070), dense, FP32 "
               "accumulate",
        match=("NVIDIA GeForce RTX 5070",)),
    "RTX-5080": GpuSpec(
        "NVIDIA GeForce RTX 5080", fp32=56.3 * T, tf32_tensor=56.3 * T, fp16_tensor=112.6 * T, bf16_tensor=112.6 * T,
        fp64=None, bandwidth=960 * G, l2_bytes=64 * MiB, sm_count=84, compute_capability=(12, 0),
        source="NVIDIA RTX Blackwell GPU architecture whitepaper (2025), appendix table (RTX 5080), dense, FP32 "
               "accumulate",
        match=("NVIDIA GeForce RTX 5080",)),
    "RTX-5090": GpuSpec(
        "NVIDIA GeForce RTX 5090", fp32=104.8 * T, tf32_tensor=104.8 * T, fp16_tensor=209.5 * T,
        bf16_tensor=209.5 * T, fp64=None, bandwidth=1792 * G, l2_bytes=96 * MiB, sm_count=170,
        compute_capability=(12, 0),
        source="NVIDIA RTX Blackwell GPU architecture whitepaper (2025), appendix table (RTX 5090), dense, FP32 "
               "accumulate",
        match=("NVIDIA GeForce RTX 5090",)),
}

# The figures the seed article quotes for an A100 (He, "Making Deep Learning Go Brrrr").
SEED_A100 = {"fp32": 19.5 * T, "fp16_tensor": 312 * T, "bandwidth": 1.5e12,
             "source": "He, 'Making Deep Learning Go Brrrr From First Principles' (2022)"}

_VENDOR_WORDS = ("nvidia", "tesla", "geforce")


def normalise_name(device_name: str) -> str:
    """A CUDA device name in the form the table's aliases are compared in: lower case,
    '-' and '_' as spaces, single spaces, without the words NVIDIA, Tesla and GeForce.
    'NVIDIA A100-SXM4-40GB' -> 'a100 sxm4 40gb'; 'NVIDIA GeForce RTX 4090' -> 'rtx 4090'."""
    words = re.sub(r"[-_\s]+", " ", device_name.lower()).split()
    return " ".join(w for w in words if w not in _VENDOR_WORDS)


def _alias_index(table: dict) -> dict:
    """{normalised alias: table key}; an alias given to two entries is an error."""
    index = {}
    for key, spec in table.items():
        for alias in spec.match:
            name = normalise_name(alias)
            if name in index:
                raise ValueError(f"the alias {alias!r} is given to both {index[name]} and {key}")
            index[name] = key
    return index


_BY_ALIAS = _alias_index(GPU_SPECS)


def lookup(device_name: str) -> Optional[GpuSpec]:
    """The spec one of whose aliases is ``device_name`` (after :func:`normalise_name`), else None.

    Exact: 'NVIDIA L40S' is not the L4, nor 'NVIDIA GeForce RTX 4090 Laptop GPU' the desktop 4090.
    """
    if not isinstance(device_name, str):
        raise TypeError(f"device_name must be a str, got {type(device_name).__name__}")
    key = _BY_ALIAS.get(normalise_name(device_name))
    return GPU_SPECS[key] if key else None


# --- peaks derived from device properties ----------------------------------------------
#
# FMA results per clock per SM, from the table "Throughput of Native Arithmetic Instructions
# (Number of Results per Clock Cycle per Multiprocessor)" of the CUDA C++ Programming Guide,
# section "Arithmetic Instructions" (in CUDA 13 moved to the CUDA C++ Best Practices Guide,
# same title): 32-bit floating-point add/multiply/multiply-add is 64 on compute capability
# 6.0, 7.x and 8.0 and 128 on the others from 5.0 on (8.6, 8.9, 9.0, 10.x, 12.x); the 64-bit
# row is copied below for the compute capabilities checked.

_FP32_LANES_64 = {(6, 0), (7, 0), (7, 2), (7, 5), (8, 0)}
_FP64_LANES = {(6, 0): 32, (6, 1): 4, (7, 0): 32, (7, 5): 2, (8, 0): 32, (8, 6): 2, (8, 9): 2,
               (9, 0): 64, (10, 0): 64, (12, 0): 2}


def fp32_lanes(compute_capability) -> int:
    """FP32 FMA results per clock per SM for ``compute_capability`` = (major, minor)."""
    return 64 if tuple(compute_capability) in _FP32_LANES_64 else 128


def fp64_lanes(compute_capability) -> Optional[int]:
    """FP64 FMA results per clock per SM for ``compute_capability``, None where not listed here."""
    return _FP64_LANES.get(tuple(compute_capability))


def fp64_peak(spec: GpuSpec) -> float:
    """FP64 FLOP/s: the spec's figure, else its FP32 figure scaled by the FP64:FP32 lane
    ratio of its compute capability (1/32 where that is not listed)."""
    if spec.fp64:
        return spec.fp64
    fp64 = fp64_lanes(spec.compute_capability)
    return spec.fp32 * fp64 / fp32_lanes(spec.compute_capability) if fp64 else spec.fp32 / 32


_NEEDED = ("memoryClockRate", "memoryBusWidth", "clockRate", "multiProcessorCount", "major", "minor")


def derived_spec(name: str, props: dict) -> GpuSpec:
    """Peaks of a GPU the table lacks, derived from its CUDA device properties.

    ``props`` uses the keys of CuPy's ``cupy.cuda.runtime.getDeviceProperties``:
    ``memoryClockRate`` (kHz), ``memoryBusWidth`` (bits), ``clockRate`` (peak SM clock, kHz),
    ``multiProcessorCount``, ``major``, ``minor`` and, optionally, ``l2CacheSize`` (bytes).

    bandwidth = memory clock x 2 (double data rate) x bus width / 8, bytes/s;
    FP32 = SMs x clock x FP32 lanes per SM x 2 FLOP per FMA (FP64 likewise, where the lanes
    are listed). Tensor-core peaks are None: the properties do not give them. The source
    starts "unknown GPU", as :func:`brrr.roofline.has_spec_sheet` expects of a GPU without
    a datasheet. ValueError where a needed property is missing or not a positive number.
    """
    def usable(key):
        value = props.get(key)
        return isinstance(value, int) and not isinstance(value, bool) and value >= (0 if key == "minor" else 1)

    missing = [key for key in _NEEDED if not usable(key)]
    if missing:
        raise ValueError(f"cannot derive the peaks of {name}: no usable {', '.join(missing)} in its properties")
    cc = (props["major"], props["minor"])
    sms, clock_hz = props["multiProcessorCount"], props["clockRate"] * 1e3
    fp64 = fp64_lanes(cc)
    return GpuSpec(
        name, fp32=sms * clock_hz * fp32_lanes(cc) * 2, tf32_tensor=None, fp16_tensor=None, bf16_tensor=None,
        fp64=sms * clock_hz * fp64 * 2 if fp64 else None,
        bandwidth=props["memoryClockRate"] * 1e3 * 2 * props["memoryBusWidth"] / 8,
        l2_bytes=int(props.get("l2CacheSize") or 0), sm_count=sms, compute_capability=cc,
        source=(f"unknown GPU (not in brrr.specs): peaks derived from the device's properties, not a datasheet "
                f"figure: bandwidth = memory clock {props['memoryClockRate'] / 1e3:g} MHz x 2 x "
                f"{props['memoryBusWidth']}-bit bus / 8; FP32 = {sms} SMs x {clock_hz / 1e6:g} MHz x "
                f"{fp32_lanes(cc)} FP32 lanes per SM (compute capability {cc[0]}.{cc[1]}, CUDA 'Throughput of "
                f"Native Arithmetic Instructions' table) x 2 FLOP per FMA; no tensor-core figures"))


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


COMMON_GPUS = ("T4", "L4", "V100", "A100-80GB-SXM", "H100-SXM", "H200", "RTX-4090")


def ridge_points(keys=COMMON_GPUS, device=None):
    """Ridge points (peak FLOP/s over DRAM bandwidth, FLOP/byte) of the GPUs ``keys`` of
    GPU_SPECS, and a last row for ``device`` (a ``brrr.Device``) when given: a DataFrame with
    peaks in TFLOP/s and bandwidth in GB/s; None where there is no tensor-core figure."""
    import pandas as pd

    def row(name, fp32, tensor, bandwidth, source):
        return {"GPU": name, "FP32 TFLOP/s": fp32 / T, "FP16 tensor TFLOP/s": tensor and tensor / T,
                "DRAM GB/s": bandwidth / G, "ridge FP32": fp32 / bandwidth,
                "ridge FP16 tensor": tensor and tensor / bandwidth, "source": source}

    rows = [row(s.name, s.fp32, s.fp16_tensor, s.bandwidth, s.source.split(";")[0])
            for s in (GPU_SPECS[key] for key in keys)]
    if device is not None:
        tensor = device.peak_flops("float16", True) if device.has_tensor_cores("float16") else None
        rows.append(row(f"this page: {device.name}", device.peak_flops("float32"), tensor,
                        device.peak_bandwidth, device.source))
    return pd.DataFrame(rows)
