"""Chapter 7, diagnosing a model: sentences chosen by the profiles and the remedies.

Each function takes the chapter's live result (a :func:`brrr.profile` table, or a
Result of :mod:`brrr.experiments.diagnosis`) and the reference runs of the same
experiment (Results from :func:`brrr.reference.beside`; a profile table saved as a
Result comes back through :func:`brrr.reference.as_frame`), and returns
:class:`~brrr.prose.Prose`.
"""
from __future__ import annotations

import math

from . import Prose, paragraphs, with_references
from . import words as w

REGIMES = ("compute-bound", "memory-bound", "overhead-bound")
ABOVE_ROOF = 1.05      # a row more than 5% faster than its roofline time is "above its roof"
FLOOR_FACTOR = 3.0     # a replay floor above 3x the fixed cost is "far above" it
NOISY = 0.25           # samples whose IQR exceeds 25% of the median are "noisy"

# Ivanov et al. (2021), as in brrr.profiler.PUBLISHED: BERT-large training on a V100.
PUBLISHED_TEXT = {"matmul flops": "99.8%", "matmul time": "61%", "normalisation time": "25.5%",
                  "elementwise time": "13.5%", "normalisation gap": "250", "elementwise gap": "700"}


# --- helpers ---------------------------------------------------------------------------

def frame(data):
    """A profile table: a DataFrame as it is, a Result saved by ``beside`` as its DataFrame."""
    from ..reference import as_frame
    if hasattr(data, "records") and hasattr(data, "meta"):
        return as_frame(data)
    return data


def _summary(table) -> dict:
    return table.attrs.get("summary") or {}


def _device(table) -> str:
    return table.attrs.get("device") or _summary(table).get("name", "this device")


def _cpu(table) -> bool:
    return (table.attrs.get("backend") or _summary(table).get("backend")) == "cpu"


def _pct(fraction: float) -> str:
    """Three significant digits: '99.8%', '61%', '0.17%'."""
    return f"{100 * fraction:.3g}%"


def _ops(names) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _listing(items) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def regime_facts(data) -> dict:
    """Per regime: share of the summed replayed time, rows, distinct ops; and the table's
    fixed cost per call, replay floor, rows above their roof and smallest roofline time."""
    t = frame(data)
    total = t.seconds.sum()
    facts = {"rows": len(t), "total_seconds": float(total), "overhead": t.attrs.get("overhead_seconds"),
             "floor": t.attrs.get("replay_floor_seconds"), "chapter3": t.attrs.get("chapter3_call_seconds"),
             "model_seconds": t.attrs.get("model_seconds"), "device": _device(t), "cpu": _cpu(t)}
    calls = t.op.value_counts()
    for regime in REGIMES:
        rows = t[t.regime == regime]
        here = rows.op.value_counts()
        facts[regime] = {"share": float(rows.seconds.sum() / total) if total > 0 else 0.0,
                         "rows": int(len(rows)), "ops": list(dict.fromkeys(rows.op)),
                         "split": {op: (int(here[op]), int(calls[op])) for op in here.index if here[op] < calls[op]}}
    timed = t[(t.seconds > 0) & (t.roofline_seconds > 0)]
    facts["above_roof"] = list(dict.fromkeys(timed[timed.efficiency > ABOVE_ROOF].op))
    busy = t[(t.flops > 0) | (t.bytes > 0)]
    if len(busy):
        smallest = busy.loc[busy.roofline_seconds.idxmin()]
        facts["smallest"] = (smallest.op, float(smallest.roofline_seconds))
    facts["median_roofline"] = float(busy.roofline_seconds.median()) if len(busy) else math.nan
    if len(timed):
        best = timed.loc[timed.efficiency.idxmax()]
        facts["efficiency"] = {"median": float(timed.efficiency.median()), "best": float(best.efficiency),
                               "best_op": best.op}
    mm = t[(t.category == "matmul") & (t.regime == "memory-bound")]
    facts["memory_bound_matmuls"] = list(dict.fromkeys(mm.op))
    return facts


# --- the small block: regimes -------------------------------------------------------------

