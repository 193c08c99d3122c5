"""The kernel table, the bytes and FLOPs of each kernel (:func:`traffic`), and the code the
table generates: CUDA C++ (for CuPy) and Python with ``prange`` (for Numba). Imports NumPy only.

See :mod:`brrr.kernels` for the kernels themselves and how they are run.
"""
from __future__ import annotations

import numbers
import re
from dataclasses import dataclass

import numpy as np

DTYPES = ("float32", "float64")
_C_TYPES = {"float32": "float", "float64": "double"}
CUDA_BLOCK = 256        # threads per block of every CUDA kernel
CUDA_VECTOR_BYTES = 16  # each CUDA thread loads and stores one 16-byte vector per array
_VECTOR_TYPES = {"float32": "float4", "float64": "double2"}
_LANES = ("x", "y", "z", "w")
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
# Every kernel is built uncontracted (CUDA --fmad=false; Numba without fastmath) so that it rounds
# as NumPy does, bit for bit: 'fma' is therefore a multiply, then an add, each rounded (two
# instructions per link, so it can reach at most half an FP32 peak, which counts a fused
# multiply-add instruction as two FLOPs).
OPS = {
    "mul": ("x = x * c", 1, 0.999, 0.0),
    "add": ("x = x + c", 1, 1.0, 0.0),
    "fma": ("x = x * c + d", 2, 0.5, 0.5),
    "cos": ("x = cos(x)", 1, 0.0, 0.0),   # FLOPs: counted as one op per element, though cos is many instructions
}
# Ops that ask for a fused multiply-add explicitly (CUDA's fma(): one FFMA instruction, rounded
# once), for a compute-bound chain that can reach the FP32 peak. Not bit-exact against NumPy's
# x * c + d in general; with the default c = 0.5 the product is exact, so the two agree. Numba
# has no fma() without fastmath: on the CPU this op is a multiply, then an add.
FUSED_OPS = {
    "ffma": ("x = fma(x, c, d)", 2, 0.5, 0.5),
}
CHAIN_OPS = {**OPS, **FUSED_OPS}
# FP32 instructions per link of each chain op, at least ('cos' is many); 'ffma' is one FFMA on a GPU
# and, on a CPU, a multiply then an add.
INSTRUCTIONS = {"mul": 1, "add": 1, "fma": 2, "cos": 1, "ffma": 1}


def peak_share(op: str = "mul", backend: str = "cuda") -> float:
    """The most of an FP32 peak a chain of ``op`` can reach on ``backend`` ('cuda' or 'cpu'): the peak
    counts a fused multiply-add instruction as two FLOPs, so a link of f FLOPs in i instructions
    reaches at most f / (2 i) of it: half for a multiplication, all of it for one FFMA."""
    _check_op(op, CHAIN_OPS)
    instructions = INSTRUCTIONS[op] + (op == "ffma" and backend != "cuda")
    return CHAIN_OPS[op][1] / (2 * instructions)


def chain_knee(ridge: float, itemsize: int, op: str = "mul", backend: str = "cuda") -> float:
    """The repeat count at which a fused chain of ``op`` on elements of ``itemsize`` bytes (read once,
    written once) has arithmetic that takes as long as its bytes: at its op's share of a peak whose
    ridge is ``ridge`` FLOP/byte (:func:`peak_share`), ``ridge x share x 2 x itemsize / FLOPs per link``."""
    return ridge * peak_share(op, backend) * 2 * itemsize / CHAIN_OPS[op][1]

NAMES = tuple(KERNELS) + ("chain",)

# The Numba chain works on blocks of NUMBA_BLOCK elements (8 or 16 KiB: they stay in L1)
# and applies NUMBA_UNROLL ops per pass over a block, so each pass is a straight-line loop
# over elements that LLVM vectorises, and most of the ops run in registers.
NUMBA_BLOCK = 2048
NUMBA_UNROLL = 8


def chain_kernel(op: str = "mul") -> Kernel:
    """The description of the fused chain of ``op``: the op applied ``reps`` times per element."""
    _check_op(op, CHAIN_OPS)
    statement, flops, _, _ = CHAIN_OPS[op]
    return Kernel(f"chain_{op}", ("x",), ("c", "d"), "x", flops, (statement,), repeated=True)


def kernel(name: str, op: str = "mul") -> Kernel:
    """The :class:`Kernel` description called ``name`` (``op`` for 'chain')."""
    if name == "chain":
        return chain_kernel(op)
    if not isinstance(name, str) or name not in KERNELS:
        raise ValueError(f"name must be one of {NAMES}, got {name!r}")
    return KERNELS[name]


# --- code generation -------------------------------------------------------------

