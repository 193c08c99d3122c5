"""The timer: units, modes, warnings and bad input. No speed is asserted."""
import json
import time

import numpy as np
import pytest

import brrr
from brrr import config, timing
from brrr.timing import Timing, bench, format_seconds


def test_sleep_is_measured_in_seconds():
    t = bench(time.sleep, 0.002, budget=0.2, warmup=0.0)  # room for 5 samples with flushes on a busy machine
    assert 0.002 <= t.median < 0.05       # sleep never returns early; the unit is seconds
    assert t.min <= t.median
    assert len(t.samples) >= 5 and t.calls_per_sample == 1
    assert not any(w.startswith("few samples") for w in t.warnings)


def test_hot_mode_blocks_many_calls_of_a_tiny_function():
    x = np.ones(16, dtype=np.float32)
    t = bench(np.sum, x, cache="hot", budget=0.05, backend="cpu")  # CPU blocking, even on a GPU machine
    assert t.mode == "hot" and t.calls_per_sample > 10
    assert t.median < 1e-3


def test_rates_are_derived_from_the_median():
    t = Timing(samples=[1.0, 2.0, 3.0], floor=1e-7, backend="cpu", mode="flush", nbytes=4e9, flops=6e12)
    assert t.median == 2.0
    assert t.gbps() == pytest.approx(2.0)
    assert t.gbps(8e9) == pytest.approx(4.0)
    assert t.tflops() == pytest.approx(3.0)
    assert t.iqr == pytest.approx(1.0)
    with pytest.raises(ValueError, match="nbytes"):
        Timing(samples=[1.0], floor=0, backend="cpu", mode="hot").gbps()
    with pytest.raises(ValueError, match="nbytes"):
        t.gbps(-1)


def test_flush_and_hot_both_time_a_real_copy():
    x = np.ones(1 << 20, dtype=np.float32)
    y = np.empty_like(x)
    for cache in ("flush", "hot"):
        t = bench(np.copyto, y, x, cache=cache, nbytes=2 * x.nbytes, budget=0.05)
        assert t.gbps() == pytest.approx(2 * x.nbytes / t.median / 1e9)
        assert t.floor > 0


def test_empty_call_is_flagged_overhead_dominated():
    # The floor is kept with the device; measure it now, beside the call, not under an earlier
    # test's load, and take enough samples (not bench's minimum of 5) for a steady median.
    brrr.device().timer_floors.clear()
    t = bench(lambda: None, budget=0.3)
    assert any(w.startswith("overhead-dominated") for w in t.warnings)


def test_small_working_set_is_flagged_cache_resident():
    x = np.ones(1024, dtype=np.float32)
    t = bench(np.copy, x, nbytes=2 * x.nbytes, cache="hot", budget=0.02)
    assert any(w.startswith("cache-resident") for w in t.warnings)


def test_impossible_bandwidth_is_flagged():
    x = np.ones(1 << 16, dtype=np.float32)
    t = bench(np.copy, x, nbytes=1e15, budget=0.02)
    assert any(w.startswith("faster than the spec allows") for w in t.warnings)


def test_physics_is_checked_in_hot_mode_too():
    """A hot call cannot beat DRAM once its working set is far larger than the cache, and no call
    beats the FLOP peak; a small hot working set may beat DRAM (it is in cache) and is not flagged."""
    x = np.ones(1 << 10, dtype=np.float32)
    huge = 1e3 * brrr.device().l2_bytes          # bytes claimed per call: cannot be cache-resident
    t = bench(np.copy, x, nbytes=huge, cache="hot", budget=0.02)
    assert any(w.startswith("faster than the spec allows") and "hot mode" in w for w in t.warnings)
    t = bench(np.copy, x, flops=1e18, cache="hot", budget=0.02)
    assert any("TFLOP/s is above" in w for w in t.warnings)
    t = bench(np.copy, x, nbytes=2 * x.nbytes, cache="hot", budget=0.02)
    assert not any(w.startswith("faster than the spec allows") for w in t.warnings)


def test_noisy_samples_are_flagged():
    delays = iter([0.001, 0.004] * 1000)
    t = bench(lambda: time.sleep(next(delays)), budget=0.1, warmup=0.0, min_samples=8)
    assert any(w.startswith("noisy") for w in t.warnings)


def test_quiet_large_copy_has_no_overhead_warning():
    x = np.ones(1 << 22, dtype=np.float32)
    y = np.empty_like(x)
    t = bench(np.copyto, y, x, budget=0.1)
    assert not any(w.startswith("overhead") for w in t.warnings)


def test_round_trip_through_json_keeps_samples():
    t = bench(np.add, np.ones(100), 1.0, budget=0.01, nbytes=1600, label="add")
    again = Timing.from_dict(json.loads(json.dumps(t.to_dict())))
    assert again.samples == t.samples and again.median == t.median and again.label == "add"
    text = repr(t)
    assert "median" in text and "add" in text


def test_quick_mode_shrinks_the_budget(monkeypatch):
    calls = []

    def work():
        calls.append(1)
        time.sleep(0.001)
    bench(work, budget=0.2, warmup=0.0)
    full = len(calls)
    calls.clear()
    monkeypatch.setenv("BRRR_QUICK", "1")
    config.reread()          # BRRR_QUICK is read once per process; this test changes it midway
    bench(work, budget=0.2, warmup=0.0)
    assert len(calls) < full


