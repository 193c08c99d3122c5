"""Chapter 3, overhead: time against size (the flat part, where the time doubled, the linear end),
PyTorch's fixed cost against NumPy's, and precisely what that fixed cost measures."""
from __future__ import annotations

import math

from . import Prose, paragraphs, with_references
from . import words as w

FLAT_WITHIN = 1.5     # a size is on the flat part while its time stays within 1.5x the fixed cost
FLAT_SPAN = 16        # a curve has a flat part when it stays flat over at least a 16-fold range of sizes
LINEAR = 0.7          # the last step of the sweep grew the time by >= 70% of proportional: linear
NAMES = {"numpy": "NumPy", "torch": "PyTorch", "cupy": "CuPy"}


def _name(library: str) -> str:
    return NAMES.get(library, library)


def _where(backend: str) -> str:
    return "on the GPU" if backend == "cuda" else "on the CPU"


def _n(value: float) -> str:
    """A fitted count of elements: '3,900' (three significant digits above 1,000)."""
    if value >= 1000:
        digits = int(math.floor(math.log10(value))) - 2
        return f"{round(value, -digits):,.0f}"
    return f"{value:,.0f}"


def _sizes(values) -> str:
    """'1, 4 and 16'."""
    return w.listing(w.integer(v) for v in values)


def curve(result, library: str) -> dict:
    """The shape of one library's ``time_vs_size`` curve: the fit, where the flat part ends (the time leaves
    ``FLAT_WITHIN`` x the fixed cost for good), where it had doubled for good, the last step's growth."""
    from ..experiments.overhead import fit_overhead
    fit = fit_overhead(result, library)
    rows = sorted((r for r in result.records if r["library"] == library), key=lambda r: r["size"])
    sizes = [r["size"] for r in rows]
    times = [r["seconds"] for r in rows]
    fixed = fit["overhead"]

    def leaves_for_good(limit):
        for k in range(len(rows)):
            if all(t > limit for t in times[k:]):
                return k
        return None
    k_flat = leaves_for_good(FLAT_WITHIN * fixed)
    flat_until = sizes[-1] if k_flat is None else sizes[max(k_flat - 1, 0)]
    left_flat = None if k_flat is None else sizes[k_flat]
    k_double = leaves_for_good(2 * fixed - 1e-15)
    doubled_at = None if k_double is None else sizes[k_double]
    # points on the flat part that strayed out of the band and came back: one-off spikes, named as such
    outliers = [(sizes[i], times[i]) for i in range(len(rows) if k_flat is None else k_flat)
                if times[i] > FLAT_WITHIN * fixed]
    growth = times[-1] / times[-2]
    step = sizes[-1] / sizes[-2]
    # By the model the smallest sizes cost the same: how far apart their times are (leaving out the
    # highest and the lowest) is this run's noise.
    small = sorted(times[:len(fit["fixed_cost_sizes"])])
    small = small[1:-1] if len(small) > 3 else small
    noise = (max(small) - min(small)) / fixed
    return {**fit, "name": _name(library), "first": sizes[0], "first_seconds": times[0], "largest": sizes[-1],
            "flat_until": flat_until, "left_flat": left_flat, "outliers": outliers,
            # flat: from the smallest size (not far below the fixed cost, or the curve rises from the
            # start) to at least FLAT_SPAN times it, before the time leaves the band for good
            "has_flat": (k_flat != 0 and flat_until >= FLAT_SPAN * sizes[0]
                         and times[0] >= fixed / FLAT_WITHIN),
            "whole_flat": k_flat is None and times[0] >= fixed / FLAT_WITHIN,
            "doubled_at": doubled_at, "growth": growth, "step": step,
            "linear": math.log(max(growth, 1e-12)) >= LINEAR * math.log(step),
            "noise": noise, "fixed": fixed, "points": list(zip(sizes, times)),
            "bytes_per_element": (rows[-1].get("nbytes") or 0) / rows[-1]["size"],
            "peak_bandwidth": ((result.meta or {}).get("device") or {}).get("peak_bandwidth")
            if rows[0]["backend"] == ((result.meta or {}).get("device") or {}).get("backend") else None}


