"""Worked problems of Chapter 8, as in :mod:`.worked`, with the FLOPs of :func:`brrr.gpt.forward_flops`; single
call times are checked by :func:`.worked.check` (the answers bring their ``reasons``)."""
from __future__ import annotations

import math

from . import Prose, needs_measurements
from . import words as w
from . import worked
from .worked import REFERENCE, WITHIN, _s, _whence, roofs
from .worked_tf32 import _has_tf32, tf32_check, tf32_gain  # noqa: F401 (problem 3; the chapter calls it from here)
from .worked_cast import cast_check, cast_saving, cast_weights  # noqa: F401 (problem 4; the chapter calls it from here)
from .worked_vocab import vocab_check, vocab_gain  # noqa: F401 (problem 6; the chapter calls it from here)

check = worked.check   # the check the chapter calls from here

_FIXED = ("the roofline's bound is one perfect kernel, while an eager forward pass is many separate operator "
          "calls, each paying a fixed cost (Chapter 3) and each short of its own roof; the profile under Step 1 "
          "weighs each operator alone")
_SUMMED = ("the bound takes the largest of the three costs as if the other two hid behind it, while an eager pass runs "
           "its operators one after another, each paying its fixed cost and then its own work, short of its own roof; "
           "the profile under Step 1 weighs each operator alone")
REASONS = {"gpt call": (_FIXED, None), "gpt call with its calls": (_SUMMED, None),
           "ridge tokens": (_FIXED, None)}   # (why slower, why faster; None: caches)


def _least(roof, flops: float, nbytes: float) -> float:
    return float(roof.time(flops, nbytes))


def _weights(cfg, per: int = 4) -> int:
    """Bytes of every parameter once (``per`` bytes each): what one forward call must read at least."""
    return per * cfg.n_params()


def _per_token(cfg, seq: int) -> float:
    from ..gpt import forward_flops
    return forward_flops(cfg, 1, seq)["total"] / seq


# --- Problem 1: one call at a few tokens ---------------------------------------------------------------------

def eager_call(cfg, batch: int, seq: int, dev, fixed_cost: float = None) -> Prose:
    """FLOPs per token of ``cfg`` (and GPT-2 small) at ``seq`` tokens, and the least time of one float32 call on
    ``batch`` x ``seq`` tokens: the largest of its FLOPs at the peak, its weights read once and, given
    ``fixed_cost``, the fixed cost of each of its operator calls (:func:`brrr.gpt.operator_calls`)."""
    from ..gpt import GPT2_SMALL, forward_flops, operator_calls
    (here, ref), d, n = roofs(dev), cfg.d_model, batch * seq
    parts = forward_flops(cfg, 1, seq)
    per_token, flops, nbytes = parts["total"] / seq, forward_flops(cfg, batch, seq)["total"], _weights(cfg)
    t, regime = _least(here, flops, nbytes), here.regime(flops, nbytes)
    roof_t, roof_regime = t, regime
    calls = operator_calls(cfg, batch, seq) if fixed_cost is not None else None
    if calls is not None and calls * fixed_cost >= t:
        t, regime = calls * fixed_cost, "overhead-bound"
    text = (f"Per token, each block's four weight matrices do 24·d² = {w.integer(24 * d * d)} FLOPs, attention "
            f"4·T·d = {w.integer(4 * seq * d)} at T = {seq}, and the head 2·d·V = {w.integer(2 * d * cfg.vocab)}: "
            f"with {cfg.n_layer} blocks, **{w.integer(per_token)} FLOPs per token**, "
            f"{w.number(per_token / cfg.n_params())} times the {w.integer(cfg.n_params())} parameters (each weight "
            f"does one multiply-add per token; the position table does none). ")
    if cfg != GPT2_SMALL:
        text += (f"GPT-2 small does {w.integer(_per_token(GPT2_SMALL, seq))} per token at the same T, "
                 f"{w.times(_per_token(GPT2_SMALL, seq) / per_token)} as many. ")
    text += (f"\n\nA call on {batch} × {seq} = {w.integer(n)} tokens does {w.integer(flops)} FLOPs: "
             f"{w.seconds(here.t_math(flops))} at this device's FP32 peak, {w.rate(here.peak_flops)} ({_whence(dev)}). "
             f"But it must also read every weight once, {w.integer(cfg.n_params())} × 4 bytes = {w.size(nbytes)}: "
             f"{w.seconds(here.t_mem(nbytes))} at {w.rate(here.peak_bandwidth, 'B/s')}"
             + (f". And it is {w.integer(calls)} operator calls, each paying a fixed cost of "
                f"{w.seconds(fixed_cost)} on this device: {w.seconds(calls * fixed_cost)}" if calls is not None else "")
             + f". The call is **{regime}**, at least **{w.seconds(t)}**, or {w.seconds(t / n)} per token"
             + (": at this few tokens the fixed cost of issuing its operators, not their work, sets the time."
                if regime == "overhead-bound" else
                ": at this few tokens the weights, not the arithmetic, set the time." if regime == "memory-bound"
                else ": on this device even this few tokens give the weights enough work.")
             + f"\n\nOn the reference {ref.name} (FP32 peak {w.rate(ref.peak_flops)}, "
             f"{w.rate(ref.peak_bandwidth, 'B/s')}) the same call is {ref.regime(flops, nbytes)}, at least "
             f"{w.seconds(_least(ref, flops, nbytes))}")
    if cfg != GPT2_SMALL:
        big_flops, big_bytes = forward_flops(GPT2_SMALL, batch, seq)["total"], _weights(GPT2_SMALL)
        text += (f"; GPT-2 small, the model this chapter runs on a GPU, reads {w.size(big_bytes)} of weights and is "
                 f"{ref.regime(big_flops, big_bytes)} there, at least {w.seconds(_least(ref, big_flops, big_bytes))}")
    text += ". " + w.no_reference("this model's forward calls", None)
    reasons = REASONS["gpt call" if calls is None else "gpt call with its calls"]
    return Prose(text, {"problem": "gpt call", "reasons": reasons, "seconds": t, "flops": flops,
                        "flops_per_token": per_token, "nbytes": nbytes, "cache_bytes": dev.l2_bytes,
                        "regime": regime, "tokens": n, "roofline_seconds": roof_t, "roofline_regime": roof_regime,
                        "calls": calls})


