"""Chapter 7's sentences agree with the numbers of every shipped record set.

Each test recomputes, from the saved profile rows or remedy records, the numbers a
sentence states and the comparison it makes, and checks the sentence against them.
Hand-made tables and records (not measurements) cover the wordings no shipped set
reaches yet: a GPU where every row is overhead-bound, a failed ``torch.compile``, ...
"""
import copy
import math
import re

import pandas as pd
import pytest

from brrr import reference
from brrr.prose import diagnosis as prose, diagnosis_models, diagnosis_regimes, words
from brrr.reference import as_frame
from brrr.results import Result
from record_sets import close_to, record_sets, sets_with

CHAPTER = ("profile_block", "profile_bert", "profile_train", "profile_resnet18", "profile_eval",
           "compile_block", "profile_batches", "profile_precision")


def first(p) -> str:
    """The paragraphs about this run (the reference paragraphs come after)."""
    return "\n\n".join(x for x in str(p).split("\n\n") if not x.startswith(("On the reference", "No reference")))


def test_every_cpu_quick_set_has_the_chapter():
    for name, runs in record_sets().items():
        if name.startswith("quick/"):
            for e in CHAPTER:
                assert e in runs, f"{name} lacks {e}: rerun scripts/make_reference.py --chapters 07"


# --- the small block: regimes ------------------------------------------------------------

def listing(text, regime) -> str:
    """The sentence 'Memory-bound: `clone`, `div.Tensor`, ...' of ``text``, without its label."""
    label = f"{regime[0].upper() + regime[1:]}: "
    return re.split(r"\.(\s|$)", text.split(label, 1)[1], maxsplit=1)[0] if label in text else ""


def check_regimes(t, text):
    """The regimes paragraph agrees with the table ``t``."""
    o, c3 = t.attrs["overhead_seconds"], t.attrs["chapter3_call_seconds"]
    assert words.seconds(o) in text and words.seconds(c3) in text
    ratio = c3 / o
    if abs(ratio - 1) <= words.SAME:
        assert "the two calls cost the same" in text and "noise" not in text
    elif ratio > 1:
        assert f"{words.times(ratio)} as long as the profiler's" in text and "Chapter 3](03_overhead.ipynb)" in text
    else:
        assert f"{words.times(1 / ratio)} shorter than the profiler's" in text and "tell the effects apart" in text
    # the rule: overhead-bound iff the fixed cost is at least the roofline time
    for row in t.itertuples():
        if row.flops or row.nbytes:
            assert (row.regime == "overhead-bound") == (o >= row.roofline_seconds), row
    total = t.seconds.sum()
    for regime in prose.REGIMES:
        rows = t[t.regime == regime]
        if len(rows):
            assert f"{regime} rows" in text
            assert close_to(100 * rows.seconds.sum() / total, text, 0.03)
            listed = listing(text, regime)
            for op in set(rows.op):
                assert f"`{op}`" in listed, (regime, op, listed)
            for op in set(t.op) - set(rows.op):
                assert f"`{op}`," not in listed + "," and f"`{op}` " not in listed, (regime, op)
    timed = t[(t.seconds > 0) & (t.roofline_seconds > 0)]
    assert f"median efficiency of {words.percent(timed.efficiency.median())}" in text
    best = timed.loc[timed.efficiency.idxmax()]
    assert f"the highest was `{best.op}`, at {words.percent(best.efficiency)}" in text
    assert ("above the roof" in text) == bool((timed.efficiency > prose.ABOVE_ROOF).any())
    over = (t.regime == "overhead-bound").sum()
    assert ("No row was overhead-bound" in text) == (over == 0)
    assert ("Every row was overhead-bound" in text) == (over == len(t))
    # operators far below their roofs that hold much of the time get a sentence each (review B:S5)
    by_op = timed.groupby("op")[["seconds", "roofline_seconds"]].sum()
    share, eff = by_op.seconds / total, by_op.roofline_seconds / by_op.seconds
    slow = set(by_op.index[(eff < prose.SLOW_EFFICIENCY) & (share > prose.SLOW_SHARE)])
    assert ("ran far below" in text) == bool(slow)
    for op in slow:
        assert f"`{op}` ({words.percent(share[op])} of the summed replayed time, at {words.percent(eff[op])}" in text
        if op.startswith("bernoulli"):
            assert "many instructions per element" in text and "brrr counts 1 FLOP per element" in text
    floor = t.attrs["replay_floor_seconds"]
    assert words.seconds(floor) in text
    if floor > prose.FLOOR_FACTOR * o:
        assert "the fixed cost of a call timed back to back. No row can measure less" in text
        assert "DRAM" not in text.split("Each row is timed")[1].split("\n\n")[0]   # no cause the page did not time
    elif floor < o / (1 + words.SAME):
        assert "less than the fixed cost of a call" in text
    else:
        assert "close to the fixed cost of a call" in text


