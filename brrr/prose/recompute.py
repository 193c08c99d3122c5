"""Chapter 5, recomputation: sentences chosen by the measurements.

What the chapter measures, and what it only models:

* **measured exactly**, by saved-tensor hooks: the bytes autograd keeps after the
  forward pass, and the bytes one segment saves while it is recomputed;
* **measured with a clock**: the time of a training step (fastest sample);
* **measured by the GPU's allocator**, on a GPU only: the peak memory of a step
  (``torch.cuda.max_memory_allocated``);
* **modelled**: the peak of the activations during the backward pass, taken to be
  what stays saved plus one segment's recomputed activations. It is built from
  the hook counts, so comparing it with them proves nothing; only the allocator's
  peak is an independent check, and the prose says so where there is none.

Each function takes the chapter's live result(s) and the reference runs of the
same experiment (from :func:`brrr.reference.beside`) and returns
:class:`~brrr.prose.Prose`.
"""
from __future__ import annotations

import math

from . import Prose, with_references
from . import words as w

ESTIMATE = 4 / 3     # a step with one extra forward pass, the backward costing two forwards
NEAR = 0.15          # within 15% of the 4/3 estimate is "close to" it
NOISY = 0.5          # an interquartile range above half the median: the times are noisy
FAR, CLOSE = 0.10, 0.50   # a step's matmuls below 10% of the FLOP roof: far from compute-bound; above 50%: close


def _bytes(n: float) -> str:
    """'1,536 bytes' for small exact counts, '12 MiB' for large ones."""
    return f"{int(n):,} bytes" if n < 2 ** 14 else w.size(n)


def _count(n: int) -> str:
    """'two' for small counts, '12' for larger ones."""
    names = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    return names[n] if 0 <= n < len(names) else f"{n:,}"


def _rows(rows) -> list:
    """saved_tensors rows as dicts (a list of dicts or a DataFrame of them)."""
    return rows.to_dict("records") if hasattr(rows, "to_dict") else list(rows)


def _shape(shape) -> str:
    return " × ".join(str(d) for d in shape) or "scalar"


# --- the small layer --------------------------------------------------------------------

def small_layer(rows, by_hand: int) -> Prose:
    """The hooks' count of a layer's saved activations (``rows`` from ``saved_tensors``)
    against the count ``by_hand`` (bytes)."""
    rows = _rows(rows)
    acts = [r for r in rows if r["kind"] == "activation"]
    params = [r for r in rows if r["kind"] == "parameter"]
    measured = sum(r["nbytes"] for r in acts)
    listed = (f"{_count(len(acts))} saved activation{'s' if len(acts) != 1 else ''}, "
              f"{' and '.join(_shape(r['shape']) for r in acts)} ({', '.join(sorted({r['dtype'] for r in acts}))})"
              if acts else "no saved activation")
    if measured == by_hand:
        outcome = "agree"
        text = f"The hooks saw {listed}: {_bytes(measured)}, exactly the {_bytes(by_hand)} counted by hand."
    else:
        outcome = "more" if measured > by_hand else "fewer"
        text = (f"The hooks saw {listed}: {_bytes(measured)}, {_bytes(abs(measured - by_hand))} "
                f"{outcome} than the {_bytes(by_hand)} counted by hand. The hand count assumed what each "
                "operation saves; the hooks see what this version of PyTorch actually keeps, and where the "
                "two differ, the hooks are right.")
    if params:
        many = len(params) > 1
        text += (f" They also saw {_count(len(params))} weight{'s' if many else ''} "
                 f"({_bytes(sum(r['nbytes'] for r in params))}), listed as {'parameters' if many else 'a parameter'} "
                 "and not counted: weights are in memory anyway.")
    else:
        text += " No weight was saved."
    return Prose(text, {"outcome": outcome, "measured": measured, "by_hand": by_hand, "parameters": len(params)})


# --- one block --------------------------------------------------------------------------

