"""Vertical fusion: k pointwise ops in one kernel against k kernels, predicted and measured.

Run unfused, each of ``k`` pointwise ops reads its input from memory and writes
its output back: ``2 k`` array passes. Fused into one kernel, the chain reads
each element once, keeps the intermediate values in registers, and writes the
result once: ``2`` passes, the same FLOPs. While both are memory-bound the
roofline (Williams et al., 2009) therefore predicts a speed-up of ``k``; once the
fused kernel's intensity ``k * flops_per_op / (2 * itemsize)`` passes the ridge
point it becomes compute-bound and the speed-up stops growing, capped at
``2 * itemsize * ridge / flops_per_op``. Horace He's "Making Deep Learning Go
Brrrr From First Principles" (He 2022) makes the same argument for ``x.cos().cos()``.

:func:`fusion_speedup` measures both sides with several fusers:

============== =========================================== ==============================
backend        fused                                        unfused
============== =========================================== ==============================
'brrr'         :func:`brrr.kernels.chain` (Numba on the     the same kernels, one op per
               CPU, a CuPy kernel on a GPU)                 pass (``fused=False``)
'cupy_fuse'    ``cupy.fuse`` (GPU with CuPy only)           one CuPy ufunc call per op
'torch_compile' ``torch.compile`` (Inductor: C++ on the     PyTorch eager, one op per
               CPU, Triton on a GPU)                        kernel, outputs preallocated
============== =========================================== ==============================

:func:`epilogue_fusion` does the same for ``relu(x @ w + b)``, the smallest case
of fusing pointwise work into the epilogue of a matmul.
"""
from __future__ import annotations

import time

from .. import config
from ..device import device as live_device
from ..results import Result
from ..roofline import Roofline
from ..timing import bench
from . import _arrays
from ._arrays import default_elements
from .common import run_sweep

BACKENDS = ("brrr", "cupy_fuse", "torch_compile")
VARIANTS = ("fused", "unfused")
# (constant c, constant d, FLOPs per element) for each op, as in brrr.kernels.OPS.
OPS = {"mul": (0.999, 0.0, 1), "add": (1.0, 0.0, 1), "fma": (0.5, 0.5, 2), "cos": (0.0, 0.0, 1)}


# --- the model -------------------------------------------------------------------------

def _check_op(op):
    if not isinstance(op, str) or op not in OPS:
        raise ValueError(f"op must be one of {tuple(OPS)}, got {op!r}")


def _check_k(k):
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k (the number of pointwise ops) must be an integer >= 1, got {k!r}")
    return k


def chain_traffic(k: int, n: int, fused: bool, op: str = "mul", dtype="float32") -> tuple:
    """``(bytes moved, FLOPs)`` of ``k`` ops ``op`` on ``n`` elements, fused or not.

    Fused: one read and one write per element (``2 n itemsize`` bytes). Unfused:
    ``k`` passes, each a read and a write (``2 k n itemsize``). FLOPs are
    ``k n`` times the op's count (``cos`` counts as one, though it costs many
    instructions).
    """
    _check_k(k)
    _check_op(op)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n (elements) must be an integer >= 1, got {n!r}")
    item = _arrays.itemsize(dtype)
    passes = 1 if fused else k
    return float(2 * passes * n * item), float(k * n * OPS[op][2])


def predicted_speedup(roof: Roofline, k: int, n: int = 2 ** 24, op: str = "mul", dtype="float32") -> float:
    """Roofline time of the unfused chain divided by that of the fused one.

    Equals ``k`` while the fused kernel is memory-bound; levels off at
    ``2 * itemsize * ridge / flops_per_op`` once it is compute-bound.
    """
    if not isinstance(roof, Roofline):
        raise TypeError(f"roof must be a brrr.Roofline, got {type(roof).__name__}")
    unfused = roof.time(*chain_traffic(k, n, False, op, dtype)[::-1])
    fused = roof.time(*chain_traffic(k, n, True, op, dtype)[::-1])
    return float(unfused / fused)


def crossover_k(roof: Roofline, op: str = "mul", dtype="float32") -> float:
    """The chain length at which the fused kernel reaches the ridge point (becomes compute-bound)."""
    _check_op(op)
    return roof.ridge * 2 * _arrays.itemsize(dtype) / OPS[op][2]


