"""The third worked problem of each of Chapters 4 to 7, as in :mod:`.worked_networks`; single times are checked
by :func:`.worked.check` (this module's ``REASONS`` travel in the answers' ``reasons`` fact)."""
from __future__ import annotations

import math

from . import Prose, needs_measurements
from . import words as w
from . import worked
from .worked import NEAR_ROOF, WITHIN, _s, _shaky, roofs
from .worked_networks import _few_samples, convolutions, ops, within

check = worked.check   # the check the chapters call from here

REASONS = {  # problem: (why slower, why faster; None: the caches, or the CPU's peak was beaten)
    "fma chain": ("the peak counts a fused multiply-add as one instruction, while brrr's CPU kernels keep the "
                  "multiply and the add apart (to round as NumPy does), which costs up to half the peak", None),
    "ffma chain": ("the peak assumes an FMA on every unit on every cycle at the highest boost clock; Nsight Compute "
                   "shows this kernel's share of FMAs and its clock", None),
}
_SOFTMAX = ("a softmax passes over each row more than once (its maximum, the sum of its exponentials, the "
            "division) where the count has one read and one write")


def _softmax_reasons(t: float, fixed_cost=None, replay_floor=None) -> tuple:
    """Why a softmax takes longer than its least time ``t``: its passes over each row and what each call (or,
    given ``replay_floor``, each replayed row) pays besides, named only where it is at least
    :data:`.worked.FIXED_MATTERS` of ``t``."""
    cost, name = (replay_floor, "the replay floor") if replay_floor is not None else (fixed_cost, "a fixed cost")
    if cost is None:
        return _SOFTMAX + "; each call also pays a fixed cost (Chapter 3)", None
    measured = f"{w.seconds(cost)} as this page measured it"
    if cost >= worked.FIXED_MATTERS * t:
        who = "a replayed row" if replay_floor is not None else "a call this short"
        return f"{_SOFTMAX}; {who} also pays {name} ({measured}, {w.percent(cost / t)} of the least time)", None
    return f"{_SOFTMAX} ({name}, {measured}, is only {w.percent(cost / t)} of even the least time)", None


def _bound(roof, flops: float, nbytes: float) -> float:
    return float(roof.time(flops, nbytes))


def _shipped(what: str, experiment: str, **match) -> str:
    """The reference GPU run's time of ``experiment``'s record with the fields ``match``, or that none ships."""
    found = worked.reference_seconds(experiment, **match)
    return (w.no_reference(what, None) if found is None else f"The book's reference run on an "
            f"{w.device_of(found[1])} ({w.date_of(found[1])}) took {w.seconds(found[0])} for {what}.")


# --- Chapter 4: a multiply-add per link ------------------------------------------------------------

def _reference_mul_chain() -> str:
    """What the shipped reference GPU run says of its longest fused chain of multiplications, or that none ships."""
    from ..reference import load
    text = w.no_reference("multiply-add chains", None)
    for run in load("pointwise_repeat_sweep"):
        fused = [r for r in run.records if r.get("variant") == "fused" and r.get("op") == "mul"]
        if fused:
            rec, roof = max(fused, key=lambda r: r["repeat"]), _roofs_of(run)
            bound = _bound(roof, rec["flops"], rec["nbytes"])
            return (f"{text} The book's reference run on an {w.device_of(run)} ({w.date_of(run)}) has chains of "
                    f"multiplications: its fused chain of {w.integer(rec['repeat'])} on {w.integer(rec['n'])} "
                    f"elements took {w.seconds(rec['seconds'])}, {w.times(rec['seconds'] / bound)} the roofline's "
                    f"{w.seconds(bound)} at the full peak, which counts two FLOPs an instruction where a "
                    "multiplication is one.")
    return text


def _roofs_of(run):
    """The float32 roofline of a shipped run's device (its saved peaks)."""
    from ..roofline import Roofline
    device = run.meta.get("device") or {}
    return Roofline(peak_flops=device["peak_flops_float32"], peak_bandwidth=device["peak_bandwidth"],
                    name=device.get("name"))


