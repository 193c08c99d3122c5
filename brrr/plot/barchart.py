"""Horizontal bars, one per record, each with its value at its end; reference runs beneath."""
from __future__ import annotations

import numpy as np

from ..units import format_seconds
from ._base import (LABELS, REFERENCE_COLOR, device_title, reference_label, _frame, _is_reference,
                    _live_label, _new_axes, _references, _seconds_axis, _style, _styled)


@_styled
def bars(data, label, value, ax=None, xlabel=None, title=None, log=None, color=None, reference=None):
    """Horizontal bars of column ``value``, one per record, named by column ``label``.

    Each bar carries its value at its end (seconds get us/ms/s, FLOP/s and other
    numbers three significant figures). ``log=None`` picks a log axis when the
    values span more than 20x. For a handful of quantities side by side: Python
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
    ax.barh(range(len(values)), values, color=colors, height=0.6, hatch=hatches if refs else None,
            edgecolor="white" if refs else None)
    ax.set_yticks(range(len(values)), [n for n, _, _ in rows])
    ax.invert_yaxis()
    if log:
        ax.set_xscale("log")
    if value == "seconds" or value.endswith("seconds") or value.startswith("time"):
        _seconds_axis(ax.xaxis)
        text = [format_seconds(v) for v in values]
    else:
        text = [f"{v:.3g}" for v in values]
    for i, (v, t) in enumerate(zip(values, text)):
        ax.annotate(t, (v, i), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set_xlim(right=ax.get_xlim()[1] * (3 if log else 1.15))
    ax.set_xlabel(xlabel or LABELS.get(value, value))
    ax.set_title(title or device_title(getattr(data, "name", "") or value, data))
    if refs:
        handles = [mpatches.Patch(color="C0", label=_live_label(data))]
        handles += [mpatches.Patch(facecolor=REFERENCE_COLOR, hatch="//", edgecolor="white",
                                   label=reference_label(run)) for run in refs]
        if own_figure:
            fig.legend(handles=handles, frameon=False, fontsize=7, loc="outside lower left")
        else:
            ax.legend(handles=handles, frameon=False, fontsize=7, loc="best")
    ax.grid(False, axis="y")
    _style(ax)
    return fig
