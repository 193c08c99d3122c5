"""The price of one call: a minimal library call timed several ways, and Python's own operations.

* :func:`call_overhead`: one-element ``add`` in NumPy and PyTorch, interleaved over rounds,
  the calls Chapter 3's fixed cost and Chapter 7's profiler time, side by side.
* :func:`python_ops_per_second`: how many trivial Python operations this interpreter runs
  per second, and how many FLOPs the device could do meanwhile.

Times are seconds.
"""
from __future__ import annotations

import functools
import timeit
from typing import Optional

import numpy as np

from .. import config
from ..device import device as live_device, provenance
from ..hardware import cpu_name
from ..results import Result, needs_measurements
from .common import run_sweep
from .wallclock import available_libraries, elementwise, limit_torch_threads, operands, wall_time_per_call


def call_overhead(rounds: Optional[int] = None, budget: float = 0.03, progress: bool = True) -> Result:
    """The cost of one minimal call, timed several ways, on one-element float32 arrays.

    Chapter 3's fixed cost (:func:`brrr.experiments.fit_overhead` on
    :func:`brrr.experiments.time_vs_size`) and the per-call overhead of Chapter 7's profiler
    (:func:`brrr.profiler.dispatch_overhead`) time different calls. This times them side by
    side, interleaved over ``rounds`` rounds so that a change in the machine's load touches
    every variant alike:

    * ``numpy.add(a, b, out=out)``: NumPy's call in ``time_vs_size``;
    * ``torch.add(a, b, out=out)`` with one PyTorch CPU thread: PyTorch's call there
      (role 'chapter 3');
    * ``torch.add(a, b)``, a new output each call, one thread (CPU only);
    * ``torch.add(a, b)`` at PyTorch's default thread count: the call
      ``dispatch_overhead`` times (role 'chapter 7').

    Each is timed by :func:`brrr.experiments.wallclock.wall_time_per_call` (back-to-back
    calls, host clock). Records: call, library, backend, output ('out=' or 'new'), threads
    (PyTorch CPU threads; None on a GPU), role, seconds (median over rounds of each round's
    median seconds per call), min_seconds and max_seconds (over rounds), round_seconds
    (each round's), rounds.
    """
    if rounds is None:
        rounds = 3 if config.quick_mode() else 9
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    a, b, out, _ = operands("numpy", 1, "float32")
    add = elementwise("numpy", "add")
    variants = [dict(call="numpy.add(a, b, out=out)", library="numpy", backend="cpu", output="out=",
                     threads=1, role="chapter 3", fn=lambda: add(a, b, out))]
    usable, skipped = available_libraries(("torch",))
    if usable:
        import torch
        ta, tb, tout, where = operands("torch", 1, "float32")
        tadd = elementwise("torch", "add")
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
                t = wall_time_per_call(v["fn"], v["backend"], budget=budget)
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


@needs_measurements
def call_table(result: Result):
    """A :func:`call_overhead` result as a table: the call, where it ran, PyTorch's CPU threads,
    the median time per call and the fastest and slowest round (seconds), and whose call it is."""
    import pandas as pd
    frame = pd.DataFrame([{"call": r["call"], "runs on": "CPU" if r["backend"] == "cpu" else "GPU",
                          "PyTorch threads": r["threads"] if r["library"] == "torch" and r["backend"] == "cpu"
                          else None,
                          "time per call (median)": r["seconds"], "fastest round": r["min_seconds"],
                          "slowest round": r["max_seconds"],
                          "used by": {"chapter 3": "this chapter", "chapter 7": "Chapter 7's profiler"}.get(r["role"])}
                         for r in result.records])
    # PyTorch's CPU threads play no part in a call whose arithmetic runs on the GPU: no column of dashes
    return frame.drop(columns="PyTorch threads") if frame["PyTorch threads"].isna().all() else frame


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
    the time of one Python op. ``meta['host_cpu']``: the CPU that ran them (on a GPU machine, its host).
    """
    if number is None:
        number = 100_000 if config.quick_mode() else 500_000
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise ValueError(f"number must be a positive integer, got {number!r}")
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be a positive integer, got {repeat!r}")
    dev = live_device()
    # The best matmul rate the device has (FP16 tensor cores on a GPU, measured FP32 on the CPU).
    peak_fp16 = dev.peak_flops("float16", tensor_cores=True)
    result = Result("python_ops_per_second",
                    meta=provenance(f"brrr.experiments.python_ops_per_second(number={number})",
                                    peak_flops=peak_fp16, host_cpu=cpu_name(), notes=[]))
    for label, (stmt, setup) in PYTHON_OPS.items():
        best = min(timeit.repeat(stmt, setup=setup, number=number, repeat=repeat)) / number
        result.records.append({"op": label, "statement": stmt, "seconds_per_op": best,
                               "ops_per_second": 1.0 / best,
                               "flops_meanwhile": best * peak_fp16, "backend": dev.backend})
    return result
