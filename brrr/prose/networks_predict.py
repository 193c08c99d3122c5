"""Chapter 6: AI_c and DI against the measured time of whole networks and of each kind of layer
(:func:`brrr.intensity_predict.measure_networks`, :func:`~brrr.intensity_predict.measure_layer_kinds`).
"""
from __future__ import annotations

import math
from statistics import median as statistics_median

from . import Prose, with_references
from . import words as w
from ..intensity_paper import PAPER_EQ6, PAPER_TABLE_VI
from ..results import needs_measurements

BETTER = 0.10      # one metric's r above the other's by more than this "tracks better"
OUT_OF_LINE = 10.0  # a network (or kind) whose ratio is this many times the median one's is "out of line"
NEAR_ROOF = 0.5    # a network that reached half the peak or more "runs near the compute roof"
FLAT_R = 0.03      # alphas whose r is within this of the sweep's highest are "near the top"
FLAT_WIDE = 0.2    # a top spanning this much alpha or more is "flat": the peak's position means little

_WORDS = {"ai_c_seconds": "the whole network as one kernel at its $AI_c$",
          "di_seconds": "the whole network as one kernel at its DI",
          "conv_fc_seconds": "the sum over its Conv and FC layers, each on the roof",
          "all_layers_seconds": ("the sum over every layer, each on the roof (BatchNorm, ReLU, pooling and "
                                 "additions included)")}


def _ratios(result) -> dict:
    """{prediction: {network: measured / predicted}}."""
    return {col: {r["network"]: r["seconds"] / r[col] for r in result.records} for col in _WORDS}


def network_predictions(result, references=()) -> Prose:
    """Whether the four predictions held as lower bounds, which came closest, which network it
    missed most, and what the run measured of fixed costs, caches and noise."""
    ratios = _ratios(result)
    device = w.device_of(result)
    every = [x for per in ratios.values() for x in per.values()]
    faster = sorted({n for per in ratios.values() for n, x in per.items() if x < 1 / w.ABOVE_ROOF})
    facts = {"faster_than_predicted": faster}
    text = f"On {device}, "
    if not faster:
        text += (f"every network took longer than every prediction, from {w.times(min(every))} to "
                 f"{w.times(max(every))} the predicted time: the roofline held as a lower bound. ")
        facts["outcome"] = "lower bound"
    else:
        text += (f"{w.listing(faster)} ran faster than at least one prediction, which a roofline should not "
                 "allow. ")
        text += ("Here the roof is the measured one, from a single NumPy copy and one BLAS matmul, which "
                 "PyTorch's kernels beat. "
                 if w.is_cpu(result) else
                 "Data that stayed in cache between layers, which the byte counts (made for DRAM) do not credit, "
                 "would allow it. ")
        facts["outcome"] = "faster than predicted"
    spread = {col: statistics_median([abs(math.log(x)) for x in per.values()]) for col, per in ratios.items()}
    best = min(spread, key=spread.get)
    facts["closest"] = best
    median = statistics_median(list(ratios[best].values()))
    text += (f"The closest prediction was {_WORDS[best]}: the median network took {w.times(median)} the time "
             "it predicts.")
    worst = max(ratios[best], key=ratios[best].get)
    facts["worst"] = worst
    text += (f" It missed {worst} most ({w.times(ratios[best][worst])} the predicted time).")
    odd = [n for n, x in ratios[best].items() if x > OUT_OF_LINE * median]
    facts["out_of_line"] = odd
    if odd:
        text += (f" {w.listing(odd)} {'is' if len(odd) == 1 else 'are'} far out of line with the others (more than "
                 f"{w.number(OUT_OF_LINE)} times the median network's ratio). Run the cell again to see whether it "
                 "repeats.")
    text += _overhead_words(result, median, facts)
    cached = [r["network"] for r in result.records
              if any(str(x).startswith("cache-resident") for x in r.get("warnings", []))]
    facts["cache_resident"] = cached
    if cached:
        text += (f" `brrr.bench` flagged {w.listing(cached)} as cache-resident: {'its' if len(cached) == 1 else 'their'} "
                 "weights and activations together are under four times this device's last-level cache.")
    noisy = [r["network"] for r in result.records if any(str(x).startswith("noisy") for x in r.get("warnings", []))]
    facts["noisy"] = noisy
    if noisy:
        text += (f" `brrr.bench` warned that the timings of {w.listing(noisy)} were noisy (their samples "
                 "spread widely), so read these ratios to one significant digit.")
    return with_references(Prose(text, facts), references, "these network timings",
                           lambda run: Prose(f"{w.reference_intro(run)}, the median network took "
                                             f"{w.times(statistics_median(list(_ratios(run)[best].values())))} "
                                             "the time the same prediction gives there."))


