"""Chapter 6, the arithmetic intensity of real networks: sentences chosen by the numbers.

Most of the chapter is computed, not measured: the formulas of Jha, Mittal & Avancha
(2020), their Table III and Table VIII recomputed from the networks in
:mod:`brrr.models`. Sentences that compare those numbers with the paper's, or rank
networks, are still chosen by the numbers here, so that a change in a model or a
count cannot leave a sentence behind. The one measurement, :func:`brrr.intensity.
measure_convs`, is discussed by :func:`conv_measurements` with its reference runs.
"""
from __future__ import annotations

import math

from . import Prose, with_references
from . import words as w

CLOSE = 3.0          # per cent beyond the paper's rounding: "within 3%"
NEAR = 10.0          # per cent: "within 10%"; more is "differs"
ABOVE_ROOF = 1.05    # a measured point 5% above its roof is above it (less is noise)
FLAT_TIMES = 3.0     # slowest / fastest convolution below this, where the roofline expects
MODEL_SPREAD = 10.0  # more than this, means the times were set by a fixed cost, not the work
NAMES = {"weight_reuse": "$M_c/W$", "activation_reuse": "$M_c/A$", "ai_c": "$AI_c$", "di": "DI",
         "a_over_w": "$A/W$", "d_f": "$d_f$"}


