"""A real ``torch.profiler`` trace of a model, as plain data: what ran when, on which lane.

:func:`trace` runs ``model(*inputs)`` a few times under ``torch.profiler.profile`` (CPU
activity, and CUDA activity on a GPU), has PyTorch export its Chrome trace JSON, and reads
that file back into a :class:`Trace`: one record per event (its lane, a host thread or a
GPU stream; its name; its start and duration in seconds from the first event; its
category) and the correlation id that ties a kernel launch on the host to the kernel it
started on the GPU. :func:`summary` derives the numbers a timeline shows: per lane, the
time busy against the wall span (the rest is gaps); on a GPU, how long each kernel started
after the launch that issued it (how far the host ran ahead) and how much of the time the
GPU sat idle. Timing is the profiler's own; this module only reads what it wrote (the
reading itself, across the trace formats of PyTorch's versions, is :mod:`.chrome`'s).
"""
from __future__ import annotations

import json
import math
import os
import statistics
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..device import provenance
from ..results import Result
from .capture import _left_as_found, _loss
from .chrome import HOST_WORK, STEP, events_from_chrome

NAME = "profiler_trace"
PERFETTO = "https://ui.perfetto.dev"


# --- what a timeline shows -------------------------------------------------------------------

def _union(intervals) -> float:
    """Total length covered by ``[(start, end)]`` (overlaps counted once)."""
    total, end = 0.0, -math.inf
    for s, e in sorted(intervals):
        if e > end:
            total += e - max(s, end)
            end = e
    return total


def steps_of(records) -> list:
    """The profiled steps' ``(start, end)`` windows (PyTorch's ``ProfilerStep#N`` annotations); one
    window over everything where a trace has none."""
    steps = sorted((r["start_seconds"], r["start_seconds"] + r["seconds"]) for r in records
                   if r["category"] == "annotation" and r["side"] == "host" and r["name"].startswith(STEP))
    if steps:
        return steps
    if not records:
        return []
    return [(min(r["start_seconds"] for r in records), max(r["start_seconds"] + r["seconds"] for r in records))]


def _busy(records, windows) -> dict:
    """Busy time, span and gaps of top-level ``records`` (one lane or a side): the span runs
    from the first to the last event of each step, and steps' gaps between them do not count."""
    by_step: dict = {}
    for r in records:
        i = max([k for k, (s, _) in enumerate(windows) if s <= r["start_seconds"] + 1e-12] or [0])
        by_step.setdefault(i, []).append((r["start_seconds"], r["start_seconds"] + r["seconds"]))
    span = busy = 0.0
    gaps = []
    for spans in by_step.values():
        spans.sort()
        span += max(e for _, e in spans) - spans[0][0]
        busy += _union(spans)
        end = spans[0][1]
        for s, e in spans[1:]:
            if s > end:
                gaps.append(s - end)
            end = max(end, e)
    return {"span": span, "busy": busy, "idle_fraction": 1 - busy / span if span > 0 else 0.0,
            "events": len(records), "median_event": statistics.median(r["seconds"] for r in records) if records
            else 0.0, "gaps": len(gaps), "median_gap": statistics.median(gaps) if gaps else 0.0}


def _top(records, side=None, lane=None) -> list:
    """Top-level work: host operators, launches and runtime calls at depth 0, or GPU events."""
    return [r for r in records if (side is None or r["side"] == side) and (lane is None or r["lane"] == lane)
            and ((r["side"] == "host" and r["category"] in HOST_WORK and r["depth"] == 0)
                 or (r["side"] == "gpu" and r["category"] == "kernel"))]


