"""Chapter 8's worked problem 4, what casting the weights once can save over autocast: the least time of the
weights' casts from their count and the memory bandwidth, and the casts' measured share of step 4's profile
(Amdahl, :func:`cast_saving`); step 5's measurement against it, with the two profiles' time by category
(:func:`cast_check`). The chapter calls them through :mod:`.worked_gpt`."""
from __future__ import annotations

from . import Prose
from . import words as w
from .capstone import _records
from .worked import WITHIN, fit_words, fits_cache

CAST_BYTES = 6     # a float32 weight cast to 16 bits: four bytes read, two written


def cast_weights(cfg) -> int:
    """The parameters autocast casts on every call: each block's four weight matrices and their biases, and
    the head (the token table, tied to it); not the position table or the LayerNorms, which no matmul reads."""
    from ..experiments.capstone_ridge import LINEAR_SHAPES
    d = cfg.d_model
    return cfg.n_layer * sum(a * d * b * d + b * d for a, b in LINEAR_SHAPES) + cfg.vocab * d


def _profiled(record) -> bool:
    return bool(record) and not record.get("skipped") and bool(record.get("profile_seconds"))


def cast_saving(cfg, result) -> Prose:
    """The weights' casts at the bandwidth of the device that ran ``result`` (the chapter's ``capstone_steps``),
    and the speed-up of step 5 over step 4 if only the casts of step 4's profile went away:
    1 / (1 − c), c their share of the profile's time."""
    n = cast_weights(cfg)
    text = (f"Autocast reads each of the {w.integer(n)} weights and biases that enter a matmul (every parameter but "
            f"the position table and the LayerNorms') in float32 and writes a 16-bit copy, on every call: "
            f"{CAST_BYTES} bytes each, **{w.size(CAST_BYTES * n)} per call**.")
    facts = {"problem": "cast once", "weights": n, "nbytes": CAST_BYTES * n}
    device = result.meta.get("device", {})
    bandwidth, cache = device.get("peak_bandwidth"), device.get("l2_bytes")
    if bandwidth:
        facts["floor"] = CAST_BYTES * n / bandwidth
        text += f" At the {w.rate(bandwidth, 'B/s')} of the {device.get('name', 'device')} that ran the steps, "
        if fits_cache(4 * n, cache):       # back-to-back calls can find the float32 weights in the cache
            text += (f"that would take {w.seconds(facts['floor'])} per call if the weights came from memory; their "
                     f"{w.size(4 * n)} in float32 {fit_words(4 * n, cache)} its {w.size(cache)} cache, so the casts "
                     "can take less.")
        else:
            text += f"that is at least **{w.seconds(facts['floor'])}** per call."
    text += (" It also casts each float32 activation that enters a matmul. Step 5 has no casts at all. If the casts "
             "take a share c of step 4's time and everything else kept its time, step 5 would be 1 / (1 − c) "
             "times as fast as step 4.")
    step4 = _records(result).get("autocast")
    if not _profiled(step4):
        why = ("did not run here" if not step4 or step4.get("skipped") else
               "was recorded before the steps kept their profiles' parts" if step4.get("regime_shares") else
               "has no profile here")
        return Prose(text + f" Step 4 {why}, so c is unknown.", facts)
    c = step4["cast_seconds"] / step4["profile_seconds"]
    if c >= 1:                              # a profile of nothing but casts: no prediction
        return Prose(text + " Step 4's profile puts all of its time in casts, so the formula gives no bound.", facts)
    speedup = 1 / (1 - c)
    text += (f" Step 4's profile has {w.integer(step4['casts'])} casts (`aten::_to_copy`) taking "
             f"{w.seconds(step4['cast_seconds'])} of its operators' {w.seconds(step4['profile_seconds'])}: "
             f"c = {w.percent(c)}, so from the casts alone step 5 would be **{w.times(speedup)} as fast**. "
             "Step 5 changes more than the casts: with the model itself in 16 bits, LayerNorm, softmax and the "
             "residual additions read and write 16-bit values too, so the measurement can differ either way.")
    return Prose(text, {**facts, "share": c, "speedup": speedup})


CATEGORY_WORDS = {"matmul": "matmuls", "normalisation": "normalisations", "elementwise": "elementwise operators"}


def _by_category(before: dict, after: dict) -> str:
    """'matmuls 3 ms → 2.5 ms, …, casts 1 ms → 0' from two step records' profile parts."""
    def other(r):
        return r["category_seconds"].get("other", 0.0) - r["cast_seconds"]
    parts = [f"{label} {w.seconds(before['category_seconds'].get(k, 0.0))} → "
             f"{w.seconds(after['category_seconds'].get(k, 0.0))}" for k, label in CATEGORY_WORDS.items()]
    parts.append(f"casts {w.seconds(before['cast_seconds'])} → "
                 + (w.seconds(after["cast_seconds"]) if after["cast_seconds"] else "none"))
    parts.append(f"the other operators {w.seconds(other(before))} → {w.seconds(other(after))}")
    return w.listing(parts)


def cast_check(result, answer: Prose) -> Prose:
    """Step 5's measured speed-up over step 4 against the casts-only prediction, and where the two profiles
    (each operator replayed alone) put the time."""
    records = _records(result)
    step4, step5 = records.get("autocast"), records.get("cast")
    if not step4 or not step5:
        return Prose(f"The run shown here has no record of step {5 if step4 else 4}, so there is no measurement to "
                     "check the prediction against.", {"outcome": "no step"})
    if step4.get("skipped") or step5.get("skipped"):
        return Prose("Steps 4 and 5 did not both run here, so there is nothing to compare.", {"outcome": "skipped"})
    measured = step4["seconds"] / step5["seconds"]
    text = f"Step 5 ran {w.times(measured)} as fast as step 4"
    facts = {"speedup": measured}
    if "speedup" not in answer.facts:
        return Prose(text + ".", {**facts, "outcome": "measured"})
    predicted = answer.facts["speedup"]
    outcome = ("more" if measured > predicted * (1 + WITHIN) else "less" if measured < predicted * (1 - WITHIN)
               else "as predicted")
    text += f": {w.percent(measured / predicted)} of the {w.times(predicted)} the casts alone predicted"
    if _profiled(step5):
        text += (f". In the two profiles, each operator replayed alone, the time went: {_by_category(step4, step5)}"
                 f" (in all, {w.seconds(step4['profile_seconds'])} → {w.seconds(step5['profile_seconds'])}).")
    else:
        text += ". Step 5 has no profile here to say where the time went."
    return Prose(text, {**facts, "outcome": outcome})
