"""Chapter 8's claims (brrr.prose.capstone) and the arithmetic of its worked problems
(brrr.experiments.capstone_worked): which claims, with which numbers, each record gives. The records are
the shipped H200 and CPU runs, so no test depends on what this machine measures; the claims' own tests
check their sentences."""
import json
import math
from pathlib import Path

import pytest

from brrr import claims, gpt, specs
from brrr.anchors import ANCHORS, peaks
from brrr.device import Device
from brrr.experiments import capstone as steps_lib, capstone_worked as worked
from brrr.gpt import GPT2_SMALL
from brrr.prose import capstone
from brrr.results import Result
from brrr.roofline import worked_roofs

ROOT = Path(__file__).resolve().parents[1]
SETS = ("nvidia-h200", "amd-epyc-2-threads")
H200 = Device(name="NVIDIA H200", backend="cuda", array_library="cupy", l2_bytes=60 * 2 ** 20,
              spec=specs.GPU_SPECS["H200"])
CPU = Device(name="CPU", backend="cpu", array_library="numpy", l2_bytes=32 * 2 ** 20,
             _measured={"bandwidth": 25e9, "flops_float32": 2e11, "flops_float64": 1e11, "date": "", "method": ""})


def record(set_name, name):
    """A shipped record as the page replays it: its own run, not a reference."""
    run = Result.load(str(ROOT / "brrr" / "data" / "reference" / set_name / f"{name}.json"))
    run.meta["reference"] = False
    return run


def profile_table(set_name):
    import pandas as pd
    return pd.DataFrame(record(set_name, "capstone_profile_batch").records)


def kinds(said_or_claims):
    return [type(c).__name__ for c in getattr(said_or_claims, "claims", said_or_claims) if c is not None]


@pytest.mark.parametrize("set_name", SETS)
def test_each_step_is_compared_with_the_configuration_it_changed(set_name):
    run = record(set_name, "capstone_steps")
    peak = steps_lib.mfu_peak(run)
    for r in steps_lib.measured(run):
        change, mfu, own, shares, compiled, graphs, noisy = capstone.step(r["step"])(run)
        before = steps_lib.previous(run, r["step"])
        if before is None:
            assert isinstance(change, claims.Value) and change.value == r["seconds_per_token"]
        else:
            assert (change.value, change.base) == (r["seconds_per_token"], before["seconds_per_token"])
            assert before["step"] == r.get("builds_on", before["step"])      # the record's own base, not the list's
        assert (mfu is None) == (steps_lib.mfu(run, r) is None)
        if mfu is not None:
            assert (mfu.measured, mfu.allowed, mfu.mfu) == (r["flops_per_second"], peak["flops"], True)
        if own is not None:          # a float32 step on a GPU, against its own peak: the FP32 one here
            assert r["dtype"] == "float32" and own.allowed == run.meta["device"]["peak_flops_float32"] != peak["flops"]
        if shares is not None:
            assert steps_lib.profiled(r)
            assert sum(shares.parts.values()) == pytest.approx(shares.whole)
        assert (compiled is None) == (not r.get("compile_seconds"))
        assert (graphs is not None) == (r["step"] == "graphs")
        assert noisy.iqr / noisy.median == pytest.approx(r["iqr_seconds"] / r["seconds"])


def test_a_step_the_record_lacks_or_did_not_run_is_a_missing_claim_naming_it():
    h200, cpu = record("nvidia-h200", "capstone_steps"), record("amd-epyc-2-threads", "capstone_steps")
    (lacks,) = capstone.step("tf32")(h200)
    assert isinstance(lacks, claims.Missing) and lacks.record == "capstone_steps: tf32"
    (skipped,) = capstone.step("graphs")(cpu)
    assert steps_lib.by_step(cpu)["graphs"]["skipped"] in skipped.what
    h200.meta["reference"] = True                 # a reference run says nothing of a step it lacks
    assert capstone.step("tf32")(h200) == [] and capstone.gain_check("cast", {})(h200) == []
    said = claims.say(capstone.step("eager"), None, record="capstone_steps")
    assert "`capstone_steps`" in said.text