@pytest.mark.parametrize("runs", sets_with("profile_block"))
def test_regimes(runs):
    t = as_frame(runs["profile_block"])
    p = prose.regimes(t, reference.load("profile_block"))
    check_regimes(t, first(p))
    for ref in reference.load("profile_block"):
        assert ref.meta["device"]["name"] in str(p)


@pytest.mark.parametrize("runs", sets_with("profile_block"))
def test_rows_vs_model(runs):
    t = as_frame(runs["profile_block"])
    text = str(prose.rows_vs_model(t))
    total, model = t.seconds.sum(), t.attrs["model_seconds"]
    assert words.seconds(total) in text and words.seconds(model) in text
    ratio = total / model
    if ratio > 1 + words.SAME:
        assert "each operator reads its inputs from DRAM" in text
        assert close_to(ratio, text, 0.05)
        share = min(1.0, len(t) * t.attrs["replay_floor_seconds"] / total)
        assert words.percent(share) in text
    elif ratio < 1 / (1 + words.SAME):
        assert "which no row contains" in text and close_to(1 / ratio, text, 0.05)
    else:
        assert "about the same" in text


# --- BERT against Ivanov et al. ----------------------------------------------------------

def three_classes(t):
    cats = ["matmul", "normalisation", "elementwise"]
    g = t[t.category.isin(cats)].groupby("category")[["flops", "seconds", "nbytes"]].sum().reindex(cats).fillna(0)
    flops, secs = g.flops / g.flops.sum(), g.seconds / g.seconds.sum()
    rate = g.flops / g.seconds
    return flops, secs, rate, g


@pytest.mark.parametrize("runs", sets_with("profile_bert"))
def test_bert(runs):
    t = as_frame(runs["profile_bert"])
    text = first(prose.bert(t, reference.load("profile_bert")))
    flops, secs, rate, g = three_classes(t)
    for value in (100 * flops["matmul"], 100 * secs["matmul"]):   # the other classes: in the table beside
        assert close_to(value, text, 0.01)
    norm_gap, ew_gap = rate["matmul"] / rate["normalisation"], rate["matmul"] / rate["elementwise"]
    assert "published: 99.8% and 61%" in text
    mm_time = secs["matmul"]
    if flops["matmul"] > 0.99 and mm_time <= 0.8:
        assert "This run reproduces the published shape" in text
    elif flops["matmul"] > 0.99 and mm_time <= 0.95:
        assert "there, but weaker" in text
    else:
        assert "does not reproduce" in text
    assert ("gaps are smaller than published" in text) == (norm_gap < 250 and ew_gap < 700)
    assert ("gaps are larger than published" in text) == (norm_gap > 250 and ew_gap > 700)
    small_bytes = g.nbytes[["normalisation", "elementwise"]].sum() / g.nbytes.sum()
    assert close_to(100 * small_bytes, text, 0.01)
    # what moved the time (review B:S1): the ridges and the efficiencies, recomputed from the rows
    roofs = t[t.category.isin(g.index)].groupby("category").roofline_seconds.sum().reindex(g.index)
    mm_eff = roofs["matmul"] / g.seconds["matmul"]
    small_eff = roofs[["normalisation", "elementwise"]].sum() / g.seconds[["normalisation", "elementwise"]].sum()
    assert f"matmuls ran at {words.percent(mm_eff)} of their roof" in text
    assert f"operators at {words.percent(small_eff)} of theirs" in text
    assert "ridge at 139 FLOP/byte" in text               # the V100's, 125 TFLOP/s FP16 over 900 GB/s
    s = t.attrs["summary"]
    assert close_to(s["peak_flops_float32"] / s["peak_bandwidth"], text, 0.01)   # float32 matmuls on a CPU
    assert "moved time" not in text                   # no verdict the rows do not measure
    assert "further below their peak" not in text
    at_roof = g.flops / roofs
    assert close_to(at_roof["matmul"] / at_roof["normalisation"], text, 0.01)
    assert close_to(at_roof["matmul"] / at_roof["elementwise"], text, 0.01)
    tokens = math.prod(list(t[t.op == "native_layer_norm"].iloc[0].input_shapes[0])[:-1])
    assert f"{tokens:,} tokens" in text


