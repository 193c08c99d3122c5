"""Chapter 8's worked problem 6, what padding the vocabulary can gain: the FLOPs padding adds, and Amdahl's law
on the head's share of the profile of the configuration it changes, with the padded head at its least time
(:func:`vocab_gain`); step 7's measurement against it, with the head's own time in the two profiles
(:func:`vocab_check`). Where the step cannot run here, the first reference run where it did. The chapter calls
them through :mod:`.worked_gpt`."""
from __future__ import annotations

from . import Prose
from . import words as w
from .worked import WITHIN
from .capstone import _previous, _records
from .worked_cast import _profiled


def _pair(result):
    """(the vocabulary step's record, the record of the configuration it changed), or (None, None)."""
    step = _records(result).get("vocab")
    return step, (_previous(result, "vocab") if step else None)


def _ran(result) -> bool:
    step, base = _pair(result)
    return bool(step) and not step.get("skipped") and _profiled(base)


def _padding(vocab: int) -> tuple:
    """(the padded width, the sentences saying what padding ``vocab`` adds and what it can gain)."""
    from ..gpt import padded_vocab
    wide = padded_vocab(vocab)
    return wide, (f"Padding the vocabulary from {w.integer(vocab)} to {w.integer(wide)} adds "
                  f"{w.integer(wide - vocab)} outputs to the head, {w.percent(wide / vocab - 1)} more of its FLOPs, "
                  "and changes nothing else: at the same rate the pass would be a little slower. It can only pay if "
                  "the head's matmul runs faster at the padded width. If the head takes a share h of the time, even "
                  "a padded head that took no time would make the pass at most 1 / (1 − h) times as fast.")


def vocab_gain(cfg, result, references=()) -> Prose:
    """What padding ``cfg``'s vocabulary to a multiple of 64 adds, and the most step 7 can speed up the
    configuration it changed: that configuration's profile gives the head a share h of the time; with the padded
    head at its FLOPs at the run's one peak (:func:`brrr.mfu.mfu_peak`, where it bounds the dtype) the pass is at
    most total / (total − head + least) times as fast, and with the head taking no time 1 / (1 − h). ``result``:
    the chapter's ``capstone_steps``; ``references``: its reference runs, for a model whose vocabulary needs no
    padding."""
    wide, text = _padding(cfg.vocab)
    if wide != cfg.vocab:
        return _bound(result, text, {"problem": "vocab", "added": wide - cfg.vocab, "here": True})
    text = (f"This model's vocabulary, {w.integer(cfg.vocab)} tokens, is already a multiple of 64, so step 7 does "
            "not run here.")
    facts = {"problem": "vocab", "added": 0, "here": False}
    run = next((r for r in references if _ran(r)), None)
    if run is None:
        return Prose(text + " No reference run here has the step either.", facts)
    vocab = run.meta.get("config", {}).get("vocab")
    text += f" On the reference {w.device_of(run)}" + (f", with a vocabulary of {w.integer(vocab)}: "
                                                        + _padding(vocab)[1] if vocab else ":")
    return _bound(run, text, facts)


def _bound(result, text: str, facts: dict) -> Prose:
    from ..mfu import mfu_peak
    step, base = _pair(result)
    if not step:
        return Prose(text + " The run shown here has no record of step 7: it was recorded before the step was added "
                     "to the chapter, so h is unknown.", facts)
    if step.get("skipped") or not base:
        return Prose(text + " Step 7 did not run in the run shown here, so h is unknown.", facts)
    if not _profiled(base):
        why = ("was recorded before the steps kept their profiles' parts" if base.get("regime_shares")
               else "has no profile")
        return Prose(text + f" The configuration step 7 changes, step {_number(base['step'])}, {why}, so h is "
                     "unknown.", facts)
    total, head = base["profile_seconds"], base["head_seconds"]
    h = head / total
    if h >= 1:                              # a profile of nothing but the head: no bound
        return Prose(text + " The profile puts all of its time in the head, so the formula gives no bound.", facts)
    text += (f" The profile of step {_number(base['step'])} gives the head {w.seconds(head)} of "
             f"{w.seconds(total)}: h = {w.percent(h)}, so step 7 can be at most **{w.times(1 / (1 - h))} as fast**")
    facts.update(share=h, bound=1 / (1 - h))
    peak = mfu_peak(result)
    if peak.get("flops") and base.get("dtype") in peak.get("dtypes", ()) and base.get("head_width"):
        least = base["head_flops"] * step["vocab"] / base["head_width"] / peak["flops"]
        facts.update(least=least, bound=total / (total - head + least))
        text += (f", and with the padded head at {peak['name']} ({w.seconds(least)}) at most "
                 f"**{w.times(facts['bound'])}**")
    return Prose(text + ".", facts)


def _number(key: str) -> str:
    """A step's number on the page (its place in :data:`brrr.experiments.capstone.STEP_KEYS`)."""
    from ..experiments.capstone import STEP_KEYS
    return str(STEP_KEYS.index(key) + 1) if key in STEP_KEYS else key


def vocab_check(result, answer: Prose) -> Prose:
    """Step 7's measured speed-up over the configuration it changed against the answer's bound, and the head's
    own time in the two profiles (above the bound: the rest's time too)."""
    step, base = _pair(result)
    if not step:
        return Prose("The run shown here has no record of step 7, so there is no measurement to check the bound "
                     "against.", {"outcome": "no step"})
    if step.get("skipped") or not base:
        return Prose("Step 7 did not run here (above), so there is no measurement to check the bound against.",
                     {"outcome": "skipped"})
    measured = base["seconds_per_token"] / step["seconds_per_token"]
    text = f"Step 7 ran {w.times(measured)} as fast as step {_number(base['step'])}"
    bound = answer.facts.get("bound") if answer.facts.get("here") else None
    both = _profiled(step) and _profiled(base) and step.get("head_seconds") and base.get("head_seconds")
    if abs(measured - 1) <= w.SAME:
        outcome, text = "about the same", text + " (within 10%)"
    elif measured < 1:
        outcome = "slower"
    elif bound is None:
        outcome = "measured"
    elif measured > bound * (1 + WITHIN):
        outcome, text = "above", text + f", more than the bound of {w.times(bound)}"
    else:
        outcome, text = "gained", text + f": {w.percent(measured / bound)} of the bound of {w.times(bound)}"
    if both:
        text += (f". In the profiles, each operator replayed alone, the head's matmul took "
                 f"{w.seconds(base['head_seconds'])} before and {w.seconds(step['head_seconds'])} padded "
                 f"({w.rate(base['head_flops'] / base['head_seconds'])} against "
                 f"{w.rate(step['head_flops'] / step['head_seconds'])})")
        if outcome == "above":       # the bound kept everything but the head: say what it took
            text += (f", and everything else {w.seconds(base['profile_seconds'] - base['head_seconds'])} before and "
                     f"{w.seconds(step['profile_seconds'] - step['head_seconds'])} padded")
    return Prose(text + ".", {"outcome": outcome, "speedup": measured})
