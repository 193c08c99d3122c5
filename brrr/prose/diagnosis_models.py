"""Chapter 7: BERT against Ivanov et al. (2021), the backward pass against the forward, ResNet-18."""
from __future__ import annotations

import math

from . import Prose, with_references
from . import words as w
from .diagnosis_regimes import _cpu, _device, _pct, _split, _summary, _where, frame, regime_facts

# --- BERT: where the FLOPs go and where the time goes -----------------------------------------

def _v100_ridge() -> float:
    """The ridge of Ivanov et al.'s V100 with FP16 tensor cores (spec sheet, :mod:`brrr.specs`), FLOP/byte."""
    from ..specs import GPU_SPECS
    v100 = GPU_SPECS["V100"]
    return v100.fp16_tensor / v100.bandwidth


def _matmul_ridge(t) -> float:
    """The ridge the profiler used for these matmuls: their compute roof (FLOPs / roofline time of a
    compute-bound matmul row) over the bandwidth roof (bytes / roofline time of a memory-bound row);
    the device's float32 peaks where the table has no such row."""
    s = _summary(t)
    mm = t[(t.category == "matmul") & (t.regime == "compute-bound") & (t.roofline_seconds > 0)]
    mem = t[(t.regime == "memory-bound") & (t.roofline_seconds > 0)]
    peak = float((mm.flops / mm.roofline_seconds).max()) if len(mm) else s.get("peak_flops_float32", math.nan)
    bandwidth = float((mem.nbytes / mem.roofline_seconds).max()) if len(mem) else s.get("peak_bandwidth", math.nan)
    return peak / bandwidth


def bert_facts(data) -> dict:
    """Ivanov et al.'s three classes in a profile: FLOP and time shares, FLOP/s gaps, bytes; the
    gaps the roofline alone would give, each class's efficiency, and the ridge against the V100's."""
    from ..profiler import category_totals, ivanov_comparison
    t = frame(data)
    totals = category_totals(t)
    m = ivanov_comparison(totals).set_index(["category", "quantity"]).measured
    gap = "matmul FLOP/s ÷ this FLOP/s"
    three = totals.reindex(["matmul", "normalisation", "elementwise"]).fillna(0)
    roofs = t.groupby("category").roofline_seconds.sum().reindex(three.index).fillna(0)
    eff = roofs / three.seconds.where(three.seconds > 0)
    at_roof = three.flops / roofs.where(roofs > 0)                 # FLOP/s at the roof, per class
    small = ["normalisation", "elementwise"]
    ln = t[t.op == "native_layer_norm"]
    tokens = None
    if len(ln):
        shape = list(ln.iloc[0].input_shapes[0])
        tokens = int(math.prod(shape[:-1]))
    mm_time = float(m["matmul", "share of time"])
    mm_flops = float(m["matmul", "share of FLOPs"])
    if mm_flops > 0.99 and mm_time <= 0.8:
        shape_outcome = "reproduced"
    elif mm_flops > 0.99 and mm_time <= 0.95:
        shape_outcome = "weaker"
    else:
        shape_outcome = "not reproduced"
    return {"mm_flops": mm_flops, "mm_time": mm_time,
            "norm_time": float(m["normalisation", "share of time"]),
            "ew_time": float(m["elementwise", "share of time"]),
            "norm_gap": float(m["normalisation", gap]), "ew_gap": float(m["elementwise", gap]),
            "norm_roof_gap": float(at_roof["matmul"] / at_roof["normalisation"]),
            "ew_roof_gap": float(at_roof["matmul"] / at_roof["elementwise"]),
            "mm_eff": float(eff["matmul"]), "small_eff": float(roofs[small].sum() / three.seconds[small].sum()),
            "ridge": _matmul_ridge(t), "v100_ridge": _v100_ridge(), "mm_dtype": _matmul_dtype(t),
            "tensor_ridge": _tensor_ridge(t), "backward": bool(t.attrs.get("backward")),
            "small_bytes": float(three.nbytes[small].sum() / three.nbytes.sum()),
            "small_flops": float(1 - mm_flops), "tokens": tokens, "shape": shape_outcome,
            "device": _device(t), "cpu": _cpu(t),
            "floor_share": _floor_share(t, small)}


def _matmul_dtype(t) -> str:
    """The dtype of the matmul rows (the first's), or '' where the table has none."""
    mm = t[t.category == "matmul"]
    return str(mm.dtype.iloc[0]) if len(mm) and "dtype" in mm else ""