def _fixed_cost(f: dict) -> Prose:
    """The fixed cost the regimes use, and chapter 3's call timed beside it: what each is."""
    o, c3 = f["overhead"], f["chapter3"]
    threads = ", at PyTorch's default thread count" if f["cpu"] else ""
    text = (f"The fixed cost of one PyTorch call on {f['device']}, measured as `torch.add(a, b)` on "
            f"one-element tensors called back to back (a new output each call, as a model's operators "
            f"allocate theirs{threads}), was {w.seconds(o)}.")
    facts = {"overhead_seconds": o}
    if c3 and math.isfinite(c3):
        outcome, rel = w.longer_or_shorter(c3, o, "the profiler's")
        differ = ("two ways, the preallocated output and the thread count" if f["cpu"] else
                  "one way, the preallocated output")
        text += (f" Chapter 3's fixed cost times a slightly different call, `torch.add(a, b, out=out)`"
                 f"{' with one thread' if f['cpu'] else ''}, whose output is preallocated so that its size sweep "
                 f"does not time the allocator. Timed on this page right after, it took {w.seconds(c3)}, {rel}")
        if outcome == "same":
            text += ", so here the two pages' numbers differ only by the noise between runs."
        else:
            text += (f". The two calls differ in {differ}, and [Chapter 3](03_overhead.ipynb) times them side "
                     "by side to tell the effects apart.")
        text += (" Both numbers are the same kind of thing, the flat part of time against size, each for "
                 "its own call.")
        facts.update(chapter3_seconds=c3, chapter3_vs_profiler=outcome)
    return Prose(text, facts)


def _split(f: dict, subject: str) -> str:
    present = [r for r in REGIMES if f[r]["rows"]]
    parts = [f"{r} rows {w.percent(f[r]['share'])}" for r in present]
    parts[0] = parts[0].replace(" rows ", " rows took ", 1)
    return f"{subject} {_listing(parts)} of the summed replayed time"


def _where(f: dict) -> str:
    """'Compute-bound: `addmm`, `convolution` (14 of its 20 rows). Memory-bound: ...'"""
    out = []
    for r in REGIMES:
        if f[r]["ops"]:
            names = [f"`{op}`" + (f" ({f[r]['split'][op][0]} of its {f[r]['split'][op][1]} rows)"
                                  if op in f[r]["split"] else "") for op in f[r]["ops"]]
            out.append(f"{r[0].upper() + r[1:]}: {', '.join(names)}.")
    return " ".join(out)


def regimes(table, references=()) -> Prose:
    """The fixed cost per call (and chapter 3's call beside it), how the rows split between
    the regimes by time, which operators landed where, the replay floor, rows above their
    roof, and the same split on each reference GPU."""
    f = regime_facts(table)
    fixed = _fixed_cost(f)
    over = f["overhead-bound"]
    text = (f"{_split(f, 'By the rule above, on this run')}, over {f['rows']} rows. {_where(f)}")
    facts = {"shares": {r: f[r]["share"] for r in REGIMES}, "rows": {r: f[r]["rows"] for r in REGIMES}}
    if not over["rows"] and "smallest" in f:
        op, t_min = f["smallest"]
        text += (f" No row was overhead-bound: even the smallest, `{op}`, needs {w.seconds(t_min)} at the "
                 f"roof, {w.times(t_min / f['overhead'])} the fixed cost of a call. These tensors are large "
                 "enough that on this device the work, not the call, sets the least time.")
        facts["outcome"] = "none overhead-bound"
    elif over["rows"] == f["rows"]:
        text += (" Every row was overhead-bound: on this device not one operator of the block needs as "
                 "long at its roof as it takes to issue the call.")
        facts["outcome"] = "all overhead-bound"
    else:
        text += (f" The {over['rows']} overhead-bound row{'s' if over['rows'] > 1 else ''} would take less "
                 "time at the roof than issuing the call does.")
        facts["outcome"] = "some overhead-bound"
    if f["memory_bound_matmuls"]:
        one = len(f["memory_bound_matmuls"]) == 1
        text += (f" {_ops(f['memory_bound_matmuls'])} {'is a matmul' if one else 'are matmuls'} and yet "
                 f"memory-bound here: at these sizes {'it does' if one else 'they do'} too few FLOPs per byte "
                 "to pass the ridge.")
    if "efficiency" in f:
        e = f["efficiency"]
        text += (f" Against their roofline times, the rows reached a median efficiency of {w.percent(e['median'])}; "
                 f"the highest was `{e['best_op']}`, at {w.percent(e['best'])}.")
        facts["efficiency"] = e
    parts = [fixed, Prose(text, facts), floor(table)]
    above = f["above_roof"]
    if above:
        llc = _summary(frame(table)).get("l2_bytes") or 0
        text = (f"{_ops(above)} measured faster than {'its' if len(above) == 1 else 'their'} roofline time, "
                "above the roof. ")
        text += ("This device's roof is its own measured peak (one NumPy matmul and one large copy), not a "
                 "hardware limit, and PyTorch's kernels beat it here: the roof understates the machine."
                 if f["cpu"] else
                 f"Their inputs fit in the {w.size(llc)} L2 cache, which the flush before each sample empties "
                 "only partly, so some bytes came from the cache, faster than from DRAM.")
        parts.append(Prose(text, {"above_roof": above}))
    return with_references(paragraphs(*parts), references, "this profile", lambda run: _reference_regimes(run, f),
                           shown="table and the figure")


