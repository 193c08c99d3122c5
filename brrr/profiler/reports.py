"""Reading a profile table: totals per category, regime, operator and phase; the tables
for the page; the operators on the roofline.

Every function takes the DataFrame :func:`brrr.profile` returns (or a reference run of
one, through :func:`brrr.reference.as_frame`); the byte column is ``nbytes``.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..roofline import Roofline
from ..results import ran_on_cpu
from ..units import format_bytes, format_si
from .counting import CATEGORIES


def category_totals(table, by_phase: bool = False):
    """FLOPs, bytes and time per category, with each one's share of the total.

    Returns a DataFrame indexed by category (matmul, normalisation, elementwise,
    other; or by phase and category) with columns flops, nbytes, seconds, ops,
    flop_share, byte_share, time_share (fractions of 1) and flops_per_second
    (achieved FLOP/s of the category as a whole).
    """
    missing = {"category", "flops", "nbytes", "seconds"} - set(getattr(table, "columns", ()))
    if missing:
        raise ValueError(f"table must be a brrr.profile() DataFrame; it lacks {sorted(missing)}")
    keys = ["phase", "category"] if by_phase else ["category"]
    totals = table.groupby(keys).agg(flops=("flops", "sum"), nbytes=("nbytes", "sum"),
                                     seconds=("seconds", "sum"), ops=("calls", "sum"))
    if not by_phase:
        totals = totals.reindex([c for c in CATEGORIES if c in totals.index])
    grand = totals.sum()
    totals["flop_share"] = totals.flops / grand.flops if grand.flops else math.nan
    totals["byte_share"] = totals["nbytes"] / grand["nbytes"] if grand["nbytes"] else math.nan
    totals["time_share"] = totals.seconds / grand.seconds if grand.seconds > 0 else math.nan
    totals["flops_per_second"] = totals.flops / totals.seconds.where(totals.seconds > 0)
    return totals


def regime_totals(table):
    """Time and op count per regime (which remedy would pay most)."""
    out = table.groupby("regime").agg(seconds=("seconds", "sum"), ops=("calls", "sum"))
    out["time_share"] = out.seconds / out.seconds.sum()
    return out.sort_values("seconds", ascending=False)


def op_totals(table):
    """One row per operator name: calls, FLOPs, bytes, seconds, share of time, usual regime (None for None: a
    replayed set without that profile)."""
    if table is None:
        return None
    out = table.groupby("op", sort=False).agg(
        category=("category", "first"), calls=("calls", "sum"), flops=("flops", "sum"),
        nbytes=("nbytes", "sum"), seconds=("seconds", "sum"),
        regime=("regime", lambda r: r.value_counts().index[0]))
    out["time_share"] = out.seconds / out.seconds.sum()
    return out.sort_values("seconds", ascending=False)


# Columns a reader needs from a profile table (or its totals), with units in the headers, and
# how brrr.book.table formats each ('flop' columns are written out here as '134 MFLOP').
PAGE_COLUMNS = {
    "op": ("op", None), "module": ("module", None), "category": ("category", None),
    "calls": ("calls", "int"), "flops": ("FLOPs", "flop"), "nbytes": ("bytes", "bytes"),
    "intensity": ("FLOP/byte", "number"), "seconds": ("replayed time", "time"),
    "roofline_seconds": ("roofline time", "time"), "efficiency": ("efficiency", "percent"),
    "time_share": ("share of time", "percent"), "regime": ("bound by", "regime"),
}
DEFAULT_PAGE_COLUMNS = ["op", "module", "flops", "nbytes", "seconds", "roofline_seconds", "efficiency", "regime"]


def page_table(table, columns: Optional[list] = None):
    """A profile table (or :func:`op_totals`) styled for the page by :func:`brrr.book.table`:
    the ``columns`` a reader needs (default :data:`DEFAULT_PAGE_COLUMNS`, those present),
    units in the headers, FLOPs with a prefix, times in µs/ms, efficiency in percent,
    '–' where a value is missing. None for None (a replayed set without that profile)."""
    from ..book import table as styled
    if table is None:
        return None
    frame = table.reset_index() if table.index.name in PAGE_COLUMNS else table
    columns = [c for c in (columns or DEFAULT_PAGE_COLUMNS) if c in frame.columns]
    unknown = [c for c in columns if c not in PAGE_COLUMNS]
    if unknown:
        raise ValueError(f"no page format for columns {unknown}; known: {sorted(PAGE_COLUMNS)}")
    out = frame[columns].copy()
    formats, headers = {}, []
    for col in columns:
        header, kind = PAGE_COLUMNS[col]
        if col == "module":   # 'EncoderLayer.attention.query' -> 'attention.query': the model's name once
            roots = {str(m).split(".")[0] for m in out[col]}
            if len(roots) == 1:
                root = roots.pop()
                out[col] = [str(m)[len(root) + 1:] or "(top level)" for m in out[col]]
                header = f"module of {root}"
        if kind == "flop":   # a no-break space keeps '32.8 kFLOP' on one line
            out[col] = [format_si(v, "FLOP").replace(" ", "\u00a0") if v else "0" for v in out[col]]
        elif kind == "bytes":
            out[col] = [format_bytes(v).replace(" ", "\u00a0") if np.isfinite(v) else "–" for v in out[col]]
        elif kind == "regime":    # 'memory-bound' under the header 'bound by': 'memory'
            out[col] = [str(v).replace("-bound", "") for v in out[col]]
        elif kind == "percent":   # two significant digits below 10%: '0.42%', '73%'
            out[col] = ["–" if not np.isfinite(v) else f"{100 * v:.0f}%" if 100 * v >= 10 else f"{100 * v:.2g}%"
                        for v in out[col].astype(float)]
        elif kind:
            formats[header] = kind
        headers.append(header)
    out.columns = headers
    return styled(out, formats)


def roofline_points(table, by: str = "op"):
    """Points for :func:`brrr.plot.roofline`: FLOPs, bytes and seconds summed per ``by`` group.

    ``by`` is a column of the table ('op', 'category', 'module', ...). Groups
    without FLOPs (copies) or without a measured time are left out.
    """
    import pandas as pd
    if by not in getattr(table, "columns", ()):
        raise ValueError(f"by must be a column of the profile table, got {by!r}")
    rows = table[table.seconds > 0]
    grouped = rows.groupby(by, sort=False).agg(flops=("flops", "sum"), nbytes=("nbytes", "sum"),
                                               seconds=("seconds", "sum"),
                                               category=("category", "first")).reset_index()
    grouped = grouped[(grouped.flops > 0) & (grouped["nbytes"] > 0)]
    # matplotlib hides legend labels that start with "_", so `_softmax` is shown as `softmax`
    grouped["label"] = [(f"{k} ({c})" if by != "category" else str(k)).lstrip("_")
                        for k, c in zip(grouped[by], grouped.category)]
    return pd.DataFrame(grouped[["label", "flops", "nbytes", "seconds"]]).reset_index(drop=True)


def reference_points(runs, by: str = "op") -> list:
    """Reference profiles (Results from :func:`brrr.reference.beside`) as Results of
    roofline points (:func:`roofline_points`), keeping each run's meta (device, date)."""
    from ..reference import as_frame
    from ..results import Result
    out = []
    for run in runs or ():
        points = roofline_points(as_frame(run), by)
        out.append(Result(name=run.name, records=points.to_dict("records"), meta=dict(run.meta)))
    return out


