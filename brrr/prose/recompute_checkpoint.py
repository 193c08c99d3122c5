"""Chapter 5, recomputation: the checkpoint sweep. The segment length with the smallest modelled
peak against the sqrt(L m_in / m_block) formula, what checkpointing cost in time against its FLOP
ratio (PyTorch's checkpoint stops recomputing early, so less than 4/3), and the GPU allocator's peak, the one check of the model independent of the hooks.
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
    """The FLOP/s roof of a run's device for its dtype: the spec sheet on a known GPU (general
    math for float32), the measured roof on a CPU; None when the device summary has none."""
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
    ck, best, x = f["checkpointed"], f["best"], f["formula"]
    below = [e for e in ck if e <= x]
    above = [e for e in ck if e >= x]
    if below and above and below[-1] != above[0]:
        where = f"between the tried lengths {below[-1]} and {above[0]}"
    elif below and above:
        where = f"at the tried length {below[-1]}"
    elif below:
        where = f"beyond the longest length tried, {below[-1]}"
    else:
        where = f"below the shortest length tried, {above[0]}"
    text = (f"The formula puts the optimum at √(L · m_input / m_block) = "
            f"√({f['layers']} / {w.number(f['block_ratio'])}) ≈ {w.number(x, 2)}, {where}; evaluated at the "
            f"lengths tried, it picks {f['model_best']}")
    if f["model_best"] == best:
        text += (", the same as the sum of the counts. That agreement is expected, not a test of the model: the "
                 "formula is the same sum, written with one block's counted bytes, and the stack's counts add up "
                 "block by block.")
    else:
        text += (f", where the counts pick {best}. The formula assumes every segment saves exactly `every` times "
                 "one block's bytes and every block input the same; the counts of this stack differ from that "
                 "(a shorter last segment, or storages shared across a segment's boundary).")
    return text


# --- memory -----------------------------------------------------------------------------------

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
    if f["best"] <= 2 and f["block_ratio"] > 2:
        text += (f" Segments stay short because one block saves {w.number(f['block_ratio'])} times its input: "
                 "a long segment brings all of that back at once while it is recomputed, and only a very deep "
                 "stack makes longer segments pay.")
    return with_references(Prose(text, facts), references, "this sweep", _reference_memory)


def _reference_memory(run):
    """A reference run's stack and best segment length (None where it checkpointed none)."""
    r = sweep_facts(run)
    if r["best"] is None:
        return None
    t = (f"{w.reference_intro(run)}, the stack was {r['width']} wide with {r['batch']} rows per batch; one block "
         f"kept {w.number(r['block_ratio'])} times its input, so the modelled peak was lowest at segments of "
         f"{r['best']}")
    t += (f", {w.times(r['memory_factor'])} less than without checkpointing." if "memory_factor" in r else ".")
    return Prose(t, {f"reference {w.device_of(run)}": r["best"]})


# --- time -------------------------------------------------------------------------------------

def flop_ratio(f: dict, e: int) -> tuple:
    """(FLOPs of a step checkpointed every ``e`` blocks over a plain step's, how it is known):
    counted by PyTorch's FLOP counter where the run recorded it, else from the model of
    early stop (:func:`brrr.experiments.recompute.checkpoint_flop_ratio`)."""
    from ..experiments.recompute_checkpoint import checkpoint_flop_ratio
    rows = f["rows"]
    if rows[e].get("counted_flops") and rows[0].get("counted_flops"):
        return rows[e]["counted_flops"] / rows[0]["counted_flops"], "counted"
    return checkpoint_flop_ratio(f["layers"], e), "modelled"


def _time_outcome(ratio: float, flops: float) -> str:
    if ratio < 1 / (1 + w.SAME):
        return "faster"
    if ratio <= 1 + w.SAME:
        return "free"
    if abs(ratio / flops - 1) <= NEAR:
        return "near"
    return "below" if ratio < flops else "above"


