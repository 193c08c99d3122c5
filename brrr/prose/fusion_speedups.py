"""Chapter 4, fusion: the measured speed-ups of each fuser against the model's, at the chain
length the chapter quotes and at the longest chain, and which side of the comparison moved.
"""
from __future__ import annotations

import math
import re

from . import Prose, paragraphs, with_references
from . import words as w
from .fusion_model import BUSY, CLOSE, _faster_than_roof, _ops, _relation, _roof_of
from .words import ABOVE_ROOF

FOCUS_K = 16        # the chain length the chapter quotes
LEVEL = 0.9         # a rate "levelled off" where the sweep's last step grew the fused time >= 90% of k's growth
# the most of the peak (which counts an FMA as two FLOPs) a chain of each op can reach; fma: an uncontracted
# multiply, then an add
CEILING = {"mul": 0.5, "add": 0.5, "fma": 0.5, "ffma": 1.0}


def curve(result, fuser: str) -> dict:
    """One fuser's points: per k the measured and predicted speed-up, each side's efficiency
    (roofline time / measured time), the fused kernel's times, rates and counts."""
    rows = {}
    for r in result.records:
        if r.get("fuser") == fuser:
            rows.setdefault(r["k"], {})[r["variant"]] = r
    points = []
    for k in sorted(rows):
        f, u = rows[k].get("fused"), rows[k].get("unfused")
        if not f or not u:
            continue
        points.append({"k": k, "speedup": u["seconds"] / f["seconds"],
                       "predicted": u["predicted_seconds"] / f["predicted_seconds"],
                       "eff_fused": f["predicted_seconds"] / f["seconds"],
                       "eff_unfused": u["predicted_seconds"] / u["seconds"],
                       "fused_flops": f["flops"] / f["seconds"], "fused_bw": f["nbytes"] / f["seconds"],
                       "fused_seconds": f["seconds"], "unfused_seconds": u["seconds"],
                       "fused_nbytes": f["nbytes"], "fused_flop_count": f["flops"],
                       "regime": f.get("predicted_regime"), "library": f.get("library", fuser)})
    return {"fuser": fuser, "points": points, "op": (result.records[0]["op"] if result.records else "mul"),
            "crossover": (result.meta or {}).get("crossover_k"), "roof": _roof_of(result),
            "n": (result.meta or {}).get("n"), "dtype": (result.meta or {}).get("dtype", "float32")}


def fusers_of(result) -> list:
    return list(dict.fromkeys(r["fuser"] for r in result.records))


def focus(points: list, k: int = FOCUS_K):
    """The point at chain length ``k``, else the one nearest to it on a log scale."""
    return min(points, key=lambda p: (abs(math.log(p["k"] / k)), -p["k"]), default=None)


def _rate(p: dict) -> float:
    return p["fused_flops"]


def compute_from(c: dict):
    """The shortest k from which to the sweep's end the fused FLOP rate stays at ``BUSY`` of the
    peak or more and within ``CLOSE`` of the sweep's best (None: never, or no roof)."""
    roof, pts = c["roof"], c["points"]
    if not roof or not pts:
        return None
    floor = max(BUSY * roof.peak_flops, (1 - CLOSE) * max(_rate(p) for p in pts))
    start = None
    for p in reversed(pts):
        if _rate(p) < floor:
            break
        start = p["k"]
    return start


def levelled(c: dict, p: dict) -> tuple:
    """(whether the fused time grew at least ``LEVEL`` times as much as k over the sweep's last
    step, as a kernel held back by its arithmetic does; the last point)."""
    pts, last = c["points"][-2:], c["points"][-1]
    if len(pts) < 2:
        return True, last
    a, z = pts
    return z["fused_seconds"] / a["fused_seconds"] >= LEVEL * z["k"] / a["k"], last


