"""Chapter 8's worked problems, the arithmetic: each function returns the numbers of one answer (a dict,
seconds, bytes, FLOPs), which :mod:`brrr.prose.capstone` fills into its templates and sets against what
the page measured. A number the problem needs and the page's run lacks is None, with the record it
would come from (``missing``)."""
from __future__ import annotations

import math
from typing import Optional

from ..roofline import REFERENCE_GPU as REFERENCE, worked_roofs

CAST_BYTES = 6           # a float32 weight cast to 16 bits: four bytes read, two written


def whence(dev) -> str:
    """Where ``dev``'s peaks come from, in words."""
    return ("measured on this CPU when brrr first met it, not a hardware limit" if not dev.on_gpu else
            "derived from its clocks" if dev.spec is None or dev.source.startswith("unknown") else "its spec sheet")


def fixed_cost(measured: Optional[float]) -> tuple:
    """(seconds, record) of the fixed cost of one operator call: ``measured`` (``capstone_call_cost``) where
    the page has it; on a replayed set without it, the one the same run measured with its profile of
    step 2 (``capstone_profile_batch``'s ``attrs.overhead_seconds``); else (None, None)."""
    if measured is not None:
        return measured, "capstone_call_cost"
    from ..reference import replay_runs
    profile = replay_runs().get("capstone_profile_batch")
    seconds = (profile.meta.get("attrs") or {}).get("overhead_seconds") if profile is not None else None
    return (seconds, "capstone_profile_batch") if seconds else (None, None)


def _per_token(cfg, seq: int) -> float:
    from ..gpt import forward_flops
    return forward_flops(cfg, 1, seq)["total"] / seq


def one_call(cfg, batch: int, seq: int, dev, call_cost: Optional[float]) -> dict:
    """Problem 1: a float32 call of ``cfg`` on ``batch`` x ``seq`` tokens: its FLOPs (per token by part),
    its weights read once (4 bytes each) and its operator calls (:func:`brrr.gpt.operator_calls`) times
    ``call_cost``, the fixed cost of one (None: unknown)."""
    from ..gpt import GPT2_SMALL, forward_flops, operator_calls
    d, here, ref = cfg.d_model, *worked_roofs(dev)
    calls = operator_calls(cfg, batch, seq)
    return {"d": d, "seq": seq, "batch": batch, "tokens": batch * seq, "n_layer": cfg.n_layer,
            "weights_part": 24 * d * d, "attention_part": 4 * seq * d, "head_part": 2 * d * cfg.vocab,
            "per_token": _per_token(cfg, seq), "params": cfg.n_params(), "gpt2_per_token": _per_token(GPT2_SMALL, seq),
            "flops": forward_flops(cfg, batch, seq)["total"], "nbytes": 4 * cfg.n_params(), "calls": calls,
            "call_cost": call_cost, "fixed": None if call_cost is None else calls * call_cost,
            "here": here, "ref": ref, "cache": dev.l2_bytes, "cpu": not dev.on_gpu}


def ridge_call(cfg, seq: int, dev, call_cost: Optional[float]) -> dict:
    """Problem 2: the tokens n at which a float32 call's math time equals the time to read its weights,
    n = weight bytes x ridge / FLOPs per token; the smallest whole batch of ``seq``-token sequences, at
    least two, that reaches it, as :func:`one_call` gives it; the same n on the reference GPU, in FP32 and
    in bfloat16 on its tensor cores (2 bytes a weight)."""
    from ..specs import GPU_SPECS
    here, ref = worked_roofs(dev)
    per_token, nbytes = _per_token(cfg, seq), 4 * cfg.n_params()
    n_star = nbytes * here.ridge / per_token
    batch = max(2, math.ceil(n_star / seq))
    few, call = one_call(cfg, 1, seq, dev, call_cost), one_call(cfg, batch, seq, dev, call_cost)
    bf16_ridge = GPU_SPECS[REFERENCE].bf16_tensor / ref.peak_bandwidth
    return {**call, "ridge": here.ridge, "n_star": n_star, "least": float(here.time(call["flops"], nbytes)),
            "few_least": float(here.time(few["flops"], nbytes)), "ref_ridge": ref.ridge,
            "ref_n": nbytes * ref.ridge / per_token, "bf16_ridge": bf16_ridge,
            "bf16_n": 2 * cfg.n_params() * bf16_ridge / per_token}


