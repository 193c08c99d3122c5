"""Chapter 7: a profile's regimes, replay floor and slow rows, the rows against the whole model; and
the helpers the chapter's other sentences share (:func:`frame`, the device, whether it is a CPU)."""
from __future__ import annotations

import math

from . import Prose, paragraphs, with_references
from . import words as w
from ..results import ran_on_cpu
from .words import ABOVE_ROOF
from .worked import why_above

REGIMES = ("compute-bound", "memory-bound", "overhead-bound")
FLOOR_FACTOR = 3.0     # a replay floor above 3x the fixed cost is "far above" it
SLOW_EFFICIENCY = 0.10  # an operator under 10% of its roof ...
SLOW_SHARE = 0.10       # ... that holds over 10% of the summed time gets a sentence of its own
RANDOM_OPS = ("bernoulli", "uniform", "normal", "rand", "native_dropout", "exponential", "multinomial")


# --- helpers ----------------------------------------------------------------------------------

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
    """Whether a profile ran on a CPU: its device summary says (a table without one, its ``backend``)."""
    return ran_on_cpu(_summary(table) or {"backend": table.attrs.get("backend")})


def _pct(fraction: float) -> str:
    """Three significant digits: '99.8%', '61%', '0.17%'."""
    return f"{100 * fraction:.3g}%"


def _ops(names) -> str:
    return ", ".join(f"`{n}`" for n in names)


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
    busy = t[(t.flops > 0) | (t.nbytes > 0)]
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


# --- the small block: regimes -----------------------------------------------------------------

def _fixed_cost(f: dict) -> Prose:
    """The fixed cost the regimes use, and chapter 3's call timed beside it."""
    o, c3, cpu = f["overhead"], f["chapter3"], f["cpu"]
    threads = ", at PyTorch's default thread count" if cpu else ""
    text = (f"The fixed cost of one PyTorch call on {f['device']}, measured as `torch.add(a, b)` on one-element "
            f"tensors called back to back (a new output each call, as a model's operators allocate theirs"
            f"{threads}), was {w.seconds(o)}.")
    facts = {"overhead_seconds": o}
    if c3 and math.isfinite(c3):
        outcome, rel = w.longer_or_shorter(c3, o, "the profiler's")
        text += (f" Chapter 3's call, `torch.add(a, b, out=out)`{' with one thread' if cpu else ''} into a "
                 f"preallocated output, took {w.seconds(c3)} timed right after, {rel}")
        differ = "the preallocated output" + (" and the thread count" if cpu else "")
        text += (", so on this device the two calls cost the same." if outcome == "same" else
                 f". The two calls differ in {differ}, and [Chapter 3](03_overhead.ipynb) times them side by side "
                 "to tell the effects apart.")
        facts.update(chapter3_seconds=c3, chapter3_vs_profiler=outcome)
    return Prose(text, facts)


def _split(f: dict, subject: str) -> str:
    present = [r for r in REGIMES if f[r]["rows"]]
    parts = [f"{r} rows {w.percent(f[r]['share'])}" for r in present]
    parts[0] = parts[0].replace(" rows ", " rows took ", 1)
    return f"{subject} {w.listing(parts)} of the summed replayed time"


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
                 f"roof, {w.times(t_min / f['overhead'])} the fixed cost of a call.")
        facts["outcome"] = "none overhead-bound"
    elif over["rows"] == f["rows"]:
        text += " Every row was overhead-bound."
        facts["outcome"] = "all overhead-bound"
    else:
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
    parts = [fixed, Prose(text, facts), floor(table), slow_rows(table)]
    above = f["above_roof"]
    if above:
        t, one = frame(table), len(above) == 1
        why = why_above(float(t[t.op.isin(above)].nbytes.max()), _summary(t).get("l2_bytes"), f["cpu"],
                        "its" if one else "their")
        parts.append(Prose(f"{_ops(above)} measured faster than {'its' if one else 'their'} roofline time, above "
                           f"the roof: {why}.", {"above_roof": above}))
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
    """What replaying a one-element add costs, against the fixed cost of a call."""
    f = regime_facts(table)
    fl, o = f["floor"], f["overhead"]
    if not fl or not math.isfinite(fl) or not o:
        return Prose("", {})
    ratio = fl / o
    text = (f"Each row is timed by replaying it alone, after a cache flush. A one-element add replayed "
            f"the same way took {w.seconds(fl)}, ")
    if ratio > FLOOR_FACTOR:
        text += (f"{w.times(ratio)} the fixed cost of a call timed back to back. No row can measure less than "
                 "that floor, so the replayed time of a small row, whatever its regime, is mostly floor, and its "
                 "efficiency is low for that reason.")
        outcome = "far above"
    elif ratio < 1 / (1 + w.SAME):
        text += (f"{w.times(1 / ratio)} less than the fixed cost of a call" + (
            "" if f["cpu"] else ": the rows are timed on the GPU's own clock, which does not see the host's cost "
            "of issuing the call, so a row can measure less than the fixed cost and still be overhead-bound") + ".")
        outcome = "below"
    else:
        text += "close to the fixed cost of a call."
        outcome = "close"
    return Prose(text, {"floor_seconds": fl, "floor_outcome": outcome})