def block(rows, input_bytes: int, layers: int) -> Prose:
    """What one block of the stack saves (``rows`` from ``saved_tensors``), as a multiple of its
    input's ``input_bytes``, and what a stack of ``layers`` blocks keeps."""
    rows = _rows(rows)
    acts = [r for r in rows if r["kind"] == "activation"]
    total = sum(r["nbytes"] for r in acts)
    ratio = total / input_bytes
    same = [r for r in acts if r["nbytes"] == input_bytes]
    big = [r for r in acts if r["nbytes"] > input_bytes]
    small = [r for r in acts if r["nbytes"] < input_bytes]
    parts = []
    if same:
        parts.append(f"{_count(len(same))} of the input's size ({_shape(same[0]['shape'])})")
    if big:
        sizes = sorted({r["nbytes"] / input_bytes for r in big})
        times = " or ".join(w.number(s) for s in sizes)
        shapes = ", ".join(dict.fromkeys(_shape(r["shape"]) for r in big))
        parts.append(f"{_count(len(big))} {times} times larger ({shapes})")
    if small:
        parts.append(f"{_count(len(small))} small one{'s' if len(small) > 1 else ''} "
                     f"({_bytes(sum(r['nbytes'] for r in small))} in all)")
    listing = (", ".join(parts[:-1]) + " and " + parts[-1]) if len(parts) > 1 else (parts[0] if parts else "nothing")
    text = (f"One block keeps {w.number(ratio)} times its input's size in activations, {_bytes(total)} for a "
            f"{_bytes(input_bytes)} input: {listing}. A stack of {layers} blocks keeps {layers} times as much, "
            f"{_bytes(layers * total)}.")
    params = [r for r in rows if r["kind"] == "parameter"]
    if params:
        text += (f" The {_count(len(params))} parameter rows are weights the backward pass reads to compute "
                 "the gradients of their layers' inputs; they are in memory anyway and cost nothing extra.")
    return Prose(text, {"block_ratio": ratio, "block_bytes": total, "input_bytes": input_bytes,
                        "stack_bytes": layers * total})


# --- the checkpoint sweep ---------------------------------------------------------------

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
         "block_ratio": m_block / m_in, "cpu": (meta.get("device") or {}).get("backend") == "cpu",
         "device": w.device_of(run), "width": meta.get("width"), "batch": meta.get("batch"),
         "parameter_bytes": meta.get("parameter_bytes"),
         "step_flops": meta.get("step_flops") or (12 * layers * 4 * meta["batch"] * meta["width"] ** 2
                                                  if meta.get("batch") and meta.get("width") else None),
         "peak_flops": _peak_flops(meta)}
    if plain and best is not None:
        f["memory_factor"] = plain["saved_bytes"] / rows[best]["peak_activation_bytes"]
        if plain.get("min"):
            f["time_ratio"] = {e: rows[e]["min"] / plain["min"] for e in ck}
    f["allocator"] = {e: r["peak_memory_bytes"] for e, r in rows.items() if r.get("peak_memory_bytes")}
    spreads = [r["iqr"] / r["seconds"] for r in rows.values() if r.get("iqr") is not None and r.get("seconds")]
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


def _time_outcome(ratio: float) -> str:
    if ratio < 1 / (1 + w.SAME):
        return "faster"
    if ratio <= 1 + w.SAME:
        return "free"
    if abs(ratio / ESTIMATE - 1) <= NEAR:
        return "near"
    return "below" if ratio < ESTIMATE else "above"


def _time_sentence(f: dict, subject: str, explain: bool = True) -> tuple:
    e = f["best"]
    ratio = f["time_ratio"][e]
    outcome = _time_outcome(ratio)
    seg = f"segments of {e} block{'s' if e > 1 else ''}"
    if outcome == "faster":
        text = (f"{subject} checkpointing with {seg} made a training step {w.times(1 / ratio)} *faster* than "
                "without, although it does more arithmetic.")
        if explain:
            text += (" More work cannot take less time unless something other than the work sets the pace: "
                     f"without checkpointing a step writes {_bytes(f['plain']['saved_bytes'])} of activations "
                     "and reads them back, memory that has to be found and touched"
                     + (" (on a CPU, the operating system may map fresh pages for it on every step)"
                        if f["cpu"] else "") +
                     ", while with checkpointing far less of it is ever alive. Noise on a busy machine can "
                     "produce the same picture; rerun the sweep before trusting it.")
    elif outcome == "free":
        text = (f"{subject} checkpointing with {seg} cost no visible time: a step took {w.number(ratio)} times as "
                f"long as without, where the estimate is {w.number(ESTIMATE)}.")
        if explain:
            text += (" The extra forward pass was paid for by something the estimate leaves out: less memory "
                     "to allocate and touch per step, or noise that hides a cost this small.")
    elif outcome == "near":
        text = (f"{subject} checkpointing with {seg} made a step take {w.number(ratio)} times as long as without, "
                f"close to the estimate of {w.number(ESTIMATE)}: one extra forward pass, on a backward pass that "
                "costs about two.")
    elif outcome == "below":
        text = (f"{subject} checkpointing with {seg} made a step take {w.number(ratio)} times as long as without, "
                f"less than the estimate of {w.number(ESTIMATE)}: here the backward pass costs more than two "
                "forward passes, so one more forward is a smaller share of the step.")
    else:
        text = (f"{subject} checkpointing with {seg} made a step take {w.number(ratio)} times as long as without, "
                f"well above the estimate of {w.number(ESTIMATE)}.")
        if explain:
            text += " " + _rate_sentence(f)
    return outcome, text