def _reference_regimes(run, f: dict) -> Prose:
    """A reference run's fixed cost and regime split against this run's (``f``)."""
    r = regime_facts(run)
    t = (f"{w.reference_intro(run)}, the fixed cost of a call was {w.seconds(r['overhead'])}, "
         f"{w.relative(r['overhead'], f['overhead'])}. {_split(r, 'There,')}, "
         f"{r['overhead-bound']['rows']} of its {r['rows']} rows overhead-bound.")
    if r["overhead-bound"]["share"] > f["overhead-bound"]["share"] + 0.05:
        t += (f" More of the block is overhead-bound there than here: at its roof the GPU needs a median "
              f"{w.seconds(r['median_roofline'])} per row, less than the host needs to issue one call.")
    elif r["overhead-bound"]["share"] < f["overhead-bound"]["share"] - 0.05:
        t += " Less of the block is overhead-bound there than here."
    return Prose(t, {f"reference {w.device_of(run)}": {x: r[x]["share"] for x in REGIMES}})


def floor(table) -> Prose:
    """What replaying a one-element add costs, against the fixed cost of a call: why small
    rows measure far above their roofline time (or not)."""
    f = regime_facts(table)
    fl, o = f["floor"], f["overhead"]
    if not fl or not math.isfinite(fl) or not o:
        return Prose("", {})
    ratio = fl / o
    text = (f"Each row is timed by replaying it alone, after a cache flush. A one-element add replayed "
            f"the same way took {w.seconds(fl)}, ")
    if ratio > FLOOR_FACTOR:
        text += (f"{w.times(ratio)} the fixed cost of a call: the flush also evicts the framework's own code "
                 "and data, which must come back from DRAM before the call can even start. No row can measure "
                 "less than that floor, so the replayed time of a small row, whatever its regime, is mostly "
                 "floor, and its efficiency is low for that reason. A model running operator after operator "
                 "keeps the framework in cache and does not pay it.")
        outcome = "far above"
    elif ratio < 1 / (1 + w.SAME):
        text += (f"{w.times(1 / ratio)} less than the fixed cost of a call: the rows are timed on the GPU's own "
                 "clock, which does not see the host's cost of issuing the call. That is why a row can measure "
                 "less than the fixed cost and still be overhead-bound in a real run.")
        outcome = "below"
    else:
        text += ("close to the fixed cost of a call: the flush empties the device's cache, not the host's, so "
                 "a replayed call costs about what a call costs.")
        outcome = "close"
    return Prose(text, {"floor_seconds": fl, "floor_outcome": outcome})


def rows_vs_model(table) -> Prose:
    """The summed rows against one run of the whole model, and why they differ."""
    t = frame(table)
    total, model = float(t.seconds.sum()), t.attrs.get("model_seconds")
    fl = t.attrs.get("replay_floor_seconds")
    ratio = total / model
    text = f"The rows add up to {w.seconds(total)}, while one run of the whole model took {w.seconds(model)}"
    if ratio > 1 + w.SAME:
        text += (f": the rows take {w.times(ratio)} as long. Replayed alone after a flush, each operator reads "
                 "its inputs from DRAM, where in the real run it often finds them still in cache because the "
                 "operator before it just wrote them.")
        if fl and math.isfinite(fl):
            text += (f" Each replay also pays the floor of {w.seconds(fl)}: {len(t)} rows of it make "
                     f"{w.percent(min(1.0, len(t) * fl / total))} of the sum.")
        outcome = "rows longer"
    elif ratio < 1 / (1 + w.SAME):
        text += (f", {w.times(1 / ratio)} as long as the rows together: the whole run also pays for Python, "
                 "module calls and autograd bookkeeping between the operators, which no row contains.")
        outcome = "model longer"
    else:
        text += (": about the same. The time between operators that no row contains (Python, module calls) "
                 "and the cache each replay starts without roughly cancel out here.")
        outcome = "same"
    return Prose(text, {"outcome": outcome, "rows_seconds": total, "model_seconds": model, "ratio": ratio})


