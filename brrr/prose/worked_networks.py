"""Worked problems of Chapters 4 to 7, as in :mod:`.worked`, whose :func:`.worked.check` (with this module's
``REASONS`` as the answers' ``reasons`` fact) and :func:`.worked.two_ops_check` check them."""
from __future__ import annotations

import math

from . import Prose, needs_measurements
from . import words as w
from . import worked
from .worked import WITHIN, _s, _shaky, roofs
from ..units import format_si

check, two_ops_check = worked.check, worked.two_ops_check   # the checks the chapters call from here

REASONS = {  # problem: (why slower, why faster; None: the caches, or the CPU's peak was beaten)
    "fused chain": ("the peak counts a fused multiply-add as two FLOPs, and a chain of multiplications does one per "
                    "instruction, so it can reach at most half the peak", None),
    "ridge batch": ("the roofline's time is a bound; timing `x @ W` at a few larger batches (`brrr.bench`) shows "
                    "how near this shape gets to the peak at all", None),
    "linear": ("a matmul reaches a share of the peak that grows with its size, and pays a fixed cost per call "
               "(Chapter 3)", None),
}


def _bound(roof, flops: float, nbytes: float) -> float:
    return float(roof.time(flops, nbytes))


def _few_samples(*timings) -> str:
    """A sentence when the timer fit fewer samples of any of ``timings`` (Timings, or seconds: never) than it
    was asked for, whatever the outcome: a ratio of two such times is rough, however close it lands."""
    few = [t for t in timings if any(str(note).startswith("few samples") for note in getattr(t, "warnings", ()))]
    if not few:
        return ""
    n = min(len(t.samples) for t in few)
    return (f" The timer fit only {w.spelled(n)} sample{'s' if n > 1 else ''} of a step in its time budget, so "
            "this ratio is rough: time it again with a larger `budget` before reading more into it.")


# --- Chapter 4: fusion -------------------------------------------------------------------------------

def fusion_chain(k: int, n: int, dev) -> Prose:
    """A chain of ``k`` float32 multiplications on ``n`` elements, fused and unfused: bytes, least times, speed-up."""
    from ..kernel_source import traffic
    (here, ref), (b_unfused, flops), (b_fused, _) = (roofs(dev), traffic("chain", n, k, False, dtype="float32"),
                                                    traffic("chain", n, k, True, dtype="float32"))
    times = {r.name: (_bound(r, flops, b_unfused), _bound(r, flops, b_fused)) for r in (here, ref)}
    (t_u, t_f), (r_u, r_f) = times[here.name], times[ref.name]
    text = (f"Unfused, each of the {k} passes reads the array and writes a new one: 2 × {k} × {w.integer(n)} × 4 "
            f"= {w.size(b_unfused)}. Fused, the chain reads it once and writes it once: {w.size(b_fused)}, for the "
            f"same {w.integer(flops)} FLOPs. The fused kernel's intensity, {k}/8 = {w.number(k / 8)} FLOP/byte, is "
            f"{'below' if k / 8 < here.ridge else 'above'} this device's ridge of {w.number(here.ridge)}: "
            f"**{here.regime(flops, b_fused)}**. By the roofline the unfused chain takes at least {w.seconds(t_u)} "
            f"and the fused one {w.seconds(t_f)}: a speed-up of **{w.number(t_u / t_f)}**.\n\nOn the reference "
            f"{ref.name} (ridge {w.number(ref.ridge)}) the two take {w.seconds(r_u)} and {w.seconds(r_f)}, a "
            f"speed-up of {w.number(r_u / r_f)}" + (": the same, since both devices are memory-bound at this k."
                                                    if abs(r_u / r_f - t_u / t_f) < 0.01 else "."))
    return Prose(text, {"problem": "fusion", "k": k, "speedup": t_u / t_f, "fused": t_f, "unfused": t_u,
                        "nbytes": b_fused, "cache_bytes": dev.l2_bytes})


