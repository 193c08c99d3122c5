"""brrr.prose.overhead (chapter 3): which claims each cell makes, with which numbers from which record;
and the numbers the chapter's static text quotes, recomputed. The claims' wording is theirs to test."""
import json
from pathlib import Path

import pytest

from brrr import claims
from brrr.experiments import overhead as ov
from brrr.prose import overhead as o
from brrr.results import Result

NOTEBOOK = Path(__file__).resolve().parents[1] / "chapters" / "03_overhead.ipynb"


class Dev:
    """A device as the worked answers read it."""
    def __init__(self, backend="cuda", flops=67e12, bandwidth=4.8e12):
        self.backend, self.on_gpu, self.name, self._flops, self.peak_bandwidth, self.l2_bytes = \
            backend, backend == "cuda", "Test device", flops, bandwidth, 2 ** 20

    def peak_flops(self, dtype="float32", tensor_cores=False):
        return self._flops

    def has_tensor_cores(self, dtype="float16"):
        return False


def sweep(libs=(("numpy", "cpu", 1e-6, 2.5e-10), ("torch", "cuda", 7e-6, 3e-12)), top=26):
    """A time_vs_size run that follows the model: the sum on a CPU, the larger on a GPU."""
    return Result("time_vs_size", records=[
        {"library": lib, "backend": b, "size": 2 ** k,
         "seconds": t0 + c * 2 ** k if b == "cpu" else max(t0, c * 2 ** k)}
        for lib, b, t0, c in libs for k in range(top + 1)])


def _by_name(found):
    return {c.name: c for c in found if getattr(c, "name", "")}


def test_the_crossover_test_compares_the_time_nearest_each_crossover_with_both_models():
    run = sweep()
    for backend, lib in (("cpu", "numpy"), ("cuda", "torch")):
        found = _by_name(o.crossovers(backend)(run))
        assert set(found) == {f"{lib} against overlap", f"{lib} against add"}       # only that backend's
        n, t, work, add, overlap = ov.crossover_tests(run)[lib]["near"]
        assert (found[f"{lib} against add"].value, found[f"{lib} against add"].base) == (t, add)
        assert found[f"{lib} against overlap"].base == overlap
    assert _by_name(o.crossovers("cpu")(run))["numpy against add"].outcome == "same"          # the sum held
    assert _by_name(o.crossovers("cuda")(run))["torch against overlap"].outcome == "same"     # the larger held


def test_a_call_below_the_fixed_cost_replaces_the_test_and_a_sweep_that_never_doubled_gives_its_largest():
    run = sweep()
    dip = next(r for r in run.records if r["library"] == "numpy" and r["size"] == 2048)
    dip["seconds"] = 0.5e-6
    found = o.crossovers("cpu")(run)
    assert [type(c).__name__ for c in found] == ["Compare", "Cause"] and found[1].text()
    assert (found[0].value, found[0].base) == (0.5e-6, ov.fit_overhead(run, "numpy")["overhead"])
    flat = o.crossovers("cuda")(sweep(top=20))
    assert [c.name for c in flat] == ["torch largest"] and flat[0].value == max(7e-6, 3e-12 * 2 ** 20)


def test_python_ops_claims_take_their_numbers_from_the_record():
    recs = [{"op": op, "statement": st, "seconds_per_op": s, "flops_meanwhile": s * 1e15, "backend": "cuda"}
            for op, st, s in (("add", "a + b", 40e-9), ("index", "s[3]", 18e-9), ("call", "f()", 41e-9))]
    found = _by_name(o.python_ops(Result("python_ops_per_second", records=recs, meta={"host_cpu": "Test CPU"})))
    assert found["against He"].value == 40e-9 and found["against He"].base == 1 / o.HE_PYTHON_OPS
    assert (found["fastest"].value, found["fastest"].base) == (18e-9, 41e-9)                # M3-1: the range
    assert found["meanwhile"].value == 40e-9 * 1e15 and "Test CPU" in found["against He"].text()


def _calls(backend="cuda", ch3=(6e-6, 7e-6, 6.5e-6), ch7=(8e-6, 6.9e-6, 7.9e-6)):
    rec = lambda lib, role, rounds: {"library": lib, "role": role, "backend": backend if lib == "torch" else "cpu",  # noqa: E731
                                     "seconds": sorted(rounds)[1], "round_seconds": list(rounds)}
    return Result("call_overhead", records=[rec("numpy", "chapter 3", (7e-7, 8e-7, 9e-7)),
                                            rec("torch", "chapter 3", ch3), rec("torch", "chapter 7", ch7)])


