"""The clocks :func:`brrr.bench` reads: ``perf_counter_ns`` on the CPU, CUDA events on a GPU.

Each clock can flush the cache it times through (a buffer twice the last-level cache,
read and written, on the CPU; one twice the L2, written, on a GPU), time calls, and measure
its own floor: what it reports for an empty call, kept per device in
:attr:`brrr.Device.timer_floors`. All times are seconds.
"""
from __future__ import annotations

import contextlib
import importlib
import time
import warnings

import numpy as np


# --- CPU -----------------------------------------------------------------------

class CpuClock:
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

class GpuClock:
    """CUDA events through CuPy or PyTorch, whichever the device uses."""
    backend = "cuda"

    def __init__(self, dev):
        self.library = dev.array_library
        self.synchronize = dev.synchronize
        nbytes = max(2 * dev.l2_bytes, 8 << 20)
        if self.library == "cupy":
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

    def elapsed(self, start, end) -> float:
        """Seconds between two recorded events (after synchronize)."""
        if self.library == "cupy":
            return self._cp.cuda.get_elapsed_time(start, end) * 1e-3
        return start.elapsed_time(end) * 1e-3

    def flush(self):
        """Write a buffer twice the L2 (written, not read: the L2 may keep it as dirty lines, which a timed call's
        misses then write back; a read-only flush would not leave them, but is unmeasured here)."""
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
        """A CUDA graph of ``calls`` back-to-back calls; returns a launcher.

        One stream captures the work of both libraries, so ``fn`` may use torch, CuPy or
        both: where torch has CUDA, ``torch.cuda.graph`` captures on a side stream and CuPy
        is pointed at the same stream; without it, CuPy's own capture. A graph that captured
        no work raises (a call that launched its kernels elsewhere would time as nothing).
        In graph mode ``fn`` should write into preallocated outputs: replays reuse the
        addresses its temporaries had while it was captured.
        """
        torch = _optional("torch")
        if torch is not None and torch.cuda.is_available():
            return capture_torch(torch, _optional("cupy"), fn, args, calls)
        return _capture_cupy(self._cp, fn, args, calls)


EMPTY_GRAPH = ("cuda_graph=True captured no GPU work: fn launched nothing on the capture stream "
               "(is its work on another stream or device, or not on the GPU at all?)")


def _optional(name: str):
    """The module ``name``, or None where it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def capture_torch(torch, cupy, fn, args, calls: int):
    """``calls`` calls of ``fn(*args)`` captured as one ``torch.cuda`` graph after one warm-up call
    on the capture stream (``cupy``: None, or CuPy, pointed at that stream); returns a launcher."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())

    def both_on_side():  # CuPy launches onto torch's capture stream too
        return cupy.cuda.ExternalStream(side.cuda_stream) if cupy is not None else contextlib.nullcontext()

    with torch.cuda.stream(side), both_on_side():
        fn(*args)  # warm up on the capture stream: each library's allocator caches blocks for it
    side.synchronize()
    graph = torch.cuda.CUDAGraph()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.cuda.graph(graph, stream=side), both_on_side():
            for _ in range(calls):
                fn(*args)
    if any("empty" in str(w.message).lower() for w in caught):  # torch: "The CUDA Graph is empty"
        raise RuntimeError(EMPTY_GRAPH)
    return graph.replay


def _capture_cupy(cp, fn, args, calls: int):
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        fn(*args)  # warm up on the capture stream
        stream.synchronize()
        stream.begin_capture()
        for _ in range(calls):
            fn(*args)
        graph = stream.end_capture()
    return lambda: graph.launch()


def _noop():
    """An empty call: what the floor times."""
    return None


def floor(clock, mode: str, floors: dict) -> float:
    """Median seconds the timer reports for an empty call, measured once per clock and mode
    and kept in ``floors`` (the device's :attr:`~brrr.Device.timer_floors`)."""
    key = (clock.backend, mode)
    if key not in floors:
        flush = mode == "flush"  # an empty call timed exactly as fn is, flush included
        if clock.backend == "cpu":
            number = 1000 if mode == "hot" else 1
            samples = [clock.time_calls(_noop, (), number, flush) for _ in range(30 if flush else 200)]
        else:
            clock.time_many(_noop, (), 10, flush)
            samples = clock.time_many(_noop, (), 100, flush)
        floors[key] = float(np.median(samples))
    return floors[key]
