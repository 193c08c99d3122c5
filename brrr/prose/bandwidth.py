"""Chapter 2, memory bandwidth: sentences chosen by the measurements.

Each function takes the chapter's live result and the reference runs of the
same experiment (from :func:`brrr.reference.beside`) and returns
:class:`~brrr.prose.Prose`. The roofline's sentences are in :mod:`.bandwidth_roofline`
and the cos pair's in :mod:`.bandwidth_cos`, and named here too.
"""
from __future__ import annotations

from . import Prose, with_references
from . import words as w
from .bandwidth_dram import dram_points, dram_sentence
from .bandwidth_cos import cos_fusion, cos_times
from .bandwidth_roofline import against_peaks, roofline_summary
from .words import ABOVE_ROOF, SAME

TOP_SHARE = 0.7     # a point below 70% of the curve's peak is "down from the peak"
FLAT = 1.3          # max / min below this: the curve is flat
KNEE_CLOSE = 1.5    # a measured knee within 1.5x of the prediction "lands near" it
CACHE_STEP = 1.2    # bandwidth falling by this factor where a cache level runs out is a step


# --- arithmetic intensity table --------------------------------------------------------

def intensity_table(frame) -> Prose:
    """Which kernels of the table (columns 'kernel', 'intensity (FLOP/byte)') are below one
    FLOP per byte, and what fusing the chain did to its intensity."""
    col = "intensity (FLOP/byte)"
    rows = dict(zip(frame["kernel"], frame[col]))
    heavy = {k: v for k, v in rows.items() if v >= 1}
    if not heavy:
        text = (f"Every one of these is below one FLOP per byte (the highest, "
                f"{max(rows, key=rows.get)}, does {w.number(max(rows.values()))}).")
        outcome = "all below one"
    elif len(heavy) == 1:
        name, value = next(iter(heavy.items()))
        where = "sits exactly at one" if value == 1 else f"does {w.number(value)}"
        text = f"All but one of these are below one FLOP per byte; the exception, the {name}, {where}."
        outcome = "one at or above one"
    else:
        names = w.listing(f"the {k} ({w.number(v)})" for k, v in heavy.items())
        text = (f"All but {w.spelled(len(heavy))} of these are below one FLOP per byte; the exceptions, at or "
                f"above one, are {names} FLOP/byte.")
        outcome = "some at or above one"
    fused = {k: v for k, v in rows.items() if "fused" in k and "unfused" not in k}
    unfused = {k: v for k, v in rows.items() if "unfused" in k}
    facts = {"outcome": outcome, "max_intensity": max(rows.values()), "at_or_above_one": sorted(heavy)}
    if fused and unfused:
        ratio = next(iter(fused.values())) / next(iter(unfused.values()))
        text += (f" The two chain rows do the same multiplications, yet the fused one has "
                 f"{w.times(ratio)} the intensity of the unfused one, because its data crosses "
                 "memory once instead of once per multiplication. That is the whole idea of Chapter 4.")
        facts["fused_over_unfused"] = ratio
    return Prose(text, facts)


# --- bandwidth against working-set size ---------------------------------------------

def curve(result) -> dict:
    """The shape of a bandwidth-vs-size run: peak, first and last points, the steepest drop,
    and whether it rises, falls, rises then falls, or is flat (``shape``)."""
    recs = sorted(result.records, key=lambda r: r["working_set"])
    gbps = [r["gbps"] for r in recs]
    sizes = [r["working_set"] for r in recs]
    i_peak = max(range(len(gbps)), key=gbps.__getitem__)
    peak, first, last = gbps[i_peak], gbps[0], gbps[-1]
    rises, falls = first < TOP_SHARE * peak, peak >= CACHE_STEP * last   # falls: a step down past the peak
    if max(gbps) < FLAT * min(gbps):
        shape = "flat"
    elif rises and falls:
        shape = "rises then falls"
    elif falls:
        shape = "falls"
    elif rises:
        shape = "rises"
    else:
        shape = "flat"
    drop = None
    if i_peak < len(gbps) - 1:
        j = max(range(i_peak, len(gbps) - 1), key=lambda k: gbps[k] / gbps[k + 1])
        drop = (sizes[j], sizes[j + 1], gbps[j] / gbps[j + 1])
    dev = result.meta.get("device", {})
    caches = result.meta.get("caches") or {}
    level = None
    if drop:
        inside = [(name, c) for name, c in caches.items() if drop[0] / 2 <= c <= drop[1] * 2]
        level = max(inside, key=lambda kv: kv[1]) if inside else None
    # the larger of the cache the sweep was sized for (capped) and the one the OS reports: only
    # points past twice the reported cache are surely from DRAM
    llc = max(result.meta.get("llc_bytes") or 0, max(caches.values(), default=0))
    return {"shape": shape, "peak": peak, "peak_size": sizes[i_peak], "first": first,
            "first_size": sizes[0], "last": last, "last_size": sizes[-1], "drop": drop, "level": level,
            "dram_peak": dev.get("peak_bandwidth"), "cpu": w.is_cpu(result),
            "device": dev.get("name", "this device"), "caches": caches, "llc": llc,
            "dram": dram_points(recs, llc), "meta": result.meta, "points": list(zip(sizes, gbps))}


