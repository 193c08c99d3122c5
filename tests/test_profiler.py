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
    assert row.bytes == (M * K + K * N + M * N) * F32
    assert row.category == "matmul"
    assert row.intensity == pytest.approx(2 * M * N * K / ((M * K + K * N + M * N) * F32))
    assert row.input_shapes == ((M, K), (K, N))
    assert row["dtype"] == "float32"


def test_add_flops_and_bytes_by_hand():
    M, N = 64, 80
    row = only(brrr.profile(Add(), torch.randn(M, N), torch.randn(M, N), measure=False), "add.Tensor")
    assert row.flops == M * N                       # one FLOP per output element
    assert row.bytes == 3 * M * N * F32             # read a, read b, write the sum
    assert row.category == "elementwise"
    # a broadcast operand is read once, not once per row
    row = only(brrr.profile(Add(), torch.randn(M, N), torch.randn(N), measure=False), "add.Tensor")
    assert row.bytes == (2 * M * N + N) * F32
    # adding a tensor to itself reads it once
    same = torch.randn(M, N)
    row = only(brrr.profile(Add(), same, same, measure=False), "add.Tensor")
    assert row.bytes == 2 * M * N * F32


def test_layer_norm_flops_and_bytes_by_hand():
    M, N = 24, 40
    row = only(brrr.profile(nn.LayerNorm(N), torch.randn(M, N), measure=False), "native_layer_norm")
    assert row.flops == 7 * M * N
    # read x, gamma, beta; write y and the per-row mean and 1/sigma
    assert row.bytes == (M * N + 2 * N + M * N + 2 * M) * F32
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
    points = roofline_points(table)
    assert {"label", "flops", "nbytes", "seconds"} <= set(points.columns)


def test_roofline_time_is_max_of_math_and_memory():
    table = brrr.profile(MatMul(), torch.randn(64, 64), torch.randn(64, 64), repeats=3)
    row = only(table, "mm")
    roof = brrr.Roofline.from_device()
    assert row.roofline_seconds == pytest.approx(max(row.flops / roof.peak_flops, row.bytes / roof.peak_bandwidth))
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
    assert (views.bytes == 0).all() and (views.flops == 0).all()      # no data moves


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


def test_in_place_ops_are_replayed():
    model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(inplace=True))
    table = brrr.profile(model, torch.randn(4, 16), repeats=3)
    row = only(table, "relu_")
    assert row.category == "elementwise"
    assert row.bytes == 2 * 4 * 16 * F32 and row.seconds > 0


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
    assert row.roofline_seconds == pytest.approx(max(row.flops / roof.peak_flops, row.bytes / roof.peak_bandwidth))
    assert row.bytes == 3 * 256 * 256 * 2 and row.seconds > 0
    back = brrr.profile(nn.Linear(64, 64).cuda(), torch.randn(8, 64, device="cuda"), backward=True, repeats=3)
    assert "backward" in set(back.phase)
