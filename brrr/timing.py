"""An honest timer: ``bench(fn, *args)`` returns a :class:`Timing`.

How it measures (after ``triton.testing.do_bench`` and ``torch.utils.benchmark``):

1. Estimate: call ``fn`` through the warm-up period, which also compiles JITs
   and faults pages in; the warm-up calls give a first estimate of one call.
2. Plan: from that estimate, choose how many samples fit the time budget.
3. Measure: on a GPU, CUDA events around each call, with L2 flushed before each
   sample by writing a buffer twice the L2's size (``cache='flush'``), or not
   (``cache='hot'``), or whole CUDA graphs of many calls (``cuda_graph=True``)
   for kernels so small that launching them is the cost. On the CPU,
   ``perf_counter_ns`` around one call after flushing the last-level cache, or
   blocked auto-range (many calls per sample) with ``cache='hot'``.
4. Judge: the timer measures its own floor (an empty call, the same way) and
   warns, in plain words, when a result is overhead-dominated, noisy,
   cache-resident or faster than the device's spec allows.

All times are seconds. Raw samples are kept.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, asdict
from typing import Callable, Optional

import numpy as np

from . import config
from .device import device as _live_device

OVERHEAD_FACTOR = 3.0      # median below 3x the floor: overhead-dominated
NOISE_LIMIT = 0.10         # IQR / median above 10%: noisy
CACHE_FACTOR = 4.0         # working set below 4x the last-level cache: cache-resident
SPEC_SLACK = 1.10          # 10% above the spec peak: faster than the spec allows
CPU_BLOCK_SECONDS = 2e-3   # blocked auto-range aims for samples at least this long


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


def format_seconds(seconds: float) -> str:
    """Seconds with a readable unit and three significant digits: '12.3 µs', '4.56 ms'."""
    rounded = float(f"{seconds:.3g}")   # so that 999.7 ns reads '1 µs', not '1e+03 ns'
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(rounded) >= scale:
            return f"{rounded / scale:.3g} {unit}"
    return f"{rounded / 1e-9:.3g} ns"


def _positive(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not value > 0 or not math.isfinite(value):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


# --- CPU -----------------------------------------------------------------------

class _CpuClock:
    """perf_counter_ns timing; the flush writes a buffer twice the last-level cache."""
    backend = "cpu"

    def __init__(self, llc_bytes: int):
        self._buffer = None
        self._llc = llc_bytes

    def flush(self):
        if self._buffer is None:
            self._buffer = np.zeros(max(2 * self._llc, 1 << 20), dtype=np.uint8)
        self._buffer += 1  # read and write every byte: evicts whatever fn left in cache

    def time_calls(self, fn, args, number: int, flush: bool) -> float:
        """Seconds per call, for one sample of ``number`` back-to-back calls."""
        if flush:
            self.flush()
        start = time.perf_counter_ns()
        for _ in range(number):
            fn(*args)
        return (time.perf_counter_ns() - start) * 1e-9 / number


# --- GPU -----------------------------------------------------------------------

class _GpuClock:
    """CUDA events through CuPy or PyTorch, whichever the device uses."""
    backend = "cuda"

    def __init__(self, library: str, l2_bytes: int):
        self.library = library
        nbytes = max(2 * l2_bytes, 8 << 20)
        if library == "cupy":
            import cupy
            self._cp = cupy
            self._buffer = cupy.empty(nbytes, dtype=cupy.uint8)
        else:
            import torch
            self._torch = torch
            self._buffer = torch.empty(nbytes, dtype=torch.uint8, device="cuda")

    def event(self):
        if self.library == "cupy":
            return self._cp.cuda.Event()
        return self._torch.cuda.Event(enable_timing=True)

    def synchronize(self):
        if self.library == "cupy":
            self._cp.cuda.Device().synchronize()
        else:
            self._torch.cuda.synchronize()

    def elapsed(self, start, end) -> float:
        """Seconds between two recorded events (after synchronize)."""
        if self.library == "cupy":
            return self._cp.cuda.get_elapsed_time(start, end) * 1e-3
        return start.elapsed_time(end) * 1e-3

    def flush(self):
        if self.library == "cupy":
            self._buffer.fill(0)
        else:
            self._buffer.zero_()

    def time_many(self, fn, args, count: int, flush: bool) -> list:
        """Seconds for each of ``count`` calls, events around each, one sync at the end."""
        pairs = []
        for _ in range(count):
            if flush:
                self.flush()
            start, end = self.event(), self.event()
            start.record()
            fn(*args)
            end.record()
            pairs.append((start, end))
        self.synchronize()
        return [self.elapsed(s, e) for s, e in pairs]

    def capture(self, fn, args, calls: int):
        """A CUDA graph of ``calls`` back-to-back calls; returns a launcher."""
        if self.library == "cupy":
            cp = self._cp
            stream = cp.cuda.Stream(non_blocking=True)
            with stream:
                fn(*args)  # warm up on the capture stream
                stream.synchronize()
                stream.begin_capture()
                for _ in range(calls):
                    fn(*args)
                graph = stream.end_capture()
            return lambda: graph.launch()
        torch = self._torch
        graph = torch.cuda.CUDAGraph()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            fn(*args)
        torch.cuda.current_stream().wait_stream(side)
        with torch.cuda.graph(graph):
            for _ in range(calls):
                fn(*args)
        return graph.replay


# --- the timer -----------------------------------------------------------------

_FLOORS: dict = {}


def _noop():
    return None


def _floor(clock, mode: str) -> float:
    """Median seconds the timer reports for an empty call (cached per clock and mode)."""
    key = (clock.backend, mode)
    if key not in _FLOORS:
        flush = mode == "flush"  # an empty call timed exactly as fn is, flush included
        if clock.backend == "cpu":
            number = 1000 if mode == "hot" else 1
            samples = [clock.time_calls(_noop, (), number, flush) for _ in range(30 if flush else 200)]
        else:
            clock.time_many(_noop, (), 10, flush)
            samples = clock.time_many(_noop, (), 100, flush)
        _FLOORS[key] = float(np.median(samples))
    return _FLOORS[key]


def bench(fn: Callable, *args, warmup: float = 0.05, budget: float = 0.5, cache: str = "flush",
          cuda_graph: bool = False, nbytes: Optional[float] = None, flops: Optional[float] = None,
          backend: Optional[str] = None, min_samples: int = 5, max_samples: int = 10_000,
          label: str = "") -> Timing:
    """Time ``fn(*args)`` honestly and return a :class:`Timing` (seconds per call).

    Parameters
    ----------
    fn, args : the call to time. On a GPU it may return before the GPU finishes;
        events and synchronisation take care of that.
    warmup : seconds of warm-up calls (JIT compilation, page faults, clocks) (default 0.05).
    budget : seconds of measuring, at most, once warmed up (default 0.5; a fifth in quick mode).
    cache : 'flush' (default) empties L2 / the last-level cache before every sample,
        so data comes from DRAM; 'hot' leaves it warm (on the CPU: blocked auto-range,
        many calls per sample).
    cuda_graph : GPU only: replay a CUDA graph of many calls, so launch overhead is
        not timed (hot cache). For kernels of a few microseconds.
    nbytes, flops : bytes moved and FLOPs done by one call. Optional; with them the
        result reports GB/s and FLOP/s and can warn about cache or spec violations.
    backend : 'cuda' or 'cpu' to override the live device (time NumPy code on a GPU
        machine with backend='cpu').
    min_samples, max_samples : bounds on the number of samples.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    _positive("budget", budget)
    if isinstance(warmup, bool) or not isinstance(warmup, (int, float)) or warmup < 0:
        raise ValueError(f"warmup must be a number of seconds >= 0, got {warmup!r}")
    if cache not in ("flush", "hot"):
        raise ValueError(f"cache must be 'flush' or 'hot', got {cache!r}")
    if not isinstance(min_samples, int) or not isinstance(max_samples, int) or not 1 <= min_samples <= max_samples:
        raise ValueError(f"need 1 <= min_samples <= max_samples, got {min_samples}, {max_samples}")
    for name, value in (("nbytes", nbytes), ("flops", flops)):
        if value is not None:
            _positive(name, value)

    dev = _live_device()
    backend = backend or dev.backend
    if backend not in ("cuda", "cpu"):
        raise ValueError(f"backend must be 'cuda' or 'cpu', got {backend!r}")
    if backend == "cuda" and dev.backend != "cuda":
        raise RuntimeError("backend='cuda' was asked for, but no CUDA GPU is available")
    if cuda_graph and backend != "cuda":
        raise ValueError("cuda_graph=True needs a CUDA GPU; on the CPU use cache='hot'")
    if config.quick_mode():
        budget, warmup = budget / 5, warmup / 5

    if backend == "cpu":
        from .device import last_level_cache_bytes
        llc = last_level_cache_bytes()
        timing = _bench_cpu(fn, args, warmup, budget, cache, min_samples, max_samples, llc)
    else:
        llc = dev.l2_bytes
        timing = _bench_gpu(fn, args, warmup, budget, cache, cuda_graph, min_samples,
                            max_samples, _GpuClock(dev.array_library, dev.l2_bytes))
    timing.nbytes, timing.flops, timing.label = nbytes, flops, label
    timing.warnings = _judge(timing, llc, dev if backend == dev.backend else None)
    return timing


