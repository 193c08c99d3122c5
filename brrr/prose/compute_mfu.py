"""Chapter 1, compute: model FLOP utilisation (MFU) of one Linear layer against the batch, and the
smallest batch's roofline regime and time against the roofline's least time."""
from __future__ import annotations

from . import Prose, with_references
from . import words as w
from .compute_matmul import HALF, PLATEAU, _above_roof_sentence, _dips, _kind_of_peak, _uneven, curve
from .words import ABOVE_ROOF
from .worked import fits_cache, why_above

NEAR = 1.5          # a call within 1.5x its roofline minimum is "close to" it
OVERHEAD = 3.0      # a call taking 3x its roofline minimum spends most of its time elsewhere


def _mfu_facts(result) -> dict:
    recs = sorted(result.records, key=lambda r: r["batch"])
    c = curve([r["batch"] for r in recs], [r["mfu"] for r in recs])
    return {"curve": c, "first": recs[0], "above": [r["batch"] for r in recs if r["mfu"] > ABOVE_ROOF]}


def mfu(result, references=()) -> Prose:
    """MFU of one Linear layer at the smallest and the best batch, why the smallest is low
    (its roofline regime and its time against the roofline's minimum), and the references."""
    f = _mfu_facts(result)
    c, first = f["curve"], f["first"]
    width = result.meta.get("width", first.get("width"))
    kind = _kind_of_peak(result)
    peak = result.meta.get("peak_flops") or first["peak_flops"]
    text = (f"MFU here is the layer's FLOP/s over one peak, the FP32 general-math {kind} of {w.rate(peak)}: the "
            "layer runs in float32 with TF32 off, so that is its roof"
            + ("" if w.is_cpu(result) else " (against the tensor cores' peak, the convention for whole models, "
               "every MFU here would be far smaller)")
            + f". On {w.device_of(result)}, with a batch of {first['batch']} the `Linear({width}, {width})` layer "
            f"ran at {w.percent(c['first'])} MFU; the best batch, {w.number(c['best_x'])}, reached "
            f"{w.percent(c['best'])}")
    if c["best"] > (1 + w.SAME) * c["first"]:
        text += f", {w.times(c['best'] / c['first'])} as much."
    else:
        text += ": the batch made little difference here."
    if c["shape"] == "flattens":
        text += f" From batch {w.number(c['plateau_x'])} on, MFU stayed within {w.percent(1 - PLATEAU)} of its best."
    elif c["shape"] == "still rising":
        text += " MFU was still rising at the largest batch."
    elif c["shape"] == "falls after its best":
        text += f" Past its best it fell again, to {w.percent(c['last'])} at batch {w.number(c['last_x'])}"
        llc = (result.meta.get("device") or {}).get("l2_bytes") or 0
        nbytes = {r["batch"]: r["nbytes"] for r in result.records}
        text += (f": its {w.size(nbytes[c['last_x']])} of weights and activations no longer fit in the "
                 f"{w.size(llc)} last-level cache." if llc and nbytes[c["best_x"]] <= llc < nbytes[c["last_x"]]
                 else "; rerunning the sweep shows whether it repeats.")
    elif c["shape"] == "uneven":
        text += _uneven(c, "batch", w.percent)
    text += _dips(c, "batch", "had a lower MFU than")
    bw = result.meta.get("peak_bandwidth") or (result.meta.get("device") or {}).get("peak_bandwidth")
    facts = {"outcome": c["shape"], "first_mfu": c["first"], "best_mfu": c["best"], "best_batch": c["best_x"],
             "above_roof": f["above"]}
    if bw:
        ridge = peak / bw
        ratio = first["seconds"] / first["roofline_seconds"]
        memory = first["intensity"] < ridge
        text += (f" At batch {first['batch']} the layer does {w.number(first['intensity'], 2)} FLOPs per byte it must "
                 f"move (the weights dominate), {'below' if memory else 'above'} this device's ridge of "
                 f"{w.number(ridge)} FLOP/byte: by the roofline it is "
                 f"{'memory-bound (Chapter 2)' if memory else 'compute-bound'}.")
        if ratio > OVERHEAD:
            text += (f" It took {w.seconds(first['seconds'])}, {w.times(ratio)} the roofline's least time of "
                     f"{w.seconds(first['roofline_seconds'])}: most of the call is neither arithmetic nor memory "
                     "traffic, as with a fixed cost per call (Chapter 3 measures it).")
            facts["small_batch"] = "overhead"
        elif ratio < 1:
            llc = (result.meta.get("device") or {}).get("l2_bytes")
            cached = fits_cache(first["nbytes"], llc)
            most = w.percent(bw * first["intensity"] / peak) if memory else "100%"
            text += (f" It took {w.seconds(first['seconds'])}, {w.percent(1 - ratio)} less than the roofline's least "
                     f"time of {w.seconds(first['roofline_seconds'])}: faster than the roofline allows, a point above "
                     f"the roof (an MFU of {w.percent(c['first'])}, where the {'memory' if memory else 'compute'} roof "
                     f"allows at most {most}). " + (
                         "The calls were timed back to back, so the weights stayed warm: " if cached else
                         "This run beat the roof because ")
                     + why_above(first["nbytes"], llc, w.is_cpu(result), "the layer's") + ".")
            facts["small_batch"] = "above roofline"
        elif ratio <= NEAR:
            text += (f" It took {w.seconds(first['seconds'])}, {w.times(ratio)} the roofline's least time of "
                     f"{w.seconds(first['roofline_seconds'])}: close to what the "
                     f"{'memory traffic' if memory else 'arithmetic'} alone costs.")
            facts["small_batch"] = "near roofline"
        else:
            text += (f" It took {w.seconds(first['seconds'])}, {w.times(ratio)} the roofline's least time of "
                     f"{w.seconds(first['roofline_seconds'])}: the {'memory traffic' if memory else 'arithmetic'} "
                     f"accounts for {w.percent(1 / ratio)} of the call, and the rest is neither; Chapter 3 measures "
                     "the fixed cost of a call, which can account for it.")
            facts["small_batch"] = "partly overhead"
    if f["above"]:
        text += _above_roof_sentence(result, f["above"], "batch") + (
            " PyTorch's own matmul library can be faster than NumPy's." if w.is_cpu(result) else "")
    elif c["best"] >= HALF:
        text += f" At its best the layer reached {w.percent(c['best'])} of that FP32 {kind}."
    return with_references(Prose(text, facts), references, "this sweep", lambda run: _reference_mfu(run, c))


def _reference_mfu(run, c: dict) -> Prose:
    """A reference run's MFU curve against this run's (``c``)."""
    r = _mfu_facts(run)["curve"]
    t = (f"{w.reference_intro(run)}, the same layer ran at {w.percent(r['first'])} MFU at batch "
         f"{w.number(r['first_x'])} and {w.percent(r['best'])} at its best batch, {w.number(r['best_x'])}; it "
         f"first reached half its best MFU at batch {w.number(r['half_x'])}, "
         + (f"this run at batch {w.number(c['half_x'])}." if r["half_x"] != c["half_x"] else "as did this run."))
    return Prose(t, {f"reference {w.device_of(run)}": r["best"]})