# --- Problem 2: the model's ridge in tokens --------------------------------------------------------------------

def ridge_tokens(cfg, seq: int, dev) -> Prose:
    """How many tokens per float32 call (whole sequences of ``seq`` tokens) make the math time of the decoder
    ``cfg`` equal the time to read its weights once, and the least time of a call on that many."""
    from ..gpt import forward_flops
    from ..specs import GPU_SPECS
    here, ref = roofs(dev)
    per_token, nbytes = _per_token(cfg, seq), _weights(cfg)
    n_star = nbytes * here.ridge / per_token   # n x per_token / peak = bytes / bandwidth
    batch = max(2, math.ceil(n_star / seq))
    flops = forward_flops(cfg, batch, seq)["total"]
    t, t_few = _least(here, flops, nbytes), _least(here, forward_flops(cfg, 1, seq)["total"], nbytes)
    bf16 = GPU_SPECS[REFERENCE].bf16_tensor / ref.peak_bandwidth
    n_ref, n_bf16 = nbytes * ref.ridge / per_token, _weights(cfg, 2) * bf16 / per_token
    text = (f"The math time grows with the tokens, n × {w.integer(per_token)} FLOPs / peak; the time to read the "
            f"weights, {w.size(nbytes)} / bandwidth, does not. They are equal at n = weight bytes × ridge / FLOPs "
            f"per token. Each weight does 2 FLOPs per token and takes 4 bytes, so n ≈ 4 × ridge / 2 = 2 × ridge. "
            f"Here the ridge is {w.number(here.ridge)} FLOP/byte, so about {w.number(2 * here.ridge)} tokens; the "
            f"exact count (the head, attention, the position table) gives **n = {w.number(n_star)} tokens**. ")
    if n_star > seq:
        text += (f"In whole sequences of {seq} tokens that is **{batch} sequences, {w.integer(batch * seq)} "
                 f"tokens**, ")
    else:
        text += (f"One sequence of {seq} tokens already has that many, so the call on it is past the ridge; "
                 f"take the smallest batch beyond it, **{batch} sequences, {w.integer(batch * seq)} tokens**, ")
    text += (f"{w.integer(flops)} FLOPs: the call is {here.regime(flops, nbytes)}, at least **{w.seconds(t)}**, "
             f"{w.times(t / t_few)} the least time of a call on one sequence, for {batch} times the tokens."
             + _bf16_here(dev, cfg, per_token, here.peak_bandwidth)
             + f"\n\nOn the reference {ref.name} in FP32 (ridge {w.number(ref.ridge)}) the same model needs "
             f"{w.number(n_ref)} tokens; in bfloat16 on its tensor cores (ridge {w.number(bf16)}, 2 bytes per "
             f"weight) {w.number(n_bf16)}: the faster the arithmetic, the more tokens a call needs before its "
             "weights stop setting its time.")
    return Prose(text, {"problem": "ridge tokens", "reasons": REASONS["ridge tokens"], "seconds": t,
                        "batch": batch, "seq": seq, "tokens": batch * seq, "n_star": n_star, "flops": flops,
                        "nbytes": nbytes, "cache_bytes": dev.l2_bytes, "few_seconds": t_few})


