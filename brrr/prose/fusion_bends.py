"""Chapter 4, fusion: where each fuser's speed-up curve bends against the chain length at which the
fused kernel reaches the ridge, and ``torch.compile`` beside the hand-written kernels.
"""
from __future__ import annotations

import math

from . import Prose, paragraphs, with_references
from . import words as w
from .fusion_model import _ops
from .words import ABOVE_ROOF
from .fusion_speedups import (CEILING, _rate, _skipped, _speedup_sentence, curve, focus, fusers_of, levelled,
                              rate_trend, trend_words)

BEND_SLOPE = 0.8    # the curve "bends" where log(speed-up) grows less than 0.8 times as fast as log(k)
BARELY = 1.1        # a fused time that grew less than 10% over a step "barely grew"
MAIN = 2 / 3        # a side that made two thirds of a bend is its main cause


def own_crossover(c: dict):
    """The model's crossover (the dotted line) times the share of the peak its op can reach."""
    cross = c["crossover"]
    return cross * CEILING.get(c["op"], 1.0) if cross else cross


def bend(c: dict) -> dict:
    """Where a speed-up curve bends against :func:`own_crossover`: between the first point whose
    log-slope to the next point and to the longest chain are both below ``BEND_SLOPE``, and the next."""
    pts, cross = c["points"], own_crossover(c)

    def slope(a, b):
        return math.log(b["speedup"] / a["speedup"]) / math.log(b["k"] / a["k"])
    at = next(((a, b) for a, b in zip(pts, pts[1:]) if max(slope(a, b), slope(a, pts[-1])) < BEND_SLOPE), None)
    kmax = pts[-1]["k"] if pts else None
    outcome = ("too few points" if len(pts) < 2 else
               ("no bend, sweep short" if kmax <= cross else "no bend past the line") if at is None else
               "before" if at[1]["k"] <= cross else "after" if at[0]["k"] >= cross else "at")
    return {"outcome": outcome, "between": (at[0]["k"], at[1]["k"]) if at else None, "crossover": cross,
            "model_crossover": c["crossover"], "kmax": kmax,
            **(_cause(*at) if at else dict.fromkeys(("fused_growth", "unfused_growth", "fused_share", "cause")))}


def _cause(a: dict, b: dict) -> dict:
    """Which side bent the curve between ``a`` and ``b``: on a log scale the fused kernel's growth and the
    unfused passes' shortfall from k-fold add up to the bend; a side with ``MAIN`` of it, else 'both'."""
    fg, ug = b["fused_seconds"] / a["fused_seconds"], b["unfused_seconds"] / a["unfused_seconds"]
    fused_log, unfused_log = math.log(fg), math.log(b["k"] / a["k"]) - math.log(ug)
    share = fused_log / (fused_log + unfused_log)   # the sum is > 0: the curve bent here
    cause = "fused" if share >= MAIN else "unfused" if share <= 1 - MAIN else "both"
    return {"fused_growth": fg, "unfused_growth": ug, "fused_share": share, "cause": cause}


def _ceiling_share(c: dict, rate: float) -> str:
    """'59% of the most a chain of multiplications can reach (50% of the roof's peak)'."""
    peak, share = c["roof"].peak_flops, CEILING.get(c["op"])
    if share and share != 1.0:
        return (f"{w.percent(rate / (share * peak))} of the most a chain of {_ops(c['op'])} can reach "
                f"({w.percent(share)} of the roof's peak)")
    return f"{w.percent(rate / peak)} of the roof's peak FLOP/s"


def line_sentence(c: dict) -> str:
    cross, own = c["crossover"], own_crossover(c)
    if not cross:
        return ""
    text = (f"The dotted line (k = {w.number(cross)}) is the chain length where the fused kernel's arithmetic, "
            "at the roof's peak, would take as long as its bytes.")
    if own != cross:
        text += (f" That peak counts a fused multiply-add as two FLOPs; a {_ops(c['op'], 1)} is one FLOP per "
                 f"instruction, so a chain of {_ops(c['op'])} reaches its own crossover at "
                 f"{w.percent(CEILING[c['op']])} of that length, k = {w.number(own)}.")
    return text


