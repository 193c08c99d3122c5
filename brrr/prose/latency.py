"""Chapter 2, latency-bound kernels: what the copy's bandwidth did as its parallelism grew (CPU
threads or GPU blocks), and, where the run measured a load's latency, Little's estimate of the bytes
in flight."""
from __future__ import annotations

from . import Prose, with_references
from . import words as w
from .bandwidth_dram import traffic_sentence
from .words import ABOVE_ROOF, SAME

SATURATED = 0.9    # a point within 90% of the best has reached the curve's flat part


def curve(result) -> dict:
    """The shape of a bandwidth-vs-parallelism run: ``outcome`` is 'one point', 'slower', 'no gain',
    'falls back', 'still rising' or 'saturates' (from ``flat_at``, every count within SATURATED of the best)."""
    recs = sorted(result.records, key=lambda r: r["parallelism"])
    if not recs:
        raise ValueError("the result has no records: run brrr.experiments.bandwidth_vs_parallelism")
    meta = getattr(result, "meta", {}) or {}
    counts = [r["parallelism"] for r in recs]
    gbps = [r["gbps"] for r in recs]
    i_best = max(range(len(gbps)), key=gbps.__getitem__)
    best, first, last = gbps[i_best], gbps[0], gbps[-1]
    flat_from = next((k for k in range(len(gbps)) if all(g >= SATURATED * best for g in gbps[k:])), None)
    if len(recs) == 1:
        outcome = "one point"
    elif best <= (1 + SAME) * first:
        outcome = "slower" if last < first / (1 + SAME) else "no gain"
    elif flat_from is None:
        outcome = "falls back"
    elif i_best == len(recs) - 1 and last > (1 + SAME) * gbps[-2]:
        outcome = "still rising"
    else:
        outcome = "saturates"
    dev = meta.get("device") or {}
    roof = meta.get("roof_bandwidth") or dev.get("peak_bandwidth")
    latency = (meta.get("latency") or {}).get("seconds_per_load")
    return {"outcome": outcome, "unit": recs[0].get("unit", "threads"), "counts": counts, "gbps": gbps,
            "first_count": counts[0], "first": first, "best": best, "best_count": counts[i_best],
            "last": last, "last_count": counts[-1], "roof": roof,
            "flat_at": None if flat_from is None else counts[flat_from],
            "latency": latency, "cpu": w.is_cpu(result), "device": dev.get("name", "this device"),
            "sm_count": meta.get("sm_count"), "block": meta.get("block"), "size": recs[0].get("size"),
            "itemsize": recs[0]["nbytes"] / (2 * recs[0]["size"]) if recs[0].get("size") else None,
            "l2_bytes": dev.get("l2_bytes"),
            "load_average": meta.get("load_average"), "cpus": meta.get("cpus"), "meta": meta}


def _gb(gbps: float) -> str:
    return w.rate(gbps * 1e9, "B/s")


def _share(c: dict, gbps: float) -> str:
    """'62% of the measured DRAM bandwidth' (or '' without a roof)."""
    if not c["roof"]:
        return ""
    kind = "measured" if c["cpu"] else "spec-sheet"
    return f"{w.percent(gbps * 1e9 / c['roof'])} of the {kind} DRAM bandwidth"


def _workers(c: dict, count: int) -> str:
    """'1 thread', '2 threads', '1 block of 256 threads', '264 blocks (2 per SM)'."""
    if c["unit"] == "blocks":
        text = "one block" if count == 1 else f"{w.integer(count)} blocks"
        if count == 1 and c["block"]:
            text += f" of {c['block']} threads"
        if c["sm_count"] and count >= c["sm_count"]:
            text += f" ({w.number(count / c['sm_count'])} per SM)"
        return text
    return "one thread" if count == 1 else f"{w.integer(count)} threads"


def _one(c: dict) -> str:
    return "one block" if c["unit"] == "blocks" else "one thread"


def _lead(c: dict, subject: str) -> str:
    share = _share(c, c["first"])
    arrays = f" arrays of {w.size(c['size'] * c['itemsize'])}" if c["size"] and c["itemsize"] else ""
    return (f"{subject} {_workers(c, c['first_count'])} copying{arrays} reached {_gb(c['first'])}"
            f"{', ' + share if share else ''}.")