def _warm_up(call, warmup: float) -> float:
    """Call until ``warmup`` seconds pass (at least twice); median seconds of the later calls."""
    times = []
    deadline = time.perf_counter() + warmup
    while len(times) < 2 or time.perf_counter() < deadline:
        times.append(call())
        if len(times) >= 10_000:
            break
    later = times[1:]
    return max(float(np.median(later)), 1e-9)


def _bench_cpu(fn, args, warmup, budget, cache, min_samples, max_samples, llc):
    clock = _CpuClock(llc)
    estimate = _warm_up(lambda: clock.time_calls(fn, args, 1, flush=False), warmup)
    if cache == "hot":
        number = max(1, math.ceil(CPU_BLOCK_SECONDS / estimate))
        count = int(min(max(budget / (estimate * number), min_samples), max_samples))
        samples = [clock.time_calls(fn, args, number, flush=False) for _ in range(count)]
    else:
        number = 1
        flush_start = time.perf_counter()
        clock.flush()
        flush_seconds = time.perf_counter() - flush_start
        count = int(min(max(budget / (estimate + flush_seconds), min_samples), max_samples))
        samples = [clock.time_calls(fn, args, 1, flush=True) for _ in range(count)]
    return Timing(samples=samples, floor=_floor(clock, cache), backend="cpu", mode=cache,
                  calls_per_sample=number)