# --- forward and backward ----------------------------------------------------------------

@pytest.mark.parametrize("runs", sets_with("profile_train"))
def test_backward(runs):
    t = as_frame(runs["profile_train"])
    text = first(prose.backward(t, reference.load("profile_train")))
    by = t.groupby("phase")[["flops", "seconds"]].sum()
    rf = by.flops["backward"] / by.flops["forward"]
    rt = by.seconds["backward"] / by.seconds["forward"]
    assert close_to(rf, text, 0.01) and close_to(rt, text, 0.01)
    if rf < 1.9:
        assert "a little under the rule of thumb of 2" in text
    elif rf <= 2.1:
        assert "about the rule of thumb of 2" in text
    else:
        assert "more than the rule of thumb of 2" in text
    # H200 review 07_08: no regime is named for the backward operators that the rows do not show
    assert "memory-bound operators" not in text
    if rt > rf * (1 + words.SAME):
        assert "more than its share of FLOPs" in text
    elif rt < rf / (1 + words.SAME):
        assert "less than its share of FLOPs" in text
    else:
        assert "in proportion to its FLOPs" in text
    mm = t[t.category == "matmul"].groupby("phase").seconds.sum()
    fwd, bwd = 1 - mm["forward"] / by.seconds["forward"], 1 - mm["backward"] / by.seconds["backward"]
    assert words.percent(fwd) in text and words.percent(bwd) in text
    assert ("does not shrink when you train" in text) == (bwd >= fwd / (1 + words.SAME))


def test_backward_flops_are_under_twice_the_forward_for_the_block():
    """By hand: the block's input needs no gradient, so the FLOP ratio is just under 2."""
    for runs in record_sets().values():
        if "profile_train" in runs:
            facts = prose.backward_facts(runs["profile_train"])
            assert 1.5 < facts["flop_ratio"] < 2.0


# --- ResNet-18 ------------------------------------------------------------------------------

@pytest.mark.parametrize("runs", sets_with("profile_resnet18"))
def test_resnet(runs):
    t = as_frame(runs["profile_resnet18"])
    text = first(prose.resnet(t, reference.load("profile_resnet18")))
    conv = t[t.op == "convolution"]
    share = conv.seconds.sum() / t.seconds.sum()
    assert close_to(100 * share, text, 0.01)
    assert close_to(100 * conv.flops.sum() / t.flops.sum(), text, 0.01)
    word = "almost all of it" if share >= 0.8 else "most of it, but not all" if share >= 0.5 else "less than half"
    assert word in text
    side = list(conv.iloc[0].input_shapes[0])[-1]
    assert f"{side}×{side} pixels" in text
    for regime in prose.REGIMES:
        for op in set(t[t.regime == regime].op):
            assert f"`{op}`" in listing(text, regime)


# --- the remedies -----------------------------------------------------------------------------

@pytest.mark.parametrize("runs", sets_with("compile_block", "profile_eval"))
def test_compile(runs):
    run, t = runs["compile_block"], as_frame(runs["profile_eval"])
    text = first(prose.compile_outcome(run, t, reference.load("compile_block")))
    bound = t[(t.category != "matmul") & (t.regime != "compute-bound")]
    assert words.seconds(bound.seconds.sum()) in text
    assert words.percent(bound.seconds.sum() / t.seconds.sum()) in text
    times = {r["variant"]: r["seconds"] for r in run.records}
    if "torch.compile" not in times:
        assert "failed on this machine" in text and run.meta["error"] in text
        return
    ratio = times["eager"] / times["torch.compile"]
    assert words.seconds(times["eager"]) in text and words.seconds(times["torch.compile"]) in text
    if ratio > 1 + words.SAME:
        assert f"ran {words.times(ratio)} as fast" in text
    elif ratio < 1 / (1 + words.SAME):
        assert f"{words.times(1 / ratio)} slower" in text
    else:
        assert "about the same" in text


