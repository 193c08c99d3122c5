"""Chapter 5's figures, on recomputation: the checkpoint sweep (activation memory and step
time against the segment length), the allocator's peak beside the model, and the compiler's
recomputation as bars."""
from __future__ import annotations

import math

from ._base import (REFERENCE_COLOR, SPEC_COLOR, device_title, reference_label, _bytes_axis, _frame,
                    _is_reference, _live_label, _meta, _new_axes, _references, _Reframed, _series_style,
                    _style, _styled)
from .barchart import bars


def _by_every(run) -> dict:
    """{every: record} of a checkpoint_sweep run (every = 0: no checkpointing)."""
    return {int(r["every"]): r for r in _frame(run).to_dict("records")}


def _every_axis(ax, values):
    """A log2 axis of segment lengths with a tick at each one tried."""
    from matplotlib.ticker import NullLocator
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(values), [str(v) for v in sorted(values)])
    ax.xaxis.set_minor_locator(NullLocator())


@_styled
def checkpoint_sweep(result, reference=None, axes=None, title=None):
    """Two panels of a :func:`brrr.experiments.checkpoint_sweep` run against the segment length.

    Left, activation memory (bytes, log): what stays saved after the forward pass and what
    one segment saves while it is recomputed (both counted by saved-tensor hooks, solid), and
    their sum, the model of the backward's peak (dashed); the saved bytes without
    checkpointing are a dotted line, the formula's optimum sqrt(L m_in / m_block) a vertical
    one. Right, the fastest training step relative to the one without checkpointing, with the
    FLOP ratio of each segment length (PyTorch's checkpoint stops recomputing early:
    :func:`brrr.recompute_model.checkpoint_flop_ratio`) and 4/3 (one whole extra forward pass). ``reference`` runs add their modelled peak and their
    relative step time in grey. Drawn here, its text is larger than other figures', since two
    panels side by side are shrunk to a page's width; the device, and that only the time was
    measured on it, is the figure's title (``title`` replaces it). Given ``axes``, ``title`` is
    the memory panel's.
    """
    import matplotlib.pyplot as plt
    refs = _references(reference)
    own = axes is None
    if own:
        import matplotlib
        with plt.rc_context(_LARGE):
            fig, axes = plt.subplots(1, 2, figsize=(10, 5.4), layout="constrained")
            _sweep_panels(fig, axes, result, refs, title, own)
            interactive = matplotlib.is_interactive()   # as in _styled: keep Jupyter's inline mode on
        matplotlib.interactive(interactive)
        return fig
    _sweep_panels(axes[0].figure, axes, result, refs, title, own)
    return axes[0].figure


# The page shows this 10-inch figure about two-thirds size: at these sizes the smallest text
# (the legends) still reads at about 10 pixels there.
_LARGE = {"font.size": 12.5, "axes.titlesize": 12.5, "axes.labelsize": 12.5, "xtick.labelsize": 11.5,
          "ytick.labelsize": 11.5, "legend.fontsize": 11.5, "figure.titlesize": 13.5}