def _flops_clause(f: dict, e: int) -> str:
    flops, how = flop_ratio(f, e)
    return (f"its FLOPs grew by a factor of {w.number(flops)} ("
            + ("counted by PyTorch's FLOP counter over one step" if how == "counted" else
               "in the model of PyTorch's checkpoint") +
            f"), less than the {w.number(ESTIMATE)} of one whole extra forward pass: with `use_reentrant=False` "
            "the recomputation stops as soon as every tensor the backward pass needs exists again, so each "
            "segment's last matmul, whose output nothing saves, is not rerun")


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
            text += (" More work cannot take less time unless something other than the work sets the pace; "
                     "rerunning the sweep shows whether the result holds.")
        return outcome, text
    if outcome == "free":
        text = (f"{subject} checkpointing with {seg} cost no visible time: a step took {w.number(ratio)} times as "
                "long as without")
    else:
        text = f"{subject} checkpointing with {seg} made a step take {w.number(ratio)} times as long as without"
    if not explain:
        return outcome, text + f", where its FLOPs grew by a factor of {w.number(flops)}."
    text += "; " + _flops_clause(f, e) + "."
    if outcome == "near":
        text += (f" The time followed the FLOPs, within {w.percent(abs(ratio / flops - 1))}.")
    elif outcome == "below":
        text += " The time grew less than the FLOPs: the recomputed work cost less per FLOP than the rest of the step."
    elif outcome == "above":
        text += " The time grew more than the FLOPs. " + _rate_sentence(f)
    return outcome, text


def _peak_name(f: dict) -> str:
    if f["cpu"]:
        return "this CPU's float32 roof"
    return ("the float32 peak of the spec sheet without tensor cores (PyTorch leaves TF32 off for float32 "
            "matmuls by default)")


def _rate_sentence(f: dict) -> str:
    """How far a step without checkpointing is from compute-bound: the FLOP ratio predicts the
    time only for a step whose time follows its FLOPs."""
    step = f["plain"]["min_seconds"]
    flops, peak = f["step_flops"], f["peak_flops"]
    text = (f"The FLOP ratio predicts the time only where time follows FLOPs. Without checkpointing a step took "
            f"{w.seconds(step)}, {w.seconds(step / f['layers'])} per block for its forward and backward together")
    if not flops or not peak:
        return text + "."
    share = flops / step / peak
    text += (f", and its matmuls ran at {w.rate(flops / step)}, {w.percent(share)} of {_peak_name(f)}, "
             f"{w.rate(peak)}")
    if share < FAR:
        return (text + ": far from compute-bound, so the step's time does not follow its FLOPs, and neither does "
                "the price of recomputing.")
    if share < CLOSE:
        return text + ": short of compute-bound, so part of the time goes to work the FLOP count does not see."
    return text + ": close enough to compute-bound that the FLOP count should hold."


def checkpoint_time(result, references=()) -> Prose:
    """The price of checkpointing at the best segment length against its FLOP ratio (counted, or
    the model of PyTorch's early-stopping checkpoint), and whether the FLOPs account for the price
    at every segment length; the reference runs."""
    f = sweep_facts(result)
    if f["best"] is None or "time_ratio" not in f:
        return Prose("The sweep has no run without checkpointing to time against, so it says nothing about "
                     "the price.", {"outcome": "no baseline"})
    outcome, text = _time_sentence(f, "On this run,")
    facts = {"outcome": outcome, "time_ratio": f["time_ratio"][f["best"]], "best_every": f["best"],
             "flop_ratio": flop_ratio(f, f["best"])[0]}
    ck = f["checkpointed"]
    shortest, longest = ck[0], ck[-1]
    if longest > shortest:
        r1, rl = f["time_ratio"][shortest], f["time_ratio"][longest]
        e1, el = flop_ratio(f, shortest)[0], flop_ratio(f, longest)[0]
        n1, nl = f["rows"][shortest]["segments"], f["rows"][longest]["segments"]
        off = {e: f["time_ratio"][e] / flop_ratio(f, e)[0] - 1 for e in ck}
        worst = max(ck, key=lambda e: abs(off[e]))
        facts["follows_flops"] = abs(off[worst]) <= NEAR
        facts["largest_gap"] = off[worst]
        text += (f" From {n1} segments of {shortest} block{'s' if shortest > 1 else ''} to {nl} "
                 f"segment{'s' if nl > 1 else ''} of {longest} blocks, the time ratio went from {w.number(r1)} to "
                 f"{w.number(rl)} and the FLOP ratio from {w.number(e1)} to {w.number(el)}.")
        if facts["follows_flops"]:
            text += (f" At every length the time stayed within {w.percent(abs(off[worst]))} of the FLOP ratio, so "
                     "the FLOPs account for how the price changes with the segment length: the longer the "
                     "segment, the smaller the share of its matmuls that early stop skips.")
        else:
            text += (f" The FLOPs do not account for the price at every length: with segments of {worst} the time "
                     f"ratio was {w.percent(abs(off[worst]))} {'above' if off[worst] > 0 else 'below'} the FLOP "
                     "ratio. Profiling that step and the plain one (Chapter 7) shows what costs the time.")
    if f["spread"] > NOISY:
        facts["noisy"] = True
        text += (f" The samples spread widely (an interquartile range up to {w.percent(f['spread'])} of the "
                 "median): the memory panel is exact, the time panel is rough.")
    # None: a missing reference is said once, under the memory panel
    return with_references(Prose(text, facts), references, None, _reference_time)


