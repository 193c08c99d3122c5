"""Chapter 5, recomputation: the checkpoint sweep. The best segment length against the
sqrt(L m_in / m_block) formula, the price in time against the FLOP ratio, and the GPU allocator's peak.
"""
from __future__ import annotations

import math

from . import Prose, with_references
from . import words as w
from .recompute_saved import _bytes

ESTIMATE = 4 / 3     # a step with one whole extra forward pass, the backward costing two forwards
NEAR = 0.05          # a time ratio within 5% of the FLOP ratio "follows the FLOPs"
NOISY = 0.5          # an interquartile range above half the median: the times are noisy
FAR, CLOSE = 0.10, 0.50   # a step's matmuls below 10% of the FLOP roof: far from compute-bound; above 50%: close


def _peak_flops(meta: dict):
    """The FLOP/s roof of a run's device for its dtype (None when the device summary has none)."""
    dev = meta.get("device") or {}
    dtype = meta.get("dtype", "float32")
    key = "peak_flops_float32" if dtype == "float32" else f"peak_flops_{dtype}_tensor"
    return dev.get(key) or dev.get("peak_flops_float32")


def sweep_facts(run) -> dict:
    """The numbers the checkpoint prose is chosen from, for one run of ``checkpoint_sweep``."""
    from ..experiments.recompute import checkpoint_model
    rows = {int(r["every"]): r for r in run.records}
    meta = run.meta
    layers, m_in, m_block = meta["layers"], meta["input_bytes"], meta["block_bytes"]
    ck = sorted(e for e in rows if e > 0)
    plain = rows.get(0)
    best = min(ck, key=lambda e: (rows[e]["peak_activation_bytes"], e)) if ck else None
    formula = math.sqrt(layers * m_in / m_block)
    model_best = min(ck, key=lambda e: (checkpoint_model(m_block, m_in, layers, e), e)) if ck else None
    f = {"rows": rows, "layers": layers, "input_bytes": m_in, "block_bytes": m_block, "checkpointed": ck,
         "plain": plain, "best": best, "formula": formula, "model_best": model_best,
         "block_ratio": m_block / m_in, "cpu": w.is_cpu(run),
         "device": w.device_of(run), "width": meta.get("width"), "batch": meta.get("batch"),
         "parameter_bytes": meta.get("parameter_bytes"),
         "step_flops": meta.get("step_flops") or (12 * layers * 4 * meta["batch"] * meta["width"] ** 2
                                                  if meta.get("batch") and meta.get("width") else None),
         "peak_flops": _peak_flops(meta)}
    if plain and best is not None:
        f["memory_factor"] = plain["saved_bytes"] / rows[best]["peak_activation_bytes"]
        if plain.get("min_seconds"):
            f["time_ratio"] = {e: rows[e]["min_seconds"] / plain["min_seconds"] for e in ck}
    f["allocator"] = {e: r["peak_memory_bytes"] for e, r in rows.items() if r.get("peak_memory_bytes")}
    spreads = [r["iqr_seconds"] / r["seconds"] for r in rows.values()
               if r.get("iqr_seconds") is not None and r.get("seconds")]
    f["spread"] = max(spreads, default=0.0)
    return f


def _formula_sentence(f: dict) -> str:
    best = f["best"]
    text = (f"The formula puts the optimum at √(L · m_input / m_block) = "
            f"√({f['layers']} / {w.number(f['block_ratio'])}) ≈ {w.number(f['formula'], 2)}; evaluated at the "
            f"lengths tried, it picks {f['model_best']}")
    if f["model_best"] == best:
        return (text + ", the same as the sum of the counts; that is expected, not a test of the model: the "
                "formula is that sum, written with one block's counted bytes.")
    return (text + f", where the counts pick {best}: the counts of this stack are not `every` times one "
            "block's bytes per segment, as the formula assumes.")


