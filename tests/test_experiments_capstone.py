"""brrr.experiments.capstone: chapter 8's steps at a tiny size on the CPU (record schema 2)."""
import json
import math

import pytest

torch = pytest.importorskip("torch")

from brrr import gpt  # noqa: E402
from brrr.experiments import capstone  # noqa: E402
from brrr.results import Result  # noqa: E402


@pytest.fixture(scope="module")
def run():
    profiles = {}
    result = capstone.run_steps(quick=True, budget=0.02, profile_budget=0.005, profiles=profiles)
    return result, profiles


def test_every_step_is_present_in_order(run):
    result, _ = run
    assert [r["step"] for r in result.records] == list(capstone.STEP_KEYS)
    assert result.meta["n_params"] == gpt.sizes(True)["config"].n_params()
    assert result.meta["grad"] == "torch.no_grad()"


def test_records_are_valid(run):
    result, _ = run
    backend = result.meta["device"]["backend"]
    for r in capstone.measured(result):
        assert r["backend"] == backend and r["skipped"] is None
        assert r["seconds"] > 0 and r["min_seconds"] <= r["seconds"] and r["iqr_seconds"] >= 0
        assert r["tokens"] == r["batch"] * r["seq"]
        assert math.isclose(r["seconds_per_token"], r["seconds"] / r["tokens"])
        assert math.isclose(r["tokens_per_second"] * r["seconds_per_token"], 1)
        peak = result.meta["mfu_peak"]                    # one peak for every step (review 07_08 item 7)
        assert r["peak_flops"] == peak["flops"] and peak["name"]
        if r["dtype"] in peak["dtypes"]:
            assert math.isclose(r["mfu"], r["flops"] / r["seconds"] / r["peak_flops"])
            assert capstone.mfu(result, r) == pytest.approx(r["mfu"])
        else:                                              # a peak that does not bound the dtype: no MFU
            assert r["mfu"] is None and capstone.mfu(result, r) is None
        assert r["regime"] in ("compute-bound", "memory-bound", "overhead-bound")
        assert math.isclose(sum(r["regime_shares"].values()), 1)
        assert r["regime_shares"][r["regime"]] == max(r["regime_shares"].values())
        # the profile's parts the worked problems read: casts only under autocast, the head at its width
        assert r["profile_seconds"] == pytest.approx(sum(r["category_seconds"].values()))
        assert (r["casts"] > 0 and 0 < r["cast_seconds"] < r["profile_seconds"]) == bool(r["autocast"])
        assert r["head_width"] == r["vocab"] and 0 < r["head_seconds"] < r["profile_seconds"]
        assert r["head_flops"] == 2 * r["tokens"] * result.meta["config"]["d_model"] * r["vocab"]
        # its profile's rows, to judge again as chapter 7 does: the eager steps' own, none for a compiled one's
        if r["step"] in capstone.COMPILED_ONLY:
            assert "rows" not in r
        else:
            assert sum(row["seconds"] for row in r["rows"]) == pytest.approx(r["profile_seconds"])
            assert {row["category"] for row in r["rows"]} == set(r["category_seconds"])
    again = Result.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.records == result.records


def test_each_step_changes_one_thing_of_the_configuration_it_builds_on(run):
    result, _ = run
    rec = {r["step"]: r for r in result.records}
    assert rec["autocast"]["dtype"] == capstone.autocast_dtype("cpu") and rec["sdpa"]["attention"] == "sdpa"
    assert rec["cast"]["weights"] == capstone.autocast_dtype("cpu") and rec["cast"]["autocast"] is False
    if not rec["compile"]["skipped"]:
        assert rec["compile"]["compile"] == "default" and rec["compile"]["compile_seconds"] > 0
    fields = {"batch": "tokens", "tf32": "tf32", "autocast": "autocast", "weights": "weights", "sdpa": "attention",
              "vocab": "vocab", "compile": "compile", "graphs": "graphs"}
    declared = {s.key: {fields[k] for k, _ in s.change} for s in capstone.STEPS}
    for r in capstone.measured(result)[1:]:
        base = rec[r["builds_on"]]
        changed = {f for f in fields.values() if base[f] != r[f]}
        assert changed and changed <= declared[r["step"]], (r["step"], changed)


