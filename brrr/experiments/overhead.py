"""Overhead: the cost of a call that is neither math nor memory traffic.

Every operation pays a fixed price before any work starts: the Python
interpreter, the library's dispatch, and on a GPU the kernel launch. For small
tensors that price is the whole runtime. The experiments make it visible:

* :func:`time_vs_size` (here): seconds per call of one elementwise op from 1 element
  up, for NumPy, PyTorch and CuPy (flat while overhead-bound, then linear);
  :func:`fit_overhead`: the fixed cost and the cost per element from that sweep.
* :mod:`.overhead_calls`: one minimal call timed several ways (:func:`call_overhead`),
  and how many trivial Python operations run per second (:func:`python_ops_per_second`).
* :mod:`.overhead_batch`: double the batch; if the time barely moves, you are
  overhead-bound (:func:`double_the_batch`).
* :mod:`.overhead_async`: on a GPU the call returns before the work is done
  (:func:`async_demo`); eager vs CUDA graph vs ``torch.compile(mode="reduce-overhead")``
  (:func:`reduce_overhead_demo`, GPU only).
* :mod:`.wallclock`: the clock they share, :func:`wall_time_per_call`.

Every name is importable from here. All times are seconds; sizes are numbers of elements.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from .. import config
from ..results import Result
from ._arrays import check_sizes
from .common import run_sweep
from .wallclock import (LIBRARIES, available_libraries, elementwise, limit_torch_threads, operands,
                        wall_time_per_call)
from .overhead_calls import PYTHON_OPS, call_overhead, call_table, python_ops_per_second
from .overhead_batch import (FELL, batch_peaks, batch_table, batch_verdict, batch_where_work_is, double_the_batch,
                             largest_fall, mlp_factory, mlp_work, worked_batch)
from .overhead_async import ASYNC_N, async_demo, reduce_overhead_demo

__all__ = ["LIBRARIES", "OPS", "FIXED_COST_SIZES", "PER_ELEMENT_SIZES", "PYTHON_OPS", "ASYNC_N",
           "available_libraries", "limit_torch_threads", "wall_time_per_call", "default_sizes",
           "time_vs_size", "fit_overhead", "fit_overheads", "crossover_tests", "fit_table", "call_of",
           "call_overhead", "call_table", "python_ops_per_second", "async_demo", "reduce_overhead_demo",
           "double_the_batch", "batch_verdict", "batch_table", "mlp_factory", "mlp_work", "batch_where_work_is",
           "batch_peaks", "largest_fall", "nearest", "FELL", "worked_batch", "crossover_elements", "add_seconds"]

OPS = ("add", "mul", "cos")
FIXED_COST_SIZES = 5    # the fixed cost of a call: median time of the sweep's 5 smallest sizes
PER_ELEMENT_SIZES = 2   # the cost per element: from the 2 first sizes at twice the fixed cost


def default_sizes() -> list:
    """Powers of two from 1 element to 2**26 (2**22 in quick mode)."""
    top = 22 if config.quick_mode() else 26
    step = 2 if config.quick_mode() else 1
    return [2 ** k for k in range(0, top + 1, step)]


def time_vs_size(libraries: Sequence[str] = LIBRARIES, sizes: Optional[Sequence[int]] = None,
                 op: str = "add", dtype: str = "float32", budget: float = 0.1,
                 torch_threads: Optional[int] = 1, progress: bool = True) -> Result:
    """Seconds per call of one elementwise ``op`` ('add', 'mul', 'cos') against size.

    Each library writes into a preallocated output (``out=``), so the time is the
    op and its dispatch, not the allocator. Libraries that cannot run here (CuPy
    without a GPU) are skipped, with the reason in ``meta['notes']``.
    ``torch_threads`` sets PyTorch's CPU threads for the sweep (default 1, like
    NumPy's add; see :func:`limit_torch_threads`); ``None`` keeps PyTorch's default.

    Records: library, backend ('cpu'/'cuda'), op, dtype, size (elements), nbytes
    (bytes the op reads and writes), seconds (median wall-clock per call),
    min_seconds, iqr_seconds, floor_seconds, calls_per_sample.
    """
    if isinstance(libraries, str):
        libraries = (libraries,)
    if op not in OPS:
        raise ValueError(f"op must be one of {OPS}, got {op!r}")
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    sizes = default_sizes() if sizes is None else check_sizes("sizes", sizes)
    usable, skipped = available_libraries(libraries)
    itemsize = np.dtype(dtype).itemsize
    reads = 1 if op == "cos" else 2

    def measure(point):
        library, size = point
        a, b, out, backend = operands(library, size, dtype)
        f = elementwise(library, op)
        rec = wall_time_per_call(lambda: f(a, b, out), backend, budget=budget)
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

    ``overhead`` (seconds), the fixed cost of a call, is the median of the ``seconds`` (each the
    median wall-clock time per call) of the :data:`FIXED_COST_SIZES` smallest sizes, where the
    curve is flat. ``per_element`` (seconds/element) comes from the :data:`PER_ELEMENT_SIZES`
    first sizes whose time reached twice the overhead (``per_element_sizes``), where the work
    has just overtaken the fixed cost, as near the crossover as the sweep's sizes allow: on
    a CPU, where a call returns only once its work is done, their time less the overhead (the two
    add up); on a GPU, where calls back to back overlap the host's cost with the kernels, their
    whole time (a call takes the larger of the two). Where no size reached twice the overhead
    (``doubled`` False), the largest sizes stand in. ``crossover`` (elements) is where the work
    costs as much as the overhead. ``lowest``: ``(size, seconds)`` of the fastest call at a size above the
    fixed cost's (None: no such size; one that undercuts the fixed cost says the conditions changed). Also
    returned: the ``call`` that was timed, the ``fixed_cost_sizes``, PyTorch's ``threads`` during the sweep
    (None: its default), ``backend``.
    """
    rows = sorted((r for r in result.records if r.get("library") == library), key=lambda r: r["size"])
    if len(rows) < 4:
        raise ValueError(f"need at least 4 records for library={library!r}, found {len(rows)}")
    small = rows[:FIXED_COST_SIZES]
    overhead = float(np.median([r["seconds"] for r in small]))
    doubled = [r for r in rows[len(small):] if r["seconds"] >= 2 * overhead][:PER_ELEMENT_SIZES]
    big = doubled if len(doubled) == PER_ELEMENT_SIZES else rows[-PER_ELEMENT_SIZES:]
    hidden = 0.0 if rows[0]["backend"] == "cuda" else overhead    # max(host, GPU) on a GPU; a sum on a CPU
    per_element = float(np.median([max(r["seconds"] - hidden, 0.0) / r["size"] for r in big]))
    crossover = overhead / per_element if per_element > 0 else math.inf
    op = rows[0].get("op", "add")
    on_cpu = rows[0]["backend"] == "cpu"
    return {"library": library, "overhead": overhead, "per_element": per_element,
            "crossover": crossover, "backend": rows[0]["backend"], "doubled": big is doubled,
            "per_element_sizes": [r["size"] for r in big],
            "lowest": min(((r["size"], r["seconds"]) for r in rows[len(small):]), key=lambda p: p[1], default=None),
            "call": call_of(library, op), "fixed_cost_sizes": [r["size"] for r in small],
            "threads": (result.meta.get("torch_threads") if library == "torch" and on_cpu
                        else 1 if on_cpu else None),
            "dtype": rows[0].get("dtype", "float32")}