def _rate_sentence(f: dict) -> str:
    """How far a step without checkpointing is from compute-bound: the estimate's 4/3 holds
    for a step whose time follows its FLOPs."""
    step = f["plain"]["min"]
    flops, peak = f["step_flops"], f["peak_flops"]
    text = (f"The estimate assumes time follows FLOPs. Without checkpointing a step took {w.seconds(step)}, "
            f"{w.seconds(step / f['layers'])} per block for its forward and backward together")
    if not flops or not peak:
        return text + "."
    share = flops / step / peak
    text += f", and its matmuls ran at {w.rate(flops / step)}, {w.percent(share)} of the {w.rate(peak)} roof"
    if share < FAR:
        return (text + ": far from compute-bound. The blocks are too small for their arithmetic to set the pace; "
                "fixed costs per operation (Chapter 3) and memory traffic do, and those do not scale like "
                "the FLOP count.")
    if share < CLOSE:
        return (text + ": short of compute-bound, so part of the time goes to work that does not scale with "
                "the FLOP count: fixed costs per operation (Chapter 3) and the memory-bound layer norms, GELUs "
                "and additions between the matmuls.")
    return (text + ": close enough to compute-bound that the FLOP count should hold, so the extra cost "
            "comes from elsewhere (see the segment counts below, and the spread of the samples).")


def checkpoint_time(result, references=()) -> Prose:
    """The price of checkpointing at the best segment length, against the 4/3 estimate, and
    whether it grows with the number of segments (overhead per segment); the reference runs."""
    f = sweep_facts(result)
    if f["best"] is None or "time_ratio" not in f:
        return Prose("The sweep has no run without checkpointing to time against, so it says nothing about "
                     "the price.", {"outcome": "no baseline"})
    outcome, text = _time_sentence(f, "On this run,")
    facts = {"outcome": outcome, "time_ratio": f["time_ratio"][f["best"]], "best_every": f["best"]}
    ck = f["checkpointed"]
    shortest, longest = ck[0], ck[-1]
    noisy = f["spread"] > NOISY
    if longest > shortest:
        r1, rl = f["time_ratio"][shortest], f["time_ratio"][longest]
        n1, nl = f["rows"][shortest]["segments"], f["rows"][longest]["segments"]
        facts["per_segment"] = r1 > rl * (1 + w.SAME)
        both = (f"With {n1} segments of {shortest} block{'s' if shortest > 1 else ''}, a step took "
                f"{w.number(r1)} times as long as without; with {nl} segment{'s' if nl > 1 else ''} of {longest} "
                f"blocks, {w.number(rl)} times. Both recompute the whole forward pass once.")
        if facts["per_segment"]:
            text += (f" {both} " + ("If that is not noise, the difference" if noisy else "The difference") +
                     " is a fixed cost per checkpointed segment (saving its input and the random-number state, "
                     "setting up the recomputation), which matters when there are many segments of small blocks.")
        elif rl > r1 * (1 + w.SAME):
            text += (f" {both} Fewer, longer segments cost more here, not less: recomputing a long segment brings "
                     "many blocks' activations back at once, and more memory in flight can be slower to allocate "
                     "and to reach; or the difference is noise.")
        else:
            text += f" {both} The number of segments made no clear difference, so the cost is not per segment."
    if noisy:
        facts["noisy"] = True
        text += (f" The samples spread widely (an interquartile range up to {w.percent(f['spread'])} of the "
                 "median), most likely because other programs were competing for this machine: the memory "
                 "panel is exact, the time panel is rough.")
    # None: a missing reference is said once, under the memory panel
    return with_references(Prose(text, facts), references, None, _reference_time)


def _reference_time(run):
    """What checkpointing cost a reference run (None where it has no baseline)."""
    r = sweep_facts(run)
    if r["best"] is None or "time_ratio" not in r:
        return None
    o, t = _time_sentence(r, f"{w.reference_intro(run)},", explain=False)
    return Prose(t, {f"reference {w.device_of(run)}": o})