@pytest.mark.parametrize("runs", sets_with("profile_batches"))
def test_batches(runs):
    run = runs["profile_batches"]
    text = first(prose.batch_remedy(run, reference.load("profile_batches")))
    recs = sorted(run.records, key=lambda r: r["batch"])
    a, z = recs[0], recs[-1]
    gain = a["seconds_per_token"] / z["seconds_per_token"]
    tokens = z["tokens"] / a["tokens"]
    assert f"{a['overhead_ops']} of the {a['ops']} rows" not in text      # the table beside shows them
    assert words.seconds(a["model_seconds"]) in text and words.seconds(z["model_seconds"]) in text
    if gain > tokens * (1 + words.SAME):
        assert "more than the tokens grew" in text
    elif gain > 1 + words.SAME:
        assert f"fell {words.times(gain)}." in text
    else:
        assert "did not fall on this run" in text
    assert words.number(a["matmul_intensity"]) in text and words.number(z["matmul_intensity"]) in text
    assert z["matmul_intensity"] > a["matmul_intensity"]   # the weights are read once per call


@pytest.mark.parametrize("runs", sets_with("profile_precision"))
def test_precision(runs):
    run = runs["profile_precision"]
    text = first(prose.precision(run, reference.load("profile_precision")))
    f32, low = run.records[0], run.records[-1]
    assert f"`{low['dtype']}`" in text
    assert ("half the bytes" in text) == (abs(f32["nbytes"] / low["nbytes"] - 2) < 0.05)
    mm = f32["matmul_seconds"] / low["matmul_seconds"]
    if mm > 1 + words.SAME:
        assert f"{words.times(mm)} as fast." in text
    elif mm < 1 / (1 + words.SAME):
        assert f"{words.times(1 / mm)} slower." in text
    else:
        assert "about as fast." in text
    if run.meta.get("native_bf16") is False and words.is_cpu(run):
        assert "no bfloat16 dot-product instructions" in text


# --- wordings no shipped set reaches yet: hand-made tables (not measurements) -------------------

GPU = {"name": "Test GPU", "backend": "cuda", "l2_bytes": 50 * 2 ** 20, "peak_bandwidth": 3e12,
       "peak_flops_float32": 60e12, "peak_flops_float32_tensor": 400e12, "peak_flops_float16_tensor": 900e12}


def made_table(rows, overhead, floor, chapter3, model, device=GPU):
    t = pd.DataFrame(rows)
    t["calls"] = 1
    t["roofline_seconds"] = [max(f / device["peak_flops_float32"], b / device["peak_bandwidth"])
                             for f, b in zip(t.flops, t.nbytes)]
    t["efficiency"] = t.roofline_seconds / t.seconds
    t["intensity"] = t.flops / t.nbytes
    t["regime"] = ["overhead-bound" if overhead >= r else
                   "compute-bound" if f / device["peak_flops_float32"] >= b / device["peak_bandwidth"] else
                   "memory-bound" for f, b, r in zip(t.flops, t.nbytes, t.roofline_seconds)]
    t.attrs.update(device=device["name"], backend=device["backend"], overhead_seconds=overhead,
                   replay_floor_seconds=floor, chapter3_call_seconds=chapter3, model_seconds=model,
                   summary=device)
    return t


def gpu_block():
    rows = [dict(op="addmm", category="matmul", flops=1e8, nbytes=2e6, seconds=9e-6, phase="forward"),
            dict(op="gelu", category="elementwise", flops=5e5, nbytes=8e6, seconds=6e-6, phase="forward"),
            dict(op="native_layer_norm", category="normalisation", flops=7e5, nbytes=2e6, seconds=5e-6,
                 phase="forward")]
    return made_table(rows, overhead=6e-6, floor=3e-6, chapter3=6.2e-6, model=40e-6)


def test_regimes_on_a_gpu_where_every_row_is_overhead_bound():
    t = gpu_block()
    assert set(t.regime) == {"overhead-bound"}
    text = str(prose.regimes(t))
    check_regimes(t, text)
    assert "Every row was overhead-bound" in text
    assert "timed on the GPU's own clock" in text
    assert "with one thread" not in text          # PyTorch's CPU threads mean nothing for a GPU add
    assert "No reference GPU run of this profile" in text


