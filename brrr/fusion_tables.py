"""Tables made from :func:`brrr.experiments.fusion_speedup` records: measured and predicted
speed-ups per fuser and chain length, and long-format rows for the chapter's figures.

Times are seconds; a speed-up is unfused time / fused time. Each record names its
``fuser`` ('brrr', 'cupy_fuse', 'torch_compile') and the ``library`` that ran it.
"""
from __future__ import annotations

import numpy as np

from .kernel_source import peak_share
from .results import frame as _frame
from .results import Result
from .roofline import Roofline

VARIANTS = ("fused", "unfused")


OP_NAMES = {"mul": "multiplications", "add": "additions", "fma": "multiply-adds", "ffma": "multiply-adds",
            "cos": "cosines"}


def fusers_of(result) -> list:
    """The fusers of a :func:`brrr.experiments.fusion_speedup` run, in the order they ran."""
    return list(dict.fromkeys(r["fuser"] for r in getattr(result, "records", None) or []))


def chain_pairs(result, fuser=None) -> dict:
    """``{k: {'fused': record, 'unfused': record}}`` of one fuser's chain lengths that have both
    (default: the first fuser)."""
    fuser = fuser or next(iter(fusers_of(result)), None)
    rows = {}
    for r in getattr(result, "records", None) or []:
        if r.get("fuser") == fuser:
            rows.setdefault(r["k"], {})[r["variant"]] = r
    return {k: v for k, v in sorted(rows.items()) if len(v) == 2}


def least_seconds(result, record) -> float:
    """A record's least time (seconds): its bytes at the roof's bandwidth or its op at the most of the
    peak it can reach (:func:`brrr.kernel_source.peak_share`), whichever is longer."""
    roof = Roofline.from_dict(result.meta["roof"])
    share = peak_share(record["op"], record.get("backend", "cuda"))
    return max(record["nbytes"] / roof.peak_bandwidth, record["flops"] / (share * roof.peak_flops))


def ceiling_column(op: str = "mul", backend: str = "cuda") -> str:
    """The name of a column of speed-ups with the op at the most of the peak it can reach
    (:func:`brrr.kernel_source.peak_share`): 'at 50% of the peak' for multiplications."""
    return f"at {peak_share(op, backend):.0%} of the peak"


def ceiling_seconds(frame, roof: dict):
    """Each record's least time with its op at the most of the peak it can reach: max(bytes / B,
    FLOPs / (share x P)), seconds (NaN without a roof or the record's bytes and FLOPs)."""
    if not roof or not {"nbytes", "flops", "op"} <= set(frame.columns):
        return np.full(len(frame), np.nan)
    roof = Roofline.from_dict(roof)
    backends = frame["backend"] if "backend" in frame.columns else ["cuda"] * len(frame)
    share = np.array([peak_share(op, b) for op, b in zip(frame["op"], backends)])
    return np.maximum(frame["nbytes"] / roof.peak_bandwidth, frame["flops"] / (share * roof.peak_flops))


def speedups(result):
    """A DataFrame with one row per (fuser, k): fused and unfused seconds and the speed-ups.

    Columns: ``fuser``, ``library``, ``k``, ``fused_seconds``, ``unfused_seconds``,
    ``speedup`` (measured: unfused / fused), ``predicted_speedup`` (roofline), ``ceiling_speedup``
    (the roofline's with the op at the most of the peak it can reach, :func:`ceiling_seconds`),
    ``predicted_fused_regime``. Rows with only one of the two variants are dropped.
    """
    frame = _frame(result)
    need = {"fuser", "variant", "k", "seconds", "predicted_seconds"}
    if not need <= set(frame.columns):
        raise ValueError(f"result must come from fusion_speedup (columns {sorted(need)}), "
                         f"got columns {list(frame.columns)}")
    keys = ["fuser", "library", "k"]
    frame = frame.assign(ceiling_seconds=ceiling_seconds(frame, (getattr(result, "meta", {}) or {}).get("roof")))
    fused = frame[frame.variant == "fused"].set_index(keys)
    unfused = frame[frame.variant == "unfused"].set_index(keys)
    table = fused[["seconds", "predicted_seconds", "ceiling_seconds", "predicted_regime"]].join(
        unfused[["seconds", "predicted_seconds", "ceiling_seconds"]], lsuffix="_fused", rsuffix="_unfused",
        how="inner")
    table = table.reset_index().rename(columns={"seconds_fused": "fused_seconds",
                                                "seconds_unfused": "unfused_seconds",
                                                "predicted_regime": "predicted_fused_regime"})
    table["speedup"] = table.unfused_seconds / table.fused_seconds
    table["predicted_speedup"] = table.predicted_seconds_unfused / table.predicted_seconds_fused
    table["ceiling_speedup"] = table.ceiling_seconds_unfused / table.ceiling_seconds_fused
    return table[["fuser", "library", "k", "fused_seconds", "unfused_seconds", "speedup", "predicted_speedup",
                  "ceiling_speedup", "predicted_fused_regime"]].sort_values(["fuser", "k"], ignore_index=True)


