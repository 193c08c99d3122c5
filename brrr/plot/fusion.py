"""Chapter 4's figures, on fusion: the speed-up of fusing k pointwise ops against k, and the
fused kernel's time per element against k, each beside the roofline's prediction.

The tables they draw come from :func:`brrr.fusion_tables.speedups` and
:func:`brrr.fusion_tables.time_lines`, which pair up and rescale the
:func:`brrr.experiments.fusion_speedup` records (written once, there, beside the experiments'
own tables; that module measures nothing).
"""
from __future__ import annotations

from ..fusion_tables import OP_NAMES, ceiling_seconds, speedups, time_lines
from ..kernel_source import peak_share
from ._base import (REFERENCE_COLOR, SPEC_COLOR, device_title, reference_label, _frame, _is_reference,
                    _live_label, _log_axis, _meta, _new_axes, _power2_axis, _references, _seconds_axis,
                    _series_style, _style, _styled)


FUSION_OPS = {"mul": "x * c", "add": "x + c", "fma": "x * c + d", "cos": "cos(x)"}


def what_of(run) -> str:
    """'multiplications' for a run of a chain of 'mul' (the first record's op)."""
    op = next((r["op"] for r in run.records), "mul")
    return OP_NAMES.get(op, op)


def _fusion_runs(runs) -> list:
    return [runs] if hasattr(runs, "records") else [r for r in runs if r is not None]


def _fusion_legend(fig, ax, own: bool, loc: str):
    """Inside the axes for the live run alone; below them when references add entries."""
    if own:
        handles, labels = ax.get_legend_handles_labels()
        fig.legend(handles, labels, frameon=False, fontsize=7, loc="outside lower center", ncol=2)
    else:
        ax.legend(frameon=False, fontsize=7, loc=loc)


def _speedups(result):
    return speedups(result)


def _fused_time_lines(result):
    return time_lines(result, per_element=True)


@_styled
def fusion_speedups(runs, reference=None, ax=None, title=None):
    """The speed-up of fusing a chain of k pointwise ops (unfused time / fused time) against k.

    ``runs`` is one :func:`brrr.experiments.fusion_speedup` result or several (e.g. the
    hand-written kernels and ``torch.compile``; None for one a replayed set lacks, and None drawn
    where all are): one solid line per fuser. The roofline's
    prediction for the live device is dashed, and the chain length where its fused kernel
    reaches the ridge point (``meta['crossover_k']``) a dotted vertical line; the same with
    the op at the most of the peak it can reach (:func:`brrr.kernel_source.peak_share`: half
    for multiplications) dash-dotted, with its own crossover. ``reference`` runs of the same
    sweeps are drawn grey and hollow, with their own prediction and ridge line in grey.
    """
    live, refs = _fusion_runs(runs), _references(reference)
    if not live:
        return None   # a replayed set without these records: nothing to draw
    fig, ax = _new_axes(ax)
    groups = [(run, False) for run in live] + [(run, True) for run in refs]
    i_live = i_ref = 0
    predicted_for = {}   # (device name, reference?) -> (ks, predicted, at the op's ceiling, crossover, share, who)
    for run, ref in groups:
        ref = ref or _is_reference(run)
        table = _speedups(run) if len(run.records) else None
        who = reference_label(run) if ref else (_live_label(run) if refs else "")
        device = (_meta(run).get("device") or {}).get("name", "")
        if table is None or table.empty:
            continue
        for library, part in table.groupby("library", sort=False):
            part = part.sort_values("k")
            style = _series_style(i_ref if ref else i_live, ref)
            ax.plot(part["k"], part["speedup"], markersize=4,
                    label=f"{library}" + (f" ({who})" if who else ""), **style)
            if ref:
                i_ref += 1
            else:
                i_live += 1
        ks, pred, top = predicted_for.get((device, ref), ((), (), ()))[:3]
        merged, capped = dict(zip(ks, pred)), dict(zip(ks, top))
        merged.update(zip(table["k"], table["predicted_speedup"]))
        capped.update(zip(table["k"], table["ceiling_speedup"]))
        first = run.records[0]
        share = peak_share(first.get("op", "mul"), first.get("backend", "cuda"))
        predicted_for[(device, ref)] = (sorted(merged), [merged[k] for k in sorted(merged)],
                                        [capped[k] for k in sorted(merged)], _meta(run).get("crossover_k"), share, who)
    for (device, ref), (ks, pred, top, crossover, share, who) in predicted_for.items():
        color = REFERENCE_COLOR if ref else SPEC_COLOR
        where = f" ({who})" if who else ""
        ax.plot(ks, pred, color=color, linestyle="--", linewidth=1.2, label="roofline prediction, full peak" + where)
        if share < 1 and not all(v != v for v in top):   # NaN: the records have no bytes and FLOPs
            ax.plot(ks, top, color=color, linestyle="-.", linewidth=1.2,
                    label=f"roofline prediction, {what_of(run)} at {share:.0%} of the peak" + where)
        if crossover:
            ax.axvline(crossover, color=color, linestyle=":", linewidth=1.2,
                       label=f"fused kernel reaches the ridge (k = {crossover:.3g}"
                             + (f", {device}" if refs else "") + ")")
            if share < 1:
                ax.axvline(share * crossover, color=color, linestyle=(0, (1, 4)), linewidth=1.2,
                           label=f"... at {share:.0%} of the peak (k = {share * crossover:.3g}"
                                 + (f", {device}" if refs else "") + ")")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _power2_axis(ax.xaxis)
    _log_axis(ax.yaxis)
    ax.set_xlabel("k (pointwise ops in the chain)")
    ax.set_ylabel("speed-up of fusing (unfused time / fused time)")
    ax.set_title(title or device_title(f"Fusing k {what_of(live[0])}", live[0]))
    _fusion_legend(fig, ax, own=len(fig.axes) == 1 and bool(refs), loc="upper left")
    _style(ax)
    return fig