@pytest.mark.parametrize("set_name", SETS)
def test_the_record_says_which_steps_it_has_and_the_summary_follows_it(set_name):
    run = record(set_name, "capstone_steps")
    share, missing, unjudged = capstone.recorded(run)
    assert sum(share.parts.values()) == share.whole == len(steps_lib.STEPS)
    assert unjudged.record == "capstone_steps: rows"     # both records predate the rows: shares by least times
    lacks = [s.key for s in steps_lib.not_recorded(run)]
    assert (missing is None) == (not lacks) and all(k in missing.record for k in lacks)
    o = steps_lib.overall(run)
    compare, mfu, kept, path = capstone.summary(run)
    first, final = steps_lib.by_step(run)[o["first"]], steps_lib.by_step(run)[o["last"]]
    assert (compare.value, compare.base) == (final["seconds_per_token"], first["seconds_per_token"])
    assert kept.whole == len(o["kept"]) + len(o["undone"]) == len(steps_lib.measured(run)) - 1
    moves = steps_lib.regime_moves(run)
    assert path.whole == sum(map(len, moves.values())) and sum(path.parts.values()) == path.whole


def test_the_h200_record_predates_four_steps_and_ran_sdpa_after_the_graphs():
    """M8-1, m8-3: the page follows the record (six steps, SDPA on the graphed pass), and says so."""
    run = record("nvidia-h200", "capstone_steps")
    assert [s.key for s in steps_lib.not_recorded(run)] == ["tf32", "cast", "vocab", "ridge"]
    sdpa = capstone.step("sdpa")(run)
    assert sdpa[0].base_name.startswith("CUDA graphs") and "reduce-overhead" in sdpa[4].subject
    frame = steps_lib.steps_table(run).data
    assert list(frame["change"])[-4:] == ["not in this record"] * 4 and "builds on" in frame


def test_worked_problem_1_counts_the_call_cost_the_run_recorded(monkeypatch):
    """S8-1: without capstone_call_cost, the fixed cost the same run measured with its profile of step 2."""
    monkeypatch.setenv("BRRR_REPLAY", "nvidia-h200")
    seconds, source = worked.fixed_cost(None)
    assert seconds == record("nvidia-h200", "capstone_profile_batch").meta["attrs"]["overhead_seconds"]
    assert source == "capstone_profile_batch" and worked.fixed_cost(2e-6) == (2e-6, "capstone_call_cost")
    n = worked.one_call(GPT2_SMALL, 1, 16, H200, seconds)
    assert n["fixed"] == n["calls"] * seconds and n["nbytes"] == 4 * GPT2_SMALL.n_params()
    assert n["flops"] == gpt.forward_flops(GPT2_SMALL, 1, 16)["total"] == n["per_token"] * 16
    regime = next(c for c in capstone.call_answer(n, source).claims if isinstance(c, claims.Regime))
    assert regime.call_cost == n["fixed"]
    assert regime.regime == n["here"].with_ceilings(overhead=n["fixed"]).regime(n["flops"], n["nbytes"])
    alone = next(c for c in capstone.call_answer(worked.one_call(GPT2_SMALL, 1, 16, H200, None)).claims
                 if isinstance(c, claims.Regime))
    assert alone.call_cost is None             # no fixed cost known: the roofline's answer alone, and says so
    bound, measured = capstone.call_check(n)(1e-3)
    assert bound.allowed == max(regime.bounds().values()) and measured.seconds == 1e-3


@pytest.mark.parametrize("dev", [H200, CPU], ids=["h200-spec", "cpu-measured"])
def test_worked_problem_2_is_the_ridge_in_tokens_with_the_three_way_rule(dev):
    """M8-2: the call at the ridge is judged with its call cost too."""
    cfg = GPT2_SMALL if dev.on_gpu else gpt.sizes(False, False)["config"]
    n = worked.ridge_call(cfg, 16, dev, 1e-5)
    here = worked_roofs(dev)[0]
    assert n["n_star"] * n["per_token"] / here.peak_flops == pytest.approx(4 * cfg.n_params() / here.peak_bandwidth)
    assert n["batch"] == max(2, math.ceil(n["n_star"] / 16)) and n["tokens"] == 16 * n["batch"]
    assert n["fixed"] == n["calls"] * 1e-5 == pytest.approx(gpt.operator_calls(cfg, n["batch"], 16) * 1e-5)
    few, seconds = 2e-3, 3e-3
    growth, per_token, regime = capstone.ridge_check(n, few)(seconds)
    assert (growth.value, growth.base) == (seconds, few) and per_token.ratio == pytest.approx(1.5 / n["batch"])
    assert regime.seconds == seconds and regime.call_cost == n["fixed"]


