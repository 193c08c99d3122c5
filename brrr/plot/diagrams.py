"""Explanatory diagrams: pictures of ideas, not of measurements.

Each function draws one diagram and returns its Figure. Numbers appear only where they come
from the objects passed in (a :class:`brrr.Roofline`, a :class:`brrr.Device`); everything else
is qualitative, so no device figure is typed into a picture.

- :func:`factory_warehouse`: compute is the factory, memory the warehouse, bandwidth the shipping;
- :func:`memory_hierarchy`: registers to DRAM, smaller and faster at the top;
- :func:`roofline_anatomy`: the two roofs, the ridge point and the two regions;
- :func:`fusion_dataflow`: unfused and fused chains and the bytes each moves;
- :func:`async_timeline`: the host running ahead of the GPU, and the overhead-bound case;
- :func:`profiler_trace`: a trace of operator bars whose gaps are overhead.
"""
from __future__ import annotations

from ..results import ran_on_cpu

from ._base import _styled, flops_unit, format_bytes, format_rate

COMPUTE_COLOR = "#f4a259"   # the factory, arithmetic, kernels
MEMORY_COLOR = "#5b8fb9"    # the warehouse, DRAM/HBM, bytes
IDLE_COLOR = "#d9534f"      # gaps, waiting, overhead
HOST_COLOR = "#8c8c8c"      # the CPU issuing work


def _canvas(width=7.0, height=3.0):
    """A figure with one axes in data units 0..10 x 0..10 * height/width, no frame."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10 * height / width)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def _box(ax, x, y, w, h, text, color, fontsize=9, alpha=0.25, **text_kw):
    from matplotlib.patches import FancyBboxPatch
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.12",
                                facecolor=color, edgecolor=color, alpha=alpha, linewidth=1.5))
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.12",
                                facecolor="none", edgecolor=color, linewidth=1.5))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize, **text_kw)


def _arrow(ax, start, end, color="0.2", text=None, offset=(0, 0.18), **text_kw):
    ax.annotate("", xy=end, xytext=start,
                arrowprops=dict(arrowstyle="-|>", color=color, linewidth=1.5, shrinkA=0, shrinkB=0))
    if text:
        mx, my = (start[0] + end[0]) / 2 + offset[0], (start[1] + end[1]) / 2 + offset[1]
        ax.text(mx, my, text, ha="center", va="bottom", fontsize=8, **text_kw)


@_styled
def factory_warehouse():
    """He's (2022) picture: the factory (compute), the warehouse (memory), the trucks (bandwidth)."""
    from matplotlib.patches import Polygon, Rectangle
    fig, ax = _canvas(7.0, 3.0)
    # The warehouse: a shed with a gable roof and stacked crates.
    ax.add_patch(Rectangle((0.4, 0.5), 2.8, 2.0, facecolor=MEMORY_COLOR, alpha=0.25, edgecolor=MEMORY_COLOR, lw=1.5))
    ax.add_patch(Polygon([(0.2, 2.5), (1.8, 3.3), (3.4, 2.5)], facecolor=MEMORY_COLOR, alpha=0.6,
                         edgecolor=MEMORY_COLOR))
    for i in range(4):
        for j in range(2):
            ax.add_patch(Rectangle((0.65 + 0.6 * i, 0.7 + 0.45 * j), 0.45, 0.35, facecolor="white",
                                   edgecolor=MEMORY_COLOR, lw=1))
    ax.text(1.8, 1.95, "data", ha="center", va="center", fontsize=8, color=MEMORY_COLOR)
    ax.text(1.8, 0.2, "Warehouse = memory\n(DRAM, HBM on a GPU)", ha="center", va="top", fontsize=9,
            fontweight="bold")
    # The factory: saw-tooth roof and a chimney.
    ax.add_patch(Rectangle((6.8, 0.5), 2.8, 2.0, facecolor=COMPUTE_COLOR, alpha=0.25, edgecolor=COMPUTE_COLOR,
                           lw=1.5))
    teeth = [(6.8, 2.5)]
    for k in range(4):
        x0 = 6.8 + 0.7 * k
        teeth += [(x0, 3.1), (x0 + 0.7, 2.5)]
    ax.add_patch(Polygon(teeth, facecolor=COMPUTE_COLOR, alpha=0.6, edgecolor=COMPUTE_COLOR))
    ax.add_patch(Rectangle((9.0, 2.5), 0.25, 0.9, facecolor=COMPUTE_COLOR, alpha=0.6, edgecolor=COMPUTE_COLOR))
    for i in range(3):   # workers at their machines
        ax.add_patch(Rectangle((7.15 + 0.85 * i, 0.8), 0.55, 0.9, facecolor="white", edgecolor=COMPUTE_COLOR))
        ax.text(7.425 + 0.85 * i, 1.25, "×+", ha="center", va="center", fontsize=9, color="0.25")
    ax.text(8.2, 0.2, "Factory = compute\n(arithmetic units, FLOP/s)", ha="center", va="top", fontsize=9,
            fontweight="bold")
    # The road: trucks both ways.
    _arrow(ax, (3.6, 1.9), (6.4, 1.9), text="inputs")
    _arrow(ax, (6.4, 1.1), (3.6, 1.1), text="results", offset=(0, -0.55))
    ax.text(5.0, 3.2, "Shipping = memory bandwidth\n(bytes/s between the two)", ha="center", va="center",
            fontsize=9, fontweight="bold")
    ax.set_ylim(-0.75, 3.75)
    return fig


