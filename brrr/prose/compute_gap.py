"""Chapter 1, compute: elementwise work against matmul. The measured gap between them against
the spec sheet's (a GPU's tensor cores), or why a CPU shows none; and what ``x * 2`` reached.
"""
from __future__ import annotations

from . import Prose, paragraphs, with_references
from . import words as w
from .compute_tensor import constant_data
from .words import ABOVE_ROOF

GAP_SHOWS = 0.7     # a measured gap of 70% of the spec's or more "mostly shows"


def _gap_facts(result) -> dict:
    by = {r["kind"]: r for r in result.records}
    x2 = by.get("elementwise x * 2")
    chain = by.get("elementwise fused FMA chain")
    mm = by.get("matmul FP32")
    tc = by.get("matmul FP16 tensor cores")
    best_mm = max((r for r in (mm, tc) if r), key=lambda r: r["gflops"])
    best_el = max((r for r in (x2, chain) if r), key=lambda r: r["gflops"])
    repeat = result.meta.get("repeat") or (round(4 * chain["intensity"]) if chain else None)
    return {"x2": x2, "chain": chain, "mm": mm, "tc": tc, "gap": best_mm["gflops"] / best_el["gflops"],
            "spec_gap": result.meta.get("spec_gap"), "repeat": repeat, "best_mm": best_mm, "best_el": best_el,
            "cpu": w.is_cpu(result)}


def _rate_of(r, cpu: bool) -> str:
    """The rate and its share of one named peak: the record's own ``peak_flops``."""
    peak = ("FP16 tensor-core peak" if r.get("tensor_cores") else "measured FP32 roof" if cpu else "FP32 peak")
    return f"{w.rate(r['gflops'] * 1e9)} ({w.percent(r['fraction_of_peak'])} of the {peak})"


def _chain_name(chain) -> str:
    """What one link of the chain ran as: a fused multiply-add instruction (records with ``fma``
    True), else a multiply, then an add (every record made before the chain asked for FMA)."""
    return "fused multiply-adds" if chain.get("fma") else "multiply-then-adds (no FMA instruction)"


def _gap_list(g: dict) -> str:
    items = [f"`x * 2` reached {_rate_of(g['x2'], g['cpu'])}"]
    if g["chain"]:
        items.append(f"the fused chain of {w.number(g['repeat'])} {_chain_name(g['chain'])} per element "
                     f"{_rate_of(g['chain'], g['cpu'])}")
    items.append(f"the FP32 matmul {_rate_of(g['mm'], g['cpu'])}")
    if g["tc"]:
        items.append(f"the FP16 matmul on tensor cores {_rate_of(g['tc'], g['cpu'])}")
    return ", ".join(items[:-1]) + " and " + items[-1]