def test_regimes_reference_paragraph_compares_with_this_run():
    cpu = copy.deepcopy(gpu_block())
    cpu.attrs.update(overhead_seconds=1e-7, backend="cpu", device="Test CPU",
                     summary={**GPU, "name": "Test CPU", "backend": "cpu"})
    cpu["regime"] = "memory-bound"
    ref = reference.as_result(gpu_block(), "profile_block")
    ref.meta.update(reference=True, date="2026-01-02T00:00:00+00:00", device=GPU)
    text = str(prose.regimes(cpu, [ref]))
    assert "On the reference Test GPU (measured 2026-01-02)" in text
    assert "More of the block is overhead-bound there than here" in text
    assert words.seconds(6e-6) in text and "60 times this run's" in text


def slow_block(op, seconds, module="attention.attn_dropout", floor=3e-6):
    """The GPU block with one more row, ``op``, at 1 MB and ``seconds``: far below its roof when slow."""
    t = gpu_block()
    rows = t.to_dict("records") + [dict(op=op, category="elementwise", flops=2.5e5, nbytes=1e6, seconds=seconds,
                                        phase="forward", module=module)]
    return made_table(rows, overhead=1e-7, floor=floor, chapter3=1e-7, model=1e-3)


def test_slow_rows_that_draw_random_numbers():
    t = slow_block("bernoulli_.float", 40e-6)
    p = diagnosis_regimes.slow_rows(t)
    (op, share, eff, kind), = p.facts["slow_rows"]
    assert op == "bernoulli_.float" and kind == "random" and eff < 0.1 and share > 0.1
    assert str(p).startswith(f"One operator ran far below its roof and still took much of the time: "
                             f"`bernoulli_.float` ({words.percent(share)} of the summed replayed time, at "
                             f"{words.percent(eff)} of its roof).")
    assert "draws dropout's random mask" in str(p) and "brrr counts 1 FLOP per element" in str(p)
    assert "the label memory-bound" in str(p)
    assert "ran far below" in str(prose.regimes(t))       # the regimes paragraph carries it
    other = diagnosis_regimes.slow_rows(slow_block("uniform_", 40e-6, module="init"))
    assert "`uniform_` draws random numbers." in str(other)
    backward = diagnosis_regimes.slow_rows(slow_block("native_dropout_backward", 40e-6))
    assert backward.facts["slow_rows"][0][3] == "other"   # uses the mask, draws none


def test_slow_rows_made_of_the_replay_floor_or_of_something_else():
    floor = diagnosis_regimes.slow_rows(slow_block("clone", 40e-6, floor=30e-6))
    assert floor.facts["slow_rows"][0][3] == "floor"
    assert f"The rows of `clone` averaged less than twice the replay floor of {words.seconds(30e-6)}" in str(floor)
    other = diagnosis_regimes.slow_rows(slow_block("clone", 40e-6))
    assert other.facts["slow_rows"][0][3] == "other" and "`torch.profiler` lists the kernel it ran" in str(other)
    assert "vectorise" not in str(other)                   # no cause the page did not measure
    assert "bytes of `clone`, and something it leaves out holds it back" in str(other)
    two = slow_block("clone", 40e-6)
    two = made_table(two.to_dict("records") + [dict(op="bernoulli_.float", category="elementwise", flops=2.5e5,
                                                    nbytes=1e6, seconds=40e-6, phase="forward", module="x")],
                     overhead=1e-7, floor=3e-6, chapter3=1e-7, model=1e-3)
    text = str(diagnosis_regimes.slow_rows(two))
    assert text.startswith("Two operators ran far below their roofs") and "`clone`" in text and "`bernoulli_" in text
    assert "draws random numbers" in text                  # module 'x' is no dropout
    two[two.op == "bernoulli_.float"] = two[two.op == "bernoulli_.float"].assign(op="mul.Tensor")
    text = str(diagnosis_regimes.slow_rows(two))
    assert "bytes of `clone` and `mul.Tensor`, and something it leaves out holds them back" in text
    fast = diagnosis_regimes.slow_rows(slow_block("clone", 1e-6))   # at its roof: nothing to say
    assert str(fast) == "" and fast.facts["slow_rows"] == []
    assert "ran far below" not in str(prose.regimes(gpu_block()))


def test_rows_vs_model_when_the_model_takes_longer():
    t = gpu_block()
    t.attrs["model_seconds"] = 1e-3
    p = prose.rows_vs_model(t)
    assert p.facts["outcome"] == "model longer" and "which no row contains" in str(p)