# --- the allocator's peak: the one independent check -------------------------------------

def _allocator_sentence(f: dict, subject: str) -> tuple:
    alloc = f["allocator"]
    ck = [e for e in f["checkpointed"] if e in alloc]
    best = min(ck, key=lambda e: (alloc[e], e))
    facts = {"allocator_best": best, "model_best": f["best"]}
    text = (f"{subject} the allocator's peak, measured independently of the hooks, was lowest with segments of "
            f"{best} ({_bytes(alloc[best])})")
    text += (", the same length the model picks." if best == f["best"] else
             f", where the model picks {f['best']}: the model leaves out memory that depends on the segment "
             "length too (the recomputed segment's temporaries, the gradients flowing through it).")
    if 0 in alloc and f["plain"]:
        factor = alloc[0] / alloc[best]
        facts["allocator_factor"] = factor
        text += (f" Checkpointing shrank the measured peak by a factor of {w.number(factor, 2)}, and the "
                 f"modelled activations by a factor of {w.number(f['memory_factor'], 2)}.")
        extra = alloc[0] - f["plain"]["saved_bytes"]
        facts["extra_bytes"] = extra
        if extra > 0:
            text += (f" Without checkpointing the measured peak is {_bytes(extra)} above the counted activations: "
                     "that is what the count leaves out, the weights' gradients")
            if f["parameter_bytes"]:
                text += f" ({_bytes(f['parameter_bytes'])} here)"
            text += (", the output and temporary buffers. It does not shrink with checkpointing, which is why "
                     "the measured factor is the smaller one." if factor < f["memory_factor"] else
                     ", the output and temporary buffers.")
        else:
            text += (" Without checkpointing the measured peak is below the counted activations: autograd frees "
                     "some saved tensors during the backward pass before the peak is reached, which the model, "
                     "holding everything until the start of the backward pass, does not.")
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
                f"This run recorded no allocator peak, so nothing measures the peak independently of the hooks.")
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


# --- recomputation inside torch.compile ---------------------------------------------------

def chain_facts(run) -> dict:
    rows = {r["variant"]: r for r in run.records}
    meta = run.meta
    dev = meta.get("device") or {}
    return {"rows": rows, "k": meta.get("k"), "op": meta.get("op"), "n": meta.get("n"),
            "notes": list(meta.get("notes") or []), "cpu": dev.get("backend") == "cpu",
            "cache": dev.get("l2_bytes") or 0}


def _compile_failed(c: dict) -> str:
    note = next((n for n in c["notes"] if "skipped" in n), "no reason recorded")
    return note.split(": ", 1)[-1]


def _memory_sentence(c: dict) -> tuple:
    rows, k = c["rows"], c["k"]
    eager, rec = rows["eager"], rows["compiled (recompute)"]
    ratio = eager["saved_bytes"] / rec["saved_bytes"]
    as_predicted = all(r["saved_bytes"] == r["predicted_saved_bytes"] for r in (eager, rec))
    text = (f"With recomputation the compiled chain saved {_bytes(rec['saved_bytes'])} for its backward pass "
            f"({rec['saved_tensors']} tensor{'s' if rec['saved_tensors'] != 1 else ''}), {w.times(ratio)} less "
            f"than eager mode's {_bytes(eager['saved_bytes'])}")
    if as_predicted:
        text += f": the chain's input alone, instead of one array per `{c['op']}`, as the min-cut predicts."
    else:
        text += (f"; the prediction was one array against {k}, so this version of PyTorch's partitioner chose "
                 "differently from the textbook min-cut.")
    save = rows.get("compiled (save all)")
    if save:
        same = save["saved_bytes"] == eager["saved_bytes"]
        text += (" The compiled version without recomputation saved as much as eager mode." if same else
                 f" The compiled version without recomputation saved {_bytes(save['saved_bytes'])}.")
    return ratio, as_predicted, text


def _speed(ratio: float) -> str:
    """'faster', 'slower' or 'same' for a ratio of times other / this (within 10% either way: same)."""
    if ratio > 1 + w.SAME:
        return "faster"
    if ratio < 1 / (1 + w.SAME):
        return "slower"
    return "same"