def ceiling_words(op: str) -> str:
    """'half the peak, the most a chain of multiplications can reach (...)' for an op of :data:`CEILING`."""
    if CEILING.get(op) == 1.0:
        return f"the peak, which a chain of {_ops(op)} can reach (each is one fused multiply-add instruction)"
    return (f"half the peak, the most a chain of {_ops(op)} can reach (the peak counts a fused multiply-add as "
            f"two FLOPs; a {_ops(op, 1)} is one FLOP per instruction)")


def serial_bound(c: dict, p: dict):
    """(bytes time at the roof's bandwidth, arithmetic time at :data:`CEILING` of the peak, their sum
    over the measured time) of the fused kernel at ``p``; None without a roof or a known ceiling."""
    roof, share = c["roof"], CEILING.get(c["op"])
    if not roof or not share or "fused_nbytes" not in p:
        return None
    tb = p["fused_nbytes"] / roof.peak_bandwidth
    ta = p["fused_flop_count"] / (share * roof.peak_flops)
    return tb, ta, (tb + ta) / p["fused_seconds"]


def serial_words(c: dict, p: dict) -> tuple:
    """The fused kernel at ``p`` against :func:`serial_bound`: ``('overlapped', text)`` where the two one
    after the other would take longer than it did, else ``('bound', text)``; ``(None, '')`` without one."""
    bound = serial_bound(c, p)
    if bound is None:
        return None, ""
    tb, ta, share = bound
    t = p["fused_seconds"]
    text = (f" Its bytes take {w.seconds(tb)} at the roof's bandwidth and its {_ops(c['op'])} {w.seconds(ta)} at "
            f"{ceiling_words(c['op'])}; it took {w.seconds(t)}, {w.times(t / max(tb, ta))} the longer of the two, "
            + ("which is the roofline's bound" if CEILING[c["op"]] == 1.0 else
               "its least time at that ceiling (the roofline's own bound, at the full peak, is lower)"))
    if share > ABOVE_ROOF:
        return "overlapped", (f"{text}. One after the other the two would take {w.seconds(tb + ta)}, more than it "
                              "took, so they overlapped at least in part.")
    return "bound", text + "."


def rate_trend(c: dict, p: dict) -> tuple:
    """The fused FLOP rate at ``p`` on the whole curve: 'compute' (from :func:`compute_from` on), 'idle'
    (below ``BUSY``), ``('fell', (top, low))``, ``('rising', (p, top))`` or ``(None, ())``."""
    roof, pts = c["roof"], c["points"]
    if not roof or not pts:
        return None, ()
    start = compute_from(c)
    if start is not None and p["k"] >= start:
        return "compute", ()
    if _rate(p) < BUSY * roof.peak_flops:
        return "idle", ()
    floor = max(BUSY * roof.peak_flops, (1 - CLOSE) * max(_rate(q) for q in pts))
    top = max(pts, key=_rate)
    after = [q for q in pts if q["k"] > top["k"]]
    if after and _rate(min(after, key=_rate)) < floor:
        return "fell", (top, min(after, key=_rate))
    return "rising", (p, top)


def trend_words(c: dict, trend: str, pair: tuple, p: dict, rate_said: bool = False) -> str:
    """The words for a 'fell' or 'rising' :func:`rate_trend` ('' for the others); ``rate_said``:
    the text before already gave the rate at ``p``."""
    peak = c["roof"].peak_flops if c["roof"] else None
    if trend not in ("fell", "rising"):
        return ""
    lead = " Its FLOP rate" if rate_said else (f" At k = {w.integer(p['k'])} the fused kernel ran at "
                                               f"{w.percent(_rate(p) / peak)} of the roof's peak FLOP/s, and its rate")
    if trend == "fell":
        top, low = pair
        fall = (f"by k = {w.integer(low['k'])} it had fallen to {w.percent(_rate(low) / peak)}" if top is p else
                f"it fell from {w.percent(_rate(top) / peak)} at k = {w.integer(top['k'])} to "
                f"{w.percent(_rate(low) / peak)} at k = {w.integer(low['k'])}")
        return f"{lead} did not level off: {fall}, where a kernel held back by its arithmetic keeps its rate."
    top = pair[1]
    return (f"{lead} was still rising (to {w.percent(_rate(top) / peak)} at k = {w.integer(top['k'])}): it had "
            "reached neither limit." + serial_words(c, p)[1])


