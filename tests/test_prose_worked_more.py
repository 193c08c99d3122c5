"""The third worked problems of Chapters 4 to 7 (brrr.prose.worked_more).

As in test_prose_worked_networks.py, the devices and times are made up: each test picks numbers that force one
wording and checks that the text states what the arithmetic gives and the outcome it calls for. The last tests
run the answers on the live device and on the shipped reference runs, with no timing.
"""
import math

import pytest

from brrr import Timing
from brrr.prose import words as w
from brrr.prose import worked
from brrr.prose import worked_more as wm
from brrr.prose import worked_networks as wn
from worked_fakes import CPU, H100, H100_RIDGE, MiB, NOISY, FakeDevice


LOW_RIDGE = FakeDevice(1e9, 100e9)       # ridge 0.01: everything is compute-bound


def timing(seconds, warnings=()):
    return Timing(samples=[seconds] * 5, floor=1e-7, backend="cpu", mode="flush", warnings=list(warnings))


@pytest.fixture
def no_reference(monkeypatch):
    """No reference GPU run ships, whatever the experiment."""
    import brrr.reference
    monkeypatch.setattr(brrr.reference, "load", lambda *args, **kwargs: [])


class FakeRun:
    def __init__(self, records, name="NVIDIA H100 80GB HBM3", flops=67e12, bandwidth=3.35e12):
        self.records = records
        self.meta = {"device": {"name": name, "peak_flops_float32": flops, "peak_bandwidth": bandwidth},
                     "date": "2026-11-22T10:00:00"}


# --- Chapter 4 -----------------------------------------------------------------------------------

def test_fma_cap_here_and_on_the_reference(no_reference):
    n = 1000
    p = wm.fma_cap(n, CPU)   # ridge 5: k/4 >= 5 from k = 20
    assert p.facts["k_cap"] == 20 and p.facts["k"] == 40 and p.facts["nbytes"] == 8 * n
    assert p.facts["seconds"] == pytest.approx(2 * 40 * n / 100e9)
    text = str(p)
    assert "**k = 20**" in text and "2 × 40 × 1,000 = 80,000 FLOPs" in text
    assert f"**{w.seconds(80_000 / 100e9)}**" in text
    assert f"cap is at k = {w.integer(math.ceil(4 * H100_RIDGE))}" in text
    k_ref = math.ceil(4 * H100_RIDGE)
    assert (f"still memory-bound there (k = 40 is below {w.integer(k_ref)}) and takes at least "
            f"{w.seconds(8 * n / H100.bandwidth)}, set by its bytes") in text   # not its FLOPs' shorter time
    assert w.seconds(80_000 / H100.fp32) not in text
    assert text.endswith("No reference GPU run of multiply-add chains ships with this edition of the book yet.")


def test_fma_cap_compute_bound_on_the_reference_too(no_reference):
    n = 1000
    text = str(wm.fma_cap(n, FakeDevice(1e12, 10e9)))   # ridge 100: k = 800, past the H100's cap
    flops = 2 * 800 * n
    assert f"the same chain takes at least {w.seconds(flops / H100.fp32)}, set by its FLOPs" in text


def test_fma_cap_quotes_the_reference_run_of_multiplications(monkeypatch):
    import brrr.reference
    records = [{"variant": "fused", "op": "mul", "repeat": r, "n": 2 ** 20, "flops": r * 2 ** 20,
                "nbytes": 8 * 2 ** 20, "seconds": 2 * r * 2 ** 20 / 67e12} for r in (16, 256)]
    records.append({"variant": "eager", "op": "mul", "repeat": 512, "n": 2 ** 20, "flops": 1, "nbytes": 1,
                    "seconds": 1.0})
    monkeypatch.setattr(brrr.reference, "load", lambda *args, **kwargs: [FakeRun(records)])
    text = str(wm.fma_cap(1000, CPU))
    assert "its fused chain of 256 on 1,048,576 elements" in text   # the longest fused one, not the eager one
    assert f"took {w.seconds(2 * 256 * 2 ** 20 / 67e12)}, 2 times the roofline's" in text
    assert "(2026-11-22)" in text and "NVIDIA H100 80GB HBM3" in text


