"""An honest timer: ``bench(fn, *args)`` returns a :class:`Timing`.

How it measures (after ``triton.testing.do_bench`` and ``torch.utils.benchmark``):

1. Warm up: call ``fn`` until the warm-up period passes (at least once), which
   also compiles JITs and faults pages in; the warm calls estimate one call.
2. Plan: take as many samples as fit the time budget, at least one: on the CPU
   until the budget is spent, on a GPU (asynchronous) as many as the estimate
   says fit. A slow function costs the warm-up and the budget plus a call or
   two, however large ``min_samples`` is (too few samples give a warning).
3. Measure: on a GPU, CUDA events around each call, with L2 flushed before each
   sample by writing a buffer twice the L2's size (``cache='flush'``), or not
   (``cache='hot'``), or whole CUDA graphs of many calls (``cuda_graph=True``)
   for kernels so small that launching them is the cost. On the CPU,
   ``perf_counter_ns`` around one call after flushing the last-level cache, or
   blocked auto-range (many calls per sample) with ``cache='hot'``.
4. Judge: the timer measures its own floor (an empty call, the same way) and
   warns, in plain words, when a result is overhead-dominated, noisy,
   cache-resident, faster than the device's spec allows, or has fewer samples
   than asked for.

All times are seconds. Raw samples are kept.
"""
from __future__ import annotations

import inspect
import math
import time
from dataclasses import dataclass, field, asdict
from typing import Callable, Optional

import numpy as np

from . import clocks, config
from .checks import positive as _positive
from .units import format_seconds  # noqa: F401 (public here too)
from .device import device as _live_device

OVERHEAD_FACTOR = 3.0      # median below 3x the floor: overhead-dominated
NOISE_LIMIT = 0.10         # IQR / median above 10%: noisy
CACHE_FACTOR = 4.0         # working set below 4x the last-level cache: cache-resident
SPEC_SLACK = 1.10          # 10% above the spec peak: faster than the spec allows
CPU_BLOCK_SECONDS = 2e-3   # blocked auto-range aims for samples at least this long
DEFAULT_BUDGET = {"cpu": 0.5, "cuda": 0.2}  # seconds of sampling per bench: a GPU call is
                                            # microseconds to milliseconds, so 0.2 s holds hundreds
MIN_GRAPH_CALL_SECONDS = 1e-7  # a graph replaying calls faster than this holds no kernels: one
                               # kernel node takes of the order of a microsecond to launch and drain


@dataclass
class Timing:
    """The result of :func:`bench`: raw samples (seconds per call) and their summary."""
    samples: list
    floor: float
    backend: str
    mode: str                       # 'flush', 'hot' or 'graph'
    calls_per_sample: int = 1
    nbytes: Optional[float] = None  # bytes one call moves, if given
    flops: Optional[float] = None   # FLOPs one call performs, if given
    label: str = ""
    warnings: list = field(default_factory=list)

    # --- statistics (seconds) ---------------------------------------------
    @property
    def median(self) -> float:
        return float(np.median(self.samples))

    @property
    def min(self) -> float:
        return float(np.min(self.samples))

    @property
    def mean(self) -> float:
        return float(np.mean(self.samples))

    def quantiles(self, qs=(0.2, 0.5, 0.8)) -> list:
        """Sample quantiles in seconds (``qs`` between 0 and 1)."""
        return [float(v) for v in np.quantile(self.samples, qs)]

    @property
    def iqr(self) -> float:
        """Inter-quartile range in seconds."""
        q1, q3 = self.quantiles((0.25, 0.75))
        return q3 - q1

    @property
    def relative_iqr(self) -> float:
        return self.iqr / self.median if self.median > 0 else math.inf

    # --- derived rates -----------------------------------------------------
    def gbps(self, nbytes: Optional[float] = None) -> float:
        """Bandwidth in GB/s (1e9 bytes/s) at the median time; ``nbytes`` per call."""
        nbytes = self.nbytes if nbytes is None else nbytes
        if nbytes is None:
            raise ValueError("nbytes is needed: pass it here or to bench(..., nbytes=)")
        return _positive("nbytes", nbytes) / self.median / 1e9

    def tflops(self, nflops: Optional[float] = None) -> float:
        """Throughput in TFLOP/s (1e12 FLOP/s) at the median time; ``nflops`` per call."""
        nflops = self.flops if nflops is None else nflops
        if nflops is None:
            raise ValueError("nflops is needed: pass it here or to bench(..., flops=)")
        return _positive("nflops", nflops) / self.median / 1e12

    # --- plain data --------------------------------------------------------
    def record_fields(self, calls: int = 1) -> dict:
        """The timing fields of a record (:mod:`brrr.results` schema), seconds per call;
        ``calls``: calls of the measured thing per call of the timed function."""
        return {"seconds": self.median / calls, "min_seconds": self.min / calls,
                "iqr_seconds": self.iqr / calls, "floor_seconds": self.floor / calls}

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Timing":
        return cls(**data)

    def __repr__(self):
        head = f"Timing({self.label!r})" if self.label else "Timing"
        text = (f"{head}: median {format_seconds(self.median)} "
                f"(IQR {100 * self.relative_iqr:.1f}%, min {format_seconds(self.min)}, "
                f"{len(self.samples)} samples x {self.calls_per_sample} call(s), "
                f"{self.backend}, {self.mode} cache, timer floor {format_seconds(self.floor)})")
        if self.nbytes:
            text += f" -> {self.gbps():.1f} GB/s"
        if self.flops:
            text += f" -> {self.tflops() * 1e3:.1f} GFLOP/s"
        for w in self.warnings:
            text += f"\n  warning: {w}"
        return text


