"""Chapter 8's sentences: every wording, chosen by hand-made records, and the live run's text.

The hand-made results are not measurements: they reach each outcome (faster, slower, about the
same; a CPU with or without bfloat16 instructions; a GPU; a skipped step; reference runs).
"""
import pytest

from brrr.prose import capstone as prose, words
from brrr.results import Result

CONFIG = {"n_layer": 4, "n_head": 4, "d_model": 256, "vocab": 8192, "context": 256}
PEAK = {"flops": 1e12, "name": "the test peak", "dtypes": ["float32", "bfloat16"]}
LABELS = {"eager": "eager FP32", "batch": "large batch", "autocast": "low-precision autocast",
          "compile": "torch.compile", "graphs": "CUDA graphs", "sdpa": "SDPA attention"}


def rec(step, per_token, regime="memory-bound", share=0.6, mfu=0.05, backend="cpu", tokens=512, **extra):
    r = {"step": step, "label": LABELS[step], "tokens": tokens, "batch": 4, "seq": tokens // 4, "backend": backend,
         "skipped": None, "dtype": "bfloat16" if step not in ("eager", "batch") else "float32",
         "seconds": per_token * tokens, "seconds_per_token": per_token, "tokens_per_second": 1 / per_token,
         "mfu": mfu, "flops_per_second": mfu * PEAK["flops"], "peak_flops": PEAK["flops"], "regime": regime, "regime_shares": {regime: share, "other": 1 - share},
         "compile": "default" if step in ("compile", "graphs", "sdpa") else None, "compile_seconds": None}
    r.update(extra)
    return r


def skipped(step, why="there is no CUDA GPU here", backend="cpu"):
    return {"step": step, "label": LABELS[step], "tokens": 512, "batch": 4, "seq": 128, "backend": backend,
            "skipped": why}


def decide(records):
    """Mark each record as run_steps does: the step it builds on (the last one kept), and whether
    its change is kept (time per token not above that step's)."""
    kept = None
    for r in records:
        r["builds_on"], r["kept"] = (kept["step"] if kept else None), False
        if not r.get("skipped"):
            r["kept"] = kept is None or r["seconds_per_token"] <= kept["seconds_per_token"]
            kept = r if r["kept"] else kept
    return records


def result(records, backend="cpu", native=False, reference=False, name="AMD EPYC"):
    decide(records)
    meta = {"device": {"name": name, "backend": backend}, "config": CONFIG, "large": [4, 128], "small": [1, 8],
            "native_bf16": native if backend == "cpu" else None, "date": "2026-11-24", "mfu_peak": PEAK}
    if reference:
        meta["reference"] = True
    return Result("capstone_steps", records, meta)


def cpu_run(autocast=3e-3, compile_=2e-3, sdpa=2e-3, native=False):
    return result([rec("eager", 5e-3, "overhead-bound", 0.55, 0.01, tokens=8),
                   rec("batch", 1e-3, "memory-bound", 0.5), rec("autocast", autocast, "compute-bound", 0.7),
                   rec("compile", compile_, "compute-bound", 0.7, compile_seconds=20.0), skipped("graphs"),
                   rec("sdpa", sdpa, "compute-bound", 0.8)], native=native)


def gpu_run(reference=False, graphs=1e-6):
    g = dict(backend="cuda")
    return result([rec("eager", 1e-4, "overhead-bound", 0.9, 0.001, tokens=16, **g),
                   rec("batch", 2e-6, "compute-bound", 0.6, 0.3, **g),
                   rec("autocast", 1e-6, "memory-bound", 0.5, 0.2, **g),
                   rec("compile", 0.7e-6, "memory-bound", 0.5, 0.3, compile_seconds=40.0, **g),
                   rec("graphs", graphs, "memory-bound", 0.5, 0.3, **g),
                   rec("sdpa", 0.5e-6, "compute-bound", 0.6, 0.4, **g)], backend="cuda", reference=reference,
                  name="NVIDIA H100 80GB HBM3")


# --- the first step and the hint for the next ----------------------------------------------

def test_first_step_overhead_bound_points_to_the_batch():
    p = prose.step(cpu_run(), "eager")
    assert p.facts["outcome"] == "first" and "Against" not in str(p) and "change stays" not in str(p)
    assert "55% of the operators' time in overhead-bound" in str(p)
    assert "next step" not in str(p)            # the chapter's text before Step 2 says what a batch does
    assert words.seconds(5e-3) in str(p) and "1% MFU" in str(p).replace("1.0%", "1%")