def summary(result) -> dict:
    """The numbers of a trace (a :class:`Trace` or any Result with its records).

    ``steps``: how many were traced. ``lanes``: per lane, its ``side``, ``span`` (s), ``busy`` (s),
    ``idle_fraction``, ``events`` (top-level ones), ``median_event`` (s), ``gaps`` and ``median_gap``
    (s), spans and gaps counted within steps only. ``host``: the busiest host lane's numbers, its
    ``lane`` name, ``operators`` (top-level operator calls), ``synchronize`` (s, in calls that
    wait for the GPU), ``heaviest`` (the operator name with the most time), its ``heaviest_calls``
    and ``heaviest_share`` of the operators' time, ``rest_median`` (s, the other operators), and the
    operator calls that launched a GPU kernel (``launching``, their ``launching_median``, s) and those that
    launched none (``quiet``, ``quiet_median``: views, transposes, an eval-mode dropout; all of them on a CPU).
    ``gpu``: all GPU lanes together (None without any). ``ahead``: for each launch and the GPU event
    it started, kernel start - launch start in seconds, positive when the host ran ahead (``count``,
    ``median``, ``min``, ``max``; None without any)."""
    records = list(result.records)
    windows = steps_of(records)
    lanes = {}
    for lane in dict.fromkeys(r["lane"] for r in records):
        top = _top(records, lane=lane)
        if top:
            lanes[lane] = {"side": top[0]["side"], **_busy(top, windows)}
    host_lanes = [k for k, v in lanes.items() if v["side"] == "host"]
    host = None
    if host_lanes:
        name = max(host_lanes, key=lambda k: lanes[k]["busy"])
        ops = [r for r in _top(records, lane=name) if r["category"] == "operator"]
        waits = [r["seconds"] for r in _top(records, lane=name) if "synchronize" in r["name"].lower()]
        by_name: dict = {}
        for r in ops:
            by_name.setdefault(r["name"], []).append(r["seconds"])
        heaviest = max(by_name, key=lambda k: sum(by_name[k])) if by_name else None
        rest = [r["seconds"] for r in ops if r["name"] != heaviest]
        launches = [r["start_seconds"] for r in records if r["category"] == "launch" and r["lane"] == name]
        launching = [r["seconds"] for r in ops
                     if any(r["start_seconds"] <= t <= r["start_seconds"] + r["seconds"] for t in launches)]
        quiet = [r["seconds"] for r in ops
                 if not any(r["start_seconds"] <= t <= r["start_seconds"] + r["seconds"] for t in launches)]
        host = {"lane": name, **lanes[name], "operators": len(ops), "synchronize": sum(waits),
                "launching": len(launching), "launching_median": statistics.median(launching) if launching else 0.0,
                "quiet": len(quiet), "quiet_median": statistics.median(quiet) if quiet else 0.0,
                "heaviest": heaviest, "heaviest_calls": len(by_name.get(heaviest, [])),
                "heaviest_share": sum(by_name.get(heaviest, [])) / sum(r["seconds"] for r in ops) if ops else 0.0,
                "rest_median": statistics.median(rest) if rest else 0.0}
    gpu_top = _top(records, side="gpu")
    gpu = {**_busy(gpu_top, windows), "kernels": len(gpu_top)} if gpu_top else None
    starts = {}
    for r in records:
        if r["category"] == "kernel" and r["correlation"] is not None:
            starts.setdefault(r["correlation"], r["start_seconds"])
    ahead = [starts[r["correlation"]] - r["start_seconds"] for r in records
             if r["category"] == "launch" and r["correlation"] in starts]
    return {"steps": len(windows), "lanes": lanes, "host": host, "gpu": gpu,
            "ahead": {"count": len(ahead), "median": statistics.median(ahead), "min": min(ahead),
                      "max": max(ahead)} if ahead else None}


# --- the result ------------------------------------------------------------------------------

@dataclass(repr=False)
class Trace(Result):
    """A profiler trace as records (:func:`events_from_chrome`) and provenance, plus the Chrome trace
    JSON PyTorch wrote (``chrome``), which :meth:`save` writes for https://ui.perfetto.dev."""
    chrome: str = field(default="", compare=False)

    @classmethod
    def of(cls, result: Result) -> "Trace":
        """A saved or reference run of :func:`trace` (a plain Result) as a Trace (without its JSON)."""
        return cls(name=result.name, records=list(result.records), meta=dict(result.meta))

    @property
    def summary(self) -> dict:
        return summary(self)

    def save(self, path: str) -> str:
        """Write the Chrome trace JSON to ``path`` (open it in https://ui.perfetto.dev or
        chrome://tracing); returns the path."""
        if not self.chrome:
            raise ValueError("this Trace has no Chrome trace JSON (it was loaded from records); "
                             "run brrr.profiler.trace(...) again to get one")
        from ..cache import write_text
        write_text(path, self.chrome)
        return path

    def __repr__(self):
        from ..units import format_seconds as sec
        s = self.summary
        dev = (self.meta.get("device") or {}).get("name", "unknown device")
        lines = [f"Trace({self.name!r}: {s['steps']} steps of {self.meta.get('model', 'a model')} on {dev}, "
                 f"{len(self.records)} events on {len(s['lanes'])} lane{'s' * (len(s['lanes']) != 1)})"]
        for lane, v in s["lanes"].items():
            lines.append(f"  {lane}: busy {sec(v['busy'])} of {sec(v['span'])}, "
                         f"{100 * v['idle_fraction']:.0f}% idle in {v['gaps']} gaps")
        if s["ahead"]:
            a = s["ahead"]
            lines.append(f"  launch to kernel start: median {sec(a['median'])}, max {sec(a['max'])} "
                         f"({a['count']} launches)")
        if self.chrome:
            lines.append(f"  .save(path) writes the Chrome trace JSON; open it in {PERFETTO}")
        return "\n".join(lines)


