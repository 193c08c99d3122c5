"""Chapter 3, overhead: sentences chosen by the measurements.

Each function takes the chapter's live result and the reference runs of the
same experiment (from :func:`brrr.reference.beside`) and returns
:class:`~brrr.prose.Prose`. Times are seconds, sizes numbers of elements.
"""
from __future__ import annotations

import math

from . import Prose, paragraphs, with_references
from . import words as w

HE_PYTHON_OPS = 32e6          # He (2022): Python runs about 32 million additions per second
HE_A100_MEANWHILE = 9.75e6    # He (2022): FLOPs an A100 does in the time of one Python operation
FLAT_WITHIN = 1.5     # a size is on the flat part while its time stays within 1.5x the fixed cost
FLAT_SPAN = 16        # a curve has a flat part when it stays flat over at least a 16-fold range of sizes
LINEAR = 0.7          # the last step of the sweep grew the time by >= 70% of proportional: linear
AHEAD = 0.5           # the loop returned before half the finished time: the host ran ahead
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


def _size(value) -> str:
    """A size the sweep ran: exact, '16,384'."""
    return f"{int(value):,}"


def _sizes(values) -> str:
    """'1, 4 and 16'."""
    values = [_size(v) for v in values]
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


def _peak_words(run, whose: str = "its") -> str:
    device = "CPU" if w.is_cpu(run) else "GPU"
    whose = f"this {device}'s" if whose == "this" else whose
    return (f"{whose} best measured matmul rate" if w.is_cpu(run) else
            f"{whose} FP16 tensor-core peak (spec sheet)")


def _flops(value: float) -> str:
    """'3,530 FLOPs', '13.9 million FLOPs'."""
    return f"{w.number(value / 1e6)} million FLOPs" if value >= 1e6 else f"{w.number(value)} FLOPs"


# --- Python operations per second ------------------------------------------------------

def python_numbers(result) -> dict:
    """The integer addition, the slowest statement and the FLOPs a matmul does meanwhile."""
    recs = result.records
    add = next((r for r in recs if r.get("statement") == "a + b"), recs[0])
    slow = max(recs, key=lambda r: r["seconds_per_op"])
    return {"add_seconds": add["seconds_per_op"], "add_per_second": add["ops_per_second"],
            "slow_op": slow["op"], "slow_seconds": slow["seconds_per_op"],
            "flops_meanwhile": add["flops_meanwhile"],
            "peak_flops": add["flops_meanwhile"] / add["seconds_per_op"],
            "python": (result.meta.get("versions") or {}).get("python", "")}


def python_ops(result, references=()) -> Prose:
    """How fast this interpreter is against He's 32 million operations per second, and how many
    FLOPs the device could do in the time of one; the same for each reference run."""
    p = python_numbers(result)
    ratio = p["add_per_second"] / HE_PYTHON_OPS
    if abs(ratio - 1) <= w.SAME:
        outcome, compare = "same as He", "about the 32 million per second He measured (He, 2022)"
    elif ratio > 1:
        outcome, compare = "faster than He", (f"{w.times(ratio)} the roughly 32 million per second He "
                                               "measured (He, 2022)")
    else:
        outcome, compare = "slower than He", (f"{w.percent(ratio)} of the roughly 32 million per second He "
                                               "measured (He, 2022)")
    text = (f"One integer addition took {w.seconds(p['add_seconds'])} here (Python {p['python']}), so this "
            f"interpreter runs about {w.number(p['add_per_second'] / 1e6)} million of them per second, {compare}.")
    if outcome == "faster than He":
        text += (" The interpreter and the CPU both set this number, and CPython has become faster since "
                 "2022: version 3.11 added an interpreter that specialises common operations such as this one "
                 "(PEP 659).")
    elif outcome == "slower than He":
        text += (" The interpreter and the CPU both set this number: a slower or busier core, or an older "
                 "Python, runs fewer of them.")
    slow = p["slow_seconds"] / p["add_seconds"]
    text += (f" The slowest statement, {p['slow_op']}, took {w.seconds(p['slow_seconds'])}, "
             f"{w.times(slow)} an addition.") if slow > 1 + w.SAME else " The other statements cost about as much."
    meanwhile = p["flops_meanwhile"]
    text += (f" In the time of one addition, {_peak_words(result, 'this')}, {w.rate(p['peak_flops'])}, could have done "
             f"{_flops(meanwhile)}")
    if w.is_cpu(result):
        text += (f", where He's A100 does about ten million (He, 2022). On a CPU the gap is "
                 f"{w.number(HE_A100_MEANWHILE / meanwhile, 2)} times smaller, because the interpreter runs on "
                 "the very "
                 "cores that would do the arithmetic; it is a GPU's thousands of arithmetic units that make the "
                 "gap millions.")
    else:
        text += f", {w.relative(meanwhile, HE_A100_MEANWHILE, 'the ten million He gives for an A100')} (He, 2022)."
    facts = {"outcome": outcome, "add_per_second": p["add_per_second"], "he_ratio": ratio,
             "flops_meanwhile": meanwhile}
    return with_references(Prose(text, facts), references, "this measurement", lambda run: _reference_python(run, p))


