"""Timing Table II's convolutions on the live device, and the chapter's figures.

Measurements go through :func:`brrr.bench`; the figures take data and measure nothing.
Counts come from :mod:`brrr.intensity_paper` (Jha, Mittal & Avancha, 2020, Data-type
Aware Arithmetic Intensity for Deep Neural Networks).
"""
from __future__ import annotations

from . import tf32
from .device import device as live_device
from .intensity_paper import KINDS, _positive_int, conv_intensity
from .results import needs_measurements


def measure_conv(kind: str, M: int = 256, N: int = 256, S_o: int = 28, S_k: int = 3, g: int = 4,
                 batch: int = 1, dtype: str = "float32", roof=None) -> dict:
    """Time one convolution of Table II with PyTorch on the live device (:func:`brrr.bench`).

    Returns a record: the layer's MACs, FLOPs (2 x MACs x batch), nbytes (weights once
    plus ifmap and ofmap per image, x bytes per element), intensity (FLOP/byte), the
    median and fastest time (seconds), achieved FLOP/s (from the median), and the roofline's attainable FLOP/s and
    time for that intensity (``roof`` defaults to ``Roofline.from_device(dtype=dtype)``).
    ``g`` is used only by ``kind='group'``.
    """
    import torch
    from .roofline import Roofline
    from .timing import bench
    batch = _positive_int("batch", batch)
    layer = conv_intensity(kind, M, N, S_o, S_k, g if kind == "group" else 1)
    roof = roof or Roofline.from_device(dtype=dtype)
    dev = torch.device(live_device().torch_device)
    tdtype = getattr(torch, dtype, None)
    if not isinstance(tdtype, torch.dtype):
        raise ValueError(f"dtype must name a torch floating dtype such as 'float32', got {dtype!r}")
    conv = torch.nn.Conv2d(layer.M, layer.N, layer.S_k, padding=layer.S_k // 2, groups=layer.g,
                           bias=False).to(dev, tdtype).eval()
    x = torch.randn(batch, layer.M, S_o, S_o, device=dev, dtype=tdtype)
    itemsize = x.element_size()
    flops = 2 * layer.macs * batch
    nbytes = (layer.weights + layer.activations * batch) * itemsize

    def run():
        with torch.no_grad():
            return conv(x)

    with tf32.setting(torch, "conv", False):  # float32 on general math, as its float32 roof assumes
        t = bench(run, flops=flops, nbytes=nbytes, label=f"{kind} conv")
    achieved = flops / t.median
    intensity = flops / nbytes
    return {"kind": kind, "M": layer.M, "N": layer.N, "S_o": S_o, "S_k": layer.S_k, "g": layer.g,
            "batch": batch, "dtype": dtype, "device": roof.name or dev.type, "macs": layer.macs * batch,
            "flops": flops, "nbytes": nbytes, "intensity": intensity, "seconds": t.median,
            "min_seconds": t.min, "iqr_seconds": t.iqr,
            "label": f"{kind} conv",
            "achieved_flops": achieved, "attainable_flops": float(roof.attainable(intensity)),
            "roofline_seconds": float(roof.time(flops, nbytes)),
            "efficiency": float(roof.time(flops, nbytes)) / t.median, "warnings": list(t.warnings)}


def measure_convs(kinds=KINDS, M: int = 256, N: int = 256, S_o: int = 28, S_k: int = 3, g: int = 4,
                  batch: int = 1, dtype: str = "float32", progress: bool = True):
    """:func:`measure_conv` for each kind (default: Table III's four layers); a :class:`brrr.Result`
    whose meta also holds the roof the records are judged against (``roof``), the size of the
    cache a flush empties (``cache_bytes``: L2 on a GPU, the last-level cache on a CPU) and the
    fixed cost of one small PyTorch call (``call_seconds``, :func:`brrr.profiler.dispatch_overhead`),
    which a call this small can spend as much time on as on its work."""
    from .experiments.common import run_sweep
    from .roofline import Roofline
    from .device import device as live, last_level_cache_bytes
    from .profiler.regimes import dispatch_overhead
    roof = Roofline.from_device(dtype=dtype)
    dev = live()
    cache = dev.l2_bytes if dev.on_gpu else last_level_cache_bytes()
    return run_sweep("conv kinds", list(kinds),
                     lambda kind: measure_conv(kind, M, N, S_o, S_k, g, batch, dtype, roof),
                     command=f"brrr.intensity.measure_convs(M={M}, N={N}, S_o={S_o}, S_k={S_k}, g={g}, "
                             f"batch={batch}, dtype={dtype!r})", progress=progress,
                     roof=roof.to_dict(), cache_bytes=cache, call_seconds=dispatch_overhead(dev))