def matmul_share(records) -> float:
    """The matmuls' share of the replayed time of a profile (a :func:`brrr.profile` table, or its records)."""
    import pandas as pd
    from ..profiler import category_totals
    table = records if isinstance(records, pd.DataFrame) else pd.DataFrame(list(records))
    return float(category_totals(table)["time_share"].get("matmul", 0.0))


def _has_tf32(device: dict) -> bool:
    """Whether a record's device is a GPU with a TF32 rate above its FP32 one (a CPU's record gives its
    float32 rate for every 'tensor' peak)."""
    tf32, fp32 = device.get("peak_flops_float32_tensor"), device.get("peak_flops_float32")
    return device.get("backend") == "cuda" and bool(tf32 and fp32) and tf32 > fp32


def tf32_gain(table, dev, references=()) -> dict:
    """Problem 3: r = TF32 peak / FP32 peak and f, the matmuls' share of step 2's profile ``table``, of this
    device; where it has no TF32 tensor cores, of the first of ``references`` (step 2's reference
    profiles) that has; the bound 1 / ((1 − f) + f / r) and, with the matmuls free, 1 / (1 − f)."""
    if dev.on_gpu and dev.has_tensor_cores("float32"):
        where, tf32, fp32 = "this device", dev.peak_flops("float32", tensor_cores=True), dev.peak_flops("float32")
        f = None if table is None or not len(table) else matmul_share(table)
    else:
        run = next((run for run in references or () if _has_tf32(run.meta.get("device", {}))), None)
        if run is None:
            return {"where": None}
        spec = run.meta["device"]
        where, tf32, fp32 = f"the reference {spec['name']}", spec["peak_flops_float32_tensor"], spec["peak_flops_float32"]
        f = matmul_share(run.records)
    out = {"where": where, "tf32": tf32, "fp32": fp32, "r": tf32 / fp32, "f": f}
    if f is not None and f < 1:
        out.update(bound=1 / ((1 - f) + f * fp32 / tf32), limit=1 / (1 - f))
    return out


def cast_weights(cfg) -> int:
    """The parameters autocast casts on every call: each block's four weight matrices and their biases, and
    the head (the token table, tied to it); not the position table or the LayerNorms."""
    from .capstone_ridge import LINEAR_SHAPES
    d = cfg.d_model
    return cfg.n_layer * sum(a * d * b * d + b * d for a, b in LINEAR_SHAPES) + cfg.vocab * d


def profiled_parts(record) -> bool:
    """Whether a step's record ran and keeps its profile's parts (:mod:`.capstone_rows`)."""
    return bool(record) and not record.get("skipped") and bool(record.get("profile_seconds"))


def cast_saving(cfg, dev, steps) -> dict:
    """Problem 4: the bytes autocast's casts of the weights move per call (6 a weight) and their time at
    ``dev``'s bandwidth; c, the casts' share of step 4's profile in ``steps`` (None where the record lacks
    it), and the speed-up of step 5 over step 4 if only the casts went away, 1 / (1 − c)."""
    n = cast_weights(cfg)
    out = {"weights": n, "nbytes": CAST_BYTES * n, "float32_bytes": 4 * n, "bandwidth": dev.peak_bandwidth,
           "floor": CAST_BYTES * n / dev.peak_bandwidth, "cache": dev.l2_bytes, "c": None}
    step4 = {r["step"]: r for r in steps.records}.get("autocast") if steps is not None else None
    if profiled_parts(step4) and step4["cast_seconds"] < step4["profile_seconds"]:
        c = step4["cast_seconds"] / step4["profile_seconds"]
        out.update(c=c, speedup=1 / (1 - c), casts=step4["casts"], cast_seconds=step4["cast_seconds"],
                   profile_seconds=step4["profile_seconds"])
    return out


