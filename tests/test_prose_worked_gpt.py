"""The worked problems of Chapter 8 (brrr.prose.worked_gpt).

As in test_prose_worked_networks.py, the devices and times are made up: each test picks numbers that force one
wording and checks that the text states what the arithmetic gives (counted here by hand) and the outcome it calls
for. The last tests run the answers on the live device and read a real profile of a tiny model, with no timing.
"""
import math

import pandas as pd
import pytest

from brrr import Timing
from brrr.gpt import GPT2_SMALL, GPTConfig
from brrr.prose import Prose
from brrr.prose import words as w
from brrr.prose import worked_gpt as wg
from worked_fakes import CPU, H100, NOISY, FakeDevice

TINY = GPTConfig(n_layer=2, n_head=2, d_model=64, vocab=512, context=64)
TINY_PARAMS = 512 * 64 + 64 * 64 + 2 * (12 * 64 * 64 + 13 * 64) + 2 * 64    # 136,960
GPT2_PER_TOKEN_16 = 12 * (24 * 768 ** 2 + 4 * 16 * 768) + 2 * 768 * 50257   # GPT-2 small at T = 16


def per_token(seq):   # TINY's FLOPs per token at seq tokens: weight matrices, attention, head
    return 2 * 24 * 64 * 64 + 4 * 2 * seq * 64 + 2 * 64 * 512


# --- Problem 1 -----------------------------------------------------------------------------------------------

def test_eager_call_memory_bound():
    assert TINY.n_params() == TINY_PARAMS
    p = wg.eager_call(TINY, 1, 8, CPU)
    f, text = p.facts, str(p)
    assert f["flops_per_token"] == per_token(8) == 266_240 and f["nbytes"] == 4 * TINY_PARAMS
    assert f["regime"] == "memory-bound" and f["seconds"] == pytest.approx(4 * TINY_PARAMS / 20e9)
    assert "**266,240 FLOPs per token**" in text and "1.94 times the 136,960 parameters" in text
    assert f"GPT-2 small does {GPT2_PER_TOKEN_16 - 12 * 4 * 8 * 768:,} per token" in text
    assert "1 × 8 = 8 tokens does 2,129,920 FLOPs: 21.3 µs" in text
    assert "136,960 × 4 bytes = 535 KiB: 27.4 µs" in text and "**memory-bound**, at least **27.4 µs**" in text
    assert "the weights, not the arithmetic, set the time" in text
    h100 = max(2_129_920 / H100.fp32, 4 * TINY_PARAMS / H100.bandwidth)
    assert f"the same call is memory-bound, at least {w.seconds(h100)}" in text
    assert "GPT-2 small, the model this chapter runs on a GPU" in text and "No reference GPU run" in text


def test_eager_call_compute_bound_and_gpt2_small_itself():
    p = wg.eager_call(TINY, 4, 8, CPU)   # 32 tokens: 8.5 MFLOP, 85 µs > 27 µs
    assert p.facts["regime"] == "compute-bound" and p.facts["seconds"] == pytest.approx(32 * per_token(8) / 100e9)
    assert "even this few tokens give the weights enough work" in str(p)
    big = wg.eager_call(GPT2_SMALL, 1, 16, CPU)
    assert big.facts["flops_per_token"] == GPT2_PER_TOKEN_16
    assert "GPT-2 small does" not in str(big) and "the model this chapter runs on a GPU" not in str(big)
    t_ref = max(16 * GPT2_PER_TOKEN_16 / H100.fp32, 4 * GPT2_SMALL.n_params() / H100.bandwidth)
    assert f"the same call is memory-bound, at least {w.seconds(t_ref)}." in str(big)


def test_check_of_a_call_gives_the_reasons():
    answer = wg.eager_call(TINY, 1, 8, CPU)
    t = answer.facts["seconds"]
    same = wg.check(t * 1.1, answer, "One call")
    assert same.facts["outcome"] == "as predicted" and str(same).startswith("One call took")
    slow = wg.check(Timing(samples=[20 * t] * 5, floor=1e-7, backend="cpu", mode="flush", warnings=NOISY), answer)
    assert slow.facts["outcome"] == "slower" and "many separate operator calls" in str(slow)
    assert "one perfect kernel" in str(slow) and "each short of its own roof" in str(slow)   # B2:N1: both causes
    assert "the profile under Step 1 weighs each operator alone" in str(slow) and "noisy" in str(slow)
    fast = wg.check(t / 3, answer)   # 535 KiB of weights, 32 MiB of cache
    assert fast.facts["outcome"] == "faster" and "fit in the caches" in str(fast)   # A2:C1
    beaten = wg.check(t / 3, wg.eager_call(TINY, 1, 8, FakeDevice(l2=1024)))
    assert "on a CPU the peak is itself a measurement" in str(beaten)


