"""Chapter 8, making one model go brrr: a sentence per step, chosen by what the step measured
against the step before it and what its profile shows; then the summary (overall speed-up, final MFU, which steps moved the dominant regime), and what the
reference runs measured, for under the steps' table and figure.

Every function takes the Result of :func:`brrr.experiments.capstone.run_steps` and the reference
runs of it (:func:`brrr.reference.beside`), and returns :class:`~brrr.prose.Prose`.
"""
from __future__ import annotations

from . import Prose, with_references
from . import words as w

NOISY = 0.25    # samples whose IQR exceeds 25% of their median are "noisy"


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
    """(outcome, ratio = before / this per token): 'faster', 'slower' or 'same'; ('first', 1.0) without one."""
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


def mfu_words(run, r) -> str:
    """``r``'s MFU against the run's one peak, named; or why it has none."""
    from ..experiments.capstone import mfu, mfu_peak
    m, peak = mfu(run, r), mfu_peak(run)
    if m is None:
        return f"no MFU ({peak['name']}, which this run's MFU is taken against, does not bound {r.get('dtype')})"
    return f"{w.percent(m)} MFU (of {peak['name']}, {w.rate(peak['flops'])})"


def _measured(r, run) -> str:
    return (f"{w.seconds(r['seconds'])} per forward pass of {w.integer(r['tokens'])} token"
            f"{'s' if r['tokens'] != 1 else ''}, {w.seconds(r['seconds_per_token'])} per token, {mfu_words(run, r)}")


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


def _why(r, outcome: str, result) -> str:
    """What this step's own measurements add (by step, outcome and device); the chapter's text before each
    step says what the change does."""
    step, native = r["step"], result.meta.get("native_bf16")
    if step == "autocast":
        text = "" if r["backend"] != "cpu" or native is None else (
            f" This CPU {'has' if native else 'has no'} bfloat16 dot-product instructions (oneDNN reports"
            f"{' them' if native else ' none'}).")
        if outcome == "slower" and not (r["backend"] == "cpu" and native is False):
            text += (" Its profile sets the casts autocast inserts (`_to_copy` rows) against the matmuls: whether "
                     "they cost more than the lower precision saved.")
        return text
    if step == "compile":
        text = f" Compiling took {w.seconds(r['compile_seconds'])} once, before the timing." if r.get("compile_seconds") else ""
        if outcome in ("faster", "slower"):
            text += " `torch.profiler` on the compiled pass lists the kernels it ran, to set against the eager ones."
        return text
    if step == "graphs" and outcome != "faster":
        return (" Replaying the pass as one graph removes the host's cost of launching each kernel, so those "
                "launches were not what set this pass's time.")
    if step == "vocab" and r.get("vocab"):
        return (f" The head is {w.integer(r['vocab'])} wide instead of {w.integer(result.meta['config']['vocab'])}; "
                "the FLOPs and MFU count the unpadded model's work.")
    if step == "sdpa":
        text = (f" Attention is {w.percent(attention_share(result))} of this model's FLOPs at this sequence length "
                "(the MFU counts the whole square of scores, the masked half too).")
        if outcome == "slower":
            text += " `torch.profiler` on the two passes shows which kernels took the time."
        return text
    return ""


def _shares(base) -> str:
    """Every regime's share of ``base``'s profiled time, largest first."""
    shares = base.get("regime_shares") or {}
    order = [k for k in sorted(shares, key=shares.get, reverse=True) if shares[k] > 0]
    if not order:
        return "no time in any regime"
    first = f"{w.percent(shares[order[0]])} of the operators' time in {order[0]} operators"
    return w.listing([first] + [f"{w.percent(shares[k])} in {k} ones" for k in order[1:]])


def _next_hint(r, result, base=None) -> str:
    """What ``base``'s profile shows (``base`` is the configuration the next step builds on: ``r`` itself, or
    the step before it when ``r`` was undone), and what of it the next step attacks."""
    from ..experiments.capstone import COMPILED_ONLY, TIE, dominant
    nxt = _next(result, r["step"])
    if nxt is None:
        return ""
    base = base or r
    if base.get("regime") is None:
        text = f" This step has no profile: {base.get('profile_skipped') or 'it was not profiled'}."
    elif base["step"] in COMPILED_ONLY:
        text = (" This step has no profile of its own: `brrr.profile` replays the eager operators, not the "
                "kernels the compiler generated.")
    else:
        subject = "Its profile" if base is r else f"The profile of {base['label']}"
        text = f" {subject} (`brrr.profile`) puts {_shares(base)}."
        if dominant(base) is None:
            text += (f" The two largest shares are within {round(100 * TIE)} percentage points of each other: "
                     "no one regime dominates.")
        shares = base.get("regime_shares") or {}
        if nxt["step"] == "compile" and shares:
            text += (f" The next step, `torch.compile`, fuses chains of memory-bound operators, which held "
                     f"{w.percent(shares.get('memory-bound', 0.0))} of this time.")
    return text


