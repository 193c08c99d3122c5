"""Chapter 8, decoding: each decode step against its floor, reading every weight once.

One sentence per batch, from :func:`brrr.experiments.capstone_decode.decode_sweep`'s records: the
step's time eager and as a CUDA graph, as multiples of the time every weight takes to read once
at the DRAM bandwidth, and the regime the table gives each (the book's rule). A step faster than
that floor says why it could be: weights small enough for the last-level cache, or else a
measurement to check.
"""
from __future__ import annotations

from . import Prose, needs_measurements
from . import words as w


def _against_floor(r: dict, weights: float, cache_bytes: int) -> str:
    """A step's time as a multiple of its floor, or, below it, why it could be (``weights``: bytes)."""
    ratio = r["seconds"] / r["weight_seconds"]
    if ratio * w.ABOVE_ROOF >= 1:
        return f"{w.seconds(r['seconds'])} ({w.times(ratio)} the floor, {r['regime']})"
    why = (f"its weights ({w.size(weights)}) fit in the {w.size(cache_bytes)} last-level cache, so a "
           "step can read them from there" if cache_bytes and weights <= cache_bytes else
           "faster than DRAM can deliver the weights: a count or a timing to check")
    return f"{w.seconds(r['seconds'])}, below the floor ({why})"


@needs_measurements
def decode_steps(result) -> Prose:
    """What each batch's decode step took against reading every weight once."""
    device = result.meta.get("device") or {}
    bandwidth = (result.meta.get("roofline") or {}).get("peak_bandwidth")
    cache_bytes = device.get("l2_bytes") or 0
    clauses, facts, floor = [], {"batches": {}}, None
    for batch in result.meta.get("batches", []):
        steps = {r["mode"]: r for r in result.records
                 if r["batch"] == batch and r["mode"] in ("eager", "graph") and not r.get("skipped")}
        if "eager" not in steps:
            continue
        floor = steps["eager"]["weight_seconds"]
        weights = floor * bandwidth             # the bytes the floor reads
        clause = f"at batch {w.integer(batch)} it took {_against_floor(steps['eager'], weights, cache_bytes)} eager"
        if "graph" in steps:
            clause += f" and {_against_floor(steps['graph'], weights, cache_bytes)} as a CUDA graph"
        clauses.append(clause)
        facts["batches"][batch] = {mode: r["seconds"] / r["weight_seconds"] for mode, r in steps.items()}
    if floor is None:
        return Prose("", facts)
    steps = "; ".join(clauses)
    return Prose(f"Reading every weight once at the DRAM bandwidth takes {w.seconds(floor)}, a decode step's "
                 f"floor. {steps[0].upper()}{steps[1:]}.", facts)