# --- Problem 2 -----------------------------------------------------------------------------------------------

def test_ridge_tokens_in_whole_sequences():
    p = wg.ridge_tokens(TINY, 8, CPU)
    f, text = p.facts, str(p)
    n_star = 4 * TINY_PARAMS * 5 / per_token(8)   # 10.3 tokens
    assert f["n_star"] == pytest.approx(n_star) and f["batch"] == 2 and f["tokens"] == 16
    assert f["seconds"] == pytest.approx(max(16 * per_token(8) / 100e9, 4 * TINY_PARAMS / 20e9))
    assert f["few_seconds"] == pytest.approx(4 * TINY_PARAMS / 20e9)
    assert "so about 10 tokens" in text and f"**n = {w.number(n_star)} tokens**" in text
    assert "In whole sequences of 8 tokens that is **2 sequences, 16 tokens**" in text
    h100_ridge, bf16_ridge = H100.fp32 / H100.bandwidth, H100.bf16_tensor / H100.bandwidth
    assert f"needs {w.number(4 * TINY_PARAMS * h100_ridge / per_token(8))} tokens" in text
    n_bf16 = 2 * TINY_PARAMS * bf16_ridge / per_token(8)
    assert f"(ridge {w.number(bf16_ridge)}, 2 bytes per weight) {w.number(n_bf16)}:" in text


def test_ridge_tokens_already_past_the_ridge_in_one_sequence():
    p = wg.ridge_tokens(TINY, 16, CPU)   # n* = 10.1 tokens < 16
    assert p.facts["batch"] == 2 and p.facts["tokens"] == 32
    assert "One sequence of 16 tokens already has that many" in str(p) and "In whole sequences" not in str(p)
    assert "the call is compute-bound" in str(p) and "2 times the least time of a call on one sequence" in str(p)
    slow = str(wg.check(20 * p.facts["seconds"], p))   # past the ridge, one roof binds
    assert "many separate operator calls" in slow and "both roofs bind" not in slow   # no unmeasured cause


def test_tokens_check_outcomes():
    answer = wg.ridge_tokens(TINY, 8, FakeDevice(flops=1e12, bandwidth=10e9))   # ridge 100: 26 sequences
    f = answer.facts
    assert f["batch"] == math.ceil(4 * TINY_PARAMS * 100 / per_token(8) / 8) == 26
    alone = wg.tokens_check(f["seconds"], answer)
    assert "growth" not in alone.facts and str(alone) == str(wg.check(f["seconds"], answer))
    few = 1e-3
    flat = wg.tokens_check(1.05 * few, answer, few)
    assert flat.facts["growth_outcome"] == "flat" and "it took about as long for 26 times the tokens" in str(flat)
    assert f"per token, {w.times(26 / 1.05)} cheaper" in str(flat)
    less = wg.tokens_check(0.8 * few, answer, few)
    assert less.facts["growth_outcome"] == "flat" and "it took less time for 26" in str(less)
    assert "timed apart, and at least one of the two times is off" in str(less)      # no unmeasured cause
    assert "other programs" not in str(less) and "timed apart" not in str(flat)
    some = wg.tokens_check(Timing(samples=[5 * few] * 5, floor=1e-7, backend="cpu", mode="flush"), answer, few)
    assert some.facts["growth_outcome"] == "less than the tokens" and some.facts["growth"] == pytest.approx(5)
    assert "5 times as long for 26 times the tokens: per token, 5.2 times cheaper" in str(some)
    assert "the roofline gives" not in str(some)         # review 07_08 item 12: not a prediction of this ratio
    same = wg.tokens_check(26 * few, answer, few, "The call")
    assert same.facts["growth_outcome"] == "as the tokens" and "no cheaper per token" in str(same)
    assert str(same).startswith("The call took") and same.facts["outcome"] in ("slower", "faster", "as predicted")


# --- Problem 5 -----------------------------------------------------------------------------------------------

