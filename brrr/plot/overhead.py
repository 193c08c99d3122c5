"""Chapter 3's figures, on overhead: Python operations per second, time against size per
library, the remedies for a chain of tiny ops, and doubling the batch."""
from __future__ import annotations

import math

from ..claims import SAME
from ..units import format_seconds
from ._base import (device_title, reference_label, _frame, _is_reference, _live_label, _meta, _new_axes,
                    _power2_axis, _references, _Reframed, _seconds_axis, _series_style, _style, _styled)
from .barchart import bars


LIBRARY_MARKERS = {"numpy": "o", "torch": "s", "cupy": "^"}
LIBRARY_ORDER = ("numpy", "torch", "cupy")


def _elements(value: float) -> str:
    """A fitted count of elements to three significant digits, as the table and the text give it:
    3754.2 -> '3,750'."""
    return f"{float(f'{value:.3g}'):,.0f}"


@_styled
def python_ops_per_second(result, reference=None, ax=None, title=None):
    """Millions of trivial Python operations per second, one bar per statement (from
    :func:`brrr.experiments.python_ops_per_second`); ``reference`` runs in grey beneath."""
    def millions(run):
        frame = _frame(run).copy()
        frame["millions per second"] = frame["ops_per_second"] / 1e6
        return _Reframed(frame, run)
    refs = _references(reference)
    return bars(millions(result), label="op", value="millions per second", ax=ax,
                xlabel="millions of operations per second",
                title=title or device_title("Trivial Python operations per second", result),
                reference=[millions(run) for run in refs] or None)


@_styled
def time_vs_size(result, fits=None, reference=None, ax=None, title=None):
    """Wall-clock time per call against size (elements), one line per library, log-log (from
    :func:`brrr.experiments.time_vs_size`).

    ``fits`` (``{library: fit}`` from :func:`brrr.experiments.fit_overheads`) adds, for
    this run, each library's fixed cost (dotted horizontal line) and the size where the
    work equals it (dashed vertical line), in that library's colour; where a call at a larger
    size took less than the fixed cost (not within SAME of it), a ringed point and the legend say so,
    since then that fixed cost does not hold at every size. ``reference`` runs
    are drawn grey, dashed and hollow, with the same marker per library as the live run.
    """
    refs = _references(reference)
    own = ax is None
    fig, ax = _new_axes(ax, figsize=(6.4, 4.8) if own else None)
    runs = [(result, _is_reference(result))] + [(run, True) for run in refs]
    for j, (run, ref) in enumerate(runs):
        frame = _frame(run)
        if frame.empty or "library" not in frame:
            continue
        who = reference_label(run) if ref else (_live_label(run) if refs else "")
        for lib, part in frame.groupby("library", sort=False):
            part = part.sort_values("size")
            i = LIBRARY_ORDER.index(lib) if lib in LIBRARY_ORDER else len(LIBRARY_ORDER)
            where = "GPU" if part["backend"].iloc[0] == "cuda" else "CPU"
            style = _series_style(j - (0 if runs[0][1] else 1), True) if ref else _series_style(i, False)
            style["marker"] = LIBRARY_MARKERS.get(lib, "D")
            label = f"{lib} on {where}" + (f" ({who})" if who else "")
            ax.plot(part["size"], part["seconds"], markersize=4, label=label, **style)
    for lib, fit in (fits or {}).items():
        i = LIBRARY_ORDER.index(lib) if lib in LIBRARY_ORDER else len(LIBRARY_ORDER)
        ax.axhline(fit["overhead"], color=f"C{i}", linestyle=":", linewidth=1.2,
                   label=f"{lib}: fixed cost {format_seconds(fit['overhead'])} (dotted); "
                         + (f"work = fixed cost at {_elements(fit['crossover'])} elements (dashed)"
                            if math.isfinite(fit["crossover"]) else "no size where work = fixed cost"))
        if math.isfinite(fit["crossover"]):
            ax.axvline(fit["crossover"], color=f"C{i}", linestyle="--", linewidth=0.9)
        n, t = fit.get("lowest") or (None, math.inf)
        if t < (1 - SAME) * fit["overhead"]:
            ax.plot([n], [t], linestyle="none", marker="o", markersize=11, markerfacecolor="none", color=f"C{i}",
                    label=f"{lib}: {format_seconds(t)} at {n:,} elements, less than its fixed cost (ringed): "
                          "that fixed cost does not hold at every size")
    ax.set_xscale("log")
    ax.set_yscale("log")
    _seconds_axis(ax.yaxis)
    dtype = _frame(result)["dtype"].iloc[0] if "dtype" in _frame(result) else "float32"
    ax.set_xlabel(f"size (elements of each {dtype} vector)")
    ax.set_ylabel("wall-clock time per call")
    op = _frame(result)["op"].iloc[0] if "op" in _frame(result) else "add"
    ax.set_title(title or device_title(f"One elementwise {op} vs size", result))
    handles, labels = ax.get_legend_handles_labels()
    if own:
        fig.legend(handles, labels, loc="outside lower center", ncol=1, frameon=False, fontsize=7)
    else:
        ax.legend(frameon=False, fontsize=7)
    _style(ax)
    return fig


