"""brrr.prose.diagnosis: which claims chapter 7 makes of each record, with the record's own numbers (never its
phrases: those are the claims' own tests), and brrr.experiments.diagnosis_records, which reads the records."""
import math
from collections import Counter

import pandas as pd
import pytest

from brrr import claims, reference
from brrr.experiments import diagnosis, diagnosis_records as d
from brrr.prose import diagnosis as p
from brrr.results import Result
from brrr.specs import GPU_SPECS
from record_sets import sets_with
from worked_fakes import FakeDevice

T_CALL = 5e-6      # a made-up page fixed cost of a call, seconds


def _kinds(said) -> list:
    return [type(c).__name__ for c in said.claims]


def _claim(said, kind, n=0):
    return [c for c in said.claims if type(c).__name__ == kind][n]


def _table(rows, floor=1e-6, **attrs) -> pd.DataFrame:
    """A made-up profile on a device of 100 GFLOP/s and 10 GB/s; ``rows`` as (op, flops, nbytes, seconds)."""
    t = pd.DataFrame([{"op": op, "module": "M.layer", "phase": "forward", "category": "matmul" if op == "mm" else "other",
                       "flops": f, "nbytes": b, "seconds": s, "roofline_seconds": max(f / 1e11, b / 1e10)}
                      for op, f, b, s in rows])
    t.attrs.update(summary={"peak_flops_float32": 1e11, "peak_bandwidth": 1e10, "l2_bytes": 2 ** 20},
                   replay_floor_seconds=floor, backend="cpu", **attrs)
    return t


def test_a_row_far_above_every_bound_is_explained_by_none_and_the_table_says_so():
    # bounds: 10 µs of arithmetic; the fixed cost 5 µs; replayed 1 µs floor + the row's own time
    t = _table([("mm", 1e6, 1e3, 1e-6 + 2.01e-5), ("mm", 1e6, 1e3, 1e-6 + 1.99e-5), ("add", 0, 8, 3e-6)])
    labels = list(p.judged(t, T_CALL).regime)
    assert labels == [claims.UNEXPLAINED_REGIME, "compute-bound", "overhead-bound"]
    assert labels == [p.row_regime(t, r, T_CALL).outcome for r in t.itertuples()]
    assert p.row_regime(t, next(t.itertuples()), T_CALL).seconds == pytest.approx(2.01e-5)   # less the floor
    assert p.judged(None, T_CALL) is None and p.judged(t, T_CALL).attrs == t.attrs


@pytest.mark.parametrize("runs", sets_with("profile_block", "profile_resnet18", "profile_bert"))
def test_each_row_is_judged_against_the_roof_that_gives_its_recorded_roofline_time(runs):
    for name in ("profile_block", "profile_resnet18", "profile_bert"):
        t = reference.as_frame(runs[name])
        for r in t.itertuples():
            roof = d.row_roofline(t.attrs["summary"], r.flops, r.nbytes, r.roofline_seconds)
            assert float(roof.time(r.flops, r.nbytes)) == pytest.approx(r.roofline_seconds, rel=1e-6), r


@pytest.mark.parametrize("runs", sets_with("profile_block"))
def test_the_regimes_cell_counts_the_labels_the_table_shows(runs):
    t = p.judged(reference.as_frame(runs["profile_block"]), T_CALL)
    said = p.regimes(t, (), T_CALL)
    assert _kinds(said)[:3] == ["Share", "Share", "Regime"] and len(said.claims) <= claims.MOST_SENTENCES
    labels, times, longest = said.claims[:3]
    assert labels.parts == dict(Counter(t.regime)) and labels.whole == len(t)
    assert sum(times.parts.values()) == pytest.approx(t.seconds.sum())
    assert longest.seconds == d.beyond_floor(t, t.loc[t.seconds.idxmax()])
    assert _claim(said, "Value").value == t.attrs["replay_floor_seconds"]
    assert _claim(said, "Bound").measured == t.loc[(t.roofline_seconds / t.seconds).idxmax()].seconds


def _costs_set(overheads):
    runs = {name: Result(name, [], {"attrs": {"overhead_seconds": s}, "device": {"name": "X"}})
            for name, s in zip(diagnosis.PROFILES, overheads)}
    runs["profile_batches"] = Result("profile_batches", [{"overhead_seconds": 9e-6}], {})
    return runs


