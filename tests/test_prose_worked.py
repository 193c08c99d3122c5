"""The worked problems of Chapters 1 to 3 (brrr.prose.worked) and their collapsed answers (brrr.book.answer).

The devices and times here are made up, not measurements: each test picks numbers that force one
wording and checks the text states the numbers the arithmetic gives and the outcome it calls for.
"""
import re

import pytest

from brrr import Timing, book
from brrr.prose import words as w
from brrr.prose import worked
from worked_fakes import CPU, H100, FakeDevice


def timing(seconds, warnings=()):
    return Timing(samples=[seconds] * 5, floor=1e-7, backend="cpu", mode="flush", warnings=list(warnings))


# --- the answers ---------------------------------------------------------------------------------

def test_roofs_are_the_device_and_the_h100_spec_sheet():
    here, ref = worked.roofs(CPU)
    assert (here.peak_flops, here.peak_bandwidth, here.ridge) == (100e9, 20e9, 5)
    assert (ref.peak_flops, ref.peak_bandwidth, ref.name) == (H100.fp32, H100.bandwidth, "NVIDIA H100 SXM")


def test_matmul_time_on_a_cpu():
    p = worked.matmul_time(100, CPU)
    t, t_ref = 2e6 / 100e9, 2e6 / H100.fp32
    assert p.facts == {"problem": "matmul", "seconds": pytest.approx(t), "n": 100}
    text = str(p)
    assert "2n³ = 2,000,000 FLOPs" in text and f"**{w.seconds(t)}**" in text
    assert "measured on this CPU" in text and f"**{w.seconds(t_ref)}**, {w.times(t / t_ref)} faster than here" in text
    assert "reference run" not in text   # no reference run has n = 100


def test_matmul_time_quotes_the_reference_run_where_one_has_that_size():
    seconds, run = worked.reference_seconds("matmul_vs_size", n=1024, dtype="float32")
    text = str(worked.matmul_time(1024, CPU))
    assert f"The book's reference run on an {run.meta['device']['name']}" in text
    assert f"took {w.seconds(seconds)} at this size" in text


@pytest.mark.parametrize("dev, whence, relation", [
    (FakeDevice(H100.fp32, H100.bandwidth, True, H100, H100.source), "its spec sheet", ", the same as here"),
    (FakeDevice(1e15, 1e13, True, None, "unknown GPU: derived"), "derived from its clocks", "as long as here"),
])
def test_matmul_time_on_gpus(dev, whence, relation):
    text = str(worked.matmul_time(100, dev))
    assert whence in text and relation in text


def test_matmul_ridge():
    p = worked.matmul_ridge(CPU)
    assert p.facts["n"] == 30 and p.facts["reference_n"] == round(6 * H100.fp32 / H100.bandwidth)
    assert "**n = 30**" in str(p) and f"n = {w.integer(round(6 * H100.tf32_tensor / H100.bandwidth))}" in str(p)
    # The ridge comes from the unrounded peaks, so the printed division is approximate and says so.
    assert "100 GFLOP/s / 20 GB/s ≈ 5 FLOP/byte (from the unrounded peaks)" in str(p)


@pytest.mark.parametrize("dev, word", [(CPU, "smaller than here"), (FakeDevice(1e15, 1e9), "larger than here")])
def test_elementwise_vs_matmul(dev, word):
    n = 64
    p = worked.elementwise_vs_matmul(n, dev)
    ratio = (2 * n ** 3 / dev.flops) / (8 * n ** 2 / dev.peak_bandwidth)
    assert p.facts["ratio"] == pytest.approx(ratio)
    assert p.facts["seconds"] == pytest.approx(8 * n * n / dev.peak_bandwidth)
    assert f"**{w.number(ratio)}**, not 128" in str(p) and word in str(p)