def test_attention_share_by_hand():
    p = wg.attention_share(TINY, 4, 64, FakeDevice(flops=1e9, bandwidth=1e15))   # all compute-bound
    f, text = p.facts, str(p)
    tokens, scores = 4 * 64, 4 * 2 * 64 * 64
    attention, weights, head = 2 * 4 * 64 * 64 * tokens, 2 * 24 * 64 ** 2 * tokens, 2 * 64 * 512 * tokens
    assert f["flop_share"] == pytest.approx(attention / (attention + weights + head)) == pytest.approx(1 / 9)
    assert f["block_share"] == pytest.approx(64 / 448) and f["crossover"] == 384
    core = attention + 2 * 7 * scores   # the matmuls, then scale, mask and softmax: 1 + 1 + 5 FLOPs a score
    # (the copies of the heads do no FLOPs, and on this device's bandwidth take no time to speak of)
    assert f["time_share"] == pytest.approx(core / (core + weights + head))
    g_att, g_lin = 4 * 12 * 1024 * 768, 24 * 12 * 768 ** 2
    assert f["gpt2_share"] == pytest.approx(g_att / (g_att + g_lin + 2 * 768 * 50257))
    assert "**T = 6d**, 384 tokens for this model (d = 64; longer than this model's context of 64 tokens), 4,608 for GPT-2 small" in text
    assert "At T = 64 it is 14% of each block" in text and "**11% of the pass's FLOPs**" in text
    assert f"{w.percent(1024 / 5632)} of each block, {w.percent(f['gpt2_share'])} of the pass" in text
    assert "2 × 64 × 64 scores" in text and "softmax, the most, 5/8 FLOP/byte" in text
    assert "Q·Kᵀ sums over only 32 elements (the head dimension)" in text
    assert "the product of the scores with V gives only 32 columns per head" in text
    assert "four copies that split and join the heads" in text
    assert f"**{w.percent(f['time_share'])} of the time**" in text
    assert f"{w.percent(f['reference_time_share'])} of the time for" in text and "Dao et al., 2022" in text


def test_attention_share_counts_the_copies_when_memory_bound():
    p = wg.attention_share(TINY, 4, 64, FakeDevice(flops=1e15, bandwidth=1e9))   # all memory-bound
    tokens, scores, d = 4 * 64, 4 * 2 * 64 * 64, 64
    bmm = 4 * (2 * tokens * d + scores)
    core = 2 * (2 * bmm + 3 * 8 * scores + 4 * 8 * tokens * d)   # two blocks: matmuls, three passes, four copies
    mats = 2 * sum(4 * (tokens * i + i * o + o + tokens * o) for i, o in ((d, 3 * d), (d, d), (d, 4 * d), (4 * d, d)))
    head = 4 * (tokens * d + d * 512 + tokens * 512)
    assert p.facts["time_share"] == pytest.approx(core / (core + mats + head))
    assert p.facts["reference_time_share"] > p.facts["gpt2_share"]   # the scores' bytes cost an H100 time


def table(core_seconds, mats_seconds, core_flops=10, other_flops=90):
    return pd.DataFrame([
        {"op": "bmm", "module": "GPT.blocks.0.attn", "category": "matmul", "flops": core_flops,
         "seconds": core_seconds / 2},
        {"op": "_softmax", "module": "GPT.blocks.0.attn", "category": "normalisation", "flops": 0,
         "seconds": core_seconds / 2},
        {"op": "addmm", "module": "GPT.blocks.0.attn.qkv", "category": "matmul", "flops": other_flops,
         "seconds": mats_seconds / 2},
        {"op": "mm", "module": "GPT.head", "category": "matmul", "flops": 0, "seconds": mats_seconds / 2},
        {"op": "native_layer_norm", "module": "GPT.blocks.0.ln1", "category": "normalisation", "flops": 0,
         "seconds": 10.0}])


ANSWER = Prose("", {"flop_share": 0.1, "time_share": 0.2})


def test_attention_rows():
    core, mats = wg.attention_rows(table(1, 1))
    assert list(core) == [True, True, False, False, False] and list(mats) == [False, False, True, True, False]


