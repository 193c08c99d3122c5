"""brrr.profile: per-op FLOPs and bytes checked by hand, categories, backward rows, bad input."""
import math

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import brrr  # noqa: E402
from brrr.profiler import COLUMNS, CATEGORIES, category_totals, roofline_points  # noqa: E402
from brrr.transformer import EncoderLayer, EncoderConfig, encoder_input, small_block, bert_sizes  # noqa: E402

F32 = 4  # bytes per float32


class MatMul(nn.Module):
    def forward(self, a, b):
        return a @ b


class Add(nn.Module):
    def forward(self, a, b):
        return a + b


def only(table, op):
    rows = table[table.op == op]
    assert len(rows) == 1, f"expected one {op} row, got:\n{table[['op', 'phase']]}"
    return rows.iloc[0]


def test_matmul_flops_and_bytes_by_hand():
    M, K, N = 48, 32, 16
    table = brrr.profile(MatMul(), torch.randn(M, K), torch.randn(K, N), measure=False)
    row = only(table, "mm")
    assert row.flops == 2 * M * N * K
    assert row["nbytes"] == (M * K + K * N + M * N) * F32
    assert row.category == "matmul"
    assert row.intensity == pytest.approx(2 * M * N * K / ((M * K + K * N + M * N) * F32))
    assert row.input_shapes == ((M, K), (K, N))
    assert row["dtype"] == "float32"


def test_add_flops_and_bytes_by_hand():
    M, N = 64, 80
    row = only(brrr.profile(Add(), torch.randn(M, N), torch.randn(M, N), measure=False), "add.Tensor")
    assert row.flops == M * N                       # one FLOP per output element
    assert row["nbytes"] == 3 * M * N * F32         # read a, read b, write the sum
    assert row.category == "elementwise"
    # a broadcast operand is read once, not once per row
    row = only(brrr.profile(Add(), torch.randn(M, N), torch.randn(N), measure=False), "add.Tensor")
    assert row["nbytes"] == (2 * M * N + N) * F32
    # adding a tensor to itself reads it once
    same = torch.randn(M, N)
    row = only(brrr.profile(Add(), same, same, measure=False), "add.Tensor")
    assert row["nbytes"] == 2 * M * N * F32