def test_calls_pair_the_rounds_and_set_each_sweep_against_the_call_on_its_own_backend():
    found = o.calls(sweep())(_calls())
    share = next(c for c in found if isinstance(c, claims.Share))
    assert share.whole == 3 and share.parts == {"it take less time": 1, "it take longer": 2}
    named = _by_name(found)
    assert named["chapter 7"].value == 7.9e-6 and named["chapter 7"].base == 6.5e-6
    assert named["numpy sweep"].base == 8e-7 and named["torch sweep"].base == 6.5e-6
    assert "torch sweep" not in _by_name(o.calls(sweep())(_calls(backend="cpu")))           # another processor
    assert "numpy sweep" not in _by_name(o.calls(None)(_calls()))                             # no sweep


def test_the_trace_sets_the_operators_that_launched_a_kernel_against_a_gpu_fixed_cost_only():
    from brrr.profiler.trace import summary
    run = Result.load(str(Path(ov.__file__).parents[1] / "data" / "reference" / "nvidia-h200" / "profiler_trace.json"))
    h = summary(run)["host"]
    gpu = _by_name(o.trace(ov.fit_overheads(sweep()))(run))
    assert gpu["launching"].value == h["launching_median"] and gpu["launching"].base == 7e-6
    cpu = o.trace(ov.fit_overheads(sweep((("torch", "cpu", 2e-6, 1e-10),))))(run)
    assert "launching" not in _by_name(cpu)
    assert {c.value for c in cpu if isinstance(c, claims.Value)} >= {h["launching_median"], h["quiet_median"]}


def test_graphs_compare_eager_per_operation_with_a_new_output_call_on_the_same_gpu():
    recs = [{"variant": v, "seconds": s, "n_ops": 20, "backend": "cuda"}
            for v, s in (("eager", 360e-6), ("CUDA graph", 27e-6))]
    found = _by_name(o.graphs(_calls())(Result("reduce_overhead_demo", records=recs)))
    assert found["eager"].value == 18e-6 and found["eager"].base == 7.9e-6
    assert found["graph"].outcome == "shorter" and "reduce-overhead" not in found             # not in the record
    assert "eager" not in _by_name(o.graphs(_calls(backend="cpu"))(Result("r", records=recs)))
    assert o.graphs(None)(Result("reduce_overhead_demo", records=[])) == []                   # no GPU: nothing


def _doubling(times, medians=None):
    recs, previous = [], None
    for k, t in enumerate(times):
        recs.append({"size": 2 ** k, "seconds": t, "time_ratio": t / previous if previous else None,
                     "size_ratio": 2.0 if previous else None, "median_seconds": (medians or times)[k]})
        previous = t
    return Result("double_the_batch", records=recs, meta={"torch_threads": 1, "cpu_threads": 2, "device": {
        "backend": "cuda", "peak_flops_float32": 67e12, "peak_bandwidth": 4.8e12}})


def test_doublings_count_the_verdicts_and_a_step_down_is_said_with_whether_it_stayed_and_its_median():
    run = _doubling([240e-6, 250e-6, 290e-6, 174e-6, 170e-6, 178e-6, 400e-6],
                    [300e-6, 310e-6, 350e-6, 345e-6, 177e-6, 180e-6, 410e-6])
    found = o.doublings(run)
    verdicts = [ov.batch_verdict(r["time_ratio"]) for r in run.records[1:]]
    share = found[0]
    assert sum(share.parts.values()) == len(verdicts) and share.parts["work-bound"] == verdicts.count("work-bound")
    named = _by_name(found)
    assert (named["largest fall"].value, named["largest fall"].base) == (174e-6, 290e-6)
    assert (named["after the fall"].value, named["after the fall"].base) == (170e-6, 290e-6)   # the step stayed
    assert (named["largest"].value, named["largest"].base) == (400e-6, 240e-6)
    assert (named["median"].value, named["median"].base) == (345e-6, 350e-6)                  # N3-M1: the samples
    assert "largest fall" not in _by_name(o.doublings(_doubling([1e-4, 1.05e-4, 1.1e-4])))   # nothing fell