# --- the fusers ---------------------------------------------------------------------------

KS = {   # sweep -> (full-size chain lengths, quick-mode chain lengths)
    "kernels": (tuple(2 ** i for i in range(8)), (1, 2, 4, 16, 64)),
    "torch_compile": (tuple(2 ** i for i in range(7)), (1, 4, 16)),   # a compile (seconds) per k
    "cos": (tuple(2 ** i for i in range(7)), (1, 2, 4, 8)),
}


def default_ks(quick=None, sweep: str = "kernels") -> tuple:
    """Chain lengths for a sweep: 'kernels' 1, 2, 4, ..., 128 (quick mode: 1, 2, 4, 16, 64);
    'torch_compile' 1 to 64 (quick: 1, 4, 16), since each k costs a compilation; 'cos' 1 to 64
    (quick: 1, 2, 4, 8)."""
    if sweep not in KS:
        raise ValueError(f"sweep must be one of {tuple(KS)}, got {sweep!r}")
    quick = config.quick_mode() if quick is None else quick
    return KS[sweep][1 if quick else 0]


def predicted_table(roof: Roofline, ks=None, op: str = "mul", dtype="float32"):
    """The bytes model for each chain length ``k``, as a table for the page (a DataFrame):
    bytes per element moved unfused and fused, the fused kernel's intensity (FLOP/byte),
    the roofline's speed-up of fusing, and the fused kernel's regime. Nothing is measured."""
    import pandas as pd
    if not isinstance(roof, Roofline):
        raise TypeError(f"roof must be a brrr.Roofline, got {type(roof).__name__}")
    ks = default_ks() if ks is None else _arrays.check_sizes("ks", ks)
    rows = []
    for k in ks:
        unfused, _ = chain_traffic(k, 1, False, op, dtype)
        fused, flops = chain_traffic(k, 1, True, op, dtype)
        rows.append({"k (ops)": k, "unfused bytes per element": unfused, "fused bytes per element": fused,
                     "fused intensity (FLOP/byte)": flops / fused,
                     "predicted speed-up": predicted_speedup(roof, k, op=op, dtype=dtype),
                     "fused kernel (roofline)": roof.regime(flops, fused)})
    return pd.DataFrame(rows)


def _torch_op(torch, op, c, d):
    if op == "mul":
        return lambda t: t * c
    if op == "add":
        return lambda t: t + c
    if op == "fma":
        return lambda t: t * c + d
    return torch.cos


def _torch_unfused_op(torch, op, c, d):
    """``fn(src, dst)``: one op as one eager kernel writing into ``dst`` (fma: two kernels, as eager runs it)."""
    if op == "mul":
        return lambda src, dst: torch.mul(src, c, out=dst)
    if op == "add":
        return lambda src, dst: torch.add(src, c, out=dst)
    if op == "cos":
        return lambda src, dst: torch.cos(src, out=dst)
    return lambda src, dst: torch.add(torch.mul(src, c, out=dst), d, out=dst)


def _alternate(one, x, out, scratch, k):
    """Run ``one(src, dst)`` k times; the passes alternate between out and scratch, the last writes out."""
    source = x
    for i in range(k):
        target = out if (k - 1 - i) % 2 == 0 else scratch
        one(source, target)
        source = target
    return out


class _Brrr:
    """brrr.kernels.chain: Numba on the CPU, a CuPy kernel on a GPU."""
    library = "brrr.kernels"

    def __init__(self, dev, n, dtype, op):
        from .. import kernels
        lib = _arrays.library(dev)
        if lib not in ("numpy", "cupy"):
            raise RuntimeError("brrr.kernels needs NumPy (CPU) or CuPy (GPU) arrays; "
                               "this GPU is driven by PyTorch only")
        self.library = "brrr.kernels (Numba)" if lib == "numpy" else "brrr.kernels (CuPy)"
        self.kernels, self.op = kernels, op
        self.x = _arrays.full(n, 0.5, dtype, lib, dev.backend)
        self.out = _arrays.full(n, 0.0, dtype, lib, dev.backend)
        self.scratch = _arrays.full(n, 0.0, dtype, lib, dev.backend)

    def call(self, k, fused):
        ks, x, out, scratch, op = self.kernels, self.x, self.out, self.scratch, self.op
        return lambda: ks.chain(x, k, op=op, fused=fused, out=out, scratch=scratch)