def test_worked_problems_3_4_and_6_take_their_shares_from_the_records():
    cpu, h200 = record("amd-epyc-2-threads", "capstone_steps"), record("nvidia-h200", "capstone_steps")
    profile = record("nvidia-h200", "capstone_profile_batch")
    tf32 = worked.tf32_gain(None, CPU, [profile])            # no TF32 here: the reference GPU's peaks and profile
    f, r = worked.matmul_share(profile.records), 494.5 / 67
    assert tf32["where"] == "the reference NVIDIA H200" and tf32["r"] == pytest.approx(r)
    assert tf32["bound"] == pytest.approx(1 / ((1 - f) + f / r)) and tf32["limit"] == pytest.approx(1 / (1 - f))
    assert worked.tf32_gain(None, CPU, [])["where"] is None
    step4 = steps_lib.by_step(cpu)["autocast"]
    cast = worked.cast_saving(gpt.sizes(False, False)["config"], CPU, cpu)
    assert cast["c"] == step4["cast_seconds"] / step4["profile_seconds"] and cast["speedup"] == 1 / (1 - cast["c"])
    assert cast["nbytes"] == 6 * cast["weights"] and cast["floor"] == cast["nbytes"] / CPU.peak_bandwidth
    old = worked.cast_saving(GPT2_SMALL, H200, h200)         # a record made before the steps kept their parts
    assert old["c"] is None and "Missing" in kinds(capstone.cast_answer(old, h200))
    checked = capstone.gain_check("cast", cast)(cpu)
    assert checked[1].value == pytest.approx(step4["seconds_per_token"] / steps_lib.by_step(cpu)["cast"]["seconds_per_token"])
    assert checked[1].base == cast["speedup"]
    vocab = worked.vocab_gain(GPT2_SMALL.vocab, cpu)
    assert (vocab["wide"], vocab["added"]) == (gpt.padded_vocab(50257), gpt.padded_vocab(50257) - 50257)
    assert "h" not in vocab and "Missing" in kinds(capstone.vocab_answer(vocab, cpu))     # the step did not run


def test_a_bound_is_checked_against_the_step_it_was_worked_out_over():
    """Step 5's bound is a speed-up over step 4, even where step 4 was undone and step 5 built on step 2."""
    run = Result.load(str(ROOT / "tests" / "data" / "records" / "quick" / "amd-epyc-2-threads" / "capstone_steps.json"))
    steps, run.meta["reference"] = steps_lib.by_step(run), False
    assert steps["cast"]["builds_on"] == "batch" and not steps["autocast"]["kept"]
    gain, against, *_ = capstone.gain_check("cast", {"speedup": 1.2})(run)
    assert gain.base == steps["batch"]["seconds_per_token"] and against.base == 1.2
    assert against.value == steps["autocast"]["seconds_per_token"] / steps["cast"]["seconds_per_token"]


def test_worked_problem_6_bounds_the_step_by_the_heads_share_of_the_profile_it_changed():
    run = record("amd-epyc-2-threads", "capstone_steps")
    run.records = [dict(r) for r in run.records]
    vocab = steps_lib.by_step(run)["vocab"]
    base = steps_lib.previous(run, "vocab")
    vocab.update({k: v for k, v in base.items() if k not in ("step", "label", "builds_on", "kept")}, skipped=None,
                 vocab=8256, seconds_per_token=0.9 * base["seconds_per_token"])
    n = worked.vocab_gain(8192, run)
    assert n["h"] == base["head_seconds"] / base["profile_seconds"] and n["bound"] == 1 / (1 - n["h"])
    assert "at_peak" not in n                           # the CPU's float32 rate does not bound bfloat16
    gain, against, head = capstone.gain_check("vocab", n)(run)
    assert against.base == n["bound"] and head.value == vocab["head_seconds"]


