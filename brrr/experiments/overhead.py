"""Overhead: the cost of a call that is neither math nor memory traffic.

Every operation pays a fixed price before any work starts: the Python
interpreter, the library's dispatch, and on a GPU the kernel launch. For small
tensors that price is the whole runtime. The experiments here make it visible:

* :func:`time_vs_size`: seconds per call of one elementwise op from 1 element
  up, for NumPy, PyTorch and CuPy (flat while overhead-bound, then linear).
* :func:`fit_overhead`: the fixed cost and the cost per element from that sweep.
* :func:`python_ops_per_second`: how many trivial Python operations run per second.
* :func:`async_demo`: on a GPU the call returns before the work is done.
* :func:`double_the_batch`: double the size; if the time barely moves, you are
  overhead-bound.
* :func:`reduce_overhead_demo`: eager vs CUDA graph vs
  ``torch.compile(mode="reduce-overhead")`` (GPU only).

All times are seconds; sizes are numbers of elements.
"""
from __future__ import annotations

import contextlib
import math
import time
import timeit
from typing import Callable, Iterable, Optional, Sequence

import numpy as np

from .. import config
from ..device import device as _live_device
from ..results import Result, provenance
from ..timing import bench
from .common import run_sweep

LIBRARIES = ("numpy", "torch", "cupy")
OPS = ("add", "mul", "cos")
FIXED_COST_SIZES = 5    # the fixed cost of a call: median time of the sweep's 5 smallest sizes
PER_ELEMENT_SIZES = 2   # the cost per element: from the sweep's 2 largest sizes


# --- helpers --------------------------------------------------------------------

def _check_sizes(sizes, name="sizes") -> list:
    try:
        sizes = [s for s in sizes]
    except TypeError:
        raise TypeError(f"{name} must be a sequence of positive integers, got {sizes!r}") from None
    if not sizes:
        raise ValueError(f"{name} must not be empty")
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
            raise ValueError(f"{name} must hold positive integers (numbers of elements), got {s!r}")
    return [int(s) for s in sizes]


def default_sizes() -> list:
    """Powers of two from 1 element to 2**26 (2**22 in quick mode)."""
    top = 22 if config.quick_mode() else 26
    step = 2 if config.quick_mode() else 1
    return [2 ** k for k in range(0, top + 1, step)]


def available_libraries(libraries: Iterable[str] = LIBRARIES) -> tuple:
    """(usable, skipped): which of ``libraries`` can run here, and why the others cannot.

    NumPy always runs on the CPU. PyTorch runs on the GPU when CUDA works, else on
    the CPU. CuPy needs a CUDA GPU.
    """
    usable, skipped = [], {}
    for lib in libraries:
        if lib not in LIBRARIES:
            raise ValueError(f"libraries must be among {LIBRARIES}, got {lib!r}")
        if lib == "numpy":
            usable.append(lib)
        elif lib == "torch":
            try:
                import torch  # noqa: F401
                usable.append(lib)
            except ImportError:
                skipped[lib] = "PyTorch is not installed"
        else:
            try:
                import cupy
                if cupy.cuda.is_available():
                    usable.append(lib)
                else:
                    skipped[lib] = "CuPy found no CUDA GPU"
            except Exception:
                skipped[lib] = "CuPy is not installed or has no CUDA GPU (it needs one)"
    return usable, skipped


def _torch_device() -> str:
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


def _arrays(library: str, size: int, dtype: str):
    """Two inputs and an output of ``size`` elements, and the backend they live on."""
    if library == "numpy":
        a = np.random.default_rng(0).random(size, dtype=np.float64).astype(dtype)
        return a, a.copy(), np.empty_like(a), "cpu"
    if library == "torch":
        import torch
        where = _torch_device()
        a = torch.rand(size, dtype=getattr(torch, dtype), device=where)
        return a, a.clone(), torch.empty_like(a), where
    import cupy
    a = cupy.random.random(size, dtype=dtype)
    return a, a.copy(), cupy.empty_like(a), "cuda"


