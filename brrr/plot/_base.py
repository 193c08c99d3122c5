"""What every figure shares: the style, units and axis formatters, data in, reference runs.

Data in: any figure takes a :class:`brrr.Result`, a DataFrame, a list of records or one
record (:func:`_frame`), and ``reference=`` runs from :mod:`brrr.reference` (:func:`_references`),
drawn grey, dashed and hollow (:func:`_series_style`) and labelled with their device and date
(:func:`reference_label`). :func:`device_title` names the device a figure measured.
"""
from __future__ import annotations

from ..results import frame as _frame, ran_on_cpu  # noqa: F401 (_frame: used by the plots)

import functools
import math
import re

from ..units import format_seconds

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
    """Draw inside the package's small, consistent matplotlib style."""
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


# --- units (defined once, in brrr.units) --------------------------------------------------

from ..units import flops_unit, format_bytes, format_rate  # noqa: E402,F401 (used by the plots)


# --- axes ----------------------------------------------------------------------------------

def _bytes_axis(axis):
    """Log axis of bytes with ticks at powers of 4 labelled KiB / MiB / GiB."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.set_major_locator(LogLocator(base=4, numticks=30))
    axis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v)))
    axis.set_minor_formatter(NullFormatter())


def _seconds_axis(axis):
    """Times ('20 µs', '1 ms'); a log axis spanning less than 100x gets ticks at 1, 2 and 5 of
    each decade, so that more than one of them is labelled."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.set_major_formatter(FuncFormatter(lambda v, _: format_seconds(v) if v > 0 else "0"))
    if axis.get_scale() == "log":
        low, high = sorted(axis.get_view_interval())
        if 0 < low and high / low < 100:
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            axis.set_minor_formatter(NullFormatter())


def plain_number(v: float) -> str:
    """A tick label in one style whatever the decade: '0.01', '20', '3,000'; beyond 1e-4 to 1e6,
    a power of ten ('10⁻⁵' as mathtext)."""
    if not v > 0:
        return "0"
    if 1e-4 <= v < 1e6:
        return f"{v:,.6g}"
    exponent = math.floor(math.log10(v) + 1e-9)
    mantissa = v / 10.0 ** exponent
    if math.isclose(mantissa, 1.0, rel_tol=1e-6):
        return f"$10^{{{exponent}}}$"
    return f"${mantissa:.3g}\\times10^{{{exponent}}}$"


def _log_axis(axis):
    """Plain numbers ('0.1', '20', '300') on a log axis, never '1e-01' beside '10'."""
    from matplotlib.ticker import LogFormatter

    class Plain(LogFormatter):
        def _num_to_string(self, x, vmin, vmax):
            return plain_number(x)

    axis.set_major_formatter(Plain(labelOnlyBase=False))
    axis.set_minor_formatter(Plain(labelOnlyBase=False, minor_thresholds=(1.2, 0.5)))


def _percent_axis(axis):
    """A fraction axis labelled in percent ('0.1%', '25%'), log or linear."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    if axis.get_scale() == "log":   # 1%, 2%, 5%, 10%, ...: a tick in every span of a few percent,
        low, high = sorted(axis.get_view_interval())   # or one per decade when the axis spans many
        many = low > 0 and high / low > 300
        axis.set_major_locator(LogLocator(base=10, subs=(1.0,) if many else (1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:.3g}%"))
    axis.set_minor_formatter(NullFormatter())


def _power2_axis(axis):
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.set_major_locator(LogLocator(base=2, numticks=30))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


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


# --- data in -------------------------------------------------------------------------------

def _meta(data) -> dict:
    return dict(getattr(data, "meta", {}) or {})


class _Reframed:
    """A frame that keeps the meta of the result it came from (for titles and reference style)."""

    def __init__(self, frame, result):
        self.records = frame.to_dict("records")
        self.meta = _meta(result)
        self.name = getattr(result, "name", "")


# --- reference runs and device titles ------------------------------------------------------

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


def _series_style(i: int, ref: bool, marker: str = "o") -> dict:
    """Line style of the i-th series: colour cycle when live; grey, dashed, hollow and told
    apart by marker shape when it is a shipped reference run."""
    if ref:
        return dict(color=REFERENCE_SHADES[i % len(REFERENCE_SHADES)], linestyle="--", markerfacecolor="none",
                    marker=REFERENCE_MARKERS[i % len(REFERENCE_MARKERS)])
    return dict(color=f"C{i}", linestyle="-", marker=marker)


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


def device_title(text: str, *sources, device=None, measured: str = "measured") -> str:
    """'text: DEVICE' plus '(measured on CPU)' or '(reference run, DATE)' where that applies.

    ``measured`` words the CPU suffix: 'roof measured' gives '(roof measured on CPU)' for a
    figure whose points are predictions; '' drops it (counts, the same on any device).
    Reference runs of several devices, and nothing live: 'every reference device'.
    """
    given = [s for s in sources if s is not None]
    if device is None and len(given) > 1 and all(_is_reference(s) for s in given):
        names = list(dict.fromkeys((_meta(s).get("device") or {}).get("name", "a device") for s in given))
        if len(names) > 1:
            return f"{text}: every reference device"
    info = _device_info(*sources, device=device)
    title = text
    if info.get("name"):
        title += f": {info['name']}"
    if ran_on_cpu(info) and measured:
        title += f" ({measured} on CPU)"
    if any(_is_reference(s) for s in given):
        when = next((_meta(s).get("date", "")[:10] for s in given if _is_reference(s)), "")
        title += f" (reference run{', ' + when if when else ''})"
    return title


def _title(text: str, data, refs, **kw) -> str:
    """The device title of a figure of ``data`` beside reference runs ``refs``: when ``data`` is
    itself a reference run (the reference page), every device drawn is named."""
    return device_title(text, data, *(refs if _is_reference(data) else []), **kw)


def peak_method(info: dict, kind: str) -> str:
    """How a CPU's cached peak was measured, from its device summary's ``source``: for ``kind``
    'bandwidth' e.g. 'np.copyto on 256 MiB', for 'flops' '2048x2048 np.matmul'; '' if unknown."""
    source = str((info or {}).get("source", ""))
    pattern = r"np\.copyto on [\d,.]+ [KMG]?i?B" if kind == "bandwidth" else r"\d+x\d+ np\.matmul"
    found = re.search(pattern, source)
    return found.group(0) if found else ""


def _legend_below(fig, handles, labels, ncol: int = 1, fontsize: float = 8, width: int = None):
    """A legend under the figure's panels, its entries wrapped (at ``width`` characters) so that
    it is no wider than they are."""
    import textwrap
    width = width or 110 // ncol - 4
    labels = [textwrap.fill(str(text), width, subsequent_indent="  ") for text in labels]
    return fig.legend(handles, labels, loc="outside lower center", frameon=False, ncol=ncol, fontsize=fontsize)


# --- saving --------------------------------------------------------------------------------

def save(fig, path: str, dpi: int = 150) -> str:
    """Write ``fig`` to ``path`` (PNG, SVG, PDF by extension); returns the path."""
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    return path