@_styled
def fusion_times(runs, reference=None, ax=None, title=None):
    """Time per element of the fused kernel against k, one line per op, with the roofline's
    time for the same bytes and FLOPs dashed in the same colour, and dotted that time with the
    op at the most of the peak it can reach (half for a multiplication).

    ``runs`` is one :func:`brrr.experiments.fusion_speedup` result or several (e.g. a chain
    of multiplications and one of cosines, on different array sizes: per element they
    compare). ``reference`` runs are drawn grey and hollow, their roofline grey dash-dotted.
    """
    live, refs = _fusion_runs(runs), _references(reference)
    if not live:
        return None   # a replayed set without these records: nothing to draw
    fig, ax = _new_axes(ax)
    i_live = i_ref = 0
    for run, ref in [(run, _is_reference(run)) for run in live] + [(run, True) for run in refs]:
        lines = _fused_time_lines(run)
        if lines.empty:
            continue
        who = reference_label(run) if ref else (_live_label(run) if refs else "")
        suffix = f" ({who})" if who else ""
        op = lines.series.iloc[0].split(": ", 1)[1]
        op = f"{FUSION_OPS.get(op, op)} chain"
        measured = lines[lines.series.str.startswith("measured")].sort_values("k")
        model = lines[lines.series.str.startswith("roofline")].sort_values("k")
        style = _series_style(i_ref if ref else i_live, ref)
        ax.plot(measured["k"], measured["seconds"], markersize=4, label=f"{op}, measured{suffix}", **style)
        ax.plot(model["k"], model["seconds"], color=style["color"], linestyle="-." if ref else "--",
                linewidth=1.1, label=f"{op}, roofline{suffix}")
        top = lines[lines.series.str.startswith("ceiling")].sort_values("k")
        if not top.empty and not ref:
            share = peak_share(run.records[0].get("op", "mul"), run.records[0].get("backend", "cuda"))
            ax.plot(top["k"], top["seconds"], color=style["color"], linestyle=":", linewidth=1.1,
                    label=f"{op}, roofline at {share:.0%} of the peak{suffix}")
        if ref:
            i_ref += 1
        else:
            i_live += 1
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _power2_axis(ax.xaxis)
    _seconds_axis(ax.yaxis)
    ax.set_xlabel("k (pointwise ops fused into one kernel)")
    ax.set_ylabel("fused kernel's time per element")
    ax.set_title(title or device_title("k ops in one fused kernel", live[0]))
    _fusion_legend(fig, ax, own=len(fig.axes) == 1, loc="best")   # below the axes: the lines fill them
    _style(ax)
    return fig
