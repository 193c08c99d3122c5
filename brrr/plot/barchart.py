"""Horizontal bars, one per record, each with its value at its end; reference runs beneath.
On a log axis, dots instead of bars: a bar's length from an arbitrary left edge means nothing there."""
from __future__ import annotations

import math

import numpy as np

from ..units import format_seconds
from ._base import (LABELS, REFERENCE_COLOR, REFERENCE_MARKERS, device_title, reference_label, _frame,
                    _is_reference, _live_label, _log_axis, _new_axes, _references, _seconds_axis, _style, _styled)


def value_texts(values) -> list:
    """The numbers written beside the bars, all with the same number of decimals ('2.0', '16.0',
    '8.0'), enough for the smallest to show two significant figures; three significant figures
    each where the values span more than a thousandfold."""
    values = [float(v) for v in values]
    sizes = [abs(v) for v in values if v and math.isfinite(v)]
    if not sizes:
        return [f"{v:,.3g}" for v in values]
    low, high = min(sizes), max(sizes)
    if high / low > 1000:
        return [f"{v:,.3g}" for v in values]
    decimals = min(max(0, 1 - math.floor(math.log10(low))), 4)
    return [f"{v:,.{decimals}f}" for v in values]


@_styled
def bars(data, label, value, ax=None, xlabel=None, title=None, log=None, color=None, reference=None):
    """Horizontal bars of column ``value``, one per record, named by column ``label``.

    Each bar carries its value at its end (seconds get us/ms/s; other numbers one
    number of decimals for all, :func:`value_texts`). ``log=None`` picks a log axis
    when the values span more than 20x; on a log axis each value is a dot on a
    faint guide line (a Cleveland dot plot), since a bar's length from the axis's
    arbitrary left edge would misstate the ratios. For a handful of quantities side by side: Python
    operations per second, 'returned' vs 'finished', eager vs CUDA graph.
    ``reference`` runs add, under each live bar, a grey bar for the same label
    from each reference device (and their labels that the live run lacks, last);
    the legend says which device each colour is.
    """
    import matplotlib.patches as mpatches
    frame = _frame(data)
    refs = _references(reference)
    for name, col in (("label", label), ("value", value)):
        if col not in frame:
            raise ValueError(f"{name}={col!r} is not a column; the data has {list(frame.columns)}")
    ref_rows = []
    for j, run in enumerate(refs):
        f = _frame(run)
        if label in f and value in f:
            ref_rows += [(j, str(k), float(v)) for k, v in zip(f[label], f[value])]
    rows = []   # (name, value, reference index or None)
    live = [(str(k), float(v)) for k, v in zip(frame[label], frame[value])]
    for name, v in live:
        rows.append((name, v, None))
        rows += [(name, rv, j) for j, rname, rv in ref_rows if rname == name]
    rows += [(rname, rv, j) for j, rname, rv in ref_rows if rname not in {n for n, _ in live}]
    values = np.array([v for _, v, _ in rows], dtype=float)
    if len(values) == 0:
        raise ValueError("bars() needs at least one record")
    if log is None:
        positive = values[values > 0]
        log = len(positive) == len(values) and positive.max() > 20 * positive.min()
    own_figure = ax is None
    fig, ax = _new_axes(ax, figsize=(6.4, 0.5 + 0.45 * len(values) + (0.3 * (1 + len(refs)) if refs else 0)))
    ref_data = _is_reference(data)
    if color is not None:
        colors = color
    elif refs:
        colors = [REFERENCE_COLOR if j is not None else "C0" for _, _, j in rows]
    else:
        colors = [REFERENCE_COLOR if ref_data else f"C{i % 10}" for i in range(len(values))]
    hatches = ["//" if j is not None else "" for _, _, j in rows]
    if log:   # dots on guide lines: on a log axis only the position of a value means anything
        for i, (v, c, (_, _, j)) in enumerate(zip(values, colors, rows)):
            ax.axhline(i, color="0.88", linewidth=0.8, zorder=0)
            ax.plot([v], [i], linestyle="none", markersize=7, color=c, zorder=3,
                    marker="o" if j is None else REFERENCE_MARKERS[(j + 1) % len(REFERENCE_MARKERS)],
                    markerfacecolor=c if j is None else "none")
        ax.set_xscale("log")
        ax.set_xlim(values.min() / 2, values.max() * 2)
        ax.set_ylim(len(values) - 0.5, -0.5)
    else:
        ax.barh(range(len(values)), values, color=colors, height=0.6, hatch=hatches if refs else None,
                edgecolor="white" if refs else None)
        ax.invert_yaxis()
    ax.set_yticks(range(len(values)), [n for n, _, _ in rows])
    if value == "seconds" or value.endswith("seconds") or value.startswith("time"):
        _seconds_axis(ax.xaxis)
        text = [format_seconds(v) for v in values]
    else:
        text = value_texts(values)
        if log:
            _log_axis(ax.xaxis)
    for i, (v, t) in enumerate(zip(values, text)):
        ax.annotate(t, (v, i), xytext=(6 if log else 3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set_xlim(right=ax.get_xlim()[1] * (3 if log else 1.15))
    ax.set_xlabel(xlabel or LABELS.get(value, value))
    ax.set_title(title or device_title(getattr(data, "name", "") or value, data))
    if refs and log:
        from matplotlib.lines import Line2D
        handles = [Line2D([], [], marker="o", linestyle="none", color="C0", label=_live_label(data))]
        handles += [Line2D([], [], marker=REFERENCE_MARKERS[(j + 1) % len(REFERENCE_MARKERS)], linestyle="none",
                           color=REFERENCE_COLOR, markerfacecolor="none", label=reference_label(run))
                    for j, run in enumerate(refs)]
    elif refs:
        handles = [mpatches.Patch(color="C0", label=_live_label(data))]
        handles += [mpatches.Patch(facecolor=REFERENCE_COLOR, hatch="//", edgecolor="white",
                                   label=reference_label(run)) for run in refs]
    if refs:
        if own_figure:
            fig.legend(handles=handles, frameon=False, fontsize=7, loc="outside lower left")
        else:
            ax.legend(handles=handles, frameon=False, fontsize=7, loc="best")
    ax.grid(False, axis="y")
    _style(ax)
    return fig