def _shape(c: dict) -> str:
    o = c["outcome"]
    if o == "one point":
        return (f"Only {_one(c)} was available, so the sweep has a single point and cannot show how the "
                "bandwidth grows with parallelism.")
    if o == "saturates":
        return (f"The bandwidth grew with the parallelism and flattened at about {_workers(c, c['flat_at'])}: "
                f"from there on every point is within {w.percent(1 - SATURATED)} of the best, "
                f"{_gb(c['best'])}{' (' + _share(c, c['best']) + ')' if c['roof'] else ''}. With less "
                "parallelism than that the copy is latency-bound: memory-bound by its intensity, yet too few "
                "requests are in flight to use the bandwidth.")
    if o == "still rising":
        reached = f"({_gb(c['last'])}{', ' + _share(c, c['last']) if c['roof'] else ''})"
        step = f"from {_one(c)} to" if len(c["counts"]) == 2 else "at every step, up to"
        return (f"The bandwidth grew {step} {_workers(c, c['last_count'])} {reached}, the largest count, so this "
                "run never saw the curve flatten.")
    busy = _busy(c)
    if o == "falls back":
        return (f"The bandwidth rose from {_gb(c['first'])} with {_one(c)} to {_gb(c['best'])} with "
                f"{_workers(c, c['best_count'])}, then fell back to {_gb(c['last'])} with "
                f"{_workers(c, c['last_count'])}. Up to the peak the copy was latency-bound, short of requests "
                "in flight; past it the extra workers gained nothing" + (f", while {_load(c)}." if busy else "."))
    if o == "slower":
        text = (f"More parallelism made the copy slower: {_workers(c, c['last_count'])} moved {_gb(c['last'])}, "
                f"against {_gb(c['first'])} for {_one(c)}.")
        if busy:
            return text + (f" While it ran, {_load(c)}: other programs wanted the cores too, so this run cannot "
                           "show the latency-bound part of the curve.")
        return text + (f"{' Other programs do not explain it: ' + _load(c) + '.' if busy is False else ''} This run "
                       "does not show why; rerunning the sweep shows whether it repeats.")
    if c["roof"] and c["first"] * 1e9 >= 0.8 * c["roof"]:
        why = (f"{_one(c).capitalize()} already kept enough requests in flight to come close to the roof, "
               "so there was little left for more parallelism to win.")
    elif busy:
        why = (f"{_one(c).capitalize()} was still far below the roof, and while it ran {_load(c)}.")
    else:
        why = f"{_one(c).capitalize()} was still far below the roof, and this run does not show why more did not help."
    return (f"Adding parallelism did not raise the bandwidth: the best point, {_gb(c['best'])} with "
            f"{_workers(c, c['best_count'])}, is within {w.percent(SAME)} of {_one(c)}'s. {why}")


def _busy(c: dict):
    """On a CPU: True when the load average was above the number of CPUs (more work wanted the
    cores than there were), False when not; None on a GPU or where the run did not record it."""
    if not c["cpu"] or c["load_average"] is None or not c["cpus"]:
        return None
    return c["load_average"] > c["cpus"]


def _load(c: dict) -> str:
    """'the load average (...) was 14.2 on two CPUs', with what a load average is."""
    return (f"the load average (processes running or waiting for a CPU, this one included) was "
            f"{w.number(c['load_average'])} on {w.spelled(c['cpus'])} CPUs")


def _above_roof(c: dict) -> str:
    if not c["roof"] or c["best"] * 1e9 <= ABOVE_ROOF * c["roof"]:
        return ""
    if c["cpu"]:
        return (f" The best point is above the roof ({_gb(c['best'])} against {w.rate(c['roof'], 'B/s')}): "
                "brrr measures a CPU's roof with NumPy's `copyto`, which runs on one thread, so a copy on "
                "several threads can beat it.")
    l2 = f", the L2 {w.size(c['l2_bytes'])}" if c["l2_bytes"] else ""
    return (f" The best point is above the spec sheet's {w.rate(c['roof'], 'B/s')}, which DRAM cannot do: "
            f"part of the traffic came from the L2 cache (each array is {w.size(c['size'] * c['itemsize'])}"
            f"{l2}).")


def _traffic(c: dict) -> tuple:
    """(GB/s one worker really moved, or None where that is what it counted; the sentence why).
    Only on a CPU, where the roof's copy and this one can store differently."""
    if not c["cpu"] or c["unit"] != "threads" or not (c["size"] and c["itemsize"]):
        return None, ""
    best_workers = _workers(c, c["best_count"]) if c["best_count"] != c["first_count"] else ""
    return traffic_sentence(c["meta"], c["size"] * c["itemsize"] / c["first_count"], c["first"], c["best"],
                            best_workers, c["roof"])


_LOW = (". The chase ran with nothing else in flight, and a loaded memory system answers more slowly, so these "
        "estimates are low ones.")


def _chase(c: dict) -> str:
    return (f"A pointer chase, in which each load's address is the value the previous load returned so that one "
            f"load is in flight at a time, took {w.seconds(c['latency'])} per load.")


