"""Which device is live (a CUDA GPU via CuPy or PyTorch, else the CPU) and its peaks.

GPU peaks come from the spec table in :mod:`brrr.specs` (each with its source) or, for a
GPU the table lacks, are derived from its device properties (:func:`brrr.specs.derived_spec`);
a GPU never gets CPU peaks. CPU peaks are *measured* on first use (NumPy copy bandwidth on a
buffer far larger than the last-level cache, float32/float64 matmul FLOP/s) and cached on disk in
``<cache dir>/cpu_peaks.json`` (see :func:`measured_cpu_peaks` and :mod:`brrr.cache`).
"""
from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass, field
from typing import Optional

from . import cpu_peaks, specs
from .arrays import dtype_name as _normalise_dtype
from .cpu_peaks import (CPU_PEAKS_FILE, CPU_PEAKS_SCHEMA, PEAK_UNITS,  # noqa: F401 (public here too)
                        measured_cpu_peaks)
from .hardware import cpu_caches, cpu_name, last_level_cache_bytes  # noqa: F401 (public here too)

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
    _peaks_not_before: Optional[float] = field(default=None, repr=False)  # Unix s; set by device(refresh=True)
    replayed: bool = False
    """True for the device of a replayed build (``BRRR_REPLAY``): its name, peaks and caches are the
    recorded device's, and arrays and tensors made for it live on this machine's CPU, unmeasured."""
    timer_floors: dict = field(default_factory=dict, repr=False)
    """Seconds :func:`brrr.bench` reports for an empty call, per (clock, cache mode): measured
    by bench on first use and kept with the device (``device(refresh=True)`` starts afresh)."""

    # --- peaks -------------------------------------------------------------
    def _cpu_peaks(self) -> dict:
        if self._measured is None:
            self._measured = cpu_peaks.cached_entry(not_before=self._peaks_not_before)
        return self._measured

    def _no_gpu_peaks(self):
        raise RuntimeError(f"no peaks for the GPU {self.name}: brrr.specs has no entry for it and its clocks "
                           f"could not be read (install CuPy, or a PyTorch whose device properties have "
                           f"clock_rate, memory_clock_rate and memory_bus_width)")

    @property
    def peak_bandwidth(self) -> float:
        """DRAM bandwidth in bytes/s (spec or derived on a GPU, measured on the CPU)."""
        if self.spec is not None:
            return self.spec.bandwidth
        if self.backend == "cuda":
            self._no_gpu_peaks()
        return self._cpu_peaks()["bandwidth"]

    def peak_flops(self, dtype="float32", tensor_cores: bool = False) -> float:
        """Peak FLOP/s for ``dtype``; ``tensor_cores=True`` asks for the matrix-unit rate.

        Where a GPU has no tensor cores for that dtype (a T4 and TF32, say) the
        general-math figure is returned; :meth:`has_tensor_cores` tells which.
        FP64 without a spec figure is the FP32 figure times the FP64:FP32 lane ratio
        of the GPU's compute capability (:func:`brrr.specs.fp64_peak`).
        On the CPU both come from a measured matmul of that dtype (float16 and
        bfloat16 fall back to float32, which is how NumPy computes them).
        """
        dtype = _normalise_dtype(dtype)
        if not isinstance(tensor_cores, bool):
            raise TypeError(f"tensor_cores must be True or False, got {tensor_cores!r}")
        if self.spec is None:
            if self.backend == "cuda":
                self._no_gpu_peaks()
            peaks = self._cpu_peaks()
            return peaks["flops_float64"] if dtype == "float64" else peaks["flops_float32"]
        s = self.spec
        if dtype == "float64":
            return specs.fp64_peak(s)
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
            return "unknown GPU: no entry in brrr.specs and its clocks could not be read; no peaks"
        p = self._cpu_peaks()
        if self.replayed:
            return p["method"]      # the recorded CPU's own source
        return f"measured on this machine ({p['date']}, {p['method']})"

    # --- the backend: decided once, here -------------------------------------
    @property
    def on_gpu(self) -> bool:
        """True when measurements run on a CUDA GPU."""
        return self.backend == "cuda"

    @property
    def library(self) -> str:
        """The array library experiments use: 'numpy' on the CPU, 'cupy' or 'torch' on a GPU."""
        return self.array_library if self.on_gpu else "numpy"

    @property
    def torch_device(self) -> str:
        """Where PyTorch tensors go: 'cuda' on a GPU PyTorch can use, else 'cpu'
        (so ``BRRR_DEVICE=cpu`` keeps PyTorch on the CPU too)."""
        if not self.on_gpu or self.replayed:
            return "cpu"
        try:
            import torch
        except ImportError:
            return "cpu"
        return "cuda" if torch.cuda.is_available() else "cpu"

    def full(self, shape, value, dtype, library: Optional[str] = None):
        """An array of ``shape`` (int or tuple) filled with ``value``, on this device, made by
        ``library`` ('numpy', 'cupy' or 'torch'; default :attr:`library`). See :func:`brrr.arrays.full`."""
        from . import arrays
        library = library or self.library
        where = self.torch_device if library == "torch" else self.backend   # torch may lack CUDA
        return arrays.full(shape, value, dtype, library, where)

    @property
    def xp(self):
        """The array module for this device: ``cupy`` when CuPy drives the GPU, else ``numpy``
        (also for a replayed device, whose arrays are never measured)."""
        if self.array_library == "cupy" and not self.replayed:
            import cupy
            return cupy
        import numpy
        return numpy

    def synchronize(self):
        """Wait for queued GPU work to finish, CuPy's and PyTorch's (nothing to do on the CPU)."""
        if not self.on_gpu or self.replayed:
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
#
# Both detectors turn the device's properties into a dict with the keys of CuPy's
# getDeviceProperties (units as CUDA gives them: kHz, bits, bytes) and hand it to gpu_spec.