@needs_measurements
def speedup_check(fused, unfused, answer: Prose) -> Prose:
    """The measured speed-up (times or Timings: unfused / fused) against the predicted one, and which side moved."""
    f, speedup = answer.facts, _s(unfused) / _s(fused)
    eff_f, eff_u = f["fused"] / _s(fused), f["unfused"] / _s(unfused)   # shares of the roofline's speed
    text = f"Fusing made the chain of {f['k']} links {w.times(speedup)} faster, "
    outcome = ("as predicted" if abs(speedup / f["speedup"] - 1) <= WITHIN else
               "smaller" if speedup < f["speedup"] else "larger")
    if outcome == "as predicted":
        text += f"{within(abs(speedup / f['speedup'] - 1))} of the roofline's {w.number(f['speedup'])}."
    else:
        text += (f"{outcome} than the roofline's {w.number(f['speedup'])}, because the "   # ratio = eff_f / eff_u
                 f"{'fused kernel' if outcome == 'smaller' else 'unfused chain'} ran further below its roof: the "
                 f"fused kernel at {w.percent(eff_f)} of the speed the roofline allows, the unfused chain at "
                 f"{w.percent(eff_u)}.")
        if worked.fits_cache(f["nbytes"], f["cache_bytes"]):
            text += (f" The array, {w.size(f['nbytes'] / 2)}, fits at least in part in the caches, which make "
                     "passes cheaper than the bandwidth the prediction assumed.")
        text += _shaky(fused, unfused)
    backend = getattr(fused, "backend", None)   # a Timing knows where it ran; a bare time does not
    text += worked.beyond_roof({"the fused kernel": eff_f, "the unfused chain": eff_u},
                               {"the fused kernel": f["nbytes"], "the unfused chain": f["k"] * f["nbytes"]},
                               f["cache_bytes"], None if backend is None else backend == "cpu")
    return Prose(text, {"outcome": outcome, "speedup": speedup, "shares": {"fused": eff_f, "unfused": eff_u}})


def fusion_cap(n: int, dev) -> Prose:
    """The chain length at which a fused float32 multiplication chain becomes compute-bound (8 x ridge), and the
    least time of a fused chain twice that long: its FLOPs at the peak."""
    here, ref = roofs(dev)
    k_cap, k_ref = (max(1, math.ceil(8 * r.ridge)) for r in (here, ref))
    k = 2 * k_cap
    t = here.t_math(k * n)
    text = (f"The fused chain reads and writes 8 bytes per element whatever k is, and does k FLOPs on them: k/8 "
            f"FLOP/byte. It reaches this device's ridge of {w.number(here.ridge)} at k = 8 × ridge, about "
            f"**k = {w.integer(k_cap)}**; beyond it the arithmetic sets the time and fusing more stops paying. "
            f"At k = {w.integer(k)} the fused chain does {w.integer(k * n)} FLOPs, which take at least "
            f"**{w.seconds(t)}** at the peak, twice its time at k = {w.integer(k_cap)}.\n\nOn the reference "
            f"{ref.name} (ridge {w.number(ref.ridge)}) the cap is at k = {w.integer(k_ref)}: "
            + ("a device with more FLOPs per byte rewards longer chains." if k_ref > k_cap else
               "a device with fewer FLOPs per byte caps chains sooner."))
    return Prose(text, {"problem": "fused chain", "reasons": REASONS["fused chain"], "seconds": t, "k": k, "k_cap": k_cap, "nbytes": 8 * n,
                        "cache_bytes": dev.l2_bytes})


# --- Chapter 5: recomputation --------------------------------------------------------------------------

def saved_mlp(batch: int, width: int, dev) -> Prose:
    """Activation bytes autograd saves for ``Linear(width, 4 width), ReLU, Linear(4 width, width)`` on ``batch``
    rows, the input needing no gradient (``dev`` is not used: the count is the same on any device)."""
    x_bytes, hidden = 4 * batch * width, 16 * batch * width
    total = x_bytes + hidden
    text = (f"The first Linear saves its input x for its weight's gradient: {w.integer(batch)} × {w.integer(width)} "
            f"× 4 = {w.size(x_bytes)}. The ReLU saves its output, {w.integer(batch)} × {w.integer(4 * width)} × 4 = "
            f"{w.size(hidden)}, and the second Linear saves that same tensor as its input: one storage, counted "
            f"once. Its weight is saved too, but it is a parameter, in memory anyway. In all **{w.size(total)}** "
            f"of activations, {w.times(total / x_bytes)} the input.\n\nThe count is the same on any device: it "
            "depends only on the shapes and on what each operation saves.")
    return Prose(text, {"problem": "saved", "nbytes": total})


def saved_check(measured: int, answer: Prose) -> Prose:
    """The bytes ``saved_bytes`` counted against the answer's."""
    predicted, diff = answer.facts["nbytes"], measured - answer.facts["nbytes"]
    text = f"Autograd saved {w.size(measured)} of activations: "
    outcome = "as predicted" if diff == 0 else "more" if diff > 0 else "fewer"
    text += ("exactly the count, storage by storage." if diff == 0 else
             f"{w.size(abs(diff))} {outcome} than the {w.size(predicted)} counted; the table lists each storage.")
    return Prose(text, {"outcome": outcome, "difference": diff})


def _fp32_peak(dev) -> str:
    """Which float32 peak a worked problem's FLOP time is taken against."""
    if getattr(dev, "on_gpu", False):
        return ("this device's float32 peak without tensor cores (PyTorch leaves TF32 off for float32 matmuls "
                "by default)")
    return "this device's float32 peak"


