"""Chapter 2, ``x.cos().cos()``: what fusing the pair did against one ``cos`` and against the
pair as two kernels (:mod:`.bandwidth` names these too)."""
from __future__ import annotations

from . import Prose, with_references
from . import words as w

def cos_times(result) -> dict:
    """Times of one cos, the fused pair and the unfused pair, and the two ratios to one cos."""
    rows = {(r["k"], r["variant"]): r["seconds"] for r in result.records}
    single = rows.get((1, "fused"), rows.get((1, "unfused")))
    fused, unfused = rows[(2, "fused")], rows[(2, "unfused")]
    regime = next((r.get("predicted_regime") for r in result.records if r["k"] == 2 and r["variant"] == "fused"), None)
    one = next((r for r in result.records if r["k"] == 1), None)
    share = one["predicted_seconds"] / one["seconds"] if one and one.get("predicted_seconds") else None
    return {"single": single, "fused": fused, "unfused": unfused, "fused_ratio": fused / single,
            "unfused_ratio": unfused / single, "predicted_regime": regime, "single_share": share}


def _table_sentence(c: dict, outcome: str) -> str:
    """The table's roofline regime (which counts a cos as one FLOP) against what was measured."""
    regime, share = c["predicted_regime"], c["single_share"]
    if not regime or share is None:
        return ""
    return (f" The table's regime column, the roofline's verdict counting a `cos` as one FLOP, says {regime}"
            + (" too" if outcome == regime else "") + f"; one `cos` ran at {w.percent(share)} of the speed the "
            "roofline allows.")


def _cos_outcome(c: dict) -> str:
    if c["fused_ratio"] <= 1 + w.SAME and c["unfused_ratio"] > 1.6:
        return "memory-bound"       # He's case: the pair costs one trip, unfused two
    if c["fused_ratio"] > 1.6 and c["unfused_ratio"] / c["fused_ratio"] < 1.3:
        return "compute-bound"      # each cos costs more arithmetic time than its bytes
    return "in between"


def _saved(c: dict) -> str:
    """What fusing the pair saved against running it as two kernels: 'saved only 12%', 'saved
    nothing' or 'saved nothing (the fused pair was even 1% slower)'."""
    change = c["fused"] / c["unfused"] - 1
    if change < 0:
        return f"saved only {w.percent(-change)}"
    return "saved nothing" + (f" (the fused pair was even {w.percent(change)} slower)" if change else "")


def cos_fusion(result, references=()) -> Prose:
    """What fusing x.cos().cos() did here, and why; the same for each reference GPU."""
    c = cos_times(result)
    outcome = _cos_outcome(c)
    text = (f"Relative to a single `cos`, the fused `cos().cos()` took {w.number(c['fused_ratio'])} times as "
            f"long and the unfused one {w.number(c['unfused_ratio'])} times. ")
    if outcome == "memory-bound":
        text += ("That is He's argument, measured: both variants are memory-bound, so the time follows the "
                 "traffic, and fusing the pair makes it cost about what one `cos` costs.")
    elif outcome == "compute-bound":
        text += (f"Here fusing {_saved(c)}: even fused, the second `cos` added most of a `cos`'s time, so a `cos` "
                 "is compute-bound on this device, and fusion saves bytes, not arithmetic.")
    else:
        text += ("The fused pair moves exactly the bytes of one `cos`, yet it took "
                 f"{w.percent(c['fused_ratio'] - 1)} longer: its time did not follow the traffic alone.")
    text += _table_sentence(c, outcome)
    facts = {"outcome": outcome, "fused_ratio": c["fused_ratio"], "unfused_ratio": c["unfused_ratio"],
             "single_share": c["single_share"]}
    return with_references(Prose(text, facts), references, "this comparison", _reference_cos)


def _reference_cos(run) -> Prose:
    r = cos_times(run)
    o = _cos_outcome(r)
    t = (f"{w.reference_intro(run)}, the fused pair took {w.number(r['fused_ratio'])} and the unfused pair "
         f"{w.number(r['unfused_ratio'])} times a single `cos`: "
         + {"memory-bound": "memory-bound, as He describes.",
            "compute-bound": f"compute-bound, so fusion {_saved(r)}.",
            "in between": "partly memory-, partly compute-bound."}[o])
    return Prose(t, {f"reference {w.device_of(run)}": o})


__all__ = ["cos_fusion", "cos_times"]
