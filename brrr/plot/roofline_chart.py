"""The roofline chart: FLOP/s against arithmetic intensity, its ceilings, and measurements on it."""
from __future__ import annotations

from ..results import ran_on_cpu

import math

import numpy as np

from ..roofline import Roofline
from ._base import (MEASURED_COLOR, REFERENCE_COLOR, SPEC_COLOR, flops_unit, format_bytes, format_rate,
                    peak_method, reference_label, _device_info, _frame, _is_reference, _meta, _new_axes,
                    _legend_below, _references, _style, _styled, device_title)

MARKERS = "osD^vP*X<>ph8Hd"   # one shape per point, then one per reference device: none drawn twice
DTYPE_NAMES = {"float32": "FP32", "float16": "FP16", "bfloat16": "BF16", "float64": "FP64"}


def _main_label(ceilings: dict, value: float, default: str) -> str:
    for label, v in ceilings.items():
        if math.isclose(v, value, rel_tol=1e-9):
            return label
    return default


def _points(points, name: str = "points"):
    """(label, intensity FLOP/byte, FLOP/s, reference) for every record with FLOPs, bytes, seconds.

    Records with zero FLOPs (a copy) are skipped: they have no place on a log FLOP/s axis.
    Any other record must give a finite, positive intensity and rate, else ValueError.
    """
    if points is None:
        return []
    groups = points if isinstance(points, (list, tuple)) and points and hasattr(points[0], "records") \
        else [points]
    out = []
    for g, group in enumerate(groups):
        ref = _is_reference(group)
        try:
            frame = _frame(group)
        except TypeError as e:
            raise TypeError(f"{name}: {e}") from None
        if frame.empty:
            continue
        for col in ("flops", "nbytes", "seconds"):
            if col not in frame:
                raise ValueError(f"{name} need a {col!r} field per record (FLOPs, bytes, seconds)")
        for i, rec in enumerate(frame.to_dict("records")):
            try:
                flops, nbytes, seconds = (np.float64(rec[c]) for c in ("flops", "nbytes", "seconds"))
            except (TypeError, ValueError):
                flops = nbytes = seconds = np.float64(math.nan)
            if flops == 0:
                continue  # a copy does no FLOPs
            with np.errstate(all="ignore"):
                intensity, rate = float(flops / nbytes), float(flops / seconds)
            if not (0 < intensity < math.inf and 0 < rate < math.inf):
                where = f"record {i}" + (f" of result {g}" if len(groups) > 1 else "")
                what = rec.get("label") or rec.get("op")
                if what:
                    where += f" ({what})"
                got = ", ".join(f"{c}={rec[c]!r}" for c in ("flops", "nbytes", "seconds"))
                raise ValueError(f"{name}: {where} has intensity {intensity:g} FLOP/byte and rate {rate:g} "
                                 f"FLOP/s; both must be finite and > 0 on log axes (got {got})")
            out.append((_point_label(rec), intensity, rate, ref))
    return out


def _point_label(rec: dict) -> str:
    if rec.get("label"):
        return str(rec["label"])
    op = rec.get("op", "")
    if op == "matmul":   # 'matmul n=4096 FP16 tensor': the math it ran on, as the roofline's ceilings say
        dtype = DTYPE_NAMES.get(rec.get("dtype"), rec.get("dtype") or "")
        if rec.get("tensor_cores"):
            dtype = ("TF32" if dtype == "FP32" else dtype) + " tensor"
        n = rec.get("n")
        n = rec.get("size") if n is None or n != n else n            # n missing or NaN: the size
        n = int(n) if isinstance(n, float) and n.is_integer() else n  # a column with gaps is float
        return f"matmul n={n}" + (f" {dtype}" if dtype else "")
    if rec.get("variant"):
        return f"{rec['variant']} x{rec.get('repeat')}"
    library = f" ({rec['library']})" if rec.get("library") else ""   # which library ran it
    return f"{op} {format_bytes(rec['nbytes'])}{library}".strip()