def test_attention_check_outcomes():
    none = wg.attention_check(None, ANSWER)
    assert none.facts["outcome"] == "no profile" and "no measurement" in str(none)
    same = wg.attention_check(table(2.0, 8.0), ANSWER)
    assert same.facts["outcome"] == "as predicted" and same.facts["time_share"] == pytest.approx(0.2)
    assert same.facts["profile_share"] == pytest.approx(2 / 20) and same.facts["flop_share"] == pytest.approx(0.1)
    assert "10% of the pass's FLOPs in attention's own operators, as the formula says." in str(same)
    assert ("Against the weight matmuls and the head, as the roofline counted, they took 20% of the replayed time "
            "(10% of the whole profile's), close to the roofline's 20%.") in str(same)
    assert str(same).endswith("close to the roofline's 20%. Attention took more of the time than of the FLOPs.")
    more = wg.attention_check(table(5.0, 5.0, core_flops=20, other_flops=80), ANSWER)
    assert more.facts["outcome"] == "more" and "more than the roofline's 20%" in str(more) and "lost" not in str(more)
    assert "fixed cost" not in str(more) and "exponentials" not in str(more)       # review 07_08 item 11
    rooflined = table(5.0, 5.0).assign(roofline_seconds=[0.5, 2.4, 1.0, 1.0, 1.0])   # bmm lost 2 s, softmax 0.1 s
    text = str(wg.attention_check(rooflined, ANSWER))
    assert "The most time beyond their roofs went to `bmm` (2 s, at " in text      # the data's order, not a list
    assert text.index("`bmm`") < text.index("`_softmax`")
    assert "against the formula's 10%: the profiler counts the scale" in str(more)
    less = wg.attention_check(table(0.5, 9.5), ANSWER)
    assert less.facts["outcome"] == "less" and "less than the roofline's 20%." in str(less)
    assert "caches" not in str(less)
    assert str(less).endswith("Attention took no more of the time than of the FLOPs here.")


# --- The live device, and a real profile ----------------------------------------------------------------------

def test_answers_on_the_live_device():
    import brrr
    from brrr.gpt import sizes
    dev = brrr.device()
    for quick in (True, False):
        s = sizes(quick=quick, gpu=dev.on_gpu)
        cfg, (b, t), (big_b, big_t) = s["config"], s["small"], s["large"]
        answers = (wg.eager_call(cfg, b, t, dev), wg.ridge_tokens(cfg, t, dev),
                   wg.attention_share(cfg, big_b, big_t, dev))
        for p in answers:
            assert "nan" not in str(p) and "H100" in str(p) and p.facts["problem"]
        assert wg.ridge_tokens(cfg, t, dev).facts["batch"] >= 2


def test_attention_rows_of_a_real_profile():
    import brrr
    from brrr.gpt import GPT, forward_flops, tokens
    cfg = GPTConfig(n_layer=1, n_head=2, d_model=32, vocab=64, context=16)
    profile = brrr.profile(GPT(cfg).eval(), tokens(cfg, 1, 16), budget=0.001)
    core, mats = wg.attention_rows(profile)
    assert sorted(profile[core & (profile["category"] == "matmul")]["op"]) == ["bmm", "bmm"]
    assert "_softmax" in set(profile[core]["op"]) and len(profile[mats]) == 5   # qkv, proj, fc, out, head
    f = forward_flops(cfg, 1, 16)
    assert profile[core & (profile["category"] == "matmul")]["flops"].sum() == f["attention"]
    assert profile[mats]["flops"].sum() == f["linear"] + f["head"]
    verdict = wg.attention_check(profile, wg.attention_share(cfg, 1, 16, brrr.device()))
    assert verdict.facts["outcome"] in ("as predicted", "more", "less") and "nan" not in str(verdict)


def test_eager_call_is_overhead_bound_where_its_calls_fixed_costs_exceed_the_roofline():
    """review 07_08 item 10: three regimes, as the chapters define them, not two."""
    from brrr.gpt import operator_calls
    plain = wg.eager_call(TINY, 1, 16, CPU)
    assert plain.facts["calls"] is None and plain.facts["regime"] in ("memory-bound", "compute-bound")
    t = plain.facts["seconds"]
    calls = operator_calls(TINY, 1, 16)
    big = wg.eager_call(TINY, 1, 16, CPU, fixed_cost=2 * t / calls)
    assert big.facts["regime"] == "overhead-bound" and "**overhead-bound**" in str(big)
    assert big.facts["seconds"] == pytest.approx(2 * t) and f"{calls} operator calls" in str(big)
    small = wg.eager_call(TINY, 1, 16, CPU, fixed_cost=t / calls / 2)
    assert small.facts["regime"] == plain.facts["regime"] and small.facts["seconds"] == t
    # a slower measurement is not put down to fixed costs the answer already counted
    slower = str(wg.check(10 * t, small))
    assert "the largest of the three costs" in slower and "each paying a fixed cost (Chapter 3)" not in slower
    assert "each paying a fixed cost (Chapter 3)" in str(wg.check(10 * t, plain))