def _bf16_here(dev, cfg, per_token: float, bandwidth: float) -> str:
    """The same count in bfloat16 on this device's tensor cores, where it has them (a GPU with a spec)."""
    has = getattr(dev, "has_tensor_cores", None)
    if not getattr(dev, "on_gpu", False) or has is None or not has("bfloat16"):
        return ""
    ridge = dev.peak_flops("bfloat16", tensor_cores=True) / bandwidth
    return (f" In bfloat16 on this device's tensor cores (ridge {w.number(ridge)}, 2 bytes per weight) it needs "
            f"{w.number(_weights(cfg, 2) * ridge / per_token)} tokens.")


@needs_measurements
def tokens_check(measured, answer: Prose, few=None, what: str = "The measurement") -> Prose:
    """:func:`.worked.check` of a call on the answer's tokens, then, given ``few`` (a call on one sequence),
    how its time grew for ``batch`` times the tokens."""
    verdict = check(measured, answer, what)
    if few is None:
        return verdict
    batch, growth = answer.facts["batch"], _s(measured) / _s(few)
    text = f" Against the call on one sequence, {w.seconds(_s(few))}, "
    if growth < 1 - w.SAME:
        outcome, text = "flat", text + (f"it took less time for {batch} times the tokens, which no cost model allows: "
                                        "the two calls were timed apart, and at least one of the two times is off by "
                                        "more than their difference.")
    elif growth <= 1 + w.SAME:
        outcome, text = "flat", text + (f"it took about as long for {batch} times the tokens: per token, "
                                        f"{w.times(batch / growth)} cheaper, as the roofline says below the ridge.")
    elif growth < batch / (1 + w.SAME):
        outcome, text = "less than the tokens", text + (
            f"it took {w.times(growth)} as long for {batch} times the tokens: per token, "
            f"{w.times(batch / growth)} cheaper.")
    else:
        outcome, text = "as the tokens", text + (
            f"it took {w.times(growth)} as long for {batch} times the tokens: no cheaper per token.")
    return Prose(str(verdict) + text, {**verdict.facts, "growth": growth, "growth_outcome": outcome})


# --- Problem 5: attention's share --------------------------------------------------------------------------------

def _softmax_flops() -> int:
    from ..profiler.counting import PER_ELEMENT_FLOPS
    return PER_ELEMENT_FLOPS["_softmax"]


def _attention_roofs(cfg, batch: int, seq: int, roof) -> tuple:
    """(least time of the hand-written attention's core, of the weight matmuls and head) of one float32 pass by
    ``roof``: Q·Kᵀ, scale, mask, softmax, scores·V and the four copies of the heads, each tensor read and
    written once."""
    from .worked_networks import linear
    d, n, scores = cfg.d_model, batch * seq, batch * cfg.n_head * seq * seq
    bmm = (2 * n * seq * d, 4 * (2 * n * d + scores))           # Q·Kᵀ, and scores·V: the same counts
    passes = [(f * scores, 8 * scores) for f in (1, 1, _softmax_flops())]   # scale, mask, softmax
    copies = [(0, 8 * n * d)] * 4
    core = cfg.n_layer * sum(_least(roof, *op) for op in [bmm, bmm] + passes + copies)
    mats = [linear(n, d, 3 * d), linear(n, d, d), linear(n, d, 4 * d), linear(n, 4 * d, d)]
    head = (2 * n * d * cfg.vocab, 4 * (n * d + d * cfg.vocab + n * cfg.vocab))
    return core, cfg.n_layer * sum(_least(roof, *op) for op in mats) + _least(roof, *head)