def plot_roofline(table, roof: Optional[Roofline] = None, by: str = "op", ax=None,
                  title: Optional[str] = None, reference=None):
    """The profile's ops on this device's roofline (log-log), one point per ``by`` group.

    Draws with :func:`brrr.plot.roofline`; ``roof`` defaults to the live device's
    float32 roofline. ``reference``: reference runs of the same profile (from
    :func:`brrr.reference.beside`), drawn grey with their device's roof. ``title``
    is followed by the device. Returns the matplotlib Figure. ``table`` None (a step whose
    profile could not be taken, e.g. out of memory, or a replayed run without that record) gives
    a figure that says so.
    """
    from ..device import device as live
    from ..plot import roofline
    if table is None:
        import matplotlib.pyplot as plt
        fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(6.4, 1.2), layout="constrained")
        ax.axis("off")
        ax.text(0.5, 0.5, f"{title or 'This profile'}: no profile to draw (the table above, or the note "
                "where the profile is taken, says why)",
                ha="center", va="center", wrap=True, fontsize=9)
        return fig
    roof = roof or Roofline.from_device()
    dev = live()
    where = (f"{table.attrs.get('device') or dev.name}"
             f"{' (measured on CPU)' if ran_on_cpu(table.attrs.get('summary') or dev) else ''}")
    title = f"{title or 'Operators of the profiled model'}: {where}"
    return roofline(roof, points=roofline_points(table, by), ax=ax, title=title, device=dev,
                    reference=reference_points(reference, by))


def phase_totals(table):
    """FLOPs, summed replayed time and the matmuls' share of it per phase ('forward',
    'backward'; the one-op 'loss' phase is left out) of a ``backward=True`` profile."""
    rows = table[table.phase.isin(["forward", "backward"])]
    out = rows.groupby("phase", sort=False).agg(flops=("flops", "sum"), seconds=("seconds", "sum"),
                                                ops=("calls", "sum"))
    mm = rows[rows.category == "matmul"].groupby("phase").seconds.sum()
    out["matmul_time_share"] = mm.reindex(out.index).fillna(0) / out.seconds
    mm_flops = rows[rows.category == "matmul"].groupby("phase").flops.sum()
    out["matmul_flops"] = mm_flops.reindex(out.index).fillna(0)
    return out.reindex([p for p in ("forward", "backward") if p in out.index])


def phase_table(table):
    """:func:`phase_totals` styled for the page (None for None)."""
    from ..book import table as styled
    if table is None:
        return None
    t = phase_totals(table).reset_index()
    out = t[["phase", "ops"]].copy()
    out["FLOPs"] = [format_si(v, "FLOP") for v in t.flops]
    out["time (replayed, summed)"] = t.seconds
    out["matmul share of the time"] = t.matmul_time_share
    return styled(out, {"ops": "int", "time (replayed, summed)": "time", "matmul share of the time": "percent"})


def short_device_name(run) -> str:
    """A reference run's device name, short enough for a column header."""
    name = (getattr(run, "meta", {}).get("device") or {}).get("name", "reference")
    return name.replace("NVIDIA ", "")