def _op(library: str, op: str) -> Callable:
    """``f(a, b, out)`` doing ``op`` elementwise into ``out`` with ``library``."""
    if library == "numpy":
        mod = np
    elif library == "torch":
        import torch as mod
    else:
        import cupy as mod
    if op == "add":
        return lambda a, b, out: mod.add(a, b, out=out)
    if op == "mul":
        return lambda a, b, out: mod.multiply(a, b, out=out) if library != "torch" else mod.mul(a, b, out=out)
    return lambda a, b, out: mod.cos(a, out=out)


@contextlib.contextmanager
def limit_torch_threads(threads: Optional[int]):
    """Run the block with PyTorch's CPU thread pool set to ``threads`` (restored after).

    ``None`` leaves PyTorch alone. One thread matches NumPy's elementwise ops,
    and on a machine with more runnable work than cores it avoids the thread
    pool's stalls (milliseconds each), which would swamp a microsecond overhead.
    """
    if threads is None:
        yield
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"torch_threads must be a positive integer or None, got {threads!r}")
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _synchronizer(backend: str, library: str) -> Callable:
    if backend != "cuda":
        return lambda: None
    if library == "cupy":
        import cupy
        return lambda: cupy.cuda.Device().synchronize()
    import torch
    return torch.cuda.synchronize


def wall_time_per_call(fn: Callable, backend: str = "cpu", library: str = "numpy",
                       budget: float = 0.2) -> dict:
    """Wall-clock seconds per call of ``fn()`` when called back to back, as a user's loop would.

    This is what overhead is about, so the clock is the CPU's ``perf_counter``:
    on a GPU a block of calls is issued and then synchronised once, so the time
    per call is the larger of the CPU's cost to issue it and the GPU's to run it.
    Returns median, min and IQR (seconds) and the calls per sample.
    """
    sync = _synchronizer(backend, library)
    fn()
    sync()
    start = time.perf_counter()
    fn()
    sync()
    estimate = max(time.perf_counter() - start, 1e-7)
    calls = int(min(max(2e-3 / estimate, 1), 10_000)) if backend == "cuda" else 1

    def block():
        for _ in range(calls):
            fn()
        sync()

    t = bench(block, cache="hot", backend="cpu", budget=budget, warmup=0.02)
    return {"seconds": t.median / calls, "min_seconds": t.min / calls, "iqr_seconds": t.iqr / calls,
            "calls_per_sample": t.calls_per_sample * calls}


# --- time vs size -----------------------------------------------------------------

def time_vs_size(libraries: Sequence[str] = LIBRARIES, sizes: Optional[Sequence[int]] = None,
                 op: str = "add", dtype: str = "float32", budget: float = 0.2,
                 torch_threads: Optional[int] = 1, progress: bool = True) -> Result:
    """Seconds per call of one elementwise ``op`` ('add', 'mul', 'cos') against size.

    Each library writes into a preallocated output (``out=``), so the time is the
    op and its dispatch, not the allocator. Libraries that cannot run here (CuPy
    without a GPU) are skipped, with the reason in ``meta['notes']``.
    ``torch_threads`` sets PyTorch's CPU threads for the sweep (default 1, like
    NumPy's add; see :func:`limit_torch_threads`); ``None`` keeps PyTorch's default.

    Records: library, backend ('cpu'/'cuda'), op, dtype, size (elements), nbytes
    (bytes the op reads and writes), seconds (median wall-clock per call),
    min_seconds, iqr_seconds, calls_per_sample.
    """
    if isinstance(libraries, str):
        libraries = (libraries,)
    if op not in OPS:
        raise ValueError(f"op must be one of {OPS}, got {op!r}")
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    sizes = default_sizes() if sizes is None else _check_sizes(sizes)
    usable, skipped = available_libraries(libraries)
    itemsize = np.dtype(dtype).itemsize
    reads = 1 if op == "cos" else 2

    def measure(point):
        library, size = point
        a, b, out, backend = _arrays(library, size, dtype)
        f = _op(library, op)
        rec = wall_time_per_call(lambda: f(a, b, out), backend, library, budget)
        return {"library": library, "backend": backend, "op": op, "dtype": dtype, "size": size,
                "nbytes": (reads + 1) * itemsize * size, **rec}

    points = [(lib, s) for lib in usable for s in sizes]
    with limit_torch_threads(torch_threads):
        result = run_sweep("time_vs_size", points, measure, progress=progress, torch_threads=torch_threads,
                           command=f"brrr.experiments.time_vs_size({tuple(libraries)!r}, op={op!r})")
    for lib, why in skipped.items():
        result.meta["notes"].append(f"{lib} skipped: {why}")
    # What "the fixed cost of a call" means here, for readers of this result (Chapter 7 too).
    result.meta["quick"] = config.quick_mode()
    result.meta["calls"] = {lib: call_of(lib, op) for lib in usable}
    if len(sizes) >= 4:
        result.meta["fixed_cost"] = {lib: fit["overhead"] for lib, fit in fit_overheads(result).items()}
        result.meta["fixed_cost_method"] = (
            f"median, over the {FIXED_COST_SIZES} smallest sizes, of the median wall-clock seconds per "
            "call of the call in meta['calls'], called back to back in a Python loop (perf_counter; on a "
            "GPU, blocks of calls synchronised once); PyTorch CPU threads: meta['torch_threads']")
    return result