class _CupyFuse:
    """cupy.fuse (one generated kernel) against one CuPy ufunc call per op."""
    library = "cupy.fuse"

    def __init__(self, dev, n, dtype, op):
        if dev.backend != "cuda" or dev.array_library != "cupy":
            raise RuntimeError("cupy.fuse needs a CUDA GPU with CuPy installed")
        import cupy
        self.cp, self.op = cupy, op
        self.c, self.d = (cupy.dtype(dtype).type(v) for v in OPS[op][:2])
        self.x = cupy.full(n, 0.5, dtype=dtype)
        self.out = cupy.empty_like(self.x)
        self.scratch = cupy.empty_like(self.x)

    def call(self, k, fused):
        cp, op, c, d = self.cp, self.op, self.c, self.d
        if fused:
            def chain(t):
                for _ in range(k):
                    t = t * c if op == "mul" else t + c if op == "add" else t * c + d if op == "fma" else cp.cos(t)
                return t
            fn, x = cp.fuse(chain), self.x
            return lambda: fn(x)
        ufunc = {"mul": lambda s, o: cp.multiply(s, c, out=o), "add": lambda s, o: cp.add(s, c, out=o),
                 "cos": lambda s, o: cp.cos(s, out=o),
                 "fma": lambda s, o: cp.add(cp.multiply(s, c, out=o), d, out=o)}[op]
        x, out, scratch = self.x, self.out, self.scratch
        return lambda: _alternate(ufunc, x, out, scratch, k)


class _TorchCompile:
    """torch.compile (Inductor) against eager PyTorch with preallocated outputs."""
    library = "torch.compile"

    def __init__(self, dev, n, dtype, op):
        import torch
        self.torch, self.op = torch, op
        self.c, self.d = OPS[op][:2]
        self.x = _arrays.full(n, 0.5, dtype, "torch", dev.backend)
        self.out = torch.empty_like(self.x)
        self.scratch = torch.empty_like(self.x)
        self.compile_seconds = {}

    def call(self, k, fused):
        torch, x, out = self.torch, self.x, self.out
        if not fused:
            one, scratch = _torch_unfused_op(torch, self.op, self.c, self.d), self.scratch
            return lambda: _alternate(one, x, out, scratch, k)
        op = _torch_op(torch, self.op, self.c, self.d)

        def chain(t, result):
            for _ in range(k):
                t = op(t)
            result.copy_(t)  # Inductor writes the fused kernel's output straight into `result`
            return result
        torch._dynamo.reset()  # a fresh graph for this k, compiled now so bench's warm-up doesn't count it
        compiled = torch.compile(chain)
        start = time.perf_counter()
        compiled(x, out)
        self.compile_seconds[k] = time.perf_counter() - start
        return lambda: compiled(x, out)


_FUSERS = {"brrr": _Brrr, "cupy_fuse": _CupyFuse, "torch_compile": _TorchCompile}


def _check_backends(backends):
    if isinstance(backends, str):
        backends = (backends,)
    backends = tuple(backends)
    bad = [b for b in backends if b not in BACKENDS]
    if bad or not backends:
        raise ValueError(f"backends must be a non-empty subset of {BACKENDS}, got {backends!r}")
    return backends


