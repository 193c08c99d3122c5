"""The worked problems of Chapters 4 to 7 (brrr.prose.worked_networks).

As in test_prose_worked.py, the devices and times are made up: each test picks numbers that force one
wording and checks that the text states what the arithmetic gives and the outcome it calls for.
"""
import math

import pytest

from brrr import Timing
from brrr.experiments.recompute_checkpoint import checkpoint_model
from brrr.prose import words as w
from brrr.prose import worked
from brrr.prose import worked_networks as wn
from worked_fakes import CPU, H100, H100_RIDGE, MiB, NOISY, FakeDevice


def timing(seconds, warnings=()):
    return Timing(samples=[seconds] * 5, floor=1e-7, backend="cpu", mode="flush", warnings=list(warnings))


# --- Chapter 4 -----------------------------------------------------------------------------------

def test_fusion_chain_memory_bound_here_and_on_the_reference():
    n = 2 ** 20
    p = wn.fusion_chain(8, n, CPU)
    assert p.facts["speedup"] == pytest.approx(8) and p.facts["nbytes"] == 8 * n
    assert p.facts["unfused"] == pytest.approx(64 * n / 20e9) and p.facts["fused"] == pytest.approx(8 * n / 20e9)
    text = str(p)
    assert f"2 × 8 × {w.integer(n)} × 4 = 64 MiB" in text and "8 MiB, for the same" in text
    assert "8/8 = 1 FLOP/byte, is below" in text and "**memory-bound**" in text and "**8**" in text
    assert text.endswith("the same, since both devices are memory-bound at this k.")


def test_fusion_chain_capped_here_but_not_on_the_reference():
    n = 2 ** 20
    p = wn.fusion_chain(64, n, CPU)   # k/8 = 8: above this ridge (5), below the H100's (about 20)
    assert p.facts["speedup"] == pytest.approx(8 * 100e9 / 20e9)   # 2 s P / B = 40
    text = str(p)
    assert "is above" in text and "**compute-bound**" in text and "**40**" in text
    assert text.endswith("speed-up of 64.")


def test_speedup_check_outcomes():
    answer = wn.fusion_chain(8, 2 ** 26, CPU)   # 256 MiB per array: beyond the caches
    f = answer.facts
    same = wn.speedup_check(f["fused"], f["unfused"] * 1.1, answer)
    assert same.facts["outcome"] == "as predicted" and "within 10% of the roofline's 8." in str(same)
    small = wn.speedup_check(timing(2 * f["fused"]), timing(f["unfused"]), answer)
    assert small.facts["outcome"] == "smaller" and small.facts["speedup"] == pytest.approx(4)
    assert "smaller than the roofline's 8, because the fused kernel ran further below its roof" in str(small)
    assert "the fused kernel at 50% of the speed the roofline allows, the unfused chain at 100%" in str(small)
    assert "caches" not in str(small) and "noisy" not in str(small)
    large = wn.speedup_check(f["fused"], timing(4 * f["unfused"], NOISY), answer)
    assert large.facts["outcome"] == "larger" and "because the unfused chain ran further below" in str(large)
    assert "the unfused chain at 25%" in str(large) and "timer found the samples noisy" in str(large)


def test_speedup_check_names_the_caches_for_a_small_array():
    answer = wn.fusion_chain(8, 2 ** 20, CPU)   # 4 MiB per array, cache 32 MiB
    text = str(wn.speedup_check(answer.facts["fused"], 2 * answer.facts["unfused"], answer))
    assert "The array, 4 MiB, fits at least in part in the caches" in text


@pytest.mark.parametrize("dev, k_cap, word", [(CPU, 40, "rewards longer chains"),
                                              (FakeDevice(1e12, 1e9), 8000, "caps chains sooner")])