@_styled
def roofline(roof, points=None, measured=None, ax=None, title=None, device=None,
             xlim=None, annotate_points=None, reference=None):
    """Log-log roofline: FLOP/s against arithmetic intensity (FLOP/byte).

    Parameters
    ----------
    roof : the device's :class:`brrr.Roofline` from its spec sheet (on a CPU:
        its measured, cached peaks), drawn solid; its other compute and memory
        ceilings are drawn thin and labelled. ``None`` draws only the measured roof.
    points : measurements to place on it: a Result, DataFrame or list of records
        with ``flops``, ``nbytes`` and ``seconds`` (records without FLOPs, such as
        a copy, are skipped; NaN, infinite, zero or negative values in any other
        raise ValueError), or a list of Results; empty (``[]``) draws the roofs
        alone. Every point gets a legend entry; with four points or fewer they
        are also labelled on the plot (``annotate_points`` overrides).
    measured : the measured roof, dashed: a Roofline or a ``measure_roofline`` Result.
    device : a Device or its summary dict, for the title (default: from the results' meta).

    reference : reference runs (from :mod:`brrr.reference`): each adds its device's
        roof (:meth:`Roofline.of_run`: the spec sheet of a known GPU) and its points,
        grey and hollow, one legend entry per device.

    Results marked ``reference`` (shipped with the book) are drawn grey and
    hollow, and say "reference" in the legend and title.
    """
    refs = _references(reference)
    measured_result = None
    if measured is not None and not isinstance(measured, Roofline):
        measured_result, measured = measured, Roofline.from_measurements(measured)
    if roof is not None and not isinstance(roof, Roofline):
        raise TypeError(f"roof must be a brrr.Roofline, got {type(roof).__name__}")
    if roof is None and measured is None:
        raise ValueError("roofline() needs a roof, a measured roof, or both")
    pts = _points(points)
    groups = points if isinstance(points, (list, tuple)) else [points]
    info = _device_info(measured_result, *groups, device=device)
    ref_roofs = [_roof_of(run) for run in refs]
    ref_pts = [_points(run, "reference") for run in refs]
    roofs = [r for r in (roof, measured) if r is not None] + ref_roofs
    ridges = [r.ridge for r in roofs]
    if xlim is None:
        ais = [p[1] for p in pts] + [p[1] for group in ref_pts for p in group] + ridges
        lo = min(min(ais) / 4, min(ridges) / 64)
        hi = max(max(ais) * 4, max(ridges) * 64)
        xlim = (2.0 ** math.floor(math.log2(lo)), 2.0 ** math.ceil(math.log2(hi)))
    every = pts + [p for group in ref_pts for p in group]
    top = max([r.peak_flops for r in roofs] + [max(r.compute_ceilings.values(), default=0) for r in roofs]
              + [p[2] for p in every])
    unit, scale = flops_unit(top)
    bottom = min([xlim[0] * r.peak_bandwidth for r in roofs] + [p[2] for p in every]) / 2
    own_figure = ax is None
    fig, ax = _new_axes(ax, figsize=(8.0, 6.4))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*xlim)
    ax.set_ylim(bottom / scale, top / scale * 3)
    ai = np.logspace(math.log10(xlim[0]), math.log10(xlim[1]), 400)

    def along(r, fraction):
        """An intensity a given fraction of the way (log scale) from the left edge to r's ridge."""
        return xlim[0] * (r.ridge / xlim[0]) ** fraction

    labelled = set()   # the rates a roof drawn before has labelled: a reference's same rate is not labelled again

    def draw(r, style, color, tag, spec, thin_source="", below=None):
        """``below``: the bandwidth's label under its line, that far along it (a reference's: the ``below``-th
        of them, so that no two labels overprint)."""
        main_c = _main_label(r.compute_ceilings, r.peak_flops, "peak")
        main_c = _ceiling_name(main_c, spec, info)
        main_m = _main_label(r.memory_ceilings, r.peak_bandwidth, "bandwidth")
        ax.plot(ai, r.attainable(ai) / scale, linestyle=style, color=color, linewidth=2,
                label=f"{tag}: {main_c} {format_rate(r.peak_flops)}, {main_m} "
                      f"{format_rate(r.peak_bandwidth, 'B/s')}{thin_source}")
        distinct = lambda v, main: not 0.87 < v / main < 1.15  # noqa: E731 - near-equal ceilings add clutter
        widest = max([r.peak_bandwidth, *r.memory_ceilings.values()])
        merged = {}
        for label, value in r.compute_ceilings.items():  # FP16 and BF16 often share a rate: one line
            merged.setdefault(value, []).append(label)
        for value, labels in merged.items():
            label = " / ".join(labels) if len(labels) < 2 or not all(" " in x for x in labels) else \
                " / ".join(x.split(" ", 1)[0] for x in labels) + " " + labels[0].split(" ", 1)[1]
            if not distinct(value, r.peak_flops):
                continue
            bandwidth = r.peak_bandwidth if value < r.peak_flops else widest
            y = np.minimum(value, ai * bandwidth)
            ax.plot(ai, y / scale, linestyle=style, color=color, linewidth=0.8, alpha=0.6)
            if value in labelled:
                continue
            labelled.add(value)
            text = f"{_ceiling_name(label, spec, info)} {format_rate(value)}"
            if spec:   # at the right edge, or, where points crowd it there, left of the ceiling's knee
                x_text, dx = ceiling_label_x(text, value, value / bandwidth, xlim, ax.get_ylim(), scale, every)
            else:
                x_text, dx = max(value / r.peak_bandwidth * 1.3, xlim[0]), 2
            ax.annotate(text, (x_text, value / scale), fontsize=8, color=color,
                        ha="right" if spec else "left", va="bottom", xytext=(dx, 1), textcoords="offset points")
        # The other memory ceilings run parallel and close together: too close for a label on
        # each line, so one legend entry names them all, in the order they are drawn, top down.
        thin = sorted(((bw, label) for label, bw in r.memory_ceilings.items() if distinct(bw, r.peak_bandwidth)),
                      reverse=True)
        names = ", ".join(f"{label} {format_rate(v, 'B/s')}" for v, label in thin)
        for k, (bw, _) in enumerate(thin):
            ax.plot(ai, np.minimum(ai * bw, r.peak_flops) / scale, linestyle=style, color=color,
                    linewidth=0.8, alpha=0.6,
                    label=None if k else f"its other kernels' bandwidths (thin lines, top down): {names}")
        x_text = xlim[1] if spec else r.ridge * 1.3
        if r.peak_flops not in labelled:
            labelled.add(r.peak_flops)
            ax.annotate(f"{main_c} {format_rate(r.peak_flops)}", (x_text, r.peak_flops / scale),
                        fontsize=8.5, color=color, ha="right" if spec else "left", va="bottom",
                        xytext=(-2 if spec else 2, 2), textcoords="offset points", fontweight="bold")
        under = below is not None or not spec
        x0 = along(r, 0.45 - 0.15 * below if below is not None else 0.6 if spec else 0.35)
        ax.annotate(f"{main_m} {format_rate(r.peak_bandwidth, 'B/s')}", (x0, x0 * r.peak_bandwidth / scale),
                    fontsize=8.5, color=color, fontweight="bold", textcoords="offset points",
                    ha="left" if under else "right", va="top" if under else "bottom",
                    xytext=(6, -4) if under else (-4, 4))
        ax.plot([r.ridge, r.ridge], [bottom / scale, r.peak_flops / scale], color=color, linestyle=":",
                linewidth=1)
        ax.annotate(f"ridge {r.ridge:.3g} FLOP/byte", (r.ridge, bottom / scale), fontsize=8, color=color,
                    rotation=90, ha="right", va="bottom", xytext=(-2, 3), textcoords="offset points")

    if roof is not None:
        cpu_peaks = ran_on_cpu(info) and roof.name in ("", info.get("name"))
        if cpu_peaks:   # the device's cached peaks: name how they were measured
            methods = [m for m in (peak_method(info, "flops"), peak_method(info, "bandwidth")) if m]
            tag = (f"{info.get('name', 'this CPU')} measured roof (measured once, cached"
                   + (f": best {' and best '.join(methods)})" if methods else ")"))
        elif roof.name.endswith(("spec sheet", "measured roof", "set by the sliders")):
            tag = roof.name
        else:
            tag = "spec sheet" + (f" ({roof.name})" if roof.name and roof.name != info.get("name") else "")
        draw(roof, "-", SPEC_COLOR, tag, spec=True, thin_source=_cpu_fp64_source(roof, info) if cpu_peaks else "")
    for j, (run, r) in enumerate(zip(refs, ref_roofs)):
        draw(r, "-", REFERENCE_COLOR, f"{r.name} ({reference_label(run).split(', ', 1)[1]})", spec=True, below=j % 3)
    if measured is not None:
        ref = measured_result is not None and _is_reference(measured_result)
        draw(measured, "--", REFERENCE_COLOR if ref else MEASURED_COLOR,
             "measured roof" + (" (reference)" if ref else ""), spec=roof is None)
    annotate = len(pts) <= 4 if annotate_points is None else annotate_points
    for i, (label, x, y, ref) in enumerate(pts):
        color = REFERENCE_COLOR if ref else f"C{i % 10}"
        ax.plot([x], [y / scale], marker=MARKERS[i % len(MARKERS)], linestyle="none", markersize=6,
                color=color, markerfacecolor="none" if ref else color,
                label=label + (" (reference)" if ref else ""))
        if annotate:
            ax.annotate(label, (x, y / scale), fontsize=8, xytext=(5, -3), textcoords="offset points",
                        color="0.3", va="top")
    for j, (run, group) in enumerate(zip(refs, ref_pts)):
        if group:
            ax.plot([p[1] for p in group], [p[2] / scale for p in group], linestyle="none", markersize=6,
                    marker=MARKERS[(len(pts) + j) % len(MARKERS)], color=REFERENCE_COLOR,
                    markerfacecolor="none", label=f"measurements ({reference_label(run)})")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel(f"attainable throughput ({unit})")
    named = [g for g in (measured_result, *groups) if g is not None]
    every_device = named and _is_reference(named[0])   # the reference page: name all its devices
    ax.set_title(title or device_title("Roofline", *named, *(refs if every_device else []), device=device))
    if own_figure:   # below the chart, so the chart keeps the page's width; long entries wrapped
        _legend_below(fig, *ax.get_legend_handles_labels(), ncol=2 if len(pts) + len(refs) > 3 else 1)
    else:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
                  ncol=1 if len(pts) < 14 else 2)
    _style(ax)
    return fig