def fusion_speedup(ks=None, n=None, op: str = "mul", dtype="float32", backends=("brrr", "torch_compile"),
                   roof=None, max_unfused_k=None, progress: bool = True):
    """Time ``k`` pointwise ops fused into one kernel and run as ``k`` kernels, for each backend.

    Parameters
    ----------
    ks : chain lengths (default :func:`default_ks`).
    n : elements per array (default :func:`default_elements`).
    op : 'mul' (x * 0.999), 'add' (x + 1), 'fma' (x * 0.5 + 0.5) or 'cos'.
    dtype : 'float32' (default) or 'float64'.
    backends : any of 'brrr', 'cupy_fuse', 'torch_compile'. A backend that cannot
        run here (no GPU for 'cupy_fuse', a broken compiler for 'torch_compile')
        is skipped, and ``meta['notes']`` says why.
    roof : the :class:`brrr.Roofline` for the predictions (default: the device's).
    max_unfused_k : skip unfused points above this k (each is k passes over
        memory); default: all of them.

    Records (one per backend, variant, k): ``backend``, ``library``, ``variant``
    ('fused' or 'unfused'), ``k``, ``op``, ``n``, ``dtype``, ``nbytes``, ``flops``,
    ``seconds`` (median), ``predicted_seconds`` (the roofline's max(t_mem, t_math)),
    ``predicted_regime``, and the usual ``gbps``/``gflops``. :func:`speedups`
    pairs them up into measured and predicted speed-ups.
    """
    _check_op(op)
    dtype = _arrays.dtype_name(dtype)
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    ks = default_ks() if ks is None else _arrays.check_sizes("ks", ks)
    backends = _check_backends(backends)
    dev = live_device()
    n = default_elements(dev, dtype) if n is None else _arrays.check_sizes("n", [n])[0]
    if roof is None:
        roof = Roofline.from_device(dev, dtype)
    elif not isinstance(roof, Roofline):
        raise TypeError(f"roof must be a brrr.Roofline, got {type(roof).__name__}")
    max_unfused_k = max(ks) if max_unfused_k is None else max_unfused_k

    notes, fusers = [], {}
    for name in backends:
        try:
            fusers[name] = _FUSERS[name](dev, n, dtype, op)
        except Exception as error:  # noqa: BLE001 - a missing library or GPU: skip, and say so
            notes.append(f"{name} skipped: {type(error).__name__}: {error}")
    if dev.backend == "cpu" and n * _arrays.itemsize(dtype) < 4 * dev.l2_bytes:
        notes.append(f"each array ({n * _arrays.itemsize(dtype) / 2**20:.0f} MiB) is smaller than 4x the "
                     f"last-level cache ({dev.l2_bytes / 2**20:.0f} MiB): some traffic may hit the cache")
    points = [(b, v, k) for b in fusers for k in ks for v in VARIANTS
              if v == "fused" or k <= max_unfused_k]

    def measure(point):
        backend, variant, k = point
        fuser = fusers[backend]
        fused = variant == "fused"
        nbytes, flops = chain_traffic(k, n, fused, op, dtype)
        try:
            fn = fuser.call(k, fused)
        except Exception as error:  # noqa: BLE001 - torch.compile can fail (no compiler): note, skip
            notes.append(f"{backend} {variant} k={k} skipped: {type(error).__name__}: {str(error)[:200]}")
            return []
        t = bench(fn, nbytes=nbytes, flops=flops, min_samples=3, label=f"{backend} {variant} k={k}")
        return {"device": dev.name, "backend": backend, "library": fuser.library, "variant": variant,
                "k": k, "op": op, "n": n, "dtype": dtype,
                **_arrays.timing_fields(t, nbytes, flops),
                "predicted_seconds": float(roof.time(flops, nbytes)),
                "predicted_regime": roof.regime(flops, nbytes)}

    result = run_sweep("fusion_speedup", points, measure, progress=progress,
                       command=f"brrr.experiments.fusion_speedup(ks={list(ks)}, n={n}, op={op!r}, "
                               f"dtype={dtype!r}, backends={list(backends)})",
                       op=op, dtype=dtype, n=n, quick=config.quick_mode(), roof=roof.to_dict(),
                       ridge=roof.ridge, crossover_k=crossover_k(roof, op, dtype))
    result.meta["notes"].extend(notes)
    compile_seconds = {k: s for f in fusers.values() for k, s in getattr(f, "compile_seconds", {}).items()}
    if compile_seconds:
        result.meta["compile_seconds"] = compile_seconds
    return result


def own_fuser(dev=None) -> str:
    """The fuser that runs ``brrr``'s own kernels here: 'brrr' where arrays are NumPy (CPU) or
    CuPy (GPU); 'torch_compile' on a GPU driven by PyTorch only."""
    dev = dev or live_device()
    return "brrr" if dev.array_library in ("numpy", "cupy") else "torch_compile"