def step(result, key: str, references=()) -> Prose:
    """What step ``key`` measured, against the step before it, and what its profile shows; then the same
    step on each reference run (the summary says when none ships)."""
    r = _records(result).get(key)
    if r is None:
        from ..experiments.capstone import STEP_KEYS
        if key not in STEP_KEYS:
            raise KeyError(f"no step {key!r}; the chapter's steps are {list(STEP_KEYS)}")
        return with_references(Prose("The run shown here has no record of this step: it was recorded before the "
                                     "step was added to the chapter.", {"outcome": "not recorded", "step": key}),
                               references, None, lambda run: _reference_step(run, key))
    if r.get("skipped"):
        text = f"**{r['label']}** did not run here: {r['skipped']}."
        nxt = _next(result, key)
        if nxt is not None:
            text += " The next step builds on the configuration kept so far."
        facts = {"outcome": "skipped", "step": key}
        return with_references(Prose(text, facts), references, None, lambda run: _reference_step(run, key))
    before = _previous(result, key)
    outcome, ratio = change(r, before)
    text = f"**{r['label']}**: {_measured(r, result)}."
    text += _comparison(outcome, ratio, before)
    text += _why(r, outcome, result)
    text += _kept(r, before)
    noisy = outcome != "first" and any(x.get("iqr_seconds", 0) > NOISY * x["seconds"] for x in (r, before))
    if noisy:
        spread = [f"{w.seconds(x['iqr_seconds'])} around a median of {w.seconds(x['seconds'])} {which}"
                  for x, which in ((r, "here"), (before, "before"))
                  if x.get("iqr_seconds", 0) > NOISY * x["seconds"]]
        text += (f" The samples spread by more than a quarter of their median (an IQR of {w.listing(spread)}), so "
                 "the two times can move by more than their difference.")
    from ..experiments.capstone import mfu
    if (mfu(result, r) or 0.0) > w.ABOVE_ROOF:
        text += (" The MFU is above 100%, which no machine allows: the FLOP count or the peak is wrong, or the "
                 "clock stopped before the work finished.")
    undone = before is not None and r.get("kept") is False
    text += _next_hint(r, result, before if undone else r)
    facts = {"outcome": outcome, "ratio": ratio, "step": key, "regime": r.get("regime"), "mfu": mfu(result, r),
             "noisy": noisy, "kept": not undone}
    return with_references(Prose(text, facts), references, None, lambda run: _reference_step(run, key))


def _reference_step(run, key: str) -> Prose:
    r = _records(run).get(key)
    if r is None:
        return Prose(f"{w.reference_intro(run)}, this step was not part of the chapter yet.",
                     {f"reference {w.device_of(run)}": "not recorded"})
    if r.get("skipped"):
        return Prose(f"{w.reference_intro(run)}, this step did not run.", {f"reference {w.device_of(run)}": "skipped"})
    before = _previous(run, key)
    outcome, ratio = change(r, before)
    than = f"than {before['label']}, the configuration it changed there" if before else ""
    t = f"{w.reference_intro(run)}: {_measured(r, run)}"
    t += {"first": ".", "faster": f", {w.times(ratio)} faster per token {than}.",
          "slower": f", {w.times(1 / ratio)} slower per token {than}.",
          "same": f", about as fast per token as {before['label'] if before else ''}, the configuration it changed "
                  "there."}[outcome]
    return Prose(t, {f"reference {w.device_of(run)}": outcome})