# --- BERT: where the FLOPs go and where the time goes ----------------------------------------

def bert_facts(data) -> dict:
    """Ivanov et al.'s three classes in a profile: FLOP and time shares, FLOP/s gaps, bytes."""
    from ..profiler import category_totals, ivanov_comparison
    t = frame(data)
    totals = category_totals(t)
    m = ivanov_comparison(totals).set_index(["category", "quantity"]).measured
    gap = "matmul FLOP/s ÷ this FLOP/s"
    three = totals.reindex(["matmul", "normalisation", "elementwise"]).fillna(0)
    ln = t[t.op == "native_layer_norm"]
    tokens = None
    if len(ln):
        shape = list(ln.iloc[0].input_shapes[0])
        tokens = int(math.prod(shape[:-1]))
    mm_time = float(m["matmul", "share of time"])
    mm_flops = float(m["matmul", "share of FLOPs"])
    if mm_flops > 0.99 and mm_time <= 0.8:
        shape_outcome = "reproduced"
    elif mm_flops > 0.99 and mm_time <= 0.95:
        shape_outcome = "weaker"
    else:
        shape_outcome = "not reproduced"
    return {"mm_flops": mm_flops, "mm_time": mm_time,
            "norm_time": float(m["normalisation", "share of time"]),
            "ew_time": float(m["elementwise", "share of time"]),
            "norm_gap": float(m["normalisation", gap]), "ew_gap": float(m["elementwise", gap]),
            "small_bytes": float(three.bytes[["normalisation", "elementwise"]].sum() / three.bytes.sum()),
            "small_flops": float(1 - mm_flops), "tokens": tokens, "shape": shape_outcome,
            "device": _device(t), "cpu": _cpu(t),
            "floor_far_above": (t.attrs.get("replay_floor_seconds") or 0) > FLOOR_FACTOR * (t.attrs.get("overhead_seconds") or math.inf)}


def _gap(value: float) -> str:
    return f"{w.number(value)}×" if math.isfinite(value) else "an unmeasured factor"


def bert(table, references=()) -> Prose:
    """Ivanov et al.'s BERT measurement against this run: FLOP and time shares of the matmuls,
    normalisations and elementwise operators, their FLOP/s gaps, and whether the shape holds."""
    b = bert_facts(table)
    who = f"With {b['tokens']:,} tokens through the layer, the" if b["tokens"] else "The"
    text = (f"{who} matmuls did {_pct(b['mm_flops'])} of the FLOPs (published: 99.8%) and took "
            f"{_pct(b['mm_time'])} of the time (published: 61%). The normalisations took {_pct(b['norm_time'])} "
            f"(published: 25.5%) and the elementwise operators {_pct(b['ew_time'])} (published: 13.5%), "
            f"with {_pct(b['small_flops'])} of the FLOPs between them. Measured as achieved FLOP/s, the "
            f"normalisations ran {_gap(b['norm_gap'])} and the elementwise operators {_gap(b['ew_gap'])} "
            "below the matmuls (published: 250× and 700×).")
    text += {
        "reproduced": " This run reproduces the published shape: the FLOPs are almost all matmul, the time is not.",
        "weaker": (" The published shape is there, but weaker: the FLOPs are almost all matmul, yet the other "
                   f"operators took only {_pct(1 - b['mm_time'])} of the time, against 39% in the paper."),
        "not reproduced": (" This run does not reproduce the published shape: the matmuls took almost all of "
                           "the time as well as the FLOPs."),
    }[b["shape"]]
    if b["cpu"] and b["mm_time"] > 0.61 + 0.05:
        text += (" Ivanov et al. trained BERT-large on a V100 GPU, whose matmuls run on tensor cores far above "
                 "its bandwidth roof, so there the memory-bound operators weigh more. A CPU's ridge point is "
                 "much lower and its matmuls run further below their peak, which moves time towards the "
                 "matmuls.")
    elif b["cpu"] and b["mm_time"] < 0.61 - 0.05:
        text += (" On a CPU the matmuls would be expected to take more of the time than on Ivanov et al.'s V100, "
                 "whose tensor cores run them far above its bandwidth roof; here they took less"
                 + (": part of the small operators' replayed time is the replay floor every row pays (see above)."
                    if b["floor_far_above"] else
                    ": the matmuls here ran further below their roof than the small operators below theirs."))
    elif b["cpu"]:
        text += (" The matmuls' share of the time is close to the paper's, on a CPU whose ridge point is much "
                 "lower than the V100's: the two differences (slower matmuls here, and a bandwidth roof closer "
                 "to the compute roof) roughly cancel.")
    else:
        text += (" On a GPU, as on Ivanov et al.'s V100, the matmuls run far above the bandwidth roof, so "
                 "every operator that is not a matmul is memory- or overhead-bound and weighs more in time "
                 "than in FLOPs.")
    small_gaps = b["norm_gap"] < 250 and b["ew_gap"] < 700
    large_gaps = b["norm_gap"] > 250 and b["ew_gap"] > 700
    if small_gaps:
        text += (" The FLOP/s gaps are smaller than published: relative to the small operators, the matmuls here "
                 "ran further below their peak than on the V100.")
    elif large_gaps:
        text += " The FLOP/s gaps are larger than published"
        text += (": part of the small operators' time here is the replay floor every row pays (see above)."
                 if b["floor_far_above"] else ": the matmuls here run closer to their peak than the small "
                 "operators run to their bandwidth roof.")
    text += (f" The byte shares do not depend on the machine: the normalisation and elementwise operators "
             f"moved {_pct(b['small_bytes'])} of the bytes.")
    facts = {k: b[k] for k in ("mm_flops", "mm_time", "norm_time", "ew_time", "norm_gap", "ew_gap",
                                "small_bytes", "shape")}
    facts["outcome"] = b["shape"]
    return with_references(Prose(text, facts), references, "this profile", _reference_bert, shown="table")


