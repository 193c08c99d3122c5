"""brrr.gpt: the GPT-2-style decoder of chapter 8: shapes, parameter count, attention, FLOPs."""
import pytest

torch = pytest.importorskip("torch")

from brrr import gpt  # noqa: E402

TINY = gpt.GPTConfig(n_layer=2, n_head=2, d_model=32, vocab=100, context=16)


def test_gpt2_small_has_124m_parameters_by_formula_and_by_module():
    assert gpt.GPT2_SMALL.n_params() == 124_439_808          # GPT-2 small, tied head
    with torch.device("meta"):                               # shapes only: nothing allocated
        model = gpt.GPT(gpt.GPT2_SMALL)
    assert sum(p.numel() for p in model.parameters()) == gpt.GPT2_SMALL.n_params()


@pytest.mark.parametrize("cfg", [TINY, gpt.GPTConfig(n_layer=3, n_head=4, d_model=48, vocab=77, context=9)])
def test_formula_counts_the_module(cfg):
    model = gpt.GPT(cfg)
    assert sum(p.numel() for p in model.parameters()) == cfg.n_params()
    assert model.head.weight is model.wte.weight              # tied, counted once


def test_shapes_and_checks():
    model = gpt.GPT(TINY).eval()
    idx = gpt.tokens(TINY, batch=3, seq=10)
    assert idx.shape == (3, 10) and idx.dtype == torch.int64 and 0 <= int(idx.min()) and int(idx.max()) < 100
    with torch.no_grad():
        assert model(idx).shape == (3, 10, 100)
    with pytest.raises(ValueError):
        model(torch.zeros(1, 17, dtype=torch.long))            # longer than the context
    with pytest.raises(ValueError):
        gpt.tokens(TINY, 1, 17)
    with pytest.raises(ValueError):
        gpt.GPTConfig(d_model=30, n_head=4)
    with pytest.raises(ValueError):
        gpt.GPTConfig(n_layer=0)
    with pytest.raises(TypeError):
        model.use_sdpa("yes")


def test_sdpa_and_manual_attention_agree():
    model = gpt.GPT(TINY).eval()
    idx = gpt.tokens(TINY, batch=2, seq=16, seed=3)
    with torch.no_grad():
        manual = model(idx)
        fused = model.use_sdpa(True)(idx)
        back = model.use_sdpa(False)(idx)
    assert all(b.attn.sdpa is False for b in model.blocks)
    torch.testing.assert_close(fused, manual, rtol=1e-4, atol=1e-5)
    assert torch.equal(back, manual)


def test_attention_is_causal():
    """Changing a later token changes no earlier position's logits, and does change its own."""
    model = gpt.GPT(TINY).eval()
    idx = gpt.tokens(TINY, batch=1, seq=12)
    later = idx.clone()
    later[0, 8] = (later[0, 8] + 1) % TINY.vocab
    for sdpa in (False, True):
        model.use_sdpa(sdpa)
        with torch.no_grad():
            a, b = model(idx), model(later)
        torch.testing.assert_close(a[:, :8], b[:, :8])
        assert not torch.allclose(a[:, 8:], b[:, 8:])


def test_forward_flops_match_the_profilers_count_of_the_matmuls():
    from brrr import profile
    model = gpt.GPT(TINY).eval()
    idx = gpt.tokens(TINY, batch=2, seq=12)
    with torch.no_grad():
        table = profile(model, idx, measure=False)
    counted = table[table.category == "matmul"].flops.sum()
    f = gpt.forward_flops(TINY, 2, 12)
    assert counted == f["total"] == f["linear"] + f["attention"] + f["head"]
    assert f["head"] == 2 * 32 * 100 * 24


def test_sizes():
    cpu, gpu, quick = gpt.sizes(False, gpu=False), gpt.sizes(False, gpu=True), gpt.sizes(True)
    assert gpu["config"] == gpt.GPT2_SMALL
    for s in (cpu, gpu, quick):
        for key in ("small", "large"):
            batch, seq = s[key]
            assert seq <= s["config"].context
        assert s["small"][0] * s["small"][1] < s["large"][0] * s["large"][1]
    assert cpu["config"].n_params() < gpt.GPT2_SMALL.n_params() and quick["config"].n_params() < cpu["config"].n_params()


def test_operator_calls_match_the_shipped_profiles():
    """review 07_08 item 10: the calls a fixed cost is paid on, counted without running the model,
    are the calls the profiler recorded in every shipped profile of the model."""
    from brrr import reference
    assert gpt.operator_calls(TINY, 1, 8) == gpt.operator_calls(TINY, 1, 8)
    three, two = (gpt.operator_calls(gpt.GPTConfig(n_layer=n), 2, 64) for n in (3, 2))
    per_block = three - two
    assert per_block > 10
    for runs in reference.record_sets().values():
        if "capstone_profile_batch" in runs and "capstone_steps" in runs:
            steps = runs["capstone_steps"]
            batch, seq = steps.meta["large"]
            shipped = gpt.GPTConfig(**steps.meta["config"])
            table = reference.as_frame(runs["capstone_profile_batch"])
            assert gpt.operator_calls(shipped, batch, seq) == int(table.calls.sum())