def test_first_step_not_overhead_bound():
    run = cpu_run()
    run.records[0]["regime"], run.records[0]["regime_shares"] = "compute-bound", {"compute-bound": 0.9}
    text = str(prose.step(run, "eager"))
    assert "90% of the operators' time in compute-bound operators" in text
    assert "not mostly the cost of issuing calls" not in text   # B2:N1


# --- the batch --------------------------------------------------------------------------------

def test_batch_faster():
    p = prose.step(cpu_run(native=False), "batch")
    assert p.facts["outcome"] == "faster" and "time per token fell 5 times" in str(p)
    assert "Against eager FP32, the configuration this step changed" in str(p)
    assert "The change stays." in str(p)
    assert "shared by many more tokens" not in str(p)     # a mechanism the step did not measure


def test_batch_not_faster_and_the_gpu_hint():
    run = gpu_run()
    run.records[1]["seconds_per_token"] = 1e-4
    p = prose.step(decide_again(run), "batch")
    assert p.facts["outcome"] == "same" and "barely moved" in str(p) and "did not pay here" not in str(p)
    assert "It was not slower, so the change stays." in str(p)
    run.records[1]["seconds_per_token"] = 2e-4
    p = prose.step(decide_again(run), "batch")
    assert p.facts["outcome"] == "slower" and not p.facts["kept"]
    assert "the next step builds on eager FP32 again" in str(p)
    assert "The profile of eager FP32 (`brrr.profile`) puts" in str(p)   # the hint is about what stays
    assert str(p).count("builds on eager FP32") == 1                      # said once (review C2)


# --- autocast ---------------------------------------------------------------------------------

def decide_again(run):
    decide(run.records)
    return run


def test_autocast_slower_on_a_cpu_without_bf16_instructions():
    p = prose.step(cpu_run(native=False), "autocast")
    assert p.facts["outcome"] == "slower" and "grew 3 times" in str(p) and "made the model slower" in str(p)
    assert "no bfloat16 dot-product instructions" in str(p)
    assert not p.facts["kept"] and "builds on large batch again" in str(p)
    assert "which held 50% of this time" in str(p)         # compile's hint, from the batch step's profile
    assert "most of the time" not in str(p)


def test_autocast_slower_elsewhere():
    for native in (True, None):
        text = str(prose.step(cpu_run(native=native), "autocast"))
        assert "casts autocast inserts" in text
        assert ("has bfloat16 dot-product instructions" in text) == bool(native)
    assert "casts autocast inserts" not in str(prose.step(cpu_run(native=False), "autocast"))


def test_autocast_faster_on_a_gpu_and_on_a_cpu():
    p = prose.step(gpu_run(), "autocast")
    assert p.facts["outcome"] == "faster" and "dot-product" not in str(p)
    assert "halves the bytes of every activation" not in str(p)      # review 07_08 item 5: autocast keeps fp32
    assert "which held 50% of this time" in str(p)          # compile's hint: the memory-bound share, stated
    text = str(prose.step(cpu_run(autocast=0.5e-3, native=True), "autocast"))
    assert "dot-product instructions" in text
    assert "dot-product" not in str(prose.step(cpu_run(autocast=0.5e-3, native=None), "autocast"))


def test_autocast_about_the_same():
    text = str(prose.step(cpu_run(autocast=1.05e-3), "autocast"))
    assert "barely moved" in text and "the change is undone" in text


# --- compile ----------------------------------------------------------------------------------

@pytest.mark.parametrize("per_token, outcome, words_", [(0.8e-3, "faster", "lists the kernels it ran"),
                                                       (6e-3, "slower", "lists the kernels it ran"),
                                                       (1.05e-3, "same", "barely moved")])
def test_compile(per_token, outcome, words_):
    p = prose.step(cpu_run(compile_=per_token), "compile")
    assert p.facts["outcome"] == outcome and words_ in str(p)
    assert "Compiling took 20 s once" in str(p)
    if outcome == "faster":
        assert "no profile of its own" in str(p) and p.facts["kept"]
    else:                                                    # undone: the hint is the batch step's
        assert "builds on large batch again" in str(p) and "compiler starts from" not in str(p)


def test_compile_and_graphs_name_no_cause_the_page_did_not_measure():
    """H200 review 07_08: the compiled steps have no profile, so their gains get no mechanism."""
    for run in (cpu_run(compile_=0.3e-3), cpu_run(compile_=0.8e-3)):
        text = str(prose.step(run, "compile"))
        assert "fused the chains" not in text and "more than fusion alone" not in text and "swapped in" not in text
        assert "torch.profiler" in text
    same = str(prose.step(gpu_run(graphs=0.7e-6), "graphs"))
    assert "hid the launches" not in same and "were not what set this pass's time" in same