def test_fma_check_reasons():
    large, small = wm.fma_cap(2 ** 26, CPU), wm.fma_cap(2 ** 10, CPU)
    slow = wm.check(timing(2 * large.facts["seconds"]), large, "The chain")
    assert slow.facts["outcome"] == "slower" and "costs up to half the peak" in str(slow)
    assert "keep the multiply and the add apart" in str(slow) and "idle between links" not in str(slow)
    # on a GPU the chapter's chain is op="ffma", one FMA instruction a link: no reason blames the split multiply
    # and add the kernel no longer does, nor latency, which a GPU's warps hide
    gpu = wm.fma_cap(2 ** 26, FakeDevice(on_gpu=True))
    gpu_slow = str(wm.check(timing(2 * gpu.facts["seconds"]), gpu, "The chain"))
    assert "apart" not in gpu_slow and "waits for the result" not in gpu_slow and "Nsight Compute" in gpu_slow
    same = wm.check(1.1 * large.facts["seconds"], large)
    assert same.facts["outcome"] == "as predicted" and "within 10%" in str(same)
    assert "caches" in str(wm.check(small.facts["seconds"] / 2, small))
    assert "the peak is itself a measurement" in str(wm.check(large.facts["seconds"] / 2, large))
    assert wm.check is worked.check and not set(wm.REASONS) & (set(worked.REASONS) | set(wn.REASONS))


# --- Chapter 5 -----------------------------------------------------------------------------------

def test_chain_checkpoint_memory_bound():
    """Item 7 (H200 review): early stop reruns k - 1 GELUs, not k: (7 x 8 + 4 x 12) / 80 = 1.3, not 7/5."""
    n = 2 ** 20
    p = wm.chain_checkpoint(4, n, CPU)
    assert p.facts["ratio"] == pytest.approx(104 / 80) and p.facts["flop_ratio"] == pytest.approx(79 / 64)
    assert p.facts["seconds"] == pytest.approx(4 * 20 * n / 20e9)
    assert p.facts["kept"] == 4 * MiB and p.facts["plain"] == 16 * MiB
    text = str(p)
    assert "4 arrays of 4 MiB, 16 MiB" in text and "four times less" in text
    assert "(7 × 5 + 4 × 11) / (4 × (5 + 11)) = 1.23" in text and "both **memory-bound**" in text
    assert "(7 × 8 + 4 × 12) / (4 × 20) = **1.3**, not 1.23" in text and "7/5" not in text
    assert "so 3 GELUs run again" in text
    assert f"{w.seconds(80 * n / H100.bandwidth)} and {w.seconds(104 * n / H100.bandwidth)}" in text
    assert "No reference GPU run of checkpointed GELU chains" in text


def test_chain_checkpoint_compute_bound():
    p = wm.chain_checkpoint(4, 1000, LOW_RIDGE)
    assert p.facts["ratio"] == pytest.approx(79 / 64)
    assert "the forward pass compute-bound, the backward pass compute-bound" in str(p)
    assert f"gives **{w.number(79 / 64)}**" in str(p) and "7/5" not in str(p)


def test_chain_checkpoint_check_outcomes():
    p = wm.chain_checkpoint(4, 2 ** 20, CPU)
    t = p.facts["seconds"]
    same = wm.chain_checkpoint_check(2 * t, timing(2 * t * 1.31, NOISY), p)   # added 31% against 30%
    assert same.facts["outcome"] == "as predicted" and same.facts["extra"] == pytest.approx(0.31)
    assert "the recomputation added 31% to the step, within 3.3% of the roofline's 30%." in str(same)
    assert "a GELU's backward pass cost 1.42 times its forward pass" in str(same)   # 3 / (4 x 0.31) - 1
    assert "where the bytes give 1.5 and the FLOPs 2.2." in str(same)
    assert "ran at 50% of the speed the roofline allows." in str(same) and "noisy" not in str(same)
    assert "Comparing the fastest samples" in str(same)
    dear = wm.chain_checkpoint_check(t, timing(1.6 * t, NOISY), p)
    assert dear.facts["outcome"] == "dearer" and "added 60% to the step, more than the roofline's 30%" in str(dear)
    assert "noisy" in str(dear) and "backward pass cost 0.25 times" in str(dear)
    assert "ran at 100% of the speed the roofline allows." in str(dear)
    cheap = wm.chain_checkpoint_check(timing(10 * t), 11.5 * t, p)   # added 15%: the backward cost 4 forwards
    assert cheap.facts["outcome"] == "cheaper" and "less than the roofline's 30%" in str(cheap)
    assert "cost 4 times its forward pass" in str(cheap)
    assert "ran at 10% of the speed the roofline allows: far below it" in str(cheap)
    assert "on a CPU" not in str(cheap)   # item 9: no CPU explanation on any device
    double = wm.chain_checkpoint_check(t, 2.5 * t, p)   # more than the rerun passes can add: no backward cost to infer
    assert double.facts["outcome"] == "dearer" and "Read the other way" not in str(double)
    faster = wm.chain_checkpoint_check(timing(2 * t), t, p)
    assert faster.facts["outcome"] == "faster" and faster.facts["ratio"] == pytest.approx(0.5)
    assert "as long as the plain one: less time, not more" in str(faster) and "added" not in str(faster)
    assert "Read the other way" not in str(faster)
    assert "fit only" not in str(same) + str(dear) + str(cheap) + str(faster)
    few = Timing(samples=[2.62 * t] * 4, floor=1e-7, backend="cpu", mode="hot",
                 warnings=["few samples: only 4 samples fit in the 500 ms budget (min_samples=5), ..."])
    rough = wm.chain_checkpoint_check(timing(2 * t), few, p)            # review B:M3: as predicted, from 4 samples
    assert rough.facts["outcome"] == "as predicted" and "1.31 times as long" in str(rough)
    assert "The timer fit only four samples of a step" in str(rough)