def checkpoint_memory(result, references=()) -> Prose:
    """The segment length with the smallest modelled peak, against the sqrt(L m_in / m_block)
    formula, and the memory factor; what is counted and what is modelled; the reference runs."""
    f = sweep_facts(result)
    facts = {"best_every": f["best"], "formula_every": f["formula"], "model_every": f["model_best"],
             "block_ratio": f["block_ratio"]}
    if f["best"] is None:
        return Prose("The sweep checkpointed no segment length, so there is nothing to compare.", facts)
    best_peak = f["rows"][f["best"]]["peak_activation_bytes"]
    text = (f"The modelled peak is lowest with segments of {f['best']} block{'s' if f['best'] > 1 else ''} "
            f"({_bytes(best_peak)})")
    if f["plain"]:
        facts["memory_factor"] = f["memory_factor"]
        text += (f", {w.times(f['memory_factor'])} less than the {_bytes(f['plain']['saved_bytes'])} that the "
                 f"hooks counted without checkpointing.")
    else:
        text += "; the sweep has no run without checkpointing to compare it with."
    text += " " + _formula_sentence(f)
    return with_references(Prose(text, facts), references, "this sweep", _reference_memory)


def _reference_memory(run):
    r = sweep_facts(run)
    if r["best"] is None:
        return None
    t = (f"{w.reference_intro(run)}, the stack was {r['width']} wide with {r['batch']} rows per batch; one block "
         f"kept {w.number(r['block_ratio'])} times its input, so the modelled peak was lowest at segments of "
         f"{r['best']}")
    t += (f", {w.times(r['memory_factor'])} less than without checkpointing." if "memory_factor" in r else ".")
    return Prose(t, {f"reference {w.device_of(run)}": r["best"]})


def flop_ratio(f: dict, e: int) -> tuple:
    """(a step's FLOPs checkpointed every ``e`` blocks over a plain step's, 'counted' or 'modelled')."""
    from ..experiments.recompute_checkpoint import checkpoint_flop_ratio
    rows = f["rows"]
    if rows[e].get("counted_flops") and rows[0].get("counted_flops"):
        return rows[e]["counted_flops"] / rows[0]["counted_flops"], "counted"
    return checkpoint_flop_ratio(f["layers"], e), "modelled"


def _time_outcome(ratio: float, flops: float) -> str:
    return ("faster" if ratio < 1 / (1 + w.SAME) else "free" if ratio <= 1 + w.SAME else
            "near" if abs(ratio / flops - 1) <= NEAR else "below" if ratio < flops else "above")


def _flops_clause(f: dict, e: int) -> str:
    flops, how = flop_ratio(f, e)
    return (f"its FLOPs grew by a factor of {w.number(flops)} ("
            + ("counted by PyTorch's FLOP counter over one step" if how == "counted" else
               "in the model of PyTorch's checkpoint") +
            f"), not the {w.number(ESTIMATE)} of one whole extra forward pass: with `use_reentrant=False` "
            "each segment's last matmul, whose output nothing saves, is not rerun")


def _time_sentence(f: dict, subject: str, explain: bool = True) -> tuple:
    e = f["best"]
    ratio = f["time_ratio"][e]
    flops = flop_ratio(f, e)[0]
    outcome = _time_outcome(ratio, flops)
    seg = f"segments of {e} block{'s' if e > 1 else ''}"
    if outcome == "faster":
        text = (f"{subject} checkpointing with {seg} made a training step {w.times(1 / ratio)} *faster* than "
                "without, although it does more arithmetic.")
        if explain:
            text += " Rerunning the sweep shows whether that holds."
        return outcome, text
    text = (f"{subject} checkpointing with {seg} "
            + ("cost no visible time: a step took" if outcome == "free" else "made a step take")
            + f" {w.number(ratio)} times as long as without")
    if not explain:
        return outcome, text + f", where its FLOPs grew by a factor of {w.number(flops)}."
    text += "; " + _flops_clause(f, e) + "."
    if outcome == "below":
        text += " The time grew less than the FLOPs."
    elif outcome == "above":
        text += " The time grew more than the FLOPs. " + _rate_sentence(f)
    return outcome, text


