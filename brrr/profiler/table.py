"""``profile(model, *inputs)``: one row per ATen operator, its costs counted and its time measured.

Each recorded call (:mod:`.capture`) gets its FLOPs and bytes (:mod:`.counting`), the
roofline time and regime on the live device (:mod:`.regimes`), and, unless
``measure=False``, the median time of its replay by :func:`brrr.bench`. The columns
follow the record schema of :mod:`brrr.results` (``seconds``, ``nbytes``, ``flops``).
"""
from __future__ import annotations

import math
from typing import Optional

from .capture import _bench_kwargs, _Call, _left_as_found, _loss, _replayable, _run, _signature
from .counting import _ALLOCATE_ONLY, _name, _tensors, categorise, count_bytes, count_flops
from .regimes import _roofline_for, chapter3_call, dispatch_overhead, regime_of, replay_floor

COLUMNS = ["op", "phase", "module", "category", "input_shapes", "dtype", "flops", "nbytes",
           "intensity", "seconds", "roofline_seconds", "efficiency", "regime", "calls"]


def _dtype(call: _Call) -> str:
    tensors = _tensors((call.args, call.kwargs)) or _tensors(call.out)
    for t in tensors:
        if t.is_floating_point():
            return str(t.dtype).replace("torch.", "")
    return str(tensors[0].dtype).replace("torch.", "") if tensors else "none"


# --- the table -----------------------------------------------------------------------

def _check(model, inputs):
    import torch
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    for name, t in [*model.named_parameters(), *model.named_buffers()]:
        if t.is_meta:
            raise ValueError(f"model must hold data on a real device (cpu, cuda), but it is on the "
                             f"'meta' device (its tensor {name!r}), which holds shapes only: "
                             "initialise or load the weights on a real device first")
    if not inputs:
        raise ValueError("profile(model, *inputs) needs at least one input tensor")
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"inputs must be torch.Tensor objects; input {i} is {type(x).__name__}")
        if x.is_meta:
            raise ValueError(f"inputs must hold data on a real device (cpu, cuda), but input {i} "
                             "is on the 'meta' device, which holds shapes only")


def _shapes(inputs) -> str:
    return ", ".join(str(tuple(x.shape)) for x in inputs)