def curves(result) -> dict:
    """:func:`curve` for every library of a ``time_vs_size`` result, in the order they ran."""
    return {lib: curve(result, lib) for lib in dict.fromkeys(r["library"] for r in result.records)}


def _outliers(c: dict) -> str:
    """'one outlier at 16 elements (1.9 µs)', 'two outliers at 16 and 64 elements (1.9 µs and 2 µs)'."""
    out = c.get("outliers") or []
    return (f"{w.spelled(len(out))} outlier{'s' if len(out) > 1 else ''} at {_sizes(s for s, _ in out)} "
            f"element{'s' if len(out) > 1 or out[0][0] != 1 else ''} ({w.listing(w.seconds(t) for _, t in out)})"
            if out else "")


def _per_element(seconds: float) -> str:
    """'2.69 ps' below a nanosecond, else as :func:`~.words.seconds` writes it."""
    return f"{w.number(seconds * 1e12)} ps" if 0 < seconds < 1e-9 else w.seconds(seconds)


def _implied_bandwidth(c: dict) -> str:
    """', the bytes of one element (12 for an add) at 4.45 TB/s, 93% of the device's bandwidth'."""
    if not c["bytes_per_element"] or c["per_element"] <= 0:
        return ""
    bw = c["bytes_per_element"] / c["per_element"]
    text = f": {w.integer(c['bytes_per_element'])} bytes per element at {w.rate(bw, 'B/s')}"
    if c["peak_bandwidth"]:
        text += f", {w.percent(bw / c['peak_bandwidth'])} of the device's peak bandwidth"
        if bw > w.ABOVE_ROOF * c["peak_bandwidth"]:
            text += ", above it: part of these bytes stayed in a cache, or that peak (on a CPU, one copy measured once) is not this machine's limit"
    return text


def _at_crossover(c: dict) -> str:
    """What a call cost at the sweep's size nearest the fitted crossover, against the fixed cost:
    about twice it where the host's cost and the work add up, about once where one hides the other."""
    n, t = min(c["points"], key=lambda p: abs(math.log(p[0] / c["crossover"])))
    text = (f" At {w.integer(n)} elements, the sweep's size nearest that crossover, a call took "
            f"{w.times(t / c['fixed'])} the fixed cost")
    if t / c["fixed"] < FLAT_WITHIN:
        text += ": nearer the larger of the fixed cost and the work than their sum (twice the fixed cost)"
    return text + "."


