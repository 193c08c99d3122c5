"""Figures from measurements: the roofline, sweeps, the repeat sweep, bandwidth and matmul vs size.

Every function takes data (a :class:`brrr.Result`, a DataFrame, records, or a
:class:`brrr.Roofline`) and an optional matplotlib ``ax``, draws, and returns
the Figure. Nothing here measures: load a saved result and the same figure
comes back. Units go in the axis labels; FLOP/s and bytes pick their prefix
from the data (GFLOP/s or TFLOP/s; KiB, MiB, GiB).
"""
from __future__ import annotations

import functools
import math

import numpy as np

SPEC_COLOR = "0.15"
MEASURED_COLOR = "tab:orange"
REFERENCE_COLOR = "0.55"
REFERENCE_MARKERS = "os^Dv<>"  # reference series are grey: markers and shades tell them apart
REFERENCE_SHADES = (REFERENCE_COLOR, "0.3", "0.75")
STYLE = {"figure.dpi": 100, "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9,
         "legend.fontsize": 8, "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False,
         "axes.spines.right": False}

LABELS = {
    "nbytes": "bytes moved per call", "working_set": "working set", "size": "size (elements)",
    "n": "matrix size n", "repeat": "repeat (multiplications per element)",
    "seconds": "time per call", "gbps": "bandwidth (GB/s)", "gflops": "throughput (GFLOP/s)",
    "intensity": "arithmetic intensity (FLOP/byte)", "fraction_of_peak": "fraction of peak",
    "batch": "batch size (rows)", "mfu": "MFU (% of peak FLOP/s)",
}
BYTE_COLUMNS = {"nbytes", "working_set"}


def _styled(fn):
    """Draw inside the module's small, consistent matplotlib style."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        import matplotlib
        import matplotlib.pyplot as plt
        plt.get_backend()  # load the backend (and its rc settings) outside the context
        with plt.rc_context(STYLE):
            result = fn(*args, **kwargs)
            # The first figure may switch on interactive mode (Jupyter's inline backend);
            # leaving rc_context would switch it off again and no later figure would show.
            interactive = matplotlib.is_interactive()
        matplotlib.interactive(interactive)
        return result
    return wrapper


# --- units -------------------------------------------------------------------------

def flops_unit(value: float):
    """('TFLOP/s', 1e12)-style unit and scale for FLOP/s values around ``value``."""
    for name, scale in (("PFLOP/s", 1e15), ("TFLOP/s", 1e12), ("GFLOP/s", 1e9), ("MFLOP/s", 1e6)):
        if value >= scale:
            return name, scale
    return "FLOP/s", 1.0


def format_bytes(nbytes: float) -> str:
    """'4 KiB', '1.5 MiB', '2 GiB'."""
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.3g} B"


def format_rate(value: float, unit: str = "FLOP/s") -> str:
    if unit == "FLOP/s":
        name, scale = flops_unit(value)
        return f"{value / scale:.3g} {name}"
    return f"{value / 1e12:.3g} TB/s" if value >= 1e12 else f"{value / 1e9:.3g} GB/s"


def _bytes_axis(axis):
    """Log axis of bytes with ticks at powers of 4 labelled KiB / MiB / GiB."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.set_major_locator(LogLocator(base=4, numticks=30))
    axis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v)))
    axis.set_minor_formatter(NullFormatter())


def _seconds_axis(axis):
    from matplotlib.ticker import FuncFormatter
    from .timing import format_seconds
    axis.set_major_formatter(FuncFormatter(lambda v, _: format_seconds(v) if v > 0 else "0"))


def _log_axis(axis):
    """Plain numbers ('20', '300') on a log axis instead of 2x10^1."""
    from matplotlib.ticker import LogFormatter
    axis.set_major_formatter(LogFormatter(labelOnlyBase=False))
    axis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1.2, 0.5)))