def checkpoint_cost(block_bytes: float, input_bytes: float, layers: int, every: int, batch: int, width: int,
                    dev) -> Prose:
    """Memory at the backward's peak and step time of the chapter's stack, plain and checkpointed every ``every``,
    the step time from the FLOPs PyTorch's early-stopping checkpoint reruns."""
    from ..experiments.recompute_checkpoint import checkpoint_flop_ratio, checkpoint_model
    here, ref = roofs(dev)
    plain, kept = checkpoint_model(block_bytes, input_bytes, layers, 0), checkpoint_model(
        block_bytes, input_bytes, layers, every)
    flops = 3 * layers * 16 * batch * width ** 2   # two matmuls a block, 2 x batch x width x 4 width FLOPs each
    ratio = checkpoint_flop_ratio(layers, every)
    segments = math.ceil(layers / every)
    t, t_ref = here.t_math(flops), ref.t_math(flops)
    text = (f"Plainly, all {layers} blocks keep their activations, {layers} × {w.size(block_bytes)} = "
            f"{w.size(plain)}. With segments of {every}, the model keeps ⌈{layers}/{every}⌉ segment inputs of "
            f"{w.size(input_bytes)} and one segment of activations while it is recomputed: **{w.size(kept)}**, "
            f"{w.times(plain / kept)} less.\n\nThe price is at most one more forward pass. A step does about "
            f"{format_si(flops, 'FLOP')} (forward, and a backward of twice its FLOPs); rerunning the whole forward "
            f"pass would add a third, 4/3 in all (Chen et al.). PyTorch's checkpoint (`use_reentrant=False`) stops "
            "recomputing a segment as soon as every tensor its backward pass needs exists again, so it skips each "
            f"segment's last matmul, whose output nothing saves: {segments} of the {2 * layers} matmuls of the "
            f"forward pass are not rerun, and a checkpointed step should take 1 + (1 − {segments}/{2 * layers})/3 = "
            f"**{w.number(ratio)} times as long**. At {_fp32_peak(dev)} the plain step takes at least "
            f"{w.seconds(t)}, the checkpointed one {w.seconds(ratio * t)}; on the reference {ref.name} (float32 "
            f"without tensor cores, {w.rate(ref.peak_flops)}), {w.seconds(t_ref)} and {w.seconds(ratio * t_ref)}. The memory is the same on "
            "both.")
    return Prose(text, {"problem": "checkpoint", "ratio": ratio, "seconds": t, "kept": kept, "plain": plain})


def within(d: float) -> str:
    """'within 3%' for a relative difference ``d``, never finer than 1% (samples spread by more than that)."""
    return "within 1%" if d < 0.01 else f"within {w.percent(d)}"


@needs_measurements
def checkpoint_check(plain, checkpointed, answer: Prose) -> Prose:
    """The measured step-time ratio (times or Timings: checkpointed / plain) against the answer's FLOP ratio."""
    f, ratio = answer.facts, _s(checkpointed) / _s(plain)
    share = f["seconds"] / _s(plain)
    want = w.number(f["ratio"])
    text = f"The checkpointed step took {w.times(ratio)} as long as the plain one, "
    if abs(ratio / f["ratio"] - 1) <= WITHIN:
        outcome, text = "as predicted", text + f"{within(abs(ratio / f['ratio'] - 1))} of {want}."
    elif ratio > f["ratio"]:
        outcome, text = "dearer", text + (f"more than {want}; the sweep below sets the time against the FLOPs at "
                                          "every segment length.")
    elif ratio >= 1:
        outcome, text = "cheaper", text + (f"less than {want}: the recomputed matmuls cost less per FLOP than the "
                                           "rest of the step.")
    else:
        outcome, text = "faster", text + ("less time, not more, which no FLOP count explains; time both steps "
                                          "again, or see the sweep below, before reading more into it.")
    text += f" The plain step ran at {w.percent(share)} of the float32 peak the answer used." + (
        "" if outcome == "as predicted" else _shaky(plain, checkpointed)) + _few_samples(plain, checkpointed)
    return Prose(text, {"outcome": outcome, "ratio": ratio, "share": share})


# --- Chapters 6 and 7: layers on the roofline ------------------------------------------------------------

def ops(named: dict, dev, problem: str, fixed_cost: float = None) -> Prose:
    """Each of ``named`` ({name: (FLOPs, bytes)}): its intensity, regime and least time, here and on the
    reference GPU; overhead-bound where its least time is below ``fixed_cost`` (a call's, measured on the page)."""
    here, ref = roofs(dev)

    def part(name, flops, nbytes):
        least = _bound(here, flops, nbytes)
        text = (f"`{name}` does {w.integer(flops)} FLOPs on {w.size(nbytes)}, {w.number(flops / nbytes)} FLOP/byte: "
                f"**{here.regime(flops, nbytes)}** here by the roofline (ridge {w.number(here.ridge)}), at least "
                f"{w.seconds(least)}")
        if fixed_cost is not None and least < fixed_cost:
            text += (f", less than the fixed cost of a call measured on this page, {w.seconds(fixed_cost)}: by the "
                     "three-way rule the call is **overhead-bound**")
        return (text + f"; on the reference {ref.name} (ridge {w.number(ref.ridge)}) "
                f"{ref.regime(flops, nbytes)}, at least {w.seconds(_bound(ref, flops, nbytes))}.")

    parts = [part(name, flops, nbytes) for name, (flops, nbytes) in named.items()]
    return Prose("\n\n".join(parts), {"problem": problem, "regimes": {name: here.regime(*op) for name, op in
                                                                      named.items()}, "ops": dict(named)})