def fma_cap(n: int, dev) -> Prose:
    """The length at which a fused chain of float32 multiply-adds (2 FLOPs a link) becomes compute-bound
    (4 x ridge), and the least time of a chain twice that long on ``n`` elements: its FLOPs at the peak."""
    here, ref = roofs(dev)
    k_cap, k_ref = (max(1, math.ceil(4 * r.ridge)) for r in (here, ref))
    k = 2 * k_cap
    flops = 2 * k * n
    t = _bound(here, flops, 8 * n)   # compute-bound here: k is twice this device's cap
    t_ref = _bound(ref, flops, 8 * n)
    if k < k_ref:
        there = (f"the same chain is still memory-bound there (k = {w.integer(k)} is below {w.integer(k_ref)}) "
                 f"and takes at least {w.seconds(t_ref)}, set by its bytes, not its FLOPs. ")
    else:
        there = f"the same chain takes at least {w.seconds(t_ref)}, set by its FLOPs. "
    text = (f"A multiply-add is two FLOPs, so the fused chain does 2k FLOPs on the same 8 bytes per element: "
            f"2k/8 = k/4 FLOP/byte. It reaches this device's ridge of {w.number(here.ridge)} at k = 4 × ridge, "
            f"about **k = {w.integer(k_cap)}**: half the length of a chain of multiplications, since each link "
            f"does twice the work. At k = {w.integer(k)} the chain does 2 × {w.integer(k)} × {w.integer(n)} = "
            f"{w.integer(flops)} FLOPs, which take at least **{w.seconds(t)}** at the peak.\n\nOn the reference "
            f"{ref.name} (ridge {w.number(ref.ridge)}) the cap is at k = {w.integer(k_ref)}, and " + there
            + _reference_mul_chain())
    reasons = REASONS["ffma chain" if dev.on_gpu else "fma chain"]   # op="ffma": one FFMA a link on a GPU only
    return Prose(text, {"problem": "fma chain", "reasons": reasons, "seconds": t, "k": k,
                        "k_cap": k_cap, "nbytes": 8 * n, "cache_bytes": dev.l2_bytes})


# --- Chapter 5: checkpointing a memory-bound chain --------------------------------------------------------