def attention_roofs(cfg, batch: int, seq: int, roof) -> tuple:
    """(least time of the hand-written attention's core, of the weight matmuls and the head) of one float32
    pass by ``roof``: Q·Kᵀ, scale, mask, softmax, scores·V and the four copies of the heads, each tensor
    read and written once."""
    from ..profiler.counting import PER_ELEMENT_FLOPS
    d, n, scores = cfg.d_model, batch * seq, batch * cfg.n_head * seq * seq

    def linear(k, m):   # a float32 Linear(k, m) on n rows: input, weights, bias and output once
        return 2 * n * k * m, 4 * (n * k + k * m + m + n * m)
    bmm = (2 * n * seq * d, 4 * (2 * n * d + scores))           # Q·Kᵀ, and scores·V: the same counts
    passes = [(f * scores, 8 * scores) for f in (1, 1, PER_ELEMENT_FLOPS["_softmax"])]   # scale, mask, softmax
    core = cfg.n_layer * sum(float(roof.time(*op)) for op in [bmm, bmm] + passes + [(0, 8 * n * d)] * 4)
    mats = [linear(d, 3 * d), linear(d, d), linear(d, 4 * d), linear(4 * d, d)]
    head = (2 * n * d * cfg.vocab, 4 * (n * d + d * cfg.vocab + n * cfg.vocab))
    return core, cfg.n_layer * sum(float(roof.time(*op)) for op in mats) + float(roof.time(*head))


def attention_share(cfg, batch: int, seq: int, dev) -> dict:
    """Problem 5: attention's share of the FLOPs of ``cfg`` on ``batch`` x ``seq`` tokens and of GPT-2 small
    at its full context, T = 6d where it passes half a block, and the roofline's share of time of the
    attention core (:func:`attention_roofs`) here and on the reference GPU."""
    from ..gpt import GPT2_SMALL, forward_flops
    from ..profiler.counting import PER_ELEMENT_FLOPS
    here, ref = worked_roofs(dev)
    f, big = forward_flops(cfg, batch, seq), forward_flops(GPT2_SMALL, 1, GPT2_SMALL.context)

    def share(c, b, s, roof):
        core, mats = attention_roofs(c, b, s, roof)
        return core / (core + mats)
    return {"d": cfg.d_model, "crossover": 6 * cfg.d_model, "gpt2_crossover": 6 * GPT2_SMALL.d_model,
            "context": cfg.context, "seq": seq, "batch": batch, "n_head": cfg.n_head,
            "head_dim": cfg.d_model // cfg.n_head, "block": seq / (6 * cfg.d_model + seq),
            "share": f["attention"] / f["total"], "gpt2_block": GPT2_SMALL.context / (6 * GPT2_SMALL.d_model + GPT2_SMALL.context),
            "gpt2_share": big["attention"] / big["total"], "softmax": PER_ELEMENT_FLOPS["_softmax"],
            "ridge": here.ridge, "time_share": share(cfg, batch, seq, here), "ref": ref,
            "ref_same": share(cfg, batch, seq, ref), "ref_gpt2": share(GPT2_SMALL, 1, GPT2_SMALL.context, ref)}


def attention_measured(table) -> dict:
    """Attention's measured shares in a profile of :class:`brrr.gpt.GPT` (the operators of the module
    ``...attn`` itself, not its projections, against every other matmul): of the counted FLOPs, of the
    replayed time, each group's replayed and roofline time, and the time each attention operator took
    beyond its roofline time ({op: seconds}, the three largest). None for no profile."""
    if table is None:
        return None
    core = table["module"].astype(str).str.endswith(".attn")
    mats = (table["category"] == "matmul") & ~core
    t_core, t_mats = float(table["seconds"][core].sum()), float(table["seconds"][mats].sum())
    by_op = table[core].groupby("op")[["seconds", "roofline_seconds"]].sum()
    lost = (by_op.seconds - by_op.roofline_seconds).sort_values(ascending=False)
    return {"flop_share": float(table["flops"][core].sum()) / float(table["flops"].sum()),
            "time_share": t_core / (t_core + t_mats), "core_seconds": t_core, "mats_seconds": t_mats,
            "core_least": float(table["roofline_seconds"][core].sum()),
            "mats_least": float(table["roofline_seconds"][mats].sum()),
            "lost": {f"`{op}`": float(s) for op, s in lost[lost > 0].head(3).items()},
            "lost_total": float(lost[lost > 0].sum())}