def test_an_embedding_reads_the_rows_it_gathers_not_its_whole_table():      # review 07_08 item 29
    vocab, width, tokens = 5000, 64, 12
    row = only(brrr.profile(nn.Embedding(vocab, width), torch.randint(0, vocab, (2, tokens // 2)), measure=False),
               "embedding")
    assert row["nbytes"] == tokens * 8 + 2 * tokens * width * F32    # the indices, the rows read, the rows written
    small = only(brrr.profile(nn.Embedding(3, width), torch.randint(0, 3, (tokens,)), measure=False), "embedding")
    assert small["nbytes"] == tokens * 8 + 3 * width * F32 + tokens * width * F32   # a table smaller than the output


def test_layer_norm_flops_and_bytes_by_hand():
    M, N = 24, 40
    row = only(brrr.profile(nn.LayerNorm(N), torch.randn(M, N), measure=False), "native_layer_norm")
    assert row.flops == 7 * M * N
    # read x, gamma, beta; write y and the per-row mean and 1/sigma
    assert row["nbytes"] == (M * N + 2 * N + M * N + 2 * M) * F32
    assert row.category == "normalisation"


def test_table_columns_timing_and_regimes():
    model = nn.Sequential(nn.Linear(64, 64), nn.GELU(), nn.LayerNorm(64))
    table = brrr.profile(model, torch.randn(32, 64), repeats=3)
    assert list(table.columns) == COLUMNS
    assert set(table.op) >= {"addmm", "gelu", "native_layer_norm"}
    assert (table.seconds > 0).all()
    assert (table.roofline_seconds > 0).all()
    assert table.efficiency.notna().all() and (table.efficiency > 0).all()
    assert set(table.regime) <= {"compute-bound", "memory-bound", "overhead-bound"}
    assert set(table.phase) == {"forward"}
    assert only(table, "gelu").module.endswith(".1")
    assert table.attrs["overhead_seconds"] > 0
    assert table.attrs["model_seconds"] > 0
    assert table.attrs["model_iqr_seconds"] >= 0       # the whole run's spread, for the page to show
    points = roofline_points(table)
    assert {"label", "flops", "nbytes", "seconds"} <= set(points.columns)


def test_roofline_time_is_max_of_math_and_memory():
    table = brrr.profile(MatMul(), torch.randn(64, 64), torch.randn(64, 64), repeats=3)
    row = only(table, "mm")
    roof = brrr.Roofline.from_device()
    assert row.roofline_seconds == pytest.approx(max(row.flops / roof.peak_flops, row["nbytes"] / roof.peak_bandwidth))
    assert row.efficiency == pytest.approx(row.roofline_seconds / row.seconds)


def test_views_are_left_out_unless_asked():
    class Reshape(nn.Module):
        def forward(self, x):
            return (x.view(4, -1).t() * 2).sum()
    x = torch.randn(8, 8)
    plain = brrr.profile(Reshape(), x, measure=False)
    assert "view" not in set(plain.op) and "t" not in set(plain.op)
    with_views = brrr.profile(Reshape(), x, measure=False, views=True)
    assert {"view", "t"} <= set(with_views.op)
    views = with_views[with_views.op.isin(["view", "t"])]
    assert (views["nbytes"] == 0).all() and (views.flops == 0).all()      # no data moves


def test_backward_rows_present_and_labelled():
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32))
    x = torch.randn(8, 16)
    table = brrr.profile(model, x, backward=True, measure=False)
    back = table[table.phase == "backward"]
    assert len(back) > 0
    assert {"gelu_backward", "native_layer_norm_backward", "mm"} <= set(back.op)
    # weight gradient of the linear layer: (32 x 8) @ (8 x 16)
    assert (back[back.op == "mm"].flops == 2 * 32 * 8 * 16).any()
    assert set(table.phase) == {"forward", "loss", "backward"}
    assert all(p.grad is None for p in model.parameters())  # gradients left as they were
    forward_only = brrr.profile(model, x, measure=False)
    assert set(forward_only.phase) == {"forward"}


def test_the_backward_rows_are_the_operators_a_backward_runs_unwatched():      # review 07_08 M7-7
    """Watching adds no operator: the recorder keeps no output alive, so AccumulateGrad takes each new
    gradient as it is instead of copying it (a copy per parameter, before the fix)."""
    from collections import Counter
    from torch.utils._python_dispatch import TorchDispatchMode

    class Names(TorchDispatchMode):    # records each operator's name and keeps no tensor
        def __init__(self):
            super().__init__()
            self.names = Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names[str(func).replace("aten.", "").replace(".default", "")] += 1
            return func(*args, **(kwargs or {}))

    model = small_block(hidden=32, heads=2, ffn=64)
    x = encoder_input(model, batch=2, seq=8)
    table = brrr.profile(model, x, backward=True, measure=False)
    loss = model(x).float().sum()
    with Names() as unwatched:
        loss.backward()
    back = Counter(table[table.phase == "backward"].op)
    assert back and all(unwatched.names[op] == n for op, n in back.items()), (back, unwatched.names)
    assert "copy_" not in back


def test_the_whole_run_is_timed_back_to_back_on_the_host_clock(monkeypatch):      # review 07_08 M7-2
    """On a GPU (faked: its synchronize counts), a block of whole passes is issued, then one sync:
    the host's clock sees the larger of issuing and running; no CUDA event times a single call."""
    import time
    from brrr.experiments import wallclock
    from brrr.profiler import table as profile_table

    class Slow(nn.Module):           # a pass whose issue cost is 0.2 ms of the host's time
        calls = 0

        def forward(self, x):
            Slow.calls += 1
            time.sleep(2e-4)
            return x * 2

    class FakeGpu:
        syncs = 0

        def synchronize(self):
            FakeGpu.syncs += 1

    monkeypatch.setattr(wallclock, "live_device", lambda: FakeGpu())
    whole = profile_table._time_model(Slow(), (torch.ones(2),), False, {"budget": 0.05}, "cuda")
    assert 2e-4 <= whole["seconds"] < 2e-3 and whole["iqr_seconds"] >= 0
    assert FakeGpu.syncs > 0 and Slow.calls > FakeGpu.syncs     # blocks of calls, one sync each


def test_in_place_ops_are_replayed():
    model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(inplace=True))
    table = brrr.profile(model, torch.randn(4, 16), repeats=3)
    row = only(table, "relu_")
    assert row.category == "elementwise"
    assert row["nbytes"] == 2 * 4 * 16 * F32 and row.seconds > 0


