"""Chapter 1, compute: tensor cores. What the spec sheets say of tensor-core against
general-math peaks, and what the tensor-core sweep measured against the FP32 one.
"""
from __future__ import annotations

from . import Prose, with_references
from . import words as w
from .compute_matmul import _kind_of_peak, _matmul_curve, curve
from .words import ABOVE_ROOF

MATH = {"float32": "TF32", "float16": "FP16", "bfloat16": "BF16", "float64": "FP64"}


# --- the spec sheets --------------------------------------------------------------------------

def spec_ratios(frame) -> Prose:
    """What the spec-sheet table (from :func:`brrr.specs.tensor_vs_general`) says about the
    ratio of tensor-core to general-math peaks, and where it is small."""
    ratios = dict(zip(frame["GPU"], frame["ratio"]))
    lo, hi = min(ratios, key=ratios.get), max(ratios, key=ratios.get)
    big = [g for g, r in ratios.items() if r >= 10]
    small = [g for g, r in ratios.items() if r <= 2.5]
    text = (f"These are spec-sheet figures, not measurements. The ratio is not one number: it runs from "
            f"{w.number(ratios[lo], 2)} ({lo}) to {w.number(ratios[hi], 2)} ({hi}).")
    if big:
        lo_big, hi_big = (w.number(f(ratios[g] for g in big), 2) for f in (min, max))
        text += (f" The data-centre parts built for training, {w.listing(big)}, put {lo_big} to {hi_big} times "
                 "more FP16 throughput into their tensor cores than into general math: He's sixteen-fold gap.")
    if small:
        geforce = all("GeForce" in g for g in small)
        text += (f" The small ratios belong to {w.listing(small)}"
                 + (": consumer cards, whose spec lists FP16 tensor math with FP32 accumulation at half the "
                    "rate of FP16 accumulation." if geforce else ".")
                 + " Even there, a matmul can use the tensor cores and nothing else can.")
    return Prose(text, {"min_ratio": ratios[lo], "max_ratio": ratios[hi], "min_gpu": lo, "max_gpu": hi,
                        "big": big, "small": small})


# --- the tensor-core sweep --------------------------------------------------------------------

def _by_name(runs, result) -> object:
    """The run in ``runs`` from the same device as ``result`` (or None)."""
    name = w.device_of(result)
    return next((r for r in runs if w.device_of(r) == name), None)


def _tensor_kinds(result) -> list:
    """[(math name, curve, peak, on tensor cores)] per dtype of a tensor-core run."""
    out = []
    for dtype in dict.fromkeys(r["dtype"] for r in result.records):
        recs = [r for r in result.records if r["dtype"] == dtype]
        tc = all(r["tensor_cores"] for r in recs)
        c = curve([r["n"] for r in recs], [r["gflops"] * 1e9 for r in recs])
        name = MATH.get(dtype, dtype) if tc else f"{dtype} (general math)"
        out.append((name, c, max(r["peak_flops"] for r in recs), tc))
    return out


def _tensor_summary(result, fp32=None, where: str = "") -> str:
    """Each kind of math's best rate and share of its peak; with ``fp32`` (the same device's
    float32 general-math sweep), how the fastest compares with it (``where``: where that is drawn)."""
    parts = []
    for name, c, peak, tc in _tensor_kinds(result):
        s = (f"{name} reached {w.rate(c['best'])} at n = {w.number(c['best_x'])}, {w.percent(c['best'] / peak)} "
             f"of its {_kind_of_peak(result)}")
        if c["best"] > ABOVE_ROOF * peak:
            s += " (above it: the datasheet figure is conservative for this part)"
        if c["shape"] == "still rising":
            s += ", still rising at the largest size"
        parts.append(s)
    text = "; ".join(parts) + "."
    if fp32 is not None:
        best32 = _matmul_curve(fp32)["best"]
        top = max(c["best"] for _, c, _, _ in _tensor_kinds(result))
        text += (f" The fastest of them did {w.relative(top, best32, 'the FP32 general-math best')} "
                 f"({w.rate(best32)}{', ' + where if where else ''}).")
    return text


def tensor_cores(result, references=(), fp32=None, fp32_references=()) -> Prose:
    """The tensor-core sweep: measured here (a GPU), or the reference GPU's (a CPU has no
    tensor cores), or neither; each compared with the FP32 general-math sweep of the same
    device (``fp32``: this run's, ``fp32_references``: the references')."""
    facts = {"live": result is not None, "references": len(references)}
    in_fig = "in [the float32 figure](#fig-matmul)"
    if result is not None:
        kinds = _tensor_kinds(result)
        if not any(tc for *_, tc in kinds):
            text = (f"{w.device_of(result)} has no tensor cores for these types, so every sweep in "
                    "[the tensor-core figure](#fig-tensor-cores) ran on general math: "
                    + _tensor_summary(result, fp32, in_fig))
            facts["outcome"] = "no tensor cores"
        else:
            text = (f"On {w.device_of(result)}, in [the tensor-core figure](#fig-tensor-cores), "
                    + _tensor_summary(result, fp32, in_fig))
            facts["outcome"] = "measured"
        facts["best"] = {name: c["best"] for name, c, _, _ in kinds}
    else:
        device = w.device_of(fp32) if fp32 is not None else "This device"
        cpu = fp32 is None or w.is_cpu(fp32)
        why = (" (tensor cores are a GPU's; most CPUs multiply float32 matrices on the same vector units as "
               "everything else)" if cpu else "")
        if not references:
            facts["outcome"] = "nothing to show"
            return Prose(f"{device} has no tensor cores{why}, so this cell measured nothing here; and no reference "
                         "GPU run of the tensor-core sweep ships with this edition of the book yet, so there is no "
                         "figure either. On a GPU runtime (Colab's, for one) the cell measures TF32, FP16 and BF16 "
                         "matmuls; the spec sheets above say by how much they should beat FP32 general math.", facts)
        facts["outcome"] = "reference only"
        text = (f"{device} has no tensor cores{why}, so this cell measured nothing here; "
                "[the tensor-core figure](#fig-tensor-cores) shows the reference GPU's run instead.")
    return with_references(Prose(text, facts), references, "the tensor-core sweep",
                           lambda run: _reference_tensor(run, fp32_references))


def _reference_tensor(run, fp32_references) -> Prose:
    """A reference run's tensor-core sweep against the FP32 sweep of the same device."""
    t = f"{w.reference_intro(run)}, " + _tensor_summary(run, _by_name(fp32_references, run),
                                                          "grey in the float32 figure")
    return Prose(t, {f"reference {w.device_of(run)}": {n: c["best"] for n, c, _, _ in _tensor_kinds(run)}})
