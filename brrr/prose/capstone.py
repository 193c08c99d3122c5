"""Chapter 8, making one model go brrr: a sentence per step, chosen by what the step measured
against the step before it, and why the next step should help given the regime that dominates;
then the summary (overall speed-up, final MFU, which steps moved the dominant regime), and what the
reference runs measured, for under the steps' table and figure.

Every function takes the Result of :func:`brrr.experiments.capstone.run_steps` and the reference
runs of it (:func:`brrr.reference.beside`), and returns :class:`~brrr.prose.Prose`.
"""
from __future__ import annotations

from . import Prose, with_references
from . import words as w

NOISY = 0.25    # samples whose IQR exceeds 25% of their median are "noisy"

REGIME_WORDS = {"overhead-bound": "overhead-bound operators (their fixed cost per call is larger than their work)",
                "memory-bound": "memory-bound operators (moving their bytes takes longer than their arithmetic)",
                "compute-bound": "compute-bound operators (their arithmetic takes longer than moving their bytes)"}


def _records(result) -> dict:
    return {r["step"]: r for r in result.records}


def _previous(result, key: str):
    """The step whose configuration ``key`` changed (the last one kept before it), or None."""
    records = _records(result)
    if key not in records:
        raise KeyError(f"no step {key!r} in this result; it has {[r['step'] for r in result.records]}")
    if "builds_on" in records[key]:
        return records.get(records[key]["builds_on"])
    before = None               # a record without the field: the last step that ran
    for r in result.records:
        if r["step"] == key:
            return before
        if not r.get("skipped"):
            before = r


def _next(result, key: str):
    """The first step after ``key`` (ran or not), or None."""
    keys = [r["step"] for r in result.records]
    i = keys.index(key)
    return result.records[i + 1] if i + 1 < len(keys) else None


def change(record, before) -> tuple:
    """(outcome, ratio): 'faster', 'slower' or 'same' in time per token against ``before``
    (ratio = before / this, above 1 when faster); ('first', 1.0) without a step before."""
    if before is None:
        return "first", 1.0
    ratio = before["seconds_per_token"] / record["seconds_per_token"]
    if ratio > 1 + w.SAME:
        return "faster", ratio
    if ratio < 1 / (1 + w.SAME):
        return "slower", ratio
    return "same", ratio


def attention_share(result) -> float:
    """The share of a large-batch forward pass's FLOPs spent in attention (Q·Kᵀ and scores·V)."""
    from ..gpt import GPTConfig, forward_flops
    cfg = GPTConfig(**result.meta["config"])
    batch, seq = result.meta["large"]
    f = forward_flops(cfg, batch, seq)
    return f["attention"] / f["total"]


def _measured(r) -> str:
    return (f"{w.seconds(r['seconds'])} per forward pass of {w.integer(r['tokens'])} token"
            f"{'s' if r['tokens'] != 1 else ''}, {w.seconds(r['seconds_per_token'])} per token "
            f"({w.number(r['tokens_per_second'])} tokens/s), {w.percent(r['mfu'])} MFU")


def _comparison(outcome: str, ratio: float, before) -> str:
    if outcome == "first":
        return ""
    against = f" Against {before['label']}, the configuration this step changed, time per token"
    if outcome == "faster":
        return f"{against} fell {w.times(ratio)}."
    if outcome == "slower":
        return f"{against} grew {w.times(1 / ratio)}: this step made the model slower."
    return f"{against} barely moved (within 10%)."


def _kept(r, before) -> str:
    """Whether the change stays (it did not make the time per token grow) or is undone."""
    if before is None or "kept" not in r:
        return ""
    if r["kept"]:
        return " The change stays." if r["seconds_per_token"] < before["seconds_per_token"] else \
            " It was not slower, so the change stays."
    return (f" So the change is undone, as an engineer would undo it: the next step builds on "
            f"{before['label']} again.")