def test_merge_counts_calls():
    layer = small_block(hidden=32, heads=2, ffn=64)
    x = encoder_input(layer, batch=2, seq=8)
    table = brrr.profile(layer, x, measure=False)
    merged = brrr.profile(layer, x, measure=False, merge=True)
    assert merged.calls.sum() == len(table)
    assert merged.flops.sum() == table.flops.sum()
    assert len(merged) < len(table)


def test_bad_input_errors():
    with pytest.raises(TypeError, match="torch.nn.Module"):
        brrr.profile(lambda x: x, torch.randn(2))
    with pytest.raises(TypeError, match="input 1 is list"):
        brrr.profile(Add(), torch.randn(2), [1.0, 2.0])
    with pytest.raises(ValueError, match="at least one input"):
        brrr.profile(nn.Linear(2, 2))
    with pytest.raises(ValueError, match=r"failed on inputs of shape \(2, 5\).*mat1 and mat2"):
        brrr.profile(nn.Linear(4, 8), torch.randn(2, 5))
    with pytest.raises(ValueError, match=r"\(4, 768\).*\(batch, seq, 768\)"):
        brrr.profile(EncoderLayer(), torch.randn(4, 768))      # wrong rank
    frozen = nn.Linear(4, 4).requires_grad_(False)
    with pytest.raises(ValueError, match="requires grad"):
        brrr.profile(frozen, torch.randn(2, 4), backward=True)
    with pytest.raises(ValueError, match="cache"):
        brrr.profile(nn.Linear(2, 2), torch.randn(1, 2), cache="cold")
    with pytest.raises(ValueError, match="repeats"):
        brrr.profile(nn.Linear(2, 2), torch.randn(1, 2), repeats=0)
    with pytest.raises(ValueError, match="lacks"):
        category_totals(torch.zeros(3))


def test_encoder_config_checks():
    with pytest.raises(ValueError, match="multiple of heads"):
        EncoderConfig(hidden=100, heads=12)
    layer = EncoderLayer()
    assert (layer.cfg.hidden, layer.cfg.heads, layer.cfg.ffn) == (768, 12, 3072)   # BERT-base
    x = encoder_input(layer, batch=2, seq=5)
    assert layer.eval()(x).shape == (2, 5, 768)


def test_bert_layer_shows_ivanov_pattern():
    """Ivanov et al. (2021): tensor contractions ~99.8% of BERT's FLOPs, but not of its time.

    FLOPs and bytes are counted, so they are exact on any machine. Time is measured;
    normalisation + elementwise ops take a few tenths of a percent of the FLOPs but,
    being memory-bound, tens of times that share of the time (and of the bytes), so
    the inequality holds by a wide margin even on a busy CPU.
    """
    layer = EncoderLayer()                       # BERT-base widths, train mode (dropout on)
    x = encoder_input(layer, **bert_sizes(quick=True))
    totals = category_totals(brrr.profile(layer, x))
    assert set(totals.index) <= set(CATEGORIES)
    assert totals.flop_share.sum() == pytest.approx(1.0)
    assert totals.time_share.sum() == pytest.approx(1.0)
    assert totals.loc["matmul", "flop_share"] > 0.99
    small = totals.loc[["normalisation", "elementwise"]]
    flop_share = small.flop_share.sum()
    assert flop_share < 0.01
    assert small.byte_share.sum() > 10 * flop_share
    assert small.time_share.sum() > flop_share
    assert not math.isnan(totals.loc["matmul", "flops_per_second"])


