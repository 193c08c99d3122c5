"""Interactive explorers: move the sliders, watch a kernel's point move on the roofline.

Each explorer needs ipywidgets and a live kernel to be interactive. Where there
is none (a plain Python script, ipywidgets missing), it returns a figure: the
same plot at the starting values, drawn once. In a kernel it returns an
:class:`Explorer`, which Jupyter and Colab show as the live widget and a static
page (the book's HTML, which loads no widget JavaScript) as that figure.
"""
from __future__ import annotations

import math

from .roofline import Roofline

SLIDERS_ROOF = "roof set by the sliders"


def explain(roof: Roofline, intensity: float, nbytes: float) -> str:
    """One line: regime, attainable FLOP/s and expected time of a kernel moving ``nbytes`` bytes
    at ``intensity`` FLOP/byte on ``roof``."""
    from .units import format_bytes, format_rate, format_si
    from .units import format_seconds
    flops = intensity * nbytes
    regime = roof.regime(flops, nbytes)
    seconds = float(roof.time(flops, nbytes))
    return (f"{regime}: {intensity:.3g} FLOP/byte is {'below' if intensity < roof.ridge else 'above'} "
            f"the ridge ({roof.ridge:.3g} FLOP/byte); attainable {format_rate(roof.attainable(intensity))}; "
            f"moving {format_bytes(nbytes)} and doing {format_si(flops, 'FLOP')}s takes at least "
            f"{format_seconds(seconds)} (memory {format_seconds(float(roof.t_mem(nbytes)))}, "
            f"math {format_seconds(float(roof.t_math(flops)))})")


def roofline_figure(roof: Roofline, intensity: float, nbytes: float, ax=None, device=None):
    """The roofline with one kernel's predicted point on it (no measuring); ``device`` (a
    :class:`brrr.Device`) names where the roof's peaks come from."""
    from . import plot
    flops = intensity * nbytes
    point = {"label": f"your kernel ({intensity:.3g} FLOP/byte)", "flops": flops, "nbytes": nbytes,
             "seconds": float(roof.time(flops, nbytes))}
    lo, hi = min(intensity, roof.ridge) / 64, max(intensity, roof.ridge) * 64
    fig = plot.roofline(roof, points=[point], ax=ax, annotate_points=True, device=device,
                        xlim=(2.0 ** math.floor(math.log2(lo)), 2.0 ** math.ceil(math.log2(hi))),
                        title=f"Roofline explorer{': ' + roof.name if roof.name else ''}")
    return fig


def _live_kernel() -> bool:
    """True inside a running IPython kernel (Jupyter, Colab), where widgets can talk back."""
    try:
        from IPython import get_ipython
        shell = get_ipython()
        return shell is not None and getattr(shell, "kernel", None) is not None
    except ImportError:
        return False


def roofline_explorer(roof: Roofline = None, intensity: float = 1.0, nbytes: float = 2 ** 28,
                      static=None, device=None):
    """Sliders for intensity (FLOP/byte), peak FLOP/s, bandwidth (bytes/s) and bytes moved.

    The point on the roofline moves with them, and a line below says the
    regime and the least time the kernel can take. ``roof`` defaults to an
    A100's FP32 roof from the spec table (the example of He 2022), so the explorer
    never measures anything.

    ``static=None`` picks: interactive where ipywidgets and a live kernel are
    present, otherwise a static figure at the starting values (returned as a
    matplotlib Figure). ``static=True`` always returns the figure.
    Interactive: returns the widget box (display it, or let Jupyter do so).
    ``device``: the :class:`brrr.Device` whose roof ``roof`` is, so the legend says where its
    peaks come from (a CPU's are measured, not a spec sheet).
    """
    if roof is None:
        from .specs import GPU_SPECS
        s = GPU_SPECS["A100-40GB"]
        roof = Roofline(peak_flops=s.fp32, peak_bandwidth=s.bandwidth, name=s.name,
                        compute_ceilings={"FP32": s.fp32}, memory_ceilings={"HBM": s.bandwidth})
    if not isinstance(roof, Roofline):
        raise TypeError(f"roof must be a brrr.Roofline, got {type(roof).__name__}")
    for name, value in (("intensity", intensity), ("nbytes", nbytes)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ValueError(f"{name} must be a positive number, got {value!r}")
    if static is None:
        try:
            import ipywidgets  # noqa: F401
            static = not _live_kernel()
        except ImportError:
            static = True
    if static:
        return _static_figure(roof, intensity, nbytes, device)
    return Explorer(_interactive(roof, intensity, nbytes, device), _static_figure(roof, intensity, nbytes, device))


def _static_figure(roof, intensity, nbytes, device=None):
    import textwrap
    fig = roofline_figure(roof, intensity, nbytes, device=device)
    # Above the chart: the roofline draws its legend below it.
    fig.suptitle(textwrap.fill(explain(roof, intensity, nbytes), 110), fontsize=8, color="0.25")
    return fig


class Explorer:
    """A widget and a picture of it: shown live where widgets run, as a PNG where they don't."""

    def __init__(self, widget, figure):
        import base64
        import io
        import matplotlib.pyplot as plt
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
        plt.close(figure)   # shown through this object, not by the inline backend
        self.widget = widget
        self.png = base64.b64encode(buffer.getvalue()).decode("ascii")

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {**_widget_bundle(self.widget, include, exclude), "image/png": self.png}


def _widget_bundle(widget, include=None, exclude=None) -> dict:
    """The MIME bundle Jupyter shows a widget by, from ipywidgets 8 or 7 (Colab ships 7.7.1)."""
    if hasattr(widget, "_repr_mimebundle_"):   # ipywidgets 8
        return widget._repr_mimebundle_(include=include, exclude=exclude) or {}
    # ipywidgets 7 displays itself through _ipython_display_, with this bundle.
    return {"text/plain": repr(widget),
            "application/vnd.jupyter.widget-view+json": {"version_major": 2, "version_minor": 0,
                                                          "model_id": widget._model_id}}


def _interactive(roof, intensity, nbytes, device=None):
    import ipywidgets as w
    import matplotlib.pyplot as plt
    from IPython.display import display

    def log_slider(description, value, lo, hi):
        return w.FloatLogSlider(value=value, base=10, min=math.log10(lo), max=math.log10(hi), step=0.05,
                                description=description, readout_format=".3g", continuous_update=False,
                                style={"description_width": "11em"}, layout=w.Layout(width="34em"))

    sliders = {
        "intensity": log_slider("intensity (FLOP/byte)", intensity, 1e-2, 1e4),
        "peak_flops": log_slider("peak FLOP/s", roof.peak_flops, 1e9, 1e16),
        "peak_bandwidth": log_slider("bandwidth (bytes/s)", roof.peak_bandwidth, 1e9, 1e13),
        "nbytes": log_slider("bytes moved", nbytes, 1e3, 1e11),
    }
    readout = w.HTML()

    def update(intensity, peak_flops, peak_bandwidth, nbytes):
        r = roof.with_ceilings(peak_flops=peak_flops, peak_bandwidth=peak_bandwidth,
                               compute_ceilings={}, memory_ceilings={})
        moved = (peak_flops, peak_bandwidth) != (roof.peak_flops, roof.peak_bandwidth)
        if moved:   # no longer the device's roof
            r.name = SLIDERS_ROOF
        fig = roofline_figure(r, intensity, nbytes, device=None if moved else device)
        display(fig)
        plt.close(fig)
        readout.value = f"<b>{explain(r, intensity, nbytes)}</b>"

    out = w.interactive_output(update, sliders)
    return w.VBox([*sliders.values(), readout, out])