def test_worked_problems_5_7_and_8_are_the_formulas():
    a = worked.attention_share(GPT2_SMALL, 8, 512, H200)
    assert a["crossover"] == 6 * 768 and a["block"] == 512 / (6 * 768 + 512)
    f = gpt.forward_flops(GPT2_SMALL, 8, 512)
    assert a["share"] == f["attention"] / f["total"] and 0 < a["time_share"] < 1
    measured = worked.attention_measured(profile_table("nvidia-h200"))
    check = capstone.attention_check(a)(measured)
    assert check[0].value == measured["flop_share"] and check[1].base == a["time_share"]
    assert sum(check[4].parts.values()) <= check[4].whole and worked.attention_measured(None) is None
    d = worked.decode_floor(GPT2_SMALL, H200)
    weights = GPT2_SMALL.n_params() - GPT2_SMALL.context * GPT2_SMALL.d_model
    assert d["weight_bytes"] == 2 * weights and d["floor"] == d["weight_bytes"] / H200.peak_bandwidth
    assert d["cache_bytes"] == 2 * 12 * 16 * d["length"] * 768 * 2 and d["batch_floor"] > d["floor"]   # m8-5
    t = worked.train_floor(GPT2_SMALL, 8, 1024, H200)
    assert t["flops"] == gpt.train_flops(GPT2_SMALL, 8, 1024)["total"] and t["peak"]["flops"] == 989.5e12
    assert t["least"] == t["flops"] / 989.5e12 == t["ref_least"]    # m8-9: the H100's bf16 peak is the H200's
    assert capstone.train_answer(t, "GPT-2 small").facts["reference"] == "same"
    assert worked.train_floor(GPT2_SMALL, 8, 1024, CPU)["peak"]["dtypes"] == ["float32"]


def test_training_is_bounded_only_where_its_peak_bounds_the_dtype():
    train = record("amd-epyc-2-threads", "capstone_train")
    n = worked.train_floor(gpt.sizes(False, False)["config"], 4, 128, CPU)
    best, mfu, floor, costs, noisy = capstone.training(n)(train)
    runs = steps_lib.measured(train)
    fastest = min(runs, key=lambda r: r["seconds"])
    assert best.value == fastest["seconds"] and mfu is None        # bfloat16: the CPU's float32 rate does not bound it
    bounded = min((r for r in runs if r["dtype"] == "float32"), key=lambda r: r["seconds"])
    assert (floor.measured, floor.allowed) == (bounded["seconds"], n["least"])
    assert costs.whole == pytest.approx(sum(fastest["costs"].values())) and len(costs.parts) == 3


def test_the_anchors_compare_the_peaks_not_the_names():
    """S8-2: the H100s of modded-nanogpt have the H200's bfloat16 peak; the A100s a third of it."""
    run = record("nvidia-h200", "capstone_steps")
    said = {c.name: c for c in capstone.anchors(run)}
    assert said["H100"].outcome == "same" and said["A100"].outcome == "less"
    assert {m: p for m, _, p in peaks()} == {"A100": specs.GPU_SPECS["A100-40GB"].bf16_tensor,
                                             "H100": specs.GPU_SPECS["H100-SXM"].bf16_tensor}
    assert all(c.base == steps_lib.mfu_peak(run)["flops"] for c in said.values())