def _count(name, value) -> int:
    """``value`` as an int: a whole number (not a bool) of at least one."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value!r}")
    return int(value)


_LAZY = (("generator", inspect.isgeneratorfunction, inspect.isgenerator),
         ("coroutine", inspect.iscoroutinefunction, inspect.iscoroutine),
         ("async generator", inspect.isasyncgenfunction, inspect.isasyncgen))


def _refuse_lazy(obj, is_result=False):
    """TypeError if calling ``obj`` (fn) makes a generator or coroutine, or, with ``is_result``,
    if ``obj`` (what fn returned) is one."""
    for kind, makes, is_one in _LAZY:
        if (is_one if is_result else makes)(obj):
            if is_result and hasattr(obj, "close"):
                obj.close()  # no 'coroutine was never awaited' warning
            raise TypeError(f"fn creates a {kind}: timing it would time the creation of the {kind}, "
                            f"not the work. Time a function that runs it to the end, e.g. "
                            f"lambda: list(gen()) or lambda: asyncio.run(coro()).")


# --- the timer -----------------------------------------------------------------

def bench(fn: Callable, *args, warmup: float = 0.05, budget: Optional[float] = None, cache: str = "flush",
          cuda_graph: bool = False, nbytes: Optional[float] = None, flops: Optional[float] = None,
          backend: Optional[str] = None, min_samples: int = 5, max_samples: int = 10_000,
          label: str = "") -> Timing:
    """Time ``fn(*args)`` honestly and return a :class:`Timing` (seconds per call).

    Parameters
    ----------
    fn, args : the call to time. On a GPU it may return before the GPU finishes;
        events and synchronisation take care of that.
    warmup : seconds of warm-up calls (JIT compilation, page faults, clocks), counted
        from the first call, which is always made (default 0.05; 0: the first call only).
    budget : seconds of measuring once warmed up (default :data:`DEFAULT_BUDGET` of the
        backend: 0.5 on a CPU; 0.2 on a GPU, whose calls are short, stretched up to 0.5 where
        fewer than ``min_samples`` fit; a fifth in quick mode):
        sampling stops when it is spent, so the last sample may run over by one call. On a GPU
        the number of samples is planned from the host time of a warm-up sample (flush, launches
        and events included), so the budget is wall-clock time there too.
    cache : 'flush' (default) empties L2 / the last-level cache before every sample,
        so data comes from DRAM; 'hot' leaves it warm (on the CPU: blocked auto-range,
        many calls per sample).
    cuda_graph : GPU only: replay a CUDA graph of many calls, so launch overhead is
        not timed (hot cache). For kernels of a few microseconds. ``fn`` may use torch,
        CuPy or both (one stream captures them); a graph that captured no GPU work raises.
    nbytes, flops : bytes moved and FLOPs done by one call. Optional; with them the
        result reports GB/s and FLOP/s and can warn about cache or spec violations.
    backend : 'cuda' or 'cpu' to override the live device (time NumPy code on a GPU
        machine with backend='cpu').
    min_samples, max_samples : the number of samples wanted, and the most taken.
        The budget wins: if fewer than ``min_samples`` fit in it, bench takes what
        fits (at least one) and says so in the warnings.

    ``fn`` must do its work when called: a generator or coroutine function (or one
    returning a generator or coroutine) is refused with a TypeError.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    _refuse_lazy(fn)
    if budget is not None:
        budget = _positive("budget", budget, unit=" of seconds")
    warmup = _positive("warmup", warmup, zero_ok=True, unit=" of seconds")  # 0: the first call only
    if cache not in ("flush", "hot"):
        raise ValueError(f"cache must be 'flush' or 'hot', got {cache!r}")
    min_samples, max_samples = _count("min_samples", min_samples), _count("max_samples", max_samples)
    if min_samples > max_samples:
        raise ValueError(f"min_samples ({min_samples}) must be at most max_samples ({max_samples})")
    for name, value in (("nbytes", nbytes), ("flops", flops)):
        if value is not None:
            _positive(name, value)

    refuse_in_replay("brrr.bench")
    dev = _live_device()
    backend = backend or dev.backend
    if backend not in ("cuda", "cpu"):
        raise ValueError(f"backend must be 'cuda' or 'cpu', got {backend!r}")
    if backend == "cuda" and not dev.on_gpu:
        raise RuntimeError("backend='cuda' was asked for, but no CUDA GPU is available")
    if cuda_graph and backend != "cuda":
        raise ValueError("cuda_graph=True needs a CUDA GPU; on the CPU use cache='hot'")
    longest = budget    # a default budget on a GPU stretches up to the CPU's to fit min_samples
    if budget is None:
        budget, longest = DEFAULT_BUDGET[backend], max(DEFAULT_BUDGET.values())
    if config.quick_mode():
        budget, warmup, longest = budget / 5, warmup / 5, longest / 5

    warm_until = time.perf_counter() + warmup
    _refuse_lazy(fn(*args), is_result=True)  # the first call: compiles JITs, faults pages in
    if backend == "cpu":
        from .device import last_level_cache_bytes
        llc = last_level_cache_bytes()
        timing = _bench_cpu(fn, args, warm_until, budget, cache, max_samples, llc, dev.timer_floors)
    else:
        llc = dev.l2_bytes
        timing = _bench_gpu(fn, args, warm_until, budget, cache, cuda_graph, max_samples,
                            clocks.GpuClock(dev), dev.timer_floors, min_samples=min_samples, longest=longest)
    timing.nbytes, timing.flops, timing.label = nbytes, flops, label
    timing.warnings = _judge(timing, llc, dev if backend == dev.backend else None, min_samples, budget)
    return timing