def bert_like(mm_time, norm_time, ew_time, device=GPU, floor=3e-6):
    rows = [dict(op="addmm", category="matmul", flops=998e6, nbytes=4e6, seconds=mm_time, phase="forward"),
            dict(op="native_layer_norm", category="normalisation", flops=1.7e6, nbytes=3e6, seconds=norm_time,
                 phase="forward", input_shapes=((4, 8, 16),)),
            dict(op="gelu", category="elementwise", flops=0.3e6, nbytes=3e6, seconds=ew_time, phase="forward")]
    for r in rows:
        r.setdefault("input_shapes", ((1, 2),))
    return made_table(rows, overhead=1e-6, floor=floor, chapter3=1e-6, model=1.0, device=device)


def test_bert_shape_wordings():
    reproduced = str(prose.bert(bert_like(0.6, 0.25, 0.15)))
    assert "This run reproduces the published shape" in reproduced and "32 tokens" in reproduced
    assert "the ridge of its matmuls here is 20 FLOP/byte, 6.9 times lower" in reproduced   # 60 TFLOP/s, 3 TB/s
    weaker = str(prose.bert(bert_like(0.9, 0.05, 0.05)))
    assert "there, but weaker" in weaker and "10% of the time, against 39%" in weaker
    not_shape = str(prose.bert(bert_like(0.99, 0.005, 0.005)))
    assert "does not reproduce the published shape" in not_shape
    # FLOP/s gaps far above the published ones, with a replay floor that is most of the small rows' time
    big = prose.bert(bert_like(0.001, 0.5, 0.5, floor=0.3))
    assert "gaps are larger than published." in str(big)
    assert "The replay floor (see above) makes 60% of the small operators' replayed time." in str(big)
    assert "replay floor (see above)" not in str(prose.bert(bert_like(0.001, 0.5, 0.5)))


def share_facts(mm_time, ridge=5.0, mm_eff=0.7, small_eff=0.7, floor_share=0.0):
    return {"mm_time": mm_time, "ridge": ridge, "v100_ridge": 125e12 / 900e9, "mm_eff": mm_eff,
            "small_eff": small_eff, "floor_share": floor_share}


@pytest.mark.parametrize("facts, said", [
    (share_facts(0.8), "FLOP/byte, 28 times lower."),
    (share_facts(0.4, ridge=500), "FLOP/byte, 3.6 times higher."),
    (share_facts(0.6, ridge=139), "FLOP/byte, about the same."),
])
def test_what_sets_the_matmuls_share(facts, said):
    text = diagnosis_models._why_share(facts)
    assert said in text and "moved" not in text           # review B:S1: no claim the data do not make
    assert "further below their peak" not in text
    assert f"at {words.percent(facts['mm_eff'])} of their roof" in text
    assert f"at {words.percent(facts['small_eff'])} of theirs" in text
    assert ("replay floor" in text) == (facts["floor_share"] > diagnosis_models.FLOOR_SHARE)
    assert "30% of the small operators'" in diagnosis_models._why_share(share_facts(0.6, floor_share=0.3))


def test_the_gaps_against_the_published_ones():
    b = {"norm_gap": 14.0, "ew_gap": 160.0, "norm_roof_gap": 8.0, "ew_roof_gap": 36.0, "floor_share": 0.0}
    small = diagnosis_models._why_gaps(b)
    assert "gaps are smaller than published." in small and "8× and the elementwise operators 36× below" in small
    mixed = diagnosis_models._why_gaps({**b, "norm_gap": 300.0})
    assert "One FLOP/s gap is above the published one and the other below." in mixed
    assert diagnosis_models._why_gaps({**b, "ew_gap": math.nan}) == ""


def test_backward_less_than_its_flops():
    rows = [dict(op="addmm", category="matmul", flops=1e9, nbytes=1e6, seconds=1e-3, phase="forward"),
            dict(op="gelu", category="elementwise", flops=1e6, nbytes=1e7, seconds=1e-3, phase="forward"),
            dict(op="mm", category="matmul", flops=2e9, nbytes=2e6, seconds=1.5e-3, phase="backward"),
            dict(op="gelu_backward", category="elementwise", flops=1e6, nbytes=1e7, seconds=0.5e-3,
                 phase="backward")]
    t = made_table(rows, overhead=1e-6, floor=1e-6, chapter3=1e-6, model=1.0)
    p = prose.backward(t)
    assert p.facts["flop_outcome"] == "about 2" and p.facts["time_outcome"] == "less than FLOPs"
    assert p.facts["share_outcome"] == "smaller" and "a smaller share going back" in str(p)


