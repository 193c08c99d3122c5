"""Chapter 8's worked problems 4 (casting the weights once) and 6 (padding the vocabulary): made-up step records
force each wording, and the text must state what the arithmetic gives (counted here by hand); the last tests
render both problems from every record set that holds the steps, and read a real profile of a tiny model."""
import pytest

from brrr.gpt import GPT2_SMALL, GPTConfig
from brrr.prose import worked_gpt as wg
from brrr.prose import words as w
from brrr.results import Result
from record_sets import close_to, sets_with

TINY = GPTConfig(n_layer=2, n_head=2, d_model=64, vocab=512, context=64)
H200 = {"name": "GPU H", "backend": "cuda", "peak_bandwidth": 4e12}
PEAK = {"flops": 1e15, "name": "the bfloat16 tensor-core peak", "dtypes": ["float32", "bfloat16"]}


def parts(total, casts=0.0, head=0.0, head_flops=0.0, width=50257, other=None, **categories):
    """A step record's profile parts (brrr.experiments.capstone_rows.summary)."""
    cats = {"other": casts + (other or 0.0), **categories}
    return {"profile_seconds": total, "category_seconds": cats, "cast_seconds": casts, "casts": 10 if casts else 0,
            "head_seconds": head, "head_flops": head_flops, "head_width": width, "regime": "memory-bound",
            "regime_shares": {"memory-bound": 1.0}}


def steps(*records, device=H200, peak=PEAK):
    return Result("capstone_steps", list(records), {"device": device, "mfu_peak": peak})


def rec(step, seconds, tokens=4096, **extra):
    return {"step": step, "seconds": seconds, "tokens": tokens, "seconds_per_token": seconds / tokens,
            "dtype": "bfloat16", **extra}


# --- Problem 4: cast once -------------------------------------------------------------------------------------

def test_the_weights_autocast_casts_are_counted_by_hand():
    # per block: 64·192 + 192 + 64·64 + 64 + 64·256 + 256 + 256·64 + 64; the head 512·64
    assert wg.cast_weights(TINY) == 2 * (12 * 64 * 64 + 576) + 512 * 64
    assert wg.cast_weights(GPT2_SMALL) == GPT2_SMALL.n_params() - 1024 * 768 - (2 * 12 + 1) * 2 * 768   # 25 LayerNorms


def test_cast_saving_is_amdahl_of_the_casts_share():
    run = steps(rec("autocast", 0.01, **parts(0.012, casts=0.003)), rec("cast", 0.008, **parts(0.009)))
    answer = wg.cast_saving(TINY, run)
    f, text = answer.facts, str(answer)
    n = wg.cast_weights(TINY)
    assert f["nbytes"] == 6 * n and f["floor"] == pytest.approx(6 * n / 4e12)
    assert f["share"] == pytest.approx(0.25) and f["speedup"] == pytest.approx(4 / 3)
    assert f"{w.integer(n)} weights and biases" in text and f"**{w.seconds(6 * n / 4e12)}**" in text
    assert "10 casts" in text and "c = 25%" in text and f"**{w.times(4 / 3)} as fast**" in text


def test_cast_saving_without_a_profile_or_a_bandwidth():
    no_step = wg.cast_saving(TINY, steps(device={}))
    assert "c is unknown" in str(no_step) and "speedup" not in no_step.facts and "floor" not in no_step.facts
    skipped = wg.cast_saving(TINY, steps({"step": "autocast", "skipped": "why"}))
    assert "Step 4 did not run here" in str(skipped)
    bare = wg.cast_saving(TINY, steps(rec("autocast", 0.01)))
    assert "Step 4 has no profile here" in str(bare)


@pytest.mark.parametrize("seconds, outcome", [(0.0075, "as predicted"), (0.005, "more"), (0.011, "less")])
def test_cast_check_outcomes(seconds, outcome):
    before = rec("autocast", 0.01, **parts(0.012, casts=0.003, other=0.001, matmul=0.006, normalisation=0.001,
                                            elementwise=0.001))
    after = rec("cast", seconds, **parts(0.008, other=0.001, matmul=0.005, normalisation=0.0015, elementwise=0.0005))
    run = steps(before, after)
    verdict = wg.cast_check(run, wg.cast_saving(TINY, run))
    text = str(verdict)
    assert verdict.facts["outcome"] == outcome and verdict.facts["speedup"] == pytest.approx(0.01 / seconds)
    assert f"Step 5 ran {w.times(0.01 / seconds)} as fast as step 4: {w.percent(0.01 / seconds * 0.75)} of the {w.times(4 / 3)} the casts alone predicted" in text
    assert "matmuls 6 ms → 5 ms" in text and "casts 3 ms → none" in text and "the other operators 1 ms → 1 ms" in text
    assert "(in all, 12 ms → 8 ms)" in text


