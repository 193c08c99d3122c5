"""Elementwise kernels, each built from ONE description for a GPU and for the CPU.

A kernel is a row of a small table: the arrays it reads, its scalar parameters,
optional update statements, and the expression it writes to ``out``::

    triad: reads x, y; scalar a; out = x + a * y

From that row :func:`cuda_source` writes a CUDA C++ ``__global__`` function (a
grid-stride loop over ``i``) that CuPy compiles as a ``RawKernel``, and
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
``'add'``: x+c, ``'fma'``: x*c+d) either fused into one kernel (one read and one
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
import re
from dataclasses import dataclass

import numpy as np

DTYPES = ("float32", "float64")
_C_TYPES = {"float32": "float", "float64": "double"}
CUDA_BLOCK = 256   # threads per block of every CUDA kernel
CUDA_UNROLL = 4    # elements each CUDA thread loads before it stores (memory-level parallelism)
MAX_OPS = 1_000_000  # longest chain: a loop in the kernel, so n costs time (n x size ops), not compile time


@dataclass(frozen=True)
class Kernel:
    """One elementwise kernel, described once for both back ends.

    ``inputs`` are array names read once per element, ``scalars`` are parameters
    of the array's dtype, ``steps`` are statements ``var = expr`` applied in order
    (the same text is valid C and Python), ``result`` is written to ``out``, and
    ``flops`` counts floating-point operations per element (per repetition when
    ``repeated``). A ``repeated`` kernel applies its steps ``reps`` times, a
    run-time argument: it has one input, and its result is that input's variable.
    """
    name: str
    inputs: tuple
    scalars: tuple
    result: str
    flops: int
    steps: tuple = ()
    repeated: bool = False

    def __post_init__(self):
        if self.repeated and (len(self.inputs) != 1 or self.result != self.inputs[0]):
            raise ValueError(f"a repeated kernel reads one array and writes its variable: {self}")

    @property
    def symbol(self) -> str:
        """Base name of the compiled function (``brrr_triad``, ``brrr_chain_mul``)."""
        return "brrr_" + self.name


KERNELS = {
    "copy": Kernel("copy", ("x",), (), "x", 0),
    "scale": Kernel("scale", ("x",), ("a",), "a * x", 1),
    "add": Kernel("add", ("x", "y"), (), "x + y", 1),
    "triad": Kernel("triad", ("x", "y"), ("a",), "x + a * y", 2),
}

# Pointwise ops for chain(): (statement applied to x, FLOPs per element, default c, default d).
# Constants are kernel parameters of the array's dtype, so float32 stays float32 everywhere.
OPS = {
    "mul": ("x = x * c", 1, 0.999, 0.0),
    "add": ("x = x + c", 1, 1.0, 0.0),
    "fma": ("x = x * c + d", 2, 0.5, 0.5),
    "cos": ("x = cos(x)", 1, 0.0, 0.0),   # FLOPs: counted as one op per element, though cos is many instructions
}

NAMES = tuple(KERNELS) + ("chain",)

# The Numba chain works on blocks of NUMBA_BLOCK elements (8 or 16 KiB: they stay in L1)
# and applies NUMBA_UNROLL ops per pass over a block, so each pass is a straight-line loop
# over elements that LLVM vectorises, and most of the ops run in registers.
NUMBA_BLOCK = 2048
NUMBA_UNROLL = 8


def chain_kernel(op: str = "mul") -> Kernel:
    """The description of the fused chain of ``op``: the op applied ``reps`` times per element."""
    _check_op(op)
    statement, flops, _, _ = OPS[op]
    return Kernel(f"chain_{op}", ("x",), ("c", "d"), "x", flops, (statement,), repeated=True)


def kernel(name: str, op: str = "mul") -> Kernel:
    """The :class:`Kernel` description called ``name`` (``op`` for 'chain')."""
    if name == "chain":
        return chain_kernel(op)
    if not isinstance(name, str) or name not in KERNELS:
        raise ValueError(f"name must be one of {NAMES}, got {name!r}")
    return KERNELS[name]


# --- code generation -------------------------------------------------------------

_MATH = re.compile(r"\b(cos|sin|exp|log|sqrt|tanh)\(")


def cuda_source(name: str, dtype="float32", op: str = "mul") -> str:
    """The CUDA C++ source that CuPy compiles (as a ``RawKernel``) for this kernel and dtype.

    One ``extern "C" __global__`` function named ``brrr_<name>_<float|double>``
    with arguments (input arrays, scalars, [reps,] out, element count) and a
    grid-stride loop, so any grid size covers any array. This exact string is
    what runs on a GPU, and what the tests compile with nvcc for sm_75 and sm_90.
    """
    return _cuda_text(kernel(name, op), _dtype_name(dtype))


def numba_source(name: str, op: str = "mul") -> str:
    """The Python source of the CPU kernel, compiled by ``numba.njit(parallel=True)``.

    The same statements as :func:`cuda_source`, in a ``prange`` loop that Numba
    splits across the CPU's cores. One source serves float32 and float64 (Numba
    compiles one version per dtype on first use).
    """
    return _numba_text(kernel(name, op))


def _cuda_text(k: Kernel, dtype: str) -> str:
    ctype = _C_TYPES[dtype]
    if ctype == "float":  # cos -> cosf: float math stays in float
        c = lambda text: _MATH.sub(lambda m: m.group(1) + "f(", text)  # noqa: E731
    else:
        c = lambda text: text  # noqa: E731
    # No __restrict__: the unfused chain runs in place (x_ and out_ are the same array).
    # A grid-stride loop in which each thread first loads CUDA_UNROLL elements, then
    # computes and stores them: several independent loads in flight per thread are what
    # keeps HBM busy (one load at a time leaves a copy well short of the bandwidth).
    # Element i depends on element i alone, so loading before storing is safe in place.
    params = ([f"const {ctype}* {v}_" for v in k.inputs]
              + [f"const {ctype} {s}" for s in k.scalars]
              + (["const long long reps"] if k.repeated else [])
              + [f"{ctype}* out_", "const long long n"])
    steps = [f"{c(s)};" for s in k.steps]
    lines = [f'extern "C" __global__ void {k.symbol}_{ctype}({", ".join(params)})', "{",
             "    const long long stride = (long long)blockDim.x * gridDim.x;",
             "    for (long long i0 = (long long)blockIdx.x * blockDim.x + threadIdx.x; i0 < n;"
             f" i0 += {CUDA_UNROLL} * stride) {{"]
    lines += [f"        {ctype} {v}_v[{CUDA_UNROLL}];" for v in k.inputs]
    lines += ["        #pragma unroll",
              f"        for (int u = 0; u < {CUDA_UNROLL}; ++u) {{",
              "            const long long i = i0 + u * stride;"]
    lines += [f"            {v}_v[u] = i < n ? {v}_[i] : ({ctype})0;" for v in k.inputs]
    lines += ["        }"]
    if k.repeated:  # reps rounds over the thread's elements, held in registers
        (v,) = k.inputs
        lines += ["        for (long long r = 0; r < reps; ++r) {",
                  "            #pragma unroll",
                  f"            for (int u = 0; u < {CUDA_UNROLL}; ++u) {{",
                  f"                {ctype} {v} = {v}_v[u];",
                  *(f"                {s}" for s in steps),
                  f"                {v}_v[u] = {v};",
                  "            }", "        }"]
        steps = []
    lines += ["        #pragma unroll",
              f"        for (int u = 0; u < {CUDA_UNROLL}; ++u) {{",
              "            const long long i = i0 + u * stride;",
              "            if (i < n) {"]
    lines += [f"                {ctype} {v} = {v}_v[u];" for v in k.inputs]
    lines += [f"                {s}" for s in steps]
    lines += [f"                out_[i] = {c(k.result)};", "            }", "        }", "    }", "}", ""]
    return "\n".join(lines)


def _numba_text(k: Kernel) -> str:
    py = lambda text: _MATH.sub(lambda m: "math." + m.group(0), text)  # noqa: E731
    args = [f"{v}_" for v in k.inputs] + list(k.scalars) + (["reps"] if k.repeated else []) + ["out_"]
    if not k.repeated:
        lines = [f"def {k.symbol}({', '.join(args)}):",
                 "    for i in prange(out_.shape[0]):"]
        lines += [f"        {v} = {v}_[i]" for v in k.inputs]
        lines += [f"        {py(s)}" for s in k.steps]
        lines += [f"        out_[i] = {py(k.result)}", ""]
        return "\n".join(lines)
    # Repeated steps, block by block: a first pass reads the input and applies the steps
    # once; then passes of NUMBA_UNROLL applications each, then single ones for the rest.
    # Every pass over a block is an innermost loop over elements (vectorised by LLVM, which
    # needs the slices: indices from range(len) are known to be non-negative), and the block
    # stays in L1 between passes, so memory sees one read and one write per element.
    (v,) = k.inputs

    def block_pass(source, times, pad):
        return [pad + line for line in ["for i in range(o.shape[0]):", f"    {v} = {source}[i]",
                                        *(f"    {py(s)}" for _ in range(times) for s in k.steps),
                                        f"    o[i] = {v}"]]

    lines = [f"def {k.symbol}({', '.join(args)}):",
             "    n = out_.shape[0]",
             f"    for b in prange((n + {NUMBA_BLOCK - 1}) // {NUMBA_BLOCK}):",
             f"        lo = b * {NUMBA_BLOCK}",
             f"        hi = min(lo + {NUMBA_BLOCK}, n)",
             f"        src = {v}_[lo:hi]",
             "        o = out_[lo:hi]",
             *block_pass("src", 1, " " * 8),
             f"        for _ in range((reps - 1) // {NUMBA_UNROLL}):",
             *block_pass("o", NUMBA_UNROLL, " " * 12),
             f"        for _ in range((reps - 1) % {NUMBA_UNROLL}):",
             *block_pass("o", 1, " " * 12), ""]
    return "\n".join(lines)


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
    # NumPy and Numba do (IEEE order, each op rounded). Memory-bound kernels lose nothing.
    return cupy.RawKernel(_cuda_text(k, dtype), f"{k.symbol}_{_C_TYPES[dtype]}", options=("--fmad=false",))


@functools.lru_cache(maxsize=None)
def _cuda_grid_limit() -> int:
    import cupy
    sms = cupy.cuda.Device().attributes.get("MultiProcessorCount", 80)
    return 32 * int(sms)  # enough resident blocks to fill the GPU; the loop strides over the rest


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
        grid = min((size + CUDA_BLOCK - 1) // CUDA_BLOCK, _cuda_grid_limit())
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

    ``op`` is 'mul' (x*c, c=0.999), 'add' (x+c, c=1), 'fma' (x*c+d, c=d=0.5) or
    'cos' (compute-bound; slow on the CPU). Fused: one kernel whose body repeats
    the op n times, so each element is read once and written once. Unfused: n
    one-op kernels, each reading the previous result and writing a new array,
    as eager ``for _ in range(n): x = x * c`` does; the passes alternate between
    ``out`` and ``scratch`` (an array like x, overwritten), so nothing is
    allocated between passes. With ``scratch=None`` a buffer kept by this module
    is reused (allocated once per shape and dtype, like a framework's caching
    allocator; :func:`free_scratch` lets it go); ``scratch=out`` runs the passes
    in place instead. Fused and unfused give bit-identical results on the CPU.
    ``n`` is an integer from 1 to :data:`MAX_OPS` (a run-time loop count: no
    recompilation for a new n). Returns ``out``.
    """
    _check_count(n)
    _check_op(op)
    if not isinstance(fused, bool):
        raise TypeError(f"fused must be True or False, got {fused!r}")
    _, _, c_default, d_default = OPS[op]
    c = _scalar("c", c_default if c is None else c)
    d = _scalar("d", d_default if d is None else d)
    x, out = _prepare({"x": x}, out)
    k = chain_kernel(op)
    if fused:
        return _run(k, (x,), (c, d), out, reps=n)
    if n > 1:
        if scratch is None:
            scratch = _scratch_like(out)
        else:
            _prepare({"x": x, "out": out}, scratch, "scratch")
    source = x
    for i in range(n):
        target = out if (n - 1 - i) % 2 == 0 else scratch   # the last pass writes out
        _run(k, (source,), (c, d), target, reps=1)
        source = target
    return out