def test_a_change_is_kept_only_when_it_did_not_slow_the_model(run):
    result, _ = run
    first, *rest = capstone.measured(result)
    assert first["kept"] and first["builds_on"] is None
    last_kept = first
    for r in result.records[1:]:
        assert r["builds_on"] == last_kept["step"]
        if r["skipped"]:
            assert r["kept"] is False
            continue
        assert r["kept"] == (r["seconds_per_token"] <= last_kept["seconds_per_token"])
        last_kept = r if r["kept"] else last_kept
    o = capstone.overall(result)
    fastest = min(capstone.measured(result), key=lambda r: r["seconds_per_token"])
    assert o["last"] == last_kept["step"] and fastest["step"] == last_kept["step"]   # the kept one is the fastest
    assert len(o["kept"]) + len(o["undone"]) == len(capstone.measured(result)) - 1


def test_skipped_steps_carry_a_reason(run):
    result, _ = run
    for r in result.records:
        assert r["skipped"] is None or (isinstance(r["skipped"], str) and r["skipped"])
    if result.meta["device"]["backend"] == "cpu":
        graphs = next(r for r in result.records if r["step"] == "graphs")
        assert "CUDA GPU" in graphs["skipped"] and "seconds" not in graphs


def test_flop_count_matches_the_formula_and_the_profile(run):
    result, profiles = run
    cfg = gpt.GPTConfig(**result.meta["config"])
    for r in capstone.measured(result):
        assert r["flops"] == gpt.forward_flops(cfg, r["batch"], r["seq"])["total"]
        table = profiles[r["step"]]
        matmuls = table[table.category == "matmul"].flops.sum()
        if r["attention"] == "manual" and r["vocab"] == cfg.vocab:
            assert matmuls == r["flops"]          # the profiler's own counter agrees with the formula
        assert r["counted_flops"] >= matmuls      # plus softmax, LayerNorm, GELU, adds