def _bench_gpu(fn, args, warmup, budget, cache, cuda_graph, min_samples, max_samples, clock):
    flush = cache == "flush" and not cuda_graph
    fn(*args)
    clock.synchronize()
    estimate = max(float(np.median(clock.time_many(fn, args, 5, flush))), 1e-7)
    clock.time_many(fn, args, max(1, int(warmup / estimate)) if warmup else 0, flush)
    if cuda_graph:
        calls = int(min(max(1e-3 / estimate, 1), 1000))  # graphs of about a millisecond
        launch = clock.capture(fn, args, calls)
        count = int(min(max(budget / (estimate * calls), min_samples), max_samples))
        launch()
        totals = clock.time_many(launch, (), count, flush=False)
        return Timing(samples=[t / calls for t in totals], floor=_floor(clock, "graph") / calls,
                      backend="cuda", mode="graph", calls_per_sample=calls)
    count = int(min(max(budget / estimate, min_samples), max_samples))
    samples = clock.time_many(fn, args, count, flush)
    return Timing(samples=samples, floor=_floor(clock, cache), backend="cuda", mode=cache)


def _judge(t: Timing, llc_bytes: int, dev) -> list:
    """Plain-words warnings about a result (empty when it looks trustworthy)."""
    notes = []
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
    if dev is not None and t.mode == "flush":
        if t.nbytes is not None and t.nbytes / t.median > SPEC_SLACK * dev.peak_bandwidth:
            notes.append(f"faster than the spec allows: {t.nbytes / t.median / 1e9:.0f} GB/s is above "
                         f"this device's {dev.peak_bandwidth / 1e9:.0f} GB/s; check nbytes, or the "
                         "data is cached.")
        if t.flops is not None:
            top = max(dev.peak_flops(d, True) for d in ("float32", "float16", "float64"))
            if t.flops / t.median > SPEC_SLACK * top:
                notes.append(f"faster than the spec allows: {t.flops / t.median / 1e12:.3g} TFLOP/s is "
                             f"above this device's best {top / 1e12:.3g} TFLOP/s; check flops.")
    return notes