def test_the_static_text_quotes_numbers_that_recompute():
    cells = json.loads((ROOT / "chapters" / "08_making_a_model_go_brrr.ipynb").read_text())["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    wide = gpt.padded_vocab(GPT2_SMALL.vocab)
    assert f"{GPT2_SMALL.vocab:,}" in text and f"to {wide:,}" in text and f"adds {wide - GPT2_SMALL.vocab} rows" in text
    assert "llm.c and modded-nanogpt ran on eight GPUs" in text
    assert {a.name for a in ANCHORS if a.gpus == 8} == {"llm.c", "modded-nanogpt"}
    f = gpt.train_flops(GPT2_SMALL, 1, 1024)
    assert "about three times a forward pass's FLOPs" in text and f["total"] == 3 * f["forward"]


GPU_SUMMARY = {"name": "NVIDIA H100 80GB HBM3", "backend": "cuda", "peak_flops_float32": 6.7e13,
               "peak_bandwidth": 3.35e12}


def _row(op, flops, nbytes, seconds):
    roof = max(flops / GPU_SUMMARY["peak_flops_float32"], nbytes / GPU_SUMMARY["peak_bandwidth"])
    return {"op": op, "module": "gpt.h.0.mlp", "category": "matmul" if op == "addmm" else "pointwise",
            "dtype": "float32", "calls": 1, "flops": flops, "nbytes": nbytes, "seconds": seconds,
            "roofline_seconds": roof}


def _steps_with_rows(rows, floor=0.0):
    step = {"step": "eager", "label": "eager FP32", "tokens": 16, "skipped": None, "kept": True, "builds_on": None,
            "seconds": 1e-3, "seconds_per_token": 1e-3 / 16, "tokens_per_second": 16e3, "iqr_seconds": 0.0,
            "regime": "overhead-bound",
            "regime_shares": {"overhead-bound": 1.0}, "rows": rows, "replay_floor_seconds": floor,
            "profile_seconds": sum(r["seconds"] for r in rows)}
    return Result("capstone_steps", [step], {"device": GPU_SUMMARY, "reference": False})


def test_a_step_that_kept_its_rows_is_judged_by_chapter_7s_rule():
    """N8-M2: a row whose work at the roof is below the call cost, but whose GPU kept busy far longer, is not
    overhead-bound (its device time hides the call); a row that took its memory traffic's time is memory-bound."""
    busy = _row("addmm", 2e6, 1e5, 40e-6)                 # 0.03 us of arithmetic, 40 us of GPU time
    traffic = _row("gelu", 1e6, 3.35e7, 10e-6)            # 10 us of memory traffic at the roof
    run = _steps_with_rows([busy, traffic])
    judged = steps_lib.judged(run, 6.5e-6)
    (r,) = judged.records
    assert r["judged"] and set(r["regime_shares"]) == {claims.UNEXPLAINED_REGIME, "memory-bound"}
    assert r["regime_shares"][claims.UNEXPLAINED_REGIME] == pytest.approx(0.8)
    assert r["regime"] == claims.UNEXPLAINED_REGIME and run.records[0]["regime"] == "overhead-bound"   # a copy
    assert capstone.recorded(judged)[2] is None                   # judged: nothing lacks
    table = steps_lib.steps_table(judged).data
    assert table.loc[0, f"time {claims.UNEXPLAINED_REGIME}"] == pytest.approx(0.8)
    shares = capstone.step("eager")(judged)[3]
    assert shares.parts["operators " + claims.UNEXPLAINED_REGIME] == pytest.approx(40e-6)


def test_steps_are_judged_only_with_the_pages_call_cost_and_say_what_they_lack():
    run = _steps_with_rows([_row("gelu", 1e6, 3.35e7, 10e-6)])
    assert steps_lib.judged(run, None) is run and steps_lib.judged(None, 1e-6) is None
    run.records[0]["regime_shares"] = {"memory-bound": 1.0}
    run.records[0]["regime"] = "memory-bound"
    assert capstone.recorded(run)[2].record == "capstone_call_cost"        # rows, but no cost to judge them by
    del run.records[0]["rows"]
    assert capstone.recorded(run)[2].record == "capstone_steps: rows"


def test_worked_problem_1_reads_the_eager_steps_median_and_nothing_from_a_step_that_did_not_run():
    cpu = record("amd-epyc-2-threads", "capstone_steps")
    assert steps_lib.step_seconds(cpu, "eager") == steps_lib.by_step(cpu)["eager"]["seconds"]
    assert steps_lib.step_seconds(cpu, "graphs") is None          # skipped on a CPU
    assert steps_lib.step_seconds(None, "eager") is None
