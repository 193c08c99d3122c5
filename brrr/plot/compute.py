"""Chapter 1's own figures: matmul FLOP/s on tensor cores, one line per kind of math; the MFU of one layer
against the batch, beside the MFU the roofline allows; and elementwise work against matmuls."""
from __future__ import annotations

from ..results import Result, ran_on_cpu

from ._base import (REFERENCE_COLOR, REFERENCE_SHADES, device_title, flops_unit, reference_label, _frame,
                    _is_reference, _live_label, _log_axis, _meta, _new_axes, _power2_axis, _references,
                    _series_style, _style, _styled)


TENSOR_MATH = {"float32": "TF32", "float16": "FP16", "bfloat16": "BF16", "float64": "FP64"}
LINES = ("-", "--", "-.", ":")     # kinds of math that coincide (FP16 and BF16 often do) stay told apart
CHAIN = "elementwise fused FMA chain"
NO_FMA = "elementwise multiply-then-add chain (no FMA)"     # what a chain record without fma True ran


@_styled
def matmul_tensor_cores(result, reference=None, ax=None, title=None):
    """Matmul FLOP/s against n on tensor cores, one line per kind of math (TF32, FP16, BF16),
    each with its peak dotted in the same colour (from :func:`brrr.experiments.matmul_tensor_cores`).

    ``result`` may be None (a CPU has no tensor cores): the first ``reference`` run is then
    drawn as the data, grey. With neither, nothing is drawn and None is returned.
    """
    refs = _references(reference)
    if result is None:
        if not refs:
            return None
        result, refs = refs[0], refs[1:]

    def prepared(run):
        frame = _frame(run).copy()
        frame["math"] = [TENSOR_MATH.get(d, d) + (" tensor cores" if tc else " general math")
                         for d, tc in zip(frame["dtype"], frame["tensor_cores"])]
        return frame

    frames = [prepared(result)] + [prepared(run) for run in refs]
    top = max(max((f["gflops"] * 1e9).max(), f["peak_flops"].max()) for f in frames)
    unit, scale = flops_unit(top)
    fig, ax = _new_axes(ax)
    drawn = set()   # (peak, kinds) lines already drawn: a reference of the same GPU shares them
    for run, f in zip([result, *refs], frames):
        ref = _is_reference(run)
        dev = (_meta(run).get("device") or {}).get("name", "")
        who = reference_label(run) if ref else (_live_label(run) if refs else "")
        peaks = {}   # peak -> the kinds of math that share it (FP16 and BF16 often do)
        for i, (math_kind, part) in enumerate(f.groupby("math", sort=False)):
            part = part.sort_values("n")
            style = dict(_series_style(i, False), marker="os^D"[i % 4], linestyle=LINES[i % 4],   # a hollow, larger
                         markerfacecolor="none" if i % 2 else None, markersize=7 if i % 2 else 4)  # marker rings the next
            if ref:
                style = _series_style(i, True)
                style["color"] = REFERENCE_SHADES[i % len(REFERENCE_SHADES)]
            style.setdefault("markersize", 4)
            ax.plot(part["n"], part["gflops"] * 1e9 / scale,
                    label=f"{math_kind} ({who})" if who else math_kind, **style)
            peaks.setdefault(float(part["peak_flops"].max()), []).append((i, math_kind))
        kind = "measured" if ran_on_cpu(_meta(run).get("device")) else "spec"
        for peak, kinds in peaks.items():
            names = " and ".join(k.replace(" tensor cores", "").replace(" general math", "") for _, k in kinds)
            if (peak, names) in drawn:
                continue
            drawn.add((peak, names))
            ax.axhline(peak / scale, color=REFERENCE_COLOR if ref else f"C{kinds[0][0]}", linestyle=":",
                       linewidth=1, label=f"{dev + ': ' if refs else ''}{names} peak, {kind} "
                                          f"({peak / scale:.3g} {unit})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    _power2_axis(ax.xaxis)
    _log_axis(ax.yaxis)
    ax.set_xlabel("matrix size n (n x n times n x n)")
    ax.set_ylabel(f"throughput ({unit})")
    ax.legend(frameon=False, loc="best", fontsize=7)
    _style(ax)
    ax.set_title(title or device_title("Matmul on tensor cores", result))
    return fig


@_styled
def mfu_vs_batch(result, reference=None, ax=None, title=None):
    """MFU against the batch (from :func:`brrr.experiments.mfu_vs_batch`), and dotted in the same colour the MFU
    the roofline allows at each batch: the layer's FLOPs over its least time (``roofline_seconds``), over the
    same peak. ``reference`` runs are grey. The y axis names the peak."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator
    refs = _references(reference)
    fig, ax = _new_axes(ax)
    for j, run in enumerate([result, *refs]):
        recs, ref = sorted(run.records, key=lambda r: r["batch"]), _is_reference(run)
        style = _series_style(j - 1, True) if ref else _series_style(0, False)
        who = f" ({reference_label(run) if ref else _live_label(run)})" if refs else ""
        batches = [r["batch"] for r in recs]
        ax.plot(batches, [r["mfu"] for r in recs], markersize=4, label=f"measured{who}", **style)
        ax.plot(batches, [r["flops"] / r["roofline_seconds"] / r["peak_flops"] for r in recs], color=style["color"],
                linestyle=":", linewidth=1.5, label=f"the roofline allows{who}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(FixedLocator(sorted({r["batch"] for run in [result, *refs] for r in run.records})))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.xaxis.set_minor_locator(NullLocator())
    low = min(r["mfu"] for run in [result, *refs] for r in run.records)
    ax.set_ylim(low / 2, 1.6)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 3.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:.3g}%"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    dev, peak = _meta(result).get("device") or {}, max(r["peak_flops"] for r in result.records)
    unit, scale = flops_unit(peak)
    kind = "measured" if ran_on_cpu(dev) else "spec sheet"
    ax.set_xlabel("batch size (rows)")
    ax.set_ylabel(f"MFU: % of the FP32 peak ({kind}, {peak / scale:.3g} {unit})")
    ax.legend(frameon=False, fontsize=7, loc="lower right")
    _style(ax)
    ax.set_title(title or device_title("MFU of one Linear(1024, 1024) layer", result))
    return fig


def elementwise_vs_matmul(result, reference=None, title=None):
    """Achieved FLOP/s of each kind of work of :func:`brrr.experiments.elementwise_vs_matmul`, one bar or dot each
    (:func:`brrr.plot.bars`), all runs in one unit, the chain named by what its links ran (a record without ``fma``
    True ran a multiply and then an add, as the table says)."""
    from .barchart import bars
    runs = [result, *_references(reference)]
    unit, scale = flops_unit(max(r["gflops"] * 1e9 for run in runs for r in run.records))

    def prepared(run):
        return Result(run.name, [{**r, unit: r["gflops"] * 1e9 / scale,
                                  "kind": NO_FMA if r["kind"] == CHAIN and r.get("fma") is not True else r["kind"]}
                                 for r in run.records], run.meta)
    return bars(prepared(result), label="kind", value=unit, xlabel=f"achieved {unit}",
                reference=[prepared(run) for run in runs[1:]],
                title=title or device_title("Elementwise vs matmul FLOP/s", result))