def _reference_time(run):
    """What checkpointing cost a reference run (None where it has no baseline)."""
    r = sweep_facts(run)
    if r["best"] is None or "time_ratio" not in r:
        return None
    o, t = _time_sentence(r, f"{w.reference_intro(run)},", explain=False)
    return Prose(t, {f"reference {w.device_of(run)}": o})


# --- the allocator's peak: the one independent check ------------------------------------------

def late_peak(f: dict, e: int):
    """The allocator's peak with segments of ``e`` blocks in a model where it comes late in the
    backward pass, while the stack's first segment (the last one reached) is recomputed: that
    segment's saved activations, the gradients of the weights of the other segments, which already
    exist ((1 - e/L) of the weights' bytes), and what the plain run's peak held beyond its counted
    activations (the output, its gradient, temporaries). None without the numbers it needs."""
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
            text += f" Without checkpointing the measured peak is {_bytes(extra)} above the counted activations"
            if params and extra < params:
                text += (f", less than the {_bytes(params)} of the weights' gradients alone: that peak did not hold "
                         "all the saved activations and all the weights' gradients at once.")
            else:
                text += "."
        else:
            text += (" Without checkpointing the measured peak is below the counted activations: autograd frees "
                     "some saved tensors during the backward pass before the peak is reached, which the model, "
                     "holding everything until the start of the backward pass, does not.")
        late = {e: late_peak(f, e) for e in ck}
        if all(late.values()):
            gap = {e: alloc[e] / late[e] - 1 for e in ck}
            worst = max(ck, key=lambda e: abs(gap[e]))
            facts["late_peak_gap"] = gap[worst]
            text += (" The model puts the worst moment at the recomputation of the first segment the backward "
                     "pass reaches. Suppose instead that it comes late, while the stack's first segment (the last "
                     "one reached) is recomputed: that segment's counted activations, plus the gradients of the "
                     "other segments' weights, which exist by then, plus the plain run's extra.")
            if abs(gap[worst]) <= NEAR:
                facts["late_peak_fits"] = True
                grads = (1 - min(best, f["layers"]) / f["layers"]) * params
                facts["gradient_share"] = grads / late[best]
                text += (f" That sum is within {w.percent(abs(gap[worst]))} of the allocator's peak at every "
                         f"segment length. In it, with segments of {best}, the weights' gradients, which "
                         f"checkpointing does not shrink, are {w.percent(grads / late[best])} of the peak"
                         + (", which is why the measured factor is the smaller one." if factor < f["memory_factor"]
                            else "."))
            else:
                facts["late_peak_fits"] = False
                text += (f" That sum misses the allocator's peak by {w.percent(abs(gap[worst]))} with segments of "
                         f"{worst}, so it does not say when the peak comes either; "
                         "`torch.cuda.memory._record_memory_history` records every allocation of a step and shows it.")
    return facts, text


def allocator_peak(result, references=()) -> Prose:
    """The model of the peak against the GPU allocator's peak, where one was measured (this run on a
    GPU, or a reference GPU run); where none was, says that nothing independent checks the model."""
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
                "is a sum of hook counts, compared with those same counts. Only a GPU's allocator "
                "(`torch.cuda.max_memory_allocated`) gives a peak to "
                "test the model against." if f["cpu"] else
                "This run recorded no allocator peak, so nothing measures the peak independently of the hooks.")
        if gpu_refs:
            text += f" The reference GPU runs did record one; {link} shows them."
        else:
            text += (" No reference GPU run of this sweep ships with this edition of the book yet, so this page "
                     "has no allocator measurement to set against the model, and no figure of one.")
    # None: the text above already says when no reference GPU run ships
    return with_references(Prose(text, facts), gpu_refs, None, _reference_allocator)


def _reference_allocator(run):
    """A reference GPU run's allocator peak against its model (None where it checkpointed none)."""
    r = sweep_facts(run)
    if r["best"] is None:
        return None
    fr, t = _allocator_sentence(r, f"{w.reference_intro(run)},")
    return Prose(t, {f"reference {w.device_of(run)}": fr})