@needs_measurements
def conv_table(result):
    """:func:`measure_convs`'s records for the page: per convolution its MACs (millions),
    intensity (FLOP/byte), median time (seconds), achieved and roofline-attainable
    GFLOP/s, and the share of the roof it reached (achieved / attainable)."""
    import pandas as pd
    frame = result.to_frame()
    return pd.DataFrame({
        "convolution": frame["kind"], "MACs (millions)": frame["macs"] / 1e6,
        "intensity (FLOP/byte)": frame["intensity"], "time per call": frame["seconds"],
        "achieved (GFLOP/s)": frame["achieved_flops"] / 1e9,
        "roofline allows (GFLOP/s)": frame["attainable_flops"] / 1e9,
        "share of the roof": frame["achieved_flops"] / frame["attainable_flops"]})

# --- figures (they take data; nothing here measures) -----------------------------------------

_KIND_STYLE = {"standard": ("tab:blue", "o"), "pointwise": ("tab:green", "s"), "group": ("tab:purple", "D"),
               "depthwise": ("tab:red", "v"), "fc": ("tab:orange", "^"), "other": ("0.5", "x")}


def plot_layers(roof, layers: dict, axes=None, title=None):
    """Each Conv/FC layer of one or more networks placed on a roofline, one panel per network.

    ``layers`` maps a network's name to its :func:`roofline_points` table. A layer
    sits at its intensity (FLOP/byte) and at the FLOP/s the roofline allows there,
    so a point on the sloped part is a layer the model calls memory-bound. Colour
    and marker give the convolution kind; marker area is the layer's share of the
    network's FLOPs.
    """
    import matplotlib.pyplot as plt
    import numpy as np
    from . import plot
    if not isinstance(layers, dict) or not layers:
        raise ValueError("layers must be a non-empty dict {network name: roofline_points(...) table}")
    ais = np.concatenate([np.asarray(t["intensity"], dtype=float) for t in layers.values()])
    lo, hi = min(ais.min(), roof.ridge) / 16, max(ais.max(), roof.ridge) * 32  # room for the roof's labels
    xlim = (2.0 ** np.floor(np.log2(lo)), 2.0 ** np.ceil(np.log2(hi)))
    if axes is None:
        # No rc_context here: a first figure made inside one leaves Jupyter's inline backend
        # non-interactive afterwards, and later figures stop showing.
        fig, axes = plt.subplots(1, len(layers), figsize=(5.6 * len(layers), 4.4), layout="constrained",
                                 sharey=True, squeeze=False)
        axes = list(axes[0])
    else:
        axes = list(np.atleast_1d(axes))
        fig = axes[0].figure
    if len(axes) != len(layers):
        raise ValueError(f"axes must hold one matplotlib axes per network ({len(layers)}), got {len(axes)}")
    unit, scale = plot.flops_unit(max(roof.peak_flops, *roof.compute_ceilings.values()))
    info = _device_info(roof)
    for ax, (name, table) in zip(axes, layers.items()):
        plot.roofline(roof, ax=ax, xlim=xlim, title=name, device=info)
        share = np.asarray(table["flops"], dtype=float) / float(table["flops"].sum())
        table = table.assign(_size=20 + 600 * share)
        for kind, part in table.groupby("kind", sort=False):
            color, marker = _KIND_STYLE.get(kind, _KIND_STYLE["other"])
            y = np.asarray(roof.attainable(np.asarray(part["intensity"], dtype=float))) / scale
            ax.scatter(part["intensity"], y, s=part["_size"], color=color, marker=marker, alpha=0.7,
                       edgecolor="white", linewidth=0.5, label=f"{kind} ({len(part)})", zorder=3)
        ax.legend(loc="upper left", frameon=False, fontsize=7)
    fig.suptitle(title or plot.device_title("Conv and FC layers placed on the roofline (area: share of FLOPs)",
                                            device=info, measured="roof measured"))
    return fig


def _device_info(roof):
    """The live device for titles; a roof named '<device> spec sheet' or '... measured roof'
    names the device without its suffix."""
    from .device import device as live
    dev = live()
    name = roof.name
    for suffix in (" spec sheet", " measured roof"):
        name = name[:-len(suffix)] if name.endswith(suffix) else name
    return {"name": name or dev.name, "backend": dev.backend}


