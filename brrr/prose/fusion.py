"""Chapter 4, fusion: sentences chosen by the measurements.

Each function takes the chapter's live results (from :mod:`brrr.experiments.fusion`) and
the reference runs of the same experiments (from :func:`brrr.reference.beside`) and
returns :class:`~brrr.prose.Prose`. The comparisons all rest on one identity: a measured
speed-up divided by the roofline's is the fused kernel's efficiency (roofline time /
measured time) divided by the unfused chain's, so the text can say which side of the
comparison moved.
"""
from __future__ import annotations

import math

from . import Prose, paragraphs, with_references
from . import words as w

CLOSE = 0.20        # a measured speed-up within 20% of the prediction is "close to" it
BEND_SLOPE = 0.5    # the curve "bends" where log(speed-up) grows less than half as fast as log(k)
FLOOR = 1.5         # a fused time 1.5x its one-op time has "left its floor"
ABOVE_ROOF = 1.05   # 5% faster than the roofline time is faster than the roof (less is noise)
BUSY = 0.25         # a fused kernel at >= 25% of the peak FLOP/s is spending real time on arithmetic
FOCUS_K = 16        # the chain length the chapter quotes
NOISY = 0.2         # an interquartile range above 20% of the median is a noisy timing

OP_WORDS = {"mul": ("multiplication", "multiplications"), "add": ("addition", "additions"),
            "fma": ("multiply-add", "multiply-adds"), "cos": ("cosine", "cosines")}


def _ops(op: str, k: int = 2) -> str:
    one, many = OP_WORDS.get(op, (op, op + "s"))
    return one if k == 1 else many


def _roof_of(run):
    from ..roofline import Roofline
    roof = (getattr(run, "meta", {}) or {}).get("roof")
    return Roofline.from_dict(roof) if roof else None


def _spec(run_or_summary) -> bool:
    from ..roofline import has_spec_sheet
    summary = run_or_summary if isinstance(run_or_summary, dict) else \
        (getattr(run_or_summary, "meta", {}) or {}).get("device", {})
    return has_spec_sheet(summary or {})


def _roof_kind(run) -> str:
    return "spec-sheet" if _spec(run) else "measured"


def _k(v) -> str:
    return f"{int(v):,}"


def _count(n: int, noun: str) -> str:
    """'one generated loop', '3 generated loops'."""
    words = {1: "one", 2: "two", 3: "three", 4: "four"}
    return f"{words.get(n, n)} {noun}{'' if n == 1 else 's'}"


def _relation(s: float, p: float) -> str:
    """'close to', 'above' or 'short of': a measured speed-up ``s`` against a predicted ``p``."""
    if abs(s / p - 1) <= CLOSE:
        return "close to"
    return "above" if s > p else "short of"


# --- the model's prediction ------------------------------------------------------------------

def prediction(roof, ks, device=None, op: str = "mul", dtype: str = "float32") -> Prose:
    """What the roofline predicts for fusing chains of ``ks`` ops on this device: the ridge,
    the chain length where the fused kernel reaches it, and the speed-up's cap."""
    from ..experiments.fusion import crossover_k, predicted_speedup
    from ..device import device as live
    dev = device or live()
    summary = dev.summary() if hasattr(dev, "summary") else dict(dev)
    spec = _spec(summary)
    ks = sorted(int(k) for k in ks)
    cross = crossover_k(roof, op, dtype)
    where = (f"is the spec sheet of {summary.get('name', 'this GPU')}" if spec else
             f"was measured by `brrr` on {summary.get('name', 'this machine')}, from its best copy bandwidth and "
             "its best matmul (a measured roof, not a hardware peak)")
    text = (f"The roof used here {where}: {w.rate(roof.peak_bandwidth, 'B/s')} and {w.rate(roof.peak_flops)}, "
            f"a ridge at {w.number(roof.ridge)} FLOP/byte. A fused chain of {dtype} {_ops(op)} reaches that "
            f"intensity at k = {w.number(cross)}.")
    past = [k for k in ks if k > cross]
    if not past:
        text += (f" Every chain length in the table is shorter, so the model predicts a fused kernel that stays "
                 f"memory-bound and a speed-up equal to k all the way to the longest chain, {_k(ks[-1])}.")
        outcome = "all memory-bound"
    else:
        cap = predicted_speedup(roof, 10 ** 9, op=op, dtype=dtype)
        listed = ", ".join(_k(k) for k in past)
        text += (f" Below that, the predicted speed-up is k; above it the fused kernel is compute-bound and the "
                 f"speed-up levels off at about {w.number(cap)}. In the table that cap applies to the longest "
                 f"chain{'s' if len(past) > 1 else ''}, {listed}.")
        outcome = "some compute-bound"
    return Prose(text, {"outcome": outcome, "ridge": roof.ridge, "crossover_k": cross, "spec": spec,
                        "past_crossover": past})