def fit_overhead(result: Result, library: str) -> dict:
    """Fit ``seconds = overhead + size * per_element`` to one library's ``time_vs_size`` records.

    ``overhead`` (seconds), the fixed cost of a call, is the median of the
    ``seconds`` (each the median wall-clock time per call) of the
    :data:`FIXED_COST_SIZES` smallest sizes, where the curve is flat;
    ``per_element`` (seconds/element) comes from the :data:`PER_ELEMENT_SIZES`
    largest sizes; ``crossover`` (elements) is where the work costs as much as
    the overhead: below it the call is overhead-bound. Also returned: the
    ``call`` that was timed, the ``fixed_cost_sizes`` the overhead comes from,
    PyTorch's ``threads`` during the sweep (None: its default) and the ``backend``.
    """
    rows = sorted((r for r in result.records if r.get("library") == library), key=lambda r: r["size"])
    if len(rows) < 4:
        raise ValueError(f"need at least 4 records for library={library!r}, found {len(rows)}")
    small = rows[:FIXED_COST_SIZES]
    overhead = float(np.median([r["seconds"] for r in small]))
    big = rows[-PER_ELEMENT_SIZES:]
    per_element = float(np.median([max(r["seconds"] - overhead, 0.0) / r["size"] for r in big]))
    crossover = overhead / per_element if per_element > 0 else math.inf
    op = rows[0].get("op", "add")
    return {"library": library, "overhead": overhead, "per_element": per_element,
            "crossover": crossover, "backend": rows[0]["backend"],
            "call": call_of(library, op), "fixed_cost_sizes": [r["size"] for r in small],
            "threads": (result.meta.get("torch_threads") if library == "torch" and rows[0]["backend"] == "cpu"
                        else 1 if rows[0]["backend"] == "cpu" else None),
            "dtype": rows[0].get("dtype", "float32")}


def fit_overheads(result: Result) -> dict:
    """:func:`fit_overhead` for every library in a ``time_vs_size`` result: ``{library: fit}``,
    in the order the sweep ran them."""
    libraries = list(dict.fromkeys(r["library"] for r in result.records))
    return {lib: fit_overhead(result, lib) for lib in libraries}


def fit_table(fits: dict):
    """The fits of :func:`fit_overheads` as a table: library, where it ran, fixed cost
    (seconds), cost per element (seconds) and the crossover (elements)."""
    import pandas as pd
    return pd.DataFrame([{"library": f["library"], "runs on": "CPU" if f["backend"] == "cpu" else "GPU",
                          "fixed cost per call": f["overhead"], "cost per element": f["per_element"],
                          "work = fixed cost at (elements)": f["crossover"] if math.isfinite(f["crossover"]) else None}
                         for f in fits.values()])


def call_of(library: str, op: str = "add") -> str:
    """The call :func:`time_vs_size` times for ``library`` and ``op``, as code."""
    if op == "cos":
        return f"{library}.cos(a, out=out)"
    name = {"add": "add", "mul": "mul" if library == "torch" else "multiply"}[op]
    return f"{library}.{name}(a, b, out=out)"