def test_stream_times():
    copy = worked.stream_time("copy", 2 ** 26, CPU)
    assert copy.facts["seconds"] == pytest.approx(8 * 2 ** 26 / 20e9) and copy.facts["nbytes"] == 8 * 2 ** 26
    seconds, _ = worked.reference_seconds("measure_roofline", op="copy", nbytes=float(8 * 2 ** 26))
    assert "512 MiB in all" in str(copy) and w.seconds(seconds) in str(copy)
    triad = worked.stream_time("triad", 1000, CPU)
    assert triad.facts["seconds"] == pytest.approx(12000 / 20e9) and "1/6 FLOP/byte" in str(triad)
    assert "reference run" not in str(triad)


def test_two_ops_regimes_here_and_on_the_reference():
    p = worked.two_ops(4096, 64, CPU)   # B @ B: 64/6 FLOP/byte, above this ridge (5), below the H100's (20)
    assert p.facts["regimes"] == {"A @ v": "memory-bound", "B @ B": "compute-bound"}
    b_part = str(p).split("\n\n")[1]
    assert "**compute-bound** here" in b_part and "(ridge 20) memory-bound" in b_part


def test_overhead_answers():
    tiny = worked.tiny_add(16, 1e-6, CPU, "numpy")
    assert tiny.facts["seconds"] == 1e-6 and tiny.facts["roofline"] == pytest.approx(192 / 20e9)
    assert "**1 µs**" in str(tiny) and "`numpy`" in str(tiny)
    cross = worked.add_crossover(1e-6, CPU)
    assert cross.facts["n"] == 1667 and cross.facts["seconds"] == 2e-6
    assert "**1,667 elements**" in str(cross) and f"n = {w.integer(round(1e-6 * H100.bandwidth / 12))}" in str(cross)


def test_add_crossover_on_a_gpu_predicts_the_larger_of_the_two_not_their_sum():
    # Calls back to back on a GPU overlap the host's cost with the kernel's: at the crossover a call takes about
    # the fixed cost, not twice it (the H200's torch.add took 0.97 times its fixed cost there).
    gpu = worked.add_crossover(1e-6, FakeDevice(on_gpu=True))
    assert gpu.facts["seconds"] == 1e-6 and gpu.facts["overlapped"] and "twice" not in str(gpu)
    assert "add" in str(worked.add_crossover(1e-6, CPU)) and not worked.add_crossover(1e-6, CPU).facts["overlapped"]


def per_sample(peak, bandwidth, width=128, depth=4):
    """Each layer's Linear at the peak (compute-bound here) and its ReLU's 8 bytes a float at the bandwidth."""
    return depth * (2 * width ** 2 / peak + 8 * width / bandwidth)


def test_batch_to_amortise():
    p = worked.batch_to_amortise(72e-6, 128, 4, CPU)   # kernels one after another: their bounds add, 47.5 samples
    assert p.facts["batch"] == round(72e-6 / per_sample(100e9, 20e9)) == 48
    assert p.facts["seconds"] == pytest.approx(144e-6) and "**48**" in str(p)
    assert "At this device's peaks that work" in str(p) and "split evenly" not in str(p)
    assert worked.batch_to_amortise(1e-9, 128, 4, CPU).facts["batch"] == 2   # never below 2


def test_batch_to_amortise_holds_the_peak_to_the_threads_the_sweep_used(monkeypatch):
    monkeypatch.setattr(worked, "_cpu_threads", lambda: 2)
    one = worked.batch_to_amortise(72e-6, 128, 4, CPU, threads=1)   # 50 GFLOP/s: 72e-6 * 5e10 / 131072 = 27.5
    assert one.facts["batch"] == round(72e-6 / per_sample(50e9, 20e9)) and one.facts["threads"] == 1
    assert one.facts["peak_share"] == 0.5
    text = str(one)
    assert "held PyTorch to one of this CPU's 2 threads" in text and "one thread can do about 50 GFLOP/s" in text
    assert f"**{one.facts['batch']}**" in text
    every = worked.batch_to_amortise(72e-6, 128, 4, CPU, threads=2)   # all the threads: the peak as measured
    assert every.facts["batch"] == 48 and every.facts["threads"] is None and "split evenly" not in str(every)
    gpu = worked.batch_to_amortise(72e-6, 128, 4, FakeDevice(on_gpu=True), threads=1)   # a GPU's peak is its own
    assert gpu.facts["peak_share"] == 1 and "split evenly" not in str(gpu)


