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

ARCHITECTURES = {7: "Volta", 8: "Ampere", 9: "Hopper", 10: "Blackwell", 12: "Blackwell"}   # by CUDA major version
TRAINING_FP64 = 0.4    # a data-centre training part does FP64 at half the FP32 rate; other parts at 1/32 or less


def _family(name: str) -> str:
    """'Tesla V100 SXM2' -> 'V100', 'NVIDIA GH200 (96GB HBM3)' -> 'GH200' (the name itself where none is found)."""
    import re
    found = re.search(r"\b[A-Z]{1,2}\d{3}\b", name)
    return found.group(0) if found else name


def _range(values) -> str:
    lo, hi = (w.number(f(values), 2) for f in (min, max))
    return lo if lo == hi else f"{lo} to {hi}"


def _training(ratios: dict) -> list:
    """[(architecture, families, ratios)] of the data-centre training parts in ``ratios``: the GPUs of
    :data:`brrr.specs.GPU_SPECS` with half-rate FP64, told apart by their spec sheets, not by their ratio."""
    from ..specs import GPU_SPECS
    groups = {}
    for spec in GPU_SPECS.values():
        if spec.name in ratios and spec.fp64 and spec.fp64 >= TRAINING_FP64 * spec.fp32:
            arch = ARCHITECTURES.get(spec.compute_capability[0], f"compute capability {spec.compute_capability[0]}")
            families, values = groups.setdefault(arch, ({}, []))
            families.setdefault(_family(spec.name))
            values.append(ratios[spec.name])
    return [(arch, list(families), values) for arch, (families, values) in groups.items()]


def _who(names: list) -> str:
    """'the GeForce cards' when every one of ``names`` is a GeForce, 'the A100' when all are of one family,
    else the names."""
    families = list(dict.fromkeys(_family(g) for g in names))
    if len(names) > 1 and all("GeForce" in g for g in names):
        return "the GeForce cards"
    return f"the {families[0]}" if len(families) == 1 and families[0] not in names else w.listing(names)


def _cards(names: list) -> str:
    """'the eight GeForce RTX cards (3070 to 5090)' when every one of ``names`` is a GeForce RTX card,
    else their short names."""
    import re
    models = [re.search(r"GeForce RTX (\d{4})", g) for g in names]
    if len(names) > 1 and all(models):
        lo, hi = min(m.group(1) for m in models), max(m.group(1) for m in models)
        return f"the {w.spelled(len(names))} GeForce RTX cards ({lo} to {hi})"
    return w.listing(names)


def spec_ratios(frame) -> Prose:
    """What the spec-sheet table (from :func:`brrr.specs.tensor_vs_general`) says about the
    ratio of tensor-core to general-math peaks: its range, the data-centre training parts (chosen by
    their half-rate FP64, not by their ratio) by architecture, and where the ratio is small."""
    ratios = dict(zip(frame["GPU"], frame["ratio"]))
    lo, hi = min(ratios, key=ratios.get), max(ratios, key=ratios.get)
    lows = [g for g, r in ratios.items() if w.number(r, 2) == w.number(ratios[lo], 2)]
    highs = [g for g, r in ratios.items() if w.number(r, 2) == w.number(ratios[hi], 2)]
    training = _training(ratios)
    small = [g for g, r in ratios.items() if r <= 2.5]
    text = (f"These are spec-sheet figures, not measurements. The ratio is not one number: it runs from "
            f"{w.number(ratios[lo], 2)} ({_who(lows)}) to {w.number(ratios[hi], 2)} ({_who(highs)}).")
    if training:
        parts = [f"{_range(values)} on the {w.listing(families)} ({arch})" for arch, families, values in training]
        parts[0] = parts[0].replace(" on ", " times more on ", 1)
        text += (" The data-centre parts built for training, told apart by their spec sheets' FP64 at half the FP32 "
                 f"rate, put more FP16 throughput into their tensor cores than into general math: {w.listing(parts)}."
                 + (" He's sixteen-fold gap is the A100's." if any("A100" in f for _, fs, _ in training for f in fs)
                    else ""))
    if small:
        geforce = all("GeForce" in g for g in small)
        text += (f" The small ratios belong to {_cards(small)}"
                 + (": consumer cards, whose spec lists FP16 tensor math with FP32 accumulation at half the "
                    "rate of FP16 accumulation." if geforce else ".")
                 + " Even there, a matmul can use the tensor cores and nothing else can.")
    return Prose(text, {"min_ratio": ratios[lo], "max_ratio": ratios[hi], "min_gpu": lo, "max_gpu": hi,
                        "training": {arch: families for arch, families, _ in training}, "small": small})


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


def constant_data(result, what: str) -> str:
    """A sentence for a GPU run whose matmuls multiplied constant matrices: every run recorded before
    the experiments said what they multiply (``meta['data']``; since then, random normal values)."""
    if result.meta.get("data") is not None or w.is_cpu(result):
        return ""
    return (f" The matrices behind {what} were constants (every element one), which a GPU can multiply at a higher "
            "clock than random data; a rerun with this edition, which multiplies random matrices, shows by how much.")


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
        elif c["best_x"] != c["last_x"]:
            s += f" (at the largest, n = {w.number(c['last_x'])}: {w.rate(c['last'])})"
        parts.append(s)
    text = "; ".join(parts) + "."
    text += constant_data(result, "these rates")
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
        why = " (tensor cores are a GPU's)" if cpu else ""
        if not references:
            facts["outcome"] = "nothing to show"
            return Prose(f"{device} has no tensor cores{why}, so this cell measured nothing here; and "
                         + w.no_reference("the tensor-core sweep", None)[0].lower()
                         + w.no_reference("the tensor-core sweep", None)[1:], facts)
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
