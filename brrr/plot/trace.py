"""A profiler trace as a timeline: one row per lane (host threads, then GPU streams), a bar per
top-level event, the gaps between them shaded, and a line from each kernel launch on the host to
the kernel it started on the GPU. Takes the records of :func:`brrr.profiler.trace` (or a saved or
reference run of it); never profiles."""
from __future__ import annotations

from ._base import _is_reference, _meta, _references, _seconds_axis, _styled, device_title, reference_label

COLORS = {"operator": "#5b8fb9", "launch": "#8e6bbf", "runtime": "0.6", "kernel": "#f4a259"}
IDLE_COLOR = "#d9534f"      # the gaps: time on a lane when nothing ran
HOST_WORK = ("operator", "launch", "runtime")
STEP = "ProfilerStep#"


def _window(records, steps):
    """(start, end) of the first ``steps`` profiled steps (all of them for None; everything where
    the trace marks no steps)."""
    marks = sorted((r["start_seconds"], r["start_seconds"] + r["seconds"]) for r in records
                   if r["category"] == "annotation" and r["side"] == "host" and r["name"].startswith(STEP))
    if marks:
        chosen = marks if steps is None else marks[:steps]
        return chosen[0][0], chosen[-1][1], chosen
    ends = [r["start_seconds"] + r["seconds"] for r in records]
    start = min(r["start_seconds"] for r in records)
    return start, max(ends), [(start, max(ends))]


def _shown(r) -> bool:
    """Top-level host work, and GPU work: the bars of the timeline."""
    if r["side"] == "gpu":
        return r["category"] == "kernel"
    return r["category"] in HOST_WORK and r["depth"] == 0


def _lanes(records) -> list:
    host = [r["lane"] for r in records if r["side"] == "host" and _shown(r)]
    gpu = [r["lane"] for r in records if r["side"] == "gpu" and _shown(r)]
    return list(dict.fromkeys(host)) + sorted(set(gpu))


def _lane_label(lane: str) -> str:
    """'host thread 123' -> 'host\n(thread 123)'; 'GPU 0, stream 7' -> 'GPU 0\nstream 7'."""
    if lane.startswith("host thread"):
        return "host\n(" + lane.removeprefix("host ") + ")"
    return lane.replace(", stream", "\nstream")


def _short(name: str, most: int = 16) -> str:
    for prefix in ("aten::", "void ", "at::native::"):
        name = name.removeprefix(prefix)
    name = name.split("(")[0].split("<")[0]
    return name if len(name) <= most else name[:most - 1] + "…"


def _label_widest(ax, bars, y, height, span, count):
    """Names of the ``count`` widest bars: inside a bar wide enough, else above it, never two on
    top of each other."""
    placed: list = []
    for start, length, name in sorted(bars, key=lambda b: -b[1])[:count]:
        text = _short(name)
        centre = start + length / 2
        room = 0.0105 * len(text) * span     # about the width of the text at this size
        if length > room:
            ax.text(centre, y, text, ha="center", va="center", fontsize=6.5, clip_on=True)
            continue
        level = next((lv for lv in (1, 2) if all(abs(centre - c) > (room + r) / 2 or lv != l
                                                 for c, r, l in placed)), None)
        if level is None:
            continue
        placed.append((centre, room, level))
        ax.text(centre, y + height / 2 + 0.02 + 0.2 * (level - 1), text, ha="center", va="bottom",
                fontsize=6, color="0.25", clip_on=True)


