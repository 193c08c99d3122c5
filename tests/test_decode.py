"""brrr.decode and chapter 8's decode sweep: the cached forward pass gives the model's own logits,
its FLOP count is the one PyTorch counts, and every record is placed by the book's rule."""
import math

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from brrr import decode, gpt
from brrr.experiments import capstone_decode
from brrr.roofline import COMPUTE, MEMORY, OVERHEAD, Roofline

CFG = gpt.GPTConfig(n_layer=2, n_head=2, d_model=64, vocab=512, context=64)


@pytest.mark.parametrize("sdpa", [False, True])
def test_prefill_then_steps_give_the_full_forward_passs_logits(sdpa):
    model = gpt.GPT(CFG).eval().use_sdpa(sdpa)
    idx = gpt.tokens(CFG, 3, 12)
    cache = decode.KVCache(CFG, 3, 16)
    with torch.no_grad():
        full = model(idx)
        got = [decode.forward_cached(model, idx[:, :10], cache, torch.tensor(0))]
        for p in (10, 11):
            got.append(decode.forward_cached(model, idx[:, p:p + 1], cache, torch.tensor(p)))
    for logits, position in zip(got, (9, 10, 11)):
        assert torch.allclose(logits, full[:, position], atol=1e-5)


def test_a_step_at_the_same_position_is_repeatable():
    """A CUDA graph replays one step many times: each replay must compute the same thing."""
    model = gpt.GPT(CFG).eval()
    cache = decode.KVCache(CFG, 2, 8)
    idx = gpt.tokens(CFG, 2, 5)
    with torch.no_grad():
        decode.forward_cached(model, idx[:, :4], cache, torch.tensor(0))
        one = decode.forward_cached(model, idx[:, 4:], cache, torch.tensor(4))
        two = decode.forward_cached(model, idx[:, 4:], cache, torch.tensor(4))
    assert torch.equal(one, two)


@pytest.mark.parametrize("batch, new, length", [(1, 1, 17), (4, 1, 33), (2, 16, 17)])
def test_call_counts_are_the_flops_pytorch_counts(batch, new, length):
    model = gpt.GPT(CFG).eval()
    cache = decode.KVCache(CFG, batch, length)
    idx = gpt.tokens(CFG, batch, new)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        decode.forward_cached(model, idx, cache, torch.tensor(length - new))
    counts = decode.call_counts(CFG, batch, new, length, itemsize=4)
    assert counts["flops"] == counter.get_total_flops()
    assert counts["cache_bytes"] == cache.nbytes
    weights = sum(p.numel() for p in model.parameters()) - CFG.context * CFG.d_model
    assert counts["weight_bytes"] == 4 * weights


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="length"):
        decode.KVCache(CFG, 1, CFG.context + 1)
    with pytest.raises(ValueError, match="batch"):
        decode.KVCache(CFG, 0, 8)
    model = gpt.GPT(CFG).eval()
    with pytest.raises(ValueError, match="sequences"):
        decode.forward_cached(model, gpt.tokens(CFG, 2, 1), decode.KVCache(CFG, 3, 8), torch.tensor(0))


def test_ridge_batch_reaches_the_ridge():
    roof = Roofline(peak_flops=1e15, peak_bandwidth=5e12)      # ridge 200 FLOP/byte
    batch = capstone_decode.ridge_batch(roof, itemsize=2, most=1024)
    assert batch == 256 and 2 * batch / 2 >= roof.ridge > 2 * (batch // 2) / 2
    assert capstone_decode.ridge_batch(roof, itemsize=2, most=64) == 64
    assert capstone_decode.ridge_batch(Roofline(peak_flops=1e9, peak_bandwidth=1e10), 4, 64) == 1


def test_the_decode_sweep_places_every_call_by_the_books_rule(monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")
    result = capstone_decode.decode_sweep(progress=False)
    roof = Roofline.from_dict(result.meta["roofline"])
    seen = set()
    for r in result.records:
        seen.add((r["batch"], r["mode"]))
        if r.get("skipped"):
            assert r["mode"] == "graph" and "GPU" in r["skipped"]
            continue
        assert r["seconds"] > 0 and math.isclose(r["tokens_per_second"], r["tokens"] / r["seconds"])
        bound = roof.with_ceilings(overhead=r["overhead_seconds"]).regime(r["flops"], r["nbytes"])
        assert r["regime"] == bound and r["regime"] in (COMPUTE, MEMORY, OVERHEAD)
        assert r["roofline_seconds"] >= r["weight_seconds"]        # every weight is read once a call
        assert r["overhead_seconds"] == pytest.approx(r["calls"] * result.meta["fixed_cost_seconds"])
    assert seen == {(b, m) for b in result.meta["batches"] for m in capstone_decode.MODES}
    table = capstone_decode.decode_table(result)
    assert list(table["call"]) == [r["mode"] for r in result.records if not r.get("skipped")]
    assert capstone_decode.decode_table(None) is None


def test_the_decode_claims_are_the_floor_and_each_steps_regime_by_the_books_rule(monkeypatch):
    from brrr.prose import capstone
    monkeypatch.setenv("BRRR_QUICK", "1")
    result = capstone_decode.decode_sweep(progress=False)
    floor, *regimes = capstone.decode_check(result)
    steps = [r for r in result.records if r["mode"] != "prefill" and not r.get("skipped")]
    assert floor.value == steps[0]["weight_seconds"] and len(regimes) == len(steps)
    for claim, r in zip(regimes, steps):
        assert (claim.flops, claim.nbytes, claim.call_cost, claim.seconds) == (
            r["flops"], r["nbytes"], r["overhead_seconds"], r["seconds"])
        assert claim.regime == r["regime"]                  # the record's regime is the claim's, by one rule


def test_the_decode_floor_is_the_weights_at_the_bandwidth():
    import brrr
    from brrr.experiments import capstone_worked
    dev = brrr.device()
    floor = capstone_worked.decode_floor(gpt.GPT2_SMALL, dev)
    weights = gpt.GPT2_SMALL.n_params() - gpt.GPT2_SMALL.context * gpt.GPT2_SMALL.d_model
    size = {"float32": 4, "bfloat16": 2, "float16": 2}[capstone_decode.weights_dtype(dev)]
    assert floor["weight_bytes"] == size * weights
    assert floor["floor"] == pytest.approx(size * weights / dev.peak_bandwidth)
