"""Chapter 2: what a CPU copy really moves from DRAM. The C library's ``memcpy`` writes a copy of at
least its non-temporal threshold with streaming stores, straight to DRAM; a smaller copy uses ordinary
stores, each of which first reads its destination's line (write-allocate), so memory moves 3 bytes for
every 2 counted. The experiments record the threshold and the roof's copy size in ``meta['stores']``.
"""
from __future__ import annotations

from . import words as w
from .words import ABOVE_ROOF, SAME

WRITE_ALLOCATE = 1.5   # bytes moved per byte counted, for a copy with ordinary stores (read, read line, write)
UNEVEN = 1.3           # DRAM-sized points whose best and worst differ by this factor are "not level"


def stores(meta) -> dict:
    """``{'threshold': bytes or None, 'roof_copy': bytes or None}`` from a result's meta."""
    s = (meta or {}).get("stores") or {}
    return {"threshold": s.get("streaming_store_threshold"), "roof_copy": s.get("roof_copy_bytes")}


def kind(threshold, nbytes) -> str | None:
    """'streaming' or 'ordinary': how the C library's memcpy stores a copy of ``nbytes``
    (None where the threshold is unknown)."""
    if not threshold or not nbytes:
        return None
    return "streaming" if nbytes >= threshold else "ordinary"


def _gb(gbps: float) -> str:
    return w.rate(gbps * 1e9, "B/s")


def _mechanism(threshold: int) -> str:
    return (f"NumPy's copy calls the C library's `memcpy`, which on this machine writes a copy of at least "
            f"{w.size(threshold)} (its non-temporal threshold) with streaming stores, straight to DRAM. A "
            "smaller copy uses ordinary stores, and each ordinary store first reads its destination's cache "
            "line from DRAM (write-allocate), so memory moves 3 bytes for every 2 the copy counts")


def dram_points(records, llc: int) -> list:
    """``[(working set, GB/s)]`` of the points at least twice the last-level cache ``llc``, by size."""
    if not llc:
        return []
    return sorted((r["working_set"], r["gbps"]) for r in records if r["working_set"] >= 2 * llc)