def _gb(gbps: float) -> str:
    return w.rate(gbps * 1e9, "B/s")


def _shape_sentence(c: dict, subject: str) -> str:
    drop = ""
    if c["drop"]:
        a, b, _ = c["drop"]
        where = f", around the size of the {c['level'][0]} ({w.size(c['level'][1])})" if c["level"] else ""
        drop = f" It falls most steeply between {w.size(a)} and {w.size(b)}{where}."
    past = f", past the {w.size(c['llc'])} last-level cache," if c["llc"] and c["last_size"] > c["llc"] else ""
    last = (f" The largest working set, {w.size(c['last_size'])}{past} ran at {_gb(c['last'])}, "
            f"{w.times(c['peak'] / c['last'])} less than the peak.")
    if c["shape"] == "rises then falls":
        return (f"{subject} the copy bandwidth first rises with the working set, from {_gb(c['first'])} at "
                f"{w.size(c['first_size'])} to a peak of {_gb(c['peak'])} at {w.size(c['peak_size'])}, then falls "
                f"as the data stops fitting in the caches.{drop}{last}")
    if c["shape"] == "falls":
        return (f"{subject} the copy bandwidth is highest for small working sets ({_gb(c['peak'])} at "
                f"{w.size(c['peak_size'])}) and falls as the data stops fitting in the caches.{drop}{last}")
    if c["shape"] == "rises":
        top = (", the largest one" if c["peak_size"] == c["last_size"] else
               f"; the largest working set, {w.size(c['last_size'])}, ran at {_gb(c['last'])}, less than a "
               f"step ({w.times(CACHE_STEP)}) below that")
        beyond = ("" if c["last_size"] > c["llc"] else
                  " This sweep never passed the last-level cache, so it shows no step down to DRAM.")
        return (f"{subject} the copy bandwidth rises with the working set, from {_gb(c['first'])} at "
                f"{w.size(c['first_size'])} to {_gb(c['peak'])} at {w.size(c['peak_size'])}{top}.{beyond}")
    return (f"{subject} the copy bandwidth barely changed across the sweep (between "
            f"{_gb(min(c['first'], c['last'], c['peak']))} and {_gb(c['peak'])}): this run shows no cache steps, "
            "which a coarse sweep (the quick build) can step over.")


def _roof_sentence(c: dict) -> str:
    if not c["dram_peak"]:
        return ""
    kind = "measured" if c["cpu"] else "spec-sheet"
    parts = []
    if c["peak"] > ABOVE_ROOF * c["dram_peak"] / 1e9:
        parts.append(f"The peak is {w.times(c['peak'] * 1e9 / c['dram_peak'])} the {kind} DRAM bandwidth "
                     f"of {w.rate(c['dram_peak'], 'B/s')}: those bytes came from a cache, which is "
                     "faster than DRAM, not from DRAM.")
    share = c["last"] * 1e9 / c["dram_peak"]
    parts.append(f"The largest working set reached {w.percent(share)} of the {kind} DRAM bandwidth" +
                 ("." if share <= ABOVE_ROOF else
                  ": above it, because that bandwidth is one copy measured once, not a hardware limit." if c["cpu"] else
                  ": above the spec, which DRAM cannot do, so part of it came from the L2 cache."))
    return " ".join(parts)