def _hierarchy_levels(device):
    """[(name, detail)] from the top of the pyramid (registers) to the bottom (DRAM)."""
    if device is None:
        return [("registers", ""), ("shared memory / L1 (SRAM)", ""), ("L2 cache", ""),
                ("DRAM (HBM on a GPU)", "")]
    if ran_on_cpu(device):
        from ..device import cpu_caches
        caches = cpu_caches() or {"last-level cache": device.l2_bytes}
        levels = [("registers", "")]
        levels += [(f"{name} cache", format_bytes(size)) for name, size in sorted(caches.items())]
        return levels + [("DRAM", "")]
    spec = getattr(device, "spec", None)
    bandwidth = format_rate(spec.bandwidth, "bytes/s") if spec is not None else ""
    return [("registers", ""), ("shared memory / L1 (SRAM)", ""),
            ("L2 cache", format_bytes(device.l2_bytes) if device.l2_bytes else ""),
            ("HBM / DRAM", bandwidth)]


@_styled
def memory_hierarchy(device=None):
    """The memory hierarchy as a pyramid: small and fast at the top, large and slow at the bottom.

    With a :class:`brrr.Device`, the cache sizes (and a GPU's DRAM bandwidth from its spec sheet)
    are read from it; without one, the picture is qualitative.
    """
    from matplotlib.patches import Polygon
    levels = _hierarchy_levels(device)
    n = len(levels)
    fig, ax = _canvas(7.0, 3.4)
    top, bottom, apex, base = 4.55, 0.25, 1.6, 6.4  # heights and half-widths of the pyramid
    cx = 5.0
    h = (top - bottom) / n

    def half(y):
        return apex + (base - apex) * (top - y) / (top - bottom)

    for i, (name, detail) in enumerate(levels):
        y1 = top - i * h
        y0 = y1 - h
        shade = 0.85 - 0.55 * i / max(n - 1, 1)
        color = COMPUTE_COLOR if i == 0 else MEMORY_COLOR
        ax.add_patch(Polygon([(cx - half(y0) / 2, y0), (cx + half(y0) / 2, y0), (cx + half(y1) / 2, y1),
                              (cx - half(y1) / 2, y1)], facecolor=color, alpha=1 - shade * 0.8,
                             edgecolor="white", lw=2))
        label = f"{name}: {detail}" if detail else name
        ax.text(cx, (y0 + y1) / 2, label, ha="center", va="center", fontsize=8.5 if i else 8)
    ax.annotate("", xy=(1.2, top), xytext=(1.2, bottom),
                arrowprops=dict(arrowstyle="-|>", color="0.3", lw=1.5))
    ax.text(1.05, (top + bottom) / 2, "faster,\nnearer the\narithmetic", ha="right", va="center", fontsize=8)
    ax.annotate("", xy=(8.8, bottom), xytext=(8.8, top),
                arrowprops=dict(arrowstyle="-|>", color="0.3", lw=1.5))
    ax.text(8.95, (top + bottom) / 2, "bigger,\nslower,\nfurther away", ha="left", va="center", fontsize=8)
    ax.set_xlim(-0.6, 10.6)
    ax.set_ylim(0, 4.8)
    return fig


