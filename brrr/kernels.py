"""Elementwise kernels, each built from ONE description for a GPU and for the CPU.

A kernel is a row of a small table: the arrays it reads, its scalar parameters,
optional update statements, and the expression it writes to ``out``::

    triad: reads x, y; scalar a; out = x + a * y

From that row :func:`cuda_source` writes a CUDA C++ ``__global__`` function (one
16-byte vector of each array per thread) that CuPy compiles as a ``RawKernel``, and
:func:`numba_source` writes a Python function with a ``prange`` loop that Numba
compiles with ``parallel=True``. A row may mark its steps as *repeated*: they
then run ``reps`` times, a run-time argument, in a loop of the generated code,
so one compiled kernel serves every chain length (1 or 100,000 ops alike). Which one runs depends on the array you pass:
a CuPy array runs the CUDA kernel, a NumPy array runs the Numba kernel.

Kernels (STREAM names; float32 and float64 only; arrays must be C-contiguous):

=========  ========================  =====================  ============
name       result                    bytes moved            FLOPs
=========  ========================  =====================  ============
copy       ``x``                     2 x size x itemsize    0
scale      ``a * x``                 2 x size x itemsize    size
add        ``x + y``                 3 x size x itemsize    size
triad      ``x + a * y``             3 x size x itemsize    2 x size
chain      n pointwise ops on x      fused: 2 x ..., unfused: 2n x ...
=========  ========================  =====================  ============

Bytes count one read per input element and one write per output element (the
STREAM convention; a cache's write-allocate read is not counted).
:func:`traffic` returns these numbers for an array, so experiments and the
roofline use one source of truth.

``chain(x, n, op)`` applies ``n`` cheap pointwise ops (``'mul'``: x*c,
``'add'``: x+c, ``'fma'``: x*c+d as a multiply then an add, ``'ffma'``: one fused
multiply-add instruction on a GPU) either fused into one kernel (one read and one
write per element, the op applied n times in a loop while the element stays on
chip: in a register on a GPU, in the L1 cache on a CPU) or as n separate
out-of-place passes (n reads and n writes), like eager ``x = x * c`` in a loop.
Out-of-place matters on a CPU: writing to a line that is not in cache first
reads it ("write-allocate"), which an in-place pass (``x *= c``) avoids, so an
in-place unfused pass is cheaper than the fused kernel's out-of-place one and
the measured speed-up of fusion would then fall short of n for a reason that
has nothing to do with fusion. ``op='cos'`` is there for a compute-bound demo;
it is slow on the CPU (Numba has no vectorised math library here) and is not a
good bandwidth test.

Bad input is refused before a kernel is chosen, with an error that names the
argument (one check, :func:`_prepare`, serves every kernel and both back ends):
arrays must be plain NumPy ndarrays (not ``np.matrix`` or masked arrays:
``np.asarray`` first) or CuPy arrays, float32 or float64 in the machine's byte
order (not ``'>f4'``), C-contiguous, all of one shape and dtype; nothing is
converted or copied behind your back. 0-d and empty arrays work.
``out`` may be an input itself (in place, e.g. ``scale(x, out=x)``), but a
different view of the same memory (``copy(x[:-1], out=x[1:])``) is refused.

Outputs: pass ``out=`` (an array of x's shape and dtype) to reuse memory. With
``out=None`` a fresh array is allocated on every call, and on the CPU faulting
in fresh pages can cost more than the kernel itself, so when timing repeated
calls always pass ``out``. Every function returns ``out``.

The first call for a dtype compiles the kernel (Numba: about a second; CuPy:
NVRTC, cached on disk); time with :func:`brrr.bench`, whose warm-up absorbs it.
The Numba kernels split the loop evenly over all cores (``numba.set_num_threads``
changes how many); on a machine whose cores are busy with other work, the
threads wait for each other and fewer threads can be faster.
"""
from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from .arrays import alternate
from .kernel_source import (CHAIN_OPS, CUDA_BLOCK, DTYPES, FUSED_OPS, KERNELS, MAX_OPS, NAMES, OPS, Kernel,  # noqa: F401 (public)
                            _C_TYPES, _check_count, _check_op, _cuda_text, _dtype_name, _numba_text,
                            chain_kernel, cuda_source, cuda_threads, kernel, numba_source, traffic)