def _bend_sentence(c: dict, name: str, subject_cap: str = "The") -> tuple:
    b = bend(c)
    o, cross = b["outcome"], b["crossover"]
    line = f"k = {w.number(cross)}"
    if o == "too few points":
        return "", b
    last = c["points"][-1]
    if o == "no bend, sweep short":
        return (f"{subject_cap} `{name}` curve did not bend within the sweep, which stops at "
                f"k = {w.integer(b['kmax'])}, before {line}: its speed-up kept growing about as fast as k, to "
                f"{w.number(last['speedup'])} at k = {w.integer(b['kmax'])}.", b)
    if o == "no bend past the line":
        text = (f"{subject_cap} `{name}` curve did not bend even past {line}, up to k = {w.integer(b['kmax'])} "
                f"(speed-up {w.number(last['speedup'])}).")
        roof, share = c["roof"], CEILING.get(c["op"], 1.0)
        if roof and last["fused_flops"] > ABOVE_ROOF * share * roof.peak_flops:
            text += (f" Its longest fused chain did {w.rate(last['fused_flops'])}, more than the most the model "
                     "lets this chain's arithmetic reach, so the real crossover lies further right.")
        return text, b
    a, z = b["between"]
    text = f"{subject_cap} `{name}` curve bends between k = {w.integer(a)} and {w.integer(z)}, "
    pb = next(p for p in c["points"] if p["k"] == z)
    if o == "before":
        text += f"before {line}." + _steps(b, a, z) + ("" if b["cause"] == "unfused" else _why_fused_grew(c, pb))
    elif o == "at":
        text += f"around {line}, where the model puts it." + _why_fused_grew(c, pb)
    else:
        text += f"only after {line}: past that crossover the fused kernel's time still did not grow with k."
    return text, b


def _steps(b: dict, a: int, z: int) -> str:
    fg, ug, r = b["fused_growth"], b["unfused_growth"], z / a
    passes = f"the unfused passes took {w.times(ug)} as long for {w.times(r)} as many"
    fused = (f"the fused time barely grew ({w.times(fg)})" if fg < BARELY else f"the fused time grew {w.times(fg)}")
    return (f" Over that step {fused}, {'and' if b['cause'] == 'both' else 'while'} {passes}: "
            + {"unfused": "the bend is mostly the unfused side.",
               "fused": "the fused kernel's growth is most of the bend.",
               "both": "both sides bent it, each about as much as the other."}[b["cause"]])


def _why_fused_grew(c: dict, p: dict) -> str:
    """The fused kernel's FLOP rate at ``p``, judged on the sweep (:func:`~.fusion_speedups.rate_trend`)."""
    trend, pair = rate_trend(c, p)
    k = w.integer(p["k"])
    if not c["roof"]:
        return ""
    if trend == "compute" and levelled(c, p)[0]:
        last = c["points"][-1]
        held = "" if last["k"] <= p["k"] else f", and held near that rate up to k = {w.integer(last['k'])}"
        return (f" At k = {k} it ran at {_ceiling_share(c, _rate(p))}{held}: its time grew with its "
                "arithmetic, as the model says past the crossover.")
    if trend in ("compute", "rising"):
        last = c["points"][-1]
        rise = ("" if last["k"] <= p["k"] else
                f", still rising, to {w.percent(_rate(last) / (CEILING.get(c['op'], 1.0) * c['roof'].peak_flops))} "
                f"at k = {w.integer(last['k'])}")
        return f" At k = {k} it ran at {_ceiling_share(c, _rate(p))}{rise}."
    if trend == "idle":
        return (f" At k = {k}, though, the fused kernel ran at only {w.percent(_rate(p) / c['roof'].peak_flops)} "
                "of the roof's peak FLOP/s, far from compute-bound, so the arithmetic the model adds does not "
                "explain this bend.")
    return trend_words(c, trend, pair, p)