_MATH = re.compile(r"\b(cos|sin|exp|log|sqrt|tanh|fma)\(")
_FMA = re.compile(r"\bfma\((\w+), (\w+), (\w+)\)")   # Numba: fma(a, b, c) -> a * b + c


def cuda_source(name: str, dtype="float32", op: str = "mul") -> str:
    """The CUDA C++ source that CuPy compiles (as a ``RawKernel``) for this kernel and dtype.

    One ``extern "C" __global__`` function named ``brrr_<name>_<float|double>``
    with arguments (input arrays, scalars, [reps,] out, element count). Each thread
    handles one 16-byte vector (:func:`cuda_threads` of them cover an array), the last
    ``n % lanes`` elements and misaligned arrays one element at a time; any smaller
    grid covers the array too, striding. This exact string is what runs on a GPU,
    what the tests compile with nvcc for sm_75 and sm_90, and what they run on the
    CPU, compiled as C++ with one thread at a time.
    """
    return _cuda_text(kernel(name, op), _dtype_name(dtype))


def cuda_threads(size: int, dtype="float32") -> int:
    """Threads that cover ``size`` elements of ``dtype`` with one 16-byte vector each (the tail included)."""
    lanes = CUDA_VECTOR_BYTES // np.dtype(_dtype_name(dtype)).itemsize
    return -(-int(size) // lanes)


def numba_source(name: str, op: str = "mul") -> str:
    """The Python source of the CPU kernel, compiled by ``numba.njit(parallel=True)``.

    The same statements as :func:`cuda_source`, in a ``prange`` loop that Numba
    splits across the CPU's cores. One source serves float32 and float64 (Numba
    compiles one version per dtype on first use).
    """
    return _numba_text(kernel(name, op))


def _cuda_text(k: Kernel, dtype: str) -> str:
    ctype, vtype = _C_TYPES[dtype], _VECTOR_TYPES[dtype]
    lanes = _LANES[:CUDA_VECTOR_BYTES // np.dtype(dtype).itemsize]
    if ctype == "float":  # cos -> cosf: float math stays in float
        c = lambda text: _MATH.sub(lambda m: m.group(1) + "f(", text)  # noqa: E731
    else:
        c = lambda text: text  # noqa: E731
    # Each thread moves one 16-byte vector of each array (float4 / double2): one wide load per
    # array in flight per thread is what brings a streaming kernel closest to the bandwidth. The
    # kernel is launched with one thread per vector, so its loops run once; they stride by the
    # grid only so that a smaller grid (the latency sweep's) still covers every element. Arrays
    # not 16-byte aligned (views at an odd offset) take the scalar loop for every element, and
    # the last size % lanes elements always do. No __restrict__: the unfused chain runs in place
    # (x_ and out_ are the same array); element i depends on element i alone, so that is safe.
    params = ([f"const {ctype}* {v}_" for v in k.inputs]
              + [f"const {ctype} {s}" for s in k.scalars]
              + (["const long long reps"] if k.repeated else [])
              + [f"{ctype}* out_", "const long long n"])
    pointers = " | ".join(f"(unsigned long long){v}_" for v in (*k.inputs, "out"))
    steps = [f"{c(s)};" for s in k.steps]
    (x,) = k.inputs if k.repeated else (None,)

    def apply(get, put, pad):
        """Statements that read the inputs with ``get(v)``, apply the steps and store with ``put(value)``."""
        body = [f"{ctype} {v} = {get(v)};" for v in k.inputs]
        if k.repeated:
            body += ["for (long long r = 0; r < reps; ++r) {", *(f"    {s}" for s in steps), "}"]
        else:
            body += steps
        body += [put(c(k.result))]
        return [pad + line for line in body]

    lines = [f'extern "C" __global__ void {k.symbol}_{ctype}({", ".join(params)})', "{",
             "    const long long stride = (long long)blockDim.x * gridDim.x;",
             "    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
             f"    const bool aligned = (({pointers}) % {CUDA_VECTOR_BYTES}) == 0;",
             f"    const long long vectors = aligned ? n / {len(lanes)} : 0;",
             "    for (long long j = t; j < vectors; j += stride) {"]
    lines += [f"        const {vtype} {v}_v = reinterpret_cast<const {vtype}*>({v}_)[j];" for v in k.inputs]
    if k.repeated:  # the lanes' chains are independent: interleaved, they keep the pipeline busy
        lines += [f"        {ctype} {x}_{lane} = {x}_v.{lane};" for lane in lanes]
        lines += ["        for (long long r = 0; r < reps; ++r) {"]
        for lane in lanes:
            lines += [f"            {{ {ctype} {x} = {x}_{lane}; {' '.join(steps)} {x}_{lane} = {x}; }}"]
        lines += ["        }", f"        {vtype} o;"]
        lines += [f"        o.{lane} = {x}_{lane};" for lane in lanes]
    else:
        lines += [f"        {vtype} o;"]
        for lane in lanes:
            lines += ["        {"] + apply(lambda v, lane=lane: f"{v}_v.{lane}", lambda r, lane=lane: f"o.{lane} = {r};",
                                           " " * 12) + ["        }"]
    lines += [f"        reinterpret_cast<{vtype}*>(out_)[j] = o;", "    }",
              f"    for (long long i = vectors * {len(lanes)} + t; i < n; i += stride) {{"]
    lines += apply(lambda v: f"{v}_[i]", lambda r: f"out_[i] = {r};", " " * 8)
    lines += ["    }", "}", ""]
    return "\n".join(lines)


def _numba_text(k: Kernel) -> str:
    py = lambda text: _MATH.sub(lambda m: "math." + m.group(0), _FMA.sub(r"\1 * \2 + \3", text))  # noqa: E731
    args = [f"{v}_" for v in k.inputs] + list(k.scalars) + (["reps"] if k.repeated else []) + ["out_"]
    if not k.repeated:
        lines = [f"def {k.symbol}({', '.join(args)}):",
                 "    for i in prange(out_.shape[0]):"]
        lines += [f"        {v} = {v}_[i]" for v in k.inputs]
        lines += [f"        {py(s)}" for s in k.steps]
        lines += [f"        out_[i] = {py(k.result)}", ""]
        return "\n".join(lines)
    # Repeated steps, block by block: a first pass reads the input and applies the steps once,
    # then passes of NUMBA_UNROLL applications each, then one pass for the rest. Every pass over
    # a block is an innermost loop over elements (vectorised by LLVM, which needs the slices:
    # indices from range(len) are known to be non-negative) with its applications in registers,
    # and the block stays in L1 between passes, so memory sees one read and one write per
    # element. The rest, known only at run time, picks its pass from straight-line variants: a
    # pass per application costs a load and a store each (k = 8 ran 1.4 times as long as k = 9).
    (v,) = k.inputs

    def block_pass(source, times, pad):
        return [pad + line for line in ["for i in range(o.shape[0]):", f"    {v} = {source}[i]",
                                        *(f"    {py(s)}" for _ in range(times) for s in k.steps),
                                        f"    o[i] = {v}"]]

    rest = []     # one pass of `rest` (0 to NUMBA_UNROLL - 1) applications, by variant
    for times in range(1, NUMBA_UNROLL):
        rest += [" " * 8 + ("if" if times == 1 else "elif") + f" rest == {times}:",
                 *block_pass("o", times, " " * 12)]
    lines = [f"def {k.symbol}({', '.join(args)}):",
             "    n = out_.shape[0]",
             f"    full, rest = divmod(reps - 1, {NUMBA_UNROLL})",
             f"    for b in prange((n + {NUMBA_BLOCK - 1}) // {NUMBA_BLOCK}):",
             f"        lo = b * {NUMBA_BLOCK}",
             f"        hi = min(lo + {NUMBA_BLOCK}, n)",
             f"        src = {v}_[lo:hi]",
             "        o = out_[lo:hi]",
             *block_pass("src", 1, " " * 8),
             "        for _ in range(full):",
             *block_pass("o", NUMBA_UNROLL, " " * 12),
             *rest, ""]
    return "\n".join(lines)



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
        _check_count(n, most=None)   # counting runs nothing: any chain length can be counted
        passes = 1 if fused else n
        return 2 * passes * size * itemsize, k.flops * n * size
    return (len(k.inputs) + 1) * size * itemsize, k.flops * size


# --- checks the table needs ---------------------------------------------------------

def _dtype_name(dtype, what: str = "dtype") -> str:
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype)
    if name not in DTYPES:
        raise ValueError(f"{what} must be float32 or float64, got {name}")
    return name


def _check_op(op, ops=None):
    ops = OPS if ops is None else ops
    if not isinstance(op, str) or op not in ops:
        raise ValueError(f"op must be one of {tuple(ops)}, got {op!r}")


def _check_count(n, most=MAX_OPS):
    """``n``, a chain length from 1 to ``most`` (None: no limit), or an error naming it."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"n (the number of ops) must be an integer, got {type(n).__name__}")
    if n < 1 or (most is not None and n > most):
        raise ValueError(f"n (the number of ops) must be >= 1 and <= MAX_OPS = {MAX_OPS:,}, got {n}"
                         if most else f"n (the number of ops) must be >= 1, got {n}")
