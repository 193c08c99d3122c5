"""Chapter 3, overhead: doubling the batch, from nearly free (overhead-bound) to work-bound."""
from __future__ import annotations

from . import Prose, with_references
from . import words as w
from .worked import check


def batch_steps(result) -> dict:
    """The verdict of every doubling, the last doubling of the leading free run, the first
    work-bound one, whether a free one came back after the turn, and the time per sample."""
    from ..experiments.overhead import batch_verdict
    recs = sorted(result.records, key=lambda r: r["size"])
    steps = [(r["size"], r["time_ratio"], batch_verdict(r["time_ratio"], r["size_ratio"]))
             for r in recs[1:] if r.get("time_ratio")]
    last_free = None
    for size, _, verdict in steps:
        if verdict == "time fell":      # the machine changed: says nothing about the work
            continue
        if verdict != "overhead-bound":
            break
        last_free = size
    turn = next((i for i, s in enumerate(steps) if s[2] not in ("overhead-bound", "time fell")), None)
    relapse = [s[0] for s in steps[turn:] if s[2] == "overhead-bound"] if turn is not None else []
    first_work = next((s[0] for s in steps if s[2] == "work-bound"), None)
    per_sample = [(r["size"], r["seconds"] / r["size"]) for r in recs]
    if turn is None:
        outcome = "all free"
    elif turn == 0:
        outcome = "none free"
    else:
        outcome = "turns"
    return {"steps": steps, "last_free": last_free, "first_work": first_work, "relapse": relapse,
            "outcome": outcome, "first": recs[0]["size"], "largest": recs[-1]["size"],
            "per_sample": per_sample, "first_ratio": steps[0][1] if steps else None,
            "workload": result.meta.get("workload"), "fell": [(s[0], s[1]) for s in steps if s[2] == "time fell"]}


def _per_sample_at(b: dict, size) -> float:
    return dict(b["per_sample"])[size]


def _batch_sentence(b: dict, subject: str) -> str:
    first_ps, last_ps = b["per_sample"][0][1], b["per_sample"][-1][1]
    best_size, best_ps = min(b["per_sample"], key=lambda sp: sp[1])
    if b["outcome"] == "all free":
        return (f"{subject} every doubling of the batch, up to {w.integer(b['largest'])}, was nearly free: the whole "
                f"sweep is overhead-bound. A pass took {w.seconds(b['per_sample'][0][1] * b['first'])} at a batch of "
                f"{w.integer(b['first'])} and {w.seconds(last_ps * b['largest'])} at {w.integer(b['largest'])}. A "
                "larger batch would be needed before the work shows.")
    if b["outcome"] == "none free":
        return (f"{subject} no doubling was nearly free: already from a batch of {w.integer(b['first'])} to "
                f"{w.integer(b['first'] * 2)} the time grew {w.times(b['first_ratio'])}. The forward pass is not "
                "overhead-bound even at the smallest batch: the work of each layer already outweighs its fixed cost.")
    free_ps = _per_sample_at(b, b["last_free"])
    text = (f"{subject} the last doubling that was nearly free reached a batch of {w.integer(b['last_free'])}. Up to "
            f"there the time per sample fell {w.times(first_ps / free_ps)} over a "
            f"{w.integer(b['last_free'] // b['first'])}-fold "
            "growth of the batch: the forward pass was overhead-bound, each of its calls paying its fixed cost "
            "whatever the batch.")
    if b["first_work"] is not None:
        text += f" The first doubling that cost nearly in proportion came at a batch of {w.integer(b['first_work'])}."
    else:
        text += (f" After it the doublings cost something but never nearly in proportion up to "
                 f"{w.integer(b['largest'])}: the sweep ends in between the two regimes.")
    if best_size > b["last_free"]:
        text += (f" Beyond the free run the time per sample fell only {w.times(free_ps / best_ps)} more, to its "
                 f"lowest, {w.seconds(best_ps)} at a batch of {w.integer(best_size)}: the layers' work had taken over.")
    else:
        text += " Beyond the free run the time per sample fell no further: the layers' work had taken over."
    if last_ps > 1.3 * best_ps:
        worst = max(b["steps"], key=lambda s: s[1])
        text += (f" At the largest batches it rose again, to {w.seconds(last_ps)} at {w.integer(b['largest'])}; the "
                 f"doubling to {w.integer(worst[0])} cost {w.times(worst[1])} the time, more than double the work "
                 "would explain; re-running the sweep shows whether that step repeats.")
    return text


def double_the_batch(result, references=()) -> Prose:
    """The last doubling that was nearly free, the turn to work-bound, noise in the verdicts, and
    the same for each reference run."""
    b = batch_steps(result)
    text = _batch_sentence(b, "On this run")
    if b["relapse"]:
        again = ", ".join(w.integer(s) for s in b["relapse"])
        text += (f" After the free run had ended, a doubling looked free again (to a batch of {again}); "
                 "re-running the sweep shows whether it repeats.")
    if b["fell"]:
        steps = w.listing(f"the doubling to {w.integer(size)} the time fell to {w.number(r, 2)} times the previous "
                          "batch's" for size, r in b["fell"])
        text += (f" At {steps}: more work took less time, which this sweep cannot explain; timing the smallest "
                 "batch again after the sweep, as Worked problem 3 does, shows whether its time moved too.")
    facts = {"outcome": b["outcome"], "last_free": b["last_free"], "first_work": b["first_work"],
             "relapse": b["relapse"], "fell": b["fell"]}
    return with_references(Prose(text, facts), references, "this sweep", lambda run: _reference_batch(run, b))


def _reference_batch(run, b: dict) -> Prose:
    """A reference run's doublings against this run's (``b``)."""
    r = batch_steps(run)
    t = _batch_sentence(r, f"{w.reference_intro(run)},")
    if r["last_free"] and b["last_free"] and r["last_free"] > b["last_free"]:
        t += (f" Its free run reached {w.times(r['last_free'] / b['last_free'])} as far as this run's: it stays "
              "overhead-bound to much larger batches.")
    return Prose(t, {f"reference {w.device_of(run)}": r["outcome"]})


def batch_check(result, answer: Prose, what: str = "The forward pass"):
    """Worked problem 3: ``result``, a ``double_the_batch`` run of batch 1 and the answer's batch. The pass against
    the prediction (:func:`.worked.check`), and against batch 1 timed beside it, since the prediction started from
    the sweep's batch-1 time. None where there is no such run (a replayed build without its record)."""
    recs = sorted(getattr(result, "records", None) or [], key=lambda r: r["size"])
    if len(recs) < 2:
        return None
    t1, t_b = recs[0]["seconds"], recs[-1]["seconds"]
    p = check(t_b, answer, what)
    text = (f"{p.text} Batch 1, timed again beside it, took {w.seconds(t1)} (the sweep's time, which the prediction "
            f"started from, was {w.seconds(answer.facts['batch_1'])}), so the pass at a batch of "
            f"{w.integer(recs[-1]['size'])} took {w.times(t_b / t1)} as long as batch 1.")
    return Prose(text, {**p.facts, "batch_1_now": t1, "ratio_to_batch_1": t_b / t1})
