"""Chapter 2, reduced precision on the roofline: what the smaller data types did to a memory-bound
pointwise op (whose time should follow its bytes) and a compute-bound matmul (whose time should follow
the roof for its type)."""
from __future__ import annotations

from . import Prose, paragraphs, with_references
from . import words as w
from .words import ABOVE_ROOF

PROPORTIONAL = 1.25   # a speed-up within 25% of the byte ratio is "in proportion to the bytes"


def _by(result) -> dict:
    """{(op, dtype): record}."""
    return {(r["op"], r["dtype"]): r for r in result.records}


def _ran(rec) -> bool:
    return rec is not None and not rec.get("skipped") and (rec.get("seconds") or 0) > 0


def _others(result, op) -> list:
    """The records of ``op`` in types other than float32 that ran, in the order measured."""
    return [r for r in result.records if r["op"] == op and r["dtype"] != "float32" and _ran(r)]


def _code(dtype) -> str:
    return f"`{dtype}`"


def _fraction(ratio: float) -> str:
    """float32's bytes over this type's: 2 -> 'half the bytes', 4 -> 'a quarter of the bytes'."""
    if abs(ratio - 2) < 0.02:
        return "half the bytes"
    if abs(ratio - 4) < 0.04:
        return "a quarter of the bytes"
    if abs(ratio - 1) < 0.01:
        return "the same bytes"
    return f"{w.number(1 / ratio, 2)} times the bytes"


def speed(ratio: float) -> str:
    """A speed-up (float32's time over this one's) in words: 'N times as fast', 'about as
    fast', 'N times slower'."""
    if abs(ratio - 1) <= w.SAME:
        return "about as fast"
    return f"{w.times(ratio)} as fast" if ratio > 1 else f"{w.times(1 / ratio)} slower"


def _ridge(result):
    """The float32 ridge (FLOP/byte) of the run, or None where float32 has no roof."""
    f32 = _by(result).get(("matmul", "float32")) or _by(result).get(("pointwise", "float32"))
    peak = (f32 or {}).get("peak_flops")
    bw = result.meta.get("peak_bandwidth")
    return peak / bw if peak and bw else None


def _where(intensity: float, ridge) -> str:
    if ridge is None:
        return ""
    side = "left of" if intensity < ridge else "right of"
    return f", {side} the float32 ridge at {w.number(ridge)} FLOP/byte"


# --- the pointwise op ------------------------------------------------------------------------

def pointwise(result) -> Prose:
    """Did the pointwise op get faster in proportion to its bytes (memory-bound: time ∝ bytes)?"""
    f32 = _by(result).get(("pointwise", "float32"))
    if not _ran(f32):
        return Prose("The float32 pointwise op did not run here, so there is nothing to measure the "
                     "smaller types against.", {"pointwise": "no float32"})
    others = _others(result, "pointwise")
    text = (f"The pointwise op `y = 1 + 2 x` does {w.number(f32['intensity'])} FLOP/byte in float32"
            f"{_where(f32['intensity'], _ridge(result))}, so the roofline expects it to be memory-bound: "
            "its time is its bytes over the bandwidth, and a narrower type should cut it in proportion.")
    if not others:
        return Prose(text + " No smaller type ran, so that cannot be checked here.", {"pointwise": "alone"})
    outcomes, speedups, clauses = {}, {}, []
    for r in others:
        bytes_ratio = f32["nbytes"] / r["nbytes"]
        s = f32["seconds"] / r["seconds"]
        if abs(s - 1) <= w.SAME and bytes_ratio > 1 + w.SAME:
            outcome = "same"
        elif s < 1:
            outcome = "slower"
        elif s > bytes_ratio * PROPORTIONAL:
            outcome = "more"
        elif s >= bytes_ratio / PROPORTIONAL:
            outcome = "proportional"
        else:
            outcome = "less"
        outcomes[r["dtype"]], speedups[r["dtype"]] = outcome, s
        clauses.append(f"{_code(r['dtype'])} moves {_fraction(bytes_ratio)} and ran {speed(s)}{_moved(result, r)}")
    text += (f" Measured: `float32` moved{_moved(result, f32)[1:-1].replace('(', ' ', 1)}; "
             + w.listing(clauses) + ".")
    bw = result.meta.get("peak_bandwidth")
    if bw:
        off = [r["dtype"] for r in [f32, *others] if _bps(r) < w.ON_ROOF * bw]
        if off:
            text += (f" {w.listing(map(_code, off))} reached less than {w.percent(w.ON_ROOF)} of the memory roof, "
                     f"so the premise above did not hold for {'it' if len(off) == 1 else 'them'}: the comparison "
                     "shows this library's kernel in each type more than what the bytes cost.")
    groups = {o: [d for d, x in outcomes.items() if x == o] for o in set(outcomes.values())}
    if set(outcomes.values()) == {"proportional"}:
        text += " Time followed the bytes, as the roofline says it must for a memory-bound op."
    else:
        if "proportional" in groups:
            text += f" {w.listing(map(_code, groups['proportional']))} kept pace with the bytes."
        if "less" in groups:
            text += f" {w.listing(map(_code, groups['less']))} gained less than the bytes promise."
        if "more" in groups:
            text += (f" {w.listing(map(_code, groups['more']))} gained more than the bytes explain; running it "
                     "again shows whether that repeats.")
        if "same" in groups or "slower" in groups:
            lost = groups.get("same", []) + groups.get("slower", [])
            text += f" {w.listing(map(_code, lost))} moved fewer bytes and did not get faster."
    return Prose(text, {"pointwise": outcomes, "pointwise_speedup": speedups})


