"""Chapter 7's records read again for the page (:mod:`brrr.prose.diagnosis`): a profile row's roof, name and
time beyond the replay floor, a remedy's whole runs, the rows an older record holds that only the profiler's
watching made, and the worked problems' counts. Times are seconds."""
from __future__ import annotations

import math
from typing import Optional

from ..results import Result


# --- a profile's rows ----------------------------------------------------------------------------

def row_roofline(summary: dict, flops: float, nbytes: float, roofline_seconds: float):
    """The roof a profile judged a row against: of its device's peaks (float32, TF32 and 16-bit tensor
    cores, from ``summary``), the one that gives the row's recorded roofline time."""
    from ..roofline import Roofline
    bw = summary["peak_bandwidth"]
    peaks = [summary[k] for k in ("peak_flops_float32", "peak_flops_float32_tensor", "peak_flops_float16_tensor")
             if summary.get(k)]
    peak = min(peaks, key=lambda p: abs(max(flops / p, nbytes / bw) - roofline_seconds))
    return Roofline(peak_flops=peak, peak_bandwidth=bw, name=summary.get("name", ""))


def rows_table(result: Result, record: dict):
    """A record's profile rows (``rows``, :data:`~brrr.experiments.diagnosis.ROW_FIELDS`) as a table, its attrs the
    run's device, backend and the record's replay floor; None for a record made before the records kept their rows."""
    import pandas as pd
    if not record.get("rows"):
        return None
    t = pd.DataFrame(record["rows"])
    t.attrs.update(summary=result.meta.get("device", {}), replay_floor_seconds=record.get("replay_floor_seconds"),
                   backend=backend(result))   # a GPU's rows are judged by their device time
    return t


def judged(table, call_cost):
    """``table`` (a profile) with each row's ``regime`` by the book's one rule with its time (:meth:`Roofline.judge`):
    against its roof (:func:`row_roofline`) and ``call_cost`` (seconds), its replayed time less the replay floor, a
    GPU's as device time. None for None."""
    if table is None:
        return None
    def regime(row):
        roof = row_roofline(table.attrs["summary"], row.flops, row.nbytes, row.roofline_seconds)
        return roof.with_ceilings(overhead=call_cost).judge(row.flops, row.nbytes, beyond_floor(table, row),
                                                            device_time=table.attrs.get("backend") == "cuda")
    return table.assign(regime=[regime(r) for r in table.itertuples()])


def batch_profiles(result: Optional[Result]) -> list:
    """Each batch's profile rows of :func:`brrr.experiments.batch_remedy` as a table (:func:`rows_table`)."""
    return [rows_table(result, rec) for rec in (result.records if result is not None else [])]


def profiler_copies(train_table):
    """The backward's ``copy_`` rows that only the profiler's watching made: in a profile recorded before
    the recorder kept its outputs' shapes alone (no ``keeps_outputs`` attr), AccumulateGrad copied every
    new gradient the recorder still held. Empty for a newer profile."""
    t = train_table
    if "keeps_outputs" in t.attrs:
        return t.iloc[:0]
    return t[(t.phase == "backward") & (t.op == "copy_")]


def low_precision_matmul(eval_table, result: Result) -> tuple:
    """The float32 profile's largest matmul row as the low-precision copy of the block runs it (the same FLOPs,
    half the bytes), and the roof that gives the low-precision record's matmul roofline time; (None, None)
    without a profile."""
    from ..roofline import Roofline
    if eval_table is None:
        return None, None
    mm = eval_table[eval_table.category == "matmul"].assign(nbytes=lambda f: f["nbytes"] / 2)
    s, want = eval_table.attrs["summary"], result.records[-1]["matmul_roofline_seconds"]
    bw = s["peak_bandwidth"]
    peaks = [s[k] for k in ("peak_flops_float32", "peak_flops_float32_tensor", "peak_flops_float16_tensor") if s.get(k)]
    peak = min(peaks, key=lambda p: abs(sum(max(f / p, b / bw) for f, b in zip(mm.flops, mm["nbytes"])) - want))
    return mm.loc[mm.flops.idxmax()], Roofline(peak_flops=peak, peak_bandwidth=bw, name=s.get("name", ""))


def frame(run):
    """A profile as a table: a DataFrame as it is, a Result saved by :func:`brrr.reference.measure` as its table."""
    from ..reference import as_frame
    return as_frame(run) if isinstance(run, Result) else run


def row_name(row) -> str:
    """'`addmm` of intermediate': a profile row's operator and module (the model's own name left out)."""
    module = str(getattr(row, "module", "") or "").partition(".")[2]
    return f"`{row.op}`" + (f" of {module}" if module else "")