def _tensor_ridge(t) -> float:
    """This device's ridge with its 16-bit tensor cores (their peak over the bandwidth), or NaN."""
    s = _summary(t)
    peak, bw = s.get("peak_flops_float16_tensor"), s.get("peak_bandwidth")
    return float(peak / bw) if peak and bw else math.nan


def _floor_share(t, categories) -> float:
    """How much of these categories' replayed time the replay floor makes (each row pays it once)."""
    rows = t[t.category.isin(categories)]
    fl, total = t.attrs.get("replay_floor_seconds"), float(rows.seconds.sum())
    if not fl or not math.isfinite(fl) or not total > 0:
        return 0.0
    return min(1.0, len(rows) * fl / total)


def _gap(value: float) -> str:
    return f"{w.number(value)}×" if math.isfinite(value) else "an unmeasured factor"


FLOOR_SHARE = 0.10    # the replay floor is named where it is over 10% of the small operators' time


def _why_share(b) -> str:
    """What sets the matmuls' share of the time, as measured here: this device's ridge for these matmuls
    against the V100's, each class's efficiency, and the replay floor's part of the small operators' time."""
    ratio = b["v100_ridge"] / b["ridge"]
    rel = (f"{w.times(ratio)} lower" if ratio > 1 + w.SAME else
           f"{w.times(1 / ratio)} higher" if ratio < 1 / (1 + w.SAME) else "about the same")
    dtype = b.get("mm_dtype") or ""
    text = (f" Ivanov et al. trained BERT-large in FP16 on a V100 GPU, whose tensor cores put its ridge at "
            f"{w.number(b['v100_ridge'])} FLOP/byte; this layer is smaller, ran "
            f"{'forward and backward' if b.get('backward') else 'forward only'}"
            + (f" in {dtype}" if dtype else "") + f", and the ridge of its matmuls here is {w.number(b['ridge'])} "
            f"FLOP/byte, {rel}.")
    tr = b.get("tensor_ridge", math.nan)
    if dtype == "float32" and math.isfinite(tr) and abs(tr / b["ridge"] - 1) > w.SAME:
        text += (f" The ridge is the dtype's, not only the device's: in 16 bits on its tensor cores this device's "
                 f"ridge is {w.number(tr)} FLOP/byte, which a profile of the layer in that dtype would test.")
    text += (" The lower the ridge, the less a memory-bound operator falls behind the matmuls' "
             f"FLOP/s, and the more of the time the matmuls take. The matmuls ran at {w.percent(b['mm_eff'])} of their "
             f"roof and the normalisation and elementwise operators at {w.percent(b['small_eff'])} of theirs.")
    if b["floor_share"] > FLOOR_SHARE:
        text += (f" The replay floor (see above) makes {w.percent(b['floor_share'])} of the small operators' "
                 "replayed time.")
    return text


def _why_gaps(b) -> str:
    """The FLOP/s gaps against the published ones: the gaps at the roofs (about the ridge over each class's
    intensity) times the matmuls' efficiency over each class's, which is what was measured."""
    if not (math.isfinite(b["norm_gap"]) and math.isfinite(b["ew_gap"])):
        return ""
    if b["norm_gap"] < 250 and b["ew_gap"] < 700:
        text = " The FLOP/s gaps are smaller than published."
    elif b["norm_gap"] > 250 and b["ew_gap"] > 700:
        text = " The FLOP/s gaps are larger than published."
    else:
        text = " One FLOP/s gap is above the published one and the other below."
    if math.isfinite(b["norm_roof_gap"]) and math.isfinite(b["ew_roof_gap"]) and b["ew_roof_gap"] > 0:
        text += (f" Had every operator run at its roof, the normalisations would have run "
                 f"{_gap(b['norm_roof_gap'])} and the elementwise operators {_gap(b['ew_roof_gap'])} below the "
                 "matmuls (about the ridge divided by their FLOPs per byte); the measured gaps are those times the "
                 "matmuls' efficiency over each class's.")
    return text