def _rate_sentence(f: dict) -> str:
    """How far a step without checkpointing is from compute-bound."""
    step = f["plain"]["min_seconds"]
    flops, peak = f["step_flops"], f["peak_flops"]
    text = f"Without checkpointing a step took {w.seconds(step)}"
    if not flops or not peak:
        return text + "."
    share = flops / step / peak
    text += (f", and its matmuls ran at {w.rate(flops / step)}, {w.percent(share)} of "
             + ("this CPU's float32 roof" if f["cpu"] else "the spec sheet's float32 peak without tensor cores") + ", "
             f"{w.rate(peak)}")
    return text + (": far from compute-bound, where time need not follow FLOPs." if share < FAR else
                   ": short of compute-bound." if share < CLOSE else
                   ": close enough to compute-bound that the FLOP count should hold.")


def checkpoint_time(result, references=()) -> Prose:
    """The price of checkpointing against its FLOP ratio, at the best and at every segment length."""
    f = sweep_facts(result)
    if f["best"] is None or "time_ratio" not in f:
        return Prose("The sweep has no run without checkpointing to time against, so it says nothing about "
                     "the price.", {"outcome": "no baseline"})
    outcome, text = _time_sentence(f, "On this run,")
    facts = {"outcome": outcome, "time_ratio": f["time_ratio"][f["best"]], "best_every": f["best"],
             "flop_ratio": flop_ratio(f, f["best"])[0]}
    ck = f["checkpointed"]
    if len(ck) > 1:
        off = {e: f["time_ratio"][e] / flop_ratio(f, e)[0] - 1 for e in ck}
        worst = max(ck, key=lambda e: abs(off[e]))
        facts["follows_flops"] = abs(off[worst]) <= NEAR
        facts["largest_gap"] = off[worst]
        if facts["follows_flops"]:
            text += (f" At every length the time stayed within {w.percent(abs(off[worst]))} of the FLOP ratio, so "
                     "the FLOPs account for how the price changes with the segment length.")
        else:
            text += (f" The FLOPs do not account for the price at every length: with segments of {worst} the time "
                     f"ratio was {w.percent(abs(off[worst]))} {'above' if off[worst] > 0 else 'below'} the FLOP "
                     "ratio; profiling that step and the plain one (Chapter 7) would show what costs the time.")
    if f["spread"] > NOISY:
        facts["noisy"] = True
        text += (f" The samples spread widely (an interquartile range up to {w.percent(f['spread'])} of the "
                 "median): the memory panel is exact, the time panel is rough.")
    # None: a missing reference is said once, under the memory panel
    return with_references(Prose(text, facts), references, None, _reference_time)


def _reference_time(run):
    r = sweep_facts(run)
    if r["best"] is None or "time_ratio" not in r:
        return None
    o, t = _time_sentence(r, f"{w.reference_intro(run)},", explain=False)
    return Prose(t, {f"reference {w.device_of(run)}": o})


def late_peak(f: dict, e: int):
    """The peak while the stack's first segment is recomputed: its saved activations, (1 - e/L) of the
    weights' bytes as gradients and the plain run's peak beyond its counted activations (or None)."""
    alloc, plain, params = f["allocator"], f["plain"], f["parameter_bytes"]
    if not (params and plain and 0 in alloc and e in alloc):
        return None
    extra = alloc[0] - plain["saved_bytes"]
    return f["rows"][e]["recompute_bytes"] + (1 - min(e, f["layers"]) / f["layers"]) * params + max(extra, 0)


