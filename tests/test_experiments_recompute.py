"""Saved-activation counting, checkpointing and the compiler's recomputation (brrr.experiments.recompute)."""
import math

import pytest

torch = pytest.importorskip("torch")

from brrr.experiments import recompute  # noqa: E402


def test_saved_bytes_linear_relu_by_hand():
    layer = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU())
    x = torch.randn(8, 16)
    # Linear saves its input (8x16) for the weight gradient; ReLU saves its output (8x32).
    assert recompute.saved_bytes(layer, x) == 8 * 16 * 4 + 8 * 32 * 4
    rows = recompute.saved_tensors(layer, x)
    assert sorted(r["shape"] for r in rows) == [(8, 16), (8, 32)]
    assert all(r["kind"] == "activation" and r["dtype"] == "float32" for r in rows)


def test_saved_weight_is_a_parameter_and_counted_once():
    layer = torch.nn.Linear(16, 32, bias=False)
    x = torch.randn(8, 16, requires_grad=True)
    rows = recompute.saved_tensors(layer, x)
    kinds = {r["kind"]: r["nbytes"] for r in rows}
    assert kinds == {"activation": 8 * 16 * 4, "parameter": 16 * 32 * 4}   # W saved as W.t(): one storage
    assert recompute.saved_bytes(layer, x) == 8 * 16 * 4
    assert recompute.saved_bytes(layer, x, include_parameters=True) == 8 * 16 * 4 + 16 * 32 * 4


def test_shared_storage_counts_once():
    def f(x):
        y = torch.relu(x)          # saves y
        return y * y               # saves y twice more: same storage
    x = torch.randn(100, requires_grad=True)
    rows = recompute.saved_tensors(f, x)
    assert len(rows) == 1 and rows[0]["count"] == 3 and rows[0]["nbytes"] == 400


def test_pointwise_chain_saves_one_tensor_per_link():
    x = torch.randn(1000, requires_grad=True)
    for op in recompute.POINTWISE:
        assert recompute.saved_bytes(recompute.pointwise_chain(op, 3), x) == 3 * 4000, op


def test_mlp_block_saves_what_the_docstring_says():
    model = recompute.mlp_stack(layers=2, width=8, expansion=4, device="cpu")
    x = torch.randn(5, 8)
    rows = [r for r in recompute.saved_tensors(model[0], x) if r["kind"] == "activation"]
    # input, normalised input (5x8), hidden before and after GELU (5x32), mean and rstd (5x1)
    assert sum(r["nbytes"] for r in rows) == 4 * (2 * 5 * 8 + 2 * 5 * 32 + 2 * 5)
    # the stack: each block keeps the same
    assert recompute.saved_bytes(model, x) == 2 * 4 * (2 * 5 * 8 + 2 * 5 * 32 + 2 * 5)


def test_checkpointing_keeps_only_segment_inputs_and_same_gradients():
    model = recompute.mlp_stack(layers=4, width=8, device="cpu")
    x = torch.randn(5, 8)
    plain = recompute.saved_bytes(model, x)
    for every, segments in ((1, 4), (2, 2), (3, 2), (4, 1)):
        run = recompute.Checkpointed(model, every)
        assert run.segments == segments
        assert recompute.saved_bytes(run, x, parameters=list(model.parameters())) == segments * 5 * 8 * 4 < plain
    assert recompute.Checkpointed(model, 0).segments == 0
    assert recompute.saved_bytes(recompute.Checkpointed(model, 0), x, parameters=list(model.parameters())) == plain


def test_checkpoint_model_formula():
    assert recompute.checkpoint_model(10.0, 1.0, 8, 0) == 80.0
    assert recompute.checkpoint_model(10.0, 1.0, 8, 2) == 4 * 1.0 + 2 * 10.0
    assert recompute.checkpoint_model(10.0, 1.0, 8, 3) == 3 * 1.0 + 3 * 10.0
    with pytest.raises(ValueError, match="every"):
        recompute.checkpoint_model(10.0, 1.0, 8, -1)