def dram_outcome(points, meta, cpu: bool) -> str:
    """'few' (under two DRAM points), 'level', or, for an uneven DRAM end, why: 'stores' (the
    copies with streaming stores were the fast ones), 'stores alike', 'not the stores',
    'stores unknown' (a CPU whose threshold was not read) or 'unexplained' (a GPU)."""
    if len(points) < 2:
        return "few"
    gbps = [g for _, g in points]
    if max(gbps) < UNEVEN * min(gbps):
        return "level"
    if not cpu:
        return "unexplained"
    threshold = stores(meta)["threshold"]
    if not threshold:
        return "stores unknown"
    fast = [g for s, g in points if kind(threshold, s // 2) == "streaming"]
    slow = [g for s, g in points if kind(threshold, s // 2) == "ordinary"]
    if not fast or not slow:
        return "stores alike"
    return "stores" if min(fast) > max(slow) else "not the stores"


def dram_sentence(points, meta, roof, cpu: bool, llc: int) -> tuple:
    """``(outcome, text)``: the DRAM end of a bandwidth-vs-size curve (``points`` from
    :func:`dram_points`), level or not, and on a CPU whether the stores explain it. ``roof``:
    the device's DRAM bandwidth in bytes/s (or None)."""
    outcome = dram_outcome(points, meta, cpu)
    if outcome == "few":
        return outcome, ""
    lo = min(points, key=lambda p: p[1])
    hi = max(points, key=lambda p: p[1])
    twice = "twice" if points[0][0] == 2 * llc else "more than twice"
    where = f"from {w.size(points[0][0])} ({twice} the {w.size(llc)} last-level cache) up"
    if outcome == "level":
        return outcome, (f"Past the last-level cache the curve is level, as it is when DRAM alone sets the pace: "
                         f"{where} it ran between {_gb(lo[1])} and {_gb(hi[1])}.")
    kind_of = "measured" if cpu else "spec-sheet"
    low = f", {w.percent(lo[1] * 1e9 / roof)} of the {kind_of} DRAM bandwidth" if roof else ""
    high = f", {w.percent(hi[1] * 1e9 / roof)}" if roof else ""
    text = (f"Past the last-level cache the curve is not level, though DRAM serves all of it: {where} it ran "
            f"between {_gb(lo[1])} (at {w.size(lo[0])}{low}) and {_gb(hi[1])} (at {w.size(hi[0])}{high}).")
    s = stores(meta)
    threshold = s["threshold"]
    side = "at least" if kind(threshold, points[0][0] // 2) == "streaming" else "less than"
    why = {"unexplained": "",
           "stores unknown": " (it did not record the size from which the C library's `memcpy` uses streaming stores)",
           "stores alike": (f": every one of them copies {side} {w.size(threshold or 0)} per array, the C library's threshold for "
                            "streaming stores here, so they all store alike"),
           "not the stores": (f": the copies of at least {w.size(threshold or 0)} per array, which the C library "
                              "writes with streaming stores, were not the fast ones")}
    if outcome in why:
        return outcome, text + f" This run does not show why{why[outcome]}; rerunning the sweep shows whether the spread repeats."
    ordinary = [p for p in points if kind(threshold, p[0] // 2) == "ordinary"]
    streaming = [p for p in points if kind(threshold, p[0] // 2) == "streaming"]
    slow = min(ordinary, key=lambda p: p[1])
    text += (f" The stores explain it. {_mechanism(threshold)}: the {_gb(slow[1])} counted at "
             f"{w.size(slow[0])} is about {_gb(WRITE_ALLOCATE * slow[1])} of real traffic. The working "
             f"set{'s' if len(streaming) > 1 else ''} of {w.listing(w.size(p[0]) for p in streaming)} "
             f"cop{'y' if len(streaming) > 1 else 'ies'} at least the threshold per array and skip"
             f"{'' if len(streaming) > 1 else 's'} that read.")
    if s["roof_copy"]:
        if kind(threshold, s["roof_copy"]) == "streaming":
            text += (f" So does the copy behind the measured DRAM bandwidth ({w.size(s['roof_copy'])} per "
                     f"array): {'those working sets compare' if len(streaming) > 1 else 'that working set compares'}"
                     " with it like for like, the smaller ones do not.")
        else:
            text += (f" The copy behind the measured DRAM bandwidth ({w.size(s['roof_copy'])} per array) is "
                     "below the threshold, so it used ordinary stores too.")
    return outcome, text


def traffic_sentence(meta, array_bytes, first: float, best: float, best_workers: str, roof) -> tuple:
    """``(traffic GB/s of the first point or None, text)`` for a copy sweep over CPU threads
    whose largest copy per thread is ``array_bytes``: where the roof's copy used streaming
    stores and this copy ordinary ones, the bytes it really moved (3 for every 2 counted),
    and whether the best point (``best`` GB/s with ``best_workers``) then beat the roof."""
    s = stores(meta)
    threshold = s["threshold"]
    if not roof:
        return None, ""
    if not threshold or not s["roof_copy"]:
        return None, ""
    if kind(threshold, s["roof_copy"]) != "streaming" or kind(threshold, array_bytes) != "ordinary":
        return None, ""
    moved = WRITE_ALLOCATE * first
    text = (f"The roof and this copy do not store alike. The roof is a NumPy copy by one thread of "
            f"{w.size(s['roof_copy'])} per array, at least the {w.size(threshold)} from which the C "
            f"library's `memcpy` writes with streaming stores, straight to DRAM. This copy moves at most "
            f"{w.size(array_bytes)} per thread, below that size, so it uses ordinary stores (whether Numba's "
            "loop or `memcpy` does the storing), and each ordinary store first reads its destination's cache "
            "line (write-allocate): memory moves 3 bytes for every 2 counted. One thread's "
            f"{_gb(first)} counted is about {_gb(moved)} of traffic, {w.percent(moved * 1e9 / roof)} of the roof")
    if moved * 1e9 > ABOVE_ROOF * roof:
        text += ", above it: the roof is one copy measured once, not a hardware limit"
    elif best_workers and best > (1 + SAME) * first and WRITE_ALLOCATE * best * 1e9 > ABOVE_ROOF * roof:
        text += (f", and {best_workers}' {_gb(best)} is about {_gb(WRITE_ALLOCATE * best)}, above it: the roof "
                 "is one thread's copy, not all that this memory can do")
    return moved, text + "."


__all__ = ["UNEVEN", "WRITE_ALLOCATE", "dram_outcome", "dram_points", "dram_sentence", "kind", "stores",
           "traffic_sentence"]