def _percent_axis(axis):
    """A fraction axis labelled in percent ('0.1%', '25%'), log or linear."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    if axis.get_scale() == "log":   # 1%, 2%, 5%, 10%, ...: a tick in every span of a few percent
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:.3g}%"))
    axis.set_minor_formatter(NullFormatter())


def _power2_axis(axis):
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.set_major_locator(LogLocator(base=2, numticks=30))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


# --- data in -----------------------------------------------------------------------

def _frame(data):
    """A DataFrame from a Result, a DataFrame, a list of records or one record."""
    import pandas as pd
    if hasattr(data, "records") and hasattr(data, "meta"):
        return pd.DataFrame(data.records)
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, dict):
        return pd.DataFrame([data])
    if isinstance(data, (list, tuple)):
        return pd.DataFrame(list(data))
    raise TypeError(f"expected a brrr.Result, a DataFrame or a list of records, got {type(data).__name__}")


def _meta(data) -> dict:
    return dict(getattr(data, "meta", {}) or {})


def _is_reference(data) -> bool:
    return bool(_meta(data).get("reference"))


def _references(reference) -> list:
    """The reference runs to draw: None -> [], a Result -> [it], a list of Results as is."""
    if reference is None:
        return []
    runs = [reference] if hasattr(reference, "records") else list(reference)
    for run in runs:
        if not (hasattr(run, "records") and hasattr(run, "meta")):
            raise TypeError(f"reference must be brrr Results (from brrr.reference), got {type(run).__name__}")
    return runs


def reference_label(run) -> str:
    """'NVIDIA H100 80GB HBM3, reference 2026-11-22': which device, and that it is not live."""
    meta = _meta(run)
    name = (meta.get("device") or {}).get("name", "reference device")
    when = meta.get("date", "")[:10]
    return f"{name}, reference{' ' + when if when else ''}"


def _live_label(data) -> str:
    """'AMD EPYC (2 threads), this run': the live series' legend entry beside references."""
    name = (_meta(data).get("device") or {}).get("name")
    return f"{name}, this run" if name else "this run"


def _device_info(*sources, device=None) -> dict:
    """{'name', 'backend'} from an explicit device (dict or Device) or the first result with meta."""
    if device is not None:
        if hasattr(device, "backend"):
            return {"name": device.name, "backend": device.backend}
        if isinstance(device, dict):
            return device
        raise TypeError(f"device must be a brrr.Device or its summary dict, got {type(device).__name__}")
    for s in sources:
        info = _meta(s).get("device")
        if info:
            return info
    return {}


def device_title(text: str, *sources, device=None) -> str:
    """'text: DEVICE' plus '(measured on CPU)' or '(reference)' where that applies."""
    info = _device_info(*sources, device=device)
    title = text
    if info.get("name"):
        title += f": {info['name']}"
    if info.get("backend") == "cpu":
        title += " (measured on CPU)"
    if any(_is_reference(s) for s in sources):
        when = next((_meta(s).get("date", "")[:10] for s in sources if _is_reference(s)), "")
        title += f" (reference run{', ' + when if when else ''})"
    return title


def _new_axes(ax, ncols=1, figsize=None):
    import matplotlib.pyplot as plt
    if ax is not None:
        return ax.figure, ax
    fig, axes = plt.subplots(1, ncols, figsize=figsize or (6.4 if ncols == 1 else 4.2 * ncols, 4.2),
                             layout="constrained")
    return fig, axes


def _style(ax):
    ax.grid(True, which="major", alpha=0.3)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


# --- the roofline --------------------------------------------------------------------

def _series_style(i: int, ref: bool, marker: str = "o") -> dict:
    """Line style of the i-th series: colour cycle when live; grey, dashed, hollow and told
    apart by marker shape when it is a shipped reference run."""
    if ref:
        return dict(color=REFERENCE_SHADES[i % len(REFERENCE_SHADES)], linestyle="--", markerfacecolor="none",
                    marker=REFERENCE_MARKERS[i % len(REFERENCE_MARKERS)])
    return dict(color=f"C{i}", linestyle="-", marker=marker)


def _main_label(ceilings: dict, value: float, default: str) -> str:
    for label, v in ceilings.items():
        if math.isclose(v, value, rel_tol=1e-9):
            return label
    return default


def _points(points):
    """(label, intensity FLOP/byte, FLOP/s, reference) for every record with FLOPs, bytes, seconds."""
    if points is None:
        return []
    groups = points if isinstance(points, (list, tuple)) and points and hasattr(points[0], "records") \
        else [points]
    out = []
    for group in groups:
        ref = _is_reference(group)
        frame = _frame(group)
        for col in ("flops", "nbytes", "seconds"):
            if col not in frame:
                raise ValueError(f"points need a {col!r} field per record (FLOPs, bytes, seconds)")
        for rec in frame.to_dict("records"):
            if not rec["flops"] or not rec["nbytes"] or not rec["seconds"]:
                continue  # a copy does no FLOPs: it has no place on a log FLOP/s axis
            out.append((_point_label(rec), rec["flops"] / rec["nbytes"], rec["flops"] / rec["seconds"], ref))
    return out