# --- one minimal call, timed several ways ------------------------------------------------

def call_overhead(rounds: Optional[int] = None, budget: float = 0.03, progress: bool = True) -> Result:
    """The cost of one minimal call, timed several ways, on one-element float32 arrays.

    Chapter 3's fixed cost (:func:`fit_overhead` on :func:`time_vs_size`) and the
    per-call overhead of Chapter 7's profiler (:func:`brrr.profiler.dispatch_overhead`)
    time different calls. This times them side by side, interleaved over ``rounds``
    rounds so that a change in the machine's load touches every variant alike:

    * ``numpy.add(a, b, out=out)``: NumPy's call in :func:`time_vs_size`;
    * ``torch.add(a, b, out=out)`` with one PyTorch CPU thread: PyTorch's call there
      (role 'chapter 3');
    * ``torch.add(a, b)``, a new output each call, one thread (CPU only);
    * ``torch.add(a, b)`` at PyTorch's default thread count: the call
      ``dispatch_overhead`` times (role 'chapter 7').

    Each is timed by :func:`wall_time_per_call` (back-to-back calls, host clock).
    Records: call, library, backend, output ('out=' or 'new'), threads (PyTorch CPU
    threads; None on a GPU), role, seconds (median over rounds of each round's
    median seconds per call), min_seconds and max_seconds (over rounds),
    round_seconds (each round's), rounds.
    """
    if rounds is None:
        rounds = 3 if config.quick_mode() else 9
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    import functools
    a, b, out, _ = _arrays("numpy", 1, "float32")
    add = _op("numpy", "add")
    variants = [dict(call="numpy.add(a, b, out=out)", library="numpy", backend="cpu", output="out=",
                     threads=1, role="chapter 3", fn=lambda: add(a, b, out))]
    usable, skipped = available_libraries(("torch",))
    if usable:
        import torch
        ta, tb, tout, where = _arrays("torch", 1, "float32")
        tadd = _op("torch", "add")
        cpu = where == "cpu"
        default = torch.get_num_threads()
        variants.append(dict(call="torch.add(a, b, out=out)", library="torch", backend=where, output="out=",
                             threads=1 if cpu else None, role="chapter 3", fn=lambda: tadd(ta, tb, tout)))
        if cpu:
            variants.append(dict(call="torch.add(a, b)", library="torch", backend=where, output="new",
                                 threads=1, role="", fn=functools.partial(torch.add, ta, tb)))
        variants.append(dict(call="torch.add(a, b)", library="torch", backend=where, output="new",
                             threads=default if cpu else None, role="chapter 7",
                             fn=functools.partial(torch.add, ta, tb)))

    def measure(round_):
        rows = []
        for i, v in enumerate(variants):
            threads = v["threads"] if v["library"] == "torch" and v["backend"] == "cpu" else None
            with limit_torch_threads(threads):
                t = wall_time_per_call(v["fn"], v["backend"], v["library"], budget)
            rows.append({"variant": i, "round": round_, "seconds": t["seconds"]})
        return rows

    raw = run_sweep("call_overhead", range(rounds), measure, progress=progress, quick=config.quick_mode(),
                    command=f"brrr.experiments.call_overhead(rounds={rounds})")
    for lib, why in skipped.items():
        raw.meta["notes"].append(f"{lib} skipped: {why}")
    records = []
    for i, v in enumerate(variants):
        times = [r["seconds"] for r in raw.records if r["variant"] == i]
        records.append({k: v[k] for k in ("call", "library", "backend", "output", "threads", "role")}
                       | {"size": 1, "dtype": "float32", "seconds": float(np.median(times)),
                          "min_seconds": min(times), "max_seconds": max(times),
                          "round_seconds": times, "rounds": len(times)})
    return Result("call_overhead", records=records, meta=raw.meta)