def compiled(result, references=()) -> Prose:
    """What the compiler's recomputation saved in memory and cost (or saved) in time, against the
    compiled chain that saves everything and against eager mode; wording for a compiler that did
    not run; the reference runs."""
    c = chain_facts(result)
    rows = c["rows"]
    facts = {}
    if "compiled (recompute)" not in rows or "eager" not in rows:
        why = _compile_failed(c)
        eager = rows.get("eager")
        text = (f"`torch.compile` did not run on this machine ({why}), so only eager mode was measured"
                + (f": it saved {_bytes(eager['saved_bytes'])}, one array per `{c['op']}`." if eager else ".") +
                " On a CPU, Inductor writes C++ and needs a working C++ compiler; on a GPU it writes Triton kernels. "
                "The reference runs below show what the compiler does where it runs.")
        facts["outcome"] = "no compiler"
    else:
        ratio, as_predicted, text = _memory_sentence(c)
        facts.update(memory_ratio=ratio, as_predicted=as_predicted)
        rec = rows["compiled (recompute)"]["min"]
        save = rows.get("compiled (save all)")
        if save:
            vs_save = save["min"] / rec
            s = _speed(vs_save)
            facts["recompute_vs_save_all"] = s
            facts["save_all_over_recompute"] = vs_save
            if s == "faster":
                text += (f" It was also {w.times(vs_save)} faster than the compiled chain that saves everything: "
                         f"its backward kernel reads one array instead of {c['k']}, " +
                         ("and on this CPU that saving outweighed computing the chain again." if c["cpu"] else
                          f"and the recomputed `{c['op']}`s hid behind that memory traffic."))
            elif s == "same":
                text += (" It took about as long as the compiled chain that saves everything "
                         f"({w.number(1 / vs_save)} times): recomputing the `{c['op']}`s cost about what reading "
                         "the saved arrays would have, so the memory came free.")
            else:
                text += (f" It took {w.number(1 / vs_save)} times as long as the compiled chain that saves "
                         f"everything: recomputing the `{c['op']}`s cost more time than reading {c['k']} saved arrays "
                         "back" + (", because on a CPU each one is many instructions per element"
                                   + (" (a `tanh` inside)" if c["op"] in ("gelu", "tanh") else "") +
                                   " and a CPU's ridge point is low." if c["cpu"] else "."))
        vs_eager = rows["eager"]["min"] / rec
        se = _speed(vs_eager)
        facts["recompute_vs_eager"] = se
        facts["eager_over_recompute"] = vs_eager
        fused = _speed(rows["eager"]["min"] / save["min"]) if save else None   # fusion alone, no recompute
        facts["save_all_vs_eager"] = fused
        if se == "faster" and fused in (None, "faster"):
            text += (f" Against eager mode it was {w.times(vs_eager)} faster: the compiler fuses the whole chain "
                     "into one forward and one backward kernel, and recomputation cuts the bytes those read.")
        elif se == "faster":
            text += (f" Against eager mode it was {w.times(vs_eager)} faster, while the compiled chain that saves "
                     f"everything was {'about as fast as' if fused == 'same' else 'slower than'} eager mode: "
                     "fusing alone did not pay here, and the gain came from the recomputation, which leaves "
                     "fewer bytes to write and read back.")
        elif se == "same":
            text += " Against eager mode it took about as long."
        else:
            fits = c["n"] * 4 * 2 <= c["cache"]
            text += (f" Eager mode, though, was {w.times(1 / vs_eager)} faster than it: " +
                     (f"this chain's arrays ({_bytes(c['n'] * 4)} each) fit in the cache, so eager mode's extra "
                      "passes over them are cheap, and the compiled code does not win them back."
                      if fits else "the compiled kernels are slower than eager's library kernels on this device."))
    return with_references(Prose(text, facts), references, "this comparison", _reference_chain)


def _reference_chain(run) -> Prose:
    """What recomputation saved and cost in a reference run, or that its compiler did not run."""
    r = chain_facts(run)
    if "compiled (recompute)" not in r["rows"] or "eager" not in r["rows"]:
        return Prose(f"{w.reference_intro(run)}, `torch.compile` did not run ({_compile_failed(r)}).", {})
    ratio, _, _ = _memory_sentence(r)
    rr = r["rows"]
    t = (f"{w.reference_intro(run)}, the recomputing chain kept {w.times(ratio)} fewer bytes than eager mode")
    if "compiled (save all)" in rr:
        t += (f", and took {w.number(rr['compiled (recompute)']['min'] / rr['compiled (save all)']['min'])} times "
              "as long as the compiled chain that saves everything")
    t += (f"; eager mode took {w.number(rr['eager']['min'] / rr['compiled (recompute)']['min'])} times as long "
          "as the recomputing chain.")
    return Prose(t, {f"reference {w.device_of(run)}": ratio})
