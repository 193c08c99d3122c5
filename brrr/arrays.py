"""Arrays by library: dtype names, item sizes, and allocation that avoids 4K aliasing.

One place that knows the three spellings of "an array of n elements" (NumPy,
CuPy, PyTorch). :meth:`brrr.Device.full` calls :func:`full` with its backend.
"""
from __future__ import annotations

DTYPES = ("float64", "float32", "float16", "bfloat16")
_ALIASES = {"fp32": "float32", "fp64": "float64", "fp16": "float16", "half": "float16",
            "bf16": "bfloat16", "float": "float32", "double": "float64", "tf32": "float32"}


def dtype_name(dtype) -> str:
    """'float32', 'float64', 'float16' or 'bfloat16' for a name, alias or NumPy/PyTorch dtype
    (ValueError names the argument otherwise)."""
    name = getattr(dtype, "name", None) or str(dtype)
    name = name.replace("torch.", "")
    name = _ALIASES.get(name, name)
    if name not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES} (or a NumPy/PyTorch dtype), got {dtype!r}")
    return name


ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2}


def itemsize(dtype) -> int:
    """Bytes per element of ``dtype``."""
    return ITEMSIZE[dtype_name(dtype)]


def torch_dtype(dtype):
    """The ``torch.dtype`` for ``dtype``."""
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


def full(n, value, dtype, lib: str = "numpy", backend: str = "cpu"):
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


def alternate(one_pass, x, out, scratch, passes: int):
    """Run ``one_pass(src, dst)`` ``passes`` times, each pass reading the previous result: the
    passes alternate between ``out`` and ``scratch`` and the last one writes ``out`` (so nothing
    is allocated between passes, as a caching allocator would arrange). Returns ``out``."""
    source = x
    for i in range(passes):
        target = out if (passes - 1 - i) % 2 == 0 else scratch
        one_pass(source, target)
        source = target
    return out
