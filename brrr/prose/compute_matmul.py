"""Chapter 1, compute: how the square-matmul FLOP/s rose with n, where it flattened and at what
fraction of the peak line; and the shape of a curve (:func:`curve`), which the chapter's other
sentences share.
"""
from __future__ import annotations

from . import Prose, with_references
from . import words as w
from .words import ABOVE_ROOF

PLATEAU = 0.8       # points at 80% or more of a curve's best are "on its plateau"
FLAT = 1.3          # best / worst below this: the curve is flat
DIP = 0.7           # a point below 70% of the one before it, on the way up, is a dip
HALF = 0.5          # where a curve first reaches half its best
THIS_RUNS_BEST = "this run's best"


# --- the shape of a curve ---------------------------------------------------------------------

def curve(xs, ys) -> dict:
    """The shape of ``ys`` against increasing ``xs``: 'flat', 'falls after its best', 'uneven' (back near
    the best after a fall), 'still rising' or 'flattens' (from ``plateau_x``, every point at PLATEAU of the
    best); ``half_x``, the first x at half the best; ``dips``, falls by 1 - DIP on the way up."""
    pairs = sorted(zip(xs, ys))
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    best = max(ys)
    i_best = ys.index(best)
    start = len(ys)   # the plateau: the trailing points at PLATEAU * best or more (none: len)
    while start > 0 and ys[start - 1] >= PLATEAU * best:
        start -= 1
    if best < FLAT * min(ys):
        shape = "flat"
    elif ys[-1] < PLATEAU * best:
        shape = "falls after its best"
    elif i_best < start:
        shape = "uneven"
    elif start == len(ys) - 1:
        shape = "still rising"
    else:
        shape = "flattens"
    dips = [(xs[i], xs[i + 1]) for i in range(i_best) if ys[i + 1] < DIP * ys[i]]
    half_x = next(x for x, y in zip(xs, ys) if y >= HALF * best)
    low = min(range(i_best, len(ys)), key=ys.__getitem__)
    return {"shape": shape, "best": best, "best_x": xs[i_best], "first": ys[0], "first_x": xs[0],
            "last": ys[-1], "last_x": xs[-1], "plateau_x": xs[start] if start < len(ys) else None,
            "half_x": half_x, "dips": dips, "low_x": xs[low], "low": ys[low], "xs": xs, "ys": ys}


def _uneven(c: dict, what: str, value) -> str:
    """The sentence for an 'uneven' curve (``value`` formats a y value)."""
    return (f" The curve is uneven: after its best at {what} = {w.number(c['best_x'])} it fell to {value(c['low'])} "
            f"at {what} = {w.number(c['low_x'])}, then came back to {value(c['last'])} at {what} = "
            f"{w.number(c['last_x'])}; rerunning the sweep shows whether the fall repeats.")


def _dips(c: dict, what: str, worse: str) -> str:
    """A sentence on the dips of curve ``c`` (x named ``what``; ``worse``: 'ran at fewer FLOP/s than')."""
    if not c["dips"]:
        return ""
    a, b = c["dips"][0]
    more = f" (and {len(c['dips']) - 1} more such dip{'s' if len(c['dips']) > 2 else ''})" if len(c["dips"]) > 1 else ""
    return (f" The rise is not smooth: {what} = {w.number(b)} {worse} {what} = {w.number(a)}{more}; "
            "rerunning the sweep shows whether the dip repeats.")


def _kind_of_peak(result) -> str:
    return "measured roof" if w.is_cpu(result) else "spec-sheet peak"


# --- matmul throughput against size -----------------------------------------------------------

def _matmul_curve(result) -> dict:
    recs = [r for r in result.records if r.get("op", "matmul") == "matmul"]
    c = curve([r["n"] for r in recs], [r["gflops"] * 1e9 for r in recs])
    c["peak"] = max(r["peak_flops"] for r in recs)
    c["fractions"] = {r["n"]: r["gflops"] * 1e9 / r["peak_flops"] for r in recs}
    c["above"] = sorted(n for n, f in c["fractions"].items() if f > ABOVE_ROOF)
    c["dtype"] = recs[0].get("dtype", "float32")
    return c


def _above_roof_sentence(result, above: list, what: str) -> str:
    """Why points measured above the peak line (a CPU's measured roof, or a spec sheet)."""
    if not above:
        return ""
    names = ", ".join(f"{what} = {w.number(x)}" for x in above)
    if w.is_cpu(result):
        return (f" {names} measured above the line: it is a measured roof (the best of a few NumPy matmuls "
                "timed once), not the hardware's peak, so a run can beat it.")
    return (f" {names} measured above the spec-sheet peak, which no part should do for long: the datasheet "
            "figure assumes a clock this part exceeded, or the timing was disturbed.")


def _roof_size(result):
    """The matmul size a CPU's measured roof was taken at ('... 2048x2048 np.matmul'), else None."""
    import re
    if not w.is_cpu(result):
        return None
    found = re.search(r"(\d+)x\1 np\.matmul", (result.meta.get("device") or {}).get("source", ""))
    return int(found.group(1)) if found else None


