"""Chapter 2's latency-bound figure: a copy's achieved bandwidth against its parallelism (CPU
threads or GPU blocks), under the device's DRAM bandwidth, for this run and each reference run."""
from __future__ import annotations

from ._base import (REFERENCE_COLOR, SPEC_COLOR, device_title, format_rate, ran_on_cpu, reference_label,
                    _frame, _is_reference, _log_axis, _meta, _power2_axis, _references, _series_style,
                    _style, _styled)


def _panel(ax, run, ref: bool, index: int):
    """One run on ``ax``: its bandwidth line, its roof (dashed) and, on a GPU, its SM count (dotted)."""
    frame = _frame(run).sort_values("parallelism")
    meta = _meta(run)
    dev = meta.get("device") or {}
    unit = frame["unit"].iloc[0] if "unit" in frame else "threads"
    style = _series_style(index, ref)
    ax.plot(frame["parallelism"], frame["gbps"], markersize=5, label="achieved bandwidth (copy)", **style)
    roof = meta.get("roof_bandwidth") or dev.get("peak_bandwidth")
    top = float(frame["gbps"].max())
    if roof:
        kind = "measured, NumPy copy on one thread" if ran_on_cpu(dev) else "spec sheet"
        ax.axhline(roof / 1e9, color=REFERENCE_COLOR if ref else SPEC_COLOR, linestyle="--", linewidth=1,
                   label=f"DRAM bandwidth, {kind} ({format_rate(roof, 'B/s')})")
        top = max(top, roof / 1e9)
    sms = meta.get("sm_count")
    if unit == "blocks" and sms:
        ax.axvline(sms, color="0.45", linestyle=":", linewidth=1, label=f"one block per SM ({sms} SMs)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _power2_axis(ax.xaxis)
    _log_axis(ax.yaxis)
    low = float(frame["gbps"].min())
    ax.set_ylim(low / 2, top * 2)
    lo, hi = float(frame["parallelism"].min()), float(frame["parallelism"].max())
    if lo == hi:
        ax.set_xlim(lo / 2, hi * 2)
    if hi / lo > 256:   # a tick at every power of 4 keeps the labels apart
        from matplotlib.ticker import LogLocator
        ax.xaxis.set_major_locator(LogLocator(base=4, numticks=30))
    block = meta.get("block")
    ax.set_xlabel(f"parallelism (blocks of {block} threads)" if unit == "blocks" and block
                  else f"parallelism ({unit})")
    ax.set_ylabel("achieved bandwidth (GB/s)")
    ax.set_title(reference_label(run) if ref else device_title("Copy bandwidth vs parallelism", run),
                 fontsize=9)
    ax.legend(frameon=False, fontsize=7, loc="lower right")
    _style(ax)


@_styled
def bandwidth_vs_parallelism(result, reference=None, title=None):
    """Achieved copy bandwidth (GB/s, log) against parallelism (log 2) from
    :func:`brrr.experiments.bandwidth_vs_parallelism`, with the device's DRAM bandwidth dashed.

    One panel for this run and one beside it for each ``reference`` run (a CPU sweeps threads, a GPU
    blocks, so each keeps its own axes); a GPU panel marks one block per SM with a dotted line.
    """
    import matplotlib.pyplot as plt
    refs = _references(reference)
    unavailable = (getattr(result, "meta", {}) or {}).get("unavailable")
    if unavailable and not getattr(result, "records", None):   # nothing measured here: say why
        fig, ax = plt.subplots(figsize=(6.4, 1.2), layout="constrained")
        ax.axis("off")
        ax.text(0.5, 0.5, "Not measured here:\n" + unavailable, ha="center", va="center", wrap=True, fontsize=9)
        return fig
    if "parallelism" not in _frame(result) or "gbps" not in _frame(result):
        raise ValueError("bandwidth_vs_parallelism needs 'parallelism' and 'gbps' columns "
                         "(from brrr.experiments.bandwidth_vs_parallelism)")
    runs = [(result, _is_reference(result))] + [(run, True) for run in refs]
    fig, axes = plt.subplots(1, len(runs), figsize=(6.4 if len(runs) == 1 else 4.6 * len(runs), 4.2),
                             layout="constrained", squeeze=False)
    for j, (ax, (run, ref)) in enumerate(zip(axes[0], runs)):
        _panel(ax, run, ref, j - 1 if ref and not _is_reference(result) else j)
    if len(runs) > 1:
        fig.suptitle(title or device_title("Copy bandwidth vs parallelism", result))
        axes[0][0].set_title("this run", fontsize=9)
    elif title:
        axes[0][0].set_title(title)
    return fig