def bert(table, references=()) -> Prose:
    """Ivanov et al.'s BERT measurement against this run: FLOP and time shares of the matmuls,
    normalisations and elementwise operators, their FLOP/s gaps, and whether the shape holds; what
    sets the time (the ridge against the V100's, the efficiencies, the replay floor)."""
    b = bert_facts(table)
    who = f"With {b['tokens']:,} tokens through the layer, the" if b["tokens"] else "The"
    text = (f"{who} matmuls did {_pct(b['mm_flops'])} of the FLOPs and took {_pct(b['mm_time'])} of the time "
            "(published: 99.8% and 61%); the table sets each class's shares and FLOP/s gap beside the published "
            "ones.")
    text += {
        "reproduced": " This run reproduces the published shape: the FLOPs are almost all matmul, the time is not.",
        "weaker": (" The published shape is there, but weaker: the FLOPs are almost all matmul, yet the other "
                   f"operators took only {_pct(1 - b['mm_time'])} of the time, against 39% in the paper."),
        "not reproduced": (" This run does not reproduce the published shape: the matmuls took almost all of "
                           "the time as well as the FLOPs."),
    }[b["shape"]]
    text += _why_share(b) + _why_gaps(b)
    text += f" The normalisation and elementwise operators moved {_pct(b['small_bytes'])} of the bytes."
    facts = {k: b[k] for k in ("mm_flops", "mm_time", "norm_time", "ew_time", "norm_gap", "ew_gap",
                                "small_bytes", "shape", "mm_eff", "small_eff", "ridge")}
    facts.update(outcome=b["shape"])
    return with_references(Prose(text, facts), references, "this profile", _reference_bert, shown="table")


def _reference_bert(run) -> Prose:
    r = bert_facts(run)
    t = f"{w.reference_intro(run)}, " + {"reproduced": "the profile reproduces the published shape.",
                                          "weaker": "the published shape is there, but weaker.",
                                          "not reproduced": "the profile does not reproduce the published shape."}[r["shape"]]
    return Prose(t, {f"reference {w.device_of(run)}": r["shape"]})


# --- forward and backward ---------------------------------------------------------------------

def backward_facts(data) -> dict:
    from ..profiler import phase_totals
    t = frame(data)
    p = phase_totals(t)
    fwd, bwd = p.loc["forward"], p.loc["backward"]
    return {"flop_ratio": float(bwd.flops / fwd.flops), "time_ratio": float(bwd.seconds / fwd.seconds),
            "fwd_other_share": float(1 - fwd.matmul_time_share), "bwd_other_share": float(1 - bwd.matmul_time_share),
            "mm_flop_ratio": float(bwd.matmul_flops / fwd.matmul_flops) if fwd.matmul_flops else math.nan,
            "device": _device(t)}


def backward(table, references=()) -> Prose:
    """The backward pass against the forward: FLOP ratio and why, time ratio against it, and
    the share of the time outside the matmuls in each direction."""
    b = backward_facts(table)
    rf, rt = b["flop_ratio"], b["time_ratio"]
    text = f"The backward pass did {w.number(rf)} times the forward pass's FLOPs"
    if rf < 1.9:
        text += (": a little under the rule of thumb of 2, because the block's input needs no gradient, so the "
                 "three projections that read it skip the matmul for their input's gradient.")
        flop_outcome = "under 2"
    elif rf <= 2.1:
        text += ": about the rule of thumb of 2."
        flop_outcome = "about 2"
    else:
        text += (": more than the rule of thumb of 2, because the backward passes of layer norm, softmax and "
                 "GELU count more FLOPs per element than their forward passes.")
        flop_outcome = "over 2"
    text += f" It took {w.number(rt)} times the forward's operator time"
    if rt > rf * (1 + w.SAME):
        text += (", more than its share of FLOPs: the backward pass adds operators with few FLOPs of its own "
                 "(the backward passes of layer norm, softmax and GELU, the sums for the bias gradients).")
        time_outcome = "more than FLOPs"
    elif rt < rf / (1 + w.SAME):
        text += ", less than its share of FLOPs."
        time_outcome = "less than FLOPs"
    else:
        text += ", in proportion to its FLOPs."
        time_outcome = "in proportion"
    a, z = b["fwd_other_share"], b["bwd_other_share"]
    text += (f" The operators that are not matmuls took {w.percent(a)} of the time going forward and "
             f"{w.percent(z)} going back")
    if z >= a / (1 + w.SAME):
        text += ", so their share does not shrink when you train."
        share_outcome = "not smaller"
    else:
        text += ": a smaller share going back."
        share_outcome = "smaller"
    facts = {"flop_ratio": rf, "time_ratio": rt, "flop_outcome": flop_outcome, "time_outcome": time_outcome,
             "share_outcome": share_outcome, "fwd_other_share": a, "bwd_other_share": z}
    return with_references(Prose(text, facts), references, "this profile", _reference_backward, shown="table")