def matmul_curve(result, references=()) -> Prose:
    """How the square-matmul FLOP/s rose with n on this device and on each reference GPU,
    where it flattened and at what fraction of the peak line."""
    c = _matmul_curve(result)
    kind = _kind_of_peak(result)
    frac = lambda n: w.percent(c["fractions"][n])  # noqa: E731
    text = (f"On {w.device_of(result)}, the {c['dtype']} matmul went from {w.rate(c['first'])} at n = "
            f"{w.number(c['first_x'])} ({frac(c['first_x'])} of the {kind}, {w.rate(c['peak'])}) to a best of "
            f"{w.rate(c['best'])} at n = {w.number(c['best_x'])} ({frac(c['best_x'])}).")
    if c["shape"] == "flattens":
        text += (f" From n = {w.number(c['plateau_x'])} on, the curve flattens: every larger matrix ran within "
                 f"{w.percent(1 - PLATEAU)} of the best.")
        if c["best"] >= HALF * c["peak"]:
            text += " There the matmul is compute-bound."
        else:
            text += f" It levels off at only {frac(c['best_x'])} of the {kind}."
    elif c["shape"] == "still rising":
        text += (f" It was still rising at the largest size, n = {w.number(c['last_x'])}: this sweep stopped "
                 "before the curve flattened" + (" (the quick build stops at small matrices)."
                                                 if result.meta.get("quick") else "."))
    elif c["shape"] == "falls after its best":
        text += (f" Past its best it fell again: n = {w.number(c['last_x'])} ran at {w.rate(c['last'])}, "
                 f"{w.percent(c['last'] / c['best'])} of the best.")
        llc = (result.meta.get("device") or {}).get("l2_bytes") or 0
        item = 2 if c["dtype"] in ("float16", "bfloat16") else 8 if c["dtype"] == "float64" else 4
        if llc and 3 * item * c["best_x"] ** 2 <= llc < 3 * item * c["last_x"] ** 2:
            text += (f" The three matrices of n = {w.number(c['last_x'])} ({w.size(3 * item * c['last_x'] ** 2)}) "
                     f"no longer fit in the {w.size(llc)} last-level cache.")
        else:
            text += " Rerunning the sweep shows whether it repeats."
    elif c["shape"] == "uneven":
        text += _uneven(c, "n", w.rate)
    else:
        text += " The curve barely changed across the sweep."
    text += _dips(c, "n", "ran at fewer FLOP/s than")
    text += _above_roof_sentence(result, c["above"], "n")
    roof_n = _roof_size(result)
    busy = roof_n in c["fractions"] and c["fractions"][roof_n] < HALF
    if busy:
        text += (f" At n = {w.number(roof_n)}, the very size the measured roof was taken at, this run reached only "
                 f"{frac(roof_n)} of it (the roof is the best of a few calls, this a median of many); rerunning the "
                 "sweep shows whether the gap repeats.")
    facts = {"outcome": c["shape"], "best_flops": c["best"], "best_n": c["best_x"], "peak": c["peak"], "busy": busy,
             "best_fraction": c["best"] / c["peak"], "first_fraction": c["fractions"][c["first_x"]],
             "plateau_n": c["plateau_x"], "half_n": c["half_x"], "above_roof": c["above"]}
    return with_references(Prose(text, facts), references, "this sweep", lambda run: _reference_matmul(run, c))


def _reference_matmul(run, c: dict) -> Prose:
    """A reference run's matmul curve against this run's (``c``)."""
    r = _matmul_curve(run)
    t = (f"{w.reference_intro(run)}, the same sweep went from {w.percent(r['fractions'][r['first_x']])} of "
         f"its {_kind_of_peak(run)} at n = {w.number(r['first_x'])} to "
         f"{w.percent(r['fractions'][r['best_x']])} at n = {w.number(r['best_x'])} ({w.rate(r['best'])}, "
         f"{w.relative(r['best'], c['best'], THIS_RUNS_BEST)})")
    t += (f", flattening from n = {w.number(r['plateau_x'])}." if r["shape"] == "flattens" else
          ", still rising at its largest size." if r["shape"] == "still rising" else ".")
    if r["half_x"] > c["half_x"]:
        t += (f" It needed larger matrices to get going: it first reached half its best at n = "
              f"{w.number(r['half_x'])}, this run at n = {w.number(c['half_x'])}.")
    elif r["half_x"] < c["half_x"]:
        t += (f" It reached half its best sooner, at n = {w.number(r['half_x'])} against this run's "
              f"n = {w.number(c['half_x'])}.")
    else:
        t += f" Both reached half their best at the same size, n = {w.number(r['half_x'])}."
    return Prose(t, {f"reference {w.device_of(run)}": r["shape"], f"reference {w.device_of(run)} best": r["best"]})
