"""Chapter 3, overhead: one call timed several ways, each difference judged against the spread
between rounds, and the size sweep's fixed cost beside them."""
from __future__ import annotations

from . import Prose, paragraphs, with_references
from . import words as w
from .overhead_sizes import _where, curves


def _calls(result) -> dict:
    """The call_overhead records by role: 'numpy', 'chapter 3', 'new output', 'chapter 7'."""
    out = {}
    for r in result.records:
        if r["library"] == "numpy":
            out["numpy"] = r
        elif r["role"] == "chapter 3":
            out["chapter 3"] = r
        elif r["role"] == "chapter 7":
            out["chapter 7"] = r
        else:
            out["new output"] = r
    return out


def _clear(a: dict, b: dict) -> bool:
    """Whether two call_overhead records differ by more than their spread over rounds."""
    return a["max_seconds"] < b["min_seconds"] or b["max_seconds"] < a["min_seconds"]


def _effect(what: str, before: dict, after: dict) -> tuple:
    ratio = after["seconds"] / before["seconds"]
    if not _clear(before, after):
        if w.seconds(before["seconds"]) == w.seconds(after["seconds"]):
            return "noise", f"{what} left the median at {w.seconds(before['seconds'])}"
        return "noise", (f"{what} moved the median from {w.seconds(before['seconds'])} to "
                         f"{w.seconds(after['seconds'])}, within the spread between rounds")
    more = "more" if ratio > 1 else "less"
    return more, (f"{what} made the call cost {w.seconds(abs(after['seconds'] - before['seconds']))} {more} "
                  f"({w.seconds(before['seconds'])} to {w.seconds(after['seconds'])}), and the two calls' ranges "
                  "over rounds do not overlap")


def call_overhead(calls, sizes=None, references=()) -> Prose:
    """This chapter's call against Chapter 7's (a new output, PyTorch's default threads): each
    difference, judged against the spread between rounds; and the size sweep's fixed cost."""
    c = _calls(calls)
    rounds = c["numpy"]["rounds"]
    facts = {"numpy": c["numpy"]["seconds"]}
    text = (f"Timed side by side on one-element `float32` arrays, interleaved over {rounds} rounds so that a "
            f"change in the machine's load touches each alike, `numpy.add(a, b, out=out)` took "
            f"{w.seconds(c['numpy']['seconds'])} per call")
    if "chapter 3" not in c:
        return Prose(text + ". PyTorch is not installed here, so there is no PyTorch call to compare.",
                     {**facts, "outcome": "no torch"})
    ch3, ch7 = c["chapter 3"], c["chapter 7"]
    cpu = ch3["backend"] == "cpu"
    how = "one thread" if cpu else "on the GPU"
    text += f", `torch.add(a, b, out=out)` (this chapter's PyTorch call, {how}) {w.seconds(ch3['seconds'])}"
    if "new output" in c:
        text += f", `torch.add(a, b)` with one thread {w.seconds(c['new output']['seconds'])}"
    default = f" at PyTorch's default of {ch7['threads']} threads" if cpu else ""
    text += (f", and `torch.add(a, b)`{default} {w.seconds(ch7['seconds'])}. The last is the call Chapter 7's "
             "profiler times as its per-call "
             "overhead (`brrr.profiler.dispatch_overhead`).")
    facts.update({"chapter 3": ch3["seconds"], "chapter 7": ch7["seconds"]})
    o7, s7 = _effect("taken together, the two differences", ch3, ch7)
    facts["outcome"] = o7
    effects = []
    if "new output" in c:
        o1, s1 = _effect("allocating a new output on every call", ch3, c["new output"])
        o2, s2 = _effect(f"letting PyTorch use its default {ch7['threads']} threads instead of one",
                         c["new output"], ch7)
        facts.update({"allocation": o1, "threads": o2})
        effects = [s1, s2]
    else:
        o1, s1 = _effect("allocating a new output on every call", ch3, ch7)
        facts["allocation"] = o1
        effects = [s1]
    text += " " + "; ".join(e[0].upper() + e[1:] if i == 0 else e for i, e in enumerate(effects)) + "."
    if facts["allocation"] == "less":
        text += " Preallocating, then, did not make PyTorch's call cheaper here."
    elif facts["allocation"] == "more":
        text += (" That allocation is the cost the size sweep's fixed cost leaves out, since its calls write into "
                 "a preallocated `out`.")
    if len(effects) > 1:
        text += " " + s7[0].upper() + s7[1:] + "."
    parts = [Prose(text, facts)]
    if sizes is not None:
        t, agree = _against_sweep(c, curves(sizes))
        if t:
            parts.append(Prose(t, {"sweep_inside_rounds": agree}))
    return with_references(paragraphs(*parts), references, "these calls", _reference_calls, shown=None)


def _against_sweep(c: dict, cs: dict) -> tuple:
    """Each library's size-sweep fixed cost against the same call timed here (its range over rounds):
    which agree and which do not. ``(text, {library: inside?})``."""
    rows = [(lib, cs[lib], c[role]) for lib, role in (("numpy", "numpy"), ("torch", "chapter 3"))
            if lib in cs and role in c and cs[lib]["backend"] == c[role]["backend"]]
    if not rows:
        return "", {}
    agree, bits = {}, []
    for lib, fit, rec in rows:
        sweep, inside = fit["fixed"], rec["min_seconds"] <= fit["fixed"] <= rec["max_seconds"]
        agree[lib] = inside
        bits.append(f"{fit['name']}'s, {w.seconds(sweep)}, lies {'within' if inside else 'outside'} this "
                    f"timing's range over rounds ({w.seconds(rec['min_seconds'])} to {w.seconds(rec['max_seconds'])})"
                    + ("" if inside else f", {w.times(sweep / rec['seconds'])} its median"))
    t = ("The size sweep's fixed costs came from the same calls at sizes of a few elements, measured a little "
         "earlier: " + "; ".join(bits) + ".")
    if all(agree.values()):
        t += " The two timings agree."
    else:
        t += (f" For {w.listing(cs[lib]['name'] for lib, ok in agree.items() if not ok)} they disagree, and this "
              "page does not measure why; running the sweep again shows whether its number repeats.")
    return t, agree


def _reference_calls(run) -> Prose:
    r = _calls(run)
    t = f"{w.reference_intro(run)}, `numpy.add(a, b, out=out)` took {w.seconds(r['numpy']['seconds'])} per call"
    if "chapter 3" in r:
        t += (f", `torch.add(a, b, out=out)` {_where(r['chapter 3']['backend'])} "
              f"{w.seconds(r['chapter 3']['seconds'])} and `torch.add(a, b)` {w.seconds(r['chapter 7']['seconds'])}")
        if r["chapter 3"]["backend"] == "cuda":
            t += ": on a GPU each includes a kernel launch"
    return Prose(t + ".", {f"reference {w.device_of(run)}": r["numpy"]["seconds"]})