def convolutions(M: int, S_o: int, S_k: int) -> dict:
    """{name: (FLOPs, bytes)} of a standard and a depthwise float32 convolution, M channels in and out, batch 1."""
    from ..intensity_paper import conv_intensity
    layers = {name: conv_intensity(kind, M, M, S_o, S_k) for name, kind in
              ((f"standard {S_k}x{S_k}", "standard"), (f"depthwise {S_k}x{S_k}", "depthwise"))}
    return {name: (2 * c.macs, 4 * (c.weights + c.activations)) for name, c in layers.items()}


def linear(tokens: int, n_in: int, n_out: int) -> tuple:
    """(FLOPs, bytes) of a float32 ``Linear(n_in, n_out)`` on ``tokens`` rows: input, weights, bias and output once."""
    return 2 * tokens * n_in * n_out, 4 * (tokens * n_in + n_in * n_out + n_out + tokens * n_out)


def ridge_batch(n: int, dev) -> Prose:
    """The smallest batch at which ``x @ W`` (W n x n, float32) reaches the ridge, and its least time there."""
    here, ref = roofs(dev)

    def batch(r):   # 2 B n^2 / (4 (2 B n + n^2)) >= ridge  <=>  B >= 2 ridge n / (n - 4 ridge)
        return math.ceil(2 * r.ridge * n / (n - 4 * r.ridge)) if n > 4 * r.ridge else None
    b, b_ref = batch(here), batch(ref)
    if b is None:
        raise ValueError(f"n = {n} is too small: x @ W never reaches this device's ridge; take n > "
                         f"{4 * here.ridge:.0f}")
    flops, nbytes = 2 * b * n * n, 4 * (2 * b * n + n * n)
    t = _bound(here, flops, nbytes)
    text = (f"On B rows, `x @ W` does 2Bn² FLOPs and moves 4(2Bn + n²) bytes, the weights once: an intensity of "
            f"about B/2 FLOP/byte while B is much smaller than n. It reaches this device's ridge of "
            f"{w.number(here.ridge)} FLOP/byte from **B = {w.integer(b)}**; there the roofline's two bounds meet, "
            f"{w.integer(flops)} FLOPs and {w.size(nbytes)} in **{w.seconds(t)}**, so the layer should run near the "
            f"peak FLOP/s.\n\nOn the reference {ref.name}, ridge {w.number(ref.ridge)}, "
            + (f"it takes B = {w.integer(b_ref)}: the faster the arithmetic, the more rows a layer needs to keep it "
               "busy." if b_ref is not None else "no batch is enough at this n."))
    return Prose(text, {"problem": "ridge batch", "reasons": REASONS["ridge batch"], "seconds": t, "batch": b, "reference_batch": b_ref,
                        "nbytes": nbytes, "cache_bytes": dev.l2_bytes})


def linear_time(tokens: int, n_in: int, n_out: int, dev) -> Prose:
    """Least time and regime of a float32 ``Linear(n_in, n_out)`` on ``tokens`` rows, here and on the reference."""
    here, ref = roofs(dev)
    flops, nbytes = linear(tokens, n_in, n_out)
    t = _bound(here, flops, nbytes)
    text = (f"`Linear({n_in}, {n_out})` on {w.integer(tokens)} tokens does 2 × {w.integer(tokens)} × {n_in} × "
            f"{n_out} = {w.integer(flops)} FLOPs and moves its input, weights, bias and output once: "
            f"{w.size(nbytes)}, {w.number(flops / nbytes)} FLOP/byte. Against this device's ridge of "
            f"{w.number(here.ridge)} that is **{here.regime(flops, nbytes)}**, with a least time of "
            f"**{w.seconds(t)}**.\n\nOn the reference {ref.name} (ridge {w.number(ref.ridge)}): "
            f"{ref.regime(flops, nbytes)}, "
            + worked._reference(t, _bound(ref, flops, nbytes)))
    return Prose(text, {"problem": "linear", "reasons": REASONS["linear"], "seconds": t, "nbytes": nbytes, "cache_bytes": dev.l2_bytes,
                        "regime": here.regime(flops, nbytes)})