def _draw(ax, run, steps, labels, height=0.5):
    """The timeline of ``run`` on ``ax``; time counts from the first step's first operator (the
    profiler's step mark comes earlier, by the profiler's own work), as the chapter's text does."""
    records = list(run.records)
    mark, end, marks = _window(records, steps)
    inside = [r for r in records if mark - 1e-12 <= r["start_seconds"] <= end]
    start = min((r["start_seconds"] for r in inside if _shown(r)), default=mark)
    lanes = _lanes(inside)
    y_of = {lane: len(lanes) - 1 - i for i, lane in enumerate(lanes)}
    span = end - start
    for lane in lanes:
        bars = [(r["start_seconds"] - start, r["seconds"], r["name"], r["category"])
                for r in inside if r["lane"] == lane and _shown(r)]
        y = y_of[lane]
        for s0, s1 in marks:        # the lane's gaps: shaded where no bar covers them, step by step
            mine = [b for b in bars if s0 - start - 1e-12 <= b[0] <= s1 - start]
            if mine:
                first, last = min(b[0] for b in mine), max(b[0] + b[1] for b in mine)
                ax.broken_barh([(first, last - first)], (y - height / 2, height), facecolors=IDLE_COLOR,
                               alpha=0.18, lw=0)
        for category in COLORS:
            segments = [(b[0], max(b[1], span * 4e-4)) for b in bars if b[3] == category]
            if segments:
                ax.broken_barh(segments, (y - height / 2, height), facecolors=COLORS[category],
                               edgecolor="white", lw=0.3)
        _label_widest(ax, [b[:3] for b in bars], y, height, span, labels)
    launches = [r for r in inside if r["category"] == "launch" and r["depth"] > 0 and r["lane"] in y_of]
    for lane in {r["lane"] for r in launches}:     # launches inside operators: a strip along the bar's foot
        ax.broken_barh([(r["start_seconds"] - start, max(r["seconds"], span * 4e-4)) for r in launches
                        if r["lane"] == lane], (y_of[lane] - height / 2, height / 3),
                       facecolors=COLORS["launch"], lw=0)
    kernels = {r["correlation"]: r for r in inside if r["category"] == "kernel" and r["correlation"] is not None}
    for r in inside:
        k = kernels.get(r["correlation"]) if r["category"] == "launch" else None
        if k is not None and r["lane"] in y_of and k["lane"] in y_of:
            ax.plot([r["start_seconds"] - start, k["start_seconds"] - start],
                    [y_of[r["lane"]] - height / 2, y_of[k["lane"]] + height / 2], color="0.35", lw=0.5,
                    alpha=0.6)
    for i, (s0, _) in enumerate(marks):     # the first step's mark, before its first operator: at 0
        ax.axvline(max(s0 - start, 0.0), color="0.3", lw=0.6, ls=":")
        ax.text(max(s0 - start, 0.0), len(lanes) - 0.45, f" step {i + 1}", fontsize=7, color="0.3", va="bottom")
    ax.set_ylim(-0.7, len(lanes) - 0.1)
    ax.set_yticks(range(len(lanes)), [_lane_label(lane) for lane in lanes][::-1])
    ax.set_xlim(0, span * 1.002)
    ax.tick_params(axis="y", length=0)
    ax.grid(False)
    ax.grid(True, axis="x", alpha=0.3)
    _seconds_axis(ax.xaxis)
    return len(lanes)


@_styled
def trace_timeline(result, reference=None, steps=1, labels=8, title=None):
    """The timeline of a trace from :func:`brrr.profiler.trace`: rows are lanes (host threads, then
    GPU streams), bars are top-level operators and runtime calls on the host and kernels on the GPU,
    red shading is a lane's gaps (its span with nothing running), grey lines join a launch to its
    kernel. ``steps``: how many profiled steps to draw (None: all); ``labels``: names shown per lane
    (the widest bars). ``reference`` runs get a panel each, below this run's."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    runs = [result] + _references(reference)
    heights = [max(1, len(_lanes(list(r.records)))) + 0.9 for r in runs]
    fig, axes = plt.subplots(len(runs), 1, figsize=(7.0, 0.45 * sum(heights) + 0.9), layout="constrained",
                             height_ratios=heights, squeeze=False)
    for i, (ax, run) in enumerate(zip(axes[:, 0], runs)):
        if not run.records:
            ax.set_axis_off()
            continue
        _draw(ax, run, steps, labels)
        ref = i > 0 or _is_reference(run)
        shown = "one step" if steps == 1 else ("every step" if steps is None else f"{steps} steps")
        text = (reference_label(run) if ref else
                title or device_title(f"{_meta(run).get('model', 'A model')}, {shown}, traced", run))
        ax.set_title(text, loc="left", fontsize=9, color="0.35" if ref else "black")
        ax.set_xlabel("time since the step's first operator" if steps == 1 else
                      "time since the first step's first operator")
    present = {r["category"] for run in runs for r in run.records if _shown(r) or r["category"] == "launch"}
    names = {"operator": "operator (host)", "launch": "kernel launch (host)", "runtime": "other runtime call",
             "kernel": "kernel (GPU)"}
    handles = [Patch(color=COLORS[c], label=names[c]) for c in COLORS if c in present]
    handles.append(Patch(color=IDLE_COLOR, alpha=0.3, label="gap: nothing running"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=7, frameon=False)
    return fig