def test_chain_checkpoint_check_compares_fastest_samples():
    """Item 9 (H200 review): the ratio comes from the fastest samples, not from noisy medians."""
    p = wm.chain_checkpoint(4, 2 ** 20, CPU)
    t = p.facts["seconds"]
    plain = Timing(samples=[t, 3 * t, 3 * t], floor=1e-7, backend="cpu", mode="hot", warnings=[])
    ck = Timing(samples=[1.3 * t, 5 * t, 5 * t], floor=1e-7, backend="cpu", mode="hot", warnings=[])
    assert wm.chain_checkpoint_check(plain, ck, p).facts["ratio"] == pytest.approx(1.3)


# --- Chapter 6 -----------------------------------------------------------------------------------

def test_separable_answer(no_reference):
    p = wm.separable(128, 56, 3, CPU)
    ops = p.facts["ops"]
    assert list(ops) == ["standard 3x3", "depthwise 3x3", "pointwise 1x1"]
    assert ops["pointwise 1x1"] == (2 * 128 * 128 * 56 ** 2, 4 * (128 * 128 + 2 * 128 * 56 ** 2))
    assert p.facts["regimes"] == {"standard 3x3": "compute-bound", "depthwise 3x3": "memory-bound",
                                  "pointwise 1x1": "compute-bound"}
    t = {name: max(f / 100e9, b / 20e9) for name, (f, b) in ops.items()}
    pair = t["depthwise 3x3"] + t["pointwise 1x1"]
    assert p.facts["speedup"] == pytest.approx(t["standard 3x3"] / pair)
    assert p.facts["flop_ratio"] == pytest.approx(9 * 128 / (9 + 128))
    text = str(p)
    assert text.startswith("`pointwise 1x1` does 102,760,448 FLOPs")
    assert f"**{w.number(t['standard 3x3'] / pair)} times faster** here" in text
    assert f"**{w.percent(t['depthwise 3x3'] / pair)} of its least time**, because it is memory-bound" in text
    assert "No reference GPU run of the pointwise convolution at this size" in text
    assert "compute-bound here too" in str(wm.separable(128, 56, 3, LOW_RIDGE))


def test_separable_check_outcomes():
    p = wm.separable(128, 56, 3, CPU)
    t = p.facts["seconds"]
    s, d, pw = t["standard 3x3"], t["depthwise 3x3"], t["pointwise 1x1"]
    same = wm.separable_check(s, d, pw, p)
    assert same.facts["outcome"] == "as predicted" and "within 1% of the roofline's" in str(same)   # B2:N11
    assert "`standard 3x3` ran at 100%, `depthwise 3x3` ran at 100% and `pointwise 1x1` ran at 100%" in str(same)
    small = wm.separable_check(s, timing(10 * d, NOISY), pw, p)
    assert small.facts["outcome"] == "smaller" and f"less than the roofline's {w.number(p.facts['speedup'])}." in str(small)
    assert small.facts["shares"]["depthwise 3x3"] == pytest.approx(0.1) and "noisy" in str(small)
    assert "`depthwise 3x3` ran at 10%" in str(small)
    assert f"took {w.percent(10 * d / (10 * d + pw))} of the pair's time" in str(small)
    large = wm.separable_check(3 * s, d, pw, p)
    assert large.facts["outcome"] == "larger" and "`standard 3x3` ran at 33%" in str(large)
    slower = wm.separable_check(s, s, s, p)   # the pair took twice the standard's time
    assert slower.facts["speedup"] == pytest.approx(0.5) and "0.5 times" not in str(slower)
    assert f"2 times as long, no faster at all, where the roofline predicts {w.number(p.facts['speedup'])} times " \
           "faster." in str(slower)