@_styled
def roofline_anatomy(roof=None):
    """The parts of a roofline, drawn from ``roof`` (a :class:`brrr.Roofline`; default: this
    device's): the memory and compute roofs, the ridge point, the two regions, and one example
    kernel in each (an elementwise float32 op and a large float32 matmul)."""
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.ticker import FuncFormatter, NullFormatter
    from ..roofline import Roofline
    roof = roof if roof is not None else Roofline.from_device()
    ridge = roof.ridge
    lo, hi = min(0.03, ridge / 100), max(ridge * 100, 2000)
    ai = np.logspace(np.log10(lo), np.log10(hi), 200)
    unit, scale = flops_unit(roof.peak_flops)
    fig, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.plot(ai, roof.attainable(ai) / scale, color="0.15", lw=2.2)
    ax.axvspan(lo, ridge, color=MEMORY_COLOR, alpha=0.12, lw=0)
    ax.axvspan(ridge, hi, color=COMPUTE_COLOR, alpha=0.12, lw=0)
    ymin, ymax = roof.attainable(lo) / scale / 3, roof.peak_flops / scale * 12
    ax.set_xlim(lo, hi)
    ax.set_ylim(ymin, ymax)
    peak = roof.peak_flops / scale
    ax.axvline(ridge, color="0.3", ls=":", lw=1)
    ax.plot([ridge], [peak], "o", color="0.15", ms=7, label="ridge", zorder=5)
    ax.annotate(f"ridge point\nI* = {ridge:.3g} FLOP/byte", xy=(ridge, peak), xytext=(ridge, peak * 4),
                ha="center", va="center", fontsize=8,
                bbox=dict(boxstyle="round,pad=0.25", facecolor="white", edgecolor="0.6"),
                arrowprops=dict(arrowstyle="-", color="0.3"))
    # Region names in the empty corners; roof names along each roof.
    ax.text(lo * (ridge / lo) ** 0.3, peak * 2, "memory-bound", ha="center", va="center", fontsize=10,
            color=MEMORY_COLOR, fontweight="bold")
    ax.text(np.sqrt(ridge * hi), ymin * 1.6, "compute-bound", ha="center", va="bottom", fontsize=10,
            color="#c0701f", fontweight="bold")
    ax.text(ridge * 3, peak * 1.25, f"compute roof: peak {format_rate(roof.peak_flops)}",
            ha="left", va="bottom", fontsize=8)
    x_mem = lo * (ridge / lo) ** 0.3
    p0 = ax.transData.transform((lo, roof.attainable(lo) / scale))
    p1 = ax.transData.transform((ridge, peak))
    angle = np.degrees(np.arctan2(p1[1] - p0[1], p1[0] - p0[0]))
    ax.text(x_mem, roof.attainable(x_mem) / scale * 1.5,
            f"memory roof: I × {format_rate(roof.peak_bandwidth, 'bytes/s')}", rotation=angle,
            rotation_mode="anchor", ha="left", va="bottom", fontsize=8)
    # One example kernel in each region, at its roof.
    examples = [(0.125, "x * 2 (float32)\n0.125 FLOP/byte", MEMORY_COLOR, "left")]
    mm = 4096 / 6  # 2n^3 FLOPs over 12n^2 bytes for an n = 4096 float32 matmul
    examples.append((mm if mm > 3 * ridge else ridge * 20,
                     "large matmul\n" + (f"{mm:.0f} FLOP/byte" if mm > 3 * ridge else "high intensity"),
                     "#c0701f", "right"))
    for x, text, color, side in examples:
        y = roof.attainable(x) / scale
        ax.plot([x], [y], "s", color=color, ms=7, zorder=5)
        ax.annotate(text, xy=(x, y), xytext=(x * 1.4 if side == "left" else x / 1.4, y / 4.5), ha=side,
                    va="top", fontsize=8,
                    arrowprops=dict(arrowstyle="-", color=color))
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel(f"attainable throughput ({unit})")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(f"Anatomy of a roofline{': ' + roof.name if roof.name else ''}")
    return fig