def test_fusion_cap(dev, k_cap, word):
    n = 1000
    p = wn.fusion_cap(n, dev)
    assert p.facts["k_cap"] == k_cap and p.facts["k"] == 2 * k_cap
    assert p.facts["seconds"] == pytest.approx(2 * k_cap * n / dev.flops)
    text = str(p)
    assert f"**k = {w.integer(k_cap)}**" in text and f"**{w.seconds(2 * k_cap * n / dev.flops)}**" in text
    assert f"cap is at k = {w.integer(math.ceil(8 * H100_RIDGE))}" in text and word in text


def test_check_reasons_for_a_long_fused_chain():
    small, large = wn.fusion_cap(2 ** 10, CPU), wn.fusion_cap(2 ** 26, CPU)
    slow = wn.check(3 * large.facts["seconds"], large, "The chain")
    assert slow.facts["outcome"] == "slower" and "at most half the peak" in str(slow) and "idle" not in str(slow)
    assert "caches" in str(wn.check(small.facts["seconds"] / 2, small))
    assert "the peak is itself a measurement" in str(wn.check(large.facts["seconds"] / 2, large))


# --- Chapter 5 -----------------------------------------------------------------------------------

def test_saved_mlp_and_its_check():
    p = wn.saved_mlp(32, 64, CPU)
    assert p.facts["nbytes"] == 20 * 32 * 64   # x (4 B d) and the ReLU's output (16 B d), once each
    assert "In all **40 KiB**" in str(p) and "5 times the input" in str(p)
    assert "peak bandwidth" not in str(p)   # H200 review item 17: no nanoseconds of a write that no call reaches
    exact = wn.saved_check(40960, p)
    assert exact.facts["outcome"] == "as predicted" and "exactly the count" in str(exact)
    more = wn.saved_check(40960 + 1024, p)
    assert more.facts == {"outcome": "more", "difference": 1024} and "1 KiB more than the 40 KiB" in str(more)
    fewer = wn.saved_check(32768, p)
    assert fewer.facts["outcome"] == "fewer" and "8 KiB fewer than the 40 KiB" in str(fewer)


from brrr.experiments.recompute_checkpoint import checkpoint_flop_ratio  # noqa: E402


def test_checkpoint_cost():
    block, inp = 10 * MiB, 1 * MiB
    p = wn.checkpoint_cost(block, inp, 32, 4, 512, 256, CPU)
    flops = 3 * 32 * 16 * 512 * 256 ** 2
    assert p.facts["kept"] == checkpoint_model(block, inp, 32, 4) == 48 * MiB
    assert p.facts["plain"] == 320 * MiB and p.facts["seconds"] == pytest.approx(flops / 100e9)
    text = str(p)
    assert "**48 MiB**" in text and "6.7 times less" in text
    # item 7 (H200 review): early stop skips each of the 8 segments' last matmul: 1 + (1 - 8/64)/3, not 4/3
    assert p.facts["ratio"] == pytest.approx(1 + (1 - 8 / 64) / 3) == checkpoint_flop_ratio(32, 4)
    assert f"**{w.number(p.facts['ratio'])} times as long**" in text and "**4/3 as long**" not in text
    assert w.seconds(flops / H100.fp32) in text and w.seconds(p.facts["ratio"] * flops / H100.fp32) in text


def test_checkpoint_check_outcomes():
    p = wn.checkpoint_cost(10 * MiB, MiB, 32, 4, 512, 256, CPU)
    t = p.facts["seconds"]
    same = wn.checkpoint_check(2 * t, timing(2 * t * 1.31, NOISY), p)
    r = w.number(p.facts["ratio"])
    assert same.facts["outcome"] == "as predicted" and f"within 1.4% of {r}" in str(same)
    assert "ran at 50% of the float32 peak the answer used." in str(same) and "noisy" not in str(same)
    close = wn.checkpoint_check(2 * t, 2 * t * p.facts["ratio"] * 1.0005, p)   # B2:N11: no finer than 1%
    assert f"within 1% of {r}" in str(close) and "0.05%" not in str(close)
    assert wn.within(0) == "within 1%" and wn.within(0.012) == f"within {w.percent(0.012)}"
    dear = wn.checkpoint_check(t, timing(2 * t, NOISY), p)
    assert dear.facts["outcome"] == "dearer" and f"more than {r}" in str(dear) and "noisy" in str(dear)
    assert "stashing" not in str(dear)   # no cause the page did not measure
    cheap = wn.checkpoint_check(t, 1.01 * t, p)
    assert cheap.facts["outcome"] == "cheaper" and f"less than {r}" in str(cheap)
    faster = wn.checkpoint_check(timing(2 * t, NOISY), t, p)
    assert faster.facts["outcome"] == "faster" and faster.facts["ratio"] == pytest.approx(0.5)
    assert "0.5 times as long as the plain one, less time, not more" in str(faster) and "noisy" in str(faster)
    assert "fit only" not in str(same) + str(dear) + str(cheap) + str(faster)