def test_a_failing_compile_is_a_skipped_step(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("no C++ compiler found\nmore detail")
    monkeypatch.setattr(torch, "compile", broken)
    steps = [s for s in capstone.STEPS if s.key in ("batch", "compile", "sdpa")]
    result = capstone.run_steps(quick=True, steps=steps, budget=0.01, profile_budget=0.005)
    rec = {r["step"]: r for r in result.records}
    assert rec["compile"]["skipped"] == "torch.compile failed here (RuntimeError: no C++ compiler found)"
    assert rec["sdpa"]["skipped"] is None and rec["sdpa"]["compile"] is None


def test_each_step_adds_its_change_to_the_last_that_ran():
    current = capstone.START
    for step in capstone.STEPS:
        current = capstone.advance(current, step)
    assert current == {"batch": "ridge", "tf32": True, "autocast": False, "weights": "low", "sdpa": True,
                       "vocab": "padded", "compile": "default", "graphs": True}
    by_key = {s.key: s for s in capstone.STEPS}
    assert capstone.cannot_run(by_key["graphs"], "cpu") and capstone.cannot_run(by_key["graphs"], "cuda") is None

    class Device:
        def __init__(self, tf32):
            self.tf32 = tf32

        def has_tensor_cores(self, dtype):
            return self.tf32 and dtype == "float32"
    assert capstone.cannot_run(by_key["tf32"], "cuda", Device(True)) is None
    assert "TF32" in capstone.cannot_run(by_key["tf32"], "cuda", Device(False))
    assert "TF32" in capstone.cannot_run(by_key["tf32"], "cpu", Device(True))
    assert capstone.cannot_run(by_key["vocab"], "cuda", None, gpt.GPT2_SMALL) is None      # 50,257 -> 50,304
    assert "multiple of 64" in capstone.cannot_run(by_key["vocab"], "cuda", None, gpt.sizes(True, False)["config"])


def test_ridge_tokens_put_every_weight_matmul_at_the_ridge():
    from brrr.roofline import Roofline
    cfg = gpt.GPT2_SMALL
    ridge, itemsize = 206.0, 2
    need = capstone.ridge_tokens(cfg, ridge, itemsize)
    d = cfg.d_model
    shapes = [(a * d, b * d) for a, b in capstone.LINEAR_SHAPES] + [(d, cfg.vocab)]

    def intensity(t, k, n):
        return 2 * t * k * n / (itemsize * (k * n + t * k + t * n))
    assert min(intensity(need, k, n) for k, n in shapes) == pytest.approx(ridge)      # the last one reaches it
    assert min(intensity(0.99 * need, k, n) for k, n in shapes) < ridge
    assert capstone.ridge_tokens(cfg, 1e6, itemsize) == math.inf                       # no T reaches it
    roof = Roofline(peak_flops=ridge * 1e12, peak_bandwidth=1e12, name="fake")
    batch, why = capstone.ridge_batch(cfg, 16, roof, itemsize, tokens_now=16)
    assert why is None and batch * 16 >= need and (batch // 2) * 16 < need and batch & (batch - 1) == 0
    batch, why = capstone.ridge_batch(cfg, 512, roof, itemsize, tokens_now=4096)
    assert batch is None and "already" in why and f"{math.ceil(need):,}" in why
    batch, why = capstone.ridge_batch(cfg, 512, Roofline(peak_flops=1e18, peak_bandwidth=1e12, name="x"), 2, 4096)
    assert batch is None and "no batch" in why


def test_table_and_overall(run):
    result, _ = run
    html = capstone.steps_table(result, [result]).to_html()
    assert "time per token" in html and "skipped" in html and "(reference)" in html
    assert f"MFU (of {capstone.mfu_peak(result)['name']}" in html
    o = capstone.overall(result)
    first, final = capstone.measured(result)[0], [r for r in capstone.measured(result) if r["kept"]][-1]
    assert math.isclose(o["speedup"], first["seconds_per_token"] / final["seconds_per_token"])
    assert "undone" in html or not o["undone"]


def test_the_figure_draws(run):
    import matplotlib
    matplotlib.use("Agg")
    from brrr.plot.capstone import capstone_steps
    result, _ = run
    fig = capstone_steps(result)
    assert len(fig.axes) == 2
    fig = capstone_steps(result, reference=[result])
    assert fig.legends


def test_a_profile_out_of_memory_keeps_the_times(monkeypatch, tmp_path):
    import brrr.profiler

    def full(*args, **kwargs):
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
    monkeypatch.setattr(brrr.profiler, "profile", full)
    steps = [s for s in capstone.STEPS if s.key in ("eager", "batch")]
    result = capstone.run_steps(quick=True, steps=steps, budget=0.01)
    for r in result.records:
        assert r["seconds"] > 0 and r["regime"] is None and r["counted_flops"] is None
        assert r["profile_skipped"].startswith("the profile ran out of memory (RuntimeError: CUDA out of memory")
    assert "not profiled" in capstone.steps_table(result).to_html()
    # the chapter's roofline cells go on: no profile is a figure that says so, and nothing is recorded
    profiles = {}
    capstone.run_steps(quick=True, steps=steps, budget=0.01, profiles=profiles)
    assert profiles == {}
    import matplotlib
    matplotlib.use("Agg")
    from brrr import reference
    fig = brrr.profiler.plot_roofline(profiles.get("batch"), title="Step 2")
    assert "no profile to draw" in fig.axes[0].texts[0].get_text()
    monkeypatch.setenv(reference.RECORD_ENV, str(tmp_path))
    assert reference.measure("capstone_profile_batch", profiles.get, "batch") is None
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("capability, dtype", [((7, 5), "float16"), ((8, 0), "bfloat16"), ((9, 0), "bfloat16")])
def test_autocast_picks_bfloat16_only_where_tensor_cores_do_it(monkeypatch, capability, dtype):
    import torch
    # A T4 (7.5) can store bfloat16 and torch.cuda.is_bf16_supported() says True, but it has no bf16 math.
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a, **k: capability)
    assert capstone.autocast_dtype("cuda") == dtype