def test_batch_to_amortise_sums_each_kernels_bound_and_overlaps_on_a_gpu():
    # One bound for the whole pass (the max of summed FLOPs and summed bytes) would let the ReLUs' bytes hide behind
    # the matmuls' arithmetic; kernels that run one after another do not overlap, so the batch is smaller.
    one_bound = round(72e-6 / max(4 * 2 * 128 ** 2 / 100e9, 4 * 16 * 128 / 20e9))
    assert worked.batch_to_amortise(72e-6, 128, 4, CPU).facts["batch"] < one_bound
    # On a GPU the host's cost and the kernels' overlap: where the work reaches the batch-1 time, the pass should
    # take about that time, not twice it.
    gpu = worked.batch_to_amortise(72e-6, 128, 4, FakeDevice(on_gpu=True))
    assert gpu.facts["seconds"] == 72e-6 and "twice" not in str(gpu)



# --- the checks ----------------------------------------------------------------------------------

def test_check_outcomes():
    answer = worked.matmul_time(100, CPU)
    t = answer.facts["seconds"]
    same = worked.check(1.1 * t, answer, "The matmul")
    assert same.facts["outcome"] == "as predicted" and "within 10% of the predicted" in str(same)
    slow = worked.check(timing(3 * t), answer)
    assert slow.facts["outcome"] == "slower" and "3 times the predicted" in str(slow)
    assert "the next section measures how near it gets" in str(slow)   # how to test it
    assert "other programs" not in str(slow)   # no contention is claimed without a measurement of it
    fast = worked.check(t / 2, answer)
    assert fast.facts["outcome"] == "faster" and "2 times faster than the predicted" in str(fast)
    assert "tensor cores" in str(fast)


def test_check_says_whether_the_arrays_fit_in_the_caches():
    small, large = worked.stream_time("copy", 1000, CPU), worked.stream_time("copy", 2 ** 26, CPU)
    assert "caches" in str(worked.check(small.facts["seconds"] / 2, small))
    text = str(worked.check(large.facts["seconds"] / 2, large))
    assert "caches" not in text and "the peak is itself a measurement" in text
    assert "not what a kernel gets" in str(worked.check(1.0, worked.stream_time("triad", 1000, CPU)))


def test_check_batch_reasons_depend_on_the_device(monkeypatch):
    monkeypatch.setattr(worked, "_cpu_threads", lambda: 2)
    cpu, gpu = (worked.batch_to_amortise(72e-6, 128, 4, d, threads=1) for d in (CPU, FakeDevice(on_gpu=True)))
    # The prediction already held the peak to one thread: a slower run says that share is an estimate, no more.
    assert "one thread's even share of a peak" in str(worked.check(1.0, cpu))
    assert "the more so" not in str(worked.check(1.0, cpu)) and "thread" not in str(worked.check(1.0, gpu))
    assert "thread" not in str(worked.check(1.0, worked.batch_to_amortise(72e-6, 128, 4, CPU)))
    assert "host issued" not in str(worked.check(1e-6, gpu))   # the GPU prediction already overlaps the two
    # A batch's time is no roofline bound: a faster run is not above any roof.
    fast = worked.check(1e-6, cpu)
    assert fast.facts["outcome"] == "faster" and not fast.facts["above_roof"] and "roof" not in str(fast)