def attention_share(cfg, batch: int, seq: int, dev) -> Prose:
    """Attention's share of the FLOPs of ``cfg`` on ``batch`` x ``seq`` tokens and of GPT-2 small at 1,024, where
    it passes half a block (T = 6d), and the roofline's share of time of the attention core."""
    from ..gpt import GPT2_SMALL, forward_flops
    here, ref = roofs(dev)
    d, f, big = cfg.d_model, forward_flops(cfg, batch, seq), forward_flops(GPT2_SMALL, 1, GPT2_SMALL.context)
    share, block, big_share = f["attention"] / f["total"], seq / (6 * d + seq), big["attention"] / big["total"]
    core, mats = _attention_roofs(cfg, batch, seq, here)
    ref_core, ref_mats = _attention_roofs(GPT2_SMALL, 1, GPT2_SMALL.context, ref)
    time_share, ref_share = core / (core + mats), ref_core / (ref_core + ref_mats)
    same_core, same_mats = _attention_roofs(cfg, batch, seq, ref)
    same_share = same_core / (same_core + same_mats)
    big_block, softmax = GPT2_SMALL.context / (6 * GPT2_SMALL.d_model + GPT2_SMALL.context), _softmax_flops()
    text = (f"Per token and block, attention does 4·T·d FLOPs and the weight matrices 24·d²: attention's share of "
            f"a block is T / (6d + T), and it passes half at **T = 6d**, {w.integer(6 * d)} tokens for this model "
            f"(d = {d}"
            + (f"; longer than this model's context of {w.integer(cfg.context)} tokens" if 6 * d > cfg.context else "")
            + ")" + (f", {w.integer(6 * GPT2_SMALL.d_model)} for GPT-2 small" if d != GPT2_SMALL.d_model else "")
            + f". At T = {seq} it is {w.percent(block)} "
            f"of each block, and with the head, **{w.percent(share)} of the pass's FLOPs**. GPT-2 small at "
            f"{w.integer(GPT2_SMALL.context)} tokens: {w.percent(big_block)} of each block, {w.percent(big_share)} "
            f"of the pass.\n\nTime is another matter. The scale, the mask and softmax each read and write the "
            f"{cfg.n_head} × {seq} × {seq} scores of every sequence with a few FLOPs per element (softmax, the "
            f"most, {softmax}/8 FLOP/byte, against this device's ridge of {w.number(here.ridge)}), and the two "
            f"attention matmuls are narrow: Q·Kᵀ sums over only {d // cfg.n_head} elements (the head dimension) "
            f"for each score, and the product of the scores with V gives only {d // cfg.n_head} columns per head. "
            f"Counting the least time of those operators and of the four copies that split and join the heads "
            f"against that of the weight matrices and the head (leaving out the LayerNorms, GELU and adds), the "
            f"roofline gives attention **{w.percent(time_share)} of the time**, against {w.percent(share)} of the "
            f"FLOPs.\n\nOn the reference {ref.name} in FP32, this model at the same {batch} × {seq} tokens: "
            f"{w.percent(same_share)} of the time; GPT-2 small at "
            f"{w.integer(GPT2_SMALL.context)} tokens: {w.percent(ref_share)} of the time for {w.percent(big_share)} "
            "of the FLOPs. This is the time FlashAttention goes after: it never writes the scores to memory "
            "(Dao et al., 2022).")
    return Prose(text, {"problem": "attention", "flop_share": share, "time_share": time_share,
                        "block_share": block, "gpt2_share": big_share, "reference_time_share": ref_share,
                        "reference_same_share": same_share,
                        "crossover": 6 * d})