def call_table(result: Result):
    """A :func:`call_overhead` result as a table: the call, where it ran, PyTorch's CPU threads,
    the median time per call and the fastest and slowest round (seconds), and whose call it is."""
    import pandas as pd
    return pd.DataFrame([{"call": r["call"], "runs on": "CPU" if r["backend"] == "cpu" else "GPU",
                          "PyTorch threads": r["threads"] if r["library"] == "torch" else None,
                          "time per call (median)": r["seconds"], "fastest round": r["min_seconds"],
                          "slowest round": r["max_seconds"],
                          "used by": {"chapter 3": "this chapter", "chapter 7": "Chapter 7's profiler"}.get(r["role"])}
                         for r in result.records])


# --- Python operations per second ----------------------------------------------------

PYTHON_OPS = {
    "integer add (a + b)": ("a + b", "a = 12345; b = 678"),
    "float multiply (x * y)": ("x * y", "x = 1.5; y = 2.5"),
    "attribute read (o.real)": ("o.real", "o = 3.0"),
    "function call (f())": ("f()", "def f(): return None"),
    "list index (s[3])": ("s[3]", "s = [0, 1, 2, 3, 4]"),
}


def python_ops_per_second(number: Optional[int] = None, repeat: int = 5) -> Result:
    """How many trivial Python operations this interpreter runs per second.

    Each statement in :data:`PYTHON_OPS` is timed with :mod:`timeit` (best of
    ``repeat`` runs of ``number`` executions; the loop itself is included, as it
    is in any real Python loop). Records: op, statement, seconds_per_op,
    ops_per_second and ``flops_meanwhile``: how many FLOPs the live device's
    best matmul peak (FP16 tensor cores on a GPU; FP32 on the CPU) could do in
    the time of one Python op.
    """
    if number is None:
        number = 200_000 if config.quick_mode() else 2_000_000
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise ValueError(f"number must be a positive integer, got {number!r}")
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be a positive integer, got {repeat!r}")
    dev = _live_device()
    # The best matmul rate the device has (FP16 tensor cores on a GPU, measured FP32 on the CPU).
    peak_fp16 = dev.peak_flops("float16", tensor_cores=True)
    result = Result("python_ops_per_second",
                    meta=provenance(f"brrr.experiments.python_ops_per_second(number={number})",
                                    peak_flops=peak_fp16, notes=[]))
    for label, (stmt, setup) in PYTHON_OPS.items():
        best = min(timeit.repeat(stmt, setup=setup, number=number, repeat=repeat)) / number
        result.records.append({"op": label, "statement": stmt, "seconds_per_op": best,
                               "ops_per_second": 1.0 / best,
                               "flops_meanwhile": best * peak_fp16, "backend": dev.backend})
    return result


# --- asynchronous execution -------------------------------------------------------------

ASYNC_N = {"cuda": 4096, "cpu": 512}   # async_demo's matrix size n per backend (halved in quick mode)