def test_check_says_when_a_run_beat_the_roofline():
    answer = worked.matmul_time(100, CPU)   # the roofline's least time
    t = answer.facts["seconds"]
    under = worked.check(0.93 * t, answer, "The matmul")
    assert under.facts["outcome"] == "as predicted" and under.facts["above_roof"]
    assert "within 7% of the predicted" in str(under)
    assert "and below it, which the roofline does not allow" in str(under)
    assert "a measured roof, not a hardware limit" in str(under)
    over = worked.check(1.07 * t, answer)
    assert not over.facts["above_roof"] and str(over).endswith(f"of the predicted {w.seconds(t)}.")
    fast = worked.check(t / 2, answer)
    assert fast.facts["above_roof"] and "the roofline's least time, so above the roof: on a CPU" in str(fast)
    small = worked.stream_time("copy", 1024, CPU)   # 8 KiB: the caches, not a measured roof
    cached = str(worked.check(0.9 * small.facts["seconds"], small))
    assert "below it" in cached and "8 KiB fit in the caches" in cached   # A2:C1: it fits whole
    tiny = worked.tiny_add(16, 1e-6, CPU)   # a fixed cost, not a bound: 10% under it is just as predicted
    assert str(worked.check(0.9e-6, tiny)).count("below it") == 0


def test_why_above_and_beyond_roof():
    assert "8 KiB fit in the 32 MiB of cache" in worked.why_above(8192, 32 * 2 ** 20, True)   # A2:C1: wholly
    assert "48 MiB fit, at least in part, in the 32 MiB of cache" in worked.why_above(48 * 2 ** 20, 32 * 2 ** 20, True)
    assert worked.fit_words(32 * 2 ** 20, 32 * 2 ** 20) == "fit in" and worked.fit_words(None, 1) != "fit in"
    assert "this CPU's own measurement" in worked.why_above(2 ** 30, 32 * 2 ** 20, True)
    assert "spec sheet is a hardware limit" in worked.why_above(2 ** 30, 32 * 2 ** 20, False)
    assert "on a CPU the roof is itself a measurement" in worked.why_above()
    assert worked.beyond_roof({"the fused kernel": 0.52, "the unfused chain": 1.0}) == ""
    one = worked.beyond_roof({"the fused kernel": 0.52, "the unfused chain": 1.02}, {"the unfused chain": 2 ** 30},
                             32 * 2 ** 20, True)
    assert one == (" the unfused chain (102%) ran above its roof, faster than the roofline allows: the roof is "
                   "this CPU's own measurement (the best that brrr timed when it first met it), not a hardware "
                   "limit, and a run can beat it.")
    two = worked.beyond_roof({"a": 1.5, "b": 1.2}, {"a": 1024, "b": 2048}, 32 * 2 ** 20, False)
    assert "a (150%) and b (120%) ran above their roof" in two and "their 2 KiB fit" in two


def test_check_puts_the_roofline_beside_the_fixed_cost():
    text = str(worked.check(1.5e-6, worked.tiny_add(16, 1e-6, CPU)))
    assert "1.5 times the predicted 1 µs" in text and "side by side" in text
    assert "another moment" not in text and "what else the machine" not in text   # no unmeasured cause
    assert f"That is {w.times(1.5e-6 / (192 / 20e9))} the roofline's" in text


def test_noisy_timings_are_named_only_when_they_matter():
    answer = worked.matmul_time(100, CPU)
    t = answer.facts["seconds"]
    noisy = ["noisy: the middle half of the samples spans 30% of the median"]
    assert "timer found the samples noisy" in str(worked.check(timing(3 * t, noisy), answer))
    assert "noisy" not in str(worked.check(timing(3 * t), answer))
    assert "noisy" not in str(worked.check(timing(t, noisy), answer))   # as predicted: nothing to explain