def profile(model, *inputs, backward: bool = False, repeats: Optional[int] = None,
            cache: str = "flush", budget: float = 0.1, views: bool = False, measure: bool = True,
            merge: bool = False):
    """Profile ``model(*inputs)`` operator by operator; returns a pandas DataFrame.

    Parameters
    ----------
    model : a ``torch.nn.Module``; it runs as it is (train or eval mode, its device),
        and is left as it was found, even if it fails: parameter and buffer values
        (BatchNorm statistics), gradients, ``requires_grad`` flags, train/eval modes
        and the random number generators are put back (:func:`_left_as_found`).
    inputs : the tensors to call it with (not on the 'meta' device).
    backward : also run ``out.sum().backward()`` and add the backward ops
        (``phase`` column: 'forward', 'loss' or 'backward').
    repeats : samples per op (None: as many as ``budget`` allows).
    cache : 'flush' (default) empties the last-level cache / L2 before every sample,
        so each op reads its inputs from DRAM, which is what the roofline's memory
        roof assumes; 'hot' leaves them cached (closer to a small model running
        op after op, but then a memory-bound op can beat the DRAM roof).
    budget : seconds of measuring per distinct op (a fifth in quick mode).
    views : keep the ops that move no data (views such as ``transpose``, and bare
        allocations such as ``empty_like``; pure dispatch overhead) as rows.
    measure : False skips all timing (FLOPs and bytes only, fast).
    merge : one row per distinct (op, shapes) with a ``calls`` count, summed.

    Columns: op, phase, module, category, input_shapes, dtype, flops, nbytes (bytes
    moved, ideal unfused), intensity (FLOP/byte), seconds (median measured, one call),
    roofline_seconds (max(t_math, t_mem) on this device), efficiency
    (roofline_seconds / seconds), regime ('compute-bound', 'memory-bound',
    'overhead-bound': the largest of t_math, t_mem and the fixed cost of a call, see
    :func:`regime_of`), calls. ``table.attrs`` holds the device, the per-call
    overhead used for the regime (``overhead_seconds``, :func:`dispatch_overhead`),
    ``model_seconds`` (one whole run of the model, back to back on the host's clock, ``model_clock``
    'host'; its IQR in ``model_iqr_seconds``), ``keeps_outputs`` (False: the recorder kept no output,
    so a backward made no copy that an unwatched one does not),
    ``replay_floor_seconds`` (a one-element add replayed like the rows,
    :func:`replay_floor`) and ``chapter3_call_seconds`` (:func:`chapter3_call`).
    """
    import pandas as pd
    from ..device import device as live
    from ..timing import bench
    _check(model, inputs)
    if not isinstance(backward, bool):
        raise TypeError(f"backward must be True or False, got {backward!r}")
    if cache not in ("flush", "hot"):
        raise ValueError(f"cache must be 'flush' or 'hot', got {cache!r}")
    for flag, value in (("views", views), ("measure", measure), ("merge", merge)):
        if not isinstance(value, bool):
            raise TypeError(f"{flag} must be True or False, got {value!r}")
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) \
            or not (budget > 0 and math.isfinite(budget)):
        raise ValueError(f"budget must be a positive number of seconds, got {budget!r}")
    bench_kw = _bench_kwargs(repeats, budget, cache, None)

    calls: list = []
    try:
        with _left_as_found(model):
            try:
                _run(model, inputs, backward, calls)
            except Exception as exc:  # noqa: BLE001 - re-raised with the shapes that caused it
                if isinstance(exc, ValueError) and "backward=True" in str(exc):
                    raise
                raise ValueError(f"the model ({type(model).__name__}) failed on inputs of shape "
                                 f"{_shapes(inputs)}: {type(exc).__name__}: {exc}") from exc

            dev = live()
            roofs: dict = {}
            overhead = dispatch_overhead(dev) if measure else None
            timed: dict = {}
            rows = []
            for call in calls:
                if (call.is_view or _name(call.func) in _ALLOCATE_ONLY) and not views:
                    continue
                if call.is_view:  # a new header on the same memory: no FLOPs, no bytes
                    flops = nbytes = 0
                else:
                    flops = count_flops(call.func, call.args, call.kwargs, call.out)
                    nbytes = count_bytes(call.func, call.args, call.kwargs, call.out)
                category = categorise(call.func)
                dtype = _dtype(call)
                roof = _roofline_for(dev, dtype, category, roofs, _name(call.func))
                seconds = math.nan
                if measure:
                    key = _signature(call)
                    if key not in timed:
                        try:
                            timed[key] = bench(_replayable(call), **bench_kw).median
                        except Exception:  # noqa: BLE001 - an op that cannot be replayed keeps NaN
                            timed[key] = math.nan
                    seconds = timed[key]
                t_roof = float(roof.time(flops, nbytes))
                regime = regime_of(roof, flops, nbytes, overhead)
                efficiency = t_roof / seconds if seconds > 0 else math.nan
                rows.append({
                    "op": str(call.func).replace("aten.", "").replace(".default", ""),
                    "phase": call.phase, "module": call.module, "category": category,
                    "input_shapes": tuple(tuple(t.shape)
                                          for t in _tensors((call.args, call.kwargs))),
                    "dtype": dtype, "flops": flops, "nbytes": nbytes,
                    "intensity": flops / nbytes if nbytes else math.nan,
                    "seconds": seconds, "roofline_seconds": t_roof, "efficiency": efficiency,
                    "regime": regime, "calls": 1})
            table = pd.DataFrame(rows, columns=COLUMNS)
            if merge and len(table):
                table = _merge(table)
            table.attrs.update({"device": dev.name, "backend": dev.backend,
                                "overhead_seconds": overhead, "cache": cache, "backward": backward,
                                "model_seconds": math.nan, "model_iqr_seconds": math.nan,
                                "replay_floor_seconds": math.nan,
                                "chapter3_call_seconds": math.nan, "summary": dev.summary(),
                                "keeps_outputs": False})
            if measure:
                whole = _time_model(model, inputs, backward, bench_kw, dev.backend)
                table.attrs["model_seconds"], table.attrs["model_iqr_seconds"] = whole["seconds"], whole["iqr_seconds"]
                table.attrs["model_clock"] = "host"
                table.attrs["replay_floor_seconds"] = replay_floor(bench_kw, dev)
                table.attrs["chapter3_call_seconds"] = chapter3_call(dev)
    finally:
        calls.clear()   # the recorded tensors: freed now, even while a traceback holds this frame
    return table


def _time_model(model, inputs, backward, bench_kw, backend: str) -> dict:
    """One whole forward (+ backward) pass timed as a user's loop runs it: back to back on the host's
    clock, a block of calls then one synchronisation (:func:`brrr.experiments.wallclock.wall_time_per_call`),
    so on a GPU it is the larger of the host's cost to issue the pass and the GPU's to run it. (CUDA events
    around one call after a cache flush, the method before, time a host-bound pass as its issue time less
    the flush's.) Returns the per-call ``seconds`` and ``iqr_seconds``. It changes the model's state:
    :func:`profile` calls it inside :func:`_left_as_found`."""
    import torch
    from ..experiments.wallclock import wall_time_per_call

    def step():
        with torch.set_grad_enabled(backward):
            out = model(*inputs)
            if backward:
                _loss(out).backward()
                for p in model.parameters():
                    p.grad = None
    return wall_time_per_call(step, backend, budget=max(bench_kw["budget"], 0.2))


def _merge(table):
    """One row per distinct (op, phase, module, category, shapes, dtype): costs, times and
    calls summed; intensity and efficiency of the sums."""
    keys = ["op", "phase", "module", "category", "input_shapes", "dtype"]
    merged = table.groupby(keys, sort=False, dropna=False).agg(
        flops=("flops", "sum"), nbytes=("nbytes", "sum"), seconds=("seconds", "sum"),
        roofline_seconds=("roofline_seconds", "sum"), calls=("calls", "sum"),
        regime=("regime", "first")).reset_index()
    merged["intensity"] = merged.flops / merged["nbytes"].where(merged["nbytes"] > 0)
    merged["efficiency"] = merged.roofline_seconds / merged.seconds
    return merged[COLUMNS]

