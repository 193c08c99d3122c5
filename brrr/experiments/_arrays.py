"""Arrays on the live device for the experiments: which library, how to allocate, how to time.

The experiments run on whatever :func:`brrr.device` found: NumPy on the CPU,
CuPy or PyTorch on a CUDA GPU. This module hides the three spellings of
"allocate n elements" and "copy into a preallocated output", and turns a
:class:`brrr.Timing` into the tidy fields every record shares.
"""
from __future__ import annotations

import math

from .. import config
from ..arrays import ITEMSIZE, dtype_name, full, itemsize, torch_dtype  # noqa: F401 (used by the experiments)
from ..device import device as live_device


def check_sizes(name: str, sizes) -> list:
    """A list of positive integers, or a clear error naming ``name``."""
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise TypeError(f"{name} must be a list of positive integers, got {sizes!r}")
    out = []
    for s in sizes:
        if isinstance(s, bool) or not float(s).is_integer() or s <= 0:
            raise ValueError(f"{name} must hold positive integers, got {s!r}")
        out.append(int(s))
    if not out:
        raise ValueError(f"{name} must not be empty")
    return out


def copier(lib):
    """``fn(dst, src)`` that copies into a preallocated array with one kernel."""
    if lib == "torch":
        return lambda dst, src: dst.copy_(src)
    if lib == "cupy":
        import cupy
        return cupy.copyto
    import numpy
    return numpy.copyto


def scaler(lib):
    """``fn(dst, src)``: dst = 2 * src in one pass (1 FLOP per element)."""
    if lib == "torch":
        import torch
        return lambda dst, src: torch.mul(src, 2, out=dst)
    xp = __import__(lib)
    return lambda dst, src: xp.multiply(src, 2, out=dst)


def adder(lib):
    """``fn(dst, a, b)``: dst = a + b in one pass (1 FLOP per element)."""
    if lib == "torch":
        import torch
        return lambda dst, a, b: torch.add(a, b, out=dst)
    xp = __import__(lib)
    return lambda dst, a, b: xp.add(a, b, out=dst)


def timing_fields(t, nbytes: float, flops: float) -> dict:
    """The fields every record carries, from a :class:`brrr.Timing` (seconds, bytes, FLOPs).

    ``seconds`` is the median; ``gbps`` and ``gflops`` are derived from it, so
    ``gbps == nbytes / seconds / 1e9`` holds exactly.
    """
    seconds = t.median
    fields = {"nbytes": float(nbytes), "flops": float(flops), **t.record_fields(),
              "gbps": nbytes / seconds / 1e9, "gflops": flops / seconds / 1e9,
              "intensity": flops / nbytes if nbytes else math.inf}
    useful = [w.split(":")[0] for w in t.warnings if not w.startswith("cache-resident")]
    fields["warnings"] = ", ".join(useful)
    return fields


def caches(dev) -> dict:
    """Cache sizes worth marking on a plot: CPU levels from sysfs, a GPU's L2."""
    if not dev.on_gpu:
        from ..device import cpu_caches
        return cpu_caches() or {"LLC": dev.l2_bytes}
    return {"L2": dev.l2_bytes} if dev.l2_bytes else {}


def try_kernels():
    """``brrr.kernels`` if it imports, else (None, reason)."""
    try:
        from .. import kernels
        return kernels, ""
    except Exception as error:  # noqa: BLE001 - any import problem means "not available"
        return None, f"brrr.kernels is not available ({type(error).__name__}: {error})"


def default_elements(dev=None, dtype="float32", quick=None) -> int:
    """Elements per array for DRAM-bound sweeps: 2^26 on a GPU; on the CPU a power of 2
    at least 4x the last-level cache (2^24 or more); quick mode: 2^22."""
    dev = dev or live_device()
    quick = config.quick_mode() if quick is None else quick
    if quick:
        return 2 ** 22
    if dev.on_gpu:
        return 2 ** 26
    need = 4 * dev.l2_bytes // itemsize(dtype)
    return max(2 ** 24, 2 ** math.ceil(math.log2(max(need, 1))))
