"""Chapter 2's reduced-precision figure: a matmul and a pointwise op on the roofline, once per
data type, with an arrow from float32 to each narrower type (from
:func:`brrr.experiments.dtype_roofline`)."""
from __future__ import annotations

import math

import numpy as np

from ..roofline import Roofline
from ._base import REFERENCE_COLOR, _is_reference, _legend_below, _meta, _new_axes, _references, _styled, \
    device_title, flops_unit, reference_label
from .roofline_chart import roofline

DTYPE_COLORS = {"float32": "C0", "bfloat16": "C1", "float16": "C2", "int8": "C3"}
OP_MARKERS = {"matmul": "o", "pointwise": "s"}
SHORT = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16", "int8": "int8"}
LINE = 9   # points between the labels of types that share an intensity
TENSOR_NAME = {"float32": "TF32", "float16": "FP16", "bfloat16": "BF16", "int8": "INT8"}
SAME = 0.04     # decades: markers closer than this in both intensity and rate would cover each other
SPREAD = 7      # points between the centres of markers set side by side


def _ran(rec) -> bool:
    return not rec.get("skipped") and (rec.get("seconds") or 0) > 0


def _points(run) -> dict:
    """{(op, dtype): (intensity FLOP/byte, FLOP/s)} of the records that ran."""
    return {(r["op"], r["dtype"]): (r["flops"] / r["nbytes"], r["flops"] / r["seconds"])
            for r in run.records if _ran(r)}


def dtype_roof(run) -> Roofline:
    """The run's roofline: float32's roof and the bandwidth saved with it, and every other type's
    known peak as a compute ceiling (a GPU's tensor-core rates; a CPU has only float32's)."""
    peaks = {}
    for r in run.records:
        if r.get("peak_flops"):
            peaks.setdefault(r["dtype"], float(r["peak_flops"]))
    if "float32" not in peaks:
        raise ValueError("the run has no float32 roof (peak_flops of its float32 records)")
    on_gpu = (_meta(run).get("device") or {}).get("backend") == "cuda"
    ceilings = {(f"{TENSOR_NAME[d]} tensor" if on_gpu else d): p for d, p in peaks.items() if d != "float32"}
    name = (_meta(run).get("device") or {}).get("name", "")
    return Roofline(peak_flops=peaks["float32"], peak_bandwidth=float(_meta(run)["peak_bandwidth"]),
                    compute_ceilings=ceilings, name=name)


def _label(ax, pts, op, dtype, scale, color):
    """Name the type beside its marker: float32 to the left; the narrower types to the right,
    where those at one intensity (the matmul's often are) stand in a column from the highest
    marker down, in the order of their markers, each in its marker's colour."""
    x, y = pts[(op, dtype)]
    if dtype == "float32":
        ax.annotate(SHORT[dtype], (x, y / scale), fontsize=7, color=color, xytext=(-6, 4),
                    textcoords="offset points", ha="right", va="bottom")
        return
    column = sorted(((yy, d) for (o, d), (xx, yy) in pts.items()
                     if o == op and d != "float32" and abs(math.log(xx / x)) < 0.05), reverse=True)
    top, rank = column[0][0], [d for _, d in column].index(dtype)
    if op == "pointwise":   # above the column: the next narrower type's marker sits just right of it
        ax.annotate(SHORT.get(dtype, dtype), (x, top / scale), fontsize=7, color=color, ha="center", va="bottom",
                    xytext=(0, 7 + LINE * (len(column) - 1 - rank)), textcoords="offset points")
        return
    ax.annotate(SHORT.get(dtype, dtype), (x, top / scale), fontsize=7, color=color, xytext=(8, 3 - LINE * rank),
                textcoords="offset points", ha="left", va="center")


def _dodges(pts) -> dict:
    """{(op, dtype): sideways shift in points} for markers that would hide one another (two types
    with the same intensity and nearly the same rate, as bf16 and fp16 often are): each group is
    spread across, in the order of DTYPE_COLORS; every other marker stays where its value is."""
    groups: list = []
    for key in sorted(pts, key=lambda k: list(DTYPE_COLORS).index(k[1]) if k[1] in DTYPE_COLORS else 99):
        x, y = pts[key]
        for group in groups:
            gx, gy = pts[group[0]]
            if group[0][0] == key[0] and abs(math.log10(x / gx)) < SAME and abs(math.log10(y / gy)) < SAME:
                group.append(key)
                break
        else:
            groups.append([key])
    return {key: (i - (len(group) - 1) / 2) * SPREAD for group in groups for i, key in enumerate(group)}