def refuse_in_replay(what: str):
    """Raise where a replayed build (``BRRR_REPLAY``) would measure this machine: there, every
    measurement must come through :func:`brrr.reference.measure`, which returns its record."""
    if config.replay_set():
        raise RuntimeError(f"{what} ran in a replayed build ({config.REPLAY_ENV}={config.replay_set()}): this "
                           f"machine would be measured on a page that shows another device. Wrap the "
                           f"measurement in brrr.reference.measure(name, fn, ...), which replays its record.")


def _warm_up(call, warm_until: float, most: int = 10_000) -> list:
    """Seconds of each ``call()`` made before ``warm_until`` (a perf_counter time); none if it has passed."""
    times = []
    while len(times) < most and time.perf_counter() < warm_until:
        times.append(call())
    return times


def _collect(take, deadline: float, max_samples: int, samples: list) -> list:
    """Append ``take()`` to ``samples`` until ``deadline`` (perf_counter seconds); 1 to max_samples in all."""
    while len(samples) < max_samples and (not samples or time.perf_counter() < deadline):
        samples.append(take())
    return samples


def _bench_cpu(fn, args, warm_until, budget, cache, max_samples, llc, floors):
    clock = clocks.CpuClock(llc)
    one_call = lambda: clock.time_calls(fn, args, 1, flush=False)  # noqa: E731
    warm = _warm_up(one_call, warm_until)
    if cache == "flush":
        clock.flush()  # allocates the flush buffer and faults it in, before the budget starts
    deadline = time.perf_counter() + budget
    if cache == "hot":
        first = [] if warm else [one_call()]  # the first call used up the warm-up: time one more
        number = max(1, math.ceil(CPU_BLOCK_SECONDS / max(float(np.median(warm or first)), 1e-9)))
        samples = first if number == 1 else []  # one warm call is a hot sample of one call
        take = lambda: clock.time_calls(fn, args, number, flush=False)  # noqa: E731
    else:
        number, samples = 1, []
        take = lambda: clock.time_calls(fn, args, 1, flush=True)  # noqa: E731
    samples = _collect(take, deadline, max_samples, samples)
    return Timing(samples=samples, floor=clocks.floor(clock, cache, floors), backend="cpu", mode=cache,
                  calls_per_sample=number)