def test_a_set_made_before_the_page_measured_its_fixed_cost_takes_the_median_of_its_profiles(monkeypatch):
    monkeypatch.setattr(reference, "replay_runs", lambda: _costs_set([1e-6, 2e-6, 3e-6, 4e-6, 5e-6]))
    costs = diagnosis.page_call_cost()
    assert costs.meta["from_profiles"] and len(costs.records) == 6
    assert diagnosis.median_seconds(costs) == pytest.approx(3.5e-6)
    said = p.call_cost(costs)
    assert [c.value for c in said.claims if isinstance(c, claims.Value)] == [3.5e-6, 1e-6, 9e-6]
    assert _claim(said, "Noisy").outcome == "noisy"
    measured = []
    monkeypatch.setattr(reference, "replay_runs", lambda: {})
    monkeypatch.setattr(reference, "measure", lambda name, fn, *a: measured.append(name))
    diagnosis.page_call_cost()
    assert measured == ["call_costs"]                            # live: measured once, recorded
    assert "call_costs" in p.call_cost(None).text                # no profile at all: the record named


def _compiled(eager, compiled, backend="cuda", clock="host"):
    return Result("compile_block", [{"variant": "eager", "seconds": eager[0], "iqr_seconds": eager[1]},
                                    {"variant": "torch.compile", "seconds": compiled[0], "iqr_seconds": compiled[1]}],
                  {"device": {"backend": backend}, "clock": clock})


def test_whole_runs_are_compared_only_on_the_host_clock_with_a_spread_within_the_noise_limit():
    steady = p.compile_outcome(_compiled((4e-4, 1e-5), (2e-4, 1e-5)), None)
    assert _kinds(steady) == ["Compare"] and steady.claims[0].ratio == pytest.approx(0.5)
    noisy = p.compile_outcome(_compiled((4e-4, 2e-4), (2e-4, 1e-5)), None)
    assert _kinds(noisy) == ["Noisy"] and noisy.claims[0].median == 4e-4
    old = p.compile_outcome(_compiled((4e-4, 1e-5), (2e-4, 1e-5), clock=None), None)
    assert [c.record for c in old.claims] == ["model_clock"]
    cpu = p.compile_outcome(_compiled((4e-4, 1e-5), (2e-4, 1e-5), backend="cpu", clock=None), None)
    assert _kinds(cpu) == ["Compare"]                            # a CPU's timer was always the host's
    spreadless = p.compile_outcome(_compiled((4e-4, None), (2e-4, 1e-5)), None)
    assert [c.record for c in spreadless.claims] == ["model_iqr_seconds"]
    fusable = _table([("add", 0, 8, 3e-6), ("mm", 1e6, 1e3, 1e-5)])      # judged with the page's fixed cost
    assert p.compile_outcome(_compiled((4e-4, 1e-5), (2e-4, 1e-5)), fusable, (), T_CALL).claims[-1].parts == \
        {"overhead-bound": 1}
    failed = Result("compile_block", [{"variant": "eager", "seconds": 1e-3}], {"error": "no compiler"})
    assert [c.record for c in p.compile_outcome(failed, None).claims] == ["torch.compile"]


@pytest.mark.parametrize("runs", sets_with("profile_train"))
def test_the_backward_leaves_out_the_copies_an_old_record_holds_for_each_parameter(runs):
    t = reference.as_frame(runs["profile_train"])
    copies = d.profiler_copies(t)
    assert len(copies) in (0, 16)                              # the block has 16 parameters
    said = p.backward(t)
    back = t[t.phase == "backward"].seconds.sum()
    time = [c for c in said.claims if isinstance(c, claims.Compare) and c.unit == "s"][0]
    assert time.value == pytest.approx(back - copies.seconds.sum())
    assert (_kinds(said)[0] == "Share") == bool(len(copies))
    newer = t.assign(op="copy_", phase="backward")
    newer.attrs = {**t.attrs, "keeps_outputs": False}         # recorded since the recorder keeps no output
    assert d.profiler_copies(newer).empty


@pytest.mark.parametrize("runs", sets_with("profile_bert", "profile_resnet18"))
def test_bert_and_resnet_claims_hold_the_profiles_sums(runs):
    bert, cnn = (reference.as_frame(runs[n]) for n in ("profile_bert", "profile_resnet18"))
    said = p.bert(bert)
    three = bert[bert.category.isin(["matmul", "normalisation", "elementwise"])]
    assert said.claims[0].whole == pytest.approx(three.seconds.sum())
    v100 = GPU_SPECS["V100"]
    assert said.claims[1].value == pytest.approx(v100.fp16_tensor / v100.bandwidth)
    cnn = p.judged(cnn, T_CALL)
    said = p.resnet(cnn, (), T_CALL)
    conv = cnn[cnn.op == "convolution"]
    assert said.claims[2].parts == dict(Counter(conv.regime)) and said.claims[3].subject.startswith("`convolution`")
    assert said.claims[1].measured == pytest.approx(conv.seconds.sum())