CHAR_WIDTH = 0.009    # one character of a size-8 label, as a share of the chart's width
LABEL_HEIGHT = 0.04   # a label's height above its line, as a share of the chart's height
MARKER_SIZE = 0.015   # a marker's half-height, as a share of the chart's height


def ceiling_label_x(text: str, value: float, knee: float, xlim, ylim, scale: float, points) -> tuple:
    """(x, offset in points) for a spec roof's thin compute-ceiling label, right-aligned above its
    line: at the chart's right edge, unless a point (``(label, intensity, FLOP/s, ref)`` tuples)
    would sit under the text there; then just left of the ceiling's knee (intensity ``knee``),
    above the slanted roof, where no point can be, if the label fits there."""
    span_x = math.log10(xlim[1] / xlim[0])
    span_y = math.log10(ylim[1] / ylim[0])
    width = len(text) * CHAR_WIDTH * span_x
    y = math.log10(value / scale)
    lo, hi = y - MARKER_SIZE * span_y, y + (LABEL_HEIGHT + MARKER_SIZE) * span_y

    def crowded(right):
        return any(math.log10(right) - width <= math.log10(x) <= math.log10(right) and
                   lo <= math.log10(rate / scale) <= hi for _, x, rate, _ in points)

    if not crowded(xlim[1]):
        return xlim[1], -2
    if math.log10(knee) - width > math.log10(xlim[0]) and not crowded(knee):
        return knee, -4
    return xlim[1], -2


def _ceiling_name(label: str, spec: bool, info: dict) -> str:
    """A GPU spec sheet's 'FP64' is its rate without tensor cores (a DGEMM may use its FP64 tensor cores):
    say so; every other ceiling's label as it is."""
    return "FP64 (no tensor cores)" if label == "FP64" and spec and not ran_on_cpu(info) else label


def _cpu_fp64_source(roof, info) -> str:
    """'; thin line: FP64 88.5 GFLOP/s, the same 2048x2048 np.matmul in float64': the float64
    ceiling of a CPU's cached peaks, measured with them ('' without one)."""
    fp64 = roof.compute_ceilings.get("FP64")
    if not fp64 or 0.87 < fp64 / roof.peak_flops < 1.15:
        return ""
    method = peak_method(info, "flops")
    return f"; thin line: FP64 {format_rate(fp64)}, the same {method or 'matmul'} in float64"


def _roof_of(run):
    """The roof a reference run is judged against: its spec sheet, its measured roof, or
    (for runs that measured no roof, e.g. a profile) the peaks saved with its device."""
    try:
        return Roofline.of_run(run)
    except ValueError:
        roof = Roofline.from_summary(_meta(run).get("device") or {})
        roof.name = f"{roof.name} peaks"
        return roof