@pytest.mark.parametrize("kwargs, error, word", [
    (dict(budget=0), ValueError, "budget"),
    (dict(budget="1"), TypeError, "budget"),
    (dict(cache="cold"), ValueError, "cache"),
    (dict(warmup=-1), ValueError, "warmup"),
    (dict(nbytes=0), ValueError, "nbytes"),
    (dict(min_samples=0), ValueError, "min_samples"),
    (dict(backend="tpu"), ValueError, "backend"),
])
def test_bad_arguments_are_named(kwargs, error, word):
    with pytest.raises(error, match=word):
        bench(lambda: None, **kwargs)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(warmup=float("inf")), ValueError, "warmup must be a non-negative finite number of seconds"),
    (dict(warmup=float("nan")), ValueError, "warmup must be a non-negative finite number of seconds"),
    (dict(warmup=True), TypeError, "warmup must be a non-negative finite number of seconds"),
    (dict(warmup="0.1"), TypeError, "warmup must be a non-negative finite number of seconds"),
    (dict(budget=float("inf")), ValueError, "budget must be a positive finite number of seconds"),
    (dict(budget=float("nan")), ValueError, "budget must be a positive finite number of seconds"),
    (dict(budget=True), TypeError, "budget must be a positive finite number of seconds"),
    (dict(min_samples=True), TypeError, "min_samples must be an integer"),
    (dict(min_samples=2.5), TypeError, "min_samples must be an integer"),
    (dict(max_samples=0), ValueError, "max_samples must be at least 1"),
    (dict(max_samples=False), TypeError, "max_samples must be an integer"),
    (dict(min_samples=6, max_samples=3), ValueError, r"min_samples \(6\) must be at most max_samples \(3\)"),
])
def test_bad_options_say_what_was_expected(kwargs, error, message):
    calls = []
    with pytest.raises(error, match=message):
        bench(lambda: calls.append(1), **kwargs)
    assert not calls  # refused before anything runs


def test_not_callable():
    with pytest.raises(TypeError, match="fn must be callable"):
        bench(3)


def _numbers():
    yield from range(3)


async def _sleep_a_little():
    time.sleep(0.001)


@pytest.mark.parametrize("fn, kind", [
    (_numbers, "generator"),
    (_sleep_a_little, "coroutine"),
    (lambda: (i for i in range(3)), "generator"),   # returns one: caught at the first call
    (lambda: _sleep_a_little(), "coroutine"),
])
def test_generators_and_coroutines_are_refused(fn, kind):
    # Timing them would time the creation of a generator or coroutine, not the work.
    with pytest.raises(TypeError, match=f"fn creates a {kind}"):
        bench(fn, budget=0.01, warmup=0.0)


@pytest.mark.parametrize("cache", ["flush", "hot"])
def test_a_slow_function_keeps_to_the_budget(cache):
    # One call is longer than the budget: the warm-up call and one sample fit, not min_samples=5.
    start = time.perf_counter()
    t = bench(time.sleep, 0.3, budget=0.2, warmup=0.01, cache=cache)
    wall = time.perf_counter() - start
    assert wall < 1.5                                   # two calls of 0.3 s, and room for a busy machine
    assert len(t.samples) >= 1 and t.min >= 0.3 and t.calls_per_sample == 1
    assert any(w.startswith("few samples") for w in t.warnings)


def test_gpu_only_modes_refused_without_a_gpu():
    if brrr.device().backend == "cuda":
        pytest.skip("a GPU is present")
    with pytest.raises(ValueError, match="cuda_graph"):
        bench(lambda: None, cuda_graph=True)
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        bench(lambda: None, backend="cuda")


def test_format_seconds():
    assert format_seconds(2.5) == "2.5 s"
    assert format_seconds(0.0123) == "12.3 ms"
    assert format_seconds(4.2e-6) == "4.2 µs"
    assert format_seconds(999.7e-9) == "1 µs" and format_seconds(0.9996) == "1 s"
    assert format_seconds(12.34e-9) == "12.3 ns"
    assert format_seconds(5e-9) == "5 ns"


@pytest.mark.gpu
@pytest.mark.parametrize("cache, graph", [("flush", False), ("hot", False), ("hot", True)])
def test_gpu_copy_timed_with_events(cache, graph):
    dev = brrr.device()
    xp = dev.xp
    if dev.array_library == "cupy":
        x = xp.ones(1 << 26, dtype=xp.float32)
        y = xp.empty_like(x)
        fn = lambda: xp.copyto(y, x)  # noqa: E731
    else:
        import torch
        x = torch.ones(1 << 26, device="cuda")
        y = torch.empty_like(x)
        fn = lambda: y.copy_(x)  # noqa: E731
    t = bench(fn, cache=cache, cuda_graph=graph, nbytes=2 * 4 * (1 << 26))
    assert t.backend == "cuda" and t.mode == ("graph" if graph else cache)
    assert 0 < t.gbps() < 1.2 * dev.peak_bandwidth / 1e9


def test_timer_floors_belong_to_the_device():
    dev = brrr.device()
    dev.timer_floors.clear()
    bench(lambda: None, budget=0.02, cache="hot")
    assert ("cpu", "hot") in dev.timer_floors and dev.timer_floors[("cpu", "hot")] > 0
    assert not hasattr(timing, "_FLOORS")   # no module-level cache inside bench