def _reference_bert(run) -> Prose:
    r = bert_facts(run)
    t = (f"{w.reference_intro(run)}, the matmuls took {_pct(r['mm_time'])} of the time, the normalisations "
         f"{_pct(r['norm_time'])} and the elementwise operators {_pct(r['ew_time'])}; the FLOP/s gaps were "
         f"{_gap(r['norm_gap'])} and {_gap(r['ew_gap'])}. "
         + {"reproduced": "It reproduces the published shape.",
            "weaker": "The published shape is there, but weaker.",
            "not reproduced": "It does not reproduce the published shape."}[r["shape"]])
    return Prose(t, {f"reference {w.device_of(run)}": r["shape"]})


# --- forward and backward ---------------------------------------------------------------------

def backward_facts(data) -> dict:
    from ..profiler import phase_totals
    t = frame(data)
    p = phase_totals(t)
    fwd, bwd = p.loc["forward"], p.loc["backward"]
    return {"flop_ratio": float(bwd.flops / fwd.flops), "time_ratio": float(bwd.seconds / fwd.seconds),
            "fwd_other_share": float(1 - fwd.matmul_time_share), "bwd_other_share": float(1 - bwd.matmul_time_share),
            "mm_flop_ratio": float(bwd.matmul_flops / fwd.matmul_flops) if fwd.matmul_flops else math.nan,
            "device": _device(t)}


def backward(table, references=()) -> Prose:
    """The backward pass against the forward: FLOP ratio and why, time ratio against it, and
    the share of the time outside the matmuls in each direction."""
    b = backward_facts(table)
    rf, rt = b["flop_ratio"], b["time_ratio"]
    text = f"The backward pass did {w.number(rf)} times the forward pass's FLOPs"
    if rf < 1.9:
        text += (": a little under the rule of thumb of 2 (a linear layer needs two matmuls going back, one for "
                 "the gradient of its input and one for that of its weight), because the block's input needs no "
                 "gradient, so the three projections that read it skip the first of the two.")
        flop_outcome = "under 2"
    elif rf <= 2.1:
        text += ": about the rule of thumb of 2, two matmuls going back for every one going forward."
        flop_outcome = "about 2"
    else:
        text += (": more than the rule of thumb of 2, because the backward passes of layer norm, softmax and "
                 "GELU count more FLOPs per element than their forward passes.")
        flop_outcome = "over 2"
    text += f" It took {w.number(rt)} times the forward's operator time"
    if rt > rf * (1 + w.SAME):
        text += (", more than its share of FLOPs: the backward pass adds memory-bound operators of its own "
                 "(gradient accumulation, sums over the batch for the bias gradients, the backward passes of "
                 "layer norm, softmax and GELU), which cost time and few FLOPs.")
        time_outcome = "more than FLOPs"
    elif rt < rf / (1 + w.SAME):
        text += (", less than its share of FLOPs: most of the added FLOPs are matmuls, which run closer to "
                 "their roof than the memory-bound operators that take much of the forward's time.")
        time_outcome = "less than FLOPs"
    else:
        text += ", in proportion to its FLOPs."
        time_outcome = "in proportion"
    a, z = b["fwd_other_share"], b["bwd_other_share"]
    text += (f" The operators that are not matmuls took {w.percent(a)} of the time going forward and "
             f"{w.percent(z)} going back")
    if z >= a / (1 + w.SAME):
        text += ", so their share does not shrink when you train."
        share_outcome = "not smaller"
    else:
        text += (": a smaller share going back, because the backward pass doubles the matmuls, but the "
                 "non-matmul operators still cost a large part of it.")
        share_outcome = "smaller"
    facts = {"flop_ratio": rf, "time_ratio": rt, "flop_outcome": flop_outcome, "time_outcome": time_outcome,
             "share_outcome": share_outcome, "fwd_other_share": a, "bwd_other_share": z}
    return with_references(Prose(text, facts), references, "this profile", _reference_backward, shown="table")


