"""Chapter 6: Tables III and VIII of Jha, Mittal & Avancha (2020) recomputed from :mod:`brrr.models`
(computed, not measured); the sentences are chosen by the numbers, so a changed count cannot leave
one behind.
"""
from __future__ import annotations

import math

from . import Prose
from . import words as w

CLOSE = 3.0          # per cent beyond the paper's rounding: "within 3%"
NEAR = 10.0          # per cent: "within 10%"; more is "differs"
NAMES = {"weight_reuse": "$M_c/W$", "activation_reuse": "$M_c/A$", "ai_c": "$AI_c$", "di": "DI",
         "a_over_w": "$A/W$", "d_f": "$d_f$"}


def _fraction(value: float) -> str:
    """1/256 for a ratio that is one over a whole number, else the number."""
    inverse = 1 / value
    if abs(inverse - round(inverse)) < 1e-9 * inverse:
        return f"1/{round(inverse)}"
    return w.number(value)


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
                f"prints: {w.listing(wrong)}.")
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


def _row_story(name: str, row) -> dict:
    """Per column of one network's row: agreement with the paper, signed per cent."""
    from ..intensity import MAIN_COLUMNS, TABLE_VIII_DIGITS
    return {c: _agreement(row[c], row[f"{c} (paper)"], TABLE_VIII_DIGITS[c]) for c in MAIN_COLUMNS}


def _differences(story: dict) -> str:
    """'$M_c/A$ 3.6% lower and DI 2.4% lower than the paper's' for the columns beyond rounding."""
    parts = [f"{NAMES[c]} {w.percent(abs(pct) / 100)} {'higher' if pct > 0 else 'lower'}"
             for c, (o, pct) in story.items() if o != "rounding"]
    return w.listing(parts) + " than the paper's" if parts else ""


def _note(name: str, row, story: dict) -> str:
    """What is known of the model behind a network's row (the differences are chosen by the numbers)."""
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
                    f"parameters, the published figures; the paper's $M_c/W$ of "
                    f"{w.number(row['weight_reuse (paper)'])} implies about {w.number(implied / 1e6)} M MACs for the "
                    "same parameters.")
        return ""
    return ""


def _paper_d_f() -> tuple:
    """(sentence, rows reproduced): whether the paper's d_f follows from its own printed AI_c and DI."""
    from ..intensity_paper import PAPER_TABLE_VIII, TABLE_VIII_COLUMNS, disparity
    ai, di, df = (TABLE_VIII_COLUMNS.index(c) for c in ("ai_c", "di", "d_f"))
    rows = {name: (r[ai], r[di], r[df], disparity(r[ai], r[di])) for name, r in PAPER_TABLE_VIII.items()}
    good = [n for n, (_, _, printed, got) in rows.items() if abs(got - printed) <= 0.5]
    a, d, printed, got = rows["AlexNet"]
    text = (f"Computed from the paper's own printed $AI_c$ and DI, $d_f$ = (AI_c − DI)/AI_c reproduces its $d_f$ "
            f"column to its rounding for " + (f"every one of its {len(rows)} rows" if len(good) == len(rows) else
                                              f"{len(good)} of its {len(rows)} rows") + f" (AlexNet: ({w.number(a)} − {w.number(d)})/{w.number(a)} = "
            f"{w.number(got, 4)}%, printed {printed}%)")
    missed = [n for n in rows if n not in good]
    text += (": the paper computed the column from its rounded values, so our $d_f$, from unrounded ones, need "
             "not match it." if not missed else f"; not for {w.listing(missed)}.")
    return text, len(good)


def table_viii(table) -> Prose:
    """How close each network of ``intensity.compare_with_paper()`` comes to Table VIII, and the d_f column."""
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
            line = f"**{name}** agrees with the paper on every column compared ($d_f$ is not), to the paper's rounding"
        else:
            agree = [NAMES[c] for c, (o, _) in story.items() if o == "rounding"]
            line = f"**{name}**: {_differences(story)}"
            if agree:
                line += f"; {w.listing(agree)} agree{'s' if len(agree) == 1 else ''} to the paper's rounding"
        note = _note(name, row, story)
        bullets.append(f"- {line}" + (f"; {note}" if note else "."))
    n = len(table)
    said = {"rounding": ("agrees", "agree", "with the paper to its rounding on every column compared, $d_f$ aside"),
            "close": ("comes", "come", f"within {w.number(CLOSE)}% of it beyond its rounding"),
            "near": ("", "", f"within {w.number(NEAR)}%"), "far": ("differs", "differ", "by more")}
    counts = [f"{len(names)} {' '.join(filter(None, (said[g][len(names) > 1], said[g][2])))} ({w.listing(names)})"
              for g, names in groups.items() if names]
    text = f"Of the {n} networks, {w.listing(counts)}. Network by network:"
    tail, reproduced = _paper_d_f()
    facts = {"groups": groups, "worst": worst["largest difference (%)"].to_dict(), "paper_d_f_reproduced": reproduced}
    return Prose(text + "\n\n" + "\n".join(bullets) + "\n\n" + tail, facts)


def reuse(table) -> Prose:
    """The networks with the most and least activation reuse, and whether the paper ranks them alike."""
    order = table.sort_values("activation_reuse", ascending=False)
    top, bottom = order.head(2), order.tail(3).iloc[::-1]
    hi = [f"{n} ({w.number(r['activation_reuse'])} MACs per activation, $A/W$ = {w.number(r['a_over_w'], 2)})"
          for n, r in top.iterrows()]
    text = f"By activation reuse, {w.listing(hi)} sit highest"
    text += (": their activations are used hundreds of times." if (top["activation_reuse"] >= 100).all() else ".")
    if (top["a_over_w"] < 1).all():
        text += (" Most of their data are weights ($A/W$ below 1), but $M_c/A$ does not depend on $W$: the "
                 "weights explain their low $A/W$, not their high activation reuse.")
    lo = [f"{n} ({w.number(r['activation_reuse'])})" for n, r in bottom.iterrows()]
    text += f" Lowest: {w.listing(lo)}"
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
        text += (f" The paper's values (hollow) rank them a little differently: {w.listing(moved)} swap places, "
                 "among networks whose activation reuse is close.")
    return Prose(text, {"top": list(top.index), "bottom": list(bottom.index), "same_order": ours == theirs})


def ai_c_vs_di(table) -> Prose:
    """Where AI_c and DI disagree (the right panel): which networks sit above DI = AI_c, why
    AlexNet's AI_c is its weight reuse, and whether DI reverses AlexNet and MobileNet-V1."""
    above = [n for n, r in table.iterrows() if r["di"] > r["ai_c"]]
    below = [n for n in table.index if n not in above]
    text = ""
    if above:
        text += (f"{w.listing(above)} sit{'s' if len(above) == 1 else ''} above the dashed line (DI > $AI_c$), "
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