def _draws_random_numbers(op: str) -> bool:
    base = op.split(".")[0].strip("_")
    return base.startswith(RANDOM_OPS) and not base.endswith("backward")


def slow_rows(table) -> Prose:
    """The operators under ``SLOW_EFFICIENCY`` of their roofs that hold over ``SLOW_SHARE`` of the time, and
    for each: random numbers the count leaves out, the replay floor, or where to look."""
    from ..profiler.counting import PER_ELEMENT_FLOPS
    t = frame(table)
    total = float(t.seconds.sum())
    timed = t[(t.seconds > 0) & (t.roofline_seconds > 0)]
    if not len(timed) or not total > 0:
        return Prose("", {"slow_rows": []})
    g = timed.groupby("op", sort=False).agg(seconds=("seconds", "sum"), roof=("roofline_seconds", "sum"),
                                            rows=("seconds", "size"), regime=("regime", "first"))
    g["share"], g["efficiency"] = g.seconds / total, g.roof / g.seconds
    slow = g[(g.efficiency < SLOW_EFFICIENCY) & (g.share > SLOW_SHARE)]
    slow = slow.sort_values("share", ascending=False, kind="stable")
    if not len(slow):
        return Prose("", {"slow_rows": []})
    fl = t.attrs.get("replay_floor_seconds")
    found = [f"`{op}` ({w.percent(r.share)} of the summed replayed time, at {w.percent(r.efficiency)} of its roof)"
             for op, r in slow.iterrows()]
    text = (f"{'One operator' if len(slow) == 1 else f'{w.spelled(len(slow)).capitalize()} operators'} ran far "
            f"below {'its roof' if len(slow) == 1 else 'their roofs'} and still took much of the time: "
            f"{w.listing(found)}.")
    kinds = {op: "random" if _draws_random_numbers(op) else
             "floor" if fl and math.isfinite(fl) and r.seconds / r.rows < 2 * fl else "other"
             for op, r in slow.iterrows()}
    for op, r in slow.iterrows():
        if kinds[op] == "random":
            per = PER_ELEMENT_FLOPS.get(op.split(".")[0], 1)
            modules = t[t.op == op].module.astype(str) if "module" in t else []
            what = "dropout's random mask" if any("dropout" in m for m in modules) else "random numbers"
            text += (f" `{op}` draws {what}. Drawing a random number takes many instructions per element, and brrr "
                     f"counts {per} FLOP{'s' if per != 1 else ''} per element, so its roofline time, and the label "
                     f"{r.regime}, leave out most of its work.")
    floor_ops = [f"`{op}`" for op in slow.index if kinds[op] == "floor"]
    if floor_ops:
        text += (f" The rows of {w.listing(floor_ops)} averaged less than twice the replay floor of {w.seconds(fl)} "
                 "(see above), so at least half of their time is the floor, not their work.")
    other = [f"`{op}`" for op in slow.index if kinds[op] == "other"]
    if other:
        one = len(other) == 1
        text += (f" The roofline counts only the FLOPs and bytes of {w.listing(other)}, and something it leaves out "
                 f"holds {'it' if one else 'them'} back: `torch.profiler` lists the kernel{'' if one else 's'} "
                 f"{'it' if one else 'they'} ran.")
    return Prose(text, {"slow_rows": [(op, float(r.share), float(r.efficiency), kinds[op])
                                      for op, r in slow.iterrows()]})


def rows_vs_model(table) -> Prose:
    """The summed rows against one run of the whole model, and why they differ."""
    t = frame(table)
    total, model = float(t.seconds.sum()), t.attrs.get("model_seconds")
    fl = t.attrs.get("replay_floor_seconds")
    ratio = total / model
    text = f"The rows add up to {w.seconds(total)}, while one run of the whole model took {w.seconds(model)}"
    if ratio > 1 + w.SAME:
        text += (f": the rows take {w.times(ratio)} as long. Replayed alone after a flush, each operator reads "
                 "its inputs from DRAM, where in the real run the operator before it has just written them.")
        if fl and math.isfinite(fl):
            text += (f" Each replay also pays the floor of {w.seconds(fl)}: {len(t)} rows of it make "
                     f"{w.percent(min(1.0, len(t) * fl / total))} of the sum.")
        outcome = "rows longer"
    elif ratio < 1 / (1 + w.SAME):
        text += (f", {w.times(1 / ratio)} as long as the rows together: between the operators, the whole run also "
                 "pays for Python, module calls" + (", autograd bookkeeping" if t.attrs.get("backward") else "")
                 + " and issuing each operator, which no row contains.")
        outcome = "model longer"
    else:
        text += ": about the same."
        outcome = "same"
    return Prose(text, {"outcome": outcome, "rows_seconds": total, "model_seconds": model, "ratio": ratio})
