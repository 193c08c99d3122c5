"""Chapter 4, fusion: the cosine chain against the multiplication chain."""
from __future__ import annotations

from . import Prose, paragraphs, with_references
from . import words as w
from .fusion_model import CLOSE, FLOOR, _faster_than_roof, _roof_kind, _roof_of
from .words import ABOVE_ROOF
from .fusion_speedups import curve


def _fused(run, fuser=None) -> list:
    """(k, seconds per element, roofline seconds per element, n) of a run's fused points."""
    if run is None or not run.records:
        return []
    fuser = fuser or run.records[0]["fuser"]
    pts = [r for r in run.records if r["variant"] == "fused" and r["fuser"] == fuser]
    return sorted((r["k"], r["seconds"] / r["n"], r["predicted_seconds"] / r["n"], r["n"]) for r in pts)


def floor_k(points: list):
    """The first k whose fused time per element exceeds ``FLOOR`` times the shortest chain's (or None)."""
    return next((k for k, t, _, _ in points if t > FLOOR * points[0][1]), None)


def marginal_cost(points: list, roof):
    """``((k0, k1), seconds, FLOPs at the roof's peak)`` one more op cost per element over the last
    step, once the chain has left its floor; else None."""
    if roof is None or len(points) < 2 or floor_k(points) is None:
        return None
    (k0, t0, _, _), (k1, t1, _, _) = points[-2], points[-1]
    extra = (t1 - t0) / (k1 - k0)
    return ((k0, k1), extra, extra * roof.peak_flops) if extra > 0 else None


def cos_chain(cos_run, kernels=None, references=()) -> Prose:
    """Where each chain leaves its floor, what one cosine cost, what fusing bought, points above the roof."""
    cos_pts, mul_pts = _fused(cos_run), _fused(kernels)
    if not cos_pts:
        notes = "; ".join((getattr(cos_run, "meta", {}) or {}).get("notes", []))
        return Prose("The cosine chain did not run here" + (f" ({notes})" if notes else "")
                     + ", so there is nothing to compare.", {"outcome": "no data"})
    facts = {}
    kc, km = floor_k(cos_pts), floor_k(mul_pts)
    facts.update(cos_floor_k=kc, mul_floor_k=km)

    def leaves(k, pts, what):
        if k is None:
            return f"the {what} chain never left it, up to k = {w.integer(pts[-1][0])}"
        return f"the {what} chain left it at k = {w.integer(k)}"
    lead = (f"Say a chain has left its floor once its fused time per element exceeds {w.number(FLOOR)} times "
            f"its time for a single operation. In [the time figure](#fig-times), ")
    if mul_pts:
        first = leaves(km, mul_pts, "multiplication")
        second = leaves(kc, cos_pts, "cosine")
        outcome = ("neither leaves" if kc is None and km is None else
                   "cos leaves sooner" if kc is not None and (km is None or kc < km) else
                   "cos leaves later" if km is not None and (kc is None or km < kc) else "same k")
        text = f"{lead}{first}; {second}." + {"cos leaves sooner": " The cosines stop riding for free much earlier.",
                                              "neither leaves": " Neither chain left its floor within the sweep."
                                              }.get(outcome, "")
    else:
        text = f"{lead}{leaves(kc, cos_pts, 'cosine')}. No multiplication chain ran here to compare."
        outcome = "cos only"
    facts["outcome"] = outcome
    roof = _roof_of(cos_run)
    cost = marginal_cost(cos_pts, roof)
    if cost is not None:
        (k0, k1), extra, flops = cost
        facts["cos_cost_flops"] = flops
        text += (f" From k = {w.integer(k0)} to {w.integer(k1)}, each extra cosine added {w.seconds(extra)} per "
                 f"element to the fused kernel's time, as long as {w.number(flops)} "
                 f"FLOP{'s' if flops >= 1.5 else ''} take at the roof's peak of {w.rate(roof.peak_flops)}")
        text += (": counting a cosine as one FLOP badly underestimates it." if flops >= 2 else
                 ": about the one FLOP the model counts.")
    elif roof:
        facts["cos_cost_flops"] = None
        text += " Each extra cosine cost too little to see: the fused kernel's time did not grow with k."
    c = curve(cos_run, cos_run.records[0]["fuser"])
    if c["points"]:
        last = c["points"][-1]
        facts.update(cos_speedup=last["speedup"], cos_k=last["k"])
        frac, k = last["speedup"] / last["k"], w.integer(last["k"])
        if last["speedup"] < 1 - CLOSE:
            text += (f" Fused, the {k} cosines even ran slower than as {k} separate passes "
                     f"(a speed-up of {w.number(last['speedup'])}).")
        elif frac < 1 - CLOSE:
            text += (f" Fusing {k} cosines bought a speed-up of only {w.number(last['speedup'])}, "
                     f"{w.percent(frac)} of the {k} the bytes alone would give.")
        else:
            text += f" Fusing {k} cosines bought a speed-up of {w.number(last['speedup'])}, close to {k}."
    fast = [(what, k) for what, pts in (("cosine", cos_pts), ("multiplication", mul_pts))
            for k, t, model, _ in pts if t * ABOVE_ROOF < model]
    facts["faster_than_roof"] = len(fast)
    if fast:
        what = sorted({f for f, _ in fast})
        c_run = cos_run if "cosine" in what else kernels
        text += (f" {len(fast)} point{'s' if len(fast) > 1 else ''} of the {' and '.join(what)} chain"
                 f"{'s' if len(what) > 1 else ''} ran faster than the roofline line beside it: "
                 + _faster_than_roof(c_run, curve(c_run, c_run.records[0]["fuser"])))
    parts = [Prose(text, facts)]
    if cos_pts[0][3] != (mul_pts[0][3] if mul_pts else cos_pts[0][3]):
        parts.append(Prose(f"The cosine chain ran on {w.integer(cos_pts[0][3])} elements and the multiplication chain "
                           f"on {w.integer(mul_pts[0][3])}, which is why the figure plots time per element.",
                           {"sizes_differ": True}))
    return with_references(paragraphs(*parts), references, "the cosine chain", _reference_cos_chain)


def _reference_cos_chain(run):
    pts = _fused(run)
    r_roof = _roof_of(run)
    if not pts or not r_roof:
        return None
    rk, cost = floor_k(pts), marginal_cost(pts, r_roof)
    t = (f"{w.reference_intro(run)}, the cosine chain "
         + (f"left its floor at k = {w.integer(rk)}" if rk else
            f"stayed on its floor up to k = {w.integer(pts[-1][0])}")
         + (f", and each extra cosine cost as long as {w.number(cost[2])} FLOPs at its "
            f"{_roof_kind(run)} peak." if cost else "."))
    return Prose(t, {f"reference {w.device_of(run)} cos cost": cost[2] if cost else None})