def _bench_gpu(fn, args, warm_until, budget, cache, cuda_graph, max_samples, clock, floors,
               min_samples: int = 1, longest: Optional[float] = None):
    """Samples fill ``budget`` seconds of the host's time, or up to ``longest`` where fewer than
    ``min_samples`` fit in ``budget``."""
    flush = cache == "flush" and not cuda_graph
    clock.synchronize()  # bench made the first call
    one_call = lambda: clock.time_many(fn, args, 1, flush)[0]  # noqa: E731
    started = time.perf_counter()
    warm = _warm_up(one_call, warm_until, most=5)  # up to five synchronised calls estimate one
    samples = [] if warm else [one_call()]  # the first call used up the warm-up: time one more
    estimate = max(float(np.median(warm or samples)), 1e-7)
    # Samples are planned on the host clock: one costs the flush, the launches and the events as
    # well as the call, many times a small kernel's own time.
    host_per_sample = max((time.perf_counter() - started) / len(warm or samples), estimate)
    left = warm_until - time.perf_counter()
    clock.time_many(fn, args, int(left / host_per_sample) if left > 0 else 0, flush)  # the rest
    if cuda_graph:
        calls = int(min(max(1e-3 / estimate, 1), 1000))  # graphs of about a millisecond
        launch = clock.capture(fn, args, calls)
        count = int(min(max(budget / (estimate * calls), 1), max_samples))
        launch()
        totals = clock.time_many(launch, (), count, flush=False)
        per_call = float(np.median(totals)) / calls
        if per_call < MIN_GRAPH_CALL_SECONDS:
            raise RuntimeError(f"{clocks.EMPTY_GRAPH}: a replayed call took {format_seconds(per_call)}, "
                               f"less than any GPU kernel takes ({format_seconds(MIN_GRAPH_CALL_SECONDS)}).")
        return Timing(samples=[t / calls for t in totals], floor=clocks.floor(clock, "graph", floors) / calls,
                      backend="cuda", mode="graph", calls_per_sample=calls)
    wanted = max(budget, min(min_samples * host_per_sample, longest or budget))
    count = int(min(max(wanted / host_per_sample, 1), max_samples))  # asynchronous events: planned
    samples += clock.time_many(fn, args, count - len(samples), flush)
    return Timing(samples=samples, floor=clocks.floor(clock, cache, floors), backend="cuda", mode=cache)


def _judge(t: Timing, llc_bytes: int, dev, min_samples: int, budget: float) -> list:
    """Plain-words warnings about a result (empty when it looks trustworthy)."""
    notes = []
    if len(t.samples) < min_samples:
        n = len(t.samples)
        notes.append(f"few samples: only {n} sample{'s' * (n > 1)} fit in the {format_seconds(budget)} "
                     f"budget (min_samples={min_samples}), so the spread is "
                     f"{'unknown' if n == 1 else 'a rough guess'}; raise the budget for more.")
    if t.median < OVERHEAD_FACTOR * t.floor:
        notes.append(f"overhead-dominated: the call took {format_seconds(t.median)}, less than "
                     f"{OVERHEAD_FACTOR:g}x what timing an empty call costs ({format_seconds(t.floor)}); "
                     "give it more work per call or use cuda_graph=True / cache='hot'.")
    if t.relative_iqr > NOISE_LIMIT:
        notes.append(f"noisy: the middle half of the samples spans {100 * t.relative_iqr:.0f}% of the "
                     "median; something else may be using the machine. Re-run, or raise the budget.")
    if t.nbytes is not None and t.nbytes < CACHE_FACTOR * llc_bytes:
        notes.append(f"cache-resident: the working set ({t.nbytes / 2**20:.3g} MiB) is less than "
                     f"{CACHE_FACTOR:g}x the last-level cache ({llc_bytes / 2**20:.3g} MiB), so some of "
                     "it can come from cache and the bandwidth can read higher than DRAM's.")
    if dev is not None:
        # DRAM's bandwidth bounds every flushed call, and a hot or graph-mode call whose working
        # set is too large to stay in cache; the FLOP peak bounds every call, whatever the mode.
        from_dram = t.mode == "flush" or (t.nbytes is not None and t.nbytes >= CACHE_FACTOR * llc_bytes)
        if from_dram and t.nbytes is not None and t.nbytes / t.median > SPEC_SLACK * dev.peak_bandwidth:
            notes.append(f"faster than the spec allows: {t.nbytes / t.median / 1e9:.0f} GB/s is above "
                         f"this device's {dev.peak_bandwidth / 1e9:.0f} GB/s ({t.mode} mode); check "
                         "nbytes, or whether the call did its work (an empty CUDA graph, a lazy result).")
        if t.flops is not None:
            top = max(dev.peak_flops(d, True) for d in ("float32", "float16", "float64"))
            if t.flops / t.median > SPEC_SLACK * top:
                notes.append(f"faster than the spec allows: {t.flops / t.median / 1e12:.3g} TFLOP/s is "
                             f"above this device's best {top / 1e12:.3g} TFLOP/s; check flops.")
    return notes