def _reference_python(run, p: dict) -> Prose:
    """A reference run's Python addition against this run's (``p``), and its device's FLOPs meanwhile."""
    r = python_numbers(run)
    t = (f"{w.reference_intro(run)}, the same addition took {w.seconds(r['add_seconds'])} "
         f"({w.number(r['add_per_second'] / 1e6)} million per second, "
         f"{w.relative(r['add_per_second'], p['add_per_second'])}). That is the speed of its host CPU: "
         f"Python never runs on the GPU. In that time {_peak_words(run)}, {w.rate(r['peak_flops'])}, could "
         f"have done {_flops(r['flops_meanwhile'])}")
    t += ("." if w.is_cpu(run) else
          f", {w.relative(r['flops_meanwhile'], HE_A100_MEANWHILE, 'the ten million He gives for an A100')}.")
    return Prose(t, {f"reference {w.device_of(run)}": r["add_per_second"]})


# --- time against size ------------------------------------------------------------------

def curve(result, library: str) -> dict:
    """The shape of one library's ``time_vs_size`` curve: the fit, where the flat part ends
    (the last size before the time leaves ``FLAT_WITHIN`` x the fixed cost for good), whether
    there is one, where the time had doubled for good, and the growth over the last step."""
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
    growth = times[-1] / times[-2]
    step = sizes[-1] / sizes[-2]
    # By the model the smallest sizes cost the same: how far apart their times are (leaving out the
    # highest and the lowest) is this run's noise.
    small = sorted(times[:len(fit["fixed_cost_sizes"])])
    small = small[1:-1] if len(small) > 3 else small
    noise = (max(small) - min(small)) / fixed
    return {**fit, "name": _name(library), "first": sizes[0], "first_seconds": times[0], "largest": sizes[-1],
            "flat_until": flat_until, "left_flat": left_flat,
            # flat: from the smallest size (not far below the fixed cost, or the curve rises from the
            # start) to at least FLAT_SPAN times it, before the time leaves the band for good
            "has_flat": (k_flat != 0 and flat_until >= FLAT_SPAN * sizes[0]
                         and times[0] >= fixed / FLAT_WITHIN),
            "whole_flat": k_flat is None and times[0] >= fixed / FLAT_WITHIN,
            "doubled_at": doubled_at, "growth": growth, "step": step,
            "linear": math.log(max(growth, 1e-12)) >= LINEAR * math.log(step),
            "noise": noise, "fixed": fixed}


def curves(result) -> dict:
    """:func:`curve` for every library of a ``time_vs_size`` result, in the order they ran."""
    return {lib: curve(result, lib) for lib in dict.fromkeys(r["library"] for r in result.records)}