MAX_CUDA_BLOCKS = 2 ** 31 - 1  # the grid's largest x dimension; the kernels stride over any rest


@functools.lru_cache(maxsize=None)
def _numba_function(k: Kernel):
    import numba
    namespace = {"prange": numba.prange, "math": math}
    exec(compile(_numba_text(k), f"<brrr.kernels {k.name}>", "exec"), namespace)
    # No fastmath: the ops stay in IEEE order, so fused and unfused chains agree bit for bit.
    return numba.njit(parallel=True, fastmath=False, boundscheck=False, nogil=True)(namespace[k.symbol])


@functools.lru_cache(maxsize=None)
def _cupy_function(k: Kernel, dtype: str):
    import cupy
    # --fmad=false: no contraction of a * b + c into one FMA, so the GPU rounds like
    # NumPy and Numba do (IEEE order, each op rounded). Memory-bound kernels lose nothing; the
    # 'fma' chain runs a multiply and an add (half the FP32 peak at most). Only the 'ffma'
    # chain, which calls fma() explicitly, runs one FFMA instruction per link.
    return cupy.RawKernel(_cuda_text(k, dtype), f"{k.symbol}_{_C_TYPES[dtype]}", options=("--fmad=false",))


# --- running ---------------------------------------------------------------------

def _run(k: Kernel, arrays: tuple, scalars: tuple, out, reps: int = 1):
    """Launch kernel ``k`` on already-validated arrays (``reps`` times its steps if repeated)."""
    if out.size == 0:
        return out
    dtype = out.dtype
    flat = [a.reshape(-1) for a in arrays]
    values = [dtype.type(s) for s in scalars] + ([np.int64(reps)] if k.repeated else [])
    if _library(out) == "numpy":
        _numba_function(k)(*flat, *values, out.reshape(-1))
    else:
        size = out.size
        grid = min(-(-cuda_threads(size, dtype.name) // CUDA_BLOCK), MAX_CUDA_BLOCKS)
        _cupy_function(k, dtype.name)((grid,), (CUDA_BLOCK,),
                                      (*flat, *values, out.reshape(-1), np.int64(size)))
    return out


def copy(x, out=None):
    """``out = x``: one read and one write per element. Returns ``out``."""
    x, out = _prepare({"x": x}, out)
    return _run(KERNELS["copy"], (x,), (), out)


def scale(x, a=2.0, out=None):
    """``out = a * x`` (``a`` is cast to x's dtype). Returns ``out``."""
    x, out = _prepare({"x": x}, out)
    return _run(KERNELS["scale"], (x,), (_scalar("a", a),), out)


def add(x, y, out=None):
    """``out = x + y``: two reads and one write per element. Returns ``out``."""
    x, y, out = _prepare({"x": x, "y": y}, out)
    return _run(KERNELS["add"], (x, y), (), out)


def triad(x, y, a=2.0, out=None):
    """``out = x + a * y`` (STREAM's triad): two reads, one write, 2 FLOPs per element."""
    x, y, out = _prepare({"x": x, "y": y}, out)
    return _run(KERNELS["triad"], (x, y), (_scalar("a", a),), out)


def chain(x, n, op="mul", fused=True, out=None, c=None, d=None, scratch=None):
    """Apply ``n`` pointwise ops to x: fused in one kernel, or as ``n`` separate passes.

    ``op`` is 'mul' (x*c, c=0.999), 'add' (x+c, c=1), 'fma' (x*c+d, c=d=0.5: a
    multiply then an add, each rounded as NumPy rounds them), 'ffma' (fma(x, c, d),
    c=d=0.5: one fused multiply-add instruction on a GPU, so a long fused chain can
    reach the FP32 peak; a multiply then an add on the CPU) or 'cos' (compute-bound;
    slow on the CPU). Fused: one kernel whose body repeats
    the op n times, so each element is read once and written once. Unfused: n
    one-op kernels, each reading the previous result and writing a new array,
    as eager ``for _ in range(n): x = x * c`` does; the passes alternate between
    ``out`` and ``scratch`` (an array like x, overwritten), so nothing is
    allocated between passes. The caller owns both: with ``out=None`` or
    ``scratch=None`` this call allocates its own (so when timing repeated calls,
    pass both, allocated once); ``scratch=out`` runs the passes in place instead. Fused and unfused give bit-identical results on the CPU.
    ``n`` is an integer from 1 to :data:`MAX_OPS` (a run-time loop count: no
    recompilation for a new n). Returns ``out``.
    """
    _check_count(n)
    _check_op(op, CHAIN_OPS)
    if not isinstance(fused, bool):
        raise TypeError(f"fused must be True or False, got {fused!r}")
    _, _, c_default, d_default = CHAIN_OPS[op]
    c = _scalar("c", c_default if c is None else c)
    d = _scalar("d", d_default if d is None else d)
    x, out = _prepare({"x": x}, out)
    k = chain_kernel(op)
    if fused:
        return _run(k, (x,), (c, d), out, reps=n)
    if n > 1:
        scratch = _prepare({"x": x, "out": out}, scratch, "scratch")[-1]   # None: allocated here
    return alternate(lambda source, target: _run(k, (source,), (c, d), target, reps=1), x, out, scratch, n)


# --- checking arguments -------------------------------------------------------------

def _library(a):
    """'numpy' or 'cupy' for an array of either kind, else None."""
    if isinstance(a, np.ndarray):
        return "numpy"
    if type(a).__module__.split(".")[0] == "cupy" and type(a).__name__ == "ndarray":
        return "cupy"
    return None


def _scalar(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return value


def _check_array(name, a, lib, first_name, first):
    """Raise unless ``a`` is a plain, native-order, C-contiguous float array like ``first``."""
    if _library(a) != lib:
        raise TypeError(f"{name} must be a {lib} array like {first_name}, got {type(a).__name__}")
    if lib == "numpy" and type(a) is not np.ndarray:   # np.matrix, masked arrays, ...
        raise TypeError(f"{name} must be a plain numpy.ndarray, got {type(a).__name__}; "
                        f"np.asarray({name}) gives one")
    _dtype_name(a.dtype, f"{name}'s dtype")
    if a.shape != first.shape or a.dtype != first.dtype:
        raise ValueError(f"{name} must have shape {first.shape} and dtype {first.dtype} (those of "
                         f"{first_name}), got shape {a.shape} and dtype {a.dtype}")
    if not a.dtype.isnative:
        raise ValueError(f"{name} must be in the machine's byte order, got dtype {a.dtype.str!r}; "
                         f"convert with {name}.astype({a.dtype.name!r})")
    if not a.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous, got strides {a.strides}; "
                         f"{lib}.ascontiguousarray({name}) copies it into one")


def _address(a) -> int:
    return a.__array_interface__["data"][0] if isinstance(a, np.ndarray) else a.data.ptr


def _prepare(arrays: dict, out, out_name: str = "out"):
    """Check the input arrays and ``out``; allocate ``out`` if None. Returns (*arrays, out).

    The one check behind every kernel, on either back end, before one is chosen.
    ``out`` may be one of the inputs itself (in place: each element is read before
    it is written), but not a different view of the same memory: an ``out`` that
    partly overlaps an input would read elements already overwritten.
    """
    first_name, first = next(iter(arrays.items()))
    lib = _library(first)
    if lib is None:
        raise TypeError(f"{first_name} must be a NumPy array (runs on the CPU with Numba) or a "
                        f"CuPy array (runs on the GPU), got {type(first).__name__}; "
                        "convert with np.asarray(...) first")
    for name, a in arrays.items():
        _check_array(name, a, lib, first_name, first)
    xp = np if lib == "numpy" else __import__("cupy")
    if out is None:
        return (*arrays.values(), xp.empty(first.shape, dtype=first.dtype))
    _check_array(out_name, out, lib, first_name, first)
    if lib == "numpy" and not out.flags.writeable:
        raise ValueError(f"{out_name} must be writeable")
    for name, a in arrays.items():
        # Same shape, dtype and C-contiguous: overlapping bounds with another start is a partial overlap.
        if out.size and xp.may_share_memory(out, a) and _address(out) != _address(a):
            raise ValueError(f"{out_name} partly overlaps {name} in memory (a different view of the "
                             f"same buffer); pass {out_name}={name} to work in place, or a separate array")
    return (*arrays.values(), out)