def test_checkpoint_sweep_records(monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")
    result = recompute.checkpoint_sweep(every=(0, 1, 2), layers=4, width=8, batch=4, progress=False)
    rows = {r["every"]: r for r in result.records}
    assert set(rows) == {0, 1, 2}
    assert rows[0]["saved_bytes"] == 4 * result.meta["block_bytes"]
    assert rows[1]["saved_bytes"] == 4 * result.meta["input_bytes"]
    assert rows[2]["recompute_bytes"] == 2 * result.meta["block_bytes"]
    for r in rows.values():
        assert r["max_grad_error"] == 0.0
        assert r["peak_activation_bytes"] == r["saved_bytes"] + r["recompute_bytes"]
        assert r["seconds"] > 0 and r["min_seconds"] <= r["seconds"] and r["iqr_seconds"] >= 0
    assert result.meta["input_bytes"] == 4 * 8 * 4
    for e in (1, 2):   # the FLOP counter sees the recomputation, which stops early (less than 4/3)
        ratio = rows[e]["counted_flops"] / rows[0]["counted_flops"]
        assert ratio == pytest.approx(recompute.checkpoint_flop_ratio(4, e)) and ratio < 4 / 3


def test_checkpoint_flop_ratio():
    assert recompute.checkpoint_flop_ratio(8, 0) == 1.0
    assert recompute.checkpoint_flop_ratio(8, 1) == pytest.approx(1 + (1 - 8 / 16) / 3)
    assert recompute.checkpoint_flop_ratio(8, 8) == pytest.approx(1 + (1 - 1 / 16) / 3)
    assert recompute.checkpoint_flop_ratio(8, 3) == pytest.approx(1 + (1 - 3 / 16) / 3)
    with pytest.raises(ValueError, match="every"):
        recompute.checkpoint_flop_ratio(8, -1)


def test_bad_input():
    with pytest.raises(TypeError, match="fn must be callable"):
        recompute.saved_tensors(42, torch.ones(1))
    with pytest.raises(ValueError, match="layers"):
        recompute.mlp_stack(layers=0)
    with pytest.raises(ValueError, match="every"):
        recompute.Checkpointed(recompute.mlp_stack(2, 4), -2)
    with pytest.raises(TypeError, match="nn.Sequential"):
        recompute.Checkpointed(torch.nn.Linear(2, 2), 1)
    with pytest.raises(ValueError, match="op must be"):
        recompute.pointwise_chain("sqrt", 2)
    with pytest.raises(ValueError, match="k must be"):
        recompute.pointwise_chain("gelu", 0)
    with pytest.raises(ValueError, match="variants"):
        recompute.compiled_recompute(variants=("fast",))
    with pytest.raises(ValueError, match="every"):
        recompute.checkpoint_sweep(every=(1, -1), layers=2, width=4, batch=2, progress=False)


def test_peak_memory_is_none_without_gpu():
    import brrr
    if brrr.device().backend == "cuda":
        pytest.skip("has a GPU")
    assert recompute.peak_memory(lambda: None) is None


@pytest.mark.gpu
def test_peak_memory_on_gpu_sees_an_allocation():
    peak = recompute.peak_memory(lambda: torch.empty(2 ** 20, device="cuda"))
    assert peak >= 4 * 2 ** 20


def test_compiled_recompute_saves_only_the_input():
    """torch.compile (seconds of compiling): eager and save-all keep k arrays, min-cut keeps x."""
    result = recompute.compiled_recompute(op="gelu", k=3, n=4096, progress=False)
    rows = {r["variant"]: r for r in result.records}
    if len(rows) < 3:
        pytest.skip(f"torch.compile unavailable here: {result.meta['notes']}")
    assert rows["eager"]["saved_bytes"] == 3 * 4096 * 4
    assert rows["compiled (save all)"]["saved_bytes"] == 3 * 4096 * 4
    assert rows["compiled (recompute)"]["saved_bytes"] == 4096 * 4
    assert all(r["saved_bytes"] == r["predicted_saved_bytes"] for r in rows.values())
    assert not any("differs" in n for n in result.meta["notes"])
    assert math.isfinite(rows["compiled (recompute)"]["compile_seconds"])


def test_checkpoint_sweep_times_in_rounds_and_tables():
    result = recompute.checkpoint_sweep(every=(0, 2), layers=2, width=4, batch=2, rounds=2, progress=False)
    assert result.meta["rounds"] == 2 and result.meta["parameter_bytes"] > 0 and result.meta["step_flops"] > 0
    for r in result.records:
        assert 0 < r["min_seconds"] <= r["seconds"]
    table = recompute.checkpoint_table(result)
    assert list(table["segment length (blocks)"]) == ["none", "2"]
    assert "allocator's peak (GPU only)" in table
    with pytest.raises(ValueError, match="rounds"):
        recompute.checkpoint_sweep(every=(0,), layers=2, width=4, batch=2, rounds=0, progress=False)
    rows = recompute.saved_table(recompute.saved_tensors(torch.nn.Linear(3, 2), torch.randn(5, 3)))
    assert list(rows.columns) == ["shape", "dtype", "bytes", "kind", "times saved"]
    assert list(rows["shape"]) == ["5 x 3"] and list(rows["bytes"]) == [60]


def test_step_bytes_counts_the_arrays_each_variant_moves():
    # eager: 2k forward, the sum, 3k - 1 backward; saving everything: 1 + k, the sum, k + 1; recomputing: 2, 1, 2
    for k in (1, 4, 8):
        assert recompute.step_bytes("eager", k, 10) == 5 * k * 10 * 4
        assert recompute.step_bytes("compiled (save all)", k, 10) == (2 * k + 3) * 10 * 4
        assert recompute.step_bytes("compiled (recompute)", k, 10, itemsize=8) == 5 * 10 * 8
    with pytest.raises(ValueError):
        recompute.step_bytes("fused", 4, 10)


def test_the_sweeps_ratios_and_late_peak_come_from_its_records():
    import brrr
    rows = [{"every": 0, "min_seconds": 1.0, "saved_bytes": 800, "recompute_bytes": 0, "peak_memory_bytes": 900},
            {"every": 2, "min_seconds": 1.3, "saved_bytes": 100, "recompute_bytes": 200, "peak_memory_bytes": 500,
             "counted_flops": None}]
    run = brrr.Result("checkpoint_sweep", rows, {"layers": 8, "parameter_bytes": 1000})
    assert recompute.step_ratios(run, 2) == (pytest.approx(1.3), recompute.checkpoint_flop_ratio(8, 2))
    rows[0]["counted_flops"], rows[1]["counted_flops"] = 300, 390
    assert recompute.step_ratios(run, 2)[1] == pytest.approx(1.3)
    # the first segment's activations, the other 6 of 8 layers' weight gradients, the plain peak's extra 100
    assert recompute.late_peak(run) == {2: (pytest.approx(200 + 750 + 100), pytest.approx(750))}
    rows[0]["peak_memory_bytes"] = None
    assert recompute.late_peak(run) == {}
