"""Chapter 5's claims (brrr.prose.recompute): which claims each cell makes of a record, with which numbers, and that
the numbers come from the record; and the chapter's static text, whose numbers are recomputed here. The phrases
belong to the claims' own tests (tests/test_claims.py)."""
import json
import math
from pathlib import Path

import pytest

import brrr
from brrr import claims
from brrr.experiments.recompute import checkpoint_flop_ratio, step_bytes
from brrr.prose import recompute as prose
from brrr.units import format_bytes

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "05_recomputation.ipynb"


def _cells() -> list:
    return ["".join(c["source"]) for c in json.loads(CHAPTER.read_text())["cells"]]


def test_the_static_counts_are_what_the_hooks_count():
    torch = pytest.importorskip("torch")
    from brrr.experiments import recompute
    rows = recompute.saved_tensors(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU()), torch.randn(8, 16))
    assert sum(r["nbytes"] for r in rows) == 1536 and {r["kind"] for r in rows} == {"activation"}
    assert any("1,536 bytes, the count by" in c and "no weight" in c for c in _cells())
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64))
    saved = recompute.saved_bytes(mlp, torch.randn(32, 64))
    answer = next(c for c in _cells() if c.startswith("brrr.book.answer(") and "second Linear" in c)
    for nbytes in (32 * 64 * 4, 32 * 256 * 4, saved):
        assert format_bytes(nbytes) in answer
    assert saved == 32 * 64 * 4 + 32 * 256 * 4 and f"**{format_bytes(saved)}**" in answer


def _sweep(every=(0, 1, 2, 4, 8), allocator=True, spread=0.01):
    layers, block, inp = 8, 10 * 2 ** 20, 2 ** 20
    records = []
    for e in every:
        kept = inp * math.ceil(layers / e) if e else layers * block
        recompute = min(e, layers) * block if e else 0
        t = 1.0 * (checkpoint_flop_ratio(layers, e) + 0.01 * e)
        records.append({"every": e, "saved_bytes": kept, "recompute_bytes": recompute,
                        "peak_activation_bytes": kept + recompute, "min_seconds": t, "seconds": t,
                        "iqr_seconds": spread * t * (e == 2) + 1e-4 * t,
                        "peak_memory_bytes": (kept + recompute + 2 ** 24 * (e == 0)) if allocator else None})
    return brrr.Result("checkpoint_sweep", records, {"layers": layers, "block_bytes": block, "input_bytes": inp,
                                                     "parameter_bytes": 2 ** 26})


def _checked(cs):
    cs = [c for c in cs if c is not None]
    for c in cs:
        c.check()
    return cs


def test_the_memory_cell_takes_the_lowest_modelled_peak_and_the_formula_from_the_record():
    run = _sweep()
    best, against, formula = _checked(prose.memory_claims(run))
    peaks = {r["every"]: r["peak_activation_bytes"] for r in run.records if r["every"]}
    assert best.value == min(peaks, key=peaks.get)
    assert against.value == peaks[best.value] and against.base == run.records[0]["saved_bytes"]
    assert formula.value == pytest.approx(math.sqrt(8 * 2 ** 20 / (10 * 2 ** 20)))


def test_the_time_cell_judges_the_length_farthest_from_its_flops_that_worked_problem_2_did_not_check():
    run = _sweep(spread=0.5)
    worst, noisy = _checked(prose.time_claims(run))
    assert worst.base == pytest.approx(checkpoint_flop_ratio(8, 8))       # 0.01 e above its FLOPs: e = 8 is farthest
    assert worst.value == pytest.approx(checkpoint_flop_ratio(8, 8) + 0.08)
    assert noisy.outcome == "noisy" and noisy.subject.endswith(" 2")
    worst, _ = _checked(prose.time_claims(_sweep(every=(0, 1, 4))))    # Worked problem 2's length is not judged twice
    assert worst.base == pytest.approx(checkpoint_flop_ratio(8, 1))
    assert len(_checked(prose.time_claims(_sweep(every=(0, 4))))) == 1


def test_the_allocator_cell_sets_the_measured_peaks_against_the_late_peak_sum():
    run = _sweep()
    best, cut, late, share = _checked(prose.allocator_claims(run))
    alloc = {r["every"]: r["peak_memory_bytes"] for r in run.records}
    assert best.value == min((e for e in alloc if e), key=alloc.get)
    assert cut.value == pytest.approx(alloc[0] / alloc[best.value])
    grads = (1 - best.value / 8) * 2 ** 26
    assert share.parts == {"the weights' gradients": pytest.approx(grads)}
    rows = {r["every"]: r for r in run.records}
    assert share.whole == pytest.approx(rows[best.value]["recompute_bytes"] + grads + 2 ** 24)   # 2^24: the extra
    assert isinstance(late, claims.Compare) and late.unit == "B"
    missing, = prose.allocator_claims(_sweep(allocator=False))
    assert isinstance(missing, claims.Missing) and missing.record == "peak_memory_bytes"