def _little(c: dict) -> str:
    moved, why = _traffic(c)
    why = why + " " if why else ""
    if not c["latency"]:
        return why + "This run did not measure the latency of a load, so it gives no estimate of the bytes in flight."
    if moved:
        return why + _little_loads(c)
    one = c["first"] * 1e9 * c["latency"]
    text = (f"{why}{_chase(c)} By Little's law the bytes in flight are the bandwidth times that latency: {_one(c)}'s "
            f"{_gb(c['first'])} means about {w.size(one)} in flight")
    if c["cpu"]:
        text += f", some {w.number(one / 64, 2)} cache lines of 64 bytes"
    if c["roof"]:
        need = c["roof"] * c["latency"]
        if one < SATURATED * need:
            text += f", while the roof needs about {w.size(need)}, {w.times(need / one)} as much"
        else:
            text += (f", while the roof needs about {w.size(need)}, "
                     f"{'about as much' if one <= (1 + SAME) * need else 'less'}")
    return text + _LOW


def _little_loads(c: dict) -> str:
    """Little's law for a roof copy with streaming stores against a thread's copy with ordinary
    ones: only loads wait for a reply, so count the loads in flight on each side. The thread's
    copy loads its source and (write-allocate) its destination's lines, as many bytes as it
    counts; the roof's copy loads only its source, half of what it counts."""
    one = c["first"] * 1e9 * c["latency"]
    need = c["roof"] / 2 * c["latency"]
    text = (f"{_chase(c)} By Little's law the bytes in flight are the bandwidth times that latency, and what waits "
            "for memory's reply is the loads: a store is handed off and needs none. One thread's copy loads its "
            f"source and, through write-allocate, its destination's lines, {_gb(c['first'])} of loads in all, so "
            f"it kept about {w.size(one)} of loads in flight, some {w.number(one / 64, 2)} cache lines of 64 bytes. "
            f"The roof's streaming copy loads only its source, half of its {w.rate(c['roof'], 'B/s')}, which takes "
            f"about {w.size(need)} in flight")
    if one < SATURATED * need:
        text += (f", {w.times(need / one)} as much: one thread is short of loads in flight even with the "
                 "destination's lines counted")
    elif one <= (1 + SAME) * need:
        text += (": about as much. One thread keeps about as many loads in flight in both copies, and ordinary "
                 "stores spend half of them on the destination's lines, so the gap in counted bandwidth is those "
                 "extra reads, not latency")
    else:
        text += (f", and one thread kept {w.times(one / need)} as much: latency does not hold this copy "
                 "back; ordinary stores spend half of its loads on the destination's lines, and that is the gap "
                 "in counted bandwidth")
    return text + _LOW


def latency_bound(result, references=()) -> Prose:
    """What the sweep over parallelism did on this device and on each reference GPU."""
    if not result.records and (getattr(result, "meta", {}) or {}).get("unavailable"):
        live = Prose(f"The sweep did not run here: {result.meta['unavailable']}.", {"outcome": "unavailable"})
        return with_references(live, list(references or ()), "this sweep", _reference)
    c = curve(result)
    text = f"{_lead(c, 'On ' + c['device'] + ',')} {_shape(c)}{_above_roof(c)}"
    facts = {"outcome": c["outcome"], "first_gbps": c["first"], "best_gbps": c["best"],
             "flat_at": c["flat_at"] if c["outcome"] == "saturates" else None,
             "first_fraction": c["first"] * 1e9 / c["roof"] if c["roof"] else None,
             "latency_seconds": c["latency"], "above_roof": bool(_above_roof(c))}
    live = Prose(text, facts) + Prose(_little(c))
    return with_references(live, list(references or ()), "this sweep", _reference)


def _reference(run) -> Prose:
    """A reference run in two sentences: one worker's share of the roof, then where it flattened."""
    c = curve(run)
    text = _lead(c, w.reference_intro(run) + ",")
    if c["outcome"] == "saturates":
        text += (f" Its bandwidth flattened at about {_workers(c, c['flat_at'])}, at {_gb(c['best'])}"
                 f"{' (' + _share(c, c['best']) + ')' if c['roof'] else ''}.")
    else:
        text += " " + _shape(c)
    if c["latency"]:
        one = c["first"] * 1e9 * c["latency"]
        text += (f" Its chase took {w.seconds(c['latency'])} per load, so {_one(c)} had about {w.size(one)} in "
                 "flight")
        text += f" and the roof needs about {w.size(c['roof'] * c['latency'])}." if c["roof"] else "."
    return Prose(text, {f"reference {w.device_of(run)}": c["outcome"]})


__all__ = ["SATURATED", "curve", "latency_bound"]