def attention_rows(table):
    """(attention core, weight matmuls) masks of a :func:`brrr.profile` table of :class:`brrr.gpt.GPT`: the
    operators of the hand-written attention (module ``...attn`` itself, not its projections), and every other
    matmul."""
    core = table["module"].astype(str).str.endswith(".attn")
    return core, (table["category"] == "matmul") & ~core


def attention_check(table, answer: Prose) -> Prose:
    """Attention's measured FLOP and time shares in a profile table (None: none ran) against the answer's."""
    f = answer.facts
    if table is None:
        return Prose("No profile of the hand-written attention ran at this size (it ran out of memory), so there "
                     "is no measurement to check the prediction against.", {"outcome": "no profile"})
    core, mats = attention_rows(table)
    counted = float(table["flops"][core].sum()) / float(table["flops"].sum())
    t_core, t_mats, t_all = (float(table["seconds"][m].sum()) for m in (core, mats, core | ~core))
    measured = t_core / (t_core + t_mats)
    losers, eff = [], {}    # the attention operators that lost the most time beyond their roofline time
    if "roofline_seconds" in table and core.any():
        by_op = table[core].groupby("op")[["seconds", "roofline_seconds"]].sum()
        by_op["lost"] = by_op.seconds - by_op.roofline_seconds
        for op, row in by_op[by_op.lost > 0].sort_values("lost", ascending=False).head(3).iterrows():
            losers.append(f"`{op}` ({w.seconds(row.lost)}, at {w.percent(row.roofline_seconds / row.seconds)} of its "
                          "roofline speed)")
        for name, m in (("core", core), ("mats", mats)):
            got = float(table["seconds"][m].sum())
            eff[name] = float(table["roofline_seconds"][m].sum()) / got if got > 0 else math.nan
    text = (f"The profiler counted {w.percent(counted)} of the pass's FLOPs in attention's own operators, "
            + ("as the formula says" if abs(counted / f["flop_share"] - 1) <= w.SAME else
               f"against the formula's {w.percent(f['flop_share'])}: the profiler counts the scale, mask and softmax "
               "too, and the formula leaves out the LayerNorms and GELU")
            + f". Against the weight matmuls and the head, as the roofline counted, they took "
            f"{w.percent(measured)} of the replayed time "
            f"({w.percent(t_core / t_all)} of the whole profile's), ")
    outcome = ("as predicted" if abs(measured / f["time_share"] - 1) <= WITHIN else
               "more" if measured > f["time_share"] else "less")
    text += {"as predicted": "close to", "more": "more than", "less": "less than"}[outcome]
    text += f" the roofline's {w.percent(f['time_share'])}"
    if outcome != "as predicted" and eff:
        text += (f": attention's operators ran at {w.percent(eff['core'])} of their roofline speed, the weight "
                 f"matmuls and the head at {w.percent(eff['mats'])}")
        text += f". The most time beyond their roofs went to {w.listing(losers)}" if losers and outcome == "more" else ""
    text += "." + (" Attention took more of the time than of the FLOPs." if measured > counted else
                   " Attention took no more of the time than of the FLOPs here.")
    return Prose(text, {"outcome": outcome, "time_share": measured, "flop_share": counted,
                        "profile_share": t_core / t_all})


# --- Problem 7: the floor of a decode step -----------------------------------------------------------------------

def decode_floor(cfg, dev) -> Prose:
    """The least time of one decode step of ``cfg``, its weights in the decode sweep's type
    (:func:`brrr.experiments.capstone_decode.weights_dtype`): every weight read once at the DRAM bandwidth
    (:func:`brrr.decode.call_counts`), here and on the reference GPU, whatever the batch."""
    from ..arrays import itemsize as bytes_per
    from ..decode import call_counts
    from ..experiments.capstone_decode import weights_dtype
    here, ref = roofs(dev)
    dtype = weights_dtype(dev)
    itemsize = bytes_per(dtype)
    nbytes = call_counts(cfg, 1, 1, 1, itemsize)["weight_bytes"]
    ref_bytes = call_counts(cfg, 1, 1, 1, bytes_per("bfloat16"))["weight_bytes"]   # as the sweep runs it there
    t, t_ref = here.t_mem(nbytes), ref.t_mem(ref_bytes)
    text = (f"Apart from the position table, of which a step reads one row, the model has "
            f"{w.integer(nbytes // itemsize)} weights; in {dtype}, {itemsize} bytes each, that is {w.size(nbytes)}. "
            f"At this device's {w.rate(here.peak_bandwidth, 'B/s')} ({_whence(dev)}) reading them takes "
            f"**{w.seconds(t)} per step**, whatever the batch: at most {w.integer(1 / t)} tokens per second at batch 1, and "
            f"a batch of 16 gets 16 tokens for the same read, up to {w.integer(16 / t)} per second. "
            f"On the reference {ref.name} ({w.rate(ref.peak_bandwidth, 'B/s')}), in bfloat16: {w.seconds(t_ref)}.")
    return Prose(text, {"problem": "decode floor", "seconds": float(t), "nbytes": nbytes, "itemsize": itemsize})