def _draw_run(ax, run, scale, ref: bool):
    """Markers for every (op, dtype) of ``run`` and an arrow from float32 to each other type;
    markers that would cover one another are set side by side (:func:`_dodges`)."""
    from matplotlib.transforms import offset_copy
    pts = _points(run)
    shifts = _dodges(pts)
    for (op, dtype), (x, y) in pts.items():
        color = REFERENCE_COLOR if ref else DTYPE_COLORS.get(dtype, "C4")
        where = offset_copy(ax.transData, fig=ax.figure, x=shifts[(op, dtype)], y=0, units="points")
        ax.plot([x], [y / scale], marker=OP_MARKERS[op], markersize=7, linestyle="none", color=color,
                markerfacecolor="none" if ref else color, zorder=4, transform=where)
        _label(ax, pts, op, dtype, scale, color)
        start = pts.get((op, "float32"))
        if dtype != "float32" and start is not None:
            ax.annotate("", xy=(x, y / scale), xycoords=where, xytext=(start[0], start[1] / scale),
                        textcoords="data", zorder=3,
                        arrowprops={"arrowstyle": "->", "color": color, "alpha": 0.7, "linewidth": 1.2,
                                    "shrinkA": 5, "shrinkB": 5, "linestyle": "--" if ref else "-"})
    return pts


@_styled
def dtype_roofline(result, reference=None, ax=None, title=None):
    """The roofline with the matmul (circles) and the pointwise op (squares) once per data type,
    coloured by type, and arrows from float32 to each narrower type: fewer bytes per FLOP move a
    point right; on a GPU with tensor cores the roof above it rises too.

    The roofs are the run's own (:func:`dtype_roof`): float32's, and the other types' where a spec
    sheet gives them. ``reference`` runs are drawn grey and hollow, with their float32 roof.
    Records that were skipped are left out.
    """
    refs = _references(reference)
    roof = dtype_roof(result)
    every = [_points(result)] + [_points(run) for run in refs]
    ref_roofs = [dtype_roof(run) for run in refs]
    xs = [p[0] for pts in every for p in pts.values()]
    ys = [p[1] for pts in every for p in pts.values()]
    ridges = [r.ridge for r in [roof, *ref_roofs]]
    lo = min(xs + ridges) / 8
    hi = max(xs + ridges) * 8
    xlim = (2.0 ** math.floor(math.log2(lo)), 2.0 ** math.ceil(math.log2(hi)))
    own = ax is None
    fig, ax = _new_axes(ax, figsize=(8.0, 6.4))
    device = _meta(result).get("device") or {}
    roofline(roof, points=[], ax=ax, xlim=xlim, device=device,
             title=title or device_title("Data types on the roofline", result))
    unit, scale = flops_unit(max([roof.peak_flops, *roof.compute_ceilings.values()]))  # roofline()'s units
    for run, r in zip(refs, ref_roofs):
        ai = np.logspace(math.log10(xlim[0]), math.log10(xlim[1]), 200)
        ax.plot(ai, r.attainable(ai) / scale, color=REFERENCE_COLOR, linewidth=1.5,
                label=f"{r.name} float32 roof ({reference_label(run)})")
    _draw_run(ax, result, scale, False)
    for run in refs:
        _draw_run(ax, run, scale, True)
    bottom, upper = ax.get_ylim()
    tops = [upper] + [r.peak_flops / scale * 3 for r in ref_roofs] + [max(ys) / scale * 3]
    ax.set_ylim(min(bottom, min(ys) / scale / 3), max(tops))
    from matplotlib.lines import Line2D
    handles, labels = ax.get_legend_handles_labels()
    shown = {r["dtype"] for r in result.records if _ran(r)}
    handles += [Line2D([], [], marker="s", linestyle="none", color=c, markersize=7)
                for d, c in DTYPE_COLORS.items() if d in shown]
    unroofed = {r["dtype"] for r in result.records if _ran(r) and not r.get("peak_flops")}
    labels += [d + (" (integer op/s, no roof drawn)" if d == "int8" and d in unroofed else "")
               for d in DTYPE_COLORS if d in shown]
    handles += [Line2D([], [], marker=m, linestyle="none", color="0.4", markerfacecolor="none", markersize=7)
                for m in OP_MARKERS.values()]
    labels += [f"{op} {'(n x n)' if op == 'matmul' else '(y = 1 + 2x)'}" for op in OP_MARKERS]
    if refs:
        handles.append(Line2D([], [], marker="o", linestyle="none", color=REFERENCE_COLOR, markerfacecolor="none"))
        labels.append("reference GPU (grey, hollow)" if all(_is_reference(r) for r in refs) else "reference")
    legend = ax.get_legend()
    if legend is not None:
        legend.remove()
    if own:
        _legend_below(fig, handles, labels, ncol=3, width=64)
    else:
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=7)
    ax.set_ylabel(f"attainable throughput ({unit}; int8: integer op/s)")
    return fig
