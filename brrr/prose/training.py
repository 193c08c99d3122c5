"""Chapter 8, training: what the training step measured (:func:`brrr.experiments.capstone_train.train_steps`),
and the page's own rows for the table of published anchors (:mod:`brrr.anchors`)."""
from __future__ import annotations

from . import Prose, with_references
from . import words as w
from .capstone import mfu_words

OUTSIDE = ("optimizer", "norm", "loss", "attention", "other")   # cost classes outside the weight matmuls
NAMES = {"optimizer": "the optimizer's update", "norm": "LayerNorm", "loss": "the loss (softmax over the vocabulary)",
         "attention": "attention", "other": "kernels named for none of these classes", "matmul": "the matmuls"}


def _costs(r) -> str:
    """The matmuls' share of the traced step and the two largest shares outside them."""
    from ..experiments.capstone_train import cost_shares
    shares = cost_shares(r)
    if not shares:
        return ""
    outside = sorted((k for k in OUTSIDE if shares.get(k, 0) > 0), key=shares.get, reverse=True)[:2]
    text = f" Traced by `torch.profiler`, {w.percent(shares.get('matmul', 0.0))} of its time is in matmul kernels"
    if outside:
        text += "; the largest costs outside them are " + w.listing(
            f"{NAMES[k]} ({w.percent(shares[k])})" for k in outside)
    return text + "."


def _regime(r, profiled) -> str:
    from ..experiments.capstone import TIE
    if profiled is None:
        return ""
    shares = profiled.get("regime_shares") or {}
    if not shares:
        return f" {profiled['label']} has no profile: {profiled.get('profile_skipped') or 'it was not profiled'}."
    order = sorted(shares, key=shares.get, reverse=True)
    whose = "its eager operators" if profiled is r else f"the eager operators of {profiled['label']}"
    text = (f" The profile of {whose} (`brrr.profile` with the backward pass; a compiled step starts from them) "
            f"puts {w.percent(shares[order[0]])} of their time in {order[0]} operators")
    if len(order) > 1 and shares[order[0]] - shares[order[1]] < TIE:
        text += f" and {w.percent(shares[order[1]])} in {order[1]} ones: no one regime dominates"
    return text + "."


def training(result, references=()) -> Prose:
    """The fastest training configuration: its time per step, tokens/s and MFU, against the first; where
    its time went (:func:`_costs`); the regime of the profiled configuration; then each reference run."""
    from ..experiments.capstone_train import measured
    runs = measured(result) if result is not None else []
    if not runs:
        return with_references(Prose("No training configuration ran here.", {"outcome": "none"}),
                               references, None, _reference)
    best = min(runs, key=lambda r: r["seconds"])
    first = runs[0]
    text = (f"**{best['label']}**: {w.seconds(best['seconds'])} per step of {w.integer(best['tokens'])} tokens, "
            f"{w.integer(best['tokens_per_second'])} tokens/s, {w.rate(best['flops_per_second'])}, {mfu_words(result, best)}.")
    if best is not first:
        text += f" That is {w.times(first['seconds'] / best['seconds'])} faster than {first['label']}."
    if best.get("compile_seconds"):
        text += f" Compiling took {w.seconds(best['compile_seconds'])} once, in the first step."
    text += _costs(best)
    profiled = next((r for r in runs if r.get("regime_shares") or r.get("profile_skipped")), None)
    text += _regime(best, profiled)
    skipped = [f"{r['label']} ({r['skipped']})" for r in result.records if r.get("skipped")]
    if skipped:
        text += f" Did not run here: {w.listing(skipped)}."
    from ..mfu import mfu
    facts = {"outcome": "ran", "best": best["config"], "mfu": mfu(result, best),
             "speedup": first["seconds"] / best["seconds"]}
    return with_references(Prose(text, facts), references, "the training step", _reference)


def _reference(run) -> Prose:
    from ..experiments.capstone_train import measured
    runs = measured(run)
    if not runs:
        return Prose(f"{w.reference_intro(run)}, no training configuration ran.", {})
    best = min(runs, key=lambda r: r["seconds"])
    return Prose(f"{w.reference_intro(run)}, {best['label']} took {w.seconds(best['seconds'])} per step, "
                 f"{w.integer(best['tokens_per_second'])} tokens/s, {mfu_words(run, best)}.",
                 {f"reference {w.device_of(run)}": best["config"]})


def own_rows(train=None, steps=None) -> list:
    """This page's rows for :func:`brrr.anchors.anchors_table`: the fastest training configuration and
    the fastest forward pass (inference), each with its device, tokens/s, precision and MFU; none for a
    run that did not measure them."""
    from ..mfu import mfu, mfu_peak
    rows = []
    for run, kind, key in ((train, "training", "seconds"), (steps, "inference", "seconds_per_token")):
        ran = [r for r in (run.records if run is not None else ()) if not r.get("skipped") and r.get(key)]
        if not ran:
            continue
        best = min(ran, key=lambda r: r[key])
        device = (run.meta.get("device") or {}).get("name") or "this device"
        share = mfu(run, best)         # None where the run's one peak does not bound this dtype
        rows.append({"label": f"{kind}, {best['label']}", "kind": kind, "device": device,
                     "precision": best["dtype"], "tokens_per_second": best["tokens_per_second"],
                     "mfu": share, "peak": None if share is None else mfu_peak(run)["name"], "gpus": 1})
    return rows


def anchors(train=None, steps=None) -> Prose:
    """How the published anchors (:mod:`brrr.anchors`) differ from this page's fastest training step (or,
    without one, its fastest forward pass): each sentence chosen by comparing their fields."""
    from ..anchors import differences
    rows = own_rows(train, steps)
    if not rows:
        return Prose("This page measured neither a training step nor a forward pass to set beside them.",
                     {"outcome": "none"})
    own = rows[0]
    return Prose(" ".join(differences(own["kind"], own["precision"], own["gpus"], own["device"],
                                      own_mfu=own.get("mfu") is not None)),
                 {"outcome": own["kind"]})
