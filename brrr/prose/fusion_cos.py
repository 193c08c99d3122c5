"""Chapter 4, fusion: the cosine chain. How soon a chain leaves its floor, what one more cosine
costs in FLOPs at the roof's peak, what fusing the cosines bought, and points faster than the roof.
"""
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
    """The first k at which the fused time per element exceeds ``FLOOR`` times its time at the
    shortest chain (None: it never did)."""
    if not points:
        return None
    base = points[0][1]
    return next((k for k, t, _, _ in points if t > FLOOR * base), None)


def marginal_cost(points: list, roof):
    """What one more op cost per element between the last two chain lengths, once the chain has
    left its floor: ``((k0, k1), seconds per element, FLOPs at the roof's peak)``, or None."""
    if roof is None or len(points) < 2 or floor_k(points) is None:
        return None
    (k0, t0, _, _), (k1, t1, _, _) = points[-2], points[-1]
    extra = (t1 - t0) / (k1 - k0)
    if extra <= 0:
        return None
    return (k0, k1), extra, extra * roof.peak_flops


def cos_chain(cos_run, kernels=None, references=()) -> Prose:
    """The per-element time figure: how soon each chain leaves its floor, what one cosine cost
    in FLOPs at the roof's peak, what fusing the cosines bought, and points faster than the roof."""
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
        if kc is not None and (km is None or kc < km):
            order, outcome = "sooner", "cos leaves sooner"
        elif kc is None and km is None:
            order, outcome = "neither", "neither leaves"
        elif km is not None and (kc is None or km < kc):
            order, outcome = "later", "cos leaves later"
        else:
            order, outcome = "same", "same k"
        text = f"{lead}{first}; {second}."
        text += {"sooner": " The cosines stop riding for free much earlier: each one costs real arithmetic.",
                 "neither": " Neither chain left its floor within the sweep: every extra operation rode along "
                            "with memory traffic that had to happen anyway.",
                 "later": " Here the cosine chain stayed flat longer than the multiplication chain, the "
                          "opposite of what the instruction counts suggest; the two ran on different array "
                          "sizes, so their floors differ.",
                 "same": " Both left their floors at the same chain length."}[order]
    else:
        text = f"{lead}{leaves(kc, cos_pts, 'cosine')}. No multiplication chain ran with the same fuser here to compare."
        outcome = "cos only"
    facts["outcome"] = outcome
    # what one more cosine cost, in FLOPs at the roof's peak
    roof = _roof_of(cos_run)
    cost = marginal_cost(cos_pts, roof)
    if cost is not None:
        (k0, k1), extra, flops = cost
        facts["cos_cost_flops"] = flops
        text += (f" From k = {w.integer(k0)} to {w.integer(k1)}, each extra cosine added {w.seconds(extra)} per "
                 f"element to the fused kernel's time, as long as {w.number(flops)} "
                 f"FLOP{'s' if flops >= 1.5 else ''} take at the roof's peak of {w.rate(roof.peak_flops)}")
        text += (": counting a cosine as one FLOP badly underestimates it, and puts the real crossover far to "
                 "the left of where the model puts it." if flops >= 2 else
                 ": about the one FLOP the model counts.")
    elif roof:
        facts["cos_cost_flops"] = None
        text += (" Each extra cosine cost too little to see next to the memory traffic: the fused kernel's time "
                 "did not grow with k, so nothing here contradicts the model's count of one FLOP per cosine.")
    c = curve(cos_run, cos_run.records[0]["fuser"])
    if c["points"]:
        last = c["points"][-1]
        facts.update(cos_speedup=last["speedup"], cos_k=last["k"])
        frac, k = last["speedup"] / last["k"], w.integer(last["k"])
        if last["speedup"] < 1 - CLOSE:
            text += (f" Fused, the {k} cosines even ran slower than as {k} separate passes "
                     f"(a speed-up of {w.number(last['speedup'])}): fusion removes traffic, and here the time was "
                     "arithmetic. In one pass each element goes through its cosines one after another, each "
                     "waiting for the last, where separate passes give the processor independent elements to "
                     "overlap.")
        elif frac < 1 - CLOSE:
            text += (f" Fusing {k} cosines bought a speed-up of only {w.number(last['speedup'])}, "
                     f"{w.percent(frac)} of the {k} the bytes alone would give: fusion removes "
                     "traffic, and here most of the time was arithmetic.")
        else:
            text += (f" Fusing {k} cosines bought a speed-up of {w.number(last['speedup'])}, close to "
                     f"{k}: the cosines were cheap next to the traffic, so removing traffic paid in full.")
    # points faster than their roofline time
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
    """Where a reference run's cosine chain left its floor and what a cosine cost (None: no chain or roof)."""
    pts = _fused(run)
    r_roof = _roof_of(run)
    if not pts or not r_roof:
        return None
    rk, cost = floor_k(pts), marginal_cost(pts, r_roof)
    t = (f"{w.reference_intro(run)}, the cosine chain "
         + (f"left its floor at k = {w.integer(rk)}" if rk else
            f"stayed on its floor up to k = {w.integer(pts[-1][0])}")
         + (f", and each extra cosine cost as long as {w.number(cost[2])} FLOPs at its "
            f"{_roof_kind(run)} peak." if cost else ", so its cosines cost too little to see next to the traffic."))
    return Prose(t, {f"reference {w.device_of(run)} cos cost": cost[2] if cost else None})