def regime_path(result) -> Prose:
    """Which steps moved the dominant regime (:func:`brrr.experiments.capstone.dominant`) against the last
    configuration with a profile of its own before them, and which left it; nothing where none compare."""
    from ..experiments.capstone import COMPILED_ONLY, dominant
    moved, stayed = [], []
    for r in result.records:
        before = None if r.get("skipped") else _previous(result, r["step"])
        while before is not None and before.get("step") in COMPILED_ONLY and before.get("builds_on"):
            before = _records(result).get(before["builds_on"])
        if before is None or None in (dominant(r), dominant(before)):
            continue
        if dominant(r) != dominant(before):
            moved.append(f"{r['label']} (from {dominant(before)} to {dominant(r)})")
        else:
            stayed.append(r)
    if not moved and not stayed:
        return Prose("", {"regime_outcome": "no profiles"})
    which = "Of the steps whose profiles show one dominant regime before and after,"
    if not stayed:
        text, outcome = f"{which} every one moved it: {w.listing(moved)}.", "all moved"
    elif not moved:
        text, outcome = (f"No step moved the dominant regime of the operators' time: each profile that shows one "
                         f"put the largest share in {dominant(stayed[0])} operators."), "none moved"
    else:
        text, outcome = (f"{which} only {w.listing(moved)} moved it; {w.listing(r['label'] for r in stayed)} left it "
                         "where it was."), "some moved"
    return Prose(text, {"regime_outcome": outcome, "regime_moves": len(moved)})


def summary(result) -> Prose:
    """From the first step to the configuration kept at the end (speed-up, MFU), which changes stayed, were
    undone or skipped, and which steps moved the dominant regime (:func:`regime_path`)."""
    from ..experiments.capstone import mfu_peak, overall
    o = overall(result)
    recs = _records(result)
    first, final = recs[o["first"]], recs[o["last"]]
    if o["last"] == o["first"]:
        text = (f"No change made the model faster per token on this run, so every one was undone: "
                f"{first['label']} stays the fastest configuration, at {w.seconds(first['seconds_per_token'])} "
                f"per token and {mfu_words(result, first)}.")
        outcome = "none kept"
    else:
        text = (f"From {first['label']} ({w.integer(first['tokens'])} tokens per call) to the configuration kept "
                f"at the end ({w.integer(final['tokens'])} tokens per call), the time per token fell from "
                f"{w.seconds(first['seconds_per_token'])} to {w.seconds(final['seconds_per_token'])}")
        outcome = "faster" if o["speedup"] > 1 + w.SAME else "same"
        text += f", {w.times(o['speedup'])} faster" if outcome == "faster" else ", about the same"
        if o["first_mfu"] is not None and o["last_mfu"] is not None:
            text += (f", and the MFU, against {mfu_peak(result)['name']} throughout, went from "
                     f"{w.percent(o['first_mfu'])} to {w.percent(o['last_mfu'])}")
        text += "."
        if final["tokens"] != first["tokens"]:
            text += (" That is a gain in throughput, tokens per second over many tokens per call, not in the "
                     f"latency of one call of {w.integer(first['tokens'])} tokens.")
        text += f" The changes kept: {w.listing(o['kept'])}."
    if o["undone"]:
        text += f" Undone, because they made the model slower on this machine: {w.listing(o['undone'])}."
    else:
        text += " No change had to be undone."
    skipped = [r["label"] for r in result.records if r.get("skipped")]
    if skipped:
        text += f" Skipped here: {w.listing(skipped)}."
    facts = {"outcome": outcome, "speedup": o["speedup"], "kept": len(o["kept"]), "undone": len(o["undone"]),
             "last_mfu": o["last_mfu"]}
    return Prose(text, facts) + regime_path(result)


def reference_runs(references=()) -> Prose:
    """Where each reference run's steps took the model, or that none ships, for under the table and figure."""
    return with_references(Prose("", {}), references, "these steps", _reference_summary,
                           shown="table and the figure")


def _reference_summary(run) -> Prose:
    from ..experiments.capstone import mfu_peak, overall
    o = overall(run)
    mfus = (f"from {w.percent(o['first_mfu'])} to {w.percent(o['last_mfu'])} MFU (of {mfu_peak(run)['name']}), "
            if o["first_mfu"] is not None and o["last_mfu"] is not None else "")
    t = (f"{w.reference_intro(run)}, the changes kept took the model {mfus}"
         + (f"{w.times(o['speedup'])} faster" if o["speedup"] >= 1 else f"{w.times(1 / o['speedup'])} slower")
         + " per token.")
    return Prose(t, {f"reference {w.device_of(run)}": o["speedup"]})
