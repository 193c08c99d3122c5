"""Chapter 8's figure: the capstone's steps side by side, time per token and MFU per step."""
from __future__ import annotations

import math

from ..mfu import mfu, mfu_peak
from ..units import format_seconds
from ._base import (REFERENCE_COLOR, _frame, _live_label, _new_axes, _percent_axis, _references,
                    _seconds_axis, _style, _styled, device_title, reference_label)


def _mfu(data, r):
    """``r``'s MFU against the run's one peak (:func:`brrr.mfu.mfu`), or None."""
    if hasattr(data, "records") and hasattr(data, "meta"):
        return mfu(data, r)
    return r.get("mfu")


def _peak_name(data) -> str:
    if hasattr(data, "records") and hasattr(data, "meta"):
        return mfu_peak(data)["name"]
    return "the peak"


def _rows(data) -> dict:
    """{step: (label, seconds per token or None, mfu or None, undone)} in the run's order."""
    out = {}
    records = data.records if hasattr(data, "records") else _frame(data).to_dict("records")
    for r in records:
        skipped = r.get("skipped")
        skipped = isinstance(skipped, str) and bool(skipped)
        undone = not skipped and r.get("kept") is False
        out[r["step"]] = (r["label"] + (" (undone)" if undone else ""),
                          None if skipped else float(r["seconds_per_token"]),
                          None if skipped or _mfu(data, r) is None else float(_mfu(data, r)), undone)
    return out


def _model(run) -> str:
    return str((getattr(run, "meta", {}) or {}).get("model", ""))


@_styled
def capstone_steps(data, reference=None):
    """Two panels, one bar per step of :func:`brrr.experiments.capstone.run_steps`: time per token
    (left, log axis, seconds) and MFU (right, percent of the run's one peak,
    :func:`brrr.experiments.capstone.mfu_peak`; a step whose dtype that peak does not bound has none).

    A step that did not run is marked 'skipped'; a step whose change was undone (it made the model
    slower) is drawn pale and labelled so. ``reference`` runs of the same steps (from
    :func:`brrr.reference.beside`) add a grey, hatched bar under each live bar. Returns the Figure.
    """
    import matplotlib.patches as mpatches
    live = _rows(data)
    refs = [(_rows(run), run) for run in _references(reference)]
    order = list(live) + [k for rows, _ in refs for k in rows if k not in live]
    labels = {k: v[0] for rows, _ in refs for k, v in rows.items()}
    labels.update({k: v[0] for k, v in live.items()})
    per_step = 1 + len(refs)
    height = 0.8 / per_step
    fig, axes = _new_axes(None, ncols=2, figsize=(9.6, 0.8 + 0.5 * len(order) * per_step))
    for ax, col, fmt in ((axes[0], 1, format_seconds), (axes[1], 2, lambda v: f"{100 * v:.3g}%")):
        values = []
        for i, key in enumerate(order):
            series = [(live.get(key), "C0", "")] + [(rows.get(key), REFERENCE_COLOR, "//") for rows, _ in refs]
            for j, (row, color, hatch) in enumerate(series):
                y = i + (j - (per_step - 1) / 2) * height
                value = row[col] if row else None
                if value is None or not math.isfinite(value) or value <= 0:
                    if row is not None or j == 0:
                        note = "skipped" if row is None or row[1] is None else "no peak for its dtype"
                        ax.annotate(note, (0, y), xycoords=("axes fraction", "data"), xytext=(3, 0),
                                    textcoords="offset points", va="center", fontsize=8, color="0.4")
                    continue
                ax.barh(y, value, height=height * 0.9, color=color, hatch=hatch or None,
                        edgecolor="white" if hatch else None, alpha=0.4 if row[3] else 1.0)
                ax.annotate(fmt(value), (value, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
                values.append(value)
        ax.set_yticks(range(len(order)), [labels[k] for k in order])
        ax.invert_yaxis()
        ax.grid(False, axis="y")
        if values:
            ax.set_xscale("log")
            top = max(values) * 4
            ax.set_xlim(min(values) / 2, min(top, 1.0) if col == 2 and max(values) < 0.8 else top)
        if col == 1:
            _seconds_axis(ax.xaxis)
            ax.set_xlabel("time per token (log scale; shorter is better)")
        else:
            _percent_axis(ax.xaxis)
            ax.set_xlabel(f"MFU: achieved FLOP/s ÷ {_peak_name(data)} (log scale)")
            ax.set_yticklabels([])
        _style(ax)
    fig.suptitle(device_title(f"{_model(data) or 'One model'}, step by step", data), fontsize=10)
    if refs:
        handles = [mpatches.Patch(color="C0", label=_live_label(data))]
        handles += [mpatches.Patch(facecolor=REFERENCE_COLOR, hatch="//", edgecolor="white",
                                   label=f"{reference_label(run)}, {_model(run) or 'its model'}") for _, run in refs]
        fig.legend(handles=handles, frameon=False, fontsize=7, loc="outside lower left")
    return fig