def _moved(result, r) -> str:
    """' (1.8 TB/s, 38% of the memory roof)': what a record moved, and its share of the one memory roof."""
    bw = result.meta.get("peak_bandwidth")
    share = f", {w.percent(_bps(r) / bw)} of the memory roof" if bw else ""
    return f" ({w.rate(_bps(r), 'B/s')}{share})"


def _bps(r) -> float:
    """Bytes per second a record moved (its bytes over its time)."""
    return r["nbytes"] / r["seconds"]


# --- the matmul ------------------------------------------------------------------------------

def _lacks(result, dtype) -> bool:
    """Whether the run says this CPU has no native arithmetic for ``dtype``."""
    return (result.meta.get("native") or {}).get(dtype) is False


def matmul(result) -> Prose:
    """Did the compute-bound matmul speed up, and did its roof rise with the smaller type?"""
    f32 = _by(result).get(("matmul", "float32"))
    if not _ran(f32):
        return Prose("The float32 matmul did not run here, so there is nothing to measure the smaller "
                     "types against.", {"matmul": "no float32"})
    ridge = _ridge(result)
    bound = "" if ridge is None else (" compute-bound: its time is set by the arithmetic rate, not the bytes"
                                      if f32["intensity"] >= ridge else
                                      " not compute-bound after all (a bigger n would be), so read what follows "
                                      "with care")
    text = (f"The float32 matmul (n = {w.integer(f32['size'])}) does {w.number(f32['intensity'])} FLOP/byte"
            f"{_where(f32['intensity'], ridge)}" + (f", so it is{bound}." if bound else "."))
    others = _others(result, "matmul")
    if not others:
        return Prose(text + " No smaller type ran, so there is nothing to compare.", {"matmul": "alone"})
    outcomes, speedups, clauses = {}, {}, []
    for r in others:
        s = f32["seconds"] / r["seconds"]
        outcome = "same" if abs(s - 1) <= w.SAME else ("faster" if s > 1 else "slower")
        outcomes[r["dtype"]], speedups[r["dtype"]] = outcome, s
        clause = f"{_code(r['dtype'])} ran {speed(s)}"
        if r.get("peak_flops") and f32.get("peak_flops"):
            clause += " under a roof " + w.relative(r["peak_flops"], f32["peak_flops"], "float32's")
        clauses.append(clause)
    text += " In the smaller types, " + w.listing(clauses) + "."
    slower = [d for d, o in outcomes.items() if o == "slower"]
    faster = [d for d, o in outcomes.items() if o == "faster"]
    same = [d for d, o in outcomes.items() if o == "same"]
    lacking = [d for d in slower if _lacks(result, d)]
    if lacking:
        cap = (result.meta.get("native") or {}).get("cpu_capability")
        text += (f" This CPU has no {' or '.join(lacking)} arithmetic instructions (oneDNN reports none"
                 + (f"; PyTorch's vector code here is {cap}" if cap else "") + f"), so PyTorch has no native kernels "
                 f"for {'that type' if len(lacking) == 1 else 'those types'} here.")
    rest = [d for d in slower if d not in lacking]
    if rest:
        text += (f" {w.listing(map(_code, rest))} was slower too: this library's kernel for "
                 f"{'it' if len(rest) == 1 else 'them'} here is slower than float32's.")
    if slower:
        text += " Fewer bytes buy nothing when the arithmetic sets the time."
    if faster:
        risen = [d for d in faster if (_by(result)[("matmul", d)].get("peak_flops") or 0)
                 > (1 + w.SAME) * (f32.get("peak_flops") or float("inf"))]
        if risen:
            text += (f" {w.listing(map(_code, risen))} sped up because {'its' if len(risen) == 1 else 'their'} "
                     "roof is higher.")
        unexplained = [d for d in faster if d not in risen]
        if unexplained:
            text += f" {w.listing(map(_code, unexplained))} sped up with no higher roof known to `brrr`."
    if same:
        text += f" {w.listing(map(_code, same))} saved bytes and no time."
    text += _int8_against_16_bit(result)
    return Prose(text, {"matmul": outcomes, "matmul_speedup": speedups})