def cos_chain(ks=None, n=None, backends=None, dtype="float32", progress: bool = True):
    """:func:`fusion_speedup` for a chain of cosines, with sizes that fit a chapter.

    ``ks`` defaults to ``default_ks(sweep='cos')``; ``n`` to 2**20 elements on the CPU
    (a cosine is a math-library call of tens of cycles there, so a DRAM-sized array
    would take minutes) and the usual DRAM-sized array on a GPU; ``backends`` to
    ``(own_fuser(),)``.
    """
    dev = live_device()
    ks = default_ks(sweep="cos") if ks is None else ks
    n = (2 ** 20 if dev.backend == "cpu" else None) if n is None else n
    backends = (own_fuser(dev),) if backends is None else backends
    return fusion_speedup(ks=ks, n=n, op="cos", dtype=dtype, backends=backends, progress=progress)


def speedup_table(result):
    """The speed-ups of a :func:`fusion_speedup` run as a table for the page (a DataFrame):
    'fuser', 'k (ops)', 'fused time' and 'unfused time' (seconds), 'measured speed-up',
    'roofline speed-up' (unfused time / fused time, measured and predicted)."""
    import pandas as pd
    columns = ["fuser", "k (ops)", "fused time", "unfused time", "measured speed-up", "roofline speed-up"]
    if not getattr(result, "records", True):   # every fuser was skipped here: an empty table
        return pd.DataFrame(columns=columns)
    table = speedups(result)
    return table.rename(columns={"library": "fuser", "k": "k (ops)", "fused_seconds": "fused time",
                                 "unfused_seconds": "unfused time", "speedup": "measured speed-up",
                                 "predicted_speedup": "roofline speed-up"})[
        ["fuser", "k (ops)", "fused time", "unfused time", "measured speed-up", "roofline speed-up"]]


def inspect_compiled(fn, *args) -> dict:
    """What ``torch.compile`` makes of ``fn(*args)``: ``{'kernels': [names launched], 'error': None}``,
    or ``{'kernels': [], 'error': 'what went wrong'}`` where it cannot compile here (no C++
    compiler, an unsupported platform)."""
    try:
        return {"kernels": generated_kernels(fn, *args), "error": None}
    except Exception as error:  # noqa: BLE001 - a missing compiler is an outcome, not a crash
        return {"kernels": [], "error": f"{type(error).__name__}: {str(error)[:200]}"}


def cos_cases(result):
    """The ``x.cos().cos()`` comparison of a ``fusion_speedup(ks=(1, 2), op='cos')`` run: a
    Result (same meta) with one record per case ('cos', 'cos().cos(), fused', 'cos().cos(),
    unfused'): 'time per call' and 'roofline time' (seconds) and the roofline's regime."""
    frame = _frame(result)
    rows = []
    for k, variant, case in ((1, "fused", "cos"), (2, "fused", "cos().cos(), fused"),
                             (2, "unfused", "cos().cos(), unfused")):
        match = frame[(frame.k == k) & (frame.variant == variant)]
        if len(match):
            r = match.iloc[0]
            rows.append({"case": case, "time per call": r.seconds, "roofline time": r.predicted_seconds,
                         "regime (roofline)": r.predicted_regime})
    return Result("cos_cases", rows, dict(result.meta))


def speedups(result):
    """A DataFrame with one row per (backend, k): fused and unfused seconds and the speed-ups.

    Columns: ``backend``, ``library``, ``k``, ``fused_seconds``, ``unfused_seconds``,
    ``speedup`` (measured: unfused / fused), ``predicted_speedup`` (roofline),
    ``predicted_fused_regime``. Rows with only one of the two variants are dropped.
    """
    frame = _frame(result)
    need = {"backend", "variant", "k", "seconds", "predicted_seconds"}
    if not need <= set(frame.columns):
        raise ValueError(f"result must come from fusion_speedup (columns {sorted(need)}), "
                         f"got columns {list(frame.columns)}")
    keys = ["backend", "library", "k"]
    fused = frame[frame.variant == "fused"].set_index(keys)
    unfused = frame[frame.variant == "unfused"].set_index(keys)
    table = fused[["seconds", "predicted_seconds", "predicted_regime"]].join(
        unfused[["seconds", "predicted_seconds"]], lsuffix="_fused", rsuffix="_unfused", how="inner")
    table = table.reset_index().rename(columns={"seconds_fused": "fused_seconds",
                                                "seconds_unfused": "unfused_seconds",
                                                "predicted_regime": "predicted_fused_regime"})
    table["speedup"] = table.unfused_seconds / table.fused_seconds
    table["predicted_speedup"] = table.predicted_seconds_unfused / table.predicted_seconds_fused
    return table[["backend", "library", "k", "fused_seconds", "unfused_seconds", "speedup",
                  "predicted_speedup", "predicted_fused_regime"]].sort_values(["backend", "k"],
                                                                               ignore_index=True)