def test_cast_check_without_steps_or_profiles():
    answer = wg.cast_saving(TINY, steps())
    missing = wg.cast_check(steps(), answer)       # no empty output on the page: it says what is missing
    assert missing.facts["outcome"] == "no step" and "no record of step 4" in str(missing)
    assert "no record of step 5" in str(wg.cast_check(steps(rec("autocast", 0.01)), answer))
    skipped = wg.cast_check(steps(rec("autocast", 0.01), {"step": "cast", "skipped": "why"}), answer)
    assert skipped.facts["outcome"] == "skipped"
    bare = wg.cast_check(steps(rec("autocast", 0.01), rec("cast", 0.005)), answer)
    assert bare.facts["outcome"] == "measured" and str(bare) == "Step 5 ran 2 times as fast as step 4."


# --- Problem 6: the padded vocabulary -------------------------------------------------------------------------

def vocab_run(padded_seconds, head_after=0.001, peak=PEAK, dtype="bfloat16", config=None):
    base = rec("sdpa", 0.01, **parts(0.012, head=0.003, head_flops=1e12))
    base["dtype"] = dtype
    step = rec("vocab", padded_seconds, builds_on="sdpa", vocab=50304,
               **parts(0.010, head=head_after, head_flops=1e12 * 50304 / 50257, width=50304))
    run = steps(rec("eager", 1.0), base, step, peak=peak)
    if config:
        run.meta["config"] = config
    return run


def test_vocab_gain_counts_the_padding_and_bounds_the_gain():
    answer = wg.vocab_gain(GPT2_SMALL, vocab_run(0.009))
    f, text = answer.facts, str(answer)
    assert f["here"] and f["added"] == 47 and "from 50,257 to 50,304 adds 47 outputs" in text and "0.094%" in text
    least = 1e12 * 50304 / 50257 / 1e15                                         # the padded head at the peak
    assert f["share"] == pytest.approx(0.25) and f["least"] == pytest.approx(least)
    assert f["bound"] == pytest.approx(0.012 / (0.012 - 0.003 + least))
    assert "The profile of step 6 gives the head 3 ms of 12 ms: h = 25%" in text      # the page's step numbers
    assert f"at most **{w.times(4 / 3)} as fast**" in text and f"at most **{w.times(f['bound'])}**" in text


def test_vocab_gain_without_a_peak_that_bounds_the_dtype():
    answer = wg.vocab_gain(GPT2_SMALL, vocab_run(0.009, dtype="float16"))
    assert "least" not in answer.facts and answer.facts["bound"] == pytest.approx(4 / 3)


def test_vocab_gain_where_the_vocabulary_needs_no_padding_uses_a_reference():
    here = steps(rec("eager", 1.0), {"step": "vocab", "skipped": "already a multiple of 64"})
    alone = wg.vocab_gain(TINY, here)
    assert not alone.facts["here"] and "512 tokens, is already a multiple of 64" in str(alone)
    assert "No reference run here has the step either." in str(alone)
    ref = vocab_run(0.009, config={"vocab": 50257})
    answer = wg.vocab_gain(TINY, here, references=[here, ref])
    assert "On the reference GPU H, with a vocabulary of 50,257: Padding" in str(answer)
    assert answer.facts["share"] == pytest.approx(0.25) and not answer.facts["here"]
    verdict = wg.vocab_check(here, answer)
    assert verdict.facts["outcome"] == "skipped" and "did not run here" in str(verdict)


@pytest.mark.parametrize("seconds, outcome", [(0.0085, "gained"), (0.0095, "about the same"), (0.011, "about the same"),
                                              (0.012, "slower"), (0.006, "above")])
def test_vocab_check_outcomes(seconds, outcome):
    run = vocab_run(seconds)
    answer = wg.vocab_gain(GPT2_SMALL, run)
    verdict = wg.vocab_check(run, answer)
    text, bound = str(verdict), answer.facts["bound"]
    assert verdict.facts["outcome"] == outcome and f"Step 7 ran {w.times(0.01 / seconds)} as fast as step 6" in text
    assert "the head's matmul took 3 ms before and 1 ms padded" in text
    said = {"gained": f": {w.percent(0.01 / seconds / bound)} of the bound of {w.times(bound)}.",
            "about the same": " (within 10%).", "slower": "as fast as step 6. In the profiles",
            "above": f"more than the bound of {w.times(bound)}"}[outcome]
    assert said in text
    # only above the bound does it say what the rest took (the bound kept it): 9 ms in both profiles here
    assert ("and everything else 9 ms before and 9 ms padded" in text) == (outcome == "above")
    assert "so " not in text and "did not pay" not in text       # no cause the page did not measure