def from_chrome(data, name: str = NAME, meta: dict | None = None) -> Trace:
    """A :class:`Trace` from a Chrome trace (a path, JSON text, or the parsed object)."""
    if isinstance(data, (str, os.PathLike)) and not str(data).lstrip().startswith(("{", "[")):
        with open(data, encoding="utf-8") as f:
            data = f.read()
    text = data if isinstance(data, str) else json.dumps(data)
    return Trace(name=name, records=events_from_chrome(text), meta=dict(meta or {}), chrome=text)


# --- capturing -------------------------------------------------------------------------------

@contextmanager
def _without_profiler_chatter():
    """Hold back the lines PyTorch's profiler prints straight to file descriptor 2 at every start and
    stop ('STAGE:... Completed Stage', 'USDT:... profiler_start'), which a notebook would show; every
    other line written there in the meantime is passed on."""
    import sys
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield
        return
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            rest = [line for line in held.read().decode(errors="replace").splitlines(keepends=True)
                    if not line.startswith(("STAGE:", "USDT:"))]
            if rest:
                sys.stderr.write("".join(rest))

def _check_count(name, value, least):
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name} must be an integer of at least {least}, got {value!r}")


def trace(model, *inputs, steps: int = 3, warmup: int = 1, backward: bool = False, torch_threads=1,
          device=None, name: str = NAME) -> Trace:
    """Run ``model(*inputs)`` ``steps`` times under ``torch.profiler`` and return the :class:`Trace`.

    Parameters
    ----------
    model : a ``torch.nn.Module``, run as it is (its train/eval mode, its device) and left as it
        was found (parameters, buffers, gradients, modes, random state: see ``_left_as_found``).
    inputs : its input tensors.
    steps : calls recorded, each one step of the trace (``ProfilerStep#N``).
    warmup : calls the profiler runs but does not record, after one plain call to warm caches.
    backward : also run ``out.sum().backward()`` in each step (else the forward runs under
        ``torch.no_grad()``).
    torch_threads : PyTorch's CPU threads while tracing (1: no thread-pool stalls on a busy
        machine; None: PyTorch's default).
    device : a :class:`brrr.Device` (default :func:`brrr.device`); on a GPU the CUDA activity is
        recorded too and every step ends by waiting for the GPU, as a step that reads its loss would.
    """
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule
    from ..device import device as live
    from ..experiments.wallclock import limit_torch_threads
    from .table import _check
    _check(model, inputs)
    _check_count("steps", steps, 1)
    _check_count("warmup", warmup, 0)
    if not isinstance(backward, bool):
        raise TypeError(f"backward must be True or False, got {backward!r}")
    dev = device or live()
    activities = [ProfilerActivity.CPU]
    if dev.on_gpu and dev.torch_device == "cuda":
        activities.append(ProfilerActivity.CUDA)

    def step():
        with torch.set_grad_enabled(backward):
            out = model(*inputs)
        if backward:
            _loss(out).backward()
        dev.synchronize()

    with tempfile.TemporaryDirectory() as folder, _left_as_found(model), limit_torch_threads(torch_threads):
        path = os.path.join(folder, "trace.json")
        step()   # first-call costs (allocations, lazy initialisation) stay out of the trace
        plan = schedule(wait=0, warmup=warmup, active=steps, repeat=1)
        with _without_profiler_chatter(), profile(activities=activities, schedule=plan,
                                                  on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
            for _ in range(warmup + steps):
                step()
                prof.step()
        with open(path, encoding="utf-8") as f:
            text = f.read()
    meta = provenance(f"brrr.profiler.trace({type(model).__name__}, steps={steps})",
                      model=type(model).__name__, steps=steps, warmup=warmup, backward=backward,
                      torch_threads=torch_threads, device=dev.summary(), shapes=[list(x.shape) for x in inputs],
                      notes=["times are torch.profiler's; its own bookkeeping adds a little to every event"])
    return from_chrome(text, name=name, meta=meta)