def _names(items) -> str:
    """'a', 'a and b', 'a, b and c'."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _fraction(value: float) -> str:
    """1/256 for a ratio that is one over a whole number, else the number."""
    inverse = 1 / value
    if abs(inverse - round(inverse)) < 1e-9 * inverse:
        return f"1/{round(inverse)}"
    return w.number(value)


# --- Table II / III ----------------------------------------------------------------------

def convolution_kinds(comparison, kinds) -> Prose:
    """Whether Table III recomputed (``intensity.table_iii_beside_paper()``) agrees with the
    paper's printed values, and what the absolute table (``convolution_table(normalize=False)``)
    says about where the four kinds differ."""
    pairs = [c[:-len(" (brrr)")] for c in comparison.columns if c.endswith(" (brrr)")]
    cells = len(pairs) * len(comparison)
    wrong = [f"{row['convolution']} {col}" for _, row in comparison.iterrows() for col in pairs
             if not math.isclose(row[f"{col} (brrr)"], row[f"{col} (paper)"], abs_tol=1e-9)]
    if not wrong:
        text = (f"All {cells} numbers agree with the paper's Table III to the digits it prints "
                "(Jha, Mittal & Avancha, 2020).")
    else:
        text = (f"{len(wrong)} of the {cells} numbers differ from the paper's Table III at the digits it "
                f"prints: {_names(wrong)}.")
    std, dw = kinds.loc["standard"], kinds.loc["depthwise"]
    macs, act = dw["macs"] / std["macs"], dw["activation_reuse"] / std["activation_reuse"]
    same_weight_reuse = kinds["weight_reuse"].nunique() == 1
    text += (f" Going from the standard to the depthwise convolution cuts the MACs to {_fraction(macs)} "
             "of the standard one's, which is why MobileNet uses it. ")
    if math.isclose(act, macs, rel_tol=1e-9):
        text += "But the activation reuse falls by the same factor, and with it the intensity: "
    else:
        text += f"The activation reuse falls to {_fraction(act)} of the standard one's, and with it the intensity: "
    text += (f"the depthwise layer does {w.number(dw['arithmetic_intensity'])} MACs per element it touches, "
             f"the standard one {w.number(std['arithmetic_intensity'])}.")
    if same_weight_reuse:
        text += (f" Weight reuse is the same for all four kinds ({w.number(std['weight_reuse'])} MACs per "
                 "weight, $S_o^2$), so **the variation in intensity between kinds is entirely a variation in "
                 "activation reuse**. This is the first half of the paper's claim that activation reuse "
                 "matters more than weight reuse.")
    else:
        text += (" Weight reuse differs between the kinds here too, so activation reuse is not the only thing "
                 "that varies.")
    return Prose(text, {"mismatches": wrong, "macs_ratio": macs, "activation_reuse_ratio": act,
                        "depthwise_intensity": dw["arithmetic_intensity"],
                        "standard_intensity": std["arithmetic_intensity"],
                        "same_weight_reuse": same_weight_reuse})


# --- one network, two conventions -----------------------------------------------------------

def _agreement(ours: float, paper: float, digits: int = 0) -> tuple:
    """('rounding' | 'close' | 'near' | 'far', per cent beyond the paper's rounding, signed)."""
    slack = 0.5 * 10.0 ** -digits
    gap = max(abs(ours - paper) - slack, 0.0)
    pct = math.copysign(100 * gap / abs(paper), ours - paper) if gap else 0.0
    if gap == 0:
        return "rounding", 0.0
    return ("close" if abs(pct) <= CLOSE else "near" if abs(pct) <= NEAR else "far"), pct


def vgg16(blobs, layer, paper=None) -> Prose:
    """VGG-16's AI_c and DI by the blob count against the paper's row, and how many more
    activations the per-layer convention counts. ``blobs``, ``layer``: ModelIntensity."""
    from ..intensity import PAPER_TABLE_VIII, TABLE_VIII_COLUMNS
    paper = paper or dict(zip(TABLE_VIII_COLUMNS, PAPER_TABLE_VIII["VGG-16"]))
    got = {k: _agreement(getattr(blobs, k), paper[k]) for k in ("ai_c", "di")}
    text = (f"With the blob count VGG-16 comes out at $AI_c$ = {w.number(blobs.ai_c)} and DI = "
            f"{w.number(blobs.di)} MACs per element; the paper's row says {w.number(paper['ai_c'])} and "
            f"{w.number(paper['di'])}")
    worst = max(got.values(), key=lambda o: abs(o[1]))
    if worst[0] == "rounding":
        text += ": the same, to the paper's rounding."
    elif worst[0] in ("close", "near"):
        text += f": within {w.percent(abs(worst[1]) / 100)} beyond the paper's rounding."
    else:
        text += (f": {w.percent(abs(worst[1]) / 100)} apart, beyond the paper's rounding, so this VGG-16 is not "
                 "the network the paper counted.")
    ratio = layer.activations / blobs.activations
    if ratio > 1 + w.SAME:
        text += (f" The per-layer convention counts {w.times(ratio)} as many activations, because every "
                 "intermediate tensor is written by one layer and read by the next, so it puts $AI_c$ at "
                 f"{w.number(layer.ai_c)} and DI at {w.number(layer.di)}.")
    else:
        text += " The per-layer convention counts about as many activations here."
    return Prose(text, {"ai_c": got["ai_c"][0], "di": got["di"][0], "layer_ratio": ratio,
                        "outcome": worst[0]})


# --- Table VIII ---------------------------------------------------------------------------------

def _row_story(name: str, row) -> dict:
    """Per column of one network's row: agreement with the paper, signed per cent."""
    from ..intensity import MAIN_COLUMNS, TABLE_VIII_DIGITS
    return {c: _agreement(row[c], row[f"{c} (paper)"], TABLE_VIII_DIGITS[c]) for c in MAIN_COLUMNS}


def _differences(story: dict) -> str:
    """'$M_c/A$ 3.6% lower and DI 2.4% lower than the paper's' for the columns beyond rounding."""
    parts = [f"{NAMES[c]} {w.percent(abs(pct) / 100)} {'higher' if pct > 0 else 'lower'}"
             for c, (o, pct) in story.items() if o != "rounding"]
    return _names(parts) + " than the paper's" if parts else ""


def _note(name: str, row, story: dict) -> str:
    """What is known about why a network's row comes out as it does (model facts; the
    differences themselves are chosen by the numbers)."""
    if name == "AlexNet":
        text = "the Caffe model, with two groups and local response normalisation."
        act = story["activation_reuse"]
        if act[0] != "rounding":
            text += (f" Our activation count is {'smaller' if act[1] > 0 else 'larger'} than the paper's, "
                     f"so $M_c/A$ and DI come out {'higher' if act[1] > 0 else 'lower'}.")
        if row["a_over_w"] < 0.1:
            text += (f" The story is unchanged: $A/W$ = {w.number(row['a_over_w'], 2)}, so $A \\ll W$ "
                     "(the paper's 0.03 has one significant digit).")
        return text
    if name == "ResNet-50":
        return (f"counted with the Caffe layer shapes (\"v1\", which strides in the first $1\\times1$ "
                f"convolution of a downsampling bottleneck): {w.number(row['macs'] / 1e9)} G MACs, where the "
                "later versions that stride in the $3\\times3$ convolution do about 4.1 G.")
    if name.startswith("SqueezeNet"):
        size = int(row["input_size"])
        return (f"counted at {size}×{size} input; the paper does not say which input "
                "size it used for which SqueezeNet.")
    if name == "MobileNet-V2":
        wr = story["weight_reuse"]
        if wr[0] in ("near", "far"):
            implied = row["weight_reuse (paper)"] * row["weights"]
            return (f"ours has {w.number(row['macs'] / 1e6)} M MACs and {w.number(row['weights'] / 1e6, 2)} M "
                    f"parameters, the published figures, so $M_c/W$ = {w.number(row['weight_reuse'])}; the "
                    f"paper's {w.number(row['weight_reuse (paper)'])} implies about {w.number(implied / 1e6)} M "
                    "MACs for the same parameters. The network the authors analysed evidently differed (input "
                    "size or width multiplier).")
        return ""
    return ""


def table_viii(table) -> Prose:
    """How close each network of ``intensity.compare_with_paper()`` comes to the paper's
    Table VIII (beyond its rounding, d_f left out), with what is known about the misses,
    and whether the paper's d_f column behaves as computed from rounded values."""
    from ..intensity import largest_differences
    worst = largest_differences(table)
    groups = {"rounding": [], "close": [], "near": [], "far": []}
    bullets = []
    for name, row in table.iterrows():
        story = _row_story(name, row)
        pct = worst.loc[name, "largest difference (%)"]
        group = "rounding" if pct == 0 else "close" if pct <= CLOSE else "near" if pct <= NEAR else "far"
        groups[group].append(name)
        if group == "rounding":
            line = f"**{name}** agrees with the paper on every column but $d_f$, to the paper's rounding"
        else:
            agree = [NAMES[c] for c, (o, _) in story.items() if o == "rounding"]
            line = f"**{name}**: {_differences(story)}"
            if agree:
                line += f"; {_names(agree)} agree{'s' if len(agree) == 1 else ''} to the paper's rounding"
        note = _note(name, row, story)
        bullets.append(f"- {line}" + (f"; {note}" if note else "."))
    n = len(table)
    counts = []
    verb = lambda k, one, many: one if len(groups[k]) == 1 else many  # noqa: E731
    if groups["rounding"]:
        counts.append(f"{len(groups['rounding'])} {verb('rounding', 'agrees', 'agree')} with the paper to its "
                      f"rounding on every column but $d_f$ ({_names(groups['rounding'])})")
    if groups["close"]:
        counts.append(f"{len(groups['close'])} {verb('close', 'comes', 'come')} within {w.number(CLOSE)}% of it "
                      f"beyond its rounding ({_names(groups['close'])})")
    if groups["near"]:
        counts.append(f"{len(groups['near'])} within {w.number(NEAR)}% ({_names(groups['near'])})")
    if groups["far"]:
        counts.append(f"{len(groups['far'])} {verb('far', 'differs', 'differ')} by more ({_names(groups['far'])})")
    text = f"Of the {n} networks, {_names(counts)}. Network by network:"
    # The paper computed d_f from its rounded AI_c and DI: does that reproduce its column better?
    closer = sum(abs(r["d_f from rounded"] - r["d_f (paper)"]) < abs(r["d_f"] - r["d_f (paper)"])
                 for _, r in table.iterrows())
    if closer > n / 2:
        tail = (f"For {closer} of the {n} networks, $d_f$ computed from our *rounded* $AI_c$ and DI (the "
                "column 'brrr, rounded') is closer to the paper's $d_f$ than the exact value is, as it should "
                "be if the paper computed its column that way.")
    else:
        tail = (f"Only {closer} of the {n} networks have a $d_f$ from rounded values closer to the paper's "
                "column than the exact one; here the rounding does not explain the paper's $d_f$.")
    facts = {"groups": groups, "worst": worst["largest difference (%)"].to_dict(), "d_f_rounded_closer": closer}
    return Prose(text + "\n\n" + "\n".join(bullets) + "\n\n" + tail, facts)


def reuse(table) -> Prose:
    """Which networks have the most and the least activation reuse (the left panel of the
    reuse figure), their A/W, and whether the paper's values rank them the same way."""
    order = table.sort_values("activation_reuse", ascending=False)
    top, bottom = order.head(2), order.tail(3).iloc[::-1]
    hi = [f"{n} ({w.number(r['activation_reuse'])} MACs per activation, $A/W$ = {w.number(r['a_over_w'], 2)})"
          for n, r in top.iterrows()]
    text = f"By activation reuse, {_names(hi)} sit highest"
    if (top["a_over_w"] < 1).all():
        text += (": their activations are used hundreds of times, because most of their data are weights"
                 if (top["activation_reuse"] >= 100).all() else ": most of their data are weights")
        text += " (big fully-connected layers)."
    else:
        text += "."
    lo = [f"{n} ({w.number(r['activation_reuse'])})" for n, r in bottom.iterrows()]
    text += f" Lowest: {_names(lo)}"
    text += (", whose activations are each used only tens of times." if bottom["activation_reuse"].max() < 100
             else ".")
    if any(n.startswith("MobileNet") for n in bottom.index):
        text += (" The MobileNets are built from depthwise and pointwise convolutions, which do little work "
                 "per feature map.")
    ours = list(order.index)
    theirs = list(table.sort_values("activation_reuse (paper)", ascending=False).index)
    if ours == theirs:
        text += " The paper's values (hollow) rank the networks in the same order."
    else:
        moved = [n for a, n in zip(theirs, ours) if a != n]
        text += (f" The paper's values (hollow) rank them a little differently: {_names(moved)} swap places, "
                 "among networks whose activation reuse is close.")
    wr = table["weight_reuse"]
    text += (f" Weight reuse, on the horizontal axis, runs from {w.number(wr.min())} ({wr.idxmin()}) to "
             f"{w.number(wr.max())} ({wr.idxmax()}) and says little about activation reuse.")
    return Prose(text, {"top": list(top.index), "bottom": list(bottom.index), "same_order": ours == theirs})


def ai_c_vs_di(table) -> Prose:
    """Where AI_c and DI disagree (the right panel): which networks sit above DI = AI_c, why
    AlexNet's AI_c is its weight reuse, and whether DI reverses AlexNet and MobileNet-V1."""
    above = [n for n, r in table.iterrows() if r["di"] > r["ai_c"]]
    below = [n for n in table.index if n not in above]
    text = ""
    if above:
        text += (f"{_names(above)} sit{'s' if len(above) == 1 else ''} above the dashed line (DI > $AI_c$), "
                 f"the other {len(below)} below it. ")
    else:
        text += "Every network sits below the dashed line ($AI_c$ > DI). "
    facts = {"above": above}
    if {"AlexNet", "MobileNet-V1"} <= set(table.index):
        a, m = table.loc["AlexNet"], table.loc["MobileNet-V1"]
        if a["a_over_w"] < 0.1:
            text += (f"For AlexNet $A/W$ = {w.number(a['a_over_w'], 2)}, so $AI_c$ ({w.number(a['ai_c'])}) is "
                     f"within {w.percent(1 - a['ai_c'] / a['weight_reuse'])} of its weight reuse $M_c/W$ "
                     f"({w.number(a['weight_reuse'])}): $AI_c$ sees the weights and hardly the activations. ")
        ratio = m["ai_c"] / a["ai_c"]
        if ratio > 1 + w.SAME:
            text += (f"MobileNet-V1's $AI_c$ is {w.times(ratio)} AlexNet's, so $AI_c$ ranks MobileNet-V1 the "
                     "better at reusing data, the opposite of the energy efficiency the authors measured "
                     "(AlexNet among the most efficient per MAC, MobileNet-V1 among the least). ")
            if a["di"] > m["di"]:
                text += (f"DI reverses the order: AlexNet's is {w.number(a['di'])}, MobileNet-V1's "
                         f"{w.number(m['di'])}, because AlexNet's huge activation reuse counts four times as "
                         "much as its weight reuse, and MobileNet-V1's small one pulls it down.")
                outcome = "reversed"
            else:
                text += (f"Here DI does not reverse the order (AlexNet {w.number(a['di'])}, MobileNet-V1 "
                         f"{w.number(m['di'])}).")
                outcome = "not reversed"
        else:
            text += (f"Here MobileNet-V1's $AI_c$ ({w.number(m['ai_c'])}) does not exceed AlexNet's "
                     f"({w.number(a['ai_c'])}), so $AI_c$ and DI do not disagree about this pair.")
            outcome = "no disagreement"
        facts.update(outcome=outcome, ai_c_ratio=ratio)
    return Prose(text.strip(), facts)


# --- the layers of a network on the live roofline -----------------------------------------

def _left(table, ridge) -> tuple:
    """(share of layers, share of FLOPs) left of ``ridge``."""
    left = table["intensity"] < ridge
    return left.mean(), table.loc[left, "flops"].sum() / table["flops"].sum()


def layers_on_roofline(layers: dict, roof, device: dict, references=()) -> Prose:
    """How many Conv/FC layers of each network sit left of this device's ridge (and their
    share of the FLOPs), the fully-connected and depthwise layers, and where the ridge of
    each reference GPU (``references``: measure_roofline runs) and of the GPUs in
    :mod:`brrr.specs` would put them. ``device``: ``Device.summary()`` of the live device."""
    from ..roofline import Roofline, has_spec_sheet
    from ..specs import GPU_SPECS
    spec = has_spec_sheet(device)
    name = device.get("name", "this device")
    if spec:
        text = f"On the spec-sheet roof of {name} the float32 ridge sits at {w.number(roof.ridge)} FLOP/byte."
    else:
        text = (f"On {name} the ridge of the measured roof sits at {w.number(roof.ridge)} FLOP/byte (a measured "
                "roof, not a hardware peak: the copy bandwidth and float32 matmul rate `brrr` measured once on "
                "this machine and cached).")
    facts = {"ridge": roof.ridge, "spec": spec}
    shares = []
    for net, table in layers.items():
        n_share, f_share = _left(table, roof.ridge)
        facts[f"{net} left"] = n_share
        if not shares:
            shares.append(f"{w.percent(n_share)} of {net}'s {len(table)} Conv and FC layers lie left of it "
                          f"(memory-bound, by the model), holding {w.percent(f_share)} of its FLOPs")
        else:
            shares.append(f"{w.percent(n_share)} of {net}'s {len(table)}, holding {w.percent(f_share)} of its FLOPs")
    text += " " + "; ".join(shares) + "."
    fc = [t.loc[t["kind"] == "fc", "intensity"] for t in layers.values()]
    fc = [x for s in fc for x in s]
    if fc:
        all_left = max(fc) < roof.ridge
        facts["fc_left"] = all_left
        text += (f" The fully-connected layers are all among them (at most {w.number(max(fc))} FLOP/byte): at "
                 "batch 1 a matrix-vector product uses every weight once." if all_left else
                 f" Not every fully-connected layer is left of it (they reach {w.number(max(fc))} FLOP/byte).")
    dw = [x for t in layers.values() for x in t.loc[t["kind"] == "depthwise", "intensity"]]
    if dw:
        text += (f" The depthwise layers sit between {w.number(min(dw))} and {w.number(max(dw))} FLOP/byte, "
                 "an intensity that does not depend on the device.")
    ref_roofs = []
    for run in references:
        try:
            ref_roofs.append((w.device_of(run), Roofline.of_run(run)))
        except ValueError:
            continue
    pw = {net: t.loc[t["kind"] == "pointwise", "intensity"] for net, t in layers.items()}
    pw = {net: s for net, s in pw.items() if len(s)}
    std = {net: t.loc[t["kind"] == "standard", "intensity"] for net, t in layers.items()}
    for ref_name, r in ref_roofs:
        part = f" On the reference {ref_name}, whose float32 ridge is at {w.number(r.ridge)} FLOP/byte"
        counts = []
        for net, s in pw.items():
            k = int((s < r.ridge).sum())
            counts.append(f"{k} of {net}'s {len(s)} pointwise layers")
            facts[f"{net} pointwise left of {ref_name}"] = k
        if counts:
            part += f", {_names(counts)} would sit left of the ridge, on the slope"
        part += "."
        text += part
    if not ref_roofs:
        text += " No reference GPU roof ships with this copy of `brrr` to compare with."
    fp32_ridges = {s.name: s.fp32 / s.bandwidth for s in GPU_SPECS.values()}
    top_gpu = max(fp32_ridges, key=fp32_ridges.get)
    for net, s in std.items():
        if len(s) and len(s) > len(layers[net]) / 2:
            lowest = s.min()
            if lowest > fp32_ridges[top_gpu]:
                text += (f" {net}'s standard convolutions, at {w.number(lowest)} FLOP/byte and more, stay right of "
                         "the float32 ridge of every GPU in the [device table](../book/device_table.ipynb) (the "
                         f"highest, the {top_gpu}'s, is {w.number(fp32_ridges[top_gpu])}).")
                facts[f"{net} right of every GPU"] = True
            else:
                k = sum(x < fp32_ridges[top_gpu] for x in s)
                text += (f" {k} of {net}'s {len(s)} standard convolutions sit left of the highest float32 ridge "
                         f"in the device table (the {top_gpu}'s, {w.number(fp32_ridges[top_gpu])} FLOP/byte).")
                facts[f"{net} right of every GPU"] = False
    return Prose(text, facts)


# --- the one measurement: four convolutions ----------------------------------------------------

def conv_facts(result) -> dict:
    """Per kind: share of the roof reached, whether the model calls it memory-bound, seconds,
    MACs; and the device, its cache and whether its roof is a spec sheet."""
    from ..roofline import has_spec_sheet
    meta = result.meta
    dev = meta.get("device") or {}
    roof = meta.get("roof") or {}
    peak = roof.get("peak_flops") or max(r["attainable_flops"] for r in result.records)
    kinds = {}
    for r in result.records:
        kinds[r["kind"]] = {"share": r["achieved_flops"] / r["attainable_flops"],
                            "memory_bound": r["attainable_flops"] < peak * (1 - 1e-9),
                            "seconds": r["seconds"], "macs": r["macs"], "nbytes": r["nbytes"],
                            "roofline_seconds": r["roofline_seconds"], "warnings": r.get("warnings", [])}
    return {"kinds": kinds, "device": dev.get("name", "this device"), "cpu": dev.get("backend") == "cpu",
            "spec": has_spec_sheet(dev), "cache": meta.get("cache_bytes") or dev.get("l2_bytes") or 0}


def _above_roof(f: dict, kind: str) -> str:
    k = f["kinds"][kind]
    text = f"The {kind} convolution measured {w.times(k['share'])} what its roof allows. "
    fits = f["cache"] and k["nbytes"] < f["cache"]
    if k["memory_bound"]:
        if not f["spec"]:
            text += ("The measured roof's bandwidth is one NumPy copy (a single thread), while PyTorch reads with "
                     "every core")
        else:
            text += "Its bytes arrived faster than the spec-sheet DRAM bandwidth"
        if fits:
            text += (f"; and its {w.size(k['nbytes'])} fit in the {w.size(f['cache'])} cache, so part of the "
                     "traffic can come from cache despite the flush before each sample")
        return text + "."
    if not f["spec"]:
        return text + ("The measured roof's FLOP/s is the best NumPy (BLAS) matmul, measured once and cached; "
                       "PyTorch's convolution kernels ran faster than that, so the measured roof understates this "
                       "machine for convolutions.")
    return text + ("A point above a spec-sheet compute roof means the GPU ran above the clock the spec assumes, "
                   "or the FLOP count credits the layer with work it did not do.")


def _kind_list(f: dict) -> str:
    """'the standard convolution reached 25%, the pointwise one 13% and ...'."""
    parts = [f"the {kind} {'convolution reached' if i == 0 else 'one'} {w.percent(k['share'])}"
             for i, (kind, k) in enumerate(f["kinds"].items())]
    return _names(parts)


def conv_measurements(result, references=()) -> Prose:
    """What the four convolutions of Table III reached against the roof, points above it,
    whether the depthwise layer's saving in MACs became a saving in time, noisy timings,
    and the same for each reference GPU run."""
    f = conv_facts(result)
    kinds = f["kinds"]
    roof_kind = "spec-sheet roof" if f["spec"] else "measured roof"
    text = (f"On {f['device']}, against its {roof_kind}, {_kind_list(f)} of the throughput the roofline allows "
            "at its intensity.")
    bound = {kind: ("memory-bound" if k["memory_bound"] else "compute-bound") for kind, k in kinds.items()}
    mem = [kind for kind, b in bound.items() if b == "memory-bound"]
    if mem and len(mem) < len(kinds):
        text += (f" By the model, the {_names(mem)} convolution{' is' if len(mem) == 1 else 's are'} "
                 "memory-bound here and the rest compute-bound.")
    elif mem:
        text += " By the model, all of them are memory-bound here."
    else:
        text += " By the model, all of them are compute-bound here."
    above = [kind for kind, k in kinds.items() if k["share"] > ABOVE_ROOF]
    facts = {"shares": {kind: k["share"] for kind, k in kinds.items()}, "above_roof": above, "bound": bound}
    for kind in above:
        text += " " + _above_roof(f, kind)
    times = [k["seconds"] for k in kinds.values()]
    model = [k["roofline_seconds"] for k in kinds.values()]
    flat = max(times) / min(times) < FLAT_TIMES and max(model) / min(model) > MODEL_SPREAD
    facts["flat"] = flat
    if flat:
        text += (f"\n\nAll {len(kinds)} took between {w.seconds(min(times))} and {w.seconds(max(times))} per call, "
                 f"although by the roofline the slowest should take {w.times(max(model) / min(model))} as long as "
                 "the fastest: "
                 "here the time of a call was set by a fixed cost larger than the layer's work, not by the work. ")
        if f["cpu"]:
            text += ("On a CPU shared with other programs, each timed call can wait tens of milliseconds "
                     "for PyTorch's worker threads to get a core back after the cache flush "
                     "that precedes it. These shares of the roof therefore say little about the layers; on a "
                     "quiet machine the four times should spread out as their work does.")
        else:
            text += ("A fixed cost per call (launch, synchronisation) outweighs work this small; these shares "
                     "of the roof say little about the layers.")
    elif "standard" in kinds and "depthwise" in kinds:
        s, d = kinds["standard"], kinds["depthwise"]
        macs, time = d["macs"] / s["macs"], d["seconds"] / s["seconds"]
        model = d["roofline_seconds"] / s["roofline_seconds"]
        facts.update(macs_ratio=macs, time_ratio=time, model_time_ratio=model)
        text += (f"\n\nThe depthwise layer does {w.percent(macs)} of the standard one's MACs and took "
                 f"{w.percent(time)} of its time")
        if time > 2 * macs:
            facts["saving"] = "smaller"
            text += ": the saving in arithmetic did not turn into the same saving in time."
            if model > 2 * macs:
                text += (f" Part of that is the roofline itself: it expects {w.percent(model)}, because the "
                         "depthwise layer's time follows its bytes, not its MACs.")
            if d["share"] < s["share"]:
                text += (f" The rest is how close each gets to its roof: the depthwise layer reached "
                         f"{w.percent(d['share'])} of its roof, the standard one {w.percent(s['share'])}, a sign "
                         "that libraries optimise dense convolutions better than depthwise ones. Low reuse "
                         "costs twice: more bytes per MAC, and kernels that get less of the machine, the "
                         "behaviour the paper blames for MobileNet's energy cost (Jha, Mittal & Avancha, 2020).")
            else:
                text += (f" The depthwise layer still reached a larger share of its roof than the standard one "
                         f"({w.percent(d['share'])} against {w.percent(s['share'])}).")
        else:
            facts["saving"] = "comparable"
            text += ": here the saving in arithmetic did turn into a comparable saving in time."
    noisy = [kind for kind, k in kinds.items() if any(str(x).startswith("noisy") for x in k["warnings"])]
    facts["noisy"] = noisy
    if noisy:
        which = "all of these timings were" if len(noisy) == len(kinds) else \
            f"the timings of the {_names(noisy)} convolution{'s were' if len(noisy) > 1 else ' was'}"
        text += (f" `brrr.bench` warned that {which} noisy (their samples spread widely, a sign of other work "
                 "on the machine), so read the order of magnitude, not the digits.")
    return with_references(Prose(text, facts), references, "these four convolutions", _reference_convs)


def _reference_convs(run) -> Prose:
    r = conv_facts(run)
    t = (f"{w.reference_intro(run)}, against its {'spec-sheet' if r['spec'] else 'measured'} roof, "
         f"{_kind_list(r)}.")
    rk = r["kinds"]
    if "standard" in rk and "depthwise" in rk:
        t += (f" Its depthwise layer took {w.percent(rk['depthwise']['seconds'] / rk['standard']['seconds'])} "
              "of the standard one's time.")
    ref_above = [kind for kind, k in rk.items() if k["share"] > ABOVE_ROOF]
    for kind in ref_above:
        t += " " + _above_roof(r, kind)
    return Prose(t, {f"reference {w.device_of(run)}": {k: v["share"] for k, v in rk.items()}})
