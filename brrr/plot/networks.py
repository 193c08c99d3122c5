"""Chapter 6's measured figure: whole networks timed, placed at AI_c and DI as the paper's Fig. 3
places them, against what the byte-counted roofline predicts, and one network's time by kind of layer.

Data in: the records of ``brrr.intensity_predict.measure_networks`` (network, ai_c, di,
achieved_flops, seconds and the predicted ``*_seconds``) and of ``measure_layer_kinds``
(network, kind, flops, seconds, roofline_seconds). Nothing here measures or counts.
"""
from __future__ import annotations

from ._base import (REFERENCE_COLOR, _frame, _meta, _references, _style, _styled, device_title,
                    reference_label)

#: Predictions drawn in the middle panel: column, legend text, marker.
PREDICTED = (("ai_c_seconds", "one kernel at AIc", "o"), ("conv_fc_seconds", "Conv + FC layers, each on the roof", "^"),
             ("all_layers_seconds", "every layer, each on the roof", "D"))


def _roof(result):
    from ..roofline import Roofline
    roof = _meta(result).get("roof")
    return Roofline.from_dict(roof) if roof else None


def _plain_log(axis):
    """Tick labels of a log axis as plain numbers (10, 100, 2): every decade, and 2, 3 and 5 times it."""
    import math
    from matplotlib.ticker import FuncFormatter

    def minor(v, _):
        mantissa = round(v / 10 ** math.floor(math.log10(v)), 6) if v > 0 else 0
        return f"{v:g}" if mantissa in (2, 3, 5) else ""
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(minor))


def _throughput_panel(ax, frame, roof, refs, itemsize=4):
    """Achieved GFLOP/s against intensity in MACs per element: AI_c filled, DI hollow, one
    colour per network, joined; the roofline in the same units."""
    import numpy as np
    for i, row in enumerate(frame.itertuples()):
        color = f"C{i % 10}"
        y = row.achieved_flops / 1e9
        ax.plot([row.ai_c, row.di], [y, y], color=color, lw=0.8, alpha=0.6)
        ax.scatter(row.ai_c, y, color=color, s=40, zorder=3, label=row.network)
        ax.scatter(row.di, y, facecolor="white", edgecolor=color, marker="s", s=40, zorder=3)
    for j, run in enumerate(refs):
        rf = _frame(run)
        ax.scatter(rf["ai_c"], rf["achieved_flops"] / 1e9, color=REFERENCE_COLOR, s=20, marker="x",
                   label=reference_label(run) if j == 0 else None)
    lo = min(frame["ai_c"].min(), frame["di"].min()) / 2
    hi = max(frame["ai_c"].max(), frame["di"].max()) * 2
    if roof is not None:
        xs = np.geomspace(lo, hi, 200)
        ax.plot(xs, np.asarray(roof.attainable(2 * xs / itemsize)) / 1e9, color="0.15", lw=1.2,
                label="roofline (FLOP/byte = 2 x MACs per element / 4)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("intensity (MACs per element): AIc filled, DI hollow")
    ax.set_ylabel("achieved throughput (GFLOP/s), measured")
    ax.set_title("Measured throughput against AIc and DI")
    _plain_log(ax.yaxis)
    ax.legend(frameon=False, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3)
    _style(ax)


def _ratio_panel(ax, frame):
    """Measured time / predicted time per network, one marker per prediction; 1 = exact."""
    import numpy as np
    x = np.arange(len(frame))
    for k, (col, words, marker) in enumerate(PREDICTED):
        ax.scatter(x + (k - 1) * 0.15, frame["seconds"] / frame[col], marker=marker, s=30, zorder=3,
                   color=f"C{k}", label=words)
    ax.axhline(1, color="0.3", lw=0.9, ls="--")
    ax.set_yscale("log")
    ax.set_xticks(x, list(frame["network"]), rotation=40, ha="right")
    ax.set_ylabel("measured time / predicted time")
    ax.set_title("How far each prediction is from the measured time")
    _plain_log(ax.yaxis)
    ax.legend(frameon=False, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2)
    _style(ax)


def _kinds_panel(ax, kinds):
    """Per kind of layer of each profiled network: share of FLOPs and share of measured time."""
    import numpy as np
    kf = _frame(kinds)
    labels, flops, times = [], [], []
    for net, part in kf.groupby("network", sort=False):
        for row in part.itertuples():
            labels.append(row.kind if kf["network"].nunique() == 1 else f"{net}: {row.kind}")
            flops.append(row.flops / part["flops"].sum())
            times.append(row.seconds / part["seconds"].sum())
    y = np.arange(len(labels))
    ax.barh(y - 0.2, flops, height=0.4, color="C0", label="share of FLOPs (counted)")
    ax.barh(y + 0.2, times, height=0.4, color="C1", label="share of time (measured)")
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of the network's total")
    nets = list(dict.fromkeys(kf["network"]))
    ax.set_title(f"Where {nets[0] if len(nets) == 1 else 'the time'} goes, by kind of layer")
    ax.legend(frameon=False, fontsize=7, loc="lower right")
    _style(ax)


@_styled
def network_predictions(result, kinds=None, reference=None, axes=None, title=None):
    """Up to three panels. Left: each network's measured throughput at its AI_c (filled) and
    its DI (hollow), under the live roofline drawn in MACs per element, as the paper's Fig. 3
    places networks (at DI the roof bounds nothing: DI is not a count of bytes). Middle: measured
    time / predicted time for the byte-counted predictions (:data:`PREDICTED`). Right (when ``kinds`` is given): for each profiled network, each kind
    of layer's share of the FLOPs and of the measured time. ``reference`` runs (shipped GPU
    runs of the same experiment) add grey crosses to the left panel; None draws none."""
    import matplotlib.pyplot as plt
    frame = _frame(result)
    if not len(frame):
        raise ValueError("result has no records to draw")
    refs = _references(reference)
    n = 3 if kinds is not None else 2
    if axes is None:   # two panels side by side; the third, when drawn, below them (readable on a page)
        layout = [["left", "middle"], ["right", "right"]] if n == 3 else [["left", "middle"]]
        fig, named = plt.subplot_mosaic(layout, figsize=(10.4, 10.0 if n == 3 else 5.4), layout="constrained",
                                        height_ratios=[1.3, 1] if n == 3 else None)
        axes = [named[k] for k in ("left", "middle", "right")[:n]]
    else:
        fig = axes[0].figure
    if len(axes) != n:
        raise ValueError(f"axes must hold {n} matplotlib axes, got {len(axes)}")
    _throughput_panel(axes[0], frame, _roof(result), refs)
    _ratio_panel(axes[1], frame)
    if kinds is not None:
        _kinds_panel(axes[2], kinds)
    fig.suptitle(title or device_title("Networks at batch 1, float32: predicted and measured", result))
    return fig