def _sweep_panels(fig, axes, result, refs, title, own):
    """The two panels of :func:`checkpoint_sweep` on ``axes``."""
    left, right = axes
    runs = [(result, _is_reference(result))] + [(run, True) for run in refs]
    everies = set()
    for j, (run, ref) in enumerate(runs):
        rows = _by_every(run)
        ck = sorted(e for e in rows if e > 0)
        everies.update(ck)
        who = reference_label(run) if ref else (_live_label(run) if refs else "")
        tag = " (this run)" if refs and not ref else ""
        if not ref:
            left.plot(ck, [rows[e]["saved_bytes"] for e in ck], marker="o", markersize=4, color="C0",
                      label="kept after the forward, counted" + tag)
            left.plot(ck, [rows[e]["recompute_bytes"] for e in ck], marker="s", markersize=4, color="C1",
                      label="one segment while recomputed, counted" + tag)
            left.plot(ck, [rows[e]["peak_activation_bytes"] for e in ck], marker="^", markersize=4,
                      color="C2", linestyle="--", label="peak = kept + one segment, model" + tag)
            if 0 in rows:
                left.axhline(rows[0]["saved_bytes"], color="0.3", linestyle=":", linewidth=1,
                             label="no checkpointing, counted" + tag)
            meta = _meta(run)
            if meta.get("block_bytes") and meta.get("input_bytes") and meta.get("layers"):
                best = math.sqrt(meta["layers"] * meta["input_bytes"] / meta["block_bytes"])
                left.axvline(best, color="C2", linestyle=":", linewidth=1,
                             label=f"formula's optimum, every = {best:.2g}")
        else:
            style = _series_style(j - 1, True)
            left.plot(ck, [rows[e]["peak_activation_bytes"] for e in ck], markersize=4,
                      label=f"peak, model ({who})", **style)
        if 0 in rows and rows[0].get("min_seconds"):
            base = rows[0]["min_seconds"]
            style = _series_style(j - 1, True) if ref else dict(color="C0", marker="o")
            right.plot(ck, [rows[e]["min_seconds"] / base for e in ck], markersize=4,
                       label=(who or "measured"), **style)
    left.set_yscale("log", base=2)
    _bytes_axis(left.yaxis)
    live_rows = {int(r["every"]): r for r in result.records}
    live_ck = sorted(e for e in live_rows if e > 0)
    layers = result.meta.get("layers")
    if layers and live_ck:   # the FLOPs PyTorch's early-stopping checkpoint reruns (below 4/3)
        from ..recompute_model import checkpoint_flop_ratio
        right.plot(live_ck, [checkpoint_flop_ratio(layers, e) for e in live_ck], color=SPEC_COLOR, linestyle="--",
                   linewidth=1, label="FLOP ratio (early stop)")
    right.axhline(4 / 3, color=SPEC_COLOR, linestyle="-.", linewidth=1, label="whole forward again, by FLOPs: 4/3")
    right.axhline(1, color="0.3", linestyle="-", linewidth=0.8, label="no checkpointing")
    right.set_ylim(bottom=0)
    for ax in axes:
        _every_axis(ax, everies)
        ax.set_xlabel("segment length: checkpoint every k blocks")
        _style(ax)
    left.set_ylabel("activation memory (bytes)")
    right.set_ylabel("step time / step time without checkpointing")
    # The bytes are counted by hooks, the same on any device: only the step time was measured.
    counted = "Activation memory (counted by hooks)"
    if own:
        left.set_title(counted)
        fig.suptitle(title or device_title("Activation checkpointing", result, measured="step time measured"))
    else:
        left.set_title(title or device_title(counted, result, measured=""))
    right.set_title("Time of one training step (fastest sample)")
    if refs or own:  # below the panels, where they cover no line
        fig.legend(*left.get_legend_handles_labels(), frameon=False, ncol=2, loc="outside lower center")
    else:
        left.legend(frameon=False)
    right.legend(frameon=False, loc="best")


def _has_allocator_peak(run) -> bool:
    return any(r.get("peak_memory_bytes") for r in _frame(run).to_dict("records"))