def _why(r, outcome: str, ratio: float, result) -> str:
    """Why this step did what it did (by step, outcome and device)."""
    cpu, step = r["backend"] == "cpu", r["step"]
    native = result.meta.get("native_bf16")
    if step == "batch":
        if outcome == "faster":
            return (" The fixed costs of each call (Python, dispatch, reading every weight once) are now shared by "
                    "many more tokens.")
        return (" More tokens per call did not pay here: the small call was already mostly work, not fixed cost, "
                "or the machine was busy during one of the two timings.")
    if step == "autocast":
        if outcome == "slower" and cpu and native is False:
            return (f" This CPU has no {r['dtype']} dot-product instructions (oneDNN reports none), so its "
                    f"{r['dtype']} matmuls convert their operands and run slower than float32 ones, and the casts "
                    "add memory-bound copies of their own. Lower precision pays only on hardware built for it.")
        if outcome == "slower":
            return (" The casts autocast inserts are memory-bound copies of their own, and here they cost more than "
                    "the faster matmuls saved.")
        if outcome == "faster":
            return (f" {r['dtype']} halves the bytes of every activation"
                    + (" and runs the matmuls on tensor cores, whose roof is many times float32's." if not cpu else
                       " and this CPU runs its matmuls with dedicated instructions."))
        return " The matmuls gained little from the lower precision here, and the casts cost a little."
    if step == "compile":
        text = f" Compiling took {w.seconds(r['compile_seconds'])} once, before the timing." if r.get("compile_seconds") else ""
        if outcome == "faster":
            text += (" The compiler fused the chains of memory-bound operators (mask, softmax, GELU, adds, "
                     "LayerNorm) into fewer kernels, so their bytes cross memory fewer times, and cut Python "
                     "and dispatch work between them.")
            compute = (r.get("regime_shares") or {}).get("compute-bound", 0.0)
            if compute > 0 and ratio > (1 + w.SAME) / compute:
                text += (f" That is more than fusion alone can give: the compute-bound operators took "
                         f"{w.percent(compute)} of the eager profile's time, so making everything else free would "
                         f"be at most {w.times(1 / compute)} as fast. The compiler also swapped in kernels of its "
                         "own for some operators the profile calls compute-bound"
                         + (", such as this CPU's emulated low-precision matmuls."
                            if cpu and r.get("dtype") not in (None, "float32") else "."))
            return text
        if outcome == "slower":
            return text + (" The generated kernels replaced the eager library's tuned ones and did worse here: "
                           "compiling does not promise a speed-up.")
        return text + " Fusion removed trips through memory, but little of this step's time was in them."
    if step == "graphs":
        if outcome == "faster":
            return (" The whole forward pass is now one recorded graph: one launch replays every kernel, so the "
                    "CPU's cost per kernel is gone.")
        return (" With a batch this large the GPU's work already hid the launches, so replaying them as one graph "
                "saved little.")
    if step == "sdpa":
        share = attention_share(result)
        text = f" Attention is {w.percent(share)} of this model's FLOPs at this sequence length."
        if outcome == "faster":
            return text + (" The fused kernel computes softmax(Q·Kᵀ)·V tile by tile without writing the "
                           "sequence × sequence scores to memory, and skips the masked half.")
        if outcome == "slower":
            text += (" The fused kernel did worse than the hand-written attention here"
                     + (": on a CPU without fast low-precision arithmetic it gains little from fusing." if cpu else
                        ": at a short sequence the scores are small and fusing them saves little."))
            if 1 / ratio > max(1.5, 1 + 4 * share):
                text += (f" Yet the whole pass slowed down by {w.times(1 / ratio)}, more than attention's share of "
                         "the work can explain: the rest of the model changed too (the compiler builds a new graph "
                         "around the fused kernel), or the machine was busier during this step.")
            return text
        return text + ((f" Not writing the scores to memory saved little here ({w.percent(1 - 1 / ratio)} of the time "
                        "per token)" if ratio >= 1 else f" Not writing the scores to memory changed little here (the "
                        f"time per token rose {w.percent(1 / ratio - 1)})")
                       + ": the fused kernel wins back only the scores' trips through memory, a part of attention's "
                       "time, which is itself a part of the pass's.")
    return ""