def device_roof(dtype: str = "float32"):
    """The live device's :class:`~brrr.Roofline` for ``dtype`` (:meth:`Roofline.from_device`),
    named for where it comes from: '<GPU> spec sheet' on a GPU brrr has a spec sheet for,
    else '<device> measured roof' (on a CPU: copy bandwidth and matmul FLOP/s measured
    once and cached), so figures and text call a measured roof a measured roof."""
    from .device import device as live
    from .roofline import Roofline, has_spec_sheet
    dev = live()
    roof = Roofline.from_device(dev, dtype=dtype)
    suffix = "spec sheet" if has_spec_sheet(dev.summary()) else "measured roof"
    return roof.with_ceilings(name=f"{dev.name} {suffix}")


def plot_reuse(table, axes=None, title=None):
    """Two panels from :func:`compare_with_paper`'s table: reuse, and AI_c against DI.

    Left: activation reuse M_c/A against weight reuse M_c/W (log-log), ours filled and
    the paper's hollow, joined by a line. Right: DI against AI_c with the line DI = AI_c;
    networks below it are those the paper says AI_c overrates.
    """
    import matplotlib.pyplot as plt
    from . import plot
    for col in ("weight_reuse", "activation_reuse", "ai_c", "di"):
        if col not in table or f"{col} (paper)" not in table:
            raise ValueError(f"table needs {col!r} and '{col} (paper)' columns (from compare_with_paper)")
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")  # see plot_layers
    else:
        fig = axes[0].figure
    panels = (("weight_reuse", "activation_reuse", "weight reuse $M_c/W$ (MACs per weight)",
               "activation reuse $M_c/A$ (MACs per activation)"),
              ("ai_c", "di", "$AI_c = M_c/(W+A)$ (MACs per element)", r"DI, $\alpha$ = 0.8 (MACs per element)"))
    for ax, (x, y, xlabel, ylabel) in zip(axes, panels):
        labels = []
        for i, (name, row) in enumerate(table.iterrows()):
            color = f"C{i % 10}"
            ax.plot([row[x], row[f"{x} (paper)"]], [row[y], row[f"{y} (paper)"]], color=color, lw=0.8, alpha=0.6)
            ax.scatter(row[x], row[y], color=color, s=36, zorder=3, label=name)
            ax.scatter(row[f"{x} (paper)"], row[f"{y} (paper)"], facecolor="none", edgecolor=color, s=36, zorder=3)
            labels.append(ax.annotate(name, (row[x], row[y]), fontsize=7, xytext=(4, 3),
                                      textcoords="offset points"))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.margins(x=0.12, y=0.08)
        plot._style(ax)
        _spread_labels(ax, labels)
    lo = min(table[["ai_c", "di", "ai_c (paper)", "di (paper)"]].min()) / 1.5
    hi = max(table[["ai_c", "di", "ai_c (paper)", "di (paper)"]].max()) * 1.5
    axes[1].plot([lo, hi], [lo, hi], color="0.4", ls="--", lw=0.9, label="DI = $AI_c$")
    axes[0].set_title("Weight vs activation reuse (filled: brrr.models, hollow: paper)")
    axes[1].set_title("$AI_c$ vs DI (below the dashed line: $AI_c$ > DI)")
    axes[1].legend(handles=axes[1].get_lines()[-1:], frameon=False, loc="upper left")
    if title:
        fig.suptitle(title)
    return fig


def _spread_labels(ax, labels, pad: float = 1.0, rounds: int = 60):
    """Move point labels (annotations in offset points) off other points, to the left of
    their own point where the right is taken, then apart vertically until no two overlap."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    to_points = 72.0 / fig.dpi
    points = [ax.transData.transform(t.xy) for t in labels]
    for t, own in zip(labels, points):
        box = t.get_window_extent(renderer).expanded(1.0, 1.4)
        if any(box.contains(*p) for p in points if p is not own):
            dx, dy = t.xyann
            t.xyann = (-dx, dy)
            t.set_horizontalalignment("right")
    for _ in range(rounds):
        boxes = [t.get_window_extent(renderer) for t in labels]
        moved = False
        for i in range(len(labels)):
            for j in range(i + 1, len(labels)):
                a, b = boxes[i], boxes[j]
                if a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0:
                    continue
                # push the lower label down and the upper one up, half the overlap each
                lower, upper = (i, j) if a.y0 <= b.y0 else (j, i)
                overlap = (min(a.y1, b.y1) - max(a.y0, b.y0)) * to_points + pad
                for k, sign in ((lower, -1), (upper, 1)):
                    dx, dy = labels[k].xyann
                    labels[k].xyann = (dx, dy + sign * overlap / 2)
                moved = True
                boxes = [t.get_window_extent(renderer) for t in labels]
        if not moved:
            break