def _int8_against_16_bit(result) -> str:
    """On a GPU with tensor cores, an int8 matmul slower than a 16-bit float one: tensor cores that take
    int8 (Turing and later) run it at least as fast as 16-bit floats, so this kernel did not."""
    by = _by(result)
    i8 = by.get(("matmul", "int8"))
    halves = [r for d in ("bfloat16", "float16") if _ran(r := by.get(("matmul", d)))]
    if w.is_cpu(result) or not _ran(i8) or not halves:
        return ""
    fast = min(halves, key=lambda r: r["seconds"])
    if i8["seconds"] <= (1 + w.SAME) * fast["seconds"]:
        return ""
    text = (f" `int8` ran {w.times(i8['seconds'] / fast['seconds'])} slower than {_code(fast['dtype'])}, though "
            "int8 tensor cores (NVIDIA's since Turing) run at least as fast as 16-bit ones: this matmul did not get "
            "that rate.")
    if result.meta.get("int8_b") is None:
        text += " Its second matrix was row-major; this edition passes it column-major, and a rerun shows what that changes."
    return text


# --- roofs, physics, what did not run --------------------------------------------------------

def roofs(result) -> Prose:
    """Which roofs are drawn and where they come from, and any measurement above its roof."""
    peaks = {}
    for r in sorted(result.records, key=lambda r: r["op"] != "matmul"):   # a type's matmul roof, else its own
        peaks.setdefault(r["dtype"], r.get("peak_flops"))
    none = [d for d, p in peaks.items() if not p]
    bw = result.meta.get("peak_bandwidth")
    if w.is_cpu(result):
        text = ("Only float32's compute roof is drawn, measured on this machine: no spec sheet exists for "
                "this CPU, so there is no published rate for its other types, and measuring one would make "
                "the matmul being judged its own roof.")
        facts = {"roofs": "cpu"}
    else:
        known = {d: p for d, p in peaks.items() if p}
        base = known.get("float32")
        parts = [f"{_code(d)} {w.rate(p)}" + (f" ({w.times(p / base)} float32's)" if base and d != "float32"
                                                 and p > (1 + w.SAME) * base else "")
                 for d, p in known.items()]
        text = "The compute roofs are the spec sheet's: " + w.listing(parts) + "."
        if none:
            text += f" No rate is known for {w.listing(map(_code, none))}, so no roof is drawn for it."
        facts = {"roofs": "gpu"}
    text += " The memory roof is the same line for every type: bytes per second do not care what the bytes hold."
    above = []
    for r in filter(_ran, result.records):
        caps = [x for x in (r.get("peak_flops"), r["intensity"] * bw if bw else None) if x]
        if caps and r["flops"] / r["seconds"] > ABOVE_ROOF * min(caps):
            above.append(f"the {r['dtype']} {r['op']}")
    if above:
        text += (f" {w.listing(above).capitalize()} ran above its roof: part of its data stayed in a cache "
                 "(quick-mode sizes are small), or the roof is conservative.")
    facts["above_roof"] = above
    return Prose(text, facts)


def skipped(result):
    """A sentence per (op, type) that did not run here, with the reason; None if all ran."""
    gone = [r for r in result.records if r.get("skipped")]
    if not gone:
        return None
    text = " ".join(f"The {r['dtype']} {r['op']} did not run here ({r['skipped']})." for r in gone)
    return Prose(text, {"skipped": [(r["op"], r["dtype"]) for r in gone]})


def dtype_roofline(result, references=()) -> Prose:
    """The section's paragraphs: the pointwise op, the matmul, the roofs, what did not run, and
    the reference GPU runs (or the sentence that none ships yet)."""
    live = paragraphs(pointwise(result), matmul(result), roofs(result), skipped(result))
    return with_references(live, references, "the data-type comparison", _reference)


def _reference(run) -> Prose:
    """One reference run: each smaller type's speed against float32, pointwise and matmul."""
    by = _by(run)
    parts = []
    for op in ("pointwise", "matmul"):
        f32 = by.get((op, "float32"))
        if not _ran(f32):
            continue
        said = [f"{_code(r['dtype'])} {speed(f32['seconds'] / r['seconds'])}" for r in _others(run, op)]
        if said:
            parts.append(f"the {op} op ran " + w.listing(said) if op == "pointwise"
                         else "the matmul " + w.listing(said))
    if not parts:
        return Prose(f"{w.reference_intro(run)}, no smaller type ran beside float32.", {})
    return Prose(f"{w.reference_intro(run)}, against float32, " + "; ".join(parts) + ".",
                 {f"reference {w.device_of(run)}": True})