def floor_seconds(table) -> float:
    """A profile's replay floor (seconds), 0 where it has none."""
    floor = table.attrs.get("replay_floor_seconds")
    return floor if floor is not None and math.isfinite(floor) else 0.0


def backend(run) -> str:
    """'cuda' or 'cpu': where a remedy's record was measured."""
    return (run.meta.get("device") or {}).get("backend")


def whole_run(record: dict, per: float = 1.0) -> tuple:
    """(seconds, IQR, clock) of a whole run a profile's attrs or a remedy's record holds (``model_seconds``,
    ``model_iqr_seconds``, ``model_clock``; a compile record's ``seconds`` and ``iqr_seconds``), divided by ``per``
    (tokens: per token); the IQR NaN where none was kept."""
    seconds = record.get("model_seconds", record.get("seconds"))
    iqr = record.get("model_iqr_seconds", record.get("iqr_seconds"))
    return seconds / per, (iqr if iqr is not None else math.nan) / per, record.get("model_clock", record.get("clock"))


def spread(result: Result) -> tuple:
    """(sorted seconds, median, IQR) of a result's records."""
    import numpy as np
    s = sorted(r["seconds"] for r in result.records)
    q1, q3 = np.percentile(s, [25, 75])
    return s, float(np.median(s)), float(q3 - q1)


def host_clocked(clock: Optional[str], backend: str) -> bool:
    """Whether a whole run's time can be read: on a GPU only one timed back to back on the host's clock
    (``clock`` 'host'; older records timed one call with CUDA events after a cache flush)."""
    return backend != "cuda" or clock == "host"


def unreadable(run: tuple, base: tuple, backend: str) -> Optional[str]:
    """What keeps two whole runs' (seconds, IQR, clock) from being compared: 'model_clock' on a GPU unless both
    were timed back to back on the host's clock (:func:`whole_run`; older records timed one call with CUDA events
    after a cache flush, which times a host-bound call's issue less the flush), 'model_iqr_seconds' where either
    kept no spread; None where nothing does."""
    if not (host_clocked(run[2], backend) and host_clocked(base[2], backend)):
        return "model_clock"
    if not all(v is not None and math.isfinite(v) for v in run[:2] + base[:2]):
        return "model_iqr_seconds"
    return None


def beyond_floor(table, row) -> Optional[float]:
    """A profile row's replayed seconds less the table's replay floor: the time of its own work; None where the
    row measured no more than the floor (or nothing)."""
    net = row.seconds - floor_seconds(table)
    return float(net) if net > 0 else None


# --- the worked problems' counts ------------------------------------------------------------------

def linear_counts(tokens: int) -> tuple:
    """(FLOPs, bytes) of a float32 ``Linear(768, 3072)`` on ``tokens`` rows: input, weights, bias, output once."""
    return 2 * tokens * 768 * 3072, 4 * (tokens * 768 + 768 * 3072 + 3072 + tokens * 3072)


def softmax_counts(batch: int, heads: int, seq: int) -> tuple:
    """(FLOPs, bytes) of a float32 softmax over (batch, heads, seq, seq) scores, counted as the profiler counts."""
    from ..profiler import PER_ELEMENT_FLOPS
    elements = batch * heads * seq * seq
    return PER_ELEMENT_FLOPS["_softmax"] * elements, 8 * elements


def linear_row(bert_table, tokens: int):
    """The BERT profile's row of ``Linear(768, 3072)`` on ``tokens`` tokens (its first feed-forward
    ``addmm``), or None."""
    if bert_table is None:
        return None
    rows = [r for r in bert_table.itertuples() if r.op == "addmm"
            and tuple(map(tuple, r.input_shapes[1:])) == ((tokens, 768), (768, 3072))]
    return rows[0] if rows else None


def three_classes(table) -> tuple:
    """(summed replayed seconds, summed roofline seconds, rows) of Ivanov et al.'s classes (matmul,
    normalisation, elementwise) in a profile, and the ridge its matmuls were judged against (FLOP/byte)."""
    three = ["matmul", "normalisation", "elementwise"]
    t = table[table.category.isin(three)]
    g = t.groupby("category").agg(seconds=("seconds", "sum"), roof=("roofline_seconds", "sum"),
                                  rows=("seconds", "size")).reindex(three).fillna(0)
    mm = t[t.category == "matmul"].iloc[0]
    return g, row_roofline(table.attrs["summary"], mm.flops, mm["nbytes"], mm.roofline_seconds).ridge