def _brief(c: dict, subject: str) -> str:
    """One sentence on a reference run's curve: its peak, and what it settled at from DRAM."""
    if c["shape"] in ("flat", "rises"):
        return _shape_sentence(c, subject + ",")
    where = f", inside its {w.size(c['level'][1])} {c['level'][0]}" if c["level"] else ""
    above = ""
    if c["dram_peak"] and c["peak"] > ABOVE_ROOF * c["dram_peak"] / 1e9:
        above = f" ({w.times(c['peak'] * 1e9 / c['dram_peak'])} its DRAM spec, so served from cache)"
    spec = f" ({w.percent(c['last'] * 1e9 / c['dram_peak'])} of the spec)" if c["dram_peak"] else ""
    return (f"{subject} the same sweep peaked at {_gb(c['peak'])} at {w.size(c['peak_size'])}{where}{above}, "
            f"and fell to {_gb(c['last'])}{spec} for the largest working set, which comes from DRAM.")


def bandwidth_curve(result, references=()) -> Prose:
    """What the bandwidth-vs-size sweep did on this device and on each reference GPU."""
    c = curve(result)
    dram, dram_text = dram_sentence(c["dram"], c["meta"], c["dram_peak"], c["cpu"], c["llc"])
    live = " ".join(t for t in (_shape_sentence(c, f"On {c['device']},"), _roof_sentence(c), dram_text) if t)
    facts = {"outcome": c["shape"], "peak_gbps": c["peak"], "last_gbps": c["last"],
             "peak_size": c["peak_size"], "level": c["level"][0] if c["level"] else None, "dram": dram}
    return with_references(Prose(live.strip(), facts), references, "this sweep",
                           lambda run: _reference_curve(run, c))


def _reference_curve(run, c: dict) -> Prose:
    """A reference run's bandwidth curve against this run's (``c``)."""
    r = curve(run)
    text = _brief(r, w.reference_intro(run))
    ratio = r["last"] / c["last"]
    if ratio > 1 + w.SAME:
        text += f" Its bandwidth from DRAM was {w.times(ratio)} this run's."
    elif ratio < 1 - w.SAME:
        text += f" Its bandwidth from DRAM was {w.percent(1 - ratio)} lower than this run's."
    else:
        text += " Its bandwidth from DRAM was about the same as this run's."
    if c["cpu"] and not r["cpu"] and r["first"] < (1 - w.SAME) * c["first"]:
        text += f" At the smallest size, though, it was slower than this run ({_gb(r['first'])} against {_gb(c['first'])})."
    return Prose(text, {f"reference {w.device_of(run)}": r["shape"]})


# --- the x * 2 repeat sweep -------------------------------------------------------------

def _knee_facts(run) -> dict:
    meta = run.meta
    predicted, measured = meta.get("predicted_knee"), meta.get("measured_knee")
    if measured is None:
        outcome = "no knee"
    elif measured < predicted / KNEE_CLOSE:
        outcome = "earlier"
    elif measured > predicted * KNEE_CLOSE:
        outcome = "later"
    else:
        outcome = "near"
    eager = sorted((r["repeat"], r["seconds"]) for r in run.records if r["variant"] == "eager")
    growth = (eager[-1][1] / eager[0][1], eager[-1][0] / eager[0][0]) if len(eager) > 1 else None
    fused = sorted((r["repeat"], r["seconds"]) for r in run.records if r["variant"] == "fused")
    floor = min((t for _, t in fused), default=None)
    left = next(((r, t / floor) for r, t in fused if t > (1 + SAME) * floor), None) if fused else None
    return {"predicted": predicted, "measured": measured, "outcome": outcome, "eager_growth": growth,
            "floor": floor, "left_at": left[0] if left else None, "left_ratio": left[1] if left else None}


def _left_floor(k: dict) -> str:
    """Where the fused runtime first rose more than SAME above its floor."""
    if k["left_at"] is None:
        return ""
    return (f" The runtime itself first rose more than {w.percent(SAME)} above its floor at "
            f"{w.integer(k['left_at'])} multiplications per element, where it took {w.times(k['left_ratio'])} as long.")