@_styled
def checkpoint_peak_memory(result, reference=None, ax=None, title=None):
    """Peak GPU memory of one training step against the segment length, as the allocator measured
    it (``torch.cuda.max_memory_allocated``; solid, dashed for a reference) beside the model built
    from saved-byte counts (dotted), for every run that has allocator measurements: this one on a
    GPU, and each ``reference`` run (grey). The allocator's peak without checkpointing is a
    dash-dotted line per run. Returns None, drawing
    nothing, when no run has an allocator measurement (a CPU run and no GPU reference)."""
    runs = [(run, ref) for run, ref in [(result, _is_reference(result))] + [(r, True) for r in _references(reference)]
            if _has_allocator_peak(run)]
    if not runs:
        return None
    fig, ax = _new_axes(ax)
    everies = set()
    for j, (run, ref) in enumerate(runs):
        rows = _by_every(run)
        ck = sorted(e for e in rows if e > 0 and rows[e].get("peak_memory_bytes"))
        everies.update(ck)
        who = reference_label(run) if ref else _live_label(run)
        style = _series_style(j, ref) if ref else dict(color="C0", marker="o")
        ax.plot(ck, [rows[e]["peak_memory_bytes"] for e in ck], markersize=4,
                label=f"allocator's peak, measured ({who})", **style)
        model = dict(style, linestyle=":", marker="^", color=style["color"] if ref else "C2")
        ax.plot(ck, [rows[e]["peak_activation_bytes"] for e in ck], markersize=4,
                label="activations at the peak, modelled from the hook counts" + (f" ({who})" if ref else ""),
                **model)
        if rows.get(0, {}).get("peak_memory_bytes"):
            ax.axhline(rows[0]["peak_memory_bytes"], color=style["color"], linestyle="-.", linewidth=1,
                       label=f"allocator's peak without checkpointing ({who})")
    ax.set_yscale("log", base=2)
    _bytes_axis(ax.yaxis)
    _every_axis(ax, everies)
    ax.set_xlabel("segment length: checkpoint every k blocks")
    ax.set_ylabel("memory above the step's start (bytes)")
    live = [run for run, ref in runs if not ref]
    ax.set_title(title or (device_title("Peak memory of one training step", live[0]) if live else
                           "Peak memory of one training step (reference GPU runs)"))
    fig.legend(*ax.get_legend_handles_labels(), frameon=False, fontsize=7, loc="outside lower center")
    _style(ax)
    return fig


@_styled
def compiled_recompute(result, reference=None, axes=None, title=None):
    """Two bar panels of a :func:`brrr.experiments.compiled_recompute` run, one bar per variant:
    the bytes saved for the backward pass (counted by hooks, MiB) and the fastest forward +
    backward time. ``reference`` runs add grey hatched bars under each live one."""
    import matplotlib.pyplot as plt
    refs = _references(reference)
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(10, 1.6 + 0.45 * 3 * (1 + len(refs))), layout="constrained")
    else:
        fig = axes[0].figure

    def prepared(run):
        frame = _frame(run).copy()
        frame["saved for backward (MiB)"] = frame["saved_bytes"] / 2 ** 20
        frame["seconds"] = frame["min_seconds"]   # the fastest sample
        return _Reframed(frame, run)
    live, others = prepared(result), [prepared(run) for run in refs]
    op, k = (_frame(result)["op"].iloc[0], _frame(result)["k"].iloc[0]) if len(_frame(result)) else ("", "")
    bars(live, label="variant", value="saved for backward (MiB)", ax=axes[0], log=False,
         xlabel="saved for backward (MiB)", reference=others or None,
         title=title or device_title(f"{op} chain, k = {k}", result, measured="time measured"))
    bars(live, label="variant", value="seconds", ax=axes[1], log=False, reference=others or None,
         xlabel="forward + backward, fastest sample", title="Time of forward + backward")
    from matplotlib.ticker import MaxNLocator
    axes[1].xaxis.set_major_locator(MaxNLocator(nbins=4))   # 'ms' labels are wide: fewer ticks
    if refs:
        for ax in axes:
            legend = ax.get_legend()
            if legend is not None:
                legend.remove()
        import matplotlib.patches as mpatches
        handles = [mpatches.Patch(color="C0", label=_live_label(result))]
        handles += [mpatches.Patch(facecolor=REFERENCE_COLOR, hatch="//", edgecolor="white",
                                   label=reference_label(run)) for run in refs]
        fig.legend(handles=handles, frameon=False, fontsize=7, loc="outside lower left")
    return fig