def test_checkpoint_check_says_a_ratio_of_few_samples_is_rough():   # review B:M3
    p = wn.checkpoint_cost(10 * MiB, MiB, 32, 4, 512, 256, CPU)
    t = p.facts["seconds"]
    few = Timing(samples=[2.8 * t, 2.8 * t], floor=1e-7, backend="cpu", mode="hot",
                 warnings=["few samples: only 2 samples fit in the 500 ms budget (min_samples=5), ..."])
    same = wn.checkpoint_check(timing(2.1 * t), few, p)          # 1.33: as predicted (1.29), but from two samples
    assert same.facts["outcome"] == "as predicted" and "1.33 times as long" in str(same)
    assert "The timer fit only two samples of a step" in str(same) and "larger `budget`" in str(same)
    one = Timing(samples=[2.8 * t], floor=1e-7, backend="cpu", mode="hot",
                 warnings=["few samples: only 1 sample fit in the 500 ms budget (min_samples=5), ..."])
    alone = wn.checkpoint_check(timing(2.1 * t), one, p)
    assert "only one sample of a step" in str(alone) and "this ratio is rough" in str(alone)


def test_checkpoint_cost_writes_the_flops_with_a_prefix():          # review B:C7
    p = wn.checkpoint_cost(10 * MiB, MiB, 32, 4, 512, 256, CPU)
    assert "A step does about 51.5 GFLOP (forward" in str(p) and "51,539,607,552" not in str(p)


# --- Chapters 6 and 7 ----------------------------------------------------------------------------

def test_convolutions_count_flops_and_bytes():
    ops = wn.convolutions(128, 56, 3)
    assert ops["standard 3x3"] == (2 * 128 * 128 * 9 * 56 ** 2, 4 * (128 * 128 * 9 + 2 * 128 * 56 ** 2))
    assert ops["depthwise 3x3"] == (2 * 128 * 9 * 56 ** 2, 4 * (128 * 9 + 2 * 128 * 56 ** 2))


def test_ops_answer_and_two_ops_check_on_convolutions():
    p = wn.ops(wn.convolutions(128, 56, 3), CPU, "two convs")
    assert p.facts["regimes"] == {"standard 3x3": "compute-bound", "depthwise 3x3": "memory-bound"}
    standard, depthwise = str(p).split("\n\n")
    assert "**compute-bound** here" in standard and "**memory-bound** here" in depthwise
    assert f"(ridge {w.number(H100_RIDGE)}) memory-bound" in depthwise
    (s_flops, _), (_, d_bytes) = p.facts["ops"].values()
    near = wn.two_ops_check(s_flops / 100e9, d_bytes / 20e9, p, CPU)
    assert near.facts["outcome"] == "near"
    assert "`depthwise 3x3` ran at 100% of its roof, the peak bandwidth" in str(near)
    far = wn.two_ops_check(s_flops / 100e9, 10 * d_bytes / 20e9, p, CPU)
    assert far.facts["outcome"] == "far" and "far below for `depthwise 3x3`" in str(far)