_TORCH_PROPERTIES = {"name": "name", "major": "major", "minor": "minor",
                     "multiProcessorCount": "multi_processor_count", "l2CacheSize": "L2_cache_size",
                     "clockRate": "clock_rate", "memoryClockRate": "memory_clock_rate",
                     "memoryBusWidth": "memory_bus_width"}


def gpu_spec(name: str, props: dict) -> Optional[specs.GpuSpec]:
    """The spec of the GPU ``name`` with CUDA device properties ``props`` (CuPy's keys).

    Its table entry when the name is one of the entry's aliases and the SM count agrees
    (a variant sold under the same name, or a MIG slice, does not); else peaks derived
    from ``props`` (:func:`brrr.specs.derived_spec`); else, where ``props`` lack the
    clocks, the table entry or None.
    """
    spec = specs.lookup(name)
    sms = props.get("multiProcessorCount")
    if spec is not None and (not sms or sms == spec.sm_count):
        return spec
    try:
        return specs.derived_spec(name, props)
    except ValueError:
        return spec


def _gpu_device(name: str, props: dict, array_library: str) -> Device:
    spec = gpu_spec(name, props)
    l2 = props.get("l2CacheSize") or (spec.l2_bytes if spec else 0)
    return Device(name=name, backend="cuda", array_library=array_library, l2_bytes=int(l2), spec=spec,
                  sm_count=int(props.get("multiProcessorCount") or 0) or None)


def _cuda_with_cupy() -> Optional[Device]:
    try:
        import cupy
        if not cupy.cuda.is_available():
            return None
        gpu = cupy.cuda.Device()
        props = dict(cupy.cuda.runtime.getDeviceProperties(gpu.id))
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        return _gpu_device(name, _with_clocks(props, gpu), "cupy")
    except Exception:  # CuPy installed but no driver, no GPU, or a broken install
        return None


# CUDA 13 dropped the clocks from cudaDeviceProp; the device attributes still give them.
_CLOCK_ATTRIBUTES = {"clockRate": "ClockRate", "memoryClockRate": "MemoryClockRate",
                     "memoryBusWidth": "GlobalMemoryBusWidth"}