def _overhead_words(result, median: float, facts: dict) -> str:
    """Which networks are overhead-bound by the book's rule (Chapter 3), where the run counted
    operators and a call's cost; without those, how to test it when the times lie far above the roof."""
    from ..intensity_predict import overhead_bound
    over = overhead_bound(result)
    if not over:
        if median <= OUT_OF_LINE:
            return ""
        facts["overhead"] = "not measured"
        return (f" A time {w.times(median)} what the roofline gives is set by neither of its two terms. Dividing "
                "each time by the operators its forward pass runs, timing a larger batch, or replaying the forward "
                "pass with CUDA graphs (Chapter 3) would test whether a fixed cost per kernel sets it; until then, "
                "read these times as the price of one image at a time, not as a test of $AI_c$ or DI.")
    bound = sorted(n for n, o in over.items() if o["overhead_bound"])
    facts["overhead_bound"] = bound
    call = result.meta["call_seconds"]
    per_op = {r["network"]: r["seconds"] / r["operators"] for r in result.records if r["network"] in over}
    shares = [over[n]["share_of_time"] for n in over]
    text = (f" Divided by the operators each forward pass dispatched, the time per operator was {w.seconds(min(per_op.values()))} "
            f"to {w.seconds(max(per_op.values()))}; a minimal PyTorch call costs {w.seconds(call)} on this machine, so "
            f"the operators' fixed cost alone is {w.percent(min(shares))} to {w.percent(max(shares))} of the measured "
            "times.")
    if bound:
        rest = sorted(set(over) - set(bound))
        text += (f" By the book's rule (Chapter 3) {w.listing(bound)} {'is' if len(bound) == 1 else 'are'} "
                 "overhead-bound at this batch: that fixed cost is at least the time the roofline gives "
                 f"{'it' if len(bound) == 1 else 'them'}, so {'its time says' if len(bound) == 1 else 'their times say'} "
                 "little about $AI_c$ or DI" + (f"; only {w.listing(rest)} {'is' if len(rest) == 1 else 'are'} not." if rest
                                                else "."))
    else:
        text += " By the book's rule (Chapter 3) none of the networks is overhead-bound at this batch."
    return text


def bound_calls(result, bounds: dict) -> Prose:
    """Where AI_c and DI put a network on different sides of the live ridge (``bounds``:
    :func:`brrr.intensity_predict.bounds`), and which call the measured share of each roof bears out."""
    split = {n: b for n, b in bounds.items() if b["ai_c"] != b["di"]}
    memory = sorted(n for n, b in bounds.items() if b["ai_c"] == b["di"] == "memory")
    facts = {"disagree": sorted(split), "both_memory": memory}
    if not split:
        text = "On this device's roof, $AI_c$ and DI put every network on the same side of the ridge"
        text += (f" ({w.listing(memory)} left of it, the rest right of it)." if memory else
                 ": right of it, compute-bound.")
        facts["outcome"] = "agree"
        return Prose(text, facts)
    parts = []
    for n, b in split.items():
        # a metric is borne out only where the network came near the roof that metric puts it under
        near = {m: b.get(f"{m}_roof_share", b["share"] if b[m] == "compute" else 0.0) >= NEAR_ROOF
                for m in ("ai_c", "di")}
        side = "both" if all(near.values()) else "DI" if near["di"] else "$AI_c$" if near["ai_c"] else "neither"
        shares = ", ".join(f"{w.percent(b[f'{m}_roof_share'])} of the {b[m]} roof {label} puts it under"
                           for m, label in (("ai_c", "$AI_c$"), ("di", "DI")) if f"{m}_roof_share" in b)
        how = f"it reached {w.percent(b['share'])} of the float32 peak FLOP/s" + (f", {shares}" if shares else "")
        parts.append(f"{n} ({b['ai_c']}-bound by $AI_c$, {b['di']}-bound by DI: {how})")
        facts[n] = side
    text = (f"$AI_c$ and DI disagree about the side of this device's ridge for {w.listing(parts)}. ")
    sides = {facts[n] for n in split}
    if sides == {"neither"}:
        text += ("Each of them stayed far below the roof of both metrics (under "
                 f"{w.percent(NEAR_ROOF)} of it), so the measurement sides with neither.")
        facts["outcome"] = "neither"
    elif sides in ({"$AI_c$"}, {"DI"}):
        m = next(iter(sides))
        text += f"The measurement sides with {m} here: each came near the roof {m} puts it under."
        facts["outcome"] = "ai_c" if m == "$AI_c$" else "di"
    else:
        text += ("Which metric the measurement bears out differs from network to network: a network supports a "
                 "metric's call only where it came near the roof that metric puts it under.")
        facts["outcome"] = "mixed"
    if memory:
        text += f" Both metrics put {w.listing(memory)} left of the ridge."
    return Prose(text, facts)