_SCRATCH: dict = {}


def _scratch_like(a):
    """A buffer of a's shape, dtype and library, kept between calls (one at a time)."""
    key = (_library(a), a.shape, a.dtype.name)
    if key not in _SCRATCH:
        _SCRATCH.clear()
        xp = np if key[0] == "numpy" else __import__("cupy")
        _SCRATCH[key] = xp.empty(a.shape, dtype=a.dtype)
    return _SCRATCH[key]


def free_scratch():
    """Drop the scratch buffer that unfused :func:`chain` calls reuse."""
    _SCRATCH.clear()


# --- bytes and FLOPs ---------------------------------------------------------------

def traffic(name: str, x, n: int = 1, fused: bool = True, op: str = "mul", dtype=None) -> tuple:
    """``(bytes moved, FLOPs)`` of one call of kernel ``name`` on ``x``.

    ``x`` is an array (its size and itemsize are used) or an element count with
    ``dtype``. For 'chain', ``n`` ops of ``op``, ``fused`` or as n passes. Bytes
    follow the STREAM convention (each input read once, the output written once
    per pass); FLOPs are per :data:`OPS` (``cos`` counts as one).
    """
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        if x < 0:
            raise ValueError(f"x (an element count) must be >= 0, got {x}")
        if dtype is None:
            raise ValueError("dtype is needed when x is an element count, e.g. dtype='float32'")
        size, itemsize = int(x), np.dtype(_dtype_name(dtype)).itemsize
    elif hasattr(x, "size") and hasattr(x, "dtype"):
        size, itemsize = int(x.size), np.dtype(_dtype_name(x.dtype)).itemsize
    else:
        raise TypeError(f"x must be an array or an element count, got {type(x).__name__}")
    k = kernel(name, op)
    if name == "chain":
        _check_count(n)
        passes = 1 if fused else n
        return 2 * passes * size * itemsize, k.flops * n * size
    return (len(k.inputs) + 1) * size * itemsize, k.flops * size


# --- checking arguments -------------------------------------------------------------

def _library(a):
    """'numpy' or 'cupy' for an array of either kind, else None."""
    if isinstance(a, np.ndarray):
        return "numpy"
    if type(a).__module__.split(".")[0] == "cupy" and type(a).__name__ == "ndarray":
        return "cupy"
    return None


def _dtype_name(dtype, what: str = "dtype") -> str:
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype)
    if name not in DTYPES:
        raise ValueError(f"{what} must be float32 or float64, got {name}")
    return name


def _check_op(op):
    if not isinstance(op, str) or op not in OPS:
        raise ValueError(f"op must be one of {tuple(OPS)}, got {op!r}")


def _check_count(n):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"n (the number of ops) must be an integer, got {type(n).__name__}")
    if not 1 <= n <= MAX_OPS:
        raise ValueError(f"n (the number of ops) must be >= 1 and <= MAX_OPS = {MAX_OPS:,}, got {n}")


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