# --- Chapter 7 -----------------------------------------------------------------------------------

def test_softmax_row(no_reference):
    p = wm.softmax_row(8, 12, 128, CPU)
    elements = 8 * 12 * 128 * 128
    assert p.facts["flops"] == 5 * elements and p.facts["nbytes"] == 8 * elements
    assert p.facts["regime"] == "memory-bound" and p.facts["seconds"] == pytest.approx(8 * elements / 20e9)
    text = str(p)
    assert "8 × 12 × 128 × 128 = 1,572,864 elements" in text and "0.625 FLOP/byte" in text
    assert "**memory-bound**" in text and "8 times fewer FLOP/s than the peak" in text   # ridge 5 / 0.625
    assert f"{w.times(H100_RIDGE / 0.625)} fewer FLOP/s than its FP32 peak" in text
    assert "No reference GPU run of this softmax" in text
    low = str(wm.softmax_row(1, 1, 16, LOW_RIDGE))
    assert "**compute-bound**" in low and "could run at the peak FLOP/s here" in low
    slow = wm.check(timing(3 * p.facts["seconds"]), p, "The softmax row")
    assert slow.facts["outcome"] == "slower" and "more than once" in str(slow) and "other programs" not in str(slow)
    assert wm.check(1.1 * p.facts["seconds"], p).facts["outcome"] == "as predicted"
    fast = wm.check(p.facts["seconds"] / 2, p)   # 12 MiB, cache 32 MiB
    assert fast.facts["outcome"] == "faster" and "fit in the caches" in str(fast)   # A2:C1


def test_softmax_reasons_name_the_fixed_cost_only_where_it_matters(no_reference):
    """B2:N5: a measured fixed cost is a reason only at 5% of the least time or more."""
    t = wm.softmax_row(8, 12, 128, CPU).facts["seconds"]
    unknown = wm.check(3 * t, wm.softmax_row(8, 12, 128, CPU))
    assert "each call also pays a fixed cost (Chapter 3)" in str(unknown)
    small = wm.check(3 * t, wm.softmax_row(8, 12, 128, CPU, fixed_cost=t / 1000))
    assert "fixed cost (" not in str(small) and "is only 0.1% of even the least time" in str(small)
    # H200 review 07_08 items 15, 16: no unmeasured load, and a profile's fixed cost is not Chapter 3's
    assert "other programs" not in str(small) + str(unknown)
    big = wm.check(3 * t, wm.softmax_row(8, 12, 128, CPU, fixed_cost=t / 10))
    assert f"a call this short also pays a fixed cost ({w.seconds(t / 10)} as this page measured it, 10% of the least " \
        "time)" in str(big) and "other programs" not in str(big) and "Chapter 3," not in str(big)


def test_softmax_row_quotes_a_reference_run_of_the_same_size(monkeypatch):
    import brrr.reference
    nbytes = 8 * 8 * 12 * 128 * 128
    run = FakeRun([{"op": "_softmax", "nbytes": nbytes, "seconds": 5e-6}, {"op": "_softmax", "nbytes": 8,
                                                                         "seconds": 1.0}])
    monkeypatch.setattr(brrr.reference, "load", lambda *args, **kwargs: [run])
    assert "took 5 µs for this softmax." in str(wm.softmax_row(8, 12, 128, CPU))


# --- The live device and the shipped references --------------------------------------------------

def test_answers_on_the_live_device():
    import brrr
    dev = brrr.device()
    for p in (wm.fma_cap(2 ** 22, dev), wm.chain_checkpoint(4, 2 ** 20, dev), wm.separable(128, 56, 3, dev),
              wm.softmax_row(1, 12, 128, dev)):
        assert p.facts["problem"] and "nan" not in str(p) and "H100" in str(p)
        assert p.facts.get("seconds")
    assert wm.softmax_row(1, 12, 128, dev).facts["regime"] in ("memory-bound", "compute-bound")