def _reference_backward(run) -> Prose:
    r = backward_facts(run)
    t = (f"{w.reference_intro(run)}, the backward pass took {w.number(r['time_ratio'])} times the forward's "
         f"operator time for the same {w.number(r['flop_ratio'])} times the FLOPs, and the operators that "
         f"are not matmuls took {w.percent(r['bwd_other_share'])} of the backward's time.")
    return Prose(t, {f"reference {w.device_of(run)}": r["time_ratio"]})


# --- ResNet-18 --------------------------------------------------------------------------------

def resnet_facts(data) -> dict:
    from ..profiler import op_totals
    t = frame(data)
    ops = op_totals(t)
    conv = ops.loc["convolution"] if "convolution" in ops.index else None
    image = None
    rows = t[t.op == "convolution"]
    if len(rows):
        image = int(list(rows.iloc[0].input_shapes[0])[-1])
    return {"conv_time": float(conv.time_share) if conv is not None else 0.0,
            "conv_flops": float(conv.flops / ops.flops.sum()) if conv is not None else 0.0,
            "image": image, "regimes": regime_facts(t), "device": _device(t)}


def resnet(table, references=()) -> Prose:
    """The convolutions' share of ResNet-18's FLOPs and time, and which operators landed in
    which regime, here and on each reference GPU."""
    r = resnet_facts(table)
    at = f"At {r['image']}×{r['image']} pixels, the" if r["image"] else "The"
    text = (f"{at} convolutions did {_pct(r['conv_flops'])} of the FLOPs and took {_pct(r['conv_time'])} of "
            "the replayed time")
    if r["conv_time"] >= 0.8:
        text += ": almost all of it."
        outcome = "almost all"
    elif r["conv_time"] >= 0.5:
        text += (": most of it, but not all. Batch norm, ReLU, the residual additions and pooling touch each "
                 "element once, and took the rest.")
        outcome = "most"
    else:
        text += (": less than half. Batch norm, ReLU, the residual additions and pooling, which touch each "
                 "element once and do almost no FLOPs, took the larger part of the time.")
        outcome = "less than half"
    text += " " + _where(r["regimes"])
    facts = {"outcome": outcome, "conv_time": r["conv_time"], "conv_flops": r["conv_flops"]}
    return with_references(Prose(text, facts), references, "this profile", _reference_resnet,
                           shown="table and the figure")


def _reference_resnet(run) -> Prose:
    q = resnet_facts(run)
    t = (f"{w.reference_intro(run)}, the convolutions took {_pct(q['conv_time'])} of the time. "
         f"{_split(q['regimes'], 'There,')}.")
    return Prose(t, {f"reference {w.device_of(run)}": q["conv_time"]})


# --- the remedies -------------------------------------------------------------------------------

def _times(result) -> dict:
    return {r["variant"]: r for r in result.records}


def fusable(eval_table) -> dict:
    """Rows that are neither matmuls nor compute-bound: their summed time and share."""
    t = frame(eval_table)
    bound = t[(t.category != "matmul") & (t.regime != "compute-bound")]
    total = t.seconds.sum()
    return {"seconds": float(bound.seconds.sum()), "share": float(bound.seconds.sum() / total) if total > 0 else 0.0}