def chain_checkpoint(k: int, n: int, dev) -> Prose:
    """Memory and step-time ratio of checkpointing a chain of ``k`` float32 GELUs on ``n`` elements whole."""
    from ..profiler.counting import PER_ELEMENT_FLOPS
    here, ref = roofs(dev)
    fwd, bwd = PER_ELEMENT_FLOPS["gelu"], PER_ELEMENT_FLOPS["gelu_backward"]
    passes = {"forward": (fwd * n, 8 * n), "backward": (bwd * n, 12 * n)}   # per GELU: (FLOPs, bytes)

    def step(r):   # (plain step, checkpointed step): k of each pass, and k - 1 more forward passes (early stop)
        f, b = (_bound(r, *passes[p]) for p in ("forward", "backward"))
        return k * (f + b), k * (f + b) + (k - 1) * f
    (t, t_ck), (r_t, r_ck) = step(here), step(ref)
    regimes = {p: here.regime(*op) for p, op in passes.items()}
    memory_bound = set(regimes.values()) == {"memory-bound"}
    flop_ratio = ((2 * k - 1) * fwd + k * bwd) / (k * (fwd + bwd))
    byte_ratio = ((2 * k - 1) * 8 + k * 12) / (k * 20)
    text = (f"Plainly, each GELU saves its input for its derivative: {k} arrays of {w.size(4 * n)}, "
            f"{w.size(4 * k * n)}. Checkpointed whole, the chain keeps its input alone, {w.size(4 * n)}: "
            f"{w.spelled(k)} times less.\n\nThe price is one more forward pass of the chain, less its last GELU: "
            "PyTorch's checkpoint (`use_reentrant=False`) stops recomputing as soon as every tensor the backward "
            f"pass needs exists again, and the last GELU's output is saved by nothing, so {k - 1} GELUs run again. "
            f"By FLOPs (brrr counts {fwd} a GELU and {bwd} its derivative, per element) a step would take "
            f"({2 * k - 1} × {fwd} + {k} × {bwd}) / ({k} × ({fwd} + {bwd})) = {w.number(flop_ratio)} times as long. "
            "But a forward pass moves 8 bytes per element "
            f"and a backward pass 12 (the gradient and the saved input in, the gradient out): "
            f"{w.number(fwd / 8)} and {w.number(bwd / 12)} FLOP/byte, against this device's ridge of "
            f"{w.number(here.ridge)}: "
            + (f"both **memory-bound**, so the bytes set the time: ({2 * k - 1} × 8 + {k} × 12) / ({k} × 20) = "
               f"**{w.number(byte_ratio)}**, not {w.number(flop_ratio)}." if memory_bound else
               f"the forward pass {regimes['forward']}, the backward pass {regimes['backward']}, so the roofline "
               f"gives **{w.number(t_ck / t)}**.")
            + f" The plain step takes at least {w.seconds(t)} here, the checkpointed one {w.seconds(t_ck)}.\n\n"
            f"On the reference {ref.name} (ridge {w.number(ref.ridge)}): {w.seconds(r_t)} and {w.seconds(r_ck)}, "
            f"a ratio of {w.number(r_ck / r_t)}. " + w.no_reference("checkpointed GELU chains", None))
    return Prose(text, {"problem": "chain checkpoint", "ratio": t_ck / t, "flop_ratio": flop_ratio, "seconds": t, "k": k,
                        "backward_bytes": 12 / 8, "backward_flops": bwd / fwd,
                        "regimes": regimes, "kept": 4 * n, "plain": 4 * k * n})


@needs_measurements
def chain_checkpoint_check(plain, checkpointed, answer: Prose) -> Prose:
    """The step-time ratio (fastest samples, checkpointed / plain) against the answer's, by the time the
    recomputation added, and what it says of a backward pass's cost next to a forward's."""
    def fastest(t):
        return getattr(t, "min", t)
    f, ratio = answer.facts, fastest(checkpointed) / fastest(plain)
    share, extra, predicted = f["seconds"] / fastest(plain), ratio - 1, f["ratio"] - 1
    k = f.get("k", 4)
    text = f"Comparing the fastest samples, the checkpointed step took {w.times(ratio)} as long as the plain one: " + (
        f"the recomputation added {w.percent(extra)} to the step, " if extra >= 0 else "")
    if abs(extra / predicted - 1) <= WITHIN:
        outcome, text = "as predicted", text + (f"{within(abs(extra / predicted - 1))} of the roofline's "
                                                f"{w.percent(predicted)}.")
    elif extra > predicted:
        outcome, text = "dearer", text + (f"more than the roofline's {w.percent(predicted)}: something besides the "
                                          "bytes took the time; a profile of the two steps (Chapter 7) shows what.")
    elif extra >= 0:
        outcome, text = "cheaper", text + f"less than the roofline's {w.percent(predicted)}."
    else:
        outcome, text = "faster", text + ("less time, not more, which neither FLOPs nor bytes explain; time both "
                                          "steps again before reading more into it.")
    # plain = k (F + B), checkpointed = k (F + B) + (k - 1) F: B / F = (k - 1) / (k extra) - 1
    if 0 < extra < (k - 1) / k:
        text += (f" Read the other way, a GELU's backward pass cost {w.number((k - 1) / (k * extra) - 1)} times its "
                 f"forward pass, where the bytes give {w.number(f['backward_bytes'])} and the FLOPs "
                 f"{w.number(f['backward_flops'])}.")
    text += f" The plain step ran at {w.percent(share)} of the speed the roofline allows" + (
        "." if share >= NEAR_ROOF else ": far below it; a profile of the step (Chapter 7) shows where the time went.") + ("" if outcome == "as predicted" else _shaky(plain, checkpointed)) \
        + _few_samples(plain, checkpointed)
    return Prose(text, {"outcome": outcome, "ratio": ratio, "extra": extra, "share": share})