def test_compile_without_a_compile_time_and_the_gpu_graphs_hint():
    run = gpu_run()
    run.records[3]["compile_seconds"] = None
    text = str(prose.step(run, "compile"))
    assert "Compiling took" not in text and "no profile of its own" in text


# --- CUDA graphs ------------------------------------------------------------------------------

def test_graphs_skipped_on_a_cpu():
    p = prose.step(cpu_run(), "graphs")
    assert p.facts["outcome"] == "skipped" and "did not run here: there is no CUDA GPU here." in str(p)
    assert "builds on the configuration kept so far" in str(p) and "No reference" not in str(p)


def test_graphs_on_a_gpu():
    p = prose.step(gpu_run(graphs=0.4e-6), "graphs")
    assert p.facts["outcome"] == "faster" and "were not what set" not in str(p)
    assert "were not what set" in str(prose.step(gpu_run(graphs=0.7e-6), "graphs"))


def test_a_skipped_last_step_has_no_next():
    run = cpu_run()
    run.records[-1] = skipped("sdpa", "no reason")
    assert "builds on" not in str(prose.step(run, "sdpa"))


# --- SDPA -------------------------------------------------------------------------------------

def test_sdpa_outcomes_and_the_attention_share():
    share = prose.attention_share(cpu_run())
    assert 0 < share < 0.2
    faster = prose.step(cpu_run(sdpa=0.5e-3), "sdpa")
    assert faster.facts["outcome"] == "faster" and words.percent(share) in str(faster)
    assert "the masked half too" in str(faster)              # what the step's MFU counts
    assert "Its profile" not in str(faster)                  # the last step has no next step to argue for
    slower = str(prose.step(cpu_run(sdpa=4e-3), "sdpa"))         # against the batch step, kept at 1 ms
    assert "torch.profiler" in slower and "low-precision arithmetic" not in slower   # no unmeasured cause
    assert "torch.profiler" not in str(prose.step(cpu_run(sdpa=1.05e-3), "sdpa"))


def test_noisy_samples_are_said():
    run = cpu_run()
    run.records[0]["iqr_seconds"] = 0.5 * run.records[0]["seconds"]
    p = prose.step(run, "batch")
    assert p.facts["noisy"] and "an IQR of 20 ms around a median of 40 ms before" in str(p)
    assert "machine was busy" not in str(p) and " here" not in str(p).split("IQR")[1].split(")")[0]
    assert not prose.step(run, "eager").facts["noisy"]      # the first step has nothing to compare with
    assert not prose.step(cpu_run(), "batch").facts["noisy"]


def test_a_step_without_a_profile():
    run = cpu_run()
    run.records[1].update(regime=None, regime_shares={}, profile_skipped="the profile ran out of memory (x)")
    assert "This step has no profile: the profile ran out of memory (x)." in str(prose.step(run, "batch"))


def test_mfu_above_the_roof_is_called_a_bug():
    run = cpu_run()
    run.records[1]["flops_per_second"] = 1.5 * PEAK["flops"]
    assert "no machine allows" in str(prose.step(run, "batch"))
    assert "no machine allows" not in str(prose.step(cpu_run(), "batch"))


def test_unknown_step():
    with pytest.raises(KeyError):
        prose.step(cpu_run(), "nope")


# --- references -------------------------------------------------------------------------------

def test_reference_paragraphs_for_every_outcome():
    ref = gpu_run(reference=True)
    ref.records[2]["seconds_per_token"] = 4e-6                # autocast slower on the reference
    ref.records[3]["seconds_per_token"] = 2.05e-6             # compile about the same as the batch step
    ref.records[4] = skipped("graphs", "x", "cuda")
    decide(ref.records)
    texts = {k: str(prose.step(cpu_run(), k, [ref])).split("\n\n")[-1] for k in LABELS}
    assert texts["eager"].startswith("On the reference NVIDIA H100 80GB HBM3 (measured 2026-11-24)")
    assert texts["eager"].endswith("MFU (of the test peak, 1 TFLOP/s).")
    # each names the step it compares with on the reference (it may differ from this page's: undone, skipped)
    assert f"faster per token than {LABELS['eager']}, the configuration it changed there." in texts["batch"]
    assert f"slower per token than {LABELS['batch']}, the configuration it changed there." in texts["autocast"]
    assert f"about as fast per token as {LABELS['batch']}, the configuration it changed there." in texts["compile"]
    assert "this step did not run" in texts["graphs"]