def test_attention_share_compares_devices_at_the_same_sequence_and_names_gpt2_once():
    """review 07_08 item 23: one variable at a time; no '4,608 for this model, 4,608 for GPT-2 small'."""
    p = wg.attention_share(GPT2_SMALL, 8, 512, CPU)
    text = str(p)
    assert f"this model at the same 8 × 512 tokens: {w.percent(p.facts['reference_same_share'])}" in text
    assert text.count("4,608") == 1 and "(d = 768; longer than this model's context of 1,024 tokens)" in text
    tiny = str(wg.attention_share(TINY, 4, 64, CPU))        # the context clause sits with the model it is about
    assert "(d = 64; longer than this model's context of 64 tokens), 4,608 for GPT-2 small" in tiny


def test_ridge_tokens_in_bfloat16_on_this_device():                   # review 07_08 item 24
    class Tensor(FakeDevice):
        def has_tensor_cores(self, dtype="float16"):
            return True

        def peak_flops(self, dtype="float32", tensor_cores=False):
            return self.flops * (8 if tensor_cores else 1)
    gpu = Tensor(flops=1e12, bandwidth=1e11, on_gpu=True)
    assert "on this device's tensor cores (ridge 80," in str(wg.ridge_tokens(TINY, 64, gpu))
    assert "this device's tensor cores" not in str(wg.ridge_tokens(TINY, 64, CPU))


# --- Problem 3: what TF32 can gain ---------------------------------------------------------------------------------

class TF32Device(FakeDevice):
    """A GPU with TF32 tensor cores 8 times its FP32 rate."""

    def __init__(self):
        super().__init__(flops=10e12, bandwidth=1e12, on_gpu=True)

    def has_tensor_cores(self, dtype="float16"):
        return True

    def peak_flops(self, dtype="float32", tensor_cores=False):
        return 8 * self.flops if tensor_cores else self.flops


class NoTF32(FakeDevice):
    def has_tensor_cores(self, dtype="float16"):
        return False


def steps_result(batch=1.0, tf32=None, skipped=None):
    from brrr.results import Result
    records = [{"step": "batch", "seconds": batch}]
    if tf32 is not None or skipped:
        records.append({"step": "tf32", "seconds": tf32, **({"skipped": skipped} if skipped else {})})
    return Result("capstone_steps", records, {})


def profile_of(matmul, other):
    """A brrr.profile table of two matmuls taking ``matmul`` seconds and an elementwise op taking ``other``."""
    return pd.DataFrame({"category": ["matmul", "elementwise", "matmul"], "seconds": [matmul / 2, other, matmul / 2],
                         "flops": [2e9, 1e6, 2e9], "nbytes": [1e7, 8e6, 1e7], "calls": [1, 1, 1]})


def test_tf32_gain_is_amdahl_of_the_matmuls_share():
    answer = wg.tf32_gain(profile_of(0.8, 0.2), TF32Device())
    f = answer.facts
    assert f["here"] and f["r"] == pytest.approx(8) and f["share"] == pytest.approx(0.8)
    assert f["bound"] == pytest.approx(1 / (0.2 + 0.8 / 8))                   # 3.33x
    assert f"at most **{w.times(1 / 0.3)} as fast**" in str(answer) and f"{w.times(5)} even if" in str(answer)
    unknown = wg.tf32_gain(None, TF32Device())
    assert "bound" not in unknown.facts and "f is unknown" in str(unknown)


