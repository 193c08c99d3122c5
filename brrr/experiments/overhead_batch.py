"""Double the batch: if the time per call barely moves, the call is overhead-bound.

:func:`double_the_batch` times a workload at growing batch sizes (wall-clock seconds per
call, :func:`brrr.experiments.wallclock.wall_time_per_call`); :func:`batch_verdict` puts
each doubling in words; :func:`mlp_factory` is the chapter's workload, a small MLP.
"""
from __future__ import annotations

import os
from typing import Callable, Optional, Sequence

from .. import config
from ..device import device as live_device
from ..results import Result
from ._arrays import check_sizes
from .common import run_sweep
from .wallclock import limit_torch_threads, wall_time_per_call
from ..results import needs_measurements


def double_the_batch(fn_factory: Callable[[int], Callable[[], object]], sizes: Sequence[int],
                     backend: Optional[str] = None, budget: float = 0.2,
                     torch_threads: Optional[int] = 1, statistic: str = "min",
                     progress: bool = True) -> Result:
    """Time ``fn_factory(size)()`` for each size; report how the time grows as the size doubles.

    ``fn_factory(size)`` returns a no-argument callable that does the work for a
    batch of ``size``; ``backend`` is where that work runs ('cpu' or 'cuda'; default:
    the live device). Records: size, backend, seconds (wall-clock per call: the fastest
    sample with ``statistic='min'``, the default, since other processes can only
    add time and the ratios below are sensitive to that; or the median),
    median_seconds, min_seconds, iqr_seconds, floor_seconds,
    ``time_ratio`` (this time / previous size's time) and ``size_ratio``. When
    doubling the batch barely changes the time (``time_ratio`` near 1) the call
    is overhead-bound: the extra work was free. Near 2, the work dominates.
    ``torch_threads`` sets PyTorch's CPU threads while timing (default 1, see
    :func:`limit_torch_threads`; ``None`` keeps PyTorch's default).
    """
    if not callable(fn_factory):
        raise TypeError(f"fn_factory must be callable (size -> callable), got {type(fn_factory).__name__}")
    sizes = check_sizes("sizes", sizes)
    if any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise ValueError(f"sizes must be strictly increasing, got {sizes!r}")
    backend = backend or live_device().backend
    if backend not in ("cpu", "cuda"):
        raise ValueError(f"backend must be 'cpu' or 'cuda', got {backend!r}")
    if statistic not in ("min", "median"):
        raise ValueError(f"statistic must be 'min' or 'median', got {statistic!r}")

    def measure(size):
        fn = fn_factory(size)
        if not callable(fn):
            raise TypeError(f"fn_factory({size}) must return a callable, got {type(fn).__name__}")
        rec = wall_time_per_call(fn, backend, budget=budget)
        rec["median_seconds"] = rec["seconds"]
        if statistic == "min":
            rec["seconds"] = rec["min_seconds"]
        return {"size": size, "backend": backend, "statistic": statistic, **rec}

    with limit_torch_threads(torch_threads):
        result = run_sweep("double_the_batch", sizes, measure, progress=progress,
                           torch_threads=torch_threads, cpu_threads=os.cpu_count(), quick=config.quick_mode(),
                           workload=getattr(fn_factory, "description", None),
                           command="brrr.experiments.double_the_batch(fn_factory, sizes)")
    previous = None
    for rec in result.records:
        rec["time_ratio"] = rec["seconds"] / previous["seconds"] if previous else None
        rec["size_ratio"] = rec["size"] / previous["size"] if previous else None
        previous = rec
    return result


FELL = 0.8   # a doubling whose time fell below 0.8 of the previous one: the machine changed, not the work


def batch_verdict(time_ratio: float, size_ratio: float = 2.0) -> str:
    """Plain words for one step of :func:`double_the_batch`.

    The work grew by ``size_ratio``; if the time grew by less than a third of
    that growth the step is 'overhead-bound', by more than two thirds
    'work-bound' (compute or memory), else 'in between'. A time that fell below
    :data:`FELL` of the previous one is 'time fell': more work cannot make a pass that
    much faster, so the machine changed between the two measurements.
    """
    if not time_ratio > 0 or not size_ratio > 1:
        raise ValueError(f"need time_ratio > 0 and size_ratio > 1, got {time_ratio!r}, {size_ratio!r}")
    if time_ratio < FELL:
        return "time fell"
    growth = (time_ratio - 1) / (size_ratio - 1)
    if growth < 1 / 3:
        return "overhead-bound"
    if growth > 2 / 3:
        return "work-bound"
    return "in between"