def _curve_sentence(c: dict) -> str:
    who = f"{c['name']} {_where(c['backend'])}"
    fixed = w.seconds(c["fixed"])
    if c["whole_flat"]:
        return (f"{who} stayed flat across the whole sweep, at about {fixed} per call up to "
                f"{_size(c['largest'])} elements: the sweep never reached a size where the work outweighs the "
                "fixed cost.")
    if c["has_flat"]:
        text = (f"{who} has a flat part: its time stayed within {w.number(FLAT_WITHIN)} times its fixed cost "
                f"of {fixed} from {_size(c['first'])} up to {_size(c['flat_until'])} elements.")
    elif c["left_flat"] is None or c["flat_until"] >= FLAT_SPAN * c["first"]:
        text = (f"{who} has no flat part to speak of: its time grew from the smallest size on, from "
                f"{w.seconds(c['first_seconds'])} at {_size(c['first'])} element{'s' if c['first'] != 1 else ''} "
                f"to {fixed} (the fixed cost, a "
                "median over the smallest sizes), so even small calls here do work that shows.")
    else:
        text = (f"{who} has no flat part to speak of: its time left {w.number(FLAT_WITHIN)} times its fixed cost "
                f"of {fixed} by {_size(c['left_flat'])} elements, so even small calls here do work that shows.")
    if c["doubled_at"] is not None:
        text += f" The time had doubled, for good, by {_size(c['doubled_at'])} elements"
        if math.isfinite(c["crossover"]):
            text += f"; the fit puts the size where the work equals the fixed cost at {_n(c['crossover'])}"
            apart = c["crossover"] / c["doubled_at"]
            if apart < 1 / 4 or apart > 4:
                text += (f", {'well below' if apart < 1 else 'well above'} where the time doubled, because the "
                         "cost per element is not one number: the fit takes it from the largest sizes, which "
                         f"cost {'more' if apart < 1 else 'less'} per element than those near the crossover")
        text += "."
    else:
        text += f" Its time never doubled within the sweep (up to {_size(c['largest'])} elements)."
    if c["growth"] > 1.5 * c["step"]:
        text += (f" Over the last step ({w.number(c['step'])} times the size) the time grew {w.times(c['growth'])}, "
                 "more than in proportion: each element got dearer, as happens when the vectors outgrow a cache "
                 "and must come from DRAM (Chapter 2). The fit's cost per element, "
                 f"{w.seconds(c['per_element'])}, is that of the largest sizes.")
    elif c["linear"]:
        text += (f" Over the last step ({w.number(c['step'])} times the size) the time grew {w.times(c['growth'])}: "
                 f"that is the linear part, at {w.seconds(c['per_element'])} per element.")
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
            "the CPU: a GPU call adds a kernel launch to PyTorch's dispatch, and it pays off only once there are "
            f"enough elements (PyTorch's flat part reached {_size(t['flat_until'])} elements, NumPy's "
            f"{_size(n['flat_until'])}).")
    if abs(ratio - 1) <= margin:
        return "same", (f"PyTorch's fixed cost ({w.seconds(t['fixed'])}) was about the same as NumPy's "
                        f"({w.seconds(n['fixed'])}) on this run: the difference is within its noise.")
    if ratio > 1:
        return "torch larger", (
            f"PyTorch's fixed cost was {w.times(ratio)} NumPy's on this run ({w.seconds(t['fixed'])} against "
            f"{w.seconds(n['fixed'])}): before any arithmetic, PyTorch goes through its dispatcher and checks "
            "more (the tensors' device, dtype and layout, whether autograd must record the op). In exchange the "
            "same code runs on a GPU.")
    return "torch smaller", (
        f"PyTorch's fixed cost was lower than NumPy's on this run ({w.seconds(t['fixed'])} against "
        f"{w.seconds(n['fixed'])}), although PyTorch's dispatch checks more (device, dtype, autograd) before "
        "it runs a kernel. On a machine shared with other programs, a single run's microseconds can move by "
        "that much; the next section times both calls side by side.")


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
            bit += f" and its time had doubled by {_size(c['doubled_at'])} elements"
            live = cs.get(lib)
            if live and live["doubled_at"] and c["backend"] != live["backend"]:
                bit += f", {w.times(c['doubled_at'] / live['doubled_at'])} as many as here"
        else:
            bit += f" and stayed flat up to its largest size, {_size(c['largest'])} elements"
        bits.append(bit)
    t = f"{w.reference_intro(run)}, " + "; ".join(bits) + "."
    gpu = [c for c in rc.values() if c["backend"] == "cuda"]
    if gpu:
        t += (" A GPU does each element so fast that a call needs hundreds of thousands of elements or more "
              "before its work outweighs the fixed cost of issuing it: that is why small models on big GPUs "
              "are so often overhead-bound.")
    return Prose(t, {f"reference {w.device_of(run)}": {lib: c["fixed"] for lib, c in rc.items()}})


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
    text += (f" The cost per element comes from the {PER_ELEMENT_SIZES} largest sizes, and "
             "the crossover is the fixed cost divided by it. Another way of timing \"one call\" gives another "
             "number, as the next section shows.")
    return Prose(text, {"fixed": {lib: c["fixed"] for lib, c in cs.items()},
                        "calls": {lib: c["call"] for lib, c in cs.items()},
                        "sizes": first["fixed_cost_sizes"]})