def async_demo(library: Optional[str] = None, n: Optional[int] = None, calls: int = 10) -> Result:
    """Show when a call returns versus when its work is done.

    ``calls`` matrix multiplications of ``n x n`` float32 matrices are issued in a
    loop. Records hold, for each library: ``returned`` (seconds until the loop
    of calls returned to Python) and ``finished`` (seconds until the device said
    the work was done, after a synchronise). On a GPU ``returned`` is far
    smaller: the CPU ran ahead and queued the work. On the CPU both are the same,
    because the call only returns once the work is done.
    """
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
        raise ValueError(f"calls must be a positive integer, got {calls!r}")
    dev = _live_device()
    if n is None:
        n = (ASYNC_N["cuda"] if dev.backend == "cuda" else ASYNC_N["cpu"]) // (2 if config.quick_mode() else 1)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if library is None:
        library = ("cupy" if dev.array_library == "cupy" else "torch") if dev.backend == "cuda" else "numpy"
    usable, skipped = available_libraries((library,))
    if not usable:
        raise RuntimeError(f"library {library!r} cannot run here: {skipped[library]}")
    a, b, out, backend = _arrays(library, n * n, "float32")
    a, b, out = a.reshape(n, n), b.reshape(n, n), out.reshape(n, n)
    matmul = (lambda: np.matmul(a, b, out=out)) if library == "numpy" else (lambda: a @ b)
    sync = _synchronizer(backend, library)
    matmul()
    sync()
    rows = []
    for trial in range(3):
        start = time.perf_counter()
        for _ in range(calls):
            matmul()
        returned = time.perf_counter() - start
        sync()
        finished = time.perf_counter() - start
        rows.append((returned, finished))
    returned, finished = sorted(rows, key=lambda r: r[1])[len(rows) // 2]
    flops = 2.0 * n ** 3 * calls
    result = Result("async_demo", meta=provenance(
        f"brrr.experiments.async_demo({library!r}, n={n}, calls={calls})", notes=[],
        quick=config.quick_mode()))
    result.records = [
        {"library": library, "backend": backend, "stage": "returned", "seconds": returned,
         "n": n, "calls": calls, "flops": flops},
        {"library": library, "backend": backend, "stage": "finished", "seconds": finished,
         "n": n, "calls": calls, "flops": flops},
    ]
    return result


# --- double the batch -------------------------------------------------------------------

def double_the_batch(fn_factory: Callable[[int], Callable[[], object]], sizes: Sequence[int],
                     backend: Optional[str] = None, library: str = "torch", budget: float = 0.2,
                     torch_threads: Optional[int] = 1, statistic: str = "min",
                     progress: bool = True) -> Result:
    """Time ``fn_factory(size)()`` for each size; report how the time grows as the size doubles.

    ``fn_factory(size)`` returns a no-argument callable that does the work for a
    batch of ``size``. Records: size, seconds (wall-clock per call: the fastest
    sample with ``statistic='min'``, the default, since other processes can only
    add time and the ratios below are sensitive to that; or the median),
    median_seconds, min_seconds,
    ``time_ratio`` (this time / previous size's time) and ``size_ratio``. When
    doubling the batch barely changes the time (``time_ratio`` near 1) the call
    is overhead-bound: the extra work was free. Near 2, the work dominates.
    ``torch_threads`` sets PyTorch's CPU threads while timing (default 1, see
    :func:`limit_torch_threads`; ``None`` keeps PyTorch's default).
    """
    if not callable(fn_factory):
        raise TypeError(f"fn_factory must be callable (size -> callable), got {type(fn_factory).__name__}")
    sizes = _check_sizes(sizes)
    if any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise ValueError(f"sizes must be strictly increasing, got {sizes!r}")
    backend = backend or _live_device().backend
    if backend not in ("cpu", "cuda"):
        raise ValueError(f"backend must be 'cpu' or 'cuda', got {backend!r}")
    if statistic not in ("min", "median"):
        raise ValueError(f"statistic must be 'min' or 'median', got {statistic!r}")

    def measure(size):
        fn = fn_factory(size)
        if not callable(fn):
            raise TypeError(f"fn_factory({size}) must return a callable, got {type(fn).__name__}")
        rec = wall_time_per_call(fn, backend, library, budget)
        rec["median_seconds"] = rec["seconds"]
        if statistic == "min":
            rec["seconds"] = rec["min_seconds"]
        return {"size": size, "backend": backend, "statistic": statistic, **rec}

    with limit_torch_threads(torch_threads):
        result = run_sweep("double_the_batch", sizes, measure, progress=progress,
                           torch_threads=torch_threads, quick=config.quick_mode(),
                           workload=getattr(fn_factory, "description", None),
                           command="brrr.experiments.double_the_batch(fn_factory, sizes)")
    previous = None
    for rec in result.records:
        rec["time_ratio"] = rec["seconds"] / previous["seconds"] if previous else None
        rec["size_ratio"] = rec["size"] / previous["size"] if previous else None
        previous = rec
    return result


def batch_verdict(time_ratio: float, size_ratio: float = 2.0) -> str:
    """Plain words for one step of :func:`double_the_batch`.

    The work grew by ``size_ratio``; if the time grew by less than a third of
    that growth the step is 'overhead-bound', by more than two thirds
    'work-bound' (compute or memory), else 'in between'.
    """
    if not time_ratio > 0 or not size_ratio > 1:
        raise ValueError(f"need time_ratio > 0 and size_ratio > 1, got {time_ratio!r}, {size_ratio!r}")
    growth = (time_ratio - 1) / (size_ratio - 1)
    if growth < 1 / 3:
        return "overhead-bound"
    if growth > 2 / 3:
        return "work-bound"
    return "in between"


def batch_table(result: Result):
    """A :func:`double_the_batch` result as a table: batch size, time per forward pass and per
    sample (seconds), the time ratio to the previous batch, and :func:`batch_verdict`."""
    import pandas as pd
    rows = []
    for r in result.records:
        ratio, size_ratio = r.get("time_ratio"), r.get("size_ratio")
        rows.append({"batch size": r["size"], "time per call": r["seconds"],
                     "time per sample": r["seconds"] / r["size"],
                     "time ratio to previous": ratio,
                     "verdict": batch_verdict(ratio, size_ratio) if ratio and size_ratio else None})
    return pd.DataFrame(rows)


def mlp_factory(width: int = 256, depth: int = 4, device: Optional[str] = None) -> Callable:
    """A factory for :func:`double_the_batch`: ``depth`` Linear+ReLU layers of ``width``.

    ``factory(batch)`` returns a callable running one forward pass (no grad) on a
    ``batch x width`` float32 input, on the GPU when PyTorch has one.
    """
    import torch
    for name, value in (("width", width), ("depth", depth)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    device = device or _torch_device()
    torch.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).to(device).eval()

    def factory(batch: int):
        x = torch.randn(batch, width, device=device)

        def forward():
            with torch.no_grad():
                return model(x)
        return forward
    factory.description = (f"an MLP of {depth} Linear({width}, {width}) + ReLU layers "
                           f"({2 * depth} operations), float32, forward pass without autograd, on {device}")
    factory.layers = depth
    return factory


# --- CUDA graphs and torch.compile ------------------------------------------------------------

def reduce_overhead_demo(size: int = 1024, n_ops: int = 20, compile: bool = True,
                         budget: float = 0.2) -> Result:
    """A chain of ``n_ops`` tiny pointwise PyTorch ops: eager vs CUDA graph vs torch.compile.

    Records: variant ('eager', 'CUDA graph', 'torch.compile reduce-overhead'),
    seconds (wall-clock per call of the whole chain), size, n_ops. Needs a CUDA
    GPU: without one the result has no records and a note saying why (CUDA
    graphs replay GPU work; ``mode="reduce-overhead"`` is built on them).
    """
    for name, value in (("size", size), ("n_ops", n_ops)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    result = Result("reduce_overhead_demo", meta=provenance(
        f"brrr.experiments.reduce_overhead_demo(size={size}, n_ops={n_ops}, compile={compile})", notes=[],
        size=size, n_ops=n_ops, compile=compile, quick=config.quick_mode()))
    try:
        import torch
        has_cuda = torch.cuda.is_available()
    except ImportError:
        has_cuda = False
    if not has_cuda:
        result.meta["notes"].append("skipped: CUDA graphs and mode='reduce-overhead' need a CUDA GPU "
                                    "(PyTorch found none), so there is nothing to compare on this machine")
        return result

    def chain(x):
        for i in range(n_ops):
            x = x * 1.0001 if i % 2 == 0 else x + 0.0001
        return x

    x = torch.rand(size, device="cuda")
    variants = {"eager": lambda: chain(x)}

    static_in = x.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            chain(static_in)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = chain(static_in)  # noqa: F841 - kept alive by the graph
    variants["CUDA graph"] = graph.replay

    if compile:
        try:
            compiled = torch.compile(chain, mode="reduce-overhead")
            for _ in range(3):
                compiled(x)
            variants["torch.compile reduce-overhead"] = lambda: compiled(x)
        except Exception as error:  # noqa: BLE001 - a compiler missing is a note, not a failure
            result.meta["notes"].append(f"torch.compile skipped: {type(error).__name__}: {error}")

    for variant, fn in variants.items():
        rec = wall_time_per_call(fn, "cuda", "torch", budget)
        result.records.append({"variant": variant, "size": size, "n_ops": n_ops, "backend": "cuda", **rec})
    return result