def test_ridge_batch():
    p = wn.ridge_batch(1024, CPU)   # B >= 2 * 5 * 1024 / (1024 - 20) = 10.2
    flops, nbytes = 2 * 11 * 1024 ** 2, 4 * (2 * 11 * 1024 + 1024 ** 2)
    assert p.facts["batch"] == 11 and p.facts["seconds"] == pytest.approx(flops / 100e9)
    b_ref = math.ceil(2 * H100_RIDGE * 1024 / (1024 - 4 * H100_RIDGE))
    assert p.facts["reference_batch"] == b_ref and f"it takes B = {b_ref}" in str(p) and "**B = 11**" in str(p)
    assert p.facts["nbytes"] == nbytes
    small = wn.ridge_batch(64, CPU)   # the H100's ridge needs n > 4 x 20
    assert small.facts["reference_batch"] is None and "no batch is enough at this n" in str(small)
    with pytest.raises(ValueError, match="too small"):
        wn.ridge_batch(16, CPU)
    assert "`brrr.bench`" in str(wn.check(5 * p.facts["seconds"], p))   # how to test it, not a guessed cause


def test_linear_time_and_its_check():
    flops, nbytes = wn.linear(1024, 768, 3072)
    assert (flops, nbytes) == (2 * 1024 * 768 * 3072, 4 * (1024 * 768 + 768 * 3072 + 3072 + 1024 * 3072))
    p = wn.linear_time(1024, 768, 3072, CPU)
    assert p.facts["regime"] == "compute-bound" and p.facts["seconds"] == pytest.approx(flops / 100e9)
    assert "**compute-bound**" in str(p) and f"**{w.seconds(flops / 100e9)}**" in str(p)
    one = wn.linear_time(1, 768, 3072, CPU)
    assert one.facts["regime"] == "memory-bound" and one.facts["seconds"] == pytest.approx(wn.linear(1, 768, 3072)[1]
                                                                                           / 20e9)
    slow = wn.check(timing(2 * p.facts["seconds"]), p, "The layer")
    assert slow.facts["outcome"] == "slower" and "fixed cost per call" in str(slow)


def test_the_checks_are_worked_s():
    assert wn.check is worked.check and wn.two_ops_check is worked.two_ops_check
    assert not {"fused chain", "ridge batch", "linear"} & set(worked.REASONS)   # this module leaves worked's alone
    assert set(wn.REASONS) == {"fused chain", "ridge batch", "linear"}


def test_speedup_check_says_when_a_side_beat_its_roof():
    answer = wn.fusion_chain(8, 2 ** 26, CPU)   # 256 MiB per array: beyond the caches
    f = answer.facts
    text = str(wn.speedup_check(timing(2 * f["fused"]), timing(f["unfused"] / 1.02), answer))
    assert "the unfused chain (102%) ran above its roof, faster than the roofline allows" in text
    assert "the roof is this CPU's own measurement" in text     # the timings ran on the CPU
    assert "ran above" not in str(wn.speedup_check(timing(2 * f["fused"]), timing(f["unfused"]), answer))


def test_ops_answer_names_overhead_bound_below_the_fixed_cost():
    """An op whose least time here is below a call's fixed cost measured on the page is overhead-bound by the
    three-way rule (review 07_08: a one-token Linear was called memory-bound at 2 µs beside a 7 µs fixed cost)."""
    named = wn.convolutions(128, 56, 3)
    bounds = {name: max(f / CPU.peak_flops("float32"), b / CPU.peak_bandwidth) for name, (f, b) in named.items()}
    fixed = (min(bounds.values()) + max(bounds.values())) / 2     # between the two least times
    standard, depthwise = str(wn.ops(named, CPU, "two convs", fixed_cost=fixed)).split("\n\n")
    short, long_ = sorted(bounds, key=bounds.get)
    texts = {"standard 3x3": standard, "depthwise 3x3": depthwise}
    assert "**overhead-bound**" in texts[short] and "**overhead-bound**" not in texts[long_]
    assert "overhead-bound" not in str(wn.ops(named, CPU, "two convs"))
