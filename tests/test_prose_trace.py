"""brrr.prose.trace: every wording of the real-trace section, on small synthetic traces, and the
live trace's text checked against its own numbers."""
import pytest
from record_sets import sets_with

from brrr import Result, reference
from brrr.prose import trace as prose
from brrr.profiler.trace import summary

US = 1e-6
CPU = {"name": "AMD EPYC (2 threads)", "backend": "cpu"}
H100 = {"name": "NVIDIA H100 80GB HBM3", "backend": "cuda"}


def _run(ops, kernels=(), device=CPU, reference=False):
    """One step: top-level host operators ``[(start, duration)]`` in µs, each holding a launch of the
    kernel at the same index of ``kernels`` ``[(start, duration)]`` (µs), if there is one."""
    end = max([s + d for s, d in ops] + [s + d for s, d in kernels]) + 1
    records = [{"lane": "host thread 1", "side": "host", "name": "ProfilerStep#1", "category": "annotation",
                "start_seconds": 0.0, "seconds": end * US, "depth": 0, "correlation": None}]
    for i, (s, d) in enumerate(ops):
        records.append({"lane": "host thread 1", "side": "host", "name": f"aten::op{i}", "category": "operator",
                        "start_seconds": s * US, "seconds": d * US, "depth": 0, "correlation": None})
        if i < len(kernels):
            records.append({"lane": "host thread 1", "side": "host", "name": "cudaLaunchKernel",
                            "category": "launch", "start_seconds": (s + d / 2) * US, "seconds": 1 * US,
                            "depth": 1, "correlation": i})
    for i, (s, d) in enumerate(kernels):
        records.append({"lane": "GPU 0, stream 7", "side": "gpu", "name": f"kernel{i}", "category": "kernel",
                        "start_seconds": s * US, "seconds": d * US, "depth": 0, "correlation": i})
    meta = {"device": device, "date": "2026-11-24T00:00:00+00:00"}
    if reference:
        meta["reference"] = True
    return Result("profiler_trace", records, meta)


# host: two ops of 10 µs; gap 20 (mostly gaps), 10 (some), 0.5 (mostly operators)
MOSTLY_GAPS = [(0, 10), (30, 10)]
SOME_GAPS = [(0, 10), (20, 10)]
MOSTLY_OPS = [(0, 10), (10.5, 10)]


@pytest.mark.parametrize("ops, outcome, idle", [(MOSTLY_GAPS, "mostly gaps", 0.5), (SOME_GAPS, "some gaps", 1 / 3),
                                                (MOSTLY_OPS, "mostly operators", 0.5 / 20.5)])
def test_each_host_outcome_has_its_wording(ops, outcome, idle):
    p = prose.timeline(_run(ops))
    assert p.facts["host"] == outcome
    assert p.facts["host_idle_fraction"] == pytest.approx(idle)
    assert p.facts["gaps"] == 1
    words = {"mostly gaps": "Most of the time, then, no operator ran", "some gaps": "no faster kernel would remove",
             "mostly operators": "kept the thread busy nearly all the time"}
    assert words[outcome] in p.text
    for other, sentence in words.items():
        if other != outcome:
            assert sentence not in p.text
    assert f"{prose.w.percent(idle)} between operators" in p.text
    assert "one step traced" in p.text


def test_a_cpu_run_without_reference_says_so_and_what_a_gpu_would_show():
    p = prose.timeline(_run(SOME_GAPS))
    assert p.facts["gpu"] == "no GPU" and p.facts["references"] == 0
    assert "no second lane" in p.text
    assert "No reference GPU run of this trace ships" in p.text


@pytest.mark.parametrize("fixed, outcome", [(5 * US, "rest near the fixed cost"),
                                            (1 * US, "rest above the fixed cost"),
                                            (None, "not compared")])
def test_the_other_operators_are_set_against_the_fixed_cost_of_a_call(fixed, outcome):
    run = _run([(0, 30), (40, 10), (60, 10), (80, 12)])       # op0 the heaviest; the others 10, 10, 12 µs
    p = prose.timeline(run, fixed=fixed)
    assert p.facts["inside"] == outcome
    assert p.facts["heaviest"] == "aten::op0" and p.facts["rest_median"] == pytest.approx(10 * US)
    assert "`op0` (one call per step) took 48% of the time" in p.text
    assert "the other three operator calls per step took a median of 10 µs" in p.text
    assert ("overhead too" in p.text) == (outcome == "rest near the fixed cost")
    assert ("did real work" in p.text) == (outcome == "rest above the fixed cost")
    assert ("in the size sweep above" in p.text) == (fixed is not None)


def test_a_trace_of_one_kind_of_operator_names_it_alone():
    run = _run([(0, 10), (20, 10)])
    for r in run.records:
        if r["category"] == "operator":
            r["name"] = "aten::addmm"
    p = prose.timeline(run, fixed=5 * US)
    assert p.facts["inside"] == "one operator"
    assert "`addmm` (two calls per step) took 100% of the time." in p.text and "other" not in p.text


# GPU: kernels after launches at 5 and 25 µs (ops' middles)
WAITED = [(7, 2), (27, 2)]        # tiny kernels, far apart: idle 18 of 22 µs
AHEAD = [(7, 10), (17, 10)]       # back to back: never idle
PARTLY = [(7, 10), (27, 10)]      # idle 10 of 30 µs


@pytest.mark.parametrize("kernels, outcome, idle", [(WAITED, "GPU waited", 18 / 22), (AHEAD, "host ahead", 0.0),
                                                    (PARTLY, "partly ahead", 10 / 30)])