def speedup_lines(result):
    """Long-format rows for a plot: ``k``, ``speedup`` and ``series`` (each fuser, and the roofline's prediction)."""
    import pandas as pd
    table = speedups(result)
    rows = [{"k": r.k, "speedup": r.speedup, "series": f"measured: {r.library}"} for r in table.itertuples()]
    predicted = table.drop_duplicates("k")
    rows += [{"k": r.k, "speedup": r.predicted_speedup, "series": "predicted (roofline)"}
             for r in predicted.itertuples()]
    return pd.DataFrame(rows)


def time_lines(result, variant: str = "fused", backend=None, per_element: bool = False):
    """Long-format rows for a plot: ``k``, ``seconds`` and ``series`` ('measured: OP' and 'roofline: OP').

    One backend's ``variant`` times (default: the first backend in the result)
    next to the roofline's time for the same bytes and FLOPs; ``per_element=True``
    divides both by the array's element count (seconds per element), so runs on
    different sizes compare.
    """
    import pandas as pd
    frame = _frame(result)
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if frame.empty:
        return pd.DataFrame(columns=["k", "seconds", "series"])
    backend = backend or frame.backend.iloc[0]
    part = frame[(frame.variant == variant) & (frame.backend == backend)].sort_values("k")
    scale = (lambda r: 1.0 / r.n) if per_element else (lambda r: 1.0)
    rows = [{"k": r.k, "seconds": r.seconds * scale(r), "series": f"measured: {r.op}"} for r in part.itertuples()]
    rows += [{"k": r.k, "seconds": r.predicted_seconds * scale(r), "series": f"roofline: {r.op}"}
             for r in part.itertuples()]
    return pd.DataFrame(rows)


def _frame(data):
    import pandas as pd
    if hasattr(data, "records"):
        return pd.DataFrame(data.records)
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, (list, tuple)):
        return pd.DataFrame(list(data))
    raise TypeError(f"expected a brrr.Result, a DataFrame or a list of records, got {type(data).__name__}")


# --- epilogue fusion ------------------------------------------------------------------------