def elementwise_gap(result, references=()) -> Prose:
    """The measured matmul-over-elementwise gap against the spec's (GPU), or why a CPU shows
    no such gap; and what `x * 2`'s FLOP/s says."""
    g = _gap_facts(result)
    dev, cpu = w.device_of(result), w.is_cpu(result)
    text = f"On {dev}, {_gap_list(g)}."
    facts = {"gap": g["gap"], "spec_gap": g["spec_gap"]}
    if g["spec_gap"] and g["tc"]:
        shows = g["gap"] >= GAP_SHOWS * g["spec_gap"]
        larger = g["gap"] > (1 + w.SAME) * g["spec_gap"]
        facts["outcome"] = "gap larger" if larger else "gap shows" if shows else "gap smaller"
        text += (f" The fastest matmul did {w.times(g['gap'])} the FLOP/s of the best elementwise kernel; the spec "
                 f"sheet's ratio of FP16 tensor-core to FP32 general math is {w.number(g['spec_gap'], 2)}. ")
        text += {"gap larger": "The measured gap is larger than the spec sheet's.",
                 "gap shows": "Most of the spec-sheet gap shows up in the measurement.",
                 "gap smaller": "Less of it shows than the spec sheet predicts."}[facts["outcome"]]
        chain = g["chain"]
        if chain and not chain.get("fma") and g["best_el"] is chain:
            # The chain's own ceiling: two instructions a link, where the peak counts one FMA as two FLOPs.
            half = chain["peak_flops"] / 2
            gap_half = g["best_mm"]["gflops"] * 1e9 / half
            facts["chain_share_of_half_peak"] = chain["gflops"] * 1e9 / half
            text += (" The FP32 peak counts one fused multiply-add instruction as two FLOPs, and this chain ran each "
                     "link as a multiply and an add, two instructions, so it could reach at most half that peak, "
                     f"{w.rate(half)}; it reached {w.percent(facts['chain_share_of_half_peak'])} of that ceiling. "
                     f"The fastest matmul did {w.times(gap_half)} that ceiling.")
        text += constant_data(result, "the matmul rates")
    elif cpu:
        ratio = g["mm"]["gflops"] / g["chain"]["gflops"] if g["chain"] else None
        if ratio is None:
            facts["outcome"] = "no chain"
            text += " The fused chain could not run here (it needs `brrr.kernels`)."
        else:
            facts["outcome"] = ("matmul faster" if ratio > 1 + w.SAME else
                                "chain faster" if ratio < 1 / (1 + w.SAME) else "about the same")
            text += {"matmul faster": f" The matmul did {w.times(ratio)} the chain's FLOP/s.",
                     "chain faster": f" Here the chain outran the matmul, {w.times(1 / ratio)} its FLOP/s.",
                     "about the same": " The chain and the matmul ran at about the same FLOP/s."}[facts["outcome"]]
            text += " The spec sheets' gap is a GPU's: tensor cores against its general math."
        if g["chain"] and g["chain"]["fraction_of_peak"] > ABOVE_ROOF:
            text += (" The chain's rate is above the measured roof: that roof is a matmul's best, not the limit of "
                     "the vector units, which a well-vectorised chain can come closer to.")
    else:
        facts["outcome"] = "no tensor cores"
        text += (f" This GPU has no FP16 tensor cores known to `brrr`, so the fastest matmul did "
                 f"{w.times(g['gap'])} the FLOP/s of the best elementwise kernel on the same general-math units.")
    # x * 2: the same arithmetic, one FLOP per 8 bytes.
    x2 = g["x2"]
    dev_meta = result.meta.get("device") or {}
    bw = dev_meta.get("peak_bandwidth")
    t = "`x * 2` does one multiplication per 8 bytes moved"
    if g["chain"] and g["chain"]["gflops"] > x2["gflops"]:
        t += f", and reached {w.times(g['chain']['gflops'] / x2['gflops'])} fewer FLOP/s than the chain."
    else:
        t += "."
    facts["x2_gflops"] = x2["gflops"]
    if bw:
        frac = x2["gbps"] * 1e9 / bw
        facts["x2_bandwidth_fraction"] = frac
        roof = "measured" if cpu else "spec-sheet"
        if frac > ABOVE_ROOF:
            working = x2["nbytes"]   # source and result
            llc = dev_meta.get("l2_bytes") or 0
            t += (f" It moved {w.rate(x2['gbps'] * 1e9, 'B/s')}, {w.times(frac)} the {roof} DRAM bandwidth: its "
                  f"{w.size(working)} of source and result ")
            if llc and working <= llc:
                t += f"fit in the {w.size(llc)} last-level cache, so the traffic need not reach DRAM."
            elif llc and working < 4 * llc:
                t += (f"are less than four times the {w.size(llc)} last-level cache, so part of the traffic was "
                      "served from it.")
            else:
                t += "are far larger than any cache, so the DRAM roof understates this machine."
            facts["x2_outcome"] = "above bandwidth"
        elif frac >= 0.3:
            t += (f" It moved {w.rate(x2['gbps'] * 1e9, 'B/s')}, {w.percent(frac)} of the {roof} DRAM bandwidth: "
                  "memory, not arithmetic, sets its speed. Chapter 2 is about that limit.")
            facts["x2_outcome"] = "memory-bound"
        else:
            t += (f" It moved only {w.rate(x2['gbps'] * 1e9, 'B/s')}, {w.percent(frac)} of the {roof} DRAM bandwidth, "
                  "and did far fewer FLOP/s than the peak: neither roof limited it. Timing a larger array would "
                  "show whether a fixed cost per call (Chapter 3) is what held it back.")
            facts["x2_outcome"] = "below both"
    return with_references(paragraphs(Prose(text, facts), Prose(t, {})), references, "this comparison",
                           lambda run: _reference_gap(run, cpu))


def _reference_gap(run, cpu: bool) -> Prose:
    """A reference run's rates and gap (``cpu``: this run is a CPU's, which has no such gap)."""
    r = _gap_facts(run)
    s = f"{w.reference_intro(run)}, {_gap_list(r)}: the fastest matmul did {w.times(r['gap'])} the best elementwise FLOP/s"
    s += (f", against the spec sheet's {w.number(r['spec_gap'], 2)}." if r["spec_gap"] else ".")
    if cpu:
        s += " There the tensor cores make the gap: separate units that do nothing but multiply matrices."
    return Prose(s, {f"reference {w.device_of(run)}": r["gap"]})
