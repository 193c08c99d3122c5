"""Sweeps: one column against another (:func:`sweep`), the pointwise-repeat sweep's three
panels, and the two sweeps over size, copy bandwidth and square-matmul FLOP/s."""
from __future__ import annotations

from ..kernel_source import chain_knee, peak_share
from ..results import ran_on_cpu

from ._base import (BYTE_COLUMNS, LABELS, REFERENCE_COLOR, SPEC_COLOR, flops_unit, format_bytes, format_rate,
                    peak_method, reference_label, _bytes_axis, _frame, _is_reference, _legend_below, _live_label, _log_axis,
                    _meta, _new_axes, _percent_axis, _power2_axis, _references, _Reframed, _seconds_axis,
                    _series_style, _style, _styled, _title)


def _peak_label(dev: dict, kind: str) -> str:
    """'measured once and cached: best np.copyto on 256 MiB' for a CPU's cached peak (what the
    figure's line is, beside a roofline built from an experiment's own kernels), 'spec' for a GPU."""
    if not ran_on_cpu(dev):
        return "spec"
    method = peak_method(dev, kind)
    return f"measured once and cached: best {method}" if method else "measured"


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
    ax.set_title(title or _title(getattr(data, "name", "") or f"{y} vs {x}", data, refs))
    if hue or refs or _is_reference(data):
        ax.legend(frameon=False, fontsize=7)
    _style(ax)
    return fig


# --- the pointwise-repeat sweep ------------------------------------------------------------