def test_each_gpu_outcome_has_its_wording(kernels, outcome, idle):
    run = _run(SOME_GAPS, kernels, device=H100)
    p = prose.timeline(run)
    assert p.facts["gpu"] == outcome
    assert p.facts["gpu_idle_fraction"] == pytest.approx(idle, abs=1e-9)
    words = {"GPU waited": "each one waited for the next launch", "host ahead": "The host ran ahead",
             "partly ahead": "kept ahead of the GPU for part of the step"}
    assert words[outcome] in p.text
    assert sum(sentence in p.text for sentence in words.values()) == 1
    a = summary(run)["ahead"]
    assert f"a median of {prose.w.seconds(a['median'])} after the launch" in p.text
    assert "no second lane" not in p.text and "What a GPU would show" not in p.text
    assert "No reference GPU run of this trace ships" in p.text


def test_the_wait_for_the_gpu_is_said_per_step():
    run = _run(SOME_GAPS, AHEAD, device=H100)
    run.records.append({"lane": "host thread 1", "side": "host", "name": "cudaDeviceSynchronize",
                        "category": "runtime", "start_seconds": 30 * US, "seconds": 8 * US, "depth": 0,
                        "correlation": 9})
    p = prose.timeline(run)
    assert "spent 8 µs per step waiting for the GPU" in p.text
    assert "waiting for the GPU" not in prose.timeline(_run(SOME_GAPS, AHEAD, device=H100)).text


def test_a_model_left_on_the_cpu_of_a_gpu_machine_is_said_to_be_there():
    p = prose.timeline(_run(SOME_GAPS, device=H100))
    assert p.facts["gpu"] == "model on the CPU" and "no GPU lane although a GPU was present" in p.text
    assert "What a GPU would show" not in p.text and "no second lane" not in p.text


def test_a_gpu_trace_without_launch_ids_says_so():
    run = _run(SOME_GAPS, AHEAD, device=H100)
    for r in run.records:
        r["correlation"] = None
    p = prose.timeline(run)
    assert "ties no launch to its kernel" in p.text


def test_reference_runs_get_a_paragraph_each_and_replace_the_missing_sentence():
    refs = [_run(SOME_GAPS, WAITED, device=H100, reference=True),
            _run(SOME_GAPS, device={"name": "Some CPU", "backend": "cpu"}, reference=True)]
    p = prose.timeline(_run(MOSTLY_GAPS), refs)
    assert "No reference GPU run" not in p.text and "What a GPU would show" not in p.text
    assert p.facts["reference NVIDIA H100 80GB HBM3"] == "GPU waited"
    assert "On the reference NVIDIA H100 80GB HBM3 (measured 2026-11-24), the GPU ran 2 kernels" in p.text
    assert "between operators for 33% of its span" in p.text
    assert p.facts["reference Some CPU"] == "no GPU" and "the trace has no GPU lane" in p.text


def test_an_empty_trace_is_said_to_be_empty():
    run = Result("profiler_trace", [], {"device": CPU})
    p = prose.timeline(run)
    assert p.facts["host"] == "empty" and "recorded no operator" in p.text


def test_the_live_trace_reads_true():
    import brrr
    block = brrr.transformer.small_block(hidden=32, heads=2, ffn=64).eval()
    x = brrr.transformer.encoder_input(block, batch=1, seq=4)
    live = brrr.profiler.trace(block, x, steps=2)
    s = summary(live)
    p = prose.timeline(live, brrr.reference.beside(live), fixed=5 * US)
    assert p.facts["host"] == prose.host_outcome(s["host"]["idle_fraction"])
    assert f"{prose.w.percent(s['host']['idle_fraction'])} between operators" in p.text
    assert f"{prose.w.integer(s['host']['gaps'])} gaps" in p.text
    assert ("no second lane" in p.text) == (s["gpu"] is None and prose.w.is_cpu(live))
    assert "{" not in p.text and "None" not in p.text


@pytest.mark.parametrize("runs", sets_with("profiler_trace"))
def test_shipped_traces_read_true(runs):
    """Every shipped record set with a trace (none yet): its sentences against its own numbers, with
    the shipped GPU traces beside it, as the chapter draws them."""
    run = runs["profiler_trace"]
    refs = reference.load("profiler_trace")
    s = summary(run)
    text = str(prose.timeline(run, refs))
    assert f"{prose.w.percent(s['host']['idle_fraction'])} between operators" in text
    if s["gpu"] is not None:
        assert f"idle for {prose.w.percent(s['gpu']['idle_fraction'])} of its span" in text
    for ref in refs:
        assert f"On the reference {prose.w.device_of(ref)}" in text


def test_a_recorded_trace_comes_back_as_a_reference(tmp_path, monkeypatch):
    """What ``reference.save`` writes under BRRR_RECORD (as the reference script does) loads back as a
    plain Result that the prose and the figure take as a reference run."""
    import brrr
    from brrr.plot import trace_timeline
    block = brrr.transformer.small_block(hidden=32, heads=2, ffn=64).eval()
    live = brrr.profiler.trace(block, brrr.transformer.encoder_input(block, batch=1, seq=4), steps=1)
    monkeypatch.setenv(reference.RECORD_ENV, str(tmp_path / "some-device"))
    reference.save(live, "profiler_trace")                    # what the reference script does with a measurement
    (saved,) = reference.load("profiler_trace", backend=None, folder=tmp_path)
    assert saved.is_reference and summary(saved) == summary(live)
    p = prose.timeline(live, [saved])
    assert "No reference GPU run" not in p.text and f"On the reference {prose.w.device_of(saved)}" in p.text
    fig = trace_timeline(live, reference=[saved])
    assert len(fig.axes) == 2
    import matplotlib.pyplot as plt
    plt.close(fig)