@_styled
def fusion_dataflow(n_ops: int = 2):
    """An unfused chain of ``n_ops`` pointwise ops (each reads and writes memory) above the same
    chain fused into one kernel (one read, one write), with the bytes each moves for n elements
    of s bytes."""
    if n_ops < 1:
        raise ValueError(f"n_ops must be at least 1, got {n_ops}")
    width = 7.0
    fig, ax = _canvas(width, 4.4)
    step = 8.0 / (n_ops + 1)

    def lane(y_chip, y_mem, title, fused):
        ax.text(0.0, y_chip + 0.85, title, ha="left", va="bottom", fontsize=10, fontweight="bold")
        ax.text(0.0, y_chip + 0.3, "on chip", ha="left", va="center", fontsize=8, color="0.4")
        ax.text(0.0, y_mem + 0.3, "memory\n(DRAM/HBM)", ha="left", va="center", fontsize=8, color="0.4")
        xs = [1.9 + step * i for i in range(n_ops + 1)]   # x, intermediates..., y in memory
        names = ["x"] + [f"t{i}" for i in range(1, n_ops)] + ["y"]
        for i, (x, name) in enumerate(zip(xs, names)):
            if fused and 0 < i < n_ops:
                continue
            _box(ax, x - 0.35, y_mem, 0.7, 0.6, name, MEMORY_COLOR)
        if fused:
            ops = [(xs[i] + xs[i + 1]) / 2 for i in range(n_ops)]
            left, right = ops[0] - 0.65, ops[-1] + 0.65
            _box(ax, left, y_chip - 0.05, right - left, 0.7, "", COMPUTE_COLOR, alpha=0.12)
            for i, x in enumerate(ops):
                _box(ax, x - 0.45, y_chip + 0.05, 0.9, 0.5, f"op{i + 1}", COMPUTE_COLOR)
                if i:
                    _arrow(ax, (ops[i - 1] + 0.5, y_chip + 0.3), (x - 0.5, y_chip + 0.3))
            _arrow(ax, (xs[0], y_mem + 0.65), (left + 0.05, y_chip + 0.25), color=MEMORY_COLOR)
            _arrow(ax, (right - 0.05, y_chip + 0.25), (xs[-1], y_mem + 0.65), color=MEMORY_COLOR)
            ax.text(left + 0.1, y_mem + 0.65, "read n·s", fontsize=7.5, color=MEMORY_COLOR, ha="left")
            ax.text(right - 0.1, y_mem + 0.65, "write n·s", fontsize=7.5, color=MEMORY_COLOR, ha="right")
        else:
            for i in range(n_ops):
                x = (xs[i] + xs[i + 1]) / 2
                _box(ax, x - 0.45, y_chip + 0.05, 0.9, 0.5, f"op{i + 1}", COMPUTE_COLOR)
                _arrow(ax, (xs[i] + 0.1, y_mem + 0.65), (x - 0.3, y_chip), color=MEMORY_COLOR)
                _arrow(ax, (x + 0.3, y_chip), (xs[i + 1] - 0.1, y_mem + 0.65), color=MEMORY_COLOR)
        return xs

    lane(4.6, 3.35, f"Unfused: {n_ops} kernels, each reads and writes memory", fused=False)
    lane(1.35, 0.1, "Fused: one kernel, intermediates stay in registers", fused=True)
    ax.text(9.95, 3.65, f"bytes moved:\n2·n·s × {n_ops} ops\n= {2 * n_ops}·n·s" if n_ops > 1
            else "bytes moved:\n2·n·s", ha="right", va="center", fontsize=8.5,
            bbox=dict(boxstyle="round,pad=0.3", facecolor="white", edgecolor=MEMORY_COLOR))
    ax.text(9.95, 0.4 + 0.1, "bytes moved:\n2·n·s", ha="right", va="center", fontsize=8.5,
            bbox=dict(boxstyle="round,pad=0.3", facecolor="white", edgecolor=MEMORY_COLOR))
    ax.text(5.0, -0.35, "n elements of s bytes each; read n·s and write n·s per kernel", ha="center",
            va="top", fontsize=8, color="0.35")
    ax.set_ylim(-0.75, 5.9)
    return fig


def _lane(ax, y, bars, color, height=0.6, labels=True, **kw):
    """Bars [(start, length, label)] on one timeline lane at height y."""
    for start, length, label in bars:
        ax.broken_barh([(start, length)], (y - height / 2, height), facecolors=color, edgecolor="white",
                       lw=0.8, **kw)
        if labels and label:
            ax.text(start + length / 2, y, label, ha="center", va="center", fontsize=7.5)


def _timeline_axes(ax, lanes, xmax, title):
    ax.set_ylim(-0.6, len(lanes) - 0.4)
    ax.set_yticks(range(len(lanes)), lanes[::-1])
    ax.set_xlim(0, xmax)
    ax.set_xticks([])
    ax.grid(False)
    ax.spines["left"].set_visible(False)
    ax.tick_params(axis="y", length=0)
    ax.set_title(title, loc="left", fontsize=9)