def _next_hint(r, result, base=None) -> str:
    """Why the next step should help, given the dominant regime of ``base``: the configuration
    the next step builds on (``r`` itself, or the step before it when ``r`` was undone)."""
    nxt = _next(result, r["step"])
    if nxt is None:
        return ""
    base = base or r
    regime = base.get("regime")
    if regime is None:
        return f" This step has no profile: {base.get('profile_skipped') or 'it was not profiled'}."
    share = (base.get("regime_shares") or {}).get(regime, 0.0)
    whose = " of the eager operators the compiler starts from" if base.get("compile") else ""
    subject = "Its profile" if base is r else f"The profile of {base['label']}"
    text = (f" {subject} (`brrr.profile`{whose}) puts {w.percent(share)} of the operators' time in "
            f"{REGIME_WORDS.get(regime, str(regime))}")
    cpu = r["backend"] == "cpu"
    native = result.meta.get("native_bf16")
    key = nxt["step"]
    if key == "batch":
        text += (", so the next step gives each call more work: a larger batch pays the same fixed costs once for "
                 "many tokens." if regime == "overhead-bound" else
                 ", not in overhead-bound ones. Those labels set each operator's roofline time against a "
                 "one-element call's fixed cost, one operator at a time, and cannot say how much of a whole "
                 "call's wall-clock time (Worked problem 1 sets it against the roofline's bound) went to issuing "
                 "its dozens of operators. A larger batch helps either way: every matmul reads its whole weight "
                 "matrix once per call, whatever the number of tokens, so more tokens per call share each weight "
                 "read, which raises the matmuls' intensity, and they share each call's fixed cost too.")
    elif key == "autocast":
        if cpu and native is False:
            text += (". The next step, low precision, is the remedy for compute-bound matmuls on hardware with fast "
                     "16-bit arithmetic; this CPU has none, so expect it to be slower here.")
        else:
            text += (". The next step, low precision, attacks compute-bound matmuls (a higher roof) and memory-bound "
                     "operators (half the bytes) at once.")
    elif key == "compile":
        text += (". The next step, `torch.compile`, fuses the memory-bound operators, so it "
                 + ("has most of the time to work on." if regime == "memory-bound" else
                    "can win back at most their share; the compute-bound matmuls it leaves to the library."))
    elif key == "graphs":
        text += (". The next step replays the whole pass as CUDA graphs, which removes the cost of launching each "
                 "kernel" + (": a remedy for overhead." if nxt.get("skipped") is None else
                             "; it needs a GPU, so on this machine it is skipped."))
    elif key == "sdpa":
        text += (". The next step fuses attention into one kernel, which never writes the sequence × sequence "
                 "scores to memory: the biggest memory-bound tensors of the model.")
    return text


def step(result, key: str, references=()) -> Prose:
    """What step ``key`` measured, against the step before it, why, and why the next step should help;
    then the same step on each reference run (the summary says when none ships)."""
    r = _records(result)[key]
    if r.get("skipped"):
        text = f"**{r['label']}** did not run here: {r['skipped']}."
        nxt = _next(result, key)
        if nxt is not None:
            text += " The next step builds on the configuration kept so far."
        facts = {"outcome": "skipped", "step": key}
        return with_references(Prose(text, facts), references, None, lambda run: _reference_step(run, key))
    before = _previous(result, key)
    outcome, ratio = change(r, before)
    text = f"**{r['label']}**: {_measured(r)}."
    text += _comparison(outcome, ratio, before)
    text += _why(r, outcome, ratio, result)
    text += _kept(r, before)
    noisy = outcome != "first" and any(x.get("iqr_seconds", 0) > NOISY * x["seconds"] for x in (r, before))
    if noisy:
        text += (" The samples of this step or the one before spread by more than a quarter of their median: the "
                 "machine was busy, and the two times can move by more than their difference.")
    if r["mfu"] > w.ABOVE_ROOF:
        text += (" The MFU is above 100%, which no machine allows: the FLOP count or the peak is wrong, or the "
                 "clock stopped before the work finished.")
    undone = before is not None and r.get("kept") is False
    text += _next_hint(r, result, before if undone else r)
    facts = {"outcome": outcome, "ratio": ratio, "step": key, "regime": r.get("regime"), "mfu": r["mfu"],
             "noisy": noisy, "kept": not undone}
    return with_references(Prose(text, facts), references, None, lambda run: _reference_step(run, key))


def _reference_step(run, key: str) -> Prose:
    r = _records(run).get(key)
    if r is None or r.get("skipped"):
        return Prose(f"{w.reference_intro(run)}, this step did not run.", {f"reference {w.device_of(run)}": "skipped"})
    outcome, ratio = change(r, _previous(run, key))
    t = f"{w.reference_intro(run)}: {_measured(r)}"
    t += {"first": ".", "faster": f", {w.times(ratio)} faster per token than the step before.",
          "slower": f", {w.times(1 / ratio)} slower per token than the step before.",
          "same": ", about as fast per token as the step before."}[outcome]
    return Prose(t, {f"reference {w.device_of(run)}": outcome})