@pytest.mark.gpu
def test_gpu_half_precision_matmul_uses_tensor_core_roof():
    a = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    b = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    table = brrr.profile(MatMul(), a, b, repeats=5)
    row = only(table, "mm")
    roof = brrr.Roofline.from_device(dtype="float16", tensor_cores=True)
    assert row.roofline_seconds == pytest.approx(max(row.flops / roof.peak_flops, row["nbytes"] / roof.peak_bandwidth))
    assert row["nbytes"] == 3 * 256 * 256 * 2 and row.seconds > 0
    back = brrr.profile(nn.Linear(64, 64).cuda(), torch.randn(8, 64, device="cuda"), backward=True, repeats=3)
    assert "backward" in set(back.phase)


# --- the regime rule: chapter 3's definition of overhead ---------------------------------------

def test_regime_is_the_largest_of_math_memory_and_the_fixed_cost_of_a_call():
    """Overhead-bound exactly when the fixed cost per call is at least the roofline time
    (left of chapter 3's crossover); else the larger of t_math and t_mem decides."""
    from brrr.profiler import regime_of
    roof = brrr.Roofline(peak_flops=10e12, peak_bandwidth=1e12)
    # one add of 1,000 float32: 12 kB -> 12 ns at the roof, far below a 5 us call
    assert regime_of(roof, 1_000, 12_000, overhead=5e-6) == "overhead-bound"
    # the crossover: work at the roof == fixed cost (5 us = 5 MB at 1 TB/s)
    assert regime_of(roof, 1e6, 5e6, overhead=5e-6) == "overhead-bound"
    assert regime_of(roof, 1e6, 5.1e6, overhead=5e-6) == "memory-bound"
    # a big matmul: t_math 0.2 ms > t_mem > fixed cost
    assert regime_of(roof, 2e9, 3e6, overhead=5e-6) == "compute-bound"
    # no fixed cost known: the roofline alone decides; no work at all is overhead
    assert regime_of(roof, 1_000, 12_000) == "memory-bound"
    assert regime_of(roof, 0, 0, overhead=None) == "overhead-bound"


def test_profile_regimes_follow_the_fixed_cost_not_the_replayed_time():
    """Every row of a real profile obeys the rule; its measured time does not enter, so a
    slow replay (a cache flush, a busy machine) cannot turn a big operator overhead-bound."""
    model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.LayerNorm(2048), nn.Linear(2048, 4))
    table = brrr.profile(model, torch.randn(64, 512), repeats=3)
    overhead = table.attrs["overhead_seconds"]
    assert 0 < overhead < 1e-3
    for row in table.itertuples():
        expected = "overhead-bound" if overhead >= row.roofline_seconds else \
            ("compute-bound" if row.intensity >= brrr.Roofline.from_device(dtype=row.dtype).ridge else "memory-bound")
        assert row.regime == expected, row
    # the last Linear (64 x 2048 -> 4) is tiny; the first (64 x 512 -> 2048) is not
    addmm = table[table.op == "addmm"]
    assert addmm.roofline_seconds.iloc[0] > addmm.roofline_seconds.iloc[-1]


def test_profile_attrs_name_the_costs_the_text_compares():
    table = brrr.profile(nn.Linear(8, 8), torch.randn(4, 8), repeats=3)
    a = table.attrs
    for key in ("overhead_seconds", "replay_floor_seconds", "chapter3_call_seconds", "model_seconds"):
        assert a[key] > 0 and math.isfinite(a[key]), key
    assert a["model_clock"] == "host" and a["model_iqr_seconds"] >= 0 and a["keeps_outputs"] is False
    assert a["summary"]["name"] == a["device"] and a["backend"] in ("cpu", "cuda")
    off = brrr.profile(nn.Linear(8, 8), torch.randn(4, 8), measure=False)
    assert off.attrs["overhead_seconds"] is None and math.isnan(off.attrs["replay_floor_seconds"])
    assert set(off.regime) <= {"compute-bound", "memory-bound"}   # no fixed cost known


def test_profile_round_trips_through_a_reference_result(tmp_path):
    from brrr.reference import as_frame, as_result
    from brrr.results import Result
    table = brrr.profile(nn.Linear(8, 8), torch.randn(4, 8), repeats=3)
    path = as_result(table, "profile_test").to_json(str(tmp_path / "p.json"))
    back = as_frame(Result.load(path))
    assert list(back.op) == list(table.op) and back.attrs["overhead_seconds"] == table.attrs["overhead_seconds"]
    assert back.regime.tolist() == table.regime.tolist()