def compile_outcome(result, eval_table, references=()) -> Prose:
    """What torch.compile did to the block against eager (or why it could not run), with the
    budget fusion could win back; the same on each reference GPU."""
    budget = fusable(eval_table)
    text = (f"In inference mode, the rows that are neither matmuls nor compute-bound add up to "
            f"{w.seconds(budget['seconds'])} of replayed time, {w.percent(budget['share'])} of all rows: the "
            "time fusion can win back. ")
    runs = _times(result)
    eager = runs["eager"]
    facts = {"fusable_share": budget["share"]}
    if "torch.compile" not in runs:
        error = result.meta.get("error") or "no reason recorded"
        text += (f"`torch.compile` failed on this machine ({error}), so there is no fused time to show; "
                 f"one eager run took {w.seconds(eager['seconds'])}.")
        facts["outcome"] = "failed"
    else:
        comp = runs["torch.compile"]
        ratio = eager["seconds"] / comp["seconds"]
        noisy = max(eager.get("iqr_seconds", 0) / eager["seconds"], comp.get("iqr_seconds", 0) / comp["seconds"]) > NOISY
        text += f"One eager run took {w.seconds(eager['seconds'])} and a compiled one {w.seconds(comp['seconds'])}"
        if ratio > 1 + w.SAME:
            text += f": the compiled block ran {w.times(ratio)} as fast."
            outcome = "faster"
            if w.is_cpu(result):
                text += (" On a CPU the compiler also swaps in its own kernels for the matmuls and removes Python "
                         "and dispatch work between operators, so not all of the gain is fusion.")
        elif ratio < 1 / (1 + w.SAME):
            text += (f": the compiled block was {w.times(1 / ratio)} slower. Compiling does not promise a speed-up: "
                     "the generated kernels replace the eager library's tuned ones, matmuls included, and where "
                     "little of the time is fusable there is little to win back.")
            outcome = "slower"
        else:
            text += ": about the same. Fusion removed some trips through memory, and the compiled matmuls did no better."
            outcome = "same"
        if noisy:
            text += (" The samples of one of the two spread by more than a quarter of their median: the machine "
                     "was busy, and the two times can move by more than their difference.")
        facts.update(outcome=outcome, speedup=ratio, noisy=noisy)
    return with_references(Prose(text, facts), references, "this comparison", _reference_compile, shown="table")


def _reference_compile(run) -> Prose:
    r = _times(run)
    if "torch.compile" in r:
        ratio = r["eager"]["seconds"] / r["torch.compile"]["seconds"]
        t = (f"{w.reference_intro(run)}, eager took {w.seconds(r['eager']['seconds'])} and compiled "
             f"{w.seconds(r['torch.compile']['seconds'])}, "
             + (f"{w.times(ratio)} as fast." if ratio > 1 + w.SAME else
                f"{w.times(1 / ratio)} slower." if ratio < 1 / (1 + w.SAME) else "about the same."))
    else:
        t = f"{w.reference_intro(run)}, `torch.compile` did not run."
    return Prose(t, {f"reference {w.device_of(run)}": r.get("torch.compile", {}).get("seconds")})


def batch_remedy(result, references=()) -> Prose:
    """The overhead-bound rows and the time per token at the smallest and largest batch."""
    recs = sorted(result.records, key=lambda r: r["batch"])
    small, big = recs[0], recs[-1]
    seq = result.meta.get("seq") or small["tokens"] // small["batch"]
    gain = small["seconds_per_token"] / big["seconds_per_token"]
    tokens = big["tokens"] / small["tokens"]
    text = (f"With {small['batch']} sequence{'s' if small['batch'] > 1 else ''} of {seq} tokens, "
            f"{small['overhead_ops']} of the {small['ops']} rows were overhead-bound "
            f"({w.percent(small['overhead_time_share'])} of the replayed time); with {big['batch']} sequences, "
            f"{big['overhead_ops']} of {big['ops']} ({w.percent(big['overhead_time_share'])}). The whole model took "
            f"{w.seconds(small['model_seconds'])} and {w.seconds(big['model_seconds'])}, for {w.times(tokens)} the tokens")
    if gain > tokens * (1 + w.SAME):
        text += (f", so the time per token fell {w.times(gain)}, more than the tokens grew: the larger batch took "
                 "less time than the small one, which no cost model allows. The machine was busier during one "
                 "of the two runs, and on a shared machine that can move a time by more than the work does.")
        outcome = "fell, noisy"
    elif gain > 1 + w.SAME:
        text += f", so the time per token fell {w.times(gain)}."
        if gain > tokens / 2:
            text += (" That is close to the growth in tokens: the whole model took barely longer for many more "
                     "tokens, so at the small batch its time was almost all cost that does not grow with the "
                     "batch.")
        outcome = "fell"
    else:
        text += (f", so the time per token did not fall on this run ({w.number(gain)} times). On a machine whose "
                 "cores are shared with other work, the two whole-model times can move by more than their "
                 "difference.")
        outcome = "did not fall"
    i1, i2 = small.get("matmul_intensity"), big.get("matmul_intensity")
    if i1 and i2 and math.isfinite(i1) and math.isfinite(i2):
        text += (f" Two costs do not grow with the batch: the fixed cost of each call, and reading the weights, "
                 f"which every matmul does once per call whatever the batch. So the matmuls' intensity rose from "
                 f"{w.number(i1)} to {w.number(i2)} FLOP/byte, and both fixed costs are now shared by more tokens.")
    facts = {"outcome": outcome, "gain": gain, "tokens_ratio": tokens,
             "overhead_ops": (small["overhead_ops"], big["overhead_ops"])}
    return with_references(Prose(text, facts), references, "this comparison", _reference_batches, shown="table")


