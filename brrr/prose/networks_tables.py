"""Chapter 6: Table V, the added rows of Table VIII and Sec. I's ranges of the DI paper, recomputed."""
from __future__ import annotations

from . import Prose
from . import words as w
from .networks_paper import NAMES

TABLE_V_CLOSE = 1.0   # per cent: a median or variance this close to the printed one "matches"
TABLE_V_NEAR = 5.0    # per cent: "close"; more is "differs"


def _grade(pct: float) -> str:
    return "match" if abs(pct) <= TABLE_V_CLOSE else "close" if abs(pct) <= TABLE_V_NEAR else "differs"


def table_v(table, other=None) -> Prose:
    """How well :func:`brrr.intensity_tables.table_v_beside_paper` reproduces Table V, what ``other``
    (ifmap + ofmap) would give, and whether the paper's argument from the medians survives."""
    grades = {n: max((_grade(r["median difference (%)"]), _grade(r["variance difference (%)"])),
                     key=("match", "close", "differs").index) for n, r in table.iterrows()}
    match = [n for n, g in grades.items() if g == "match"]
    close = [n for n, g in grades.items() if g == "close"]
    differ = [n for n, g in grades.items() if g == "differs"]
    parts = []
    if match:
        parts.append(f"{len(match)} of the {len(table)} rows match the paper's median and variance within "
                     f"{w.number(TABLE_V_CLOSE)}% ({w.listing(match)})")
    if close:
        parts.append(f"{w.listing(close)} within {w.number(TABLE_V_NEAR)}%")
    if differ:
        parts.append(f"{w.listing(differ)} {'differs' if len(differ) == 1 else 'differ'} by more")
    text = (f"Counting a layer's activations as its *output* feature map alone, {w.listing(parts)}. "
            if parts else "")
    if match and len(match) >= len(table) / 2:
        text += ("So Table V, unlike Table II, charges each layer for what it writes, not for what it reads and "
                 "writes: the same choice as Table VIII's blobs, where every tensor is counted once, as the "
                 "output of the layer that made it. ")
    if other is not None:
        lower = (other["median"] / table["median"]).median()
        text += (f"Counting ifmap + ofmap instead puts the medians at {w.percent(lower)} of these (the median "
                 "network), far from the printed ones. ")
    if "MobileNet-V2" in differ:
        text += "MobileNet-V2 differs here as it does in Table VIII. "
    facts = {"grades": grades}
    high = [n for n in ("AlexNet", "VGG-16", "NiN", "SqueezeNet-V1.0") if n in table.index]
    if len(high) == 4:
        order = table.loc[high, "median"].sort_values()
        facts["lowest"], facts["highest"] = order.index[0], order.index[-1]
        group = f"the four networks the paper groups as having higher data reuse ({w.listing(high)})"
        if order.index[0] == "NiN" and order.index[-1] == "VGG-16":
            text += (f"The paper's argument survives the recount: among {group}, VGG-16 has the highest median "
                     "layer intensity and NiN the lowest, yet the authors measured NiN as the most energy-efficient "
                     "of these four and VGG-16 as the least, so a layer-wise median does not predict energy "
                     "efficiency.")
        else:
            text += (f"Recounted, the highest median among {group} is {order.index[-1]}'s and the lowest "
                     f"{order.index[0]}'s, not VGG-16's and NiN's as in the paper, so its argument from "
                     "Table V needs restating.")
    return Prose(text.strip(), facts)


def added_networks(table) -> Prose:
    """How close each of :func:`brrr.intensity_tables.added_networks` comes to its Table VIII row."""
    within, outside, lines = [], [], []
    for name, r in table.iterrows():
        pct = r["largest difference (%)"]
        (within if pct <= r["tolerance (%)"] else outside).append(name)
        if pct == 0:
            line = f"**{name}** agrees with the paper on every column but $d_f$, to its rounding"
        else:
            line = (f"**{name}**: at most {w.percent(pct / 100)} from the paper beyond its rounding "
                    f"(in {NAMES[r['column']]})")
        if pct > 3:
            implied_w, implied_m = r["implied weights"] / r["weights"], r["implied macs"] / r["macs"]
            line += (f"; with our activation count, the paper's row implies {w.percent(implied_w)} of our "
                     f"{w.number(r['weights'] / 1e6)} M weights and {w.percent(implied_m)} of our "
                     f"{w.number(r['macs'] / 1e9)} G MACs")
        lines.append(f"- {line}.")
    tol = table["tolerance (%)"]
    span = (f"{w.number(tol.min())}%" if tol.min() == tol.max() else
            f"{w.number(tol.min())}% to {w.number(tol.max())}%, set per network")
    text = (f"{len(within)} of the {len(table)} added networks differ from their row of Table VIII by no more than "
            f"the tolerance ({span}) the book's tests hold them to"
            + (f"; {w.listing(outside)} {'does' if len(outside) == 1 else 'do'} not." if outside else ".")
            + " Network by network:\n\n" + "\n".join(lines))
    dense = [n for n in table.index if n.startswith("DenseNet")]
    if dense and all(abs(table.loc[n, "implied macs"] / table.loc[n, "macs"] - 1) < 0.02 for n in dense):
        text += ("\n\nFor the DenseNets the paper's activation reuse $M_c/A$ agrees with ours, so the same "
                 "activations imply the same MACs; the difference is in the weights, of which the paper's row "
                 "implies fewer than the published network has. The paper does not say why.")
    return Prose(text, {"within": within, "outside": outside})


def ranges(vgg) -> Prose:
    """Whether the ranges of the paper's Sec. I are swapped, from VGG-16's counts (its ModelIntensity)."""
    from ..intensity_paper import PAPER_RANGES_AS_PRINTED as printed
    macs_m, weights_m = vgg.macs / 1e6, vgg.weights / 1e6
    top_w, top_m = printed["weights_millions"][1], printed["macs_millions"][1]
    swapped = abs(macs_m - top_w) / top_w < 0.01 and abs(weights_m - top_m) / top_m < 0.01
    text = (f"The paper's introduction describes its networks as having \"between {w.number(printed['weights_millions'][0])} "
            f"to {w.number(top_w)} million weights and between {w.number(printed['macs_millions'][0])} to "
            f"{w.number(top_m)} million MACs\". VGG-16, the largest of them, has {w.number(weights_m)} million "
            f"weights and {w.number(macs_m)} million MACs by our count")
    text += (": the two ranges are swapped, and read the other way round they describe the networks of Table "
             "VIII." if swapped else ", which matches neither end as printed.")
    return Prose(text, {"swapped": swapped})