def test_ridge_check_outcomes():
    sizes = [30, 120, 480]
    at_peak = [2 * n ** 3 / 100e9 for n in sizes]
    near = worked.ridge_check([timing(t) for t in at_peak], sizes, CPU)
    assert near.facts["outcome"] == "near" and str(near).endswith("it reached 100%.")
    late = worked.ridge_check([at_peak[0] * 20, at_peak[1] * 5, at_peak[2]], sizes, CPU)
    assert late.facts["outcome"] == "below" and "only 5% of the peak, 20 times slower" in str(late)
    assert "*can* become compute-bound" in str(late)
    assert "fixed cost" not in str(late) and "SMs" not in str(late)   # no cause the page did not measure
    never = worked.ridge_check([t * 20 for t in at_peak], sizes, CPU)
    assert "must be larger still" in str(never) and never.facts["shares"][-1] == pytest.approx(0.05)
    assert "other programs" not in str(never)


def test_ratio_check_outcomes():
    answer = worked.elementwise_vs_matmul(64, CPU)   # predicted ratio 3.2
    t_x, t_mm = answer.facts["seconds"], answer.facts["seconds"] * answer.facts["ratio"]
    same = worked.ratio_check(t_mm, t_x, answer)
    assert same.facts["outcome"] == "as predicted" and "nowhere near the 128" in str(same)
    small = worked.ratio_check(timing(t_mm), timing(2 * t_x), answer)
    assert small.facts["outcome"] == "smaller" and "because" not in str(small)   # no cause from two different roofs
    assert "`x * 2` ran at 50%" in str(small)
    large = worked.ratio_check(4 * t_mm, t_x, answer)
    assert large.facts["outcome"] == "larger" and "because" not in str(large)
    assert "the matmul at 25%" in str(large)


def test_two_ops_check_outcomes():
    answer = worked.two_ops(4096, 64, CPU)
    (mv_flops, mv_bytes), (mm_flops, mm_bytes) = answer.facts["ops"].values()
    matvec, matmul = mv_bytes / 20e9, mm_flops / 100e9   # each at its own roof
    ok = worked.two_ops_check(timing(matvec), timing(matmul), answer, CPU)
    assert ok.facts["outcome"] == "near" and "`A @ v` ran at 100% of its roof, the peak bandwidth" in str(ok)
    assert "`B @ B` ran at 100% of its roof, the peak FLOP/s" in str(ok) and str(ok).endswith("as predicted.")
    above = worked.two_ops_check(matvec / 1.5, matmul, answer, CPU)
    assert above.facts["outcome"] == "near" and "150% of its roof" in str(above)
    # one sentence, each run named once: not "both near their roofs" and then "above" for the same run
    assert ("`B @ B` ran at 100% of its roof, the peak FLOP/s: `B @ B` near its roof, as predicted, and `A @ v` "
            "above its own, faster than the roofline allows: its 64 MiB") in str(above)
    assert "both near" not in str(above) and str(above).count("150%") == 1
    assert "its 64 MiB fit, at least in part, in the 32 MiB of cache" in str(above)   # under 4 times the cache
    assert above.facts["above_roof"] and not ok.facts["above_roof"]
    measured = worked.two_ops_check(matvec / 1.5, matmul, answer, FakeDevice(l2=2 ** 20))   # 64 MiB, 1 MiB of cache
    assert "`A @ v` above its own" in str(measured) and "this CPU's own measurement" in str(measured)
    twice = worked.two_ops_check(matvec / 1.5, matmul / 1.2, answer, CPU)
    assert "both above their roofs, faster than the roofline allows: their" in str(twice)
    assert twice.facts["outcome"] == "near" and twice.facts["above_roof"]
    one = worked.two_ops_check(timing(3 * matvec, ["noisy: ..."]), matmul, answer, CPU)
    assert one.facts["outcome"] == "below" and one.facts["shares"]["A @ v"] == pytest.approx(1 / 3)   # B2:N5
    assert "33% of its roof" in str(one) and ": below for `A @ v` and near for `B @ B`." in str(one)
    assert "timer found" in str(one)
    # Half the roof is below it, for both: each run gets its verdict, none is dropped (review 01_02 item 10).
    halves = worked.two_ops_check(matvec / 0.44, matmul / 0.51, answer, CPU)
    assert halves.facts["outcome"] == "below" and ": below for `A @ v` and `B @ B`." in str(halves)
    assert "the caches" not in str(halves) and "other programs" not in str(halves)
    both = worked.two_ops_check(5 * matvec, 5 * matmul, answer, CPU)
    assert both.facts["outcome"] == "far" and "far below for `A @ v` and `B @ B`" in str(both)
    mixed = worked.two_ops_check(3 * matvec, 5 * matmul, answer, CPU)
    assert mixed.facts["outcome"] == "far" and "far below for `B @ B` and below for `A @ v`." in str(mixed)