# --- one call, timed several ways -----------------------------------------------------------

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
                  f"({w.seconds(before['seconds'])} to {w.seconds(after['seconds'])}), more than the spread "
                  "between rounds")


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
    if len(effects) > 1:
        text += " " + s7[0].upper() + s7[1:] + "."
    parts = [Prose(text, facts)]
    if sizes is not None:
        torch = curves(sizes).get("torch")
        if torch and torch["backend"] == ch3["backend"]:
            sweep = torch["fixed"]
            inside = ch3["min_seconds"] <= sweep <= ch3["max_seconds"]
            t = (f"The size sweep's fixed cost for PyTorch, {w.seconds(sweep)}, came from the same call at sizes "
                 f"of a few elements, measured a little earlier; ")
            if inside:
                t += (f"it lies within this timing's range over rounds ({w.seconds(ch3['min_seconds'])} to "
                      f"{w.seconds(ch3['max_seconds'])}), so the two agree.")
            else:
                t += (f"it lies outside this timing's range over rounds ({w.seconds(ch3['min_seconds'])} to "
                      f"{w.seconds(ch3['max_seconds'])}): the same call, measured at another moment, moved by "
                      f"{w.percent(abs(sweep / ch3['seconds'] - 1))}. On a machine shared with other programs a "
                      "per-call cost is a number with a spread, not a constant.")
            t += (" When two pages report different per-call costs for one machine, ask which call each timed "
                  "and when: the call sets part of the difference and the moment the rest.")
            parts.append(Prose(t, {"sweep_inside_rounds": inside}))
    return with_references(paragraphs(*parts), references, "these calls", _reference_calls, shown=None)


def _reference_calls(run) -> Prose:
    r = _calls(run)
    t = f"{w.reference_intro(run)}, `numpy.add(a, b, out=out)` took {w.seconds(r['numpy']['seconds'])} per call"
    if "chapter 3" in r:
        where = "on the GPU" if r["chapter 3"]["backend"] == "cuda" else "on the CPU"
        t += (f", `torch.add(a, b, out=out)` {where} {w.seconds(r['chapter 3']['seconds'])} and "
              f"`torch.add(a, b)` {w.seconds(r['chapter 7']['seconds'])}")
        if r["chapter 3"]["backend"] == "cuda":
            t += (": on a GPU each includes a kernel launch, and PyTorch's CPU threads play no part, since "
                  "the arithmetic runs on the GPU")
    return Prose(t + ".", {f"reference {w.device_of(run)}": r["numpy"]["seconds"]})


# --- asynchronous execution --------------------------------------------------------------------

def async_numbers(result) -> dict:
    stages = {r["stage"]: r for r in result.records}
    ret, fin = stages["returned"], stages["finished"]
    return {"returned": ret["seconds"], "finished": fin["seconds"], "share": ret["seconds"] / fin["seconds"],
            "n": ret["n"], "calls": ret["calls"], "library": ret["library"], "backend": ret["backend"],
            "flops": ret.get("flops", 2.0 * ret["n"] ** 3 * ret["calls"])}


def _async_outcome(a: dict) -> str:
    if a["share"] < AHEAD:
        return "ran ahead"
    if a["share"] >= 1 - w.SAME:
        return "returned = finished"
    return "partly ahead"


def _gpu_model() -> tuple:
    """(n, seconds of work, spec) for async_demo's default on an H100, by the FP32 spec sheet."""
    from ..experiments.overhead import ASYNC_N
    from ..specs import GPU_SPECS
    spec = next(s for k, s in GPU_SPECS.items() if "H100" in k)
    n = ASYNC_N["cuda"]
    return n, 2.0 * n ** 3 * 10 / spec.fp32, spec