def _reference_batches(run) -> Prose:
    rr = sorted(run.records, key=lambda r: r["batch"])
    g = rr[0]["seconds_per_token"] / rr[-1]["seconds_per_token"]
    t = (f"{w.reference_intro(run)}, {rr[0]['overhead_ops']} of {rr[0]['ops']} rows were overhead-bound at a "
         f"batch of {rr[0]['batch']} and {rr[-1]['overhead_ops']} of {rr[-1]['ops']} at {rr[-1]['batch']}, "
         f"and the time per token " + (f"fell {w.times(g)}." if g > 1 + w.SAME else "did not fall."))
    return Prose(t, {f"reference {w.device_of(run)}": g})


def precision(result, references=()) -> Prose:
    """What the low-precision dtype did to the bytes, the matmuls and the whole block."""
    f32, low = result.records[0], result.records[-1]
    name = low["dtype"]
    bytes_ratio = f32["bytes"] / low["bytes"]
    mm = f32["matmul_seconds"] / low["matmul_seconds"]
    roof = f32["matmul_roofline_seconds"] / low["matmul_roofline_seconds"]
    whole = f32["model_seconds"] / low["model_seconds"]
    fewer = "half the bytes" if abs(bytes_ratio - 2) < 0.05 else f"{w.times(bytes_ratio)} fewer bytes"
    text = (f"In `{name}` the block moves {fewer} it moves in float32, which helps every memory-bound "
            f"operator. Its matmuls took {w.seconds(low['matmul_seconds'])} against {w.seconds(f32['matmul_seconds'])} "
            "in float32")
    if mm > 1 + w.SAME:
        text += f": {w.times(mm)} as fast."
        outcome = "faster"
    elif mm < 1 / (1 + w.SAME):
        text += f": {w.times(1 / mm)} slower."
        outcome = "slower"
    else:
        text += ": about as fast."
        outcome = "same"
    if roof > 1 + w.SAME:
        text += (f" The roofline, with this device's {name} roof, expected them up to {w.times(roof)} as fast: "
                 "tensor cores do many more FLOP/s in low precision.")
    else:
        text += (f" The roofline expected no faster matmuls: `brrr` knows no separate {name} peak for this "
                 "device, so only the halved bytes count.")
    if w.is_cpu(result):
        native = result.meta.get("native_bf16")
        if native is False:
            text += (" This CPU has no bfloat16 dot-product instructions (oneDNN reports none), so the matmul "
                     "kernels convert every element to float32 before multiplying"
                     + (", and the conversion costs time." if outcome == "slower" else
                        ": what they gained came from moving fewer bytes, not from faster arithmetic."
                        if outcome == "faster" else ", so their arithmetic is no faster than in float32."))
        elif native:
            text += (" This CPU has bfloat16 dot-product instructions, so its matmul kernels can multiply "
                     "bfloat16 directly.")
    text += f" The whole block ran {w.times(whole) + ' as fast' if whole > 1 + w.SAME else (w.times(1 / whole) + ' slower' if whole < 1 / (1 + w.SAME) else 'about as fast')}."
    facts = {"outcome": outcome, "matmul_speedup": mm, "bytes_ratio": bytes_ratio, "model_speedup": whole,
             "roofline_speedup": roof}
    return with_references(Prose(text, facts), references, "this comparison", _reference_precision, shown="table")


def _reference_precision(run) -> Prose:
    a, z = run.records[0], run.records[-1]
    r = a["matmul_seconds"] / z["matmul_seconds"]
    t = (f"{w.reference_intro(run)}, the {z['dtype']} matmuls ran "
         + (f"{w.times(r)} as fast as float32" if r > 1 + w.SAME else
            f"{w.times(1 / r)} slower than float32" if r < 1 / (1 + w.SAME) else "about as fast as float32")
         + ".")
    return Prose(t, {f"reference {w.device_of(run)}": r})
