"""Chapter 1's own figure: matmul FLOP/s on tensor cores, one line per kind of math."""
from __future__ import annotations

from ..results import ran_on_cpu

from ._base import (REFERENCE_COLOR, REFERENCE_SHADES, device_title, flops_unit, reference_label, _frame,
                    _is_reference, _live_label, _log_axis, _meta, _new_axes, _power2_axis, _references,
                    _series_style, _style, _styled)


TENSOR_MATH = {"float32": "TF32", "float16": "FP16", "bfloat16": "BF16", "float64": "FP64"}


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
            style = _series_style(i, False)
            if ref:
                style = _series_style(i, True)
                style["color"] = REFERENCE_SHADES[i % len(REFERENCE_SHADES)]
            ax.plot(part["n"], part["gflops"] * 1e9 / scale, markersize=4,
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