def regime_path(result) -> Prose:
    """Which steps moved the dominant regime of the operators' time, against the configuration each
    changed, and which left it where it was (or nothing, where no two profiles can be compared)."""
    moved, stayed = [], []
    for r in result.records:
        before = None if r.get("skipped") else _previous(result, r["step"])
        if before is None or r.get("regime") is None or before.get("regime") is None:
            continue
        if r["regime"] != before["regime"]:
            moved.append(f"{r['label']} (from {before['regime']} to {r['regime']})")
        else:
            stayed.append(r)
    if not moved and not stayed:
        return Prose("", {"regime_outcome": "no profiles"})
    if not stayed:
        text, outcome = f"Every step that ran moved the dominant regime of the operators' time: {w.listing(moved)}.", \
            "all moved"
    elif not moved:
        text, outcome = (f"No step moved the dominant regime of the operators' time: every profile put most of it in "
                         f"{stayed[0]['regime']} operators."), "none moved"
    else:
        text = (f"Of the steps that ran, only {w.listing(moved)} moved the dominant regime of the operators' time; "
                f"{w.listing(r['label'] for r in stayed)} left it where the configuration before "
                f"{'it' if len(stayed) == 1 else 'each'} had it.")
        outcome = "some moved"
    eager = [r["label"] for r in stayed if r["step"] in ("compile", "graphs")]
    if eager:
        one = len(eager) == 1
        text += (f" The profile{'' if one else 's'} of {w.listing(eager)} {'is that' if one else 'are those'} of the "
                 f"eager operators the compiler starts from, so {'it' if one else 'they'} cannot show a regime that "
                 "compiling changed.")
    return Prose(text, {"regime_outcome": outcome, "regime_moves": len(moved)})


def summary(result) -> Prose:
    """Where the steps took the model: from the first step to the configuration kept at the end
    (overall speed-up, MFU), which changes stayed, which were undone, which were skipped, and which
    steps moved the dominant regime. The reference runs are in :func:`reference_runs`."""
    from ..experiments.capstone import overall
    o = overall(result)
    recs = _records(result)
    first, final = recs[o["first"]], recs[o["last"]]
    if o["last"] == o["first"]:
        text = (f"No change made the model faster per token on this run, so every one was undone: "
                f"{first['label']} stays the fastest configuration, at {w.seconds(first['seconds_per_token'])} "
                f"per token and {w.percent(first['mfu'])} MFU.")
        outcome = "none kept"
    else:
        text = (f"From {first['label']} to the configuration kept at the end, the time per token fell from "
                f"{w.seconds(first['seconds_per_token'])} to {w.seconds(final['seconds_per_token'])}")
        if o["speedup"] > 1 + w.SAME:
            text += f", {w.times(o['speedup'])} faster,"
            outcome = "faster"
        else:
            text += ", about the same,"
            outcome = "same"
        text += (f" and the MFU went from {w.percent(o['first_mfu'])} to {w.percent(o['last_mfu'])}. "
                 f"The changes kept: {w.listing(o['kept'])}.")
    if o["undone"]:
        text += (f" Undone, because they made the model slower on this machine: {w.listing(o['undone'])}. "
                 "A remedy only pays where its regime is the one that limits the model, on hardware built "
                 "for it: measure, then keep it or not.")
    else:
        text += " No change had to be undone."
    skipped = [r["label"] for r in result.records if r.get("skipped")]
    if skipped:
        text += f" Skipped here: {w.listing(skipped)}."
    facts = {"outcome": outcome, "speedup": o["speedup"], "kept": len(o["kept"]), "undone": len(o["undone"]),
             "last_mfu": o["last_mfu"]}
    return Prose(text, facts) + regime_path(result)


def reference_runs(references=()) -> Prose:
    """Where each reference run's steps took the model, or the sentence that none ships: for the
    page to show under the steps' table and figure."""
    return with_references(Prose("", {}), references, "these steps", _reference_summary,
                           shown="table and the figure")


def _reference_summary(run) -> Prose:
    from ..experiments.capstone import overall
    o = overall(run)
    t = (f"{w.reference_intro(run)}, the changes kept took the model from {w.percent(o['first_mfu'])} to "
         f"{w.percent(o['last_mfu'])} MFU, "
         + (f"{w.times(o['speedup'])} faster" if o["speedup"] >= 1 else f"{w.times(1 / o['speedup'])} slower")
         + " per token.")
    return Prose(t, {f"reference {w.device_of(run)}": o["speedup"]})