# --- what torch.compile generated ------------------------------------------------------------

def generated(info: dict, k: int = 4, op: str = "mul") -> Prose:
    """What ``torch.compile`` made of a chain of ``k`` ops (``info`` from
    :func:`brrr.experiments.fusion.inspect_compiled`)."""
    if info.get("error"):
        return Prose(f"`torch.compile` does not work on this machine ({info['error']}), so its sweep below "
                     "records nothing and the figures show the other fusers only. Inductor needs a working "
                     "C++ compiler on a CPU (Triton on a GPU).", {"outcome": "failed"})
    kernels = list(info.get("kernels") or [])
    own = [n for n in kernels if not n.startswith("extern_kernels.")]
    names = ", ".join(f"`{n}`" for n in kernels) or "no kernel at all"
    if len(kernels) == 1 and own:
        text = (f"Inductor turned the chain of {k} {_ops(op, k)} into one kernel, {names}: the chain is read once "
                "and written once, as in the bytes model's fused case.")
        outcome = "one kernel"
    else:
        text = (f"Inductor launched {len(kernels)} kernels for the chain of {k} {_ops(op, k)} ({names}), not "
                "one: on this machine it did not fuse the whole chain, so its fused time below is not "
                "the bytes model's fused case.")
        outcome = "several kernels"
    return Prose(text, {"outcome": outcome, "kernels": kernels})


# --- measured speed-ups ----------------------------------------------------------------------

def curve(result, backend: str) -> dict:
    """One fuser's measured speed-ups: per k the measured and predicted speed-up, the fused and
    unfused efficiencies (roofline time / measured time), the fused FLOP/s and bandwidth."""
    rows = {}
    for r in result.records:
        if r.get("backend") == backend:
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
                       "regime": f.get("predicted_regime"), "library": f.get("library", backend)})
    return {"backend": backend, "points": points, "op": (result.records[0]["op"] if result.records else "mul"),
            "crossover": (result.meta or {}).get("crossover_k"), "roof": _roof_of(result),
            "n": (result.meta or {}).get("n"), "dtype": (result.meta or {}).get("dtype", "float32")}


def backends_of(result) -> list:
    """The fusers a run holds records of, in the order they ran."""
    return list(dict.fromkeys(r["backend"] for r in result.records))


def focus(points: list, k: int = FOCUS_K):
    """The point at chain length ``k``, else the one nearest to it on a log scale."""
    if not points:
        return None
    return min(points, key=lambda p: (abs(math.log(p["k"] / k)), -p["k"]))