def _curve_sentence(c: dict) -> str:
    who = f"{c['name']} {_where(c['backend'])}"
    fixed = w.seconds(c["fixed"])
    spikes = _outliers(c)
    if c["whole_flat"]:
        return (f"{who} stayed flat across the whole sweep, at about {fixed} per call up to "
                f"{w.integer(c['largest'])} elements{f' (apart from {spikes})' if spikes else ''}: the sweep never "
                "reached a size where the work outweighs the fixed cost.")
    if c["has_flat"]:
        text = (f"{who} has a flat part: {f'apart from {spikes}, ' if spikes else ''}its time stayed within "
                f"{w.number(FLAT_WITHIN)} times its fixed cost of {fixed} from {w.integer(c['first'])} up to "
                f"{w.integer(c['flat_until'])} elements.")
    elif c["left_flat"] is None or c["flat_until"] >= FLAT_SPAN * c["first"]:
        text = (f"{who} has no flat part to speak of: its time grew from the smallest size on, from "
                f"{w.seconds(c['first_seconds'])} at {w.integer(c['first'])} element{'s' if c['first'] != 1 else ''} "
                f"to {fixed} (the fixed cost, a "
                "median over the smallest sizes), so even small calls here do work that shows.")
    else:
        text = (f"{who} has no flat part to speak of: its time left {w.number(FLAT_WITHIN)} times its fixed cost "
                f"of {fixed} by {w.integer(c['left_flat'])} elements, so even small calls here do work that shows.")
    if c["doubled_at"] is not None:
        text += f" The time had doubled, for good, by {w.integer(c['doubled_at'])} elements"
        if math.isfinite(c["crossover"]):
            text += f"; the fit puts the size where the work equals the fixed cost at {_n(c['crossover'])}"
            apart = c["crossover"] / c["doubled_at"]
            if apart < 1 / 4 or apart > 4:
                text += (f", {'well below' if apart < 1 else 'well above'} where the time doubled: the fit takes its "
                         "cost per element from the largest sizes")
        text += "." + (_at_crossover(c) if math.isfinite(c["crossover"]) else "")
    else:
        text += f" Its time never doubled within the sweep (up to {w.integer(c['largest'])} elements)."
    if c["growth"] > 1.5 * c["step"]:
        text += (f" Over the last step ({w.number(c['step'])} times the size) the time grew {w.times(c['growth'])}, "
                 "more than in proportion: each element got dearer. The fit's cost per element, "
                 f"{_per_element(c['per_element'])}, is that of the largest sizes{_implied_bandwidth(c)}.")
    elif c["linear"]:
        text += (f" Over the last step ({w.number(c['step'])} times the size) the time grew {w.times(c['growth'])}: "
                 f"that is the linear part, at {_per_element(c['per_element'])} per element{_implied_bandwidth(c)}.")
    else:
        text += (f" Over the last step ({w.number(c['step'])} times the size) the time grew only "
                 f"{w.times(c['growth'])}: the linear part had not fully begun where the sweep stopped.")
    return text


def _fixed_costs_compared(cs: dict) -> tuple:
    """(outcome, sentence) comparing PyTorch's fixed cost with NumPy's."""
    if "numpy" not in cs or "torch" not in cs:
        return None, ""
    n, t = cs["numpy"], cs["torch"]
    ratio = t["fixed"] / n["fixed"]
    margin = max(w.SAME, n["noise"], t["noise"])
    if t["backend"] == "cuda":
        return "torch on GPU", (
            f"PyTorch on the GPU cost {w.seconds(t['fixed'])} per call against NumPy's {w.seconds(n['fixed'])} on "
            "the CPU, but these are two libraries: timing `torch.add` on CPU tensors as well would show how much "
            "of the difference is the GPU's launch.")
    if abs(ratio - 1) <= margin:
        return "same", (f"PyTorch's fixed cost ({w.seconds(t['fixed'])}) was about the same as NumPy's "
                        f"({w.seconds(n['fixed'])}) on this run: the difference is within its noise.")
    if ratio > 1:
        return "torch larger", (
            f"PyTorch's fixed cost was {w.times(ratio)} NumPy's on this run ({w.seconds(t['fixed'])} against "
            f"{w.seconds(n['fixed'])}).")
    return "torch smaller", (
        f"PyTorch's fixed cost was lower than NumPy's on this run ({w.seconds(t['fixed'])} against "
        f"{w.seconds(n['fixed'])}); the next section times both calls side by side.")


def time_vs_size(result, references=()) -> Prose:
    """Per library: is there a flat part, where does it end, where did the time double, is the end
    linear; PyTorch's fixed cost against NumPy's; the same for each reference run."""
    cs = curves(result)
    parts = [Prose(" ".join(_curve_sentence(c) for c in cs.values()),
                   {"outcome": {lib: ("whole flat" if c["whole_flat"] else "flat then rising" if c["has_flat"]
                                      else "no flat part") for lib, c in cs.items()},
                    "fixed": {lib: c["fixed"] for lib, c in cs.items()},
                    "flat_until": {lib: c["flat_until"] for lib, c in cs.items()},
                    "doubled_at": {lib: c["doubled_at"] for lib, c in cs.items()}})]
    outcome, sentence = _fixed_costs_compared(cs)
    if sentence:
        parts.append(Prose(sentence, {"torch_vs_numpy": outcome}))
    return with_references(paragraphs(*parts), references, "this sweep", lambda run: _reference_sizes(run, cs))