@_styled
def reduce_overhead(result, reference=None, ax=None, title=None):
    """Time per call of a chain of tiny ops: eager, CUDA graph, torch.compile (from
    :func:`brrr.experiments.reduce_overhead_demo`), as bars. Without a GPU the live run is
    empty: the reference runs are drawn alone, and with none either, the figure says so."""
    refs = _references(reference)

    def what(run):
        meta, frame = _meta(run), _frame(run)
        n_ops = meta.get("n_ops") or (int(frame["n_ops"].iloc[0]) if "n_ops" in frame else None)
        size = meta.get("size") or (int(frame["size"].iloc[0]) if "size" in frame else None)
        return (f"A chain of {n_ops} tiny pointwise ops ({size:,} elements)" if n_ops and size
                else "A chain of tiny pointwise ops")
    kw = dict(label="variant", value="seconds", xlabel="time per call of the whole chain", ax=ax)
    if len(_frame(result)):
        return bars(result, title=title or device_title(what(result), result), reference=refs or None, **kw)
    if refs:
        return bars(refs[0], title=title or device_title(what(refs[0]), refs[0]), reference=refs[1:] or None, **kw)
    fig, ax = _new_axes(ax, figsize=(6.4, 1.4))
    ax.axis("off")
    ax.text(0.5, 0.5, "Nothing to draw: this run had no CUDA GPU (CUDA graphs replay GPU work),\n"
            "and no reference GPU run of this experiment ships yet.", ha="center", va="center",
            fontsize=9, color="0.3", transform=ax.transAxes)
    name = (_meta(result).get("device") or {}).get("name")
    ax.set_title(title or what(result) + (f": not measured on {name}" if name else ": not measured"))
    return fig


@_styled
def double_the_batch(result, reference=None, axes=None, title=None):
    """Two panels against batch size (from :func:`brrr.experiments.double_the_batch`): the
    time per call (the fastest sample; for the page's run, the median of the same samples too, a thin dotted
    line, where the record has it) and the time per sample. ``reference`` runs are drawn grey, dashed, hollow."""
    refs = _references(reference)
    if axes is None:
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 2, figsize=(9.0, 4.2), layout="constrained")
    else:
        axes = list(axes)
        if len(axes) != 2:
            raise ValueError(f"axes must be two matplotlib axes, got {len(axes)}")
        fig = axes[0].figure
    runs = [(result, _is_reference(result))] + [(run, True) for run in refs]
    for j, (run, ref) in enumerate(runs):
        frame = _frame(run)
        if frame.empty:
            continue
        frame = frame.sort_values("size")
        who = reference_label(run) if ref else _live_label(run)
        style = _series_style(j - (0 if runs[0][1] else 1), True) if ref else _series_style(0, False)
        axes[0].plot(frame["size"], frame["seconds"], markersize=4, label=who, **style)
        if j == 0 and "median_seconds" in frame:
            axes[0].plot(frame["size"], frame["median_seconds"], color=style.get("color"), linestyle=":",
                         linewidth=1, label=f"{who}: median of the same samples")
        axes[1].plot(frame["size"], frame["seconds"] / frame["size"], markersize=4, label=who, **style)
    from matplotlib.ticker import LogLocator, NullFormatter
    widest = max(len(_frame(run)) for run, _ in runs)
    for ax, ylabel, panel in ((axes[0], "time per forward pass", "per call"),
                              (axes[1], "time per sample (time per pass / batch)", "per sample")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        _power2_axis(ax.xaxis)
        if widest > 9:   # every other power of two, so the labels do not run into each other
            ax.xaxis.set_major_locator(LogLocator(base=4, numticks=30))
        _seconds_axis(ax.yaxis)
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("batch size")
        ax.set_ylabel(ylabel)
        ax.set_title(panel)
        _style(ax)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(3, len(labels)), frameon=False, fontsize=7)
    workload = _meta(result).get("workload")
    fig.suptitle(title or device_title("Forward pass vs batch size" if not workload else
                                       "MLP forward pass vs batch size", result))
    return fig
