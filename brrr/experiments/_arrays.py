"""Arrays on the live device for the experiments: which library, how to allocate, how to time.

The experiments run on whatever :func:`brrr.device` found: NumPy on the CPU,
CuPy or PyTorch on a CUDA GPU. This module hides the three spellings of
"allocate n elements" and "copy into a preallocated output", and turns a
:class:`brrr.Timing` into the tidy fields every record shares.
"""
from __future__ import annotations

import math

from .. import config
from ..device import _normalise_dtype, device as live_device

ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2}


def dtype_name(dtype) -> str:
    """'float32', 'float64', 'float16' or 'bfloat16' (ValueError names the argument otherwise)."""
    return _normalise_dtype(dtype)


def itemsize(dtype) -> int:
    """Bytes per element of ``dtype``."""
    return ITEMSIZE[dtype_name(dtype)]


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


def library(dev) -> str:
    """'numpy' on the CPU; on a GPU 'cupy' or 'torch' (whichever brrr.device uses)."""
    return "numpy" if dev.backend == "cpu" else dev.array_library


def torch_dtype(dtype):
    import torch
    return getattr(torch, dtype_name(dtype))


# Page offsets (bytes) at which successive CPU arrays start, 64-byte aligned and far apart. On
# x86, a load whose address differs from an earlier store's by a multiple of 4 KiB looks like
# it depends on that store ("4K aliasing"): a copy between two arrays that start at the same
# offset in their pages can run several times slower, for a reason that has nothing to do
# with bandwidth or caches. Measured here: an 8 KiB np.copyto ran at a seventh of the speed it
# reached with the destination moved within its page.
PAGE = 4096
_OFFSETS = tuple((i * 1088) % PAGE for i in range(8))   # 0, 1088, 2176, 3264, 256, ...
_next_offset = [0]


def _staggered_empty(shape, dtype):
    """A NumPy array of ``shape`` that starts at the next offset of ``_OFFSETS`` within a page."""
    import numpy as np
    dtype = np.dtype(dtype)
    offset = _OFFSETS[_next_offset[0] % len(_OFFSETS)]
    _next_offset[0] += 1
    count = int(np.prod(shape))
    raw = np.empty(count * dtype.itemsize + 2 * PAGE, dtype=np.uint8)
    start = (-raw.ctypes.data) % PAGE + offset
    return raw[start:start + count * dtype.itemsize].view(dtype).reshape(shape)


def full(n, value, dtype, lib, backend="cpu"):
    """An array of ``n`` elements (int or shape) filled with ``value``; torch tensors go to
    ``backend``. On the CPU, successive arrays start at different offsets within a page (see
    ``_OFFSETS``), so that no copy between two of them suffers from 4K aliasing."""
    dtype = dtype_name(dtype)
    shape = n if isinstance(n, tuple) else (n,)
    if lib == "torch":
        import torch
        if backend == "cuda" or dtype == "bfloat16":
            return torch.full(shape, value, dtype=torch_dtype(dtype),
                              device="cuda" if backend == "cuda" else "cpu")
        array = _staggered_empty(shape, dtype)
        array.fill(value)
        return torch.from_numpy(array)
    if dtype == "bfloat16":
        raise ValueError(f"dtype bfloat16 needs PyTorch; {lib} has no bfloat16")
    if lib == "cupy":
        import cupy
        return cupy.full(n, value, dtype=dtype)
    array = _staggered_empty(shape, dtype)
    array.fill(value)
    return array


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
    fields = {"nbytes": float(nbytes), "flops": float(flops), "seconds": seconds, "min": t.min,
              "iqr": t.iqr, "gbps": nbytes / seconds / 1e9, "gflops": flops / seconds / 1e9,
              "intensity": flops / nbytes if nbytes else math.inf, "floor": t.floor}
    useful = [w.split(":")[0] for w in t.warnings if not w.startswith("cache-resident")]
    fields["warnings"] = ", ".join(useful)
    return fields


def caches(dev) -> dict:
    """Cache sizes worth marking on a plot: CPU levels from sysfs, a GPU's L2."""
    if dev.backend == "cpu":
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
    if dev.backend == "cuda":
        return 2 ** 26
    need = 4 * dev.l2_bytes // itemsize(dtype)
    return max(2 ** 24, 2 ** math.ceil(math.log2(max(need, 1))))