def _why(p: dict, c: dict, run) -> str:
    """Why a measured speed-up sits where it does against the prediction: which side moved."""
    rel = _relation(p["speedup"], p["predicted"])
    roof = c["roof"]
    ef, eu = p["eff_fused"], p["eff_unfused"]
    if rel == "above":
        if ef > ABOVE_ROOF:
            return (f" The fused kernel ran faster than its roofline time ({w.times(ef)} the roof's speed): "
                    + _faster_than_roof(run, c))
        return (f" The unfused chain fell further below its roofline time than the fused kernel did: its "
                f"{_k(p['k'])} passes reached {w.percent(eu)} of the roofline's speed, the fused kernel "
                f"{w.percent(ef)}. Every pass is a kernel call with a fixed "
                "cost (a launch, or waking the threads), paid k times, which the bytes model leaves out.")
    if rel == "short of":
        text = (f" The fused kernel fell further below its roofline time than the unfused chain did: it reached "
                f"{w.percent(ef)} of its roofline speed, the unfused passes {w.percent(eu)}.")
        if roof and p["fused_flops"] >= BUSY * roof.peak_flops:
            text += (f" Its arithmetic is no longer free: it ran at {w.percent(p['fused_flops'] / roof.peak_flops)} "
                     "of the roof's peak FLOP/s, and that peak counts a fused multiply-add as two FLOPs, where a "
                     f"{_ops(c['op'], 1)} is one per instruction, so this chain can reach about half of it at most.")
        elif eu > ABOVE_ROOF:
            text += (" The unfused passes ran faster than the roof: " + _faster_than_roof(run, c))
        elif roof:
            text += (f" It ran at {w.percent(p['fused_flops'] / roof.peak_flops)} of the roof's peak FLOP/s and moved "
                     f"its bytes at {w.percent(p['fused_bw'] / roof.peak_bandwidth)} of the roof's bandwidth, far "
                     "from both limits: the time went to what the model leaves out (the loop's own overhead, "
                     "threads waiting for one another, other programs sharing the cores).")
        return text
    return ""


def _faster_than_roof(run, c: dict) -> str:
    """Why a kernel beat the roofline: its arrays fit in a cache, or the roof is too low."""
    dev = (getattr(run, "meta", {}) or {}).get("device") or {}
    llc = dev.get("l2_bytes") or 0
    item = 8 if c.get("dtype") == "float64" else 4
    working = 2 * (c.get("n") or 0) * item
    if llc and working < 4 * llc:
        return (f"source and result together are {w.size(working)}, less than four times the {w.size(llc)} "
                "last-level cache, so part of the traffic came from the cache, which is faster than DRAM.")
    kind = _roof_kind(run)
    return (f"its arrays ({w.size(working)} together) are far larger than any cache, so the {kind} roof "
            "understates this machine's bandwidth for this kernel.")


def _speedup_sentence(c: dict, run, subject: str) -> tuple:
    """'For a chain of 16 ..., the model predicts P; <subject> measured S, <relation> it.' + why."""
    p = focus(c["points"])
    if p is None:
        return "", {}
    rel = _relation(p["speedup"], p["predicted"])
    text = (f"For a chain of {_k(p['k'])} {_ops(c['op'], p['k'])} the model predicts a speed-up of "
            f"{w.number(p['predicted'])}; {subject} measured {w.number(p['speedup'])}, {rel} the prediction.")
    text += _why(p, c, run)
    facts = {"focus_k": p["k"], "speedup": p["speedup"], "predicted": p["predicted"], "relation": rel}
    last = c["points"][-1]
    if last["k"] != p["k"]:
        rel_last = _relation(last["speedup"], last["predicted"])
        text += (f" At the longest chain, {_k(last['k'])} {_ops(c['op'], last['k'])}, the prediction is "
                 f"{w.number(last['predicted'])} and the measurement {w.number(last['speedup'])}, {rel_last} it.")
        if rel_last != rel:
            text += _why(last, c, run)
        facts.update(last_k=last["k"], last_speedup=last["speedup"], last_predicted=last["predicted"],
                     last_relation=rel_last)
    return text, facts


def _skipped(result, backend: str) -> str:
    notes = (getattr(result, "meta", {}) or {}).get("notes", [])
    return next((n.split(": ", 1)[1] for n in notes if n.startswith(f"{backend} skipped")), "")