def async_demo(result, references=()) -> Prose:
    """Did the loop return before the work was done (a GPU's queue), or only once it was finished
    (a CPU); what the reference GPU did, or what the model says a GPU would show."""
    a = async_numbers(result)
    outcome = _async_outcome(a)
    lib = _name(a["library"])
    text = (f"The loop of {a['calls']} matmuls of {a['n']} x {a['n']} `float32` matrices ({lib}) returned to Python "
            f"after {w.seconds(a['returned'])}, and the work was finished after {w.seconds(a['finished'])}.")
    if outcome == "returned = finished":
        if a["backend"] == "cpu":
            text += (f" Returned and finished are the same moment here, and that is the correct result for a CPU: "
                     f"{lib} does each matmul on the calling thread (or its own thread pool) and hands control back "
                     "only when the product is complete, so there is no queue for Python to run ahead of, and the "
                     "synchronise at the end has nothing left to wait for. Asynchrony is a property of a device with "
                     "its own queue of work, such as a GPU.")
        else:
            text += (" On this GPU the loop returned only when the work was done: something synchronised inside "
                     "the loop, or the launch queue was full, so the host could not run ahead.")
    elif outcome == "ran ahead":
        text += (f" The loop returned after {w.percent(a['share'])} of that time: the host queued the "
                 f"{a['calls']} launches and moved on, and only the synchronisation waited for the GPU, for "
                 f"{w.seconds(a['finished'] - a['returned'])}. While the device works through its queue, the host "
                 "is free to prepare the next calls: that is how asynchrony hides overhead.")
    else:
        text += (f" The loop returned after {w.percent(a['share'])} of that time: the host got partly ahead, "
                 "but not by much; some calls waited for earlier work to finish.")
    parts = [Prose(text, {"outcome": outcome, "share": a["share"], "returned": a["returned"],
                          "finished": a["finished"]})]
    if not references:
        t = w.no_reference("this demo")
        if a["backend"] == "cpu":
            n, work, spec = _gpu_model()
            t += (f" What a GPU would show, by the model: the loop returns after {a['calls']} launches of a few "
                  f"microseconds each, tens of microseconds in all, while the work, {a['calls']} matmuls of "
                  f"{n} x {n} (the size the demo uses on a GPU), needs at least {w.seconds(work)} on an "
                  f"{spec.name} at its FP32 spec of {w.rate(spec.fp32)}. The two bars would be hundreds of "
                  "times apart.")
        parts.append(Prose(t, {"references": 0}))
    for run in references:
        r = async_numbers(run)
        o = _async_outcome(r)
        t = (f"{w.reference_intro(run)}, the loop of {r['calls']} matmuls of {r['n']} x {r['n']} "
             f"({_name(r['library'])}) "
             f"returned after {w.seconds(r['returned'])} and the work finished after {w.seconds(r['finished'])}: ")
        t += {"ran ahead": (f"the host was done issuing after {w.percent(r['share'])} of the time, and the GPU "
                            f"needed {w.times(1 / r['share'])} as long to finish. That is asynchrony: the "
                            "launches went into a queue and Python moved on."),
              "returned = finished": "the loop returned only once the work was done, so no queue hid anything.",
              "partly ahead": f"the host got ahead, returning after {w.percent(r['share'])} of the time."}[o]
        parts.append(Prose(t, {f"reference {w.device_of(run)}": o}))
    return paragraphs(*parts)


# --- CUDA graphs and torch.compile ---------------------------------------------------------------

def graph_numbers(result) -> dict:
    times = {r["variant"]: r["seconds"] for r in result.records}
    rec = result.records[0] if result.records else {}
    n_ops = result.meta.get("n_ops") or rec.get("n_ops")
    size = result.meta.get("size") or rec.get("size")
    return {"times": times, "n_ops": n_ops, "size": size}


def _graph_sentence(g: dict, subject: str, fixed=None) -> tuple:
    t = g["times"]
    eager, graph = t["eager"], t.get("CUDA graph")
    per_op = eager / g["n_ops"]
    text = (f"{subject} the chain of {g['n_ops']} operations on {_size(g['size'])} elements took "
            f"{w.seconds(eager)} per "
            f"call eagerly, {w.seconds(per_op)} per operation")
    if fixed:
        text += f" ({w.relative(per_op, fixed, 'the fixed cost of one PyTorch call in the size sweep')})"
    text += "."
    ratio = eager / graph
    if ratio > 1 + w.SAME:
        outcome = "graph faster"
        text += (f" Replaying it as a CUDA graph took {w.seconds(graph)}, {w.times(ratio)} less: one launch "
                 "for the whole chain instead of one per operation.")
    else:
        outcome = "graph no faster"
        text += (f" Replaying it as a CUDA graph took {w.seconds(graph)}, "
                 f"{w.longer_or_shorter(graph, eager, 'eager')[1]}: "
                 "the chain was not overhead-bound here, so removing the launches saved little.")
    comp = t.get("torch.compile reduce-overhead")
    if comp is not None:
        text += (f" `torch.compile(mode=\"reduce-overhead\")` took {w.seconds(comp)}, "
                 f"{w.longer_or_shorter(comp, graph, 'the hand-made graph')[1]}: it fuses the operations into "
                 "fewer kernels and then captures those in a graph.")
    return outcome, text