def _point_label(rec: dict) -> str:
    if rec.get("label"):
        return str(rec["label"])
    op = rec.get("op", "")
    if op == "matmul":
        return f"matmul n={rec.get('n', rec.get('size'))}" + (" TC" if rec.get("tensor_cores") else "")
    if rec.get("variant"):
        return f"{rec['variant']} x{rec.get('repeat')}"
    return f"{op} {format_bytes(rec['nbytes'])}".strip()


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
        a copy, are skipped), or a list of Results. Every point gets a legend
        entry; with four points or fewer they are also labelled on the plot
        (``annotate_points`` overrides).
    measured : the measured roof, dashed: a Roofline or a ``measure_roofline`` Result.
    device : a Device or its summary dict, for the title (default: from the results' meta).

    reference : reference runs (from :mod:`brrr.reference`): each adds its device's
        roof (:meth:`Roofline.of_run`: the spec sheet of a known GPU) and its points,
        grey and hollow, one legend entry per device.

    Results marked ``reference`` (shipped with the book) are drawn grey and
    hollow, and say "reference" in the legend and title.
    """
    from .roofline import Roofline
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
    ref_pts = [[p for p in _points(run)] for run in refs]
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

    def draw(r, style, color, tag, spec):
        ax.plot(ai, r.attainable(ai) / scale, linestyle=style, color=color, linewidth=2,
                label=f"{tag}: {format_rate(r.peak_flops)}, {format_rate(r.peak_bandwidth, 'B/s')}")
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
            y = np.minimum(value, ai * (r.peak_bandwidth if value < r.peak_flops else widest))
            ax.plot(ai, y / scale, linestyle=style, color=color, linewidth=0.8, alpha=0.6)
            x_text = xlim[1] if spec else max(value / r.peak_bandwidth * 1.3, xlim[0])
            ax.annotate(f"{label} {format_rate(value)}", (x_text, value / scale), fontsize=7, color=color,
                        ha="right" if spec else "left", va="bottom", xytext=(-2 if spec else 2, 1),
                        textcoords="offset points")
        for label, bw in r.memory_ceilings.items():
            if not distinct(bw, r.peak_bandwidth):
                continue
            ax.plot(ai, np.minimum(ai * bw, r.peak_flops) / scale, linestyle=style, color=color,
                    linewidth=0.8, alpha=0.6)
        main_c = _main_label(r.compute_ceilings, r.peak_flops, "peak")
        x_text = xlim[1] if spec else r.ridge * 1.3
        ax.annotate(f"{main_c} {format_rate(r.peak_flops)}", (x_text, r.peak_flops / scale),
                    fontsize=7.5, color=color, ha="right" if spec else "left", va="bottom",
                    xytext=(-2 if spec else 2, 2), textcoords="offset points", fontweight="bold")
        main_m = _main_label(r.memory_ceilings, r.peak_bandwidth, "bandwidth")
        x0 = along(r, 0.6 if spec else 0.35)
        ax.annotate(f"{main_m} {format_rate(r.peak_bandwidth, 'B/s')}", (x0, x0 * r.peak_bandwidth / scale),
                    fontsize=7.5, color=color, fontweight="bold", textcoords="offset points",
                    ha="right" if spec else "left", va="bottom" if spec else "top",
                    xytext=(-4, 4) if spec else (6, -4))
        ax.plot([r.ridge, r.ridge], [bottom / scale, r.peak_flops / scale], color=color, linestyle=":",
                linewidth=1)
        ax.annotate(f"ridge {r.ridge:.3g} FLOP/byte", (r.ridge, bottom / scale), fontsize=7, color=color,
                    rotation=90, ha="right", va="bottom", xytext=(-2, 3), textcoords="offset points")

    if roof is not None:
        cpu_peaks = info.get("backend") == "cpu" and roof.name in ("", info.get("name"))
        if cpu_peaks:
            tag = f"{info.get('name', 'this CPU')} measured roof (measured once, cached)"
        elif roof.name.endswith(("spec sheet", "measured roof")):
            tag = roof.name
        else:
            tag = "spec sheet" + (f" ({roof.name})" if roof.name and roof.name != info.get("name") else "")
        draw(roof, "-", SPEC_COLOR, tag, spec=True)
    for run, r in zip(refs, ref_roofs):
        draw(r, "-", REFERENCE_COLOR, f"{r.name} ({reference_label(run).split(', ', 1)[1]})", spec=True)
    if measured is not None:
        ref = measured_result is not None and _is_reference(measured_result)
        draw(measured, "--", REFERENCE_COLOR if ref else MEASURED_COLOR,
             "measured roof" + (" (reference)" if ref else ""), spec=roof is None)
    markers = "osD^vP*X<>"
    annotate = len(pts) <= 4 if annotate_points is None else annotate_points
    for i, (label, x, y, ref) in enumerate(pts):
        color = REFERENCE_COLOR if ref else f"C{i % 10}"
        ax.plot([x], [y / scale], marker=markers[i % 9], linestyle="none", markersize=6,
                color=color, markerfacecolor="none" if ref else color,
                label=label + (" (reference)" if ref else ""))
        if annotate:
            ax.annotate(label, (x, y / scale), fontsize=7, xytext=(5, -3), textcoords="offset points",
                        color="0.3", va="top")
    for j, (run, group) in enumerate(zip(refs, ref_pts)):
        if group:
            ax.plot([p[1] for p in group], [p[2] / scale for p in group], linestyle="none", markersize=6,
                    marker=REFERENCE_MARKERS[j % len(REFERENCE_MARKERS)], color=REFERENCE_COLOR,
                    markerfacecolor="none", label=f"measurements ({reference_label(run)})")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel(f"attainable throughput ({unit})")
    ax.set_title(title or device_title("Roofline", measured_result, *groups, device=device))
    if own_figure:   # below the chart, so the chart keeps the page's width
        fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", frameon=False,
                   ncol=2 if len(pts) + len(refs) > 3 else 1, fontsize=7)
    else:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
                  ncol=1 if len(pts) < 14 else 2)
    _style(ax)
    return fig


def _roof_of(run):
    """The roof a reference run is judged against: its spec sheet, its measured roof, or
    (for runs that measured no roof, e.g. a profile) the peaks saved with its device."""
    from .roofline import Roofline
    try:
        return Roofline.of_run(run)
    except ValueError:
        roof = Roofline.from_summary(_meta(run).get("device") or {})
        roof.name = f"{roof.name} peaks"
        return roof


# --- generic sweeps ------------------------------------------------------------------

@_styled
def sweep(data, x, y, hue=None, logx=True, logy=True, ax=None, xlabel=None, ylabel=None,
          title=None, marker="o", reference=None):
    """Line plot of column ``y`` against ``x``, one line per value of ``hue``.

    ``data`` is a Result, DataFrame or list of records. Byte columns get
    KiB/MiB/GiB ticks and a 'seconds' axis gets us/ms/s ticks. ``reference``
    (Results from :mod:`brrr.reference`) adds the same columns of each reference
    run, grey, dashed and hollow, its device and date in the legend; the live
    series then say 'this run'.
    """
    frame = _frame(data)
    refs = _references(reference)
    for name, col in (("x", x), ("y", y)) + ((("hue", hue),) if hue else ()):
        if col not in frame:
            raise ValueError(f"{name}={col!r} is not a column; the data has {list(frame.columns)}")
    fig, ax = _new_axes(ax)
    series = [(data, frame, _is_reference(data))] + [(run, _frame(run), True) for run in refs]
    for j, (run, part_frame, ref) in enumerate(series):
        if part_frame.empty or x not in part_frame or y not in part_frame:
            continue
        groups = part_frame.groupby(hue, sort=False) if hue and hue in part_frame else [(None, part_frame)]
        who = reference_label(run) if ref else (_live_label(data) if refs else None)
        for i, (key, part) in enumerate(groups):
            part = part.sort_values(x)
            label = None if key is None else f"{hue}={key}" if not isinstance(key, str) else key
            if who:
                label = f"{label} ({who})" if label else who
            style = _series_style(j - (0 if _is_reference(data) else 1) if ref else i, ref, marker)
            if ref and hue:
                style["alpha"] = 0.5 + 0.5 * (i + 1) / len(groups)
            ax.plot(part[x], part[y], markersize=4, label=label, **style)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    if x in BYTE_COLUMNS and logx:
        _bytes_axis(ax.xaxis)
    if x in ("n", "repeat", "batch") and logx:
        _power2_axis(ax.xaxis)
    if y == "seconds":
        _seconds_axis(ax.yaxis)
    elif y == "mfu":
        _percent_axis(ax.yaxis)
    elif logy:
        _log_axis(ax.yaxis)
    ax.set_xlabel(xlabel or LABELS.get(x, x) + (" (bytes)" if x in BYTE_COLUMNS else ""))
    ax.set_ylabel(ylabel or LABELS.get(y, y))
    ax.set_title(title or device_title(getattr(data, "name", "") or f"{y} vs {x}", data))
    if hue or refs or _is_reference(data):
        ax.legend(frameon=False, fontsize=7)
    _style(ax)
    return fig


# --- the pointwise-repeat sweep --------------------------------------------------------

@_styled
def repeat_sweep(result, axes=None, title=None, reference=None):
    """Three panels against ``repeat``: runtime, achieved FLOP/s and achieved bandwidth.

    One line per variant (fused, eager). The roofline-predicted knee (where the
    fused chain's intensity meets the ridge, ``meta['predicted_knee']``) is a
    dotted vertical line, the knee read off the fused runtimes
    (``meta['measured_knee']``) a dash-dotted one. ``reference`` runs of the same
    sweep are drawn grey, with their predicted knee in grey.
    """
    refs = _references(reference)
    runs = [(result, _is_reference(result))] + [(run, True) for run in refs]
    frames = [_frame(run) for run, _ in runs]
    for col in ("repeat", "seconds", "flops", "nbytes"):
        if col not in frames[0]:
            raise ValueError(f"repeat_sweep needs a {col!r} column (from pointwise_repeat_sweep)")
    legend_ax = None
    if axes is None:   # a 2 x 2 grid: three panels and the legend, readable at the page's width
        import matplotlib.pyplot as plt
        fig, grid = plt.subplots(2, 2, figsize=(9.0, 7.5), layout="constrained")
        axes, legend_ax = [grid[0, 0], grid[0, 1], grid[1, 0]], grid[1, 1]
    else:
        axes = list(axes)
        if len(axes) != 3:
            raise ValueError(f"axes must be three matplotlib axes, got {len(axes)}")
        fig = axes[0].figure
    top = max(float((f["flops"] / f["seconds"]).max()) for f in frames if len(f))
    unit, scale = flops_unit(top)
    panels = ((lambda f: f["seconds"], "runtime per call"),
              (lambda f: f["flops"] / f["seconds"] / scale, f"achieved throughput ({unit})"),
              (lambda f: f["nbytes"] / f["seconds"] / 1e9, "achieved bandwidth (GB/s)"))
    for ax, (fn, ylabel) in zip(axes, panels):
        for j, ((run, ref), frame) in enumerate(zip(runs, frames)):
            variants = list(dict.fromkeys(frame["variant"])) if "variant" in frame else [None]
            who = reference_label(run) if ref else (_live_label(run) if refs else "")
            for i, variant in enumerate(variants):
                part = frame if variant is None else frame[frame["variant"] == variant]
                part = part.sort_values("repeat")
                label = f"{variant or 'measured'}" + (f" ({who})" if who else "")
                style = _series_style(j - (0 if _is_reference(result) else 1) if ref else i, ref)
                if ref:
                    style["linestyle"] = "--" if variant != "eager" else ":"
                ax.plot(part["repeat"], fn(part), markersize=4, label=label, **style)
            meta = _meta(run)
            predicted = meta.get("predicted_knee")
            if predicted:
                ax.axvline(predicted, color=REFERENCE_COLOR if ref else "0.3", linestyle=":", linewidth=1.2,
                           label=f"roofline knee ({predicted:.3g}{', ' + who if ref else ''})")
            knee = meta.get("measured_knee") if "measured_knee" in meta else None
            if knee and not ref:
                ax.axvline(knee, color="tab:red", linestyle="-.", linewidth=1.2,
                           label=f"measured knee ({knee:.3g})")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        _power2_axis(ax.xaxis)
        ax.set_xlabel(LABELS["repeat"])
        ax.set_ylabel(ylabel)
        _style(ax)
    _seconds_axis(axes[0].yaxis)
    _log_axis(axes[1].yaxis)
    _log_axis(axes[2].yaxis)
    axes[0].set_title("runtime")
    axes[1].set_title("FLOP/s")
    axes[2].set_title("memory bandwidth")
    handles, labels = axes[0].get_legend_handles_labels()
    if legend_ax is not None:
        legend_ax.axis("off")
        legend_ax.legend(handles, labels, loc="center", frameon=False, fontsize=8)
    else:
        fig.legend(handles, labels, loc="outside lower center", ncol=min(3, len(labels)), frameon=False,
                   fontsize=7)
    meta = _meta(result)
    frame = frames[0]
    n = meta.get("n") or (int(frame["n"].iloc[0]) if "n" in frame else None)
    what = f"x = x * 2, repeated ({n:,} {meta.get('dtype', '')} elements)" if n else "x = x * 2, repeated"
    fig.suptitle(title or device_title(what, result))
    return fig


# --- bandwidth and matmul against size -------------------------------------------------

@_styled
def bandwidth_vs_size(result, ax=None, title=None, reference=None):
    """Copy bandwidth (GB/s) against working set (bytes), with the cache sizes marked.

    Dotted vertical lines mark each cache level of the live device from
    ``meta['caches']``; a dashed horizontal line marks each device's DRAM peak
    (spec on a GPU, measured on a CPU) from ``meta['device']``. ``reference``
    runs are drawn grey; with them the bandwidth axis is logarithmic, since a
    CPU and a GPU differ a hundredfold.
    """
    frame = _frame(result)
    refs = _references(reference)
    x = "working_set" if "working_set" in frame else "nbytes"
    fig = sweep(result, x, "gbps", hue=None, logx=True, logy=bool(refs), ax=ax, reference=refs,
                ylabel="copy bandwidth (GB/s)", xlabel="working set (bytes, source + destination)")
    ax = fig.axes[0] if ax is None else ax
    meta = _meta(result)
    lo, hi = frame[x].min(), frame[x].max()
    for i, (level, size) in enumerate(sorted((meta.get("caches") or {}).items(), key=lambda kv: kv[1])):
        if lo / 2 <= size <= hi * 2:
            ax.axvline(size, color="0.45", linestyle=":", linewidth=1)
            ax.annotate(f"{level} {format_bytes(size)}", (size, 0.0), xycoords=("data", "axes fraction"),
                        fontsize=7, rotation=90, ha="right", va="bottom", color="0.35", xytext=(-2, 3),
                        textcoords="offset points")
    for run, ref in [(result, _is_reference(result))] + [(r, True) for r in refs]:
        dev = _meta(run).get("device") or {}
        if dev.get("peak_bandwidth"):
            kind = "measured" if dev.get("backend") == "cpu" else "spec"
            who = f"{dev.get('name', '')}: " if refs else ""
            ax.axhline(dev["peak_bandwidth"] / 1e9, color=REFERENCE_COLOR if ref else SPEC_COLOR,
                       linestyle="--", linewidth=1,
                       label=f"{who}DRAM peak, {kind} ({format_rate(dev['peak_bandwidth'], 'B/s')})")
    ax.legend(frameon=False, loc="best", fontsize=7)
    if not refs:
        ax.set_ylim(bottom=0)
    ax.set_title(title or device_title("Copy bandwidth vs working set", result))
    return fig


@_styled
def matmul_vs_size(result, ax=None, title=None, fraction=False, reference=None):
    """Square-matmul FLOP/s against n, with the device's peak for that dtype as a dashed line.

    ``fraction=True`` plots the fraction of peak (MFU-style) instead of FLOP/s.
    ``reference`` runs of the same sweep are drawn grey with their own peak line.
    """
    refs = _references(reference)

    def prepared(run):
        frame = _frame(run).copy()
        if "flops" not in frame or "seconds" not in frame:
            raise ValueError("matmul_vs_size needs 'flops' and 'seconds' columns (from matmul_vs_size)")
        frame["flops_per_s"] = frame["flops"] / frame["seconds"]
        return frame

    frames = [prepared(result)] + [prepared(run) for run in refs]
    peaks = [float(f["peak_flops"].max()) if "peak_flops" in f else None for f in frames]
    if fraction and any(p is None for p in peaks):
        raise ValueError("fraction=True needs a 'peak_flops' column")
    top = max(max(f["flops_per_s"].max() for f in frames), max((p or 0) for p in peaks))
    unit, scale = flops_unit(top)
    for f in frames:
        f["rate"] = f["flops_per_s"] / f["peak_flops"] if fraction else f["flops_per_s"] / scale
    hue = "dtype" if "dtype" in frames[0] and any(f["dtype"].nunique() > 1 for f in frames) else None
    x = "n" if "n" in frames[0] else "size"
    fig = sweep(_Reframed(frames[0], result), x, "rate", hue=hue, logx=True, logy=True, ax=ax,
                reference=[_Reframed(f, run) for f, run in zip(frames[1:], refs)],
                xlabel="matrix size n (n x n times n x n)",
                ylabel="fraction of peak" if fraction else f"throughput ({unit})")
    ax = fig.axes[0] if ax is None else ax
    if fraction:
        ax.axhline(1.0, color=SPEC_COLOR, linestyle="--", linewidth=1)
    else:
        for run, peak, ref in zip([result, *refs], peaks, [_is_reference(result)] + [True] * len(refs)):
            if not peak:
                continue
            dev = _meta(run).get("device") or {}
            kind = "measured" if dev.get("backend") == "cpu" else "spec"
            who = f"{dev.get('name', '')}: " if refs else ""
            ax.axhline(peak / scale, color=REFERENCE_COLOR if ref else SPEC_COLOR, linestyle="--",
                       linewidth=1, label=f"{who}peak, {kind} ({peak / scale:.3g} {unit})")
        ax.legend(frameon=False, loc="best", fontsize=7)
    dtype = frames[0]["dtype"].iloc[0] if "dtype" in frames[0] else ""
    ax.set_title(title or device_title(f"Matmul throughput vs size ({dtype})", result))
    return fig


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
        kind = "measured" if (_meta(run).get("device") or {}).get("backend") == "cpu" else "spec"
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


class _Reframed:
    """A frame that keeps the meta of the result it came from (for titles and reference style)."""

    def __init__(self, frame, result):
        self.records = frame.to_dict("records")
        self.meta = _meta(result)
        self.name = getattr(result, "name", "")


def save(fig, path: str, dpi: int = 150) -> str:
    """Write ``fig`` to ``path`` (PNG, SVG, PDF by extension); returns the path."""
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    return path


# --- bars (added for chapters 1 and 3) -------------------------------------------------

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
    from .timing import format_seconds
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


# --- fusion (chapter 4) -----------------------------------------------------------------

FUSION_OPS = {"mul": "x * c", "add": "x + c", "fma": "x * c + d", "cos": "cos(x)"}


def _fusion_runs(runs) -> list:
    return [runs] if hasattr(runs, "records") else [r for r in runs if r is not None]


def _fusion_legend(fig, ax, own: bool, loc: str):
    """Inside the axes for the live run alone; below them when references add entries."""
    if own:
        handles, labels = ax.get_legend_handles_labels()
        fig.legend(handles, labels, frameon=False, fontsize=7, loc="outside lower center", ncol=2)
    else:
        ax.legend(frameon=False, fontsize=7, loc=loc)


@_styled
def fusion_speedups(runs, reference=None, ax=None, title=None):
    """The speed-up of fusing a chain of k pointwise ops (unfused time / fused time) against k.

    ``runs`` is one :func:`brrr.experiments.fusion_speedup` result or several (e.g. the
    hand-written kernels and ``torch.compile``): one solid line per fuser. The roofline's
    prediction for the live device is dashed, and the chain length where its fused kernel
    reaches the ridge point (``meta['crossover_k']``) a dotted vertical line. ``reference``
    runs of the same sweeps are drawn grey and hollow, with their own prediction and ridge
    line in grey.
    """
    from .experiments.fusion import speedups
    live, refs = _fusion_runs(runs), _references(reference)
    if not live:
        raise ValueError("runs must hold at least one fusion_speedup result")
    fig, ax = _new_axes(ax)
    groups = [(run, False) for run in live] + [(run, True) for run in refs]
    i_live = i_ref = 0
    predicted_for = {}   # device name -> (ks, predicted speed-ups, crossover, reference?)
    for run, ref in groups:
        ref = ref or _is_reference(run)
        table = speedups(run) if len(run.records) else None
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
        ks, pred = predicted_for.get((device, ref), ((), ()))[:2]
        merged = dict(zip(ks, pred))
        merged.update(zip(table["k"], table["predicted_speedup"]))
        predicted_for[(device, ref)] = (sorted(merged), [merged[k] for k in sorted(merged)],
                                        _meta(run).get("crossover_k"), who)
    for (device, ref), (ks, pred, crossover, who) in predicted_for.items():
        color = REFERENCE_COLOR if ref else SPEC_COLOR
        ax.plot(ks, pred, color=color, linestyle="--" if not ref else "-.", linewidth=1.2,
                label="roofline prediction" + (f" ({who})" if who else ""))
        if crossover:
            ax.axvline(crossover, color=color, linestyle=":", linewidth=1.2,
                       label=f"fused kernel reaches the ridge (k = {crossover:.3g}"
                             + (f", {device}" if refs else "") + ")")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _power2_axis(ax.xaxis)
    _log_axis(ax.yaxis)
    ax.set_xlabel("k (pointwise ops in the chain)")
    ax.set_ylabel("speed-up of fusing (unfused time / fused time)")
    op = next((r["op"] for run in live for r in run.records), "mul")
    what = {"mul": "multiplications", "add": "additions", "fma": "multiply-adds", "cos": "cosines"}.get(op, op)
    ax.set_title(title or device_title(f"Fusing k {what}", live[0]))
    _fusion_legend(fig, ax, own=len(fig.axes) == 1 and bool(refs), loc="upper left")
    _style(ax)
    return fig


@_styled
def fusion_times(runs, reference=None, ax=None, title=None):
    """Time per element of the fused kernel against k, one line per op, with the roofline's
    time for the same bytes and FLOPs dashed in the same colour.

    ``runs`` is one :func:`brrr.experiments.fusion_speedup` result or several (e.g. a chain
    of multiplications and one of cosines, on different array sizes: per element they
    compare). ``reference`` runs are drawn grey and hollow, their roofline grey dash-dotted.
    """
    from .experiments.fusion import time_lines
    live, refs = _fusion_runs(runs), _references(reference)
    if not live:
        raise ValueError("runs must hold at least one fusion_speedup result")
    fig, ax = _new_axes(ax)
    i_live = i_ref = 0
    for run, ref in [(run, _is_reference(run)) for run in live] + [(run, True) for run in refs]:
        lines = time_lines(run, per_element=True)
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


# --- chapter 3, overhead ----------------------------------------------------------------

LIBRARY_MARKERS = {"numpy": "o", "torch": "s", "cupy": "^"}
LIBRARY_ORDER = ("numpy", "torch", "cupy")


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
    work equals it (dashed vertical line), in that library's colour. ``reference`` runs
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
    from .timing import format_seconds
    for lib, fit in (fits or {}).items():
        i = LIBRARY_ORDER.index(lib) if lib in LIBRARY_ORDER else len(LIBRARY_ORDER)
        ax.axhline(fit["overhead"], color=f"C{i}", linestyle=":", linewidth=1.2,
                   label=f"{lib}: fixed cost {format_seconds(fit['overhead'])} (dotted); "
                         f"work = fixed cost at {fit['crossover']:,.0f} elements (dashed)")
        if math.isfinite(fit["crossover"]):
            ax.axvline(fit["crossover"], color=f"C{i}", linestyle="--", linewidth=0.9)
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
    time per call and the time per sample. ``reference`` runs are drawn grey, dashed, hollow."""
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


# --- chapter 5: recomputation --------------------------------------------------------------

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
    4/3 estimate (one extra forward pass). ``reference`` runs add their modelled peak and their
    relative step time in grey.
    """
    import matplotlib.pyplot as plt
    refs = _references(reference)
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained")
    else:
        fig = axes[0].figure
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
        if 0 in rows and rows[0].get("min"):
            base = rows[0]["min"]
            style = _series_style(j - 1, True) if ref else dict(color="C0", marker="o")
            right.plot(ck, [rows[e]["min"] / base for e in ck], markersize=4,
                       label=(who or "measured"), **style)
    left.set_yscale("log", base=2)
    _bytes_axis(left.yaxis)
    right.axhline(4 / 3, color=SPEC_COLOR, linestyle="--", linewidth=1, label="estimate: 4/3")
    right.axhline(1, color="0.3", linestyle=":", linewidth=1, label="no checkpointing")
    right.set_ylim(bottom=0)
    for ax in axes:
        _every_axis(ax, everies)
        ax.set_xlabel("segment length: checkpoint every k blocks")
        _style(ax)
    left.set_ylabel("activation memory (bytes)")
    right.set_ylabel("step time / step time without checkpointing")
    left.set_title(title or device_title("Activation memory", result))
    right.set_title("Time of one training step (fastest sample)")
    if refs:  # many entries: below the panels, where they cover no line
        fig.legend(*left.get_legend_handles_labels(), frameon=False, fontsize=7, ncol=2,
                   loc="outside lower center")
    else:
        left.legend(frameon=False, fontsize=7)
    right.legend(frameon=False, fontsize=7, loc="best")
    return fig


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
                label=f"activations at the peak, model ({who})", **model)
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
        frame["seconds"] = frame["min"]
        return _Reframed(frame, run)
    live, others = prepared(result), [prepared(run) for run in refs]
    op, k = (_frame(result)["op"].iloc[0], _frame(result)["k"].iloc[0]) if len(_frame(result)) else ("", "")
    bars(live, label="variant", value="saved for backward (MiB)", ax=axes[0], log=False,
         xlabel="saved for backward (MiB)", reference=others or None,
         title=title or device_title(f"{op} chain, k = {k}", result))
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
