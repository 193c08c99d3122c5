"""The parts of a step's profile that chapter 8's worked problems read, kept in the step's record so that a
replayed page has them: the summed replayed time, its split by category, autocast's casts and the head.

:func:`summary` of a :func:`brrr.profile` table gives ``profile_seconds`` (the summed time of its rows, s),
``category_seconds`` ({category: s}), ``cast_seconds`` and ``casts`` (the ``aten::_to_copy`` rows: the casts
autocast inserts before the matmuls), ``head_seconds`` and ``head_flops`` (the rows of the output layer,
``GPT.head``, and its FLOPs) and ``head_width`` (its outputs: the vocabulary it ran with).
"""
from __future__ import annotations

CAST_OPS = ("_to_copy",)


def _head_rows(table):
    return table["module"].astype(str).str.split(".").str[-1] == "head"


def summary(table) -> dict:
    """The fields above, from a profile ``table`` (a DataFrame with op, module, category, seconds, flops and
    input_shapes)."""
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
            "head_width": width}