def fusers(kernels, compiled, kernels_reference=(), compiled_reference=()) -> Prose:
    """The speed-up figure: torch.compile against the model and the hand-written kernels, and
    where each curve bends; the same for the references."""
    parts = []
    own = fusers_of(kernels)
    tc = curve(compiled, "torch_compile") if "torch_compile" in fusers_of(compiled) else None
    if tc is None or not tc["points"]:
        why = _skipped(compiled, "torch_compile") or next(
            (n for n in (compiled.meta or {}).get("notes", []) if "torch_compile" in n), "")
        parts.append(Prose("`torch.compile` has no points in the figure: it could not compile here"
                           + (f" ({why})" if why else "") + ".", {"torch_outcome": "no data"}))
    else:
        text, facts = _speedup_sentence(tc, compiled, "`torch.compile` (against eager PyTorch)")
        p = focus(tc["points"])
        if own:
            mine = focus(curve(kernels, own[0])["points"])
            if mine and mine["k"] == p["k"]:
                ratio = p["speedup"] / mine["speedup"]
                cmp = ("about the same as" if abs(ratio - 1) <= w.SAME else "higher than" if ratio > 1 else
                       "lower than")
                text += (f" At k = {w.integer(p['k'])} its speed-up was {cmp} the `{mine['library']}` kernels' "
                         f"({w.number(p['speedup'])} against {w.number(mine['speedup'])}).")
                facts["torch_over_kernels"] = ratio
            both = {q["k"]: q for q in curve(kernels, own[0])["points"]}
            top = max((q for q in tc["points"] if q["k"] in both), key=lambda q: q["k"], default=None)
            if top is not None:
                theirs = both[top["k"]]
                text += (f" At k = {w.integer(top['k'])}, the longest chain both ran, `torch.compile`'s fused kernel "
                         f"took {w.seconds(top['fused_seconds'])} ({w.rate(top['fused_flops'])}) and the "
                         f"`{theirs['library']}` one {w.seconds(theirs['fused_seconds'])} "
                         f"({w.rate(theirs['fused_flops'])}).")
                facts["fused_ratio_at_longest"] = theirs["fused_seconds"] / top["fused_seconds"]
        parts.append(Prose(text, {f"torch_{k}": v for k, v in facts.items()}))
    bends = []
    for run, b in [(kernels, b) for b in own] + ([(compiled, "torch_compile")] if tc and tc["points"] else []):
        c = curve(run, b)
        text, facts = _bend_sentence(c, c["points"][0]["library"] if c["points"] else b)
        if text:
            bends.append(Prose(text, {f"bend {b}": facts["outcome"], f"bend {b} between": facts["between"]}))
    if bends:
        intro = line_sentence(curve(kernels if own else compiled, own[0] if own else "torch_compile"))
        parts.append(Prose(" ".join([intro] * bool(intro) + [p.text for p in bends]),
                           {k: v for p in bends for k, v in p.facts.items()}))
    return with_references(paragraphs(*parts), list(kernels_reference) + list(compiled_reference), "these sweeps",
                           _reference_bends)


def _reference_bends(run) -> Prose:
    parts = []
    for b in fusers_of(run):
        c = curve(run, b)
        if not c["points"]:
            continue
        text, facts = _bend_sentence(c, c["points"][0]["library"], "its")
        p = focus(c["points"])
        t = (f"{w.reference_intro(run)}, `{p['library']}` sped the chain of {w.integer(p['k'])} up "
             f"{w.number(p['speedup'])} times (predicted: {w.number(p['predicted'])}); {text}")
        parts.append(Prose(t, {f"reference {w.device_of(run)} {b}": facts["outcome"]}))
    return paragraphs(*parts)
