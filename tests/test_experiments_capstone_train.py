"""brrr.experiments.capstone_train and its prose: chapter 8's training step, at a tiny size on the CPU,
and its sentences on fake records of the same schema as a GPU run's (the next GPU run brings real ones)."""
import copy
import json
import math

import pytest

torch = pytest.importorskip("torch")

from brrr import gpt  # noqa: E402
from brrr.experiments import capstone_train as ct  # noqa: E402
from brrr.prose import training, worked_gpt  # noqa: E402
from brrr.results import Result  # noqa: E402
from tests.record_sets import numbers  # noqa: E402


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


def fake_gpu_run(run, mfu=0.41, compile_seconds=31.0):
    """``run`` as an H200 would record it: the same schema, bf16 under the bf16 tensor-core peak."""
    fake = copy.deepcopy(run)
    peak = {"flops": 989.5e12, "name": "the bfloat16 tensor-core peak", "dtypes": ["float32", "bfloat16"]}
    fake.meta.update(mfu_peak=peak, device={"name": "NVIDIA H200", "backend": "cuda"})
    for i, r in enumerate(ct.measured(fake)):
        r["flops_per_second"] = mfu * peak["flops"] / (4 - i) ** 2
        r["seconds"] = r["flops"] / r["flops_per_second"]
        r["tokens_per_second"] = r["tokens"] / r["seconds"]
        r["mfu"] = r["flops_per_second"] / peak["flops"]
        r["compile_seconds"] = compile_seconds if r["compiled"] else None
    return fake


@pytest.mark.parametrize("which", ["cpu", "gpu"])
def test_training_sentence_states_the_fastest_configuration(run, which):
    result = run if which == "cpu" else fake_gpu_run(run)
    text = training.training(result).text
    best = min(ct.measured(result), key=lambda r: r["seconds"])
    assert best["label"] in text and "tokens/s" in text
    shares = ct.cost_shares(best)
    assert f"{round(100 * shares['matmul'])}%" in text or f"{100 * shares['matmul']:.1f}%" in text
    assert "no MFU" in text if best["mfu"] is None else f"{100 * best['mfu']:.0f}" in text.replace(".", "")[:2000] or "MFU" in text
    if which == "gpu":
        assert "41% MFU (of the bfloat16 tensor-core peak" in text and "Compiling took 31 s" in text
    assert "mixed" not in text and "None" not in text


def test_training_sentence_without_runs_and_with_skips(run):
    assert "No training configuration ran" in training.training(None).text
    skipped = copy.deepcopy(run)
    skipped.records[2] = {**skipped.records[2], "skipped": "torch.compile failed here (RuntimeError: x)"}
    text = training.training(skipped).text
    assert "Did not run here" in text and "torch.compile failed here" in text


def test_the_training_problem_checks_the_fastest_step(run):
    from brrr import device
    s = gpt.sizes(True)
    answer = worked_gpt.train_floor(s["config"], *s["train"], device())
    assert answer.facts["flops"] == gpt.train_flops(s["config"], *s["train"])["total"]
    assert math.isclose(answer.facts["seconds"], answer.facts["flops"] / answer.facts["peak"])
    slow = worked_gpt.check(answer.facts["seconds"] * 5, answer, "The step")
    assert slow.facts["outcome"] == "slower" and "optimizer" in slow.text
    fast = worked_gpt.check(answer.facts["seconds"] / 5, answer, "The step")
    assert fast.facts["above_roof"] and "cannot beat" in fast.text


def test_the_training_bound_is_checked_only_where_its_peak_bounds_the_dtype(run):
    """On a CPU the MFU's peak is the float32 rate, which does not bound the bfloat16 configurations: the bound
    says so and is checked against the fastest float32 step only (a bf16 step below it is no bug)."""
    from brrr import device
    result = run
    s = gpt.sizes(True)
    answer = worked_gpt.train_floor(s["config"], *s["train"], device())
    assert answer.facts["dtypes"] == ["float32"] and "bounds float32 arithmetic only, not bfloat16" in answer.text
    fast = copy.deepcopy(result)
    for r in fast.records:
        r["seconds"] = answer.facts["seconds"] / (10 if r["dtype"] == "bfloat16" else 0.5)
    verdict = worked_gpt.train_check(fast, answer)
    assert "eager FP32" in verdict.text and not verdict.facts.get("above_roof")
    gpu = copy.deepcopy(answer)
    gpu.facts["dtypes"] = ["float32", "bfloat16"]
    assert worked_gpt.train_check(fast, gpu).facts["above_roof"]       # where the peak bounds bf16, it is a bug
    assert worked_gpt.train_check(None, answer).facts["outcome"] == "no step"


def test_anchor_rows_and_differences(run):
    fake = fake_gpu_run(run)
    rows = training.own_rows(fake, None)
    assert [r["kind"] for r in rows] == ["training"] and rows[0]["device"] == "NVIDIA H200"
    assert rows[0]["tokens_per_second"] == min(ct.measured(fake), key=lambda r: r["seconds"])["tokens_per_second"]
    assert rows[0]["mfu"] is not None and rows[0]["peak"]
    cpu = training.own_rows(run, None)[0]          # this CPU's run: no MFU for a dtype its one peak does not bound
    assert (cpu["mfu"] is None) == (cpu["peak"] is None)
    text = training.anchors(fake, None).text
    assert "GPUs at once" in text and "fp8" in text
    assert "neither" in training.anchors(None, None).text
    from brrr.anchors import anchors_table
    html = anchors_table(rows).to_html()
    assert "this page: training" in html
    assert all(n > 0 for n in numbers(text)) or not numbers(text)
