"""The parts of a step's profile that chapter 8's worked problems read, kept in the step's record so that a
replayed page has them: the summed replayed time, its split by category, autocast's casts and the head.

:func:`summary` of a :func:`brrr.profile` table gives ``profile_seconds`` (the summed time of its rows, s),
``category_seconds`` ({category: s}), ``cast_seconds`` and ``casts`` (the ``aten::_to_copy`` rows: the casts
autocast inserts before the matmuls), ``head_seconds`` and ``head_flops`` (the rows of the output layer,
``GPT.head``, and its FLOPs), ``head_width`` (its outputs: the vocabulary it ran with), and the rows themselves
(``rows``: :data:`~brrr.experiments.diagnosis.ROW_FIELDS` of each; ``replay_floor_seconds``), which the page judges
again as chapter 7 does (:func:`judged`).
"""
from __future__ import annotations

from ..results import Result

CAST_OPS = ("_to_copy",)


def _head_rows(table):
    return table["module"].astype(str).str.split(".").str[-1] == "head"


def summary(table) -> dict:
    """The fields above, from a profile ``table`` (a :func:`brrr.profile` DataFrame)."""
    from .diagnosis import ROW_FIELDS
    head = table[_head_rows(table) & (table["category"] == "matmul")]
    casts = table["op"].isin(CAST_OPS)
    width = None
    for shapes in head["input_shapes"]:
        last = shapes[-1] if shapes and isinstance(shapes[-1], (list, tuple)) else None
        width = int(last[-1]) if last else width                   # (tokens, d) @ (d, vocab): the last dim
    return {"profile_seconds": float(table["seconds"].sum()),
            "category_seconds": {str(k): float(v) for k, v in table.groupby("category")["seconds"].sum().items()},
            "cast_seconds": float(table.loc[casts, "seconds"].sum()), "casts": int(table.loc[casts, "calls"].sum()),
            "head_seconds": float(head["seconds"].sum()), "head_flops": float(head["flops"].sum()),
            "head_width": width, "rows": table[ROW_FIELDS].to_dict("records"),
            "replay_floor_seconds": table.attrs.get("replay_floor_seconds")}


def regime_shares(table) -> dict:
    """{regime: share of the summed replayed time} of a profile table."""
    from ..profiler import regime_totals
    shares = regime_totals(table).time_share
    return {str(k): float(v) for k, v in shares.items()}


def judged(result, call_cost):
    """``result`` (of :func:`~brrr.experiments.capstone.run_steps`) with each step that kept its profile's rows judged as chapter 7 judges them
    (:func:`.diagnosis_records.judged`, with the page's fixed cost of a call ``call_cost``, seconds): its
    ``regime_shares`` and ``regime`` replaced, ``judged`` True. Steps without rows keep their recorded shares."""
    if result is None or call_cost is None:
        return result
    from .diagnosis_records import judged as judged_rows, rows_table
    records = []
    for r in result.records:
        table = rows_table(result, r)
        if table is not None:
            shares = regime_shares(judged_rows(table, call_cost))
            r = {**r, "regime_shares": shares, "regime": max(shares, key=shares.get), "judged": True}
        records.append(r)
    return Result(result.name, records, result.meta)