def _why(p: dict, c: dict, run) -> str:
    """Which side of a speed-up moved, where it is not close to its prediction."""
    rel = _relation(p["speedup"], p["predicted"])
    roof = c["roof"]
    ef, eu = p["eff_fused"], p["eff_unfused"]
    if rel == "above":
        if ef > ABOVE_ROOF:
            return (f" The fused kernel ran faster than its roofline time ({w.times(ef)} the roof's speed): "
                    + _faster_than_roof(run, c))
        return (f" The unfused chain fell further below its roofline time than the fused kernel did: its "
                f"{w.integer(p['k'])} passes reached {w.percent(eu)} of the roofline's speed, the fused kernel "
                f"{w.percent(ef)}. Timing one unfused pass alone against its bytes would show where its time went.")
    if rel == "short of":
        text = (f" The fused kernel fell further below its roofline time than the unfused chain did: it reached "
                f"{w.percent(ef)} of its roofline speed, the unfused passes {w.percent(eu)}.")
        trend, pair = rate_trend(c, p)
        if trend == "compute" and levelled(c, p)[0]:      # a fused time that stopped growing is no sign of it
            text += (f" Its arithmetic is no longer free: it ran at {w.percent(p['fused_flops'] / roof.peak_flops)} "
                     f"of the roof's peak FLOP/s, against {ceiling_words(c['op'])}.")
        elif eu > ABOVE_ROOF:
            text += (" The unfused passes ran faster than the roof: " + _faster_than_roof(run, c))
        elif roof:
            text += (f" It ran at {w.percent(p['fused_flops'] / roof.peak_flops)} of the roof's peak FLOP/s and moved "
                     f"its bytes at {w.percent(p['fused_bw'] / roof.peak_bandwidth)} of the roof's bandwidth."
                     + (trend_words(c, trend, pair, p, rate_said=True) if trend in ("fell", "rising") else
                        serial_words(c, p)[1]))
        return text
    return ""


def _speedup_sentence(c: dict, run, subject: str) -> tuple:
    """The measured speed-up against the predicted one at the focus k and at the longest chain."""
    p = focus(c["points"])
    if p is None:
        return "", {}
    rel = _relation(p["speedup"], p["predicted"])
    text = (f"For a chain of {w.integer(p['k'])} {_ops(c['op'], p['k'])} the model predicts a speed-up of "
            f"{w.number(p['predicted'])}; {subject} measured {w.number(p['speedup'])}, {rel} the prediction.")
    text += _why(p, c, run)
    facts = {"focus_k": p["k"], "speedup": p["speedup"], "predicted": p["predicted"], "relation": rel}
    last = c["points"][-1]
    if last["k"] != p["k"]:
        at_ceiling = ceiling_point(c, last)
        capped = at_ceiling["predicted"] < last["predicted"] * (1 - 1e-9)
        if capped:   # past the op's own crossover the full-peak prediction is out of this chain's reach
            said = (f"the roofline's prediction is {w.number(last['predicted'])} at the full peak and "
                    f"{w.number(at_ceiling['predicted'])} at {w.percent(CEILING[c['op']])} of it, the most a chain of "
                    f"{_ops(c['op'])} can reach; the measurement, {w.number(last['speedup'])}, is")
            last = at_ceiling
        else:
            said = f"the prediction is {w.number(last['predicted'])} and the measurement {w.number(last['speedup'])},"
        rel_last = _relation(last["speedup"], last["predicted"])
        text += (f" At the longest chain, {w.integer(last['k'])} {_ops(c['op'], last['k'])}, {said} "
                 f"{rel_last} {'the latter' if capped else 'it'}.")
        if rel_last != rel:
            text += _why(last, c, run)
        facts.update(last_k=last["k"], last_speedup=last["speedup"], last_predicted=last["predicted"],
                     last_relation=rel_last)
    return text, facts


