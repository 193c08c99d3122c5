"""CUDA-graph capture without a GPU: fake torch and CuPy modules that record which stream each
kernel is launched on. They check that one stream captures both libraries' work, that a graph
which captured nothing is refused, and that a replay faster than any kernel is refused."""
import contextlib
import time
import types
import warnings

import pytest

from brrr import clocks, timing


class FakeGpu:
    """Streams are integers; a kernel is launched on the current stream of the library that launches it."""

    def __init__(self):
        self.torch_stream = self.cupy_stream = 0   # the legacy default stream
        self.capturing = None                      # the stream being captured, if any
        self.captured = 0                          # kernels launched on it while capturing
        self.next_ptr = 100

    def launch(self, library):
        stream = self.torch_stream if library == "torch" else self.cupy_stream
        if self.capturing is not None and stream == self.capturing:
            self.captured += 1

    def new_ptr(self):
        self.next_ptr += 1
        return self.next_ptr


def fake_torch(gpu):
    class Stream:
        def __init__(self):
            self.cuda_stream = gpu.new_ptr()

        def wait_stream(self, other):
            pass

        def synchronize(self):
            pass

    @contextlib.contextmanager
    def stream(s):
        before, gpu.torch_stream = gpu.torch_stream, s.cuda_stream
        yield
        gpu.torch_stream = before

    class CUDAGraph:
        def replay(self):
            pass

    @contextlib.contextmanager
    def graph(g, stream=None):
        before, gpu.torch_stream = gpu.torch_stream, stream.cuda_stream
        gpu.capturing, gpu.captured = stream.cuda_stream, 0
        yield
        gpu.capturing, gpu.torch_stream = None, before
        if gpu.captured == 0:  # what torch's capture_end says of a graph without nodes
            warnings.warn("The CUDA Graph is empty. This usually means that the graph was attempted "
                          "to be captured on wrong device or stream.")

    main = Stream()
    main.cuda_stream = 0
    cuda = types.SimpleNamespace(is_available=lambda: True, Stream=Stream, stream=stream,
                                 current_stream=lambda: main, CUDAGraph=CUDAGraph, graph=graph)
    return types.SimpleNamespace(cuda=cuda)


def fake_cupy(gpu):
    @contextlib.contextmanager
    def external_stream(ptr):
        before, gpu.cupy_stream = gpu.cupy_stream, ptr
        yield
        gpu.cupy_stream = before

    return types.SimpleNamespace(cuda=types.SimpleNamespace(ExternalStream=external_stream))


@pytest.fixture
def gpu(monkeypatch):
    gpu = FakeGpu()
    modules = {"torch": fake_torch(gpu), "cupy": fake_cupy(gpu)}
    monkeypatch.setattr(clocks, "_optional", modules.get)
    return gpu


def gpu_clock():
    clock = object.__new__(clocks.GpuClock)  # no buffers: capture needs none
    clock.library = "cupy"
    return clock


@pytest.mark.parametrize("library", ["torch", "cupy"])
def test_one_stream_captures_either_library(gpu, library):
    launcher = gpu_clock().capture(lambda: gpu.launch(library), (), calls=7)
    assert gpu.captured == 7
    assert callable(launcher)


def test_a_call_that_launches_nothing_is_refused(gpu):
    with pytest.raises(RuntimeError, match="captured no GPU work"):
        gpu_clock().capture(lambda: None, (), calls=3)


def test_cupy_work_escapes_capture_when_cupy_is_not_pointed_at_the_stream(gpu, monkeypatch):
    # The bug this module fixes: CuPy kernels launched on CuPy's own stream leave torch's graph empty.
    monkeypatch.setattr(clocks, "_optional", {"torch": fake_torch(gpu), "cupy": None}.get)
    with pytest.raises(RuntimeError, match="captured no GPU work"):
        gpu_clock().capture(lambda: gpu.launch("cupy"), (), calls=3)


class FakeGraphClock:
    """A clock whose graph of ``calls`` replays in ``per_call`` x calls seconds."""
    backend = "cuda"

    def __init__(self, per_call):
        self.per_call, self.calls = per_call, None

    def synchronize(self):
        pass

    def capture(self, fn, args, calls):
        self.calls = calls
        return lambda: None

    def time_many(self, fn, args, count, flush):
        per_sample = self.per_call * (self.calls or 1)
        return [per_sample] * count


def test_a_replay_faster_than_any_kernel_is_refused():
    fast = FakeGraphClock(per_call=40e-9)  # the figure an empty graph gave: tens of nanoseconds a call
    floors = {("cuda", "graph"): 2e-6, ("cuda", "hot"): 2e-6}
    with pytest.raises(RuntimeError, match="captured no GPU work.*less than any GPU kernel"):
        timing._bench_gpu(lambda: None, (), 0.0, 0.01, "hot", True, 10, fast, floors)


def test_a_real_replay_is_timed_per_call():
    clock = FakeGraphClock(per_call=3e-6)
    floors = {("cuda", "graph"): 2e-6, ("cuda", "hot"): 2e-6}
    result = timing._bench_gpu(lambda: None, (), 0.0, 0.01, "hot", True, 10, clock, floors)
    assert result.mode == "graph" and result.calls_per_sample == clock.calls
    assert result.median == pytest.approx(3e-6)


class SlowHostClock:
    """A clock whose samples report a 1 µs kernel but take ``host`` seconds of the host's time
    each (the flush, the launches and the events of a small call)."""
    backend = "cuda"

    def __init__(self, host):
        self.host, self.samples = host, 0

    def synchronize(self):
        pass

    def time_many(self, fn, args, count, flush):
        time.sleep(self.host * count)
        self.samples += count
        return [1e-6] * count


def test_a_gpu_budget_is_wall_clock_time_not_kernel_time():
    clock = SlowHostClock(host=2e-3)
    floors = {("cuda", "flush"): 1e-7}
    started = time.perf_counter()
    result = timing._bench_gpu(lambda: None, (), time.perf_counter() + 0.02, 0.05, "flush", False, 2000,
                               clock, floors)
    elapsed = time.perf_counter() - started
    # planned on the kernel's 1 µs, the 0.05 s budget would take all 2,000 samples (4 s of host time)
    assert clock.samples < 60 and len(result.samples) >= 5
    assert elapsed < 0.5


def test_a_default_gpu_budget_stretches_to_fit_min_samples():
    clock = SlowHostClock(host=0.03)   # each sample 30 ms: 0.2 s holds six, not the ten wanted
    floors = {("cuda", "flush"): 1e-7}
    timing._bench_gpu(lambda: None, (), 0.0, 0.2, "flush", False, 2000, clock, floors,
                      min_samples=10, longest=0.5)
    assert 9 <= clock.samples <= 12
    clock = SlowHostClock(host=0.1)    # ten would take a second: the longest budget, 0.5 s, wins
    timing._bench_gpu(lambda: None, (), 0.0, 0.2, "flush", False, 2000, clock, floors,
                      min_samples=10, longest=0.5)
    assert clock.samples <= 6