# --- Problem 8: the least time of a training step ---------------------------------------------------------------

_TRAIN = ("the bound counts only the matmuls at the peak, while a step also runs the loss, LayerNorm, the "
          "optimizer's update and elementwise work, each at its own roof, and its matmuls fall short of the peak; "
          "the table above splits the step's time by what its kernels do")
REASONS["train floor"] = (_TRAIN, "a step cannot beat its own FLOPs at the peak: the count or the peak is "
                           "wrong, or the clock stopped before the device finished")


def train_floor(cfg, batch: int, seq: int, dev) -> Prose:
    """The least time of one training step of ``cfg`` on ``batch`` x ``seq`` tokens: its FLOPs
    (:func:`brrr.gpt.train_flops`, 6·N per token plus attention) at the one peak the chapter's MFU is
    against (:func:`brrr.mfu.table_peak`), and the tokens per second that allows; on the reference GPU too."""
    from ..experiments.capstone_decode import weights_dtype      # the 16-bit type by the spec, so replays work
    from ..gpt import GPT2_SMALL, train_flops
    from ..mfu import table_peak
    from ..specs import GPU_SPECS
    f = train_flops(cfg, batch, seq)
    weights = (f["linear"] + f["head"]) // (6 * batch * seq)     # the weights the matmuls use
    low = weights_dtype(dev) if dev.on_gpu else "bfloat16"        # the autocast configurations' type
    peak = table_peak(dev, low)
    t = f["total"] / peak["flops"]
    ref = GPU_SPECS[REFERENCE]
    small = train_flops(GPT2_SMALL, 8, 1024)["total"]
    text = (f"A step does the forward pass once and the backward pass, two matmuls for each of the forward's, so "
            f"three times the forward's FLOPs: 6 per token for each of the {w.integer(weights)} weights "
            f"the matmuls use, plus attention's, **{w.integer(f['total'])} FLOPs** for {w.integer(batch * seq)} "
            f"tokens. At {peak['name']}, {w.rate(peak['flops'])}, that takes at least **{w.seconds(t)}**, at most "
            f"{w.integer(batch * seq / t)} tokens per second. "
            f"GPT-2 small on 8 × 1,024 tokens on the reference {ref.name}'s bfloat16 tensor cores "
            f"({w.rate(ref.bf16_tensor)}): {w.seconds(small / ref.bf16_tensor)} per step.")
    if low not in peak["dtypes"]:
        text += (f" The peak here bounds {w.listing(peak['dtypes'])} arithmetic only, not {low} (Chapter 1), so "
                 f"the bound holds for the {w.listing(peak['dtypes'])} configuration alone.")
    return Prose(text, {"problem": "train floor", "reasons": REASONS["train floor"], "seconds": t, "flops": f["total"],
                        "tokens": batch * seq, "peak": peak["flops"], "dtypes": list(peak["dtypes"])})


def train_check(result, answer: Prose) -> Prose:
    """The fastest training configuration of ``result`` (``capstone_train``) whose dtype the answer's peak bounds,
    checked against the answer's least time (:func:`.worked.check`)."""
    from ..experiments.capstone_train import measured
    bounded = [r for r in measured(result) if r.get("dtype") in answer.facts.get("dtypes", ())] if result else []
    if not bounded:
        return Prose("No training configuration that this bound holds for ran here.", {"outcome": "no step"})
    fastest = min(bounded, key=lambda r: r["seconds"])
    return check(fastest["seconds"], answer, f"The fastest step it bounds ({fastest['label']})")