def _knee_sentence(k: dict, subject: str, explained: str | None = None) -> str:
    """The knee of one run; ``explained``: the outcome whose reason an earlier paragraph gave."""
    if k["outcome"] == "no knee":
        return (f"{subject} the fused runtime never rose clearly above its flat floor (never 1.5 times as long): the "
                f"sweep stayed memory-bound up to its largest repeat, short of the predicted knee at "
                f"{w.number(k['predicted'])}.{_left_floor(k)}")
    where = {"earlier": "earlier than", "later": "later than", "near": "close to"}[k["outcome"]]
    if explained in (None, "no knee"):
        text = (f"{subject} the fused runtime's flat floor and the straight line it then approaches (its least "
                f"time per multiplication, times the repeats) meet at about {w.number(k['measured'])} "
                f"multiplications per element, {where} the {w.number(k['predicted'])} the roofline predicts. "
                "That meeting point is the measured knee, drawn dash-dotted.")
    else:
        text = (f"{subject} the measured knee is at about {w.number(k['measured'])} multiplications per element, "
                f"{where} the {w.number(k['predicted'])} the roofline predicts.")
    if k["outcome"] == explained and explained in ("earlier", "later"):
        text += f" It is {where.split()[0]} for the same reason as above."
    elif k["outcome"] == "earlier":
        text += (" The prediction uses the FP32 peak, which counts a fused multiply-add instruction as two FLOPs; "
                 "a chain of multiplications does one FLOP per instruction, so its own compute roof is half as high.")
    elif k["outcome"] == "later":
        text += " The kernel ran faster than the peak in the prediction assumes."
    return text + _left_floor(k)


def repeat_sweep(result, references=()) -> Prose:
    """The knee of the fused runtime against the roofline's, the eager line's growth, and points
    above the bandwidth roof, for this run and each reference GPU."""
    k = _knee_facts(result)
    text = _knee_sentence(k, "On this run")
    facts = {"outcome": k["outcome"], "predicted_knee": k["predicted"], "measured_knee": k["measured"],
             "left_floor_at": k["left_at"]}
    if k["eager_growth"]:
        grew, span = k["eager_growth"]
        facts["eager_grows"] = grew > 0.5 * span
        text += (f" The eager runtime grew {w.times(grew)} as the repeats grew {w.times(span)}"
                 + (": every multiplication is another full trip through memory." if grew > 0.5 * span else
                    ", less than one trip through memory per multiplication would cost."))
    roof = result.meta.get("roof") or {}
    peak_bw = roof.get("peak_bandwidth")
    if peak_bw:
        above = [r for r in result.records if r["gbps"] * 1e9 > ABOVE_ROOF * peak_bw]
        facts["above_roof"] = len(above)
        item = 8 if result.meta.get("dtype") == "float64" else 4
        working_set = 2 * result.meta.get("n", 0) * item
        llc = (result.meta.get("device") or {}).get("l2_bytes") or 0
        cached = working_set < 4 * llc
        facts["cache_resident"] = cached
        if above:
            text += f" {len(above)} point{'s' if len(above) > 1 else ''} moved data faster than the roof's {w.rate(peak_bw, 'B/s')}: "
            text += (f"source and result together are {w.size(working_set)}, less than four times the "
                     f"{w.size(llc)} last-level cache, so part of the traffic was served from cache." if cached else
                     f"source and result together are {w.size(working_set)}, far more than any cache, so the roof, "
                     "one copy measured once, is not a hardware limit." if w.is_cpu(result) else
                     f"source and result together are {w.size(working_set)}, far more than the L2, and DRAM cannot "
                     "beat its spec sheet: rerun the sweep.")
    return with_references(Prose(text, facts), references, "this sweep",
                           lambda run: _reference_knee(run, k["outcome"]))


def _reference_knee(run, explained=None) -> Prose:
    rk = _knee_facts(run)
    return Prose(_knee_sentence(rk, f"{w.reference_intro(run)},", explained),
                 {f"reference {w.device_of(run)}": rk["outcome"]})


__all__ = ["ABOVE_ROOF", "FLAT", "KNEE_CLOSE", "TOP_SHARE", "against_peaks", "bandwidth_curve", "cos_fusion",
           "cos_times", "curve", "intensity_table", "repeat_sweep", "roofline_summary"]
