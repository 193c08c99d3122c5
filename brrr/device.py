"""Which device is live (a CUDA GPU via CuPy or PyTorch, else the CPU) and its peaks.

GPU peaks come from the spec table in :mod:`brrr.specs` (each with its source).
CPU peaks are *measured* on first use (NumPy copy bandwidth on a buffer far larger
than the last-level cache, float32/float64 matmul FLOP/s) and cached on disk.
"""
from __future__ import annotations

import datetime
import functools
import json
import os
import platform
import time
from dataclasses import dataclass, field
from typing import Optional

from . import config, specs

_DTYPES = ("float64", "float32", "float16", "bfloat16")


def _normalise_dtype(dtype) -> str:
    name = getattr(dtype, "name", None) or str(dtype)
    name = name.replace("torch.", "")
    aliases = {"fp32": "float32", "fp64": "float64", "fp16": "float16", "half": "float16",
               "bf16": "bfloat16", "float": "float32", "double": "float64", "tf32": "float32"}
    name = aliases.get(name, name)
    if name not in _DTYPES:
        raise ValueError(f"dtype must be one of {_DTYPES} (or a NumPy/PyTorch dtype), got {dtype!r}")
    return name


@dataclass
class Device:
    """The live device and its peaks: FLOP/s, bytes/s, bytes.

    ``backend`` is 'cuda' or 'cpu'; ``array_library`` names what runs arrays on it
    ('cupy', 'torch' or 'numpy'); ``source`` says where the peaks come from.
    """
    name: str
    backend: str
    array_library: str
    l2_bytes: int
    spec: Optional[specs.GpuSpec] = None
    sm_count: Optional[int] = None
    _measured: Optional[dict] = field(default=None, repr=False)

    # --- peaks -------------------------------------------------------------
    def _cpu_peaks(self) -> dict:
        if self._measured is None:
            self._measured = measured_cpu_peaks()
        return self._measured

    @property
    def peak_bandwidth(self) -> float:
        """DRAM bandwidth in bytes/s (spec on a known GPU, measured on the CPU)."""
        if self.spec is not None:
            return self.spec.bandwidth
        return self._cpu_peaks()["bandwidth"]

    def peak_flops(self, dtype="float32", tensor_cores: bool = False) -> float:
        """Peak FLOP/s for ``dtype``; ``tensor_cores=True`` asks for the matrix-unit rate.

        Where a GPU has no tensor cores for that dtype (a T4 and TF32, say) the
        general-math figure is returned; :meth:`has_tensor_cores` tells which.
        On the CPU both come from a measured matmul of that dtype (float16 and
        bfloat16 fall back to float32, which is how NumPy computes them).
        """
        dtype = _normalise_dtype(dtype)
        if not isinstance(tensor_cores, bool):
            raise TypeError(f"tensor_cores must be True or False, got {tensor_cores!r}")
        if self.spec is None:
            peaks = self._cpu_peaks()
            return peaks["flops_float64"] if dtype == "float64" else peaks["flops_float32"]
        s = self.spec
        if dtype == "float64":
            return s.fp64 or s.fp32 / 32
        if tensor_cores and self.has_tensor_cores(dtype):
            return {"float32": s.tf32_tensor, "float16": s.fp16_tensor, "bfloat16": s.bf16_tensor}[dtype]
        return s.fp32

    def has_tensor_cores(self, dtype="float16") -> bool:
        """Whether the spec lists a tensor-core rate for ``dtype`` (float32 means TF32)."""
        dtype = _normalise_dtype(dtype)
        if self.spec is None or dtype == "float64":
            return False
        return {"float32": self.spec.tf32_tensor, "float16": self.spec.fp16_tensor,
                "bfloat16": self.spec.bf16_tensor}[dtype] is not None

    @property
    def source(self) -> str:
        """Where the peak figures come from."""
        if self.spec is not None:
            return self.spec.source
        if self.backend == "cuda":
            return "unknown GPU: no spec sheet in brrr.specs; peaks measured on this machine"
        p = self._cpu_peaks()
        return f"measured on this machine ({p['date']}, {p['method']})"

    @property
    def xp(self):
        """The array module for this device: ``cupy`` when CuPy drives the GPU, else ``numpy``."""
        if self.array_library == "cupy":
            import cupy
            return cupy
        import numpy
        return numpy

    def synchronize(self):
        """Wait for queued GPU work to finish (nothing to do on the CPU)."""
        if self.backend != "cuda":
            return
        if self.array_library == "cupy":
            import cupy
            cupy.cuda.Device().synchronize()
        try:
            import torch
            if torch.cuda.is_available():
                torch.cuda.synchronize()
        except ImportError:
            pass

    @property
    def ridge(self) -> float:
        """FP32 general-math ridge point, FLOP/byte."""
        return self.peak_flops("float32") / self.peak_bandwidth

    def summary(self) -> dict:
        """Plain-data description (for JSON records and ``brrr info``)."""
        out = {"name": self.name, "backend": self.backend, "array_library": self.array_library,
               "l2_bytes": self.l2_bytes, "peak_bandwidth": self.peak_bandwidth,
               "peak_flops_float32": self.peak_flops("float32"),
               "peak_flops_float32_tensor": self.peak_flops("float32", True),
               "peak_flops_float16_tensor": self.peak_flops("float16", True),
               "source": self.source}
        if self.sm_count:
            out["sm_count"] = self.sm_count
        return out

    def __repr__(self):
        return (f"Device({self.name!r}, backend={self.backend!r}, "
                f"l2={self.l2_bytes / 2**20:.1f} MiB)")