def made_compile(eager, compiled=None, error="", device=GPU):
    recs = [{"variant": "eager", "seconds": eager, "iqr_seconds": 0.01 * eager}]
    if compiled:
        recs.append({"variant": "torch.compile", "seconds": compiled, "iqr_seconds": 0.01 * compiled})
    return Result("compile_block", recs, {"device": device, "error": error, "date": "2026-01-02"})


def test_compile_wordings():
    t = gpu_block()
    failed = str(prose.compile_outcome(made_compile(1e-3, error="RuntimeError: no compiler"), t))
    assert "failed on this machine (RuntimeError: no compiler)" in failed
    faster = prose.compile_outcome(made_compile(1e-3, 0.4e-3), t)
    assert faster.facts["outcome"] == "faster" and "2.5 times as fast" in str(faster)
    assert "not all of the gain is fusion" not in str(faster)      # that sentence is about a CPU
    same = prose.compile_outcome(made_compile(1e-3, 1.05e-3), t)       # fusable rows: 11 of 20 us
    assert same.facts["outcome"] == "same" and "did no better" not in str(same)   # B2:N6
    assert "55% of all rows" in str(same) and "about the same." in str(same)
    slower = prose.compile_outcome(made_compile(1e-3, 2e-3), t)
    assert slower.facts["outcome"] == "slower" and "`torch.profiler` lists the kernels" in str(slower)
    ref = made_compile(1e-3, 0.5e-3)
    ref.meta["reference"] = True
    assert "On the reference Test GPU" in str(prose.compile_outcome(made_compile(1e-3), t, [ref]))


def made_batches(first, last, ops=(5, 0)):
    recs = [{"batch": 1, "tokens": 16, "ops": 16, "overhead_ops": ops[0], "overhead_time_share": 0.3,
             "model_seconds": first, "seconds_per_token": first / 16, "overhead_seconds": 5e-6,
             "matmul_intensity": 4.0},
            {"batch": 32, "tokens": 512, "ops": 16, "overhead_ops": ops[1], "overhead_time_share": 0.0,
             "model_seconds": last, "seconds_per_token": last / 512, "overhead_seconds": 5e-6,
             "matmul_intensity": 60.0}]
    return Result("profile_batches", recs, {"device": GPU, "seq": 16, "date": "2026-01-02"})


def test_batch_wordings():
    close = prose.batch_remedy(made_batches(1e-3, 1.2e-3))
    assert close.facts["outcome"] == "fell" and "close to the growth in tokens" in str(close)
    flat = prose.batch_remedy(made_batches(1e-3, 40e-3))
    assert flat.facts["outcome"] == "did not fall" and "did not fall on this run" in str(flat)
    noisy = prose.batch_remedy(made_batches(1e-3, 0.5e-3))
    assert noisy.facts["outcome"] == "fell, noisy"
    assert "from 4 to 60 FLOP/byte" in str(close)


def made_precision(mm32, mm16, roof32=1e-3, roof16=1e-4, device=GPU, native=None):
    recs = [{"dtype": "float32", "matmul_seconds": mm32, "matmul_roofline_seconds": roof32, "seconds": 2 * mm32,
             "nbytes": 8e6, "flops": 1e9, "model_seconds": 3 * mm32},
            {"dtype": "float16", "matmul_seconds": mm16, "matmul_roofline_seconds": roof16, "seconds": 2 * mm16,
             "nbytes": 4e6, "flops": 1e9, "model_seconds": 3 * mm16}]
    return Result("profile_precision", recs, {"device": device, "native_bf16": native, "date": "2026-01-02"})