# --- Chapter 6: a depthwise-separable convolution -----------------------------------------------------------

def separable(M: int, S_o: int, S_k: int, dev) -> Prose:
    """A depthwise S_k x S_k convolution followed by a pointwise one (M channels, float32, batch 1) against the
    standard S_k x S_k convolution: the pointwise half's regime, and the speed-up the FLOPs and the roofline give."""
    from ..intensity_paper import conv_intensity
    here, ref = roofs(dev)
    named = convolutions(M, S_o, S_k)
    std, dw = named
    pw = conv_intensity("pointwise", M, M, S_o, 1)
    pw_name = "pointwise 1x1"
    named[pw_name] = (2 * pw.macs, 4 * (pw.weights + pw.activations))
    flop_ratio = named[std][0] / (named[dw][0] + named[pw_name][0])

    def least(r):
        return {name: _bound(r, *op) for name, op in named.items()}
    t, t_ref = least(here), least(ref)
    pair, pair_ref = t[dw] + t[pw_name], t_ref[dw] + t_ref[pw_name]
    flop_share = named[dw][0] / (named[dw][0] + named[pw_name][0])
    text = (str(ops({pw_name: named[pw_name]}, dev, "separable")) + f"\n\nThe pair does {w.number(flop_ratio)} "
            f"times fewer FLOPs than the standard {S_k}x{S_k} convolution, but the roofline makes it only "
            f"**{w.number(t[std] / pair)} times faster** here ({w.seconds(pair)} against {w.seconds(t[std])}): "
            f"the depthwise half, {w.percent(flop_share)} of the pair's FLOPs, takes "
            f"**{w.percent(t[dw] / pair)} of its least time**"
            + (", because it is memory-bound: its bytes, not its FLOPs, set its time." if
               here.regime(*named[dw]) == "memory-bound" else ", in proportion, as it is compute-bound here too.")
            + f"\n\nOn the reference {ref.name}: {w.number(t_ref[std] / pair_ref)} times "
            f"faster ({w.seconds(pair_ref)} against {w.seconds(t_ref[std])}), the depthwise half "
            f"{w.percent(t_ref[dw] / pair_ref)} of the time. "
            + _shipped("the pointwise convolution at this size", "measure_convs", kind="pointwise", M=M, N=M,
                       S_o=S_o, batch=1, dtype="float32"))
    return Prose(text, {"problem": "separable", "speedup": t[std] / pair, "flop_ratio": flop_ratio, "seconds": t,
                        "ops": named, "regimes": {name: here.regime(*op) for name, op in named.items()},
                        "depthwise_share": t[dw] / pair})


@needs_measurements
def separable_check(standard, depthwise, pointwise, answer: Prose) -> Prose:
    """The measured speed-up (seconds or Timings) of the depthwise-pointwise pair over the standard convolution,
    against the answer's, and how near each convolution came to the speed the roofline allows it."""
    f = answer.facts
    names = list(f["ops"])   # standard, depthwise, pointwise
    measured = dict(zip(names, (_s(standard), _s(depthwise), _s(pointwise))))
    pair = measured[names[1]] + measured[names[2]]
    speedup = measured[names[0]] / pair
    shares = {name: f["seconds"][name] / measured[name] for name in names}
    predicted = w.number(f["speedup"])
    outcome = ("as predicted" if abs(speedup / f["speedup"] - 1) <= WITHIN else
               "smaller" if speedup < f["speedup"] else "larger")
    text = (f"The pair took {w.seconds(pair)} against the standard convolution's {w.seconds(measured[names[0]])}: "
            + (f"{w.times(speedup)} faster, " if speedup >= 1 else f"{w.times(1 / speedup)} as long, no faster at "
               "all, ")
            + (f"{within(abs(speedup / f['speedup'] - 1))} of the roofline's {predicted}." if outcome == "as predicted"
               else f"where the roofline predicts {predicted} times faster." if speedup < 1 else
               f"{'less' if outcome == 'smaller' else 'more'} than the roofline's {predicted}."))
    text += (" Against the speed the roofline allows each, " + w.listing(
        f"`{name}` ran at {w.percent(shares[name])}" for name in names) + f"; the depthwise half took "
        f"{w.percent(measured[names[1]] / pair)} of the pair's time, where the roofline gave it "
        f"{w.percent(f['depthwise_share'])}.") + ("" if outcome == "as predicted" else
                                                  _shaky(standard, depthwise, pointwise))
    return Prose(text, {"outcome": outcome, "speedup": speedup, "shares": shares})