def kernel_speedups(kernels, references=()) -> Prose:
    """The hand-written fusers' speed-ups against the model, at k = 16 and the longest chain;
    the same for each reference GPU."""
    parts = []
    backends = backends_of(kernels)
    if not backends:
        why = _skipped(kernels, "brrr") or "no fuser could run here"
        parts.append(Prose(f"The hand-written kernels did not run on this machine ({why}), so this run has no "
                           "measured speed-up to set against the model.", {"outcome": "no data"}))
    for b in backends:
        c = curve(kernels, b)
        name = c["points"][0]["library"] if c["points"] else b
        text, facts = _speedup_sentence(c, kernels, f"the `{name}` kernels")
        parts.append(Prose(text, {**facts, "backend": b, "outcome": facts.get("relation")}))
    if "cupy_fuse" not in backends:
        why = _skipped(kernels, "cupy_fuse")
        if why:
            parts.append(Prose(f"`cupy.fuse` was skipped: {why}.", {"cupy_fuse": "skipped"}))
    return with_references(paragraphs(*parts), references, "this sweep", _reference_speedups)


def _reference_speedups(run) -> Prose:
    """A reference run's speed-up against the prediction, a paragraph per fuser."""
    parts = []
    for b in backends_of(run):
        c = curve(run, b)
        p = focus(c["points"])
        if p is None:
            continue
        t = (f"{w.reference_intro(run)}, `{p['library']}` measured a speed-up of {w.number(p['speedup'])} at "
             f"k = {_k(p['k'])} against a prediction of {w.number(p['predicted'])}, "
             f"{_relation(p['speedup'], p['predicted'])} it.")
        parts.append(Prose(t, {f"reference {w.device_of(run)} {b}": p["speedup"]}))
    return paragraphs(*parts)


# --- the bend against the dotted line --------------------------------------------------------

def bend(c: dict) -> dict:
    """Where a fuser's speed-up curve bends relative to the chain length where the fused kernel
    reaches the ridge: at the first point from which the speed-up grows less than
    ``k ** BEND_SLOPE`` does (a log-slope below ``BEND_SLOPE``), both to the next point and to
    the longest chain; the bend lies between that point and the next."""
    pts, cross = c["points"], c["crossover"]
    at = None
    for i, (a, b) in enumerate(zip(pts, pts[1:])):
        # to the next point and on to the end of the sweep: one noisy point is not a bend
        step = math.log(b["speedup"] / a["speedup"]) / math.log(b["k"] / a["k"])
        rest = math.log(pts[-1]["speedup"] / a["speedup"]) / math.log(pts[-1]["k"] / a["k"])
        if step < BEND_SLOPE and rest < BEND_SLOPE:
            at = (a, b)
            break
    kmax = pts[-1]["k"] if pts else None
    if not pts or len(pts) < 2:
        outcome = "too few points"
    elif at is None:
        outcome = "no bend, sweep short" if kmax <= cross else "no bend past the line"
    elif at[1]["k"] <= cross:
        outcome = "before"
    elif at[0]["k"] >= cross:
        outcome = "after"
    else:
        outcome = "at"
    return {"outcome": outcome, "between": (at[0]["k"], at[1]["k"]) if at else None, "crossover": cross,
            "kmax": kmax, "fused_growth": (at[1]["fused_seconds"] / at[0]["fused_seconds"]) if at else None}