def test_precision_wordings():
    gpu = prose.precision(made_precision(1e-3, 0.25e-3))
    assert gpu.facts["outcome"] == "faster" and "4 times as fast" in str(gpu)
    assert "up to 10 times as fast" in str(gpu) and "half the bytes" in str(gpu)
    cpu = {**GPU, "backend": "cpu"}
    slow = prose.precision(made_precision(1e-3, 2e-3, roof16=1e-3, device=cpu, native=False))
    assert slow.facts["outcome"] == "slower" and "convert every element to float32" in str(slow)
    assert "expected no faster matmuls" in str(slow)
    fast = prose.precision(made_precision(1e-3, 0.9e-3, roof16=1e-3, device=cpu, native=True))
    assert "has bfloat16 dot-product instructions" in str(fast)


# --- review 07_08 items 1, 2, 8, 9, 16: what the remedies' sentences may claim -----------------

UNMEASURED = ("machine was busy", "machine was busier", "other programs", "cores are shared")


@pytest.mark.parametrize("runs", sets_with("compile_block", "profile_eval"))
def test_compile_names_no_unmeasured_cause(runs):
    run, t = runs["compile_block"], as_frame(runs["profile_eval"])
    text = first(prose.compile_outcome(run, t))
    assert not any(u in text for u in UNMEASURED)
    assert "tuned ones" not in text               # Inductor leaves GPU matmuls to the vendor library
    bound = t[(t.category != "matmul") & (t.regime != "compute-bound")]
    for regime, n in bound.regime.value_counts().items():   # the fusable rows' labels, as the table has them
        assert f"{n} {regime}" in text
    times = {r["variant"]: r for r in run.records}
    if "torch.compile" in times:
        noisy = any(r.get("iqr_seconds", 0) > prose.NOISY * r["seconds"] for r in times.values())
        if noisy:                                  # noise is said only with the IQR that shows it
            assert all(words.seconds(r["iqr_seconds"]) in text for r in times.values())


@pytest.mark.parametrize("runs", sets_with("profile_batches"))
def test_batches_name_no_unmeasured_cause(runs):
    run = runs["profile_batches"]
    text = first(prose.batch_remedy(run))
    assert not any(u in text for u in UNMEASURED)
    big = max(run.records, key=lambda r: r["batch"])
    assert ("Every row stayed overhead-bound" in text) == (big["overhead_ops"] == big["ops"])


@pytest.mark.parametrize("runs", sets_with("profile_precision"))
def test_precision_says_what_the_rows_say(runs):
    run = runs["profile_precision"]
    text = first(prose.precision(run))
    f32, low = run.records[0], run.records[-1]
    assert "whole block ran" not in text and "helps every memory-bound" not in text
    rows = f32["seconds"] / low["seconds"]
    said = text.split("All its rows together")[1]
    assert words.seconds(low["seconds"]) in said and words.seconds(f32["seconds"]) in said
    assert ("as fast." in said) == (rows > 1 + words.SAME) and ("slower." in said) == (rows < 1 / (1 + words.SAME))


@pytest.mark.parametrize("runs", sets_with("profile_bert"))
def test_bert_ridge_is_the_dtypes(runs):              # review 07_08 item 4
    t = as_frame(runs["profile_bert"])
    b = diagnosis_models.bert_facts(t)
    text = first(prose.bert(t))
    assert "This device's lower ridge" not in text and "this device's lower ridge" not in text
    assert f"in {b['mm_dtype']}" in text
    tr = b["tensor_ridge"]
    assert ("The ridge is the dtype's" in text) == (b["mm_dtype"] == "float32" and math.isfinite(tr)
                                          and abs(tr / b["ridge"] - 1) > words.SAME)


@pytest.mark.parametrize("runs", sets_with("profile_resnet18"))
def test_resnet_says_what_was_measured(runs):             # review 07_08 item 18
    t = as_frame(runs["profile_resnet18"])
    text = first(prose.resnet(t))
    assert "touch each element once" not in text
    r = diagnosis_models.resnet_facts(t)
    assert words.rate(r["conv_rate"]) in text and words.percent(r["conv_eff"]) in text
    floor_said = "at least half of their time is the floor" in text
    assert floor_said == (r["floor"] <= r["rest_per_call"] < 2 * r["floor"])


@pytest.mark.parametrize("runs", sets_with("profile_block"))
def test_rows_vs_model_names_autograd_only_with_a_backward(runs):   # review 07_08 item 19
    t = as_frame(runs["profile_block"])
    text = first(prose.rows_vs_model(t))
    assert ("autograd" in text) == (bool(t.attrs.get("backward")) and "Python" in text)
    assert "other programs" not in first(prose.regimes(t))