def _chain(variants=("eager", "compiled (save all)", "compiled (recompute)")):
    times = {"eager": 1.35e-3, "compiled (save all)": 9.4e-4, "compiled (recompute)": 8.6e-4}
    saved = {"eager": 4, "compiled (save all)": 4, "compiled (recompute)": 1}
    records = [{"variant": v, "min_seconds": times[v], "saved_bytes": saved[v] * 2 ** 28} for v in variants]
    return brrr.Result("compiled_recompute", records, {"k": 4, "n": 2 ** 26, "dtype": "float32", "device": {
        "name": "Test GPU", "backend": "cuda", "peak_bandwidth": 4.8e12, "l2_bytes": 2 ** 26}})


def test_the_compiled_cell_gives_each_variants_bandwidth_by_the_bytes_it_moves():
    run = _chain()
    memory, *rates, against = _checked(prose.compiled_claims(run))
    assert (memory.value, memory.base) == (2 ** 28, 2 ** 30)
    for rate, r in zip(rates, run.records):
        assert rate.measured == pytest.approx(step_bytes(r["variant"], 4, 2 ** 26) / r["min_seconds"])
        assert rate.allowed == 4.8e12
    assert (against.value, against.base) == (rates[2].measured, rates[1].measured)   # recomputing's rate, saving's
    assert step_bytes("eager", 4, 1) == 20 * 4 and step_bytes("compiled (recompute)", 4, 1) == 5 * 4
    eager_only = _checked(prose.compiled_claims(_chain(("eager",))))
    assert [type(c) for c in eager_only] == [claims.Bound]


class Device:
    def __init__(self, peak=1e12, bandwidth=1e11):
        self.name, self.peak_bandwidth, self.l2_bytes, self._peak = "Test", bandwidth, 2 ** 20, peak

    def peak_flops(self, dtype="float32", tensor_cores=False):
        return self._peak


def _answer(said):
    for c in said.claims:
        c.check()
        assert c.text() in said.text
    return said


def test_worked_problem_2_takes_its_ratio_from_the_early_stop_flop_count():
    said = _answer(prose.checkpoint_cost(10 * 2 ** 20, 2 ** 20, 32, 4, 64, 128, Device()))
    assert said.facts["ratio"] == checkpoint_flop_ratio(32, 4)
    assert said.facts["seconds"] == pytest.approx(3 * 32 * 16 * 64 * 128 ** 2 / 1e12)


@pytest.mark.parametrize("peak, regime", [(1e12, "memory-bound"), (1e8, "compute-bound")])
def test_worked_problem_3_follows_the_bytes_where_the_passes_are_memory_bound(peak, regime):
    said = _answer(prose.chain_checkpoint(4, 2 ** 20, Device(peak=peak)))
    assert said.facts["regime"] == regime
    flops = (7 * 5 + 4 * 11) / (4 * 16)
    assert said.facts["ratio"] == pytest.approx((7 * 8 + 4 + 8 + 3 * 12) / (4 * 8 + 4 + 8 + 3 * 12)
                                                if regime == "memory-bound" else (7 * 5 + 1 + 4 * 11) / (4 * 5 + 1 + 4 * 11))
    assert (said.facts["ratio"] > flops) == (regime == "memory-bound")


class Timing:
    def __init__(self, seconds):
        self.median = self.min = seconds
        self.iqr = 0.01 * seconds


def test_the_worked_checks_say_which_record_they_lack_and_judge_the_fastest_samples():
    assert prose.ratio_check(None, None, 1.3, 1e-4, "worked_plain_gelus", "step").facts == \
        {"missing": "worked_plain_gelus"}
    ratio, bound, _ = prose.ratio_check(Timing(2e-4), Timing(2.6e-4), 1.3, 1e-4, "worked_plain_gelus", "step").claims
    assert ratio.value == pytest.approx(1.3) and ratio.base == 1.3
    assert bound.measured == 2e-4 and bound.allowed == 1e-4


def test_worked_problem_2_is_checked_by_the_sweeps_plain_and_segmented_points():
    run = _sweep()
    ratio, bound, _ = prose.sweep_check(run, 4, 1.3, 0.5).claims
    rows = {r["every"]: r for r in run.records}
    assert ratio.value == pytest.approx(rows[4]["min_seconds"] / rows[0]["min_seconds"]) and ratio.base == 1.3
    assert (bound.measured, bound.allowed) == (rows[0]["min_seconds"], 0.5)
    (lacks,) = prose.sweep_check(_sweep(every=(0, 1, 8)), 4, 1.3, 0.5).claims
    assert isinstance(lacks, claims.Missing) and lacks.record == "checkpoint_sweep: every=4"
    older = _sweep()
    for r in older.records:
        del r["min_seconds"]
    (lacks,) = prose.sweep_check(older, 4, 1.3, 0.5).claims
    assert isinstance(lacks, claims.Missing) and lacks.record == "checkpoint_sweep: min_seconds"
    assert prose.sweep_check(None, 4, 1.3, 0.5).facts == {"missing": "checkpoint_sweep"}