def test_worked_answers_take_the_sweeps_fixed_costs_and_say_the_record_they_lack():
    run, dev = sweep((("cupy", "cuda", 8e-6, 5e-12),)), Dev()
    fits = ov.fit_overheads(run)
    tiny = o.tiny_answer(16, fits, "cupy", dev)
    assert [c for c in tiny.claims if isinstance(c, claims.Regime)][0].outcome == "overhead-bound"
    assert fits["cupy"]["overhead"] in {c.value for c in tiny.claims if isinstance(c, claims.Value)}
    cross = o.crossover_answer(fits, "cupy", dev)
    assert cross.facts["n"] == round(fits["cupy"]["overhead"] * dev.peak_bandwidth / 12)     # M3-3: no record needed
    for answer in (o.tiny_answer(16, {}, "cupy", dev), o.crossover_answer({}, "cupy", dev), o.batch_answer(None, 128, 4, dev)):
        assert [type(c).__name__ for c in answer.claims] == ["Missing"] and answer.text


def test_the_batch_answer_takes_the_least_time_any_pass_took():
    run = _doubling([240e-6, 250e-6, 290e-6, 174e-6, 169e-6, 178e-6])
    answer = o.batch_answer(run, 128, 4, Dev())
    assert answer.facts["fixed"] == 169e-6                                                      # m3-4
    assert answer.facts["batch"] == ov.batch_where_work_is(169e-6, 128, 4, 67e12, 4.8e12)


def test_a_check_takes_its_record_else_the_sweeps_nearest_point_against_both_models_at_the_sweeps_work():
    run, dev = sweep((("cupy", "cuda", 8e-6, 5e-12),)), Dev()
    fits = ov.fit_overheads(run)
    fixed, per_element = fits["cupy"]["overhead"], fits["cupy"]["per_element"]
    timed = o.add_check("worked_crossover_add", 9e-6, run, "cupy", 3_000_000, fits, dev).claims
    assert [type(c) for c in timed] == [claims.Bound, claims.Compare, claims.Compare]
    assert timed[0].measured == 3_000_000 * per_element                                       # N3-M2: the sweep's
    assert timed[0].allowed == pytest.approx(12 * 3_000_000 / dev.peak_bandwidth)             # against the roofline's
    named = _by_name(timed)
    assert named["against overlap"].value == 9e-6
    assert named["against add"].base == pytest.approx(fixed + 3_000_000 * per_element)
    fallback = o.add_check("worked_crossover_add", None, run, "cupy", 3_000_000, fits, dev).claims
    assert isinstance(fallback[0], claims.Missing) and fallback[0].record == "worked_crossover_add"
    n, t = ov.nearest(run, 3_000_000, "cupy")
    assert fallback[2].value == t and fallback[3].base == pytest.approx(fixed + n * per_element)
    tiny = o.add_check("worked_tiny_add", None, run, "cupy", 16, fits, dev).claims            # n3-3: in the fixed
    assert [type(c) for c in tiny] == [claims.Missing, claims.Compare]                        # cost; one model
    assert tiny[1].base == fixed and tiny[0].what.startswith(o.NEAREST) and tiny[0].what != o.NEAREST
    none = o.add_check("worked_tiny_add", None, None, "cupy", 16, {}, dev).claims
    assert [type(c).__name__ for c in none] == ["Missing"]


def test_the_batch_check_times_batch_one_again_against_the_answers_fixed_cost():
    run = _doubling([240e-6, 250e-6, 169e-6])
    answer = o.batch_answer(run, 128, 4, Dev())
    check = _doubling([170e-6, 200e-6])
    check.records[1]["size"] = answer.facts["batch"]
    named = _by_name(o.batch_check(check, run, answer, 128, 4).claims)
    assert (named["batch 1 again"].value, named["batch 1 again"].base) == (170e-6, 169e-6)
    assert named["against overlap"].value == 200e-6 and "reach" not in named
    fallback = _by_name(o.batch_check(None, run, answer, 128, 4).claims)                     # n3-4: how far
    assert (fallback["reach"].value, fallback["reach"].base) == (4, answer.facts["batch"])    # the sweep reached


def test_the_static_text_quotes_the_numbers_the_code_uses():
    cells = {c["id"]: "".join(c["source"]) for c in json.loads(NOTEBOOK.read_text())["cells"]}
    defined = cells["cell-11"]
    sizes = ov.default_sizes()[:ov.FIXED_COST_SIZES]
    assert f"the {ov.FIXED_COST_SIZES} smallest sizes" in defined
    assert ", ".join(map(str, sizes[:-1])) + f" and {sizes[-1]}" in defined
    assert f"the {ov.PER_ELEMENT_SIZES} first sizes" in defined
    assert all(f"`{ov.call_of(lib)}`" in defined for lib in ov.LIBRARIES)
    assert f"{o.HE_PYTHON_OPS / 1e6:.0f} million additions per second" in cells["cell-03"]
    assert f"more than {claims.SAME:.0%} (the margin this book calls \"about the same\")" in cells["cell-07"]