def throughput_correlation(corr: dict, sweep) -> Prose:
    """AI_c's and DI's correlation with throughput (``corr``: :func:`brrr.intensity_predict.correlations`),
    the paper's Fisher interval, and the alpha sweep (:func:`~brrr.intensity_predict.alpha_sweep`)."""
    n, r_ai, r_di = corr["n"], corr["ai_c"], corr["di"]
    text = (f"Over these {n} networks, the correlation between throughput and $AI_c$ is r = {w.number(r_ai, 2)}, "
            f"and between throughput and DI r = {w.number(r_di, 2)}. ")
    paper = PAPER_TABLE_VI
    cited = (f"r = {w.listing(w.number(paper[(g, 'DI')], 2) for g in ('P4000', 'P100'))} for DI against "
             f"{w.listing(w.number(paper[(g, 'AIc')], 2) for g in ('P4000', 'P100'))} for $AI_c$ on the P4000 "
             "and the P100, its Table VI")
    if abs(r_di - r_ai) > BETTER:
        outcome = "di" if r_di > r_ai else "ai_c"
        text += (f"{'DI' if outcome == 'di' else '$AI_c$'}'s r is the higher here; the paper's correlations are "
                 f"with energy, not time ({cited}). ")
    else:
        outcome = "similar"
        text += "The two are about equally correlated with throughput here. "
    per_op = corr.get("per_operator")
    if per_op is not None and math.isfinite(per_op):
        text += f"Throughput against the MACs each dispatched operator carries gives r = {w.number(per_op, 2)}"
        if per_op > max(r_ai, r_di) + BETTER:
            text += (", higher than either metric: the work per operator ranks these times better than either "
                     "intensity does, which is what a fixed cost per operator (Chapter 3) would do. ")
        else:
            text += ". "
    lo, hi = corr["di_interval"]
    least = PAPER_EQ6["minimum"]
    if math.isfinite(lo):
        text += (f"By the paper's own test (Fisher's z, its Sec. VII) the 95% interval for DI's population "
                 f"correlation is {w.number(lo, 2)} to {w.number(hi, 2)}")
        text += (", which includes zero: with so few networks this cannot tell the metrics apart (the paper's "
                 f"Eq. 6 asks for at least {least}). " if lo <= 0 < hi else
                 f" (the paper's Eq. 6 asks for at least {least} networks for a usefully narrow window). ")
        facts_interval = (lo, hi)
    else:
        text += "Too few networks were measured for the paper's confidence interval. "
        facts_interval = None
    interval = "none" if not math.isfinite(lo) else "wide" if lo <= 0 < hi else "narrow"
    text += _alpha_sweep_words(sweep, n, r_ai, interval)
    best = sweep.loc[sweep["r"].idxmax()]
    return Prose(text, {"outcome": outcome, "interval": facts_interval, "best_alpha": float(best["alpha"]),
                        "alpha_lean": _lean(sweep), "per_operator": per_op})


def _near_best(sweep):
    """(lowest alpha, highest alpha, lowest r) of the run around the top whose r is within FLAT_R of it."""
    rs, alphas = list(sweep["r"]), list(sweep["alpha"])
    top = max(range(len(rs)), key=lambda i: rs[i] if math.isfinite(rs[i]) else -math.inf)
    lo = hi = top
    while lo > 0 and rs[lo - 1] >= rs[top] - FLAT_R:
        lo -= 1
    while hi < len(rs) - 1 and rs[hi + 1] >= rs[top] - FLAT_R:
        hi += 1
    return float(alphas[lo]), float(alphas[hi]), float(min(rs[lo:hi + 1]))