@pytest.mark.parametrize("runs", sets_with("profile_batches", "profile_precision", "profile_eval"))
def test_the_remedies_say_what_their_records_hold(runs):
    batches = runs["profile_batches"]
    said = p.batch_remedy(batches, 1024, (), T_CALL)
    assert said.claims[0].value == max(r["tokens"] for r in batches.records) and said.claims[0].base == 1024
    assert ("rows" in batches.records[-1]) == ("Share" in _kinds(said))
    rows = [{"op": "mm", "module": "M.x", "category": "matmul", "dtype": "float32", "flops": 1e6, "nbytes": 1e3,
             "seconds": 1e-5, "roofline_seconds": 1e-5}] * 3
    kept = Result("profile_batches", [{**r, "rows": rows, "replay_floor_seconds": 0.0} for r in batches.records],
                  {"device": {"peak_flops_float32": 1e11, "peak_bandwidth": 1e10}})
    assert p.batch_remedy(kept, 1024, (), T_CALL).claims[-1].parts == {"compute-bound": 3}
    eval_table, precision = reference.as_frame(runs["profile_eval"]), runs["profile_precision"]
    row, roof = d.low_precision_matmul(eval_table, precision)
    mm = eval_table[eval_table.category == "matmul"]
    assert row["nbytes"] == mm.loc[mm.flops.idxmax()]["nbytes"] / 2
    assert sum(float(roof.time(f, b / 2)) for f, b in zip(mm.flops, mm["nbytes"])) == \
        pytest.approx(precision.records[-1]["matmul_roofline_seconds"], rel=1e-6)
    regime = _claim(p.precision(precision, eval_table, (), T_CALL), "Regime")
    assert regime.call_cost == T_CALL and regime.seconds is None


def test_the_worked_answers_take_their_numbers_from_the_page():
    dev, tokens = FakeDevice(flops=1e11, bandwidth=1e10), 1024
    answer = p.linear_answer(tokens, dev, T_CALL)
    flops, nbytes = 2 * tokens * 768 * 3072, 4 * (tokens * 768 + 768 * 3072 + 3072 + tokens * 3072)
    assert [c.value for c in answer.claims if isinstance(c, claims.Value)][1:3] == [flops, nbytes]
    here, h100 = [c for c in answer.claims if isinstance(c, claims.Regime)]
    assert here.call_cost == T_CALL and h100.call_cost is None and h100.roof.peak_flops == GPU_SPECS["H100-SXM"].fp32
    assert [c.record for c in p.linear_check(None, tokens, dev).claims] == ["worked_linear"]
    assert [c.record for c in p.linear_check(None, tokens, dev, "profile_bert").claims] == ["profile_bert"]
    row = pd.DataFrame([{"op": "addmm", "input_shapes": ((3072,), (tokens, 768), (768, 3072)), "seconds": 0.2}])
    checked = p.linear_check(row, tokens, dev, record="profile_bert").claims[0]
    assert (checked.measured, checked.allowed) == (0.2, pytest.approx(flops / 1e11))
    assert [c.record for c in p.one_token_check(None, None, tokens, dev, T_CALL).claims] == ["worked_linear_one_token"]
    one = p.one_token_answer(tokens, dev, T_CALL)
    assert _claim(one, "Compare").value == max(_claim(one, "Regime").bounds().values())
    soft = p.softmax_answer(8, 12, 128, dev, T_CALL)
    elements = 8 * 12 * 128 * 128
    assert [c.value for c in soft.claims[:3]] == [elements, 5 * elements, 8 * elements]
    bert = _table([("_softmax", 5 * elements, 8 * elements, 2e-3)], floor=4e-4)
    checked = p.softmax_check(bert, {"batch": 8, "heads": 12, "seq": 128}, dev)
    assert checked.claims[0].allowed == pytest.approx(8 * elements / 1e10)
    assert checked.claims[1].parts == {"the replay floor": 4e-4} and not math.isnan(checked.claims[1].whole)