def ceiling_point(c: dict, p: dict) -> dict:
    """``p`` with its prediction and fused efficiency at :data:`CEILING` of the peak (``p`` itself
    where there is no such bound or it does not bind)."""
    bound = serial_bound(c, p)
    if bound is None:
        return p
    tb, ta, _ = bound
    fused = max(tb, ta)
    unfused = p["predicted"] * p["fused_seconds"] * p["eff_fused"]   # the unfused chain's roofline time
    if fused <= p["fused_seconds"] * p["eff_fused"] * (1 + 1e-9):
        return p
    return {**p, "predicted": unfused / fused, "eff_fused": fused / p["fused_seconds"]}


def _plain(reason: str, subject: str) -> str:
    """A skip note's reason without the exception's class, ``subject`` said as 'it'."""
    reason = re.sub(r"^[A-Za-z_][\w.]*(Error|Exception): ", "", reason.strip())
    if reason.lower().startswith(subject.lower() + " "):
        reason = "it " + reason[len(subject) + 1:]
    return reason


def _skipped(result, fuser: str) -> str:
    notes = (getattr(result, "meta", {}) or {}).get("notes", [])
    return next((n.split(": ", 1)[1] for n in notes if n.startswith(f"{fuser} skipped")), "")


def kernel_speedups(kernels, references=()) -> Prose:
    """The hand-written fusers' speed-ups against the model; the same for each reference GPU."""
    parts = []
    fusers = fusers_of(kernels)
    if not fusers:
        why = _skipped(kernels, "brrr") or "no fuser could run here"
        parts.append(Prose(f"The hand-written kernels did not run on this machine ({why}), so this run has no "
                           "measured speed-up to set against the model.", {"outcome": "no data"}))
    first = None
    for b in fusers:
        c = curve(kernels, b)
        name = c["points"][0]["library"] if c["points"] else b
        text, facts = _speedup_sentence(c, kernels, f"the `{name}` kernels")
        text += _absolute(c, name, first)
        first = first or (c, name)
        parts.append(Prose(text, {**facts, "fuser": b, "outcome": facts.get("relation")}))
    if "cupy_fuse" not in fusers:
        why = _plain(_skipped(kernels, "cupy_fuse"), "cupy.fuse")
        if why:
            parts.append(Prose(f"`cupy.fuse` was skipped: {why}.", {"cupy_fuse": "skipped"}))
    # the section shows this sweep as a table; the speed-up figure comes with the next section's text
    return with_references(paragraphs(*parts), references, "this sweep", _reference_speedups, shown="table")


def _absolute(c: dict, name: str, first) -> str:
    """The fused kernel's own bandwidth at the focus k, and its time against the first fuser's."""
    p, roof = focus(c["points"]), c["roof"]
    if p is None or not roof:
        return ""
    text = (f" The `{name}` fused kernel moved its bytes at {w.rate(p['fused_bw'], 'B/s')} at k = {w.integer(p['k'])}, "
            f"{w.percent(p['fused_bw'] / roof.peak_bandwidth)} of the roof's bandwidth")
    q = focus(first[0]["points"]) if first else None
    if q is not None and q["k"] == p["k"]:
        how, words_ = w.longer_or_shorter(p["fused_seconds"], q["fused_seconds"], f"the `{first[1]}` one")
        text += f", and it took {w.seconds(p['fused_seconds'])}, {words_}"
    return text + "."


def _reference_speedups(run) -> Prose:
    parts = []
    for b in fusers_of(run):
        c = curve(run, b)
        p = focus(c["points"])
        if p is None:
            continue
        t = (f"{w.reference_intro(run)}, `{p['library']}` measured a speed-up of {w.number(p['speedup'])} at "
             f"k = {w.integer(p['k'])} against a prediction of {w.number(p['predicted'])}, "
             f"{_relation(p['speedup'], p['predicted'])} it.")
        parts.append(Prose(t, {f"reference {w.device_of(run)} {b}": p["speedup"]}))
    return paragraphs(*parts)
