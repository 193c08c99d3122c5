"""Chapter 5, recomputation inside ``torch.compile``: memory and time against the compiled chain
that saves everything and against eager mode.
"""
from __future__ import annotations

from ..arrays import ITEMSIZE
from . import Prose, with_references
from . import words as w
from .recompute_saved import _bytes


def chain_facts(run) -> dict:
    rows = {r["variant"]: r for r in run.records}
    meta = run.meta
    dev = meta.get("device") or {}
    return {"rows": rows, "k": meta.get("k"), "op": meta.get("op"), "n": meta.get("n"),
            "notes": list(meta.get("notes") or []), "cpu": w.is_cpu(run),
            "cache": dev.get("l2_bytes") or 0, "bandwidth": dev.get("peak_bandwidth"),
            "dtype": meta.get("dtype", "float32")}


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


def _compare(this: str, other: str, ratio: float) -> tuple:
    """('faster' | 'same' | 'slower', words) for ``this`` against ``other``; ``ratio``: other's time / this's."""
    if ratio > 1 + w.SAME:
        return "faster", f"{this} was {w.times(ratio)} faster than {other}"
    if ratio < 1 / (1 + w.SAME):
        return "slower", f"{other} was {w.times(1 / ratio)} faster than {this}"
    return "same", f"{this} took about as long as {other} ({w.number(1 / ratio)} times its time)"


def _traffic_sentence(c: dict, saved_time: float, facts: dict) -> str:
    """The least time of the k - 1 arrays saving everything writes and reads back, against the time
    recomputing saved (arrays larger than the cache only; how much it cost, the times do not say)."""
    n, k, bw = c["n"], c["k"], c["bandwidth"]
    array = n * ITEMSIZE.get(c["dtype"], 4) if n else 0
    if not (array and k and k > 1 and bw) or 2 * array <= c["cache"]:
        return ""
    extra = 2 * (k - 1) * array
    least = extra / bw
    facts["extra_traffic_seconds"] = least
    text = (f" Saving everything writes {k - 1} more arrays in the forward pass and reads them back in the "
            f"backward pass: {_bytes(extra)}, at least {w.seconds(least)} at the {w.rate(bw, 'B/s')} peak bandwidth")
    if saved_time >= least:
        facts["recompute_cost"] = "hidden"
        return (text + f". Recomputing saved {w.seconds(saved_time)}, no less than that, so the recomputed "
                f"`{c['op']}`s cost no visible time.")
    facts["recompute_cost"] = "partial" if saved_time > 0 else "more"
    return (text + (f". Recomputing saved only {w.seconds(saved_time)}" if saved_time > 0 else
                    "; recomputing saved none of it") +
            f", so on this device the recomputed `{c['op']}`s were not free.")


def compiled(result, references=()) -> Prose:
    """What the compiler's recomputation saved in memory and cost in time; the reference runs."""
    c = chain_facts(result)
    rows = c["rows"]
    facts = {}
    if "compiled (recompute)" not in rows or "eager" not in rows:
        why = _compile_failed(c)
        eager = rows.get("eager")
        text = (f"`torch.compile` did not run on this machine ({why}), so only eager mode was measured"
                + (f": it saved {_bytes(eager['saved_bytes'])}, one array per `{c['op']}`." if eager else "."))
        facts["outcome"] = "no compiler"
    else:
        ratio, as_predicted, text = _memory_sentence(c)
        facts.update(memory_ratio=ratio, as_predicted=as_predicted)
        rec = rows["compiled (recompute)"]["min_seconds"]
        save = rows.get("compiled (save all)")
        pairs = ([("save_all", "the compiled chain that saves everything", save["min_seconds"] / rec)] if save else [])
        pairs.append(("eager", "eager mode", rows["eager"]["min_seconds"] / rec))
        for key, other, ratio in pairs:
            s, words_ = _compare("the recomputing chain", other, ratio)
            facts[f"recompute_vs_{key}"] = s
            text += f" {words_[0].upper()}{words_[1:]}."
            if key == "save_all":
                facts["save_all_over_recompute"] = ratio
                text += _traffic_sentence(c, save["min_seconds"] - rec, facts)
        facts["eager_over_recompute"] = pairs[-1][2]
        facts["save_all_vs_eager"] = None
        if save:
            s, words_ = _compare("the compiled chain that saves everything", "eager mode",
                                 rows["eager"]["min_seconds"] / save["min_seconds"])
            facts["save_all_vs_eager"] = s
            text = text[:-1] + f"; {words_}."
    return with_references(Prose(text, facts), references, "this comparison", _reference_chain)


def _reference_chain(run) -> Prose:
    r = chain_facts(run)
    if "compiled (recompute)" not in r["rows"] or "eager" not in r["rows"]:
        return Prose(f"{w.reference_intro(run)}, `torch.compile` did not run ({_compile_failed(r)}).", {})
    ratio, _, _ = _memory_sentence(r)
    fastest = {variant: row["min_seconds"] for variant, row in r["rows"].items()}
    t = (f"{w.reference_intro(run)}, the recomputing chain kept {w.times(ratio)} fewer bytes than eager mode")
    if "compiled (save all)" in fastest:
        t += (f", and took {w.number(fastest['compiled (recompute)'] / fastest['compiled (save all)'])} times "
              "as long as the compiled chain that saves everything")
    t += (f"; eager mode took {w.number(fastest['eager'] / fastest['compiled (recompute)'])} times as long "
          "as the recomputing chain.")
    return Prose(t, {f"reference {w.device_of(run)}": ratio})