def reduce_overhead(result, references=(), sizes=None) -> Prose:
    """Eager against CUDA graph (and torch.compile) on a GPU; on a CPU, why nothing ran, and the
    reference GPU's run or, without one, what the model says a GPU would show."""
    g = graph_numbers(result)
    fixed = None
    if sizes is not None:
        torch = curves(sizes).get("torch")
        fixed = torch["fixed"] if torch else None
    if g["times"]:
        outcome, text = _graph_sentence(g, "On this GPU,", fixed if sizes is not None and
                                        curves(sizes).get("torch", {}).get("backend") == "cuda" else None)
        if "torch.compile reduce-overhead" not in g["times"]:
            text += (" The `torch.compile` variant was left out of this run (quick mode, or the compiler was "
                     "missing; see the result's notes).")
        live = Prose(text, {"outcome": outcome, **{k: v for k, v in g["times"].items()}})
    else:
        text = ("This run had no CUDA GPU, so there was nothing to capture: a CUDA graph records and replays "
                "GPU kernel launches, and `mode=\"reduce-overhead\"` is built on it. ")
        text += ("The figure shows the reference GPU's run instead." if references else
                 "No reference GPU run of this experiment ships with this edition of the book yet, so the figure "
                 "has nothing to draw.")
        facts = {"outcome": "no GPU", "references": len(references)}
        if not references:
            n_ops = g["n_ops"] or 20
            text += (f" What a GPU would show, by the model: run eagerly, each of the {n_ops} operations pays "
                     "Python, dispatch and a kernel launch, while its own work on a few thousand elements takes the "
                     "GPU a microsecond or two; so the chain costs about "
                     f"{n_ops} times the fixed cost of one call")
            if fixed:
                text += (f" (PyTorch's host-side cost per call on this machine's CPU was {w.seconds(fixed)}, so at "
                         f"least {w.seconds(n_ops * fixed)} for the chain, before any launch)")
            text += (". A graph replay pays about one launch for the whole chain and then the GPU's own time "
                     "for the kernels, so it should be several times faster; the gap grows with the number of "
                     "operations.")
        live = Prose(text, facts)
    # None: the no-GPU wording above says when no reference run ships (a GPU run needs none)
    return with_references(live, references, None, _reference_graphs)


def _reference_graphs(run):
    """A reference run's eager, graph and compiled times (None where it ran none)."""
    r = graph_numbers(run)
    if not r["times"]:
        return None
    o, t = _graph_sentence(r, f"{w.reference_intro(run)},")
    return Prose(t, {f"reference {w.device_of(run)}": o})


# --- double the batch ----------------------------------------------------------------------------

def batch_steps(result) -> dict:
    """The verdict of every doubling, the last doubling of the leading free run, the first
    work-bound one, whether a free one came back after the turn, and the time per sample."""
    from ..experiments.overhead import batch_verdict
    recs = sorted(result.records, key=lambda r: r["size"])
    steps = [(r["size"], r["time_ratio"], batch_verdict(r["time_ratio"], r["size_ratio"]))
             for r in recs[1:] if r.get("time_ratio")]
    last_free = None
    for size, _, verdict in steps:
        if verdict != "overhead-bound":
            break
        last_free = size
    turn = next((i for i, s in enumerate(steps) if s[2] != "overhead-bound"), None)
    relapse = [s[0] for s in steps[turn:] if s[2] == "overhead-bound"] if turn is not None else []
    first_work = next((s[0] for s in steps if s[2] == "work-bound"), None)
    per_sample = [(r["size"], r["seconds"] / r["size"]) for r in recs]
    if turn is None:
        outcome = "all free"
    elif turn == 0:
        outcome = "none free"
    else:
        outcome = "turns"
    return {"steps": steps, "last_free": last_free, "first_work": first_work, "relapse": relapse,
            "outcome": outcome, "first": recs[0]["size"], "largest": recs[-1]["size"],
            "per_sample": per_sample, "first_ratio": steps[0][1] if steps else None,
            "workload": result.meta.get("workload")}