def _bend_sentence(c: dict, name: str, subject_cap: str = "The") -> tuple:
    b = bend(c)
    o, cross = b["outcome"], b["crossover"]
    line = f"the dotted line (k = {w.number(cross)})"
    if o == "too few points":
        return "", b
    if o == "no bend, sweep short":
        return (f"{subject_cap} `{name}` curve did not bend within the sweep, which stops at k = {_k(b['kmax'])}, "
                f"before {line}: as the model predicts, fusing kept paying in proportion to the chain's "
                "length.", b)
    last = c["points"][-1]
    if o == "no bend past the line":
        text = (f"{subject_cap} `{name}` curve did not bend even past {line}, up to k = {_k(b['kmax'])}.")
        roof = c["roof"]
        if roof and last["fused_flops"] > ABOVE_ROOF * roof.peak_flops:
            text += (f" Its longest fused chain did {w.rate(last['fused_flops'])}, more than the roof's peak of "
                     f"{w.rate(roof.peak_flops)}: this chain's arithmetic runs faster than the peak in the model, "
                     "so the real crossover lies further right.")
        else:
            text += (f" The longest chain is only {w.times(b['kmax'] / cross)} the crossover, where the model's "
                     f"own curve has barely begun to flatten (it predicts {w.number(last['predicted'])} there, "
                     f"against {_k(b['kmax'])} for a memory-bound chain).")
        return text, b
    a, z = b["between"]
    text = f"{subject_cap} `{name}` curve bends between k = {_k(a)} and {_k(z)}, "
    pa, pb = next(p for p in c["points"] if p["k"] == a), next(p for p in c["points"] if p["k"] == z)
    busy = pb["fused_flops"] / c["roof"].peak_flops if c["roof"] else None
    idle = (f" At k = {_k(z)}, though, the fused kernel ran at only {w.percent(busy)} of the roof's peak FLOP/s, "
            "far from compute-bound: on this run its time went to something the model leaves out (threads "
            "waiting for one another, other programs sharing the cores), so the bend says little about the "
            "roofline here.") if busy is not None and busy < BUSY else ""
    if o == "before":
        text += f"before {line}."
        if b["fused_growth"] and b["fused_growth"] > FLOOR and not idle:
            text += (f" Its fused time grew {w.times(b['fused_growth'])} over that step, and at k = {_k(z)} it ran "
                     f"at {w.percent(busy)} of the roof's peak FLOP/s: the fused kernel became compute-bound sooner "
                     "than the model says. The model's peak counts a fused multiply-add as two FLOPs; a chain of "
                     f"{_ops(c['op'])} issues one FLOP per instruction, so its own compute roof is at most half the "
                     "peak and its crossover at most half as far out. The model is only as good as its peak, and "
                     "the peak has to match the arithmetic being done.")
        elif b["fused_growth"] and b["fused_growth"] > FLOOR:
            text += f" Its fused time grew {w.times(b['fused_growth'])} over that step." + idle
        else:
            text += (" Its fused time barely grew over that step, so the fused kernel is not what bent it: "
                     "the unfused passes took less than k times one pass (on a shared machine, or with arrays "
                     "that partly fit in a cache, the passes get cheaper than the bytes model says).")
    elif o == "at":
        text += f"around {line}, where the model puts it" + (
            "." + idle if idle else ": past it the fused kernel is compute-bound.")
    else:
        text += f"only after {line}: past the model's crossover the fused kernel's time still did not grow with k."
        if c["roof"] and pa["fused_flops"] > ABOVE_ROOF * c["roof"].peak_flops:
            text += (f" At k = {_k(a)} it did {w.rate(pa['fused_flops'])}, more than the roof's peak: this "
                     "chain's arithmetic runs faster than the peak assumes, so its real crossover lies further right.")
        elif c["roof"]:
            text += (f" At k = {_k(a)} it ran at {w.percent(pa['fused_flops'] / c['roof'].peak_flops)} of the "
                     "roof's peak FLOP/s, below the compute roof, so its time was still spent on the bytes, "
                     "which it moved more slowly than the roof's bandwidth.")
    return text, b


def fusers(kernels, compiled, kernels_reference=(), compiled_reference=()) -> Prose:
    """The speed-up figure: torch.compile against the model and the hand-written kernels, and
    where each curve bends relative to the dotted crossover line; the same for the references."""
    parts = []
    own = backends_of(kernels)
    tc = curve(compiled, "torch_compile") if "torch_compile" in backends_of(compiled) else None
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
                text += (f" At k = {_k(p['k'])} its speed-up was {cmp} the `{mine['library']}` kernels' "
                         f"({w.number(p['speedup'])} against {w.number(mine['speedup'])}); its baseline is "
                         "different, though: eager PyTorch, one dispatched operation per link.")
                facts["torch_over_kernels"] = ratio
        parts.append(Prose(text, {f"torch_{k}": v for k, v in facts.items()}))
    bends = []
    for run, b in [(kernels, b) for b in own] + ([(compiled, "torch_compile")] if tc and tc["points"] else []):
        c = curve(run, b)
        text, facts = _bend_sentence(c, c["points"][0]["library"] if c["points"] else b)
        if text:
            bends.append(Prose(text, {f"bend {b}": facts["outcome"], f"bend {b} between": facts["between"]}))
    if bends:
        parts.append(Prose(" ".join(p.text for p in bends), {k: v for p in bends for k, v in p.facts.items()}))
    return with_references(paragraphs(*parts), list(kernels_reference) + list(compiled_reference), "these sweeps",
                           _reference_bends)