# --- detection ---------------------------------------------------------------

def _cuda_with_cupy() -> Optional[Device]:
    try:
        import cupy
        if not cupy.cuda.is_available():
            return None
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        spec = specs.lookup(name)
        return Device(name=name, backend="cuda", array_library="cupy",
                      l2_bytes=int(props.get("l2CacheSize") or (spec.l2_bytes if spec else 0)),
                      spec=spec, sm_count=int(props.get("multiProcessorCount", 0)) or None)
    except Exception:  # CuPy installed but no driver, no GPU, or a broken install
        return None


def _cuda_with_torch() -> Optional[Device]:
    try:
        import torch
        if not torch.cuda.is_available():
            return None
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        spec = specs.lookup(props.name)
        l2 = getattr(props, "L2_cache_size", 0) or (spec.l2_bytes if spec else 0)
        return Device(name=props.name, backend="cuda", array_library="torch", l2_bytes=int(l2),
                      spec=spec, sm_count=props.multi_processor_count)
    except Exception:
        return None


def cpu_name() -> str:
    """The CPU's model name (from /proc/cpuinfo where there is one)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def last_level_cache_bytes() -> int:
    """Size of the largest CPU cache in bytes (Linux sysfs; 32 MiB if it can't be read)."""
    best = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in os.listdir(base):
            try:
                with open(os.path.join(base, entry, "size")) as f:
                    text = f.read().strip().upper()
            except OSError:
                continue
            mult = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(text[-1:], 1)
            digits = text.rstrip("KMG")
            if digits.isdigit():
                best = max(best, int(digits) * mult)
    except OSError:
        pass
    return best or 32 * 1024 ** 2


def _cpu_device() -> Device:
    return Device(name=f"{cpu_name()} ({os.cpu_count()} threads)", backend="cpu",
                  array_library="numpy", l2_bytes=last_level_cache_bytes())


@functools.lru_cache(maxsize=None)
def _detect(force: str) -> Device:
    if force != "cpu":
        dev = _cuda_with_cupy() or _cuda_with_torch()
        if dev is not None:
            return dev
    if force != "cpu":
        print(f"brrr: no CUDA GPU found, so every measurement runs on the CPU ({cpu_name()}).")
    return _cpu_device()


def device(refresh: bool = False) -> Device:
    """The live device: a CUDA GPU if CuPy or PyTorch can use one, else the CPU.

    ``BRRR_DEVICE=cpu`` forces the CPU. The answer is cached; ``refresh=True`` looks again.
    """
    if refresh:
        _detect.cache_clear()
    return _detect(os.environ.get("BRRR_DEVICE", "").strip().lower())


# --- measured CPU peaks --------------------------------------------------------

def _time_best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _measure_cpu_peaks(quick: bool) -> dict:
    import numpy as np
    llc = last_level_cache_bytes()
    # Copy bandwidth: a buffer 8x the last-level cache (at least 64 MiB), best of several.
    n = max(8 * llc, 64 * 2 ** 20) // 4
    src = np.ones(n, dtype=np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # fault the pages in before timing
    seconds = _time_best(lambda: np.copyto(dst, src), 5 if quick else 20)
    bandwidth = 2 * src.nbytes / seconds  # one read + one write per element
    flops = {}
    size = 512 if quick else 2048
    for dtype in ("float32", "float64"):
        a = np.ones((size, size), dtype=dtype)
        b = np.ones((size, size), dtype=dtype)
        c = np.empty((size, size), dtype=dtype)
        np.matmul(a, b, out=c)
        seconds = _time_best(lambda: np.matmul(a, b, out=c), 3 if quick else 10)
        flops[dtype] = 2 * size ** 3 / seconds
    return {"bandwidth": bandwidth, "flops_float32": flops["float32"],
            "flops_float64": flops["float64"],
            "method": f"best of np.copyto on {src.nbytes // 2**20} MiB and {size}x{size} np.matmul",
            "date": datetime.date.today().isoformat(), "quick": quick}


def measured_cpu_peaks(refresh: bool = False) -> dict:
    """This CPU's copy bandwidth (bytes/s) and matmul FLOP/s, measured once and cached.

    The cache is keyed by CPU model, thread count, NumPy version and quick mode,
    so a different machine or library measures again.
    """
    import numpy as np
    quick = config.quick_mode()
    key = f"{cpu_name()}|{os.cpu_count()}|numpy {np.__version__}|quick={quick}"
    path = os.path.join(config.cache_dir(), "cpu_peaks.json")
    cache = {}
    try:
        with open(path) as f:
            cache = json.load(f)
    except (OSError, ValueError):
        cache = {}
    if not refresh and key in cache:
        return cache[key]
    print("brrr: measuring this CPU's peak bandwidth and FLOP/s once (cached for next time)...")
    cache[key] = _measure_cpu_peaks(quick)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(cache, f, indent=1)
    except OSError:
        pass  # a read-only home still works, it just measures again next time
    return cache[key]