def _with_clocks(props: dict, gpu) -> dict:
    """``props`` with the clocks and bus width a CUDA 13 build of CuPy leaves out, read from
    ``gpu.attributes`` (kHz and bits, as the properties give them)."""
    missing = [key for key in _CLOCK_ATTRIBUTES if not props.get(key)]
    if missing:
        try:
            attributes = gpu.attributes
        except Exception:  # an older CuPy, or a driver that refuses: the peaks say they can't be derived
            return props
        for key in missing:
            if attributes.get(_CLOCK_ATTRIBUTES[key]):
                props[key] = int(attributes[_CLOCK_ATTRIBUTES[key]])
    return props


def _cuda_with_torch() -> Optional[Device]:
    try:
        import torch
        if not torch.cuda.is_available():
            return None
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        props = {key: getattr(p, attr) for key, attr in _TORCH_PROPERTIES.items() if hasattr(p, attr)}
        return _gpu_device(str(props["name"]), props, "torch")
    except Exception:
        return None


def _replayed_device(set_name: str) -> Device:
    """The device of the record set ``set_name`` (``BRRR_REPLAY``), from its records' summary: a GPU
    with its spec sheet, or a CPU with the peaks it measured then."""
    from .results import Result, record_set_folder
    summary = Result.load(str(min(record_set_folder(set_name).glob("*.json")))).meta.get("device", {})
    if summary.get("backend") == "cpu":
        peaks = {"bandwidth": summary["peak_bandwidth"], "flops_float32": summary["peak_flops_float32"],
                 "flops_float64": summary.get("peak_flops_float64", summary["peak_flops_float32"] / 2),
                 "date": "recorded", "method": summary.get("source", "")}
        return Device(name=summary["name"], backend="cpu", array_library="numpy",
                      l2_bytes=int(summary.get("l2_bytes") or 0), _measured=peaks, replayed=True)
    if summary.get("backend") != "cuda":
        raise ValueError(f"BRRR_REPLAY={set_name!r}: its device {summary.get('name')!r} has backend "
                         f"{summary.get('backend')!r}, not 'cuda' or 'cpu'")
    spec = gpu_spec(summary["name"], {"multiProcessorCount": summary.get("sm_count")})
    if spec is None:
        raise ValueError(f"BRRR_REPLAY={set_name!r}: brrr.specs has no entry for {summary['name']!r}, "
                         f"so a replayed page would have no roofs")
    return Device(name=summary["name"], backend="cuda", array_library=summary.get("array_library", "cupy"),
                  l2_bytes=int(summary.get("l2_bytes") or spec.l2_bytes), spec=spec,
                  sm_count=summary.get("sm_count"), replayed=True)


def _cpu_device() -> Device:
    return Device(name=f"{cpu_name()} ({os.cpu_count()} threads)", backend="cpu",
                  array_library="numpy", l2_bytes=last_level_cache_bytes())


@functools.lru_cache(maxsize=None)
def _detect(force: str, replay: str = "") -> Device:
    if replay:
        return _replayed_device(replay)
    if force != "cpu":
        dev = _cuda_with_cupy() or _cuda_with_torch()
        if dev is not None:
            return dev
    if force != "cpu":
        print(f"brrr: no CUDA GPU found, so every measurement runs on the CPU ({cpu_name()}).")
    return _cpu_device()


def device(refresh: bool = False) -> Device:
    """The live device: a CUDA GPU if CuPy or PyTorch can use one, else the CPU.

    ``BRRR_DEVICE=cpu`` forces the CPU; ``BRRR_REPLAY=<set>`` gives the recorded device of that
    set (:mod:`brrr.reference`), whose measurements are replayed. The answer is cached;
    ``refresh=True`` looks again, and peaks measured on this machine are measured again on
    their first use (a cached measurement older than this call is not used).
    """
    if not isinstance(refresh, bool):
        raise TypeError(f"refresh must be True or False, got {refresh!r}")
    if refresh:
        _detect.cache_clear()
    from .config import replay_set
    dev = _detect(os.environ.get("BRRR_DEVICE", "").strip().lower(), replay_set())
    if refresh:
        dev._peaks_not_before = time.time()
    return dev


def provenance(command: str = "", **extra) -> dict:
    """A result's meta data (:func:`brrr.results.provenance`) with this machine's device summary."""
    from . import results
    return results.provenance(device().summary(), command, **extra)