def speedup_table(result):
    """The speed-ups of a :func:`fusion_speedup` run as a table for the page (a DataFrame):
    'fuser' (the library that fused), 'k (ops)', 'fused time' and 'unfused time' (seconds),
    'measured speed-up', 'roofline speed-up' (unfused time / fused time, measured and predicted)
    and the roofline's with the op at the most of the peak it can reach (:func:`ceiling_column`); None for None."""
    import pandas as pd
    if result is None:
        return None     # a replayed set without this record: no table
    records = getattr(result, "records", None) or [{}]
    names = {"library": "fuser", "k": "k (ops)", "fused_seconds": "fused time", "unfused_seconds": "unfused time",
             "speedup": "measured speed-up", "predicted_speedup": "roofline speed-up",
             "ceiling_speedup": "roofline speed-up " + ceiling_column(records[0].get("op", "mul"),
                                                                     records[0].get("backend", "cuda"))}
    if not getattr(result, "records", True):   # every fuser was skipped here: an empty table
        return pd.DataFrame(columns=list(names.values()))
    return speedups(result)[list(names)].rename(columns=names)


def speedup_lines(result):
    """Long-format rows for a plot: ``k``, ``speedup`` and ``series`` (each fuser, and the roofline's prediction)."""
    import pandas as pd
    table = speedups(result)
    rows = [{"k": r.k, "speedup": r.speedup, "series": f"measured: {r.library}"} for r in table.itertuples()]
    predicted = table.drop_duplicates("k")
    rows += [{"k": r.k, "speedup": r.predicted_speedup, "series": "predicted (roofline)"}
             for r in predicted.itertuples()]
    return pd.DataFrame(rows)


def time_lines(result, variant: str = "fused", fuser=None, per_element: bool = False):
    """Long-format rows for a plot: ``k``, ``seconds`` and ``series`` ('measured: OP', 'roofline: OP'
    and, where the records have their bytes and FLOPs, 'ceiling: OP').

    One fuser's ``variant`` times (default: the first fuser in the result)
    next to the roofline's time for the same bytes and FLOPs, and that time with the op at the
    most of the peak it can reach (:func:`ceiling_seconds`); ``per_element=True`` divides them by
    the array's element count (seconds per element), so runs on different sizes compare.
    """
    import pandas as pd
    frame = _frame(result)
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if frame.empty:
        return pd.DataFrame(columns=["k", "seconds", "series"])
    fuser = fuser or frame.fuser.iloc[0]
    part = frame[(frame.variant == variant) & (frame.fuser == fuser)].sort_values("k")
    scale = (lambda r: 1.0 / r.n) if per_element else (lambda r: 1.0)
    rows = [{"k": r.k, "seconds": r.seconds * scale(r), "series": f"measured: {r.op}"} for r in part.itertuples()]
    rows += [{"k": r.k, "seconds": r.predicted_seconds * scale(r), "series": f"roofline: {r.op}"}
             for r in part.itertuples()]
    top = ceiling_seconds(part, (getattr(result, "meta", {}) or {}).get("roof"))
    rows += [{"k": r.k, "seconds": t * scale(r), "series": f"ceiling: {r.op}"}
             for r, t in zip(part.itertuples(), top) if t == t]
    return pd.DataFrame(rows)


def cos_cases(result):
    """The ``x.cos().cos()`` comparison of a ``fusion_speedup(ks=(1, 2), op='cos')`` run: a
    Result (same meta) with one record per case ('cos', 'cos().cos(), fused', 'cos().cos(),
    unfused'): 'time per call' and 'roofline time' (seconds), 'share of roofline speed' (roofline
    time / time per call: 1 is as fast as the roofline allows) and 'roofline regime (cos = 1 FLOP)',
    the regime the roofline predicts from a count that takes a cos for one FLOP. None for a
    ``result`` of None (a replayed set without the run)."""
    if result is None:
        return None
    frame = _frame(result)
    rows = []
    for k, variant, case in ((1, "fused", "cos"), (2, "fused", "cos().cos(), fused"),
                             (2, "unfused", "cos().cos(), unfused")):
        match = frame[(frame.k == k) & (frame.variant == variant)]
        if len(match):
            r = match.iloc[0]
            rows.append({"case": case, "time per call": r.seconds, "roofline time": r.predicted_seconds,
                         "share of roofline speed": r.predicted_seconds / r.seconds,
                         "roofline regime (cos = 1 FLOP)": r.predicted_regime})
    return Result("cos_cases", rows, dict(result.meta))