def test_tf32_gain_without_tf32_uses_a_reference_profile_that_has_it():
    from brrr.results import Result
    device = {"name": "GPU R", "backend": "cuda", "peak_flops_float32": 50e12, "peak_flops_float32_tensor": 500e12}
    run = Result("capstone_profile_batch", profile_of(0.9, 0.1).to_dict("records"), {"device": device})
    plain = Result("capstone_profile_batch", [], {"device": {"name": "GPU V", "backend": "cuda", "peak_flops_float32": 1e12}})
    cpu = Result("capstone_profile_batch", [], {"device": {"name": "CPU", "backend": "cpu", "peak_flops_float32": 1e11,
                                                          "peak_flops_float32_tensor": 1e11}})   # as a CPU records it
    answer = wg.tf32_gain(profile_of(0.5, 0.5), NoTF32(), references=[plain, cpu, run])
    assert not answer.facts["here"] and answer.facts["r"] == pytest.approx(10)
    assert answer.facts["bound"] == pytest.approx(1 / (0.1 + 0.09))          # the reference's share, not this one's
    assert "does not run here; on the reference GPU R" in str(answer)
    alone = wg.tf32_gain(profile_of(0.5, 0.5), NoTF32())
    assert "bound" not in alone.facts and str(alone).endswith("so step 3 does not run here.")
    verdict = wg.tf32_check(steps_result(skipped="no TF32 tensor cores on this device"), answer)
    assert verdict.facts["outcome"] == "skipped" and "no measurement to check the bound against" in str(verdict)


def test_tf32_check_outcomes():
    answer = wg.tf32_gain(profile_of(0.8, 0.2), TF32Device())          # bound 3.33x; the rest takes 0.2 s of 1 s
    none = wg.tf32_check(steps_result(), answer)
    assert none.facts["outcome"] == "no step" and "no record of step 3" in str(none)
    same = wg.tf32_check(steps_result(1.0, 0.3), answer)
    assert same.facts["outcome"] == "as predicted" and "Had everything" not in str(same)
    below = wg.tf32_check(steps_result(1.0, 0.6), answer)
    assert below.facts["outcome"] == "below" and below.facts["speedup"] == pytest.approx(1 / 0.6)
    assert f"the matmuls ran {w.times(0.8 / 0.4)} as fast, not the 8" in str(below)   # 0.8 s of matmuls in 0.4 s
    above = wg.tf32_check(steps_result(1.0, 0.2), answer)
    assert above.facts["outcome"] == "above" and "got faster too" in str(above)
    slower = wg.tf32_check(steps_result(1.0, 1.1), answer)
    assert slower.facts["outcome"] == "below" and "the matmuls got no faster at all, not the 8" in str(slower)


def test_tf32_gain_on_the_shipped_reference_profiles():
    """Every shipped GPU profile of step 2 gives a bound between 1 and r."""
    from brrr import reference
    runs = [run for run in reference.load("capstone_profile_batch") if run.meta["device"].get("peak_flops_float32_tensor")]
    assert runs
    for run in runs:
        f = wg.tf32_gain(None, NoTF32(), references=[run]).facts
        assert 1 < f["bound"] < f["r"] and 0 < f["share"] < 1, run.meta["device"]["name"]


class SetDevice(FakeDevice):
    """The device of a record set, from its peaks."""

    def __init__(self, meta):
        super().__init__(flops=meta.get("peak_flops_float32", 1e11), bandwidth=meta.get("peak_bandwidth", 2e10),
                         on_gpu=meta.get("backend") == "cuda")
        self.tf32 = wg._has_tf32(meta) and meta["peak_flops_float32_tensor"]

    def has_tensor_cores(self, dtype="float16"):
        return bool(self.tf32)

    def peak_flops(self, dtype="float32", tensor_cores=False):
        return self.tf32 if tensor_cores and self.tf32 else self.flops


from record_sets import close_to, sets_with  # noqa: E402


@pytest.mark.parametrize("runs", sets_with("capstone_steps", "capstone_profile_batch"))
def test_the_tf32_problem_on_every_record_set(runs):
    from brrr import reference
    profile = runs["capstone_profile_batch"]
    answer = wg.tf32_gain(pd.DataFrame(profile.records), SetDevice(profile.meta["device"]),
                          reference.load("capstone_profile_batch"))
    if "bound" in answer.facts:
        assert 1 < answer.facts["bound"] < answer.facts["r"] and close_to(answer.facts["bound"], str(answer))
    verdict = wg.tf32_check(runs["capstone_steps"], answer)
    step = {r["step"]: r for r in runs["capstone_steps"].records}.get("tf32")
    if step is None:
        assert verdict.facts["outcome"] == "no step"
    elif step.get("skipped"):
        assert verdict.facts["outcome"] == "skipped" and "did not run here" in str(verdict)
    else:
        assert close_to(verdict.facts["speedup"], str(verdict))