def epilogue_traffic(m: int, n: int, k: int, fused: bool, dtype="float32") -> tuple:
    """``(bytes, FLOPs)`` of ``relu(x @ w + b)`` with x (m, k), w (k, n), b (n,).

    The matmul reads x and w and writes the (m, n) result; unfused, the bias add
    reads it (and b) and writes it again, and the ReLU reads and writes it once
    more. Fused into the matmul's epilogue, only the matmul's traffic (plus b)
    remains. FLOPs: 2 m n k for the matmul, m n each for the add and the ReLU.
    """
    for name, v in (("m", m), ("n", n), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    item = _arrays.itemsize(dtype)
    matmul = (m * k + k * n + m * n + n) * item
    epilogue = 0 if fused else (2 * m * n + 2 * m * n) * item
    return float(matmul + epilogue), float(2 * m * n * k + 2 * m * n)


def kernel_names(source: str) -> list:
    """The kernels an Inductor output file launches, in order: its own fused kernels
    (``cpp_fused_*`` on the CPU, ``triton_*`` on a GPU) and library calls (``extern_kernels.addmm``)."""
    import re
    names = []
    for line in source.splitlines():
        line = line.strip()
        match = (re.match(r"(extern_kernels\.\w+)\(", line) or re.match(r"(cpp_fused_\w+)\(", line)
                 or re.match(r"(triton_\w+)\.run\(", line))
        if match and "=" not in line.split("(")[0]:
            names.append(match.group(1))
    return names


def generated_kernels(fn, *args) -> list:
    """Compile ``fn`` with ``torch.compile`` (fresh), run it on ``args``, and list the kernels it launches."""
    import torch
    from torch._inductor.utils import run_and_get_code
    torch._dynamo.reset()
    _, sources = run_and_get_code(torch.compile(fn), *args)
    return [name for source in sources for name in kernel_names(source)]


def epilogue_bars(result):
    """The bars of an :func:`epilogue_fusion` run: a Result (same meta) with one record per
    case, 'case' and 'time per call' (seconds): each variant as measured, then the roofline's
    time for three kernels and for one fully fused kernel."""
    frame = _frame(result)
    rows = [{"case": f"{r.variant} (measured)", "time per call": r.seconds} for r in frame.itertuples()]
    meta = getattr(result, "meta", {}) or {}
    shape, dtype = meta.get("shape"), meta.get("dtype", "float32")
    if shape and meta.get("roof"):
        roof = Roofline.from_dict(meta["roof"])
        for fused, case in ((False, "3 kernels (roofline)"), (True, "1 fused kernel (roofline)")):
            nbytes, flops = epilogue_traffic(*(int(v) for v in shape), fused, dtype)
            rows.append({"case": case, "time per call": float(roof.time(flops, nbytes))})
    return Result("epilogue_bars", rows, dict(meta))


def epilogue_fusion(m=None, n=None, k=None, dtype="float32", roof=None, progress: bool = True):
    """``relu(x @ w + b)`` in eager PyTorch (three kernels) and under ``torch.compile``.

    Default shape (m, n, k): (4096, 4096, 16) on the CPU, (8192, 8192, 64) on a GPU
    (quick mode: (1024, 1024, 16)): a short inner dimension, so the matmul is
    quick and the epilogue's extra trips through memory show. Records: ``variant``
    ('eager' or 'torch.compile'), shape, ``nbytes``/``flops`` from
    :func:`epilogue_traffic` (eager unfused, compiled as if fully fused),
    ``seconds``, ``predicted_seconds``. A failing compiler is noted, not raised.
    """
    import torch
    dev = live_device()
    quick = config.quick_mode()
    default = (1024, 1024, 16) if quick else ((8192, 8192, 64) if dev.backend == "cuda" else (4096, 4096, 16))
    m, n, k = (default[i] if v is None else v for i, v in enumerate((m, n, k)))
    dtype = _arrays.dtype_name(dtype)
    roof = Roofline.from_device(dev, dtype) if roof is None else roof
    if not isinstance(roof, Roofline):
        raise TypeError(f"roof must be a brrr.Roofline, got {type(roof).__name__}")
    device = "cuda" if dev.backend == "cuda" else "cpu"
    tdtype = _arrays.torch_dtype(dtype)
    gen = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(m, k, generator=gen, dtype=tdtype).to(device)
    w = torch.randn(k, n, generator=gen, dtype=tdtype).to(device)
    b = torch.randn(n, generator=gen, dtype=tdtype).to(device)

    def layer(x, w, b):
        return torch.relu(x @ w + b)

    notes, launched = [], []
    variants = {"eager": layer}
    try:
        from torch._inductor.utils import run_and_get_code
        torch._dynamo.reset()
        compiled = torch.compile(layer)
        _, sources = run_and_get_code(compiled, x, w, b)
        variants["torch.compile"] = compiled
        launched = [name for source in sources for name in kernel_names(source)]
    except Exception as error:  # noqa: BLE001
        notes.append(f"torch.compile skipped: {type(error).__name__}: {str(error)[:200]}")

    def measure(variant):
        fused = variant != "eager"
        nbytes, flops = epilogue_traffic(m, n, k, fused, dtype)
        t = bench(variants[variant], x, w, b, nbytes=nbytes, flops=flops, min_samples=3, label=variant)
        return {"device": dev.name, "variant": variant, "m": m, "n": n, "k": k, "dtype": dtype,
                **_arrays.timing_fields(t, nbytes, flops),
                "predicted_seconds": float(roof.time(flops, nbytes))}

    result = run_sweep("epilogue_fusion", list(variants), measure, progress=progress,
                       command=f"brrr.experiments.epilogue_fusion(m={m}, n={n}, k={k}, dtype={dtype!r})",
                       dtype=dtype, roof=roof.to_dict(), shape=(m, n, k))
    result.meta["notes"].extend(notes)
    if "torch.compile" in variants:
        same = torch.allclose(variants["torch.compile"](x, w, b), layer(x, w, b), rtol=1e-4, atol=1e-4)
        result.meta["compiled_matches_eager"] = bool(same)
        result.meta["compiled_kernels"] = launched
    return result