def _per_sample_at(b: dict, size) -> float:
    return dict(b["per_sample"])[size]


def _batch_sentence(b: dict, subject: str) -> str:
    first_ps, last_ps = b["per_sample"][0][1], b["per_sample"][-1][1]
    best_size, best_ps = min(b["per_sample"], key=lambda sp: sp[1])
    if b["outcome"] == "all free":
        return (f"{subject} every doubling of the batch, up to {_size(b['largest'])}, was nearly free: the whole "
                f"sweep is overhead-bound, and the time per sample fell {w.times(first_ps / last_ps)}. A larger "
                "batch would be needed before the work shows.")
    if b["outcome"] == "none free":
        return (f"{subject} no doubling was nearly free: already from a batch of {_size(b['first'])} to "
                f"{_size(b['first'] * 2)} the time grew {w.times(b['first_ratio'])}. The forward pass is not "
                "overhead-bound even at the smallest batch: the work of each layer already outweighs its fixed cost.")
    free_ps = _per_sample_at(b, b["last_free"])
    text = (f"{subject} the last doubling that was nearly free reached a batch of {_size(b['last_free'])}. Up to "
            f"there the time per sample fell {w.times(first_ps / free_ps)} over a "
            f"{_size(b['last_free'] // b['first'])}-fold "
            "growth of the batch: the forward pass was overhead-bound, each of its calls paying its fixed cost "
            "whatever the batch.")
    if b["first_work"] is not None:
        text += f" The first doubling that cost nearly in proportion came at a batch of {_size(b['first_work'])}."
    else:
        text += (f" After it the doublings cost something but never nearly in proportion up to "
                 f"{_size(b['largest'])}: the sweep ends in between the two regimes.")
    if best_size > b["last_free"]:
        text += (f" Beyond the free run the time per sample fell only {w.times(free_ps / best_ps)} more, to its "
                 f"lowest, {w.seconds(best_ps)} at a batch of {_size(best_size)}: the layers' work had taken over.")
    else:
        text += " Beyond the free run the time per sample fell no further: the layers' work had taken over."
    if last_ps > 1.3 * best_ps:
        worst = max(b["steps"], key=lambda s: s[1])
        text += (f" At the largest batches it rose again, to {w.seconds(last_ps)} at {_size(b['largest'])}; the "
                 f"doubling to {_size(worst[0])} cost {w.times(worst[1])} the time, more than double the work would "
                 "explain, which happens when the activations outgrow a cache, or when another program took the "
                 "machine for a moment.")
    return text


def double_the_batch(result, references=()) -> Prose:
    """The last doubling that was nearly free, the turn to work-bound, noise in the verdicts, and
    the same for each reference run."""
    b = batch_steps(result)
    text = _batch_sentence(b, "On this run")
    if b["relapse"]:
        again = ", ".join(_size(s) for s in b["relapse"])
        text += (f" After the free run had ended, a doubling looked free again (to a batch of {again}): "
                 "a single step of a timed sweep on a shared machine can be noise, or a library switching "
                 "to another kernel; read the trend, not one row.")
    facts = {"outcome": b["outcome"], "last_free": b["last_free"], "first_work": b["first_work"],
             "relapse": b["relapse"]}
    return with_references(Prose(text, facts), references, "this sweep", lambda run: _reference_batch(run, b))


def _reference_batch(run, b: dict) -> Prose:
    """A reference run's doublings against this run's (``b``)."""
    r = batch_steps(run)
    t = _batch_sentence(r, f"{w.reference_intro(run)},")
    if r["last_free"] and b["last_free"] and r["last_free"] > b["last_free"]:
        t += (f" Its free run reached {w.times(r['last_free'] / b['last_free'])} as far as this run's: the same "
              "layers are far less work for a GPU, so it stays overhead-bound to much larger batches.")
    return Prose(t, {f"reference {w.device_of(run)}": r["outcome"]})