def test_both_problems_on_a_record_made_before_the_profile_parts():
    """A record set made before the steps kept their profiles' parts (the 2026-11-28 H200 run): the problems say
    so, and do not claim step 4 or the base of step 7 had no profile."""
    old = steps(rec("autocast", 0.01, regime="memory-bound", regime_shares={"memory-bound": 1.0}),
                rec("cast", 0.008, regime="memory-bound", regime_shares={"memory-bound": 1.0}))
    cast = str(wg.cast_saving(TINY, old))
    assert "Step 4 was recorded before the steps kept their profiles' parts, so c is unknown." in cast
    assert "no profile" not in cast
    missing = str(wg.vocab_gain(GPT2_SMALL, old))
    assert "has no record of step 7: it was recorded before the step was added" in missing
    base = rec("sdpa", 0.01, regime="memory-bound", regime_shares={"memory-bound": 1.0})
    partial = str(wg.vocab_gain(GPT2_SMALL, steps(base, rec("vocab", 0.009, builds_on="sdpa", vocab=50304))))
    assert "step 6, was recorded before the steps kept their profiles' parts, so h is unknown" in partial


def test_the_cast_floor_is_said_as_a_floor_only_where_the_weights_overflow_the_cache():
    n = wg.cast_weights(TINY)                              # 0.5 MB of float32 weights
    small_cache = wg.cast_saving(TINY, steps(device={**H200, "l2_bytes": 1024}))
    assert f"at least **{w.seconds(6 * n / 4e12)}**" in str(small_cache)
    big_cache = str(wg.cast_saving(TINY, steps(device={**H200, "l2_bytes": 50 * 2 ** 20})))
    assert "at least" not in big_cache.split("It also casts")[0] and "if the weights came from memory" in big_cache
    assert "so the casts can take less" in big_cache


def test_vocab_check_without_the_step():
    verdict = wg.vocab_check(steps(), wg.vocab_gain(TINY, steps()))
    assert verdict.facts["outcome"] == "no step" and "no record of step 7" in str(verdict)


# --- every record set, and a real profile ---------------------------------------------------------------------

def _config(run):
    return GPTConfig(**{k: run.meta["config"][k] for k in ("n_layer", "n_head", "d_model", "vocab", "context")})


@pytest.mark.parametrize("runs", sets_with("capstone_steps"))
def test_both_problems_on_every_record_set(runs):
    from brrr import reference
    run = runs["capstone_steps"]
    cfg = _config(run)
    cast = wg.cast_saving(cfg, run)
    if "speedup" in cast.facts:
        assert 0 < cast.facts["share"] < 1 and close_to(cast.facts["speedup"], str(cast))
    verdict = wg.cast_check(run, cast)
    if "speedup" in verdict.facts:
        assert close_to(verdict.facts["speedup"], str(verdict))
    vocab = wg.vocab_gain(cfg, run, reference.load("capstone_steps"))
    assert (vocab.facts["added"] == 0) == (cfg.vocab % 64 == 0)
    if "bound" in vocab.facts:
        assert vocab.facts["bound"] > 1 and close_to(vocab.facts["bound"], str(vocab))
    step = {r["step"]: r for r in run.records}.get("vocab")
    verdict = wg.vocab_check(run, vocab)
    if step is None:
        assert verdict.facts["outcome"] == "no step" and "no record of step 7" in str(vocab)
    elif step.get("skipped"):
        assert verdict.facts["outcome"] == "skipped" and "did not run here" in str(verdict)
    else:
        assert close_to(verdict.facts["speedup"], str(verdict))


def test_the_profile_parts_of_a_real_profile():
    import torch
    from brrr import profile
    from brrr.experiments import capstone
    from brrr.experiments.capstone_rows import summary
    from brrr.gpt import GPT, tokens
    model = capstone.autocast(GPT(TINY).eval(), "bfloat16", "cpu")
    with torch.no_grad():
        table = profile(model, tokens(TINY, 2, 16), budget=0.001)
    got = summary(table)
    assert got["casts"] == 2 * (3 + 2 + 3 + 2) + 2          # weight, bias, input of qkv and fc; weight, bias of the rest
    assert got["head_width"] == 512 and got["head_flops"] == 2 * 32 * 64 * 512
    assert 0 < got["cast_seconds"] < got["profile_seconds"] == pytest.approx(sum(got["category_seconds"].values()))