@_styled
def repeat_sweep(result, axes=None, title=None, reference=None):
    """Three panels against ``repeat``: runtime, achieved FLOP/s and achieved bandwidth.

    One line per variant (fused, eager). The knee the multiplication roof predicts (a chain of
    multiplications reaches half the FP32 peak of ``meta['roof']``, which counts an FMA as two FLOPs:
    :func:`brrr.kernel_source.chain_knee`) is a dotted vertical line, and that roof is dashed in the
    FLOP/s panel; the knee read off the fused runtimes (``meta['measured_knee']``) is dash-dotted.
    ``reference`` runs of the same sweep are drawn grey, with their predicted knee and roof in grey.
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
    def size_of(run, frame):
        return _meta(run).get("n") or (int(frame["n"].iloc[0]) if "n" in frame and len(frame) else None)
    sizes = [size_of(run, f) for (run, _), f in zip(runs, frames)]
    mixed = len({n for n in sizes if n}) > 1   # runs of other array sizes say theirs in the legend
    top = max(float((f["flops"] / f["seconds"]).max()) for f in frames if len(f))
    unit, scale = flops_unit(top)
    panels = ((lambda f: f["seconds"], "runtime per call"),
              (lambda f: f["flops"] / f["seconds"] / scale, f"achieved throughput ({unit})"),
              (lambda f: f["nbytes"] / f["seconds"] / 1e9, "achieved bandwidth (GB/s)"))
    roofs_drawn = set()
    for ax, (fn, ylabel) in zip(axes, panels):
        for j, ((run, ref), frame, n) in enumerate(zip(runs, frames, sizes)):
            variants = list(dict.fromkeys(frame["variant"])) if "variant" in frame else [None]
            who = reference_label(run) if ref else (_live_label(run) if refs else "")
            size = f"{n:,} elements" if mixed and n else ""   # the title names one size only
            for i, variant in enumerate(variants):
                part = frame if variant is None else frame[frame["variant"] == variant]
                part = part.sort_values("repeat")
                label = f"{variant or 'measured'}" + (f" ({', '.join(w for w in (who, size) if w)})"
                                                      if who or size else "")
                style = _series_style(j - (0 if _is_reference(result) else 1) if ref else i, ref)
                if ref:
                    style["linestyle"] = "--" if variant != "eager" else ":"
                ax.plot(part["repeat"], fn(part), markersize=4, label=label, **style)
            meta = _meta(run)
            roof = meta.get("roof") or {}
            if roof.get("peak_flops") and roof.get("peak_bandwidth"):
                item = 8 if meta.get("dtype") == "float64" else 4
                predicted = chain_knee(roof["peak_flops"] / roof["peak_bandwidth"], item)
                shade = REFERENCE_COLOR if ref else "0.3"
                ax.axvline(predicted, color=shade, linestyle=":", linewidth=1.2,
                           label=f"knee, multiplication roof ({predicted:.3g}{', ' + who if ref else ''})")
                peak = peak_share("mul") * roof["peak_flops"]
                if ax is axes[1] and peak not in roofs_drawn:   # another run's same roof is the same line
                    roofs_drawn.add(peak)
                    ax.axhline(peak / scale, color=shade, linestyle="--", linewidth=1,
                               label=f"multiplication roof, half the FP32 peak ({peak / scale:.3g} {unit})")
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
    for handle, label in zip(*axes[1].get_legend_handles_labels()):   # the FLOP/s panel's roof too
        if label not in labels:
            handles.append(handle)
            labels.append(label)
    if legend_ax is not None:
        legend_ax.axis("off")
        import textwrap
        legend_ax.legend(handles, [textwrap.fill(t, 48, subsequent_indent="  ") for t in labels], loc="center",
                         frameon=False, fontsize=8)
    else:
        fig.legend(handles, labels, loc="outside lower center", ncol=min(3, len(labels)), frameon=False,
                   fontsize=7)
    n, dtype = sizes[0], _meta(result).get("dtype", "")
    elements = f"{dtype} elements" if dtype else "elements"
    what = "x = x * 2, repeated" + (f" on {dtype + ' ' if dtype else ''}arrays of each run's size (legend)"
                                    if mixed else f" ({n:,} {elements})" if n else "")
    fig.suptitle(title or _title(what, result, refs))
    return fig


# --- bandwidth and matmul against size -----------------------------------------------------

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
    own = ax is None
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
            who = f"{dev.get('name', '')}: " if refs else ""
            ax.axhline(dev["peak_bandwidth"] / 1e9, color=REFERENCE_COLOR if ref else SPEC_COLOR,
                       linestyle="--", linewidth=1, label=f"{who}DRAM peak, {_peak_label(dev, 'bandwidth')} "
                                                          f"({format_rate(dev['peak_bandwidth'], 'B/s')})")
    if own:   # below the chart, where it hides no curve and no cache label
        if ax.get_legend() is not None:
            ax.get_legend().remove()
        _legend_below(fig, *ax.get_legend_handles_labels(), ncol=2 if refs else 1)
    else:
        ax.legend(frameon=False, loc="best", fontsize=7)
    if not refs:
        ax.set_ylim(bottom=0)
    ax.set_title(title or _title("Copy bandwidth vs working set", result, refs))
    return fig


@_styled
def matmul_vs_size(result, ax=None, title=None, fraction=False, reference=None):
    """Square-matmul FLOP/s against n, with the device's peak for that dtype as a dashed line.

    ``fraction=True`` plots the fraction of peak (MFU-style) instead of FLOP/s.
    ``reference`` runs of the same sweep are drawn grey with their own peak line.
    """
    refs = _references(reference)
    own = ax is None

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
            who = f"{dev.get('name', '')}: " if refs else ""
            ax.axhline(peak / scale, color=REFERENCE_COLOR if ref else SPEC_COLOR, linestyle="--",
                       linewidth=1, label=f"{who}peak, {_peak_label(dev, 'flops')} ({peak / scale:.3g} {unit})")
        if own:   # below the chart: the peaks' labels are long, and no curve hides under them
            if ax.get_legend() is not None:
                ax.get_legend().remove()
            _legend_below(fig, *ax.get_legend_handles_labels(), ncol=2 if refs else 1)
        else:
            ax.legend(frameon=False, loc="best", fontsize=7)
    dtype = frames[0]["dtype"].iloc[0] if "dtype" in frames[0] else ""
    ax.set_title(title or _title(f"Matmul throughput vs size ({dtype})", result, refs))
    return fig