# --- Chapter 7: the softmax row of the profile ------------------------------------------------------------

def softmax_row(batch: int, heads: int, seq: int, dev, fixed_cost: float = None,
                replay_floor: float = None) -> Prose:
    """Regime and least time of the attention's float32 softmax over (batch, heads, seq, seq) scores, counted as
    brrr's profiler counts it (5 FLOPs per element, one read and one write). ``fixed_cost``: a call's, measured
    with the profile (overhead-bound where it is at least the least time, by the chapter's rule);
    ``replay_floor``: the profile's, which the check names for a replayed row (:func:`_softmax_reasons`)."""
    from ..profiler.counting import PER_ELEMENT_FLOPS
    here, ref = roofs(dev)
    elements = batch * heads * seq * seq
    per = PER_ELEMENT_FLOPS["_softmax"]
    flops, nbytes = per * elements, 8 * elements
    t, intensity = _bound(here, flops, nbytes), per / 8
    regime = here.regime(flops, nbytes)
    called = fixed_cost is not None and fixed_cost >= t
    text = (f"The scores are {batch} × {heads} × {seq} × {seq} = {w.integer(elements)} elements. The softmax reads "
            f"each once and writes each once, {w.size(nbytes)}, and brrr counts {per} FLOPs per element (the "
            f"maximum, a subtraction, an exponential, the sum, a division): {w.integer(flops)} FLOPs, "
            f"{w.number(intensity)} FLOP/byte. Against this device's ridge of {w.number(here.ridge)} it is "
            + (f"{regime} by its bytes and FLOPs, at least **{w.seconds(t)}** of work; but the fixed cost of a call "
               f"measured with the profile, {w.seconds(fixed_cost)}, is longer still, so by the chapter's rule the call is **overhead-bound**. "
               if called else f"**{regime}**, at least **{w.seconds(t)}**. ")
            + (f"At best it reaches {w.number(intensity)} × {w.rate(here.peak_bandwidth, 'B/s')} = "
               f"{w.rate(intensity * here.peak_bandwidth)}, {w.times(here.ridge / intensity)} fewer FLOP/s than the "
               "peak a large matmul can approach." if intensity < here.ridge else
               "A ridge this low is rare: even a softmax could run at the peak FLOP/s here.")
            + f" Its bytes grow with the square of the sequence: twice the "
            f"tokens, four times the bytes.\n\nOn the reference {ref.name} (ridge {w.number(ref.ridge)}): "
            f"{ref.regime(flops, nbytes)}, at least {w.seconds(_bound(ref, flops, nbytes))}, and "
            f"{w.times(ref.ridge / intensity)} fewer FLOP/s than its FP32 peak. " + _shipped("this softmax", "profile_bert", op="_softmax", nbytes=nbytes))
    reasons = _softmax_reasons(t, fixed_cost, replay_floor)
    return Prose(text, {"problem": "softmax", "reasons": reasons, "seconds": t, "flops": flops, "nbytes": nbytes,
                        "cache_bytes": dev.l2_bytes, "regime": "overhead-bound" if called else regime})