# --- the summary ------------------------------------------------------------------------------

def test_summary_faster_with_changes_undone_and_skips():
    p = prose.summary(cpu_run())
    assert p.facts["outcome"] == "faster" and p.facts["kept"] == 1 and p.facts["undone"] == 3
    assert "fell from 5 ms to 1 ms, 5 times faster" in str(p)
    assert "The changes kept: large batch." in str(p)
    assert "Undone, because they made the model slower on this machine: low-precision autocast, " \
           "torch.compile and SDPA attention." in str(p)
    assert "Skipped here: CUDA graphs." in str(p)
    assert "No reference" not in str(p)          # said under the steps' table and figure instead
    missing = str(prose.reference_runs())
    assert missing == ("No reference GPU run of these steps ships with this edition of the book yet, so the table "
                       "and the figure show this run alone.")


def test_summary_when_no_change_was_kept():
    run = cpu_run(autocast=6e-3, compile_=6e-3, sdpa=6e-3)
    run.records[1]["seconds_per_token"] = 6e-3
    p = prose.summary(decide_again(run))
    assert p.facts["outcome"] == "none kept" and p.facts["kept"] == 0
    assert "so every one was undone: eager FP32 stays the fastest configuration" in str(p)


def test_summary_all_kept_and_with_a_reference():
    p = prose.summary(gpu_run(graphs=0.6e-6))
    assert p.facts["undone"] == 0 and "No change had to be undone." in str(p)
    assert "200 times faster" in str(p) and "No reference" not in str(p)
    refs = str(prose.reference_runs([gpu_run(reference=True, graphs=0.6e-6)]))
    assert refs.startswith("On the reference NVIDIA H100 80GB HBM3") and "No reference" not in refs
    assert "the changes kept took the model from 0.1% to 40% MFU (of the test peak), 200 times faster" in refs


def test_summary_about_the_same():
    run = cpu_run(autocast=6e-3, compile_=6e-3, sdpa=6e-3)
    run.records[1]["seconds_per_token"] = 4.8e-3
    p = prose.summary(decide_again(run))
    assert p.facts["outcome"] == "same" and "about the same" in str(p)


# --- which steps moved the dominant regime (review B:S3) ------------------------------------

def _clear(run):
    """The batch step's memory-bound share made clear of a tie (the hand-made 50% ties with 'other')."""
    run.records[1]["regime_shares"] = {"memory-bound": 0.6, "other": 0.4}
    return run


def test_regime_path_some_steps_moved():
    run = _clear(cpu_run(autocast=0.5e-3, compile_=0.4e-3, sdpa=0.3e-3))   # every change kept
    p = prose.regime_path(run)            # overhead -> memory -> compute, then compute-bound throughout
    assert p.facts["regime_outcome"] == "some moved" and p.facts["regime_moves"] == 2
    text = str(p)
    assert text == ("Of the steps whose profiles show one dominant regime before and after, only large batch (from "
                    "overhead-bound to memory-bound) and low-precision autocast (from memory-bound to compute-bound) "
                    "moved it; SDPA attention left it where it was.")
    assert "torch.compile" not in text            # review 07_08 item 13: its profile is a copy, not a finding


def test_regime_path_all_moved_none_moved_and_ties():
    # autocast, compile and sdpa undone: each is compared with the batch step, memory-bound
    p = prose.regime_path(_clear(cpu_run()))
    assert p.facts["regime_outcome"] == "all moved" and p.facts["regime_moves"] == 3
    assert "torch.compile" not in str(p) and "SDPA attention (from memory-bound to compute-bound)" in str(p)
    run = gpu_run()
    for r in run.records:
        r["regime"], r["regime_shares"] = "compute-bound", {"compute-bound": 0.7, "memory-bound": 0.3}
    p = prose.regime_path(run)
    assert p.facts["regime_outcome"] == "none moved" and p.facts["regime_moves"] == 0
    assert "No step moved the dominant regime of the operators' time" in str(p)
    run = cpu_run()                              # review 07_08 item 6: the batch step's 50/50 is a tie
    assert "large batch" not in str(prose.regime_path(run))
    assert "no one regime dominates" in str(prose.step(run, "batch"))
    assert "no one regime dominates" not in str(prose.step(_clear(cpu_run()), "batch"))