def vocab_gain(vocab: int, steps) -> dict:
    """Problem 6: what padding ``vocab`` to a multiple of 64 adds; and, from ``steps``, the head's share h of
    the profile of the configuration the vocabulary step changed, the bound 1 / (1 − h) and, with the
    padded head at the run's one peak (where it bounds that configuration's dtype),
    total / (total − head + least). ``missing``: the step or field the record lacks."""
    from ..gpt import padded_vocab
    from ..mfu import mfu_peak
    from .capstone import by_step, previous
    wide = padded_vocab(vocab)
    out = {"vocab": vocab, "wide": wide, "added": wide - vocab, "more": wide / vocab - 1}
    step = by_step(steps).get("vocab") if steps is not None else None
    base = previous(steps, "vocab") if step and not step.get("skipped") else None
    if not profiled_parts(base) or not base.get("head_seconds") or base["head_seconds"] >= base["profile_seconds"]:
        return {**out, "step": step, "base": base}
    h = base["head_seconds"] / base["profile_seconds"]
    out.update(step=step, base=base, h=h, bound=1 / (1 - h))
    peak = mfu_peak(steps)
    if peak.get("flops") and base.get("dtype") in peak.get("dtypes", ()) and base.get("head_width"):
        least = base["head_flops"] * step["vocab"] / base["head_width"] / peak["flops"]
        out.update(least=least, peak_name=peak["name"],
                   at_peak=base["profile_seconds"] / (base["profile_seconds"] - base["head_seconds"] + least))
    return out


def decode_floor(cfg, dev, batch: int = 16) -> dict:
    """Problem 7: one decode step of ``cfg``, its weights in the decode sweep's type, at the DRAM bandwidth:
    every weight once at batch 1; at ``batch``, the weights once and the batch's key/value cache at the
    sweep's prompt length (:func:`brrr.decode.call_counts`); on the reference GPU in bfloat16 too."""
    from .. import arrays, config
    from ..decode import call_counts
    from .capstone_decode import prompt_tokens, weights_dtype
    here, ref = worked_roofs(dev)
    dtype = weights_dtype(dev)
    itemsize, length = arrays.itemsize(dtype), prompt_tokens(dev, config.quick_mode()) + 1
    one, many = call_counts(cfg, 1, 1, length, itemsize), call_counts(cfg, batch, 1, length, itemsize)
    ref_bytes = call_counts(cfg, 1, 1, length, arrays.itemsize("bfloat16"))["weight_bytes"]
    return {"dtype": dtype, "itemsize": itemsize, "weights": one["weight_bytes"] // itemsize,
            "weight_bytes": one["weight_bytes"], "bandwidth": here.peak_bandwidth,
            "floor": one["weight_bytes"] / here.peak_bandwidth, "batch": batch, "length": length,
            "cache_bytes": many["cache_bytes"], "batch_floor": (many["weight_bytes"] + many["cache_bytes"]) / here.peak_bandwidth,
            "ref": ref, "ref_floor": ref_bytes / ref.peak_bandwidth}


def train_floor(cfg, batch: int, seq: int, dev) -> dict:
    """Problem 8: one training step's FLOPs (:func:`brrr.gpt.train_flops`) at the one peak the chapter's MFU
    is against (:func:`brrr.mfu.table_peak`, with the decode sweep's 16-bit type on a GPU), its least time
    and tokens per second; GPT-2 small on 8 x 1,024 tokens at the reference GPU's bfloat16 tensor-core peak."""
    from ..gpt import GPT2_SMALL, train_flops
    from ..mfu import table_peak
    from ..specs import GPU_SPECS
    from .capstone_decode import weights_dtype
    f = train_flops(cfg, batch, seq)
    peak = table_peak(dev, weights_dtype(dev) if dev.on_gpu else "bfloat16")
    spec = GPU_SPECS[REFERENCE]
    least = f["total"] / peak["flops"]
    return {"weights": (f["linear"] + f["head"]) // (6 * batch * seq), "flops": f["total"], "tokens": batch * seq,
            "peak": peak, "least": least, "tokens_per_second": batch * seq / least, "ref_name": spec.name,
            "ref_peak": spec.bf16_tensor, "ref_least": train_flops(GPT2_SMALL, 8, 1024)["total"] / spec.bf16_tensor}