@_styled
def async_timeline():
    """Two CPU/GPU timelines: big kernels, where the CPU queues launches and runs ahead until a
    synchronise makes it wait; and tiny kernels, where the GPU idles between launches."""
    import matplotlib.pyplot as plt
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.0, 4.2), layout="constrained")
    lanes = ["CPU (Python)", "GPU"]
    # Big kernels: launches every 1 unit, kernels 3 units each, queued.
    launch, kernel = 0.8, 3.0
    cpu = [(i * 1.0, launch, f"L{i + 1}") for i in range(5)]
    gpu, t = [], 0.0
    for i in range(5):
        t = max(t, cpu[i][0] + launch)
        gpu.append((t, kernel, f"kernel {i + 1}"))
        t += kernel
    _lane(top, 1, cpu, HOST_COLOR)
    _lane(top, 0, gpu, COMPUTE_COLOR)
    sync_start = 5.0
    top.broken_barh([(sync_start, t - sync_start)], (0.7, 0.6), facecolors="none", edgecolor=IDLE_COLOR,
                    hatch="///", lw=1)
    top.text((sync_start + t) / 2, 1.0, "synchronize(): the CPU waits", ha="center", va="center", fontsize=8,
             bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none"))
    for start, _, _ in cpu:
        top.annotate("", xy=(start + launch, 0.3), xytext=(start + launch, 0.7),
                     arrowprops=dict(arrowstyle="-|>", color="0.5", lw=0.8))
    _timeline_axes(top, lanes, t + 0.3, "Large kernels: the CPU runs ahead, the launch cost is hidden")
    # Tiny kernels: launches take longer than the kernels, so the GPU idles in between.
    launch, kernel = 1.6, 0.5
    cpu = [(i * launch, launch * 0.95, f"L{i + 1}") for i in range(8)]
    gpu = [(s + d, kernel, "") for s, d, _ in cpu]
    _lane(bottom, 1, cpu, HOST_COLOR)
    _lane(bottom, 0, gpu, COMPUTE_COLOR, labels=False)
    for (s, d, _), (s2, _, _) in zip(gpu[:-1], gpu[1:]):
        bottom.broken_barh([(s + d, s2 - s - d)], (-0.3, 0.6), facecolors=IDLE_COLOR, alpha=0.15)
    bottom.text((gpu[1][0] + kernel + gpu[2][0]) / 2, -0.55, "idle: overhead", ha="center", va="top",
                fontsize=8, color=IDLE_COLOR)
    _timeline_axes(bottom, lanes, cpu[-1][0] + launch + 0.5,
                   "Tiny kernels: overhead-bound, the GPU waits for each launch")
    bottom.set_ylim(-1.0, 1.6)
    bottom.set_xlabel("time →")
    return fig


@_styled
def profiler_trace():
    """A sketch of a profiler trace: operator bars on a CPU and a GPU lane, where the gaps
    between GPU kernels are time spent on overhead."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.0, 2.6), layout="constrained")
    ops = [("matmul", 2.2), ("add", 0.5), ("relu", 0.5), ("matmul", 2.2), ("add", 0.5), ("softmax", 0.6)]
    dispatch = 1.6   # CPU time per operator (Python, dispatch, launch)
    cpu, gpu, t_gpu = [], [], 0.0
    for i, (name, length) in enumerate(ops):
        start = i * dispatch
        cpu.append((start, dispatch * 0.92, name))
        t_gpu = max(t_gpu, start + dispatch)
        gpu.append((t_gpu, length, name))
        t_gpu += length
    _lane(ax, 1, cpu, HOST_COLOR)
    for s, d, label in gpu:
        ax.broken_barh([(s, d)], (-0.3, 0.6), facecolors=COMPUTE_COLOR if d > 1 else MEMORY_COLOR,
                       edgecolor="white", lw=0.8)
        if d > 1:
            ax.text(s + d / 2, 0, label, ha="center", va="center", fontsize=7.5)
        else:
            ax.text(s + d / 2, -0.38, label, ha="center", va="top", fontsize=7)
    gaps = [(a[0] + a[1], b[0] - a[0] - a[1]) for a, b in zip(gpu[:-1], gpu[1:]) if b[0] - a[0] - a[1] > 1e-9]
    for s, d in gaps:
        ax.broken_barh([(s, d)], (-0.3, 0.6), facecolors=IDLE_COLOR, alpha=0.15)
        ax.annotate("", xy=(s + d / 2, 0.32), xytext=(s + d / 2, 0.62),
                    arrowprops=dict(arrowstyle="-|>", color=IDLE_COLOR, lw=0.8))
    ax.text(gpu[-1][0] + gpu[-1][1] + 0.2, 0.35, "gaps = overhead:\nthe GPU waits\nfor the next launch",
            ha="left", va="center", fontsize=8, color=IDLE_COLOR)
    _timeline_axes(ax, ["CPU ops", "GPU kernels"], gpu[-1][0] + gpu[-1][1] + 3.6,
                   "A profiler trace: long bars are work, the gaps between them are overhead")
    ax.set_ylim(-0.9, 1.5)
    ax.set_xlabel("time →")
    return fig