def test_plot_roofline_draws_references_grey(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    from brrr import profiler
    from brrr.reference import as_result
    table = brrr.profile(nn.Sequential(nn.Linear(32, 32), nn.GELU()), torch.randn(16, 32), repeats=3)
    ref = as_result(table, "profile_test")
    ref.meta.update(reference=True, date="2026-01-02T00:00:00+00:00",
                    device={**ref.meta["device"], "name": "Some GPU"})
    fig = profiler.plot_roofline(table, title="Tiny", reference=[ref])
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert any("Some GPU, reference 2026-01-02" in label for label in labels)
    assert fig.axes[0].get_title().startswith("Tiny: ")
    assert len(profiler.reference_points([ref])[0].records) == len(profiler.roofline_points(table))


def test_page_tables_have_units_and_no_missing_cells():
    from brrr import profiler
    layer = small_block(hidden=32, heads=2, ffn=64)
    x = encoder_input(layer, batch=2, seq=8)
    table = brrr.profile(layer, x, repeats=3)
    html = profiler.page_table(table).to_html()
    for header in ("FLOPs", "bytes", "replayed time", "roofline time", "efficiency",
                   "module of EncoderLayer"):
        assert header in html, header
    assert "nan" not in html.lower() and "None" not in html
    assert "EncoderLayer.attention" not in html            # the model's name is in the header only
    ops = profiler.page_table(profiler.op_totals(table), ["op", "calls", "flops", "seconds", "time_share"])
    assert "share of time" in ops.to_html()
    train = brrr.profile(layer, x, backward=True, repeats=3)
    phases = profiler.phase_totals(train)
    assert list(phases.index) == ["forward", "backward"]
    assert phases.flops.sum() == train[train.phase.isin(["forward", "backward"])].flops.sum()
    assert "nan" not in profiler.phase_table(train).to_html().lower()
    ivanov = profiler.ivanov_table(table).to_html()
    assert "published (V100)" in ivanov and "99.8%" in ivanov and "700×" in ivanov


def test_shipped_reference_profiles_read_with_todays_columns():
    """Reference profiles written before record schema 2 (a 'bytes' column) load with
    ``nbytes``, and every report reads them."""
    from brrr import profiler, reference
    runs = reference.load("profile_bert", backend=None)
    assert runs
    for run in runs:
        frame = reference.as_frame(run)
        assert set(COLUMNS) <= set(frame.columns) and "bytes" not in frame.columns
        totals = category_totals(frame)
        assert totals["nbytes"].sum() == frame["nbytes"].sum() > 0
        assert len(roofline_points(frame)) > 0
    frame = reference.as_frame(runs[0])
    assert "(reference)" in profiler.ivanov_table(frame, runs).to_html()
    assert "bytes" in profiler.page_table(frame).to_html()

# --- the profiler leaves the model as it found it ------------------------------------------------

class Mixed(nn.Module):
    """BatchNorm in train mode, dropout, a submodule in eval mode, a frozen weight."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 8)
        self.bn = nn.BatchNorm1d(8)
        self.drop = nn.Dropout(0.5)
        self.head = nn.Sequential(nn.Linear(8, 4), nn.BatchNorm1d(4)).eval()
        self.out = nn.Linear(4, 3)
        self.out.weight.requires_grad_(False)

    def forward(self, x):
        return self.out(self.head(self.drop(self.bn(self.fc(x)))))


def _state(model):
    """Everything profile must leave alone, copied."""
    return {"tensors": {k: v.detach().clone() for k, v in model.state_dict().items()},
            "grads": {k: p.grad if p.grad is None else (p.grad, p.grad.clone())
                      for k, p in model.named_parameters()},
            "requires_grad": {k: p.requires_grad for k, p in model.named_parameters()},
            "training": {k: m.training for k, m in model.named_modules()},
            "rng": torch.get_rng_state()}


def _assert_same(before, model):
    after = _state(model)
    for k, v in before["tensors"].items():
        assert torch.equal(v, after["tensors"][k]), k
    for k, p in model.named_parameters():
        if before["grads"][k] is None:
            assert p.grad is None, k
        else:
            grad, copy = before["grads"][k]
            assert p.grad is grad and torch.equal(p.grad, copy), k    # the same tensor, unchanged
    assert after["requires_grad"] == before["requires_grad"]
    assert after["training"] == before["training"]
    assert torch.equal(after["rng"], before["rng"])


@pytest.mark.parametrize("backward, measure", [(False, False), (True, False), (True, True)])
def test_profile_leaves_the_model_as_it_found_it(backward, measure):
    torch.manual_seed(0)
    model = Mixed()
    model.fc.weight.grad = torch.ones_like(model.fc.weight)     # an existing gradient; others None
    x = torch.randn(5, 6)
    before = _state(model)
    assert model.training and model.bn.training and not model.head.training
    table = brrr.profile(model, x, backward=backward, measure=measure, repeats=1, budget=0.01)
    assert any(op.startswith(("native_dropout", "bernoulli")) for op in table.op)   # dropout ran
    _assert_same(before, model)


def test_profile_leaves_the_model_as_it_found_it_when_the_model_fails():
    class Fails(nn.Module):
        def forward(self, x):
            raise RuntimeError("on purpose")
    model = nn.Sequential(nn.BatchNorm1d(4), nn.Dropout(0.5), Fails())
    x = torch.randn(3, 4)
    before = _state(model)
    with pytest.raises(ValueError, match="on purpose"):
        brrr.profile(model, x, backward=True, measure=False)
    _assert_same(before, model)


def test_profile_undoes_what_the_model_itself_changes():
    class Meddles(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            self.fc.weight.add_(1)                  # allowed: backward=False runs without grad
            self.fc.bias.requires_grad_(False)
            self.fc.eval()
            torch.rand(1)
            return self.fc(x)
    model = Meddles()
    x = torch.randn(2, 3)
    before = _state(model)
    brrr.profile(model, x, measure=False)
    _assert_same(before, model)


def _tensors_in(obj):
    """Every torch.Tensor inside dicts, lists, tuples, sets and DataFrame cells of ``obj``."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if hasattr(obj, "attrs") and hasattr(obj, "to_numpy"):          # a DataFrame
        return _tensors_in(obj.attrs) + _tensors_in(list(obj.to_numpy().ravel())) \
            + _tensors_in(list(obj.index))
    if isinstance(obj, dict):
        return _tensors_in(list(obj.keys())) + _tensors_in(list(obj.values()))
    if isinstance(obj, (list, tuple, set)):
        return [t for x in obj for t in _tensors_in(x)]
    return []


def test_profile_keeps_no_activations_alive():
    """The result holds numbers, not tensors; every recorded activation is freed when profile
    returns, by reference counting alone (no reference cycle waiting for the garbage collector)."""
    import gc
    import weakref
    model = Mixed()
    seen = []
    model.bn.register_forward_hook(lambda module, args, out: seen.append(weakref.ref(out)))
    gc.collect()
    gc.disable()
    try:
        table = brrr.profile(model, torch.randn(5, 6), backward=True, measure=False)
        assert seen and all(ref() is None for ref in seen)
    finally:
        gc.enable()
    assert _tensors_in(table) == []


def test_meta_device_is_refused():
    with pytest.raises(ValueError, match=r"model .*'meta' device \(its tensor 'fc\.weight'\)"):
        brrr.profile(Mixed().to("meta"), torch.randn(5, 6, device="meta"), measure=False)
    with pytest.raises(ValueError, match=r"inputs.*input 1 is on the 'meta' device"):
        brrr.profile(Add(), torch.randn(2), torch.randn(2, device="meta"), measure=False)


def test_bad_options_name_the_argument():
    x = torch.randn(1, 2)
    with pytest.raises(ValueError, match="budget"):
        brrr.profile(nn.Linear(2, 2), x, budget=-1, measure=False)
    for flag in ("views", "measure", "merge"):
        with pytest.raises(TypeError, match=flag):
            brrr.profile(nn.Linear(2, 2), x, **{flag: "yes"})