def _reference_bends(run) -> Prose:
    """A reference run's speed-up and where its curve bends, a paragraph per fuser."""
    parts = []
    for b in backends_of(run):
        c = curve(run, b)
        if not c["points"]:
            continue
        text, facts = _bend_sentence(c, c["points"][0]["library"], "its")
        p = focus(c["points"])
        t = (f"{w.reference_intro(run)}, `{p['library']}` sped the chain of {_k(p['k'])} up "
             f"{w.number(p['speedup'])} times (predicted: {w.number(p['predicted'])}); {text}")
        parts.append(Prose(t, {f"reference {w.device_of(run)} {b}": facts["outcome"]}))
    return paragraphs(*parts)


# --- the cosine chain ------------------------------------------------------------------------

def _fused(run, backend=None) -> list:
    """(k, seconds per element, roofline seconds per element, n) of a run's fused points."""
    if run is None or not run.records:
        return []
    backend = backend or run.records[0]["backend"]
    pts = [r for r in run.records if r["variant"] == "fused" and r["backend"] == backend]
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
            return f"the {what} chain never left it, up to k = {_k(pts[-1][0])}"
        return f"the {what} chain left it at k = {_k(k)}"
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
        text += (f" From k = {_k(k0)} to {_k(k1)}, each extra cosine added {w.seconds(extra)} per element to the "
                 f"fused kernel's time, as long as {w.number(flops)} FLOP{'s' if flops >= 1.5 else ''} take at the "
                 f"roof's peak of {w.rate(roof.peak_flops)}")
        text += (": counting a cosine as one FLOP badly underestimates it, and puts the real crossover far to "
                 "the left of where the model puts it." if flops >= 2 else
                 ": about the one FLOP the model counts.")
    elif roof:
        facts["cos_cost_flops"] = None
        text += (" Each extra cosine cost too little to see next to the memory traffic: the fused kernel's time "
                 "did not grow with k, so nothing here contradicts the model's count of one FLOP per cosine.")
    c = curve(cos_run, cos_run.records[0]["backend"])
    if c["points"]:
        last = c["points"][-1]
        facts.update(cos_speedup=last["speedup"], cos_k=last["k"])
        frac = last["speedup"] / last["k"]
        if last["speedup"] < 1 - CLOSE:
            text += (f" Fused, the {_k(last['k'])} cosines even ran slower than as {_k(last['k'])} separate passes "
                     f"(a speed-up of {w.number(last['speedup'])}): fusion removes traffic, and here the time was "
                     "arithmetic. In one pass each element goes through its cosines one after another, each "
                     "waiting for the last, where separate passes give the processor independent elements to "
                     "overlap.")
        elif frac < 1 - CLOSE:
            text += (f" Fusing {_k(last['k'])} cosines bought a speed-up of only {w.number(last['speedup'])}, "
                     f"{w.percent(frac)} of the {_k(last['k'])} the bytes alone would give: fusion removes "
                     "traffic, and here most of the time was arithmetic.")
        else:
            text += (f" Fusing {_k(last['k'])} cosines bought a speed-up of {w.number(last['speedup'])}, close to "
                     f"{_k(last['k'])}: the cosines were cheap next to the traffic, so removing traffic paid in full.")
    # points faster than their roofline time
    fast = [(what, k) for what, pts in (("cosine", cos_pts), ("multiplication", mul_pts))
            for k, t, model, _ in pts if t * ABOVE_ROOF < model]
    facts["faster_than_roof"] = len(fast)
    if fast:
        what = sorted({f for f, _ in fast})
        c_run = cos_run if "cosine" in what else kernels
        text += (f" {len(fast)} point{'s' if len(fast) > 1 else ''} of the {' and '.join(what)} chain"
                 f"{'s' if len(what) > 1 else ''} ran faster than the roofline line beside it: "
                 + _faster_than_roof(c_run, curve(c_run, c_run.records[0]["backend"])))
    parts = [Prose(text, facts)]
    if cos_pts[0][3] != (mul_pts[0][3] if mul_pts else cos_pts[0][3]):
        parts.append(Prose(f"The cosine chain ran on {_k(cos_pts[0][3])} elements and the multiplication chain "
                           f"on {_k(mul_pts[0][3])}, which is why the figure plots time per element.",
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
         + (f"left its floor at k = {_k(rk)}" if rk else f"stayed on its floor up to k = {_k(pts[-1][0])}")
         + (f", and each extra cosine cost as long as {w.number(cost[2])} FLOPs at its "
            f"{_roof_kind(run)} peak." if cost else ", so its cosines cost too little to see next to the traffic."))
    return Prose(t, {f"reference {w.device_of(run)} cos cost": cost[2] if cost else None})


# --- epilogue fusion -------------------------------------------------------------------------

def epilogue(epi, references=()) -> Prose:
    """What ``torch.compile`` launched for ``relu(x @ w + b)``, how much faster it ran than eager
    mode against the roofline's bound, and the reference GPUs."""
    from ..experiments.fusion import epilogue_traffic
    meta = epi.meta or {}
    times = {r["variant"]: r for r in epi.records}
    eager, comp = times.get("eager"), times.get("torch.compile")
    shape, dtype = meta.get("shape"), meta.get("dtype", "float32")
    roof = _roof_of(epi)
    facts = {}
    if comp is None:
        why = next((n.split(": ", 1)[1] for n in meta.get("notes", []) if n.startswith("torch.compile")),
                   "it failed")
        text = (f"`torch.compile` could not compile the layer on this machine ({why}), so only eager mode was "
                "timed. The roofline bars still bound what fusing could save for this shape.")
        facts["outcome"] = "not compiled"
    else:
        kernels = list(meta.get("compiled_kernels") or [])
        lib = [k for k in kernels if k.startswith("extern_kernels.")]
        own = [k for k in kernels if k not in lib]
        names = ", ".join(f"`{k}`" for k in kernels) or "no kernel it could name"
        text = f"Here `torch.compile` launched {names}."
        if not lib and len(own) == 1:
            text += " That is one kernel for the matmul, the bias and the ReLU: a true epilogue."
            kind = "one kernel"
        elif any(k.endswith("addmm") for k in lib):
            text += (f" Inductor folded the bias into the matrix library's call (`addmm` computes `b + x @ w` in "
                     f"one pass) and ran the ReLU as {_count(len(own), 'generated loop')}: "
                     + ("one pass over the output instead of two, but not a true epilogue." if len(own) == 1 else
                        "passes over the output after the matmul, not a true epilogue."))
            kind = "addmm + loop"
        elif lib:
            text += (f" The matmul is a library call and the pointwise tail ran as "
                     f"{_count(len(own), 'generated kernel')} after it.")
            kind = "library + kernels"
        else:
            text += f" That is {_count(len(own), 'generated kernel')}."
            kind = "generated kernels"
        facts.update(kernels=kernels, kind=kind)
        speedup = eager["seconds"] / comp["seconds"]
        facts["speedup"] = speedup
        if abs(speedup - 1) <= w.SAME:
            text += f" It ran about as fast as eager mode ({w.number(speedup)} times)."
            outcome = "same"
        elif speedup > 1:
            text += f" It ran {w.number(speedup)} times as fast as eager mode."
            outcome = "faster"
        else:
            spread = max(r.get("iqr", 0) / r["seconds"] for r in (eager, comp))
            facts["spread"] = spread
            text += f" It ran {w.times(1 / speedup)} slower than eager mode" + (
                f": the timings were noisy (an interquartile range of up to {w.percent(spread)} of the median), so "
                "the order of the two may not hold on a quiet machine." if spread > NOISY else
                ": for this shape the compiled code is slower than the library path eager mode takes.")
            outcome = "slower"
        facts["outcome"] = outcome
        if meta.get("compiled_matches_eager") is False:
            text += " Its output differed from eager mode's beyond float32 rounding, which is a bug to report."
    if roof and shape:
        m, n, k = (int(v) for v in shape)
        eager_cost = epilogue_traffic(m, n, k, False, dtype)
        pe = float(roof.time(eager_cost[1], eager_cost[0]))
        pf = float(roof.time(*epilogue_traffic(m, n, k, True, dtype)[::-1]))
        predicted = pe / pf
        facts["predicted_speedup"] = predicted
        if roof.regime(eager_cost[1], eager_cost[0]) == "memory-bound":
            text += (f" The roofline bars say what fusing can save if every kernel ran at the roof: for this shape "
                     f"({_k(m)} × {_k(k)} times {_k(k)} × {_k(n)}) the three eager kernels are memory-bound, the short "
                     "inner dimension makes the matmul's own traffic small, and the epilogue's extra passes over the "
                     f"output are most of the bytes, so a fully fused layer would be {w.number(predicted)} times as "
                     "fast.")
        else:
            text += (f" The roofline bars say what fusing can save if every kernel ran at the roof: for this shape "
                     f"({_k(m)} × {_k(k)} times {_k(k)} × {_k(n)}) the matmul's arithmetic outweighs the epilogue's "
                     f"traffic even unfused, so a fully fused layer would be only {w.number(predicted)} times as fast.")
        eff_e = pe / eager["seconds"]
        facts["eager_efficiency"] = eff_e
        if comp is not None:
            eff_c = pf / comp["seconds"]
            rel = _relation(facts["speedup"], predicted)
            facts.update(compiled_efficiency=eff_c, relation=rel)
            text += (f" The measured speed-up is {rel} that bound: eager mode reached {w.percent(eff_e)} of its "
                     f"roofline speed and the compiled layer {w.percent(eff_c)} of the fully fused one's")
            if rel == "short of" and kind != "one kernel":
                text += (", and the compiled layer is not fully fused: it still makes "
                         f"{'a pass' if len(own) == 1 else f'{len(own)} passes'} over the output after the matmul.")
            elif rel == "above":
                text += ": eager mode fell further below its roof than the compiled layer did, so fusing saved "
                text += "more than the traffic alone accounts for (fewer kernel calls, fewer allocations)."
            else:
                text += "."
            if max(eff_e, eff_c) < 0.1:
                text += (" Both ran far below their roofline times: the roof assumes each kernel reaches the best "
                         "bandwidth and the best matmul rate measured on this device, and a matmul with an inner "
                         f"dimension of {_k(k)} followed by pointwise passes reaches neither."
                         + (" The ratio of the two times still came close to the bars' ratio." if rel == "close to"
                            else ""))
        if eff_e > ABOVE_ROOF:
            text += (f" Eager mode ran faster than its roofline bar ({w.times(eff_e)} the roof's speed): the "
                     f"{w.size(m * n * 4)} output partly stays in the cache between the three kernels, so the "
                     "extra passes did not all go to DRAM.")
        if comp is not None and pf / comp["seconds"] > ABOVE_ROOF:
            text += (f" The compiled layer ran faster than the fully fused bar ({w.times(pf / comp['seconds'])} the "
                     f"roof's speed): its inputs and part of its {w.size(m * n * 4)} output were served from the "
                     f"cache, or the {_roof_kind(epi)} roof understates this device.")
    return with_references(Prose(text, facts), references, "this layer", _reference_epilogue)


def _reference_epilogue(run):
    """A reference run's compiled speed-up and kernels (None where it has no compiled time)."""
    t = {r["variant"]: r["seconds"] for r in run.records}
    if "eager" not in t or "torch.compile" not in t:
        return None
    s = t["eager"] / t["torch.compile"]
    kernels = ", ".join(f"`{k}`" for k in run.meta.get("compiled_kernels", [])) or "kernels it did not name"
    return Prose(f"{w.reference_intro(run)}, `torch.compile` ran the layer {w.number(s)} times as fast as eager mode, "
                 f"launching {kernels}.", {f"reference {w.device_of(run)}": s})
