"""brrr.experiments.capstone_train: chapter 8's training step, at a tiny size on the CPU (its claims are
tested in tests/test_prose_capstone.py)."""
import json
import math

import pytest

torch = pytest.importorskip("torch")

from brrr import gpt  # noqa: E402
from brrr.experiments import capstone_train as ct  # noqa: E402
from brrr.results import Result  # noqa: E402


def test_training_flops_are_the_profilers_count_of_forward_and_backward():
    from torch.utils.flop_counter import FlopCounterMode
    from torch.nn import functional as F
    cfg = gpt.GPTConfig(n_layer=2, n_head=2, d_model=64, vocab=512, context=64)
    model = gpt.GPT(cfg).train()                     # attention by hand: every matmul is an aten matmul
    idx, targets = gpt.tokens(cfg, 2, 32), gpt.tokens(cfg, 2, 32, seed=1)
    with FlopCounterMode(display=False) as forward:
        logits = model(idx)
    with FlopCounterMode(display=False) as both:
        F.cross_entropy(model(idx).flatten(0, 1), targets.flatten()).backward()
    f = gpt.train_flops(cfg, 2, 32)
    assert forward.get_total_flops() == f["forward"] == gpt.forward_flops(cfg, 2, 32)["total"]
    assert both.get_total_flops() == f["total"] == f["forward"] + f["backward"]
    n = 12 * cfg.n_layer * cfg.d_model ** 2 + cfg.d_model * cfg.vocab       # the weights the matmuls use
    assert f["linear"] + f["head"] == 6 * n * 64                              # 6·N per token
    assert f["attention"] == 12 * cfg.n_layer * 32 * cfg.d_model * 64
    assert logits.shape == (2, 32, cfg.vocab)


def test_padded_vocabulary():
    assert gpt.padded(gpt.GPT2_SMALL).vocab == 50304
    assert gpt.padded(gpt.GPTConfig(vocab=512)).vocab == 512
    with pytest.raises(ValueError, match="multiple"):
        gpt.padded(gpt.GPT2_SMALL, 0)


@pytest.mark.parametrize("name, cls", [
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", "matmul"),
    ("nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTT", "matmul"),
    ("aten::mm", "matmul"), ("aten::addmm", "matmul"), ("MmBackward0", "matmul"),
    ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128>>", "attention"),
    ("aten::_softmax", "attention"), ("aten::masked_fill", "attention"),
    ("triton_red_fused__log_softmax_backward_data_nll_loss_backward_0", "loss"),
    ("aten::_log_softmax", "loss"), ("NllLossBackward0", "loss"),
    ("triton_per_fused_add_native_layer_norm_native_layer_norm_backward_3", "norm"),
    ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedAdamMathFunctor>", "optimizer"),
    ("aten::_fused_adamw_", "optimizer"), ("Optimizer.step#AdamW.step", "optimizer"),
    ("triton_poi_fused_gelu_gelu_backward_5", "other"), ("aten::embedding_dense_backward", "other"),
    ("Memcpy HtoD (Pageable -> Device)", "other"),
])
def test_cost_class(name, cls):
    assert ct.cost_class(name) == cls


@pytest.fixture(scope="module")
def run():
    return ct.train_steps(quick=True, budget=0.02, profile_budget=0.005)


def test_records_are_valid(run):
    assert [r["config"] for r in run.records] == list(ct.CONFIG_KEYS)
    cfg = gpt.GPTConfig(**{k: v for k, v in gpt.sizes(True)["config"].__dict__.items()})
    peak = run.meta["mfu_peak"]
    for r in ct.measured(run):
        assert r["tokens"] == r["batch"] * r["seq"] and r["seconds"] > 0
        assert r["flops"] == gpt.train_flops(cfg, r["batch"], r["seq"])["total"]
        assert math.isclose(r["tokens_per_second"], r["tokens"] / r["seconds"])
        if r["dtype"] in peak["dtypes"]:
            assert math.isclose(r["mfu"], r["flops"] / r["seconds"] / peak["flops"])
        else:
            assert r["mfu"] is None
        assert set(r["costs"]) == set(ct.COST_CLASSES) and sum(r["costs"].values()) > 0
        assert math.isclose(sum(ct.cost_shares(r).values()), 1)
        assert r["costs"]["matmul"] > 0
    mixed = next(r for r in run.records if r["config"] == "mixed")
    assert mixed["regime"] in ("compute-bound", "memory-bound", "overhead-bound")
    assert mixed["attention"] == "sdpa" and mixed["optimizer"] == "fused AdamW"
    again = Result.from_dict(json.loads(json.dumps(run.to_dict())))
    assert again.records == run.records
    html = ct.train_table(run).to_html()
    assert "time in optimizer" in html and f"MFU (of {peak['name']}" in html


def test_a_failing_compile_is_a_skipped_configuration(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("no C++ compiler found")
    monkeypatch.setattr(torch, "compile", broken)
    result = ct.train_steps(quick=True, configs=ct.CONFIGS[2:], budget=0.01)
    assert result.records[0]["skipped"].startswith("torch.compile failed here (RuntimeError: no C++ compiler")


def test_the_pages_anchor_rows_are_its_fastest_training_step_and_forward_pass(run):
    from brrr.anchors import anchors_table, page_rows
    rows = page_rows(run, None)
    assert [r["kind"] for r in rows] == ["training"]
    assert rows[0]["tokens_per_second"] == min(ct.measured(run), key=lambda r: r["seconds"])["tokens_per_second"]
    assert (rows[0]["mfu"] is None) == (rows[0]["peak"] is None)   # no MFU for a dtype the run's one peak does not bound
    assert page_rows(None, None) == [] and "this page: training" in anchors_table(rows).to_html()