def _allocator_sentence(f: dict, subject: str) -> tuple:
    alloc = f["allocator"]
    ck = [e for e in f["checkpointed"] if e in alloc]
    best = min(ck, key=lambda e: (alloc[e], e))
    facts = {"allocator_best": best, "model_best": f["best"]}
    text = (f"{subject} the allocator's peak, measured independently of the hooks, was lowest with segments of "
            f"{best} ({_bytes(alloc[best])})")
    text += ", the same length the model picks." if best == f["best"] else f", where the model picks {f['best']}."
    if 0 in alloc and f["plain"]:
        factor = alloc[0] / alloc[best]
        facts["allocator_factor"] = factor
        text += (f" Checkpointing shrank the measured peak by a factor of {w.number(factor, 2)}, and the "
                 f"modelled activations by a factor of {w.number(f['memory_factor'], 2)}.")
        extra = alloc[0] - f["plain"]["saved_bytes"]
        facts["extra_bytes"] = extra
        params = f["parameter_bytes"]
        if extra > 0:
            text += (f" Without checkpointing the measured peak is {_bytes(extra)} above the counted activations"
                     + (f", less than the {_bytes(params)} of the weights' gradients alone: that peak did not hold "
                        "all the saved activations and all the weights' gradients at once." if params and extra < params
                        else "."))
        else:
            text += (" Without checkpointing the measured peak is below the counted activations, which the model, "
                     "holding them all until the backward pass starts, does not allow.")
        late = {e: late_peak(f, e) for e in ck}
        if all(late.values()):
            gap = {e: alloc[e] / late[e] - 1 for e in ck}
            worst = max(ck, key=lambda e: abs(gap[e]))
            facts["late_peak_gap"] = gap[worst]
            text += (" Suppose the peak comes late, while the stack's first segment is recomputed: it then holds "
                     "that segment's counted activations, the other segments' weight gradients and the plain "
                     "run's extra.")
            if abs(gap[worst]) <= NEAR:
                facts["late_peak_fits"] = True
                grads = (1 - min(best, f["layers"]) / f["layers"]) * params
                facts["gradient_share"] = grads / late[best]
                text += (f" That sum is within {w.percent(abs(gap[worst]))} of the allocator's peak at every "
                         f"segment length; with segments of {best}, the weights' gradients, which "
                         f"checkpointing does not shrink, are {w.percent(grads / late[best])} of it"
                         + (", which is why the measured factor is the smaller one." if factor < f["memory_factor"]
                            else "."))
            else:
                facts["late_peak_fits"] = False
                text += (f" That sum misses the allocator's peak by {w.percent(abs(gap[worst]))} with segments of "
                         f"{worst}; `torch.cuda.memory._record_memory_history` would show when the peak comes.")
    return facts, text


def allocator_peak(result, references=()) -> Prose:
    """The modelled peak against the GPU allocator's, where this run or a reference measured one."""
    f = sweep_facts(result)
    gpu_refs = [run for run in references if sweep_facts(run)["allocator"]]
    has_figure = bool(f["allocator"]) or bool(gpu_refs)
    facts = {"live_allocator": bool(f["allocator"]), "reference_allocators": len(gpu_refs), "figure": has_figure}
    link = "[the peak-memory figure](#fig-peak-memory)"
    if f["allocator"] and f["best"] is not None:
        fa, text = _allocator_sentence(f, f"On this GPU ({link}),")
        facts.update(fa)
    else:
        text = (f"{f['device']} is a CPU, and PyTorch keeps no peak counter for CPU memory, so on this run nothing "
                "measures the peak independently: the dashed line of [the checkpointing figure](#fig-checkpoint) "
                "is a sum of hook counts. A GPU's `torch.cuda.max_memory_allocated` would test it." if f["cpu"] else
                "This run recorded no allocator peak, so nothing measures the peak independently of the hooks.")
        if gpu_refs:
            text += f" The reference GPU runs did record one; {link} shows them."
        else:
            text += " No reference GPU run of this sweep ships with this edition of the book yet."
    # None: the text above already says when no reference GPU run ships
    return with_references(Prose(text, facts), gpu_refs, None, _reference_allocator)


def _reference_allocator(run):
    r = sweep_facts(run)
    if r["best"] is None:
        return None
    fr, t = _allocator_sentence(r, f"{w.reference_intro(run)},")
    return Prose(t, {f"reference {w.device_of(run)}": fr})