def fit_overheads(result: Result) -> dict:
    """:func:`fit_overhead` for every library in a ``time_vs_size`` result: ``{library: fit}``,
    in the order the sweep ran them ({} for None: a replayed set without the sweep)."""
    if result is None:
        return {}
    libraries = list(dict.fromkeys(r["library"] for r in result.records))
    return {lib: fit_overhead(result, lib) for lib in libraries}


def crossover_tests(result: Result) -> dict:
    """What each library's ``time_vs_size`` sweep says about how its fixed cost and its work
    combine: ``{library: {backend, fixed, lowest, near, largest}}`` (in the sweep's order; {} for
    None). ``fixed`` and ``lowest``: :func:`fit_overhead`'s overhead (s) and lowest. ``near``:
    ``(size, seconds, work, add, overlap)`` at the
    sweep's size nearest the crossover, its work at the fitted cost per element and the two
    models' times there, ``fixed + work`` and ``max(fixed, work)`` (None where no size reached
    twice the fixed cost). ``largest``: ``(size, seconds)`` of the largest size."""
    out = {}
    for lib, fit in fit_overheads(result).items():
        rows = sorted((r["size"], r["seconds"]) for r in result.records if r["library"] == lib)
        near = None
        if fit["doubled"]:
            n, t = nearest(result, fit["crossover"], lib)
            work = n * fit["per_element"]
            near = (n, t, work, fit["overhead"] + work, max(fit["overhead"], work))
        out[lib] = {"backend": fit["backend"], "fixed": fit["overhead"], "near": near, "largest": rows[-1],
                    "lowest": fit["lowest"]}
    return out


def fit_table(fits: dict):
    """The fits of :func:`fit_overheads` as a table: library, where it ran, fixed cost
    (seconds), the least time of a call at a larger size (seconds: where it is below the fixed cost,
    that fixed cost does not hold at every size), cost per element (seconds) and the crossover
    (elements, to three significant digits, as the chapter's text gives it: a fitted size, not a count)."""
    import pandas as pd
    if not fits:
        return None     # no sweep to fit (a replayed set without it): no table
    return pd.DataFrame([{"library": f["library"], "runs on": "CPU" if f["backend"] == "cpu" else "GPU",
                          "fixed cost per call": f["overhead"],
                          "least time at a larger size": f["lowest"][1] if f["lowest"] else None,
                          "cost per element": f["per_element"],
                          "work = fixed cost at (elements)": (float(f"{f['crossover']:.3g}")
                                                              if math.isfinite(f["crossover"]) else None)}
                         for f in fits.values()])


def call_of(library: str, op: str = "add") -> str:
    """The call :func:`time_vs_size` times for ``library`` and ``op``, as code."""
    if op == "cos":
        return f"{library}.cos(a, out=out)"
    name = {"add": "add", "mul": "mul" if library == "torch" else "multiply"}[op]
    return f"{library}.{name}(a, b, out=out)"


def nearest(result: Result, size: float, library: Optional[str] = None) -> tuple:
    """``(size, seconds)`` of the record of ``result`` (of ``library``, where given) whose size is
    nearest ``size`` (by ratio); None for a None result."""
    if result is None:
        return None
    rows = [(r["size"], r["seconds"]) for r in result.records if library is None or r.get("library") == library]
    return min(rows, key=lambda p: abs(math.log(p[0] / size)))


def crossover_elements(fixed: float, bandwidth: float) -> int:
    """The elements of a float32 add (12 bytes each: two read, one written) whose bytes take ``fixed`` seconds at
    ``bandwidth`` (B/s): where the work catches up with the fixed cost of a call (chapter 3's worked problem 2)."""
    return max(1, round(fixed * bandwidth / 12))


def add_seconds(library: str, elements: int) -> float:
    """Wall-clock seconds per call of one ``add`` of ``elements`` elements with ``library``, calls
    back to back: :func:`time_vs_size` at that one size."""
    return time_vs_size((library,), sizes=[elements], progress=False).records[0]["seconds"]