@needs_measurements
def batch_table(result: Result):
    """A :func:`double_the_batch` result as a table: batch size, time per forward pass (``seconds``) and
    the median of the same samples (None where the record has none), time per sample (seconds), the time ratio
    to the previous batch, and :func:`batch_verdict`."""
    import pandas as pd
    rows = []
    for r in result.records:
        ratio, size_ratio = r.get("time_ratio"), r.get("size_ratio")
        rows.append({"batch size": r["size"], "time per call": r["seconds"],
                     "median of its samples": r.get("median_seconds"),
                     "time per sample": r["seconds"] / r["size"],
                     "time ratio to previous": ratio,
                     "verdict": batch_verdict(ratio, size_ratio) if ratio and size_ratio else None})
    return pd.DataFrame(rows)


def mlp_work(batch: float, width: int, depth: int, peak_flops: float, bandwidth: float) -> float:
    """The roofline's least seconds of one forward pass of :func:`mlp_factory`'s MLP at ``batch``,
    its kernels run one after another: the larger of two lines in the batch, each Linear at the
    peak plus each ReLU's bytes (16 per element read and written, float32), or every kernel's bytes
    (the weights once, each layer's activations in and out)."""
    flops, weights, acts = 2 * depth * width ** 2, 4 * depth * (width * width + width), 16 * depth * width
    return max(batch * (flops / peak_flops + acts / 2 / bandwidth), (weights + batch * acts) / bandwidth)


def batch_where_work_is(seconds: float, width: int, depth: int, peak_flops: float, bandwidth: float) -> int:
    """The batch (at least 2) at which :func:`mlp_work` reaches ``seconds``."""
    flops, weights, acts = 2 * depth * width ** 2, 4 * depth * (width * width + width), 16 * depth * width
    per_sample = flops / peak_flops + acts / 2 / bandwidth
    return max(2, round(min(seconds / per_sample, (seconds * bandwidth - weights) / acts)))


def worked_batch(result: Result, width: int, depth: int) -> int:
    """Chapter 3's worked problem 3: the batch whose work at the run's peaks (:func:`batch_peaks`) takes the sweep's
    least time per call (:func:`batch_where_work_is`)."""
    peak, bandwidth, _, _ = batch_peaks(result)
    least = min(r["seconds"] for r in result.records)
    return batch_where_work_is(least, width, depth, peak, bandwidth)


def batch_peaks(result: Result) -> tuple:
    """(FLOP/s, bytes/s, threads, all threads) at which a :func:`double_the_batch` run's MLP works by
    the roofline: its device's FP32 peak and bandwidth, on a CPU the peak split evenly over the
    threads the sweep used (``meta['torch_threads']``) of all those it was measured on."""
    d = result.meta["device"]
    threads, every = result.meta.get("torch_threads"), result.meta.get("cpu_threads") or os.cpu_count() or 1
    share = min(1.0, threads / every) if d["backend"] == "cpu" and threads else 1.0
    return share * d["peak_flops_float32"], d["peak_bandwidth"], threads, every


def largest_fall(result: Result) -> int:
    """The index, in ``result.records`` sorted by size, of the doubling whose time grew least (fell most)."""
    recs = sorted(result.records, key=lambda r: r["size"])
    return min(range(1, len(recs)), key=lambda k: recs[k]["time_ratio"])


def mlp_factory(width: int = 256, depth: int = 4, device: Optional[str] = None) -> Callable:
    """A factory for :func:`double_the_batch`: ``depth`` Linear+ReLU layers of ``width``.

    ``factory(batch)`` returns a callable running one forward pass (no grad) on a
    ``batch x width`` float32 input, on ``device`` (default :attr:`brrr.Device.torch_device`).
    """
    import torch
    for name, value in (("width", width), ("depth", depth)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    device = device or live_device().torch_device
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