def test_two_ops_check_names_the_fixed_cost_only_where_it_matters():
    """B2:N5: a measured fixed cost is named as a reason only at 5% or more of the shorter slow call."""
    answer = worked.two_ops(4096, 64, CPU)
    (_, mv_bytes), (mm_flops, _) = answer.facts["ops"].values()
    matvec, matmul = 3 * mv_bytes / 20e9, mm_flops / 100e9        # A @ v at a third of its roof
    unknown = str(worked.two_ops_check(matvec, matmul, answer, CPU))
    assert unknown.endswith("The roofline leaves out the fixed cost of a call (Chapter 3).")
    small = str(worked.two_ops_check(matvec, matmul, answer, CPU, fixed_cost=matvec / 100))
    assert "leaves out" not in small
    assert f"The fixed cost of a call, {w.seconds(matvec / 100)}, is only 1% of that call's time." in small
    big = str(worked.two_ops_check(matvec, matmul, answer, CPU, fixed_cost=matvec / 10))
    assert f"The roofline leaves out the fixed cost of a call, {w.seconds(matvec / 10)}, which is 10%" in big


def test_two_ops_check_never_blames_a_fixed_cost_longer_than_the_call():
    """H200 review 05_06 item 11: a depthwise call timed at 8.51 µs was said to be held back by an
    11.3 µs fixed cost. A fixed cost longer than the call is not in its timing (two clocks)."""
    answer = worked.two_ops(4096, 64, CPU)
    (_, mv_bytes), (mm_flops, _) = answer.facts["ops"].values()
    matvec, matmul = 3 * mv_bytes / 20e9, mm_flops / 100e9
    for dev in (CPU, FakeDevice(on_gpu=True)):
        text = str(worked.two_ops_check(matvec, matmul, answer, dev, fixed_cost=2 * matvec))
        assert "leaves out" not in text
        assert f"{w.seconds(2 * matvec)}, timed on the host, is longer than the {w.seconds(matvec)}" in text
        assert ("GPU's own clock" in text) == dev.on_gpu


# --- the collapsed answer ------------------------------------------------------------------------

def test_answer_is_a_details_block_with_escaped_markdown():
    p = worked.matmul_time(100, CPU)
    a = book.answer(p)
    html = a._repr_html_()[0]
    assert html.startswith('<details class="brrr-answer">\n<summary>Answer</summary>') and html.endswith("</details>")
    assert html.count("<p>") == 2 and "<strong>" in html and "**" not in html
    assert a.facts == p.facts and str(p) in repr(a)
    tricky = book.answer("`x * 2` and <b>not bold</b>, *really*, x * 2 * 3", summary="Why?")._repr_html_()[0]
    assert "<code>x * 2</code>" in tricky and "&lt;b&gt;not bold&lt;/b&gt;" in tricky
    assert "<em>really</em>" in tricky and "x * 2 * 3" in tricky and "<summary>Why?</summary>" in tricky
    assert not re.search(r"<em>[^<]*2", tricky)
    with pytest.raises(ValueError, match="needs some text"):
        book.answer("  ")


def test_a_reference_with_the_same_peak_is_the_same_not_about_the_same():
    assert worked._reference(1e-3, 1e-3).endswith("the same as here.") and "about" not in worked._reference(1e-3, 1e-3)
    assert "about the same as here." in worked._reference(1.05e-3, 1e-3)