def test_regime_path_without_profiles_says_nothing():
    run = cpu_run()
    for r in run.records:
        r["regime"] = None
    p = prose.regime_path(run)
    assert str(p) == "" and p.facts["regime_outcome"] == "no profiles"
    assert str(prose.summary(run)).endswith("Skipped here: CUDA graphs.")


def test_the_summary_says_which_steps_moved_the_regime():
    text = str(prose.summary(_clear(cpu_run(autocast=0.5e-3, compile_=0.4e-3, sdpa=0.3e-3))))
    assert "only large batch (from overhead-bound to memory-bound)" in text


# --- the live run ---------------------------------------------------------------------------

def test_the_live_run_reads_right():
    pytest.importorskip("torch")
    from brrr.experiments import capstone
    steps = [s for s in capstone.STEPS if s.key in ("eager", "batch", "autocast", "graphs")]
    run = capstone.run_steps(quick=True, steps=steps, budget=0.02, profile_budget=0.005)
    for r in run.records:
        p = prose.step(run, r["step"])
        if r["skipped"]:
            assert p.facts["outcome"] == "skipped" and r["skipped"] in str(p)
            continue
        assert words.seconds(r["seconds_per_token"]) in str(p) and prose.mfu_words(run, r) in str(p)
        # one peak for the table; on this CPU it is a measured matmul rate, not a hardware bound (a
        # process's first measurement can be a quick one on a busy machine), so above it the page says why
        assert r["mfu"] is None or r["mfu"] <= words.ABOVE_ROOF or "The MFU is above 100%" in str(p)
        assert r["mfu"] is None or r["dtype"] in run.meta["mfu_peak"]["dtypes"]   # a peak that covers its dtype
        before = prose._previous(run, r["step"])
        assert p.facts["outcome"] == prose.change(r, before)[0]
    autocast = next(r for r in run.records if r["step"] == "autocast")
    if run.meta["native_bf16"] is False and prose.change(autocast, run.records[1])[0] == "slower":
        assert "dot-product instructions" in str(prose.step(run, "autocast"))
    s = prose.summary(run)
    final = [r for r in capstone.measured(run) if r["kept"]][-1]
    assert words.seconds(final["seconds_per_token"]) in str(s)
    assert final["mfu"] is None or words.percent(final["mfu"]) in str(s)
    for r in capstone.measured(run)[1:]:                    # each step against the one it changed
        assert r["kept"] == (r["seconds_per_token"] <= prose._previous(run, r["step"])["seconds_per_token"])


# --- every shipped record set (review 07_08 items 6, 7, 13) ----------------------------------

from record_sets import sets_with  # noqa: E402


@pytest.mark.parametrize("runs", sets_with("capstone_steps"))
def test_one_named_peak_never_above_100_percent(runs):
    from brrr.experiments import capstone
    run = runs["capstone_steps"]
    peak = capstone.mfu_peak(run)
    header = [c for c in capstone.steps_table(run).data.columns if c.startswith("MFU")]
    assert header == [f"MFU (of {peak['name']}, {words.rate(peak['flops'])})"]
    for r in capstone.measured(run):
        m = capstone.mfu(run, r)
        assert m is None or 0 < m <= 1, (r["step"], m)
        text = str(prose.step(run, r["step"]))
        assert (m is None and "no MFU" in text) or f"MFU (of {peak['name']}" in text
    s = str(prose.summary(run))
    assert "MFU" not in s or f"against {peak['name']} throughout" in s


@pytest.mark.parametrize("runs", sets_with("capstone_steps"))
def test_regimes_said_only_where_profiled_and_not_tied(runs):
    from brrr.experiments import capstone
    run = runs["capstone_steps"]
    table = capstone.steps_table(run).data
    for r, (_, row) in zip(run.records, table.iterrows()):
        own = capstone.profiled(r)
        assert (row["time memory-bound"] is None or row["time memory-bound"] != row["time memory-bound"]) != own
        text = str(prose.step(run, r["step"]))
        assert "most of the time" not in text
        # the profile the text describes: the step's own, or where it was undone, that of the configuration kept
        said = r if r.get("kept", True) else next((b for b in run.records if b["step"] == r.get("builds_on")), r)
        if capstone.profiled(said) and capstone.dominant(said) is None:
            assert "no one regime dominates" in text or r is capstone.measured(run)[-1]
    path = str(prose.regime_path(run))
    for key in capstone.COMPILED_ONLY:
        label = next((r["label"] for r in run.records if r["step"] == key), None)
        assert label is None or label not in path