def _reference_sizes(run, cs: dict) -> Prose:
    """A reference run's fixed cost and doubling size per library, against this run's curves ``cs``."""
    rc = curves(run)
    bits = []
    for lib, c in rc.items():
        bit = f"{c['name']} {_where(c['backend'])} cost {w.seconds(c['fixed'])} per call"
        if c["doubled_at"] is not None:
            bit += f" and its time had doubled by {w.integer(c['doubled_at'])} elements"
            live = cs.get(lib)
            if live and live["doubled_at"] and c["backend"] != live["backend"]:
                bit += f", {w.times(c['doubled_at'] / live['doubled_at'])} as many as here"
        else:
            bit += f" and stayed flat up to its largest size, {w.integer(c['largest'])} elements"
        bits.append(bit)
    t = f"{w.reference_intro(run)}, " + "; ".join(bits) + "."
    return Prose(t, {f"reference {w.device_of(run)}": {lib: c["fixed"] for lib, c in rc.items()}})


# --- what the fixed cost measures -------------------------------------------------------------

def fixed_cost(result) -> Prose:
    """Precisely what this chapter's fixed cost measures: which call, which library, threads,
    how it is fitted (from the result's records and meta)."""
    cs = curves(result)
    bits = []
    for lib, c in cs.items():
        how = f"`{c['call']}` {_where(c['backend'])}"
        if c["backend"] == "cpu" and lib == "torch":
            threads = c["threads"]
            how += ((" with PyTorch held to one CPU thread" if threads == 1 else
                     f" with PyTorch held to {threads} CPU threads") if threads else
                    " at PyTorch's default number of CPU threads")
        elif c["backend"] == "cpu" and lib == "numpy":
            how += " (one thread, as NumPy's elementwise operations always run)"
        bits.append(f"{w.seconds(c['fixed'])} for {how}")
    first = next(iter(cs.values()))
    sizes = _sizes(first["fixed_cost_sizes"])
    gpu = any(c["backend"] == "cuda" for c in cs.values())
    text = ("What exactly is this fixed cost? It is the median, over the "
            f"{len(first['fixed_cost_sizes'])} smallest sizes of the sweep ({sizes} `{first['dtype']}` "
            "elements), of each size's median wall-clock time per call, with the calls made back to "
            "back in a Python loop and timed by the host's clock: " + "; ".join(bits) + ". It includes the "
            "interpreter's cost of making the call, the library's argument parsing and dispatch, and the "
            "arithmetic on a handful of elements; it leaves out allocating the result, which the call writes "
            "into a preallocated `out`.")
    if gpu:
        text += (" On the GPU the calls are issued in blocks that are synchronised once, so the time per call "
                 "is the larger of the host's cost to issue it and the GPU's cost to run it.")
    from ..experiments.overhead import PER_ELEMENT_SIZES
    text += (f" The cost per element comes from the {PER_ELEMENT_SIZES} largest sizes"
             + (": on the CPU, their time less the fixed cost; on the GPU, their whole time, since the host's cost "
                "hides behind kernels that run longer than it" if gpu else ", their time less the fixed cost")
             + "; the crossover is the fixed cost divided by it. Another way of timing \"one call\" gives another "
             "number, as the next section shows.")
    return Prose(text, {"fixed": {lib: c["fixed"] for lib, c in cs.items()},
                        "calls": {lib: c["call"] for lib, c in cs.items()},
                        "sizes": first["fixed_cost_sizes"]})