def _reference_backward(run) -> Prose:
    r = backward_facts(run)
    t = (f"{w.reference_intro(run)}, the backward pass took {w.number(r['time_ratio'])} times the forward's "
         f"operator time for the same {w.number(r['flop_ratio'])} times the FLOPs, and the operators that "
         f"are not matmuls took {w.percent(r['bwd_other_share'])} of the backward's time.")
    return Prose(t, {f"reference {w.device_of(run)}": r["time_ratio"]})


# --- ResNet-18 --------------------------------------------------------------------------------

def resnet_facts(data) -> dict:
    from ..profiler import op_totals
    t = frame(data)
    ops = op_totals(t)
    conv = ops.loc["convolution"] if "convolution" in ops.index else None
    image = None
    rows = t[t.op == "convolution"]
    if len(rows):
        image = int(list(rows.iloc[0].input_shapes[0])[-1])
    rest = t[t.op != "convolution"]
    fl = t.attrs.get("replay_floor_seconds")
    calls = float(rest.calls.sum()) if "calls" in rest else float(len(rest))
    return {"conv_time": float(conv.time_share) if conv is not None else 0.0,
            "conv_flops": float(conv.flops / ops.flops.sum()) if conv is not None else 0.0,
            "conv_rate": float(rows.flops.sum() / rows.seconds.sum()) if len(rows) and rows.seconds.sum() > 0
            else math.nan,
            "conv_eff": float(rows.roofline_seconds.sum() / rows.seconds.sum())
            if len(rows) and rows.seconds.sum() > 0 and "roofline_seconds" in rows else math.nan,
            "conv_roof": float((rows.flops / rows.roofline_seconds).max())
            if len(rows) and "roofline_seconds" in rows and (rows.roofline_seconds > 0).all() else math.nan,
            "rest_per_call": float(rest.seconds.sum()) / calls if calls else math.nan,
            "floor": float(fl) if fl and math.isfinite(fl) else math.nan,
            "image": image, "regimes": regime_facts(t), "device": _device(t)}


def resnet(table, references=()) -> Prose:
    """The convolutions' share of ResNet-18's FLOPs and time, and which operators landed in
    which regime, here and on each reference GPU."""
    r = resnet_facts(table)
    at = f"At {r['image']}×{r['image']} pixels, the" if r["image"] else "The"
    text = (f"{at} convolutions did {_pct(r['conv_flops'])} of the FLOPs and took {_pct(r['conv_time'])} of "
            "the replayed time")
    if r["conv_time"] >= 0.8:
        text += ": almost all of it."
        outcome = "almost all"
    elif r["conv_time"] >= 0.5:
        text += ": most of it, but not all."
        outcome = "most"
    else:
        text += ": less than half."
        outcome = "less than half"
    if math.isfinite(r["conv_rate"]) and math.isfinite(r["conv_eff"]):
        text += (f" The convolutions ran at {w.rate(r['conv_rate'])}, {w.percent(r['conv_eff'])} of their roofline "
                 "speed" + (f" (the profiler's roof for them: {w.rate(r['conv_roof'])})"
                            if math.isfinite(r.get("conv_roof", math.nan)) else "") + ".")
    if math.isfinite(r["rest_per_call"]) and math.isfinite(r["floor"]) \
            and r["floor"] <= r["rest_per_call"] < 2 * r["floor"]:
        text += (f" The other operators averaged {w.seconds(r['rest_per_call'])} a call, less than twice the replay "
                 f"floor of {w.seconds(r['floor'])}: at least half of their time is the floor, not their work.")
    text += " " + _where(r["regimes"])
    facts = {"outcome": outcome, "conv_time": r["conv_time"], "conv_flops": r["conv_flops"]}
    return with_references(Prose(text, facts), references, "this profile", _reference_resnet,
                           shown="table and the figure")


def _reference_resnet(run) -> Prose:
    q = resnet_facts(run)
    t = (f"{w.reference_intro(run)}, the convolutions took {_pct(q['conv_time'])} of the time. "
         f"{_split(q['regimes'], 'There,')}.")
    return Prose(t, {f"reference {w.device_of(run)}": q["conv_time"]})