def _lean(sweep) -> str:
    """'activation', 'weight' or 'neither': the reuse the alphas near the sweep's top favour."""
    a_lo, a_hi, _ = _near_best(sweep)
    return ("neither" if a_lo < 0.5 < a_hi else
            "activation" if float(sweep.loc[sweep["r"].idxmax(), "alpha"]) >= 0.5 else "weight")


def _alpha_sweep_words(sweep, n: int, r_ai: float, interval: str) -> str:
    """Where the alpha sweep's r peaks, how flat the top is, and whether that favours a reuse
    (``interval``: 'narrow', 'wide' (it includes zero) or 'none')."""
    best = sweep.loc[sweep["r"].idxmax()]
    a_lo, a_hi, r_lo = _near_best(sweep)
    text = (f"Swept like the paper's Fig. 4, DI's r on this device is highest at $\\alpha$ = "
            f"{w.number(best['alpha'], 2)} (r = {w.number(best['r'], 2)})")
    if a_hi > a_lo:
        text += (f" and stays within {w.number(FLAT_R, 2)} of that (r = {w.number(r_lo, 2)} or more) for every "
                 f"$\\alpha$ from {w.number(a_lo, 2)} to {w.number(a_hi, 2)}")
    lean = _lean(sweep)
    if lean == "neither":
        text += (": weightings that favour weight reuse and ones that favour activation reuse track throughput "
                 "about equally well, so the sweep does not say which reuse carries the signal.")
    elif a_hi - a_lo >= FLAT_WIDE or interval != "narrow":
        why = ("with a top this flat" if a_hi - a_lo >= FLAT_WIDE else
               "with an interval for r that includes zero" if interval == "wide" else
               "too few for a confidence interval")
        text += (f", so the sweep leans towards {lean} reuse; over {n} networks, {why}, that lean is no "
                 "evidence either way.")
    else:
        text += (f", so here {lean} reuse carries more of the signal than "
                 f"{'weight' if lean == 'activation' else 'activation'} reuse.")
    if math.isfinite(r_ai) and r_ai > best["r"]:
        text += (f" $AI_c$ (r = {w.number(r_ai, 2)}) tracks throughput better than DI does at any "
                 "$\\alpha$.")
    return text


@needs_measurements
def layer_kinds(result) -> Prose:
    """Per profiled network: the largest kind's share of FLOPs and time, the kind the roofline
    misses most, and the time in layers that do no MACs."""
    from collections import defaultdict
    nets = defaultdict(list)
    for r in result.records:
        nets[r["network"]].append(r)
    texts, facts = [], {}
    for net, rows in nets.items():
        ft, tt = sum(r["flops"] for r in rows), sum(r["seconds"] for r in rows)
        miss = {r["kind"]: r["seconds"] / r["roofline_seconds"] for r in rows if r["roofline_seconds"] > 0}
        worst = max(miss, key=miss.get)
        big = max(rows, key=lambda r: r["flops"])
        text = (f"In {net}, the {big['kind']} layers do {w.percent(big['flops'] / ft)} of the FLOPs and took "
                f"{w.percent(big['seconds'] / tt)} of the time. ")
        text += (f"The roofline misses the {worst} layers most: they took {w.times(miss[worst])} the time it "
                 "allows")
        others = sorted((k for k in miss if k != worst), key=miss.get)
        if others:
            text += f", against {w.times(miss[others[0]])} for the {others[0]} ones"
        text += ". "
        typical = statistics_median(list(miss.values()))
        if len(miss) > 2 and miss[worst] > OUT_OF_LINE * typical:
            text += (f"That is more than {w.number(OUT_OF_LINE)} times the median kind's ratio; profiling again "
                     "shows whether it repeats. ")
            facts[f"{net} out of line"] = worst
        none = next((r for r in rows if r["kind"] == "no MACs"), None)
        if none is not None:
            share_t = none["seconds"] / tt
            ops = f": {none['operators']} operators" if none.get("operators") else ""
            text += (f"Layers that do no MACs at all (BatchNorm, activations, additions, pooling{ops}) took "
                     f"{w.percent(share_t)} of the time")
            gap = miss.get("no MACs")
            if gap is not None and gap > OUT_OF_LINE:
                text += (f", {w.times(gap)} the time their bytes take at the roof: the activations they move, which "
                         "$A$ counts, do not explain that time.")
                facts[f"{net} no-MAC gap"] = gap
            else:
                text += "."
            facts[f"{net} no-MAC share"] = share_t
        facts[f"{net} worst"] = worst
        texts.append(text.strip())
    return Prose("\n\n".join(texts), facts)
