"""The device table's reading of its ridge points, chosen by the spec-sheet table it describes
(:func:`brrr.specs.spec_table`): the range of each ridge, the trend across NVIDIA's data-centre
generations that He (2022) points to, and what the H200's faster memory does to it. Spec-sheet
data, not measurements; the sentences still follow the numbers, so a new row cannot contradict them.
"""
from __future__ import annotations

from . import Prose
from . import words as w

FP32 = "ridge FP32 (FLOP/B)"
FP16_TC = "ridge FP16 tensor (FLOP/B)"
GENERATIONS = ("Tesla V100 SXM2", "NVIDIA A100 40GB", "NVIDIA H100 SXM")   # one SXM part per generation
FASTER_MEMORY = ("NVIDIA H100 SXM", "NVIDIA H200 SXM")                      # same chip, faster memory
CONSUMER = ("GeForce",)    # names of gaming cards; the rest are data-centre or workstation parts


def _span(table, column: str) -> tuple:
    """(lowest, its GPU, highest, its GPU) of ``column`` over the rows that have it."""
    rows = table.dropna(subset=[column])
    lo, hi = rows[column].idxmin(), rows[column].idxmax()
    return rows.loc[lo, column], rows.loc[lo, "GPU"], rows.loc[hi, column], rows.loc[hi, "GPU"]


def _ridge(table, gpu: str, column: str = FP16_TC):
    rows = table[table["GPU"] == gpu]
    return None if rows.empty else float(rows[column].iloc[0])


def ridges(table) -> Prose:
    """What the ridge columns of ``table`` (:func:`brrr.specs.spec_table`) say: where FP32 and FP16
    tensor-core math reach their ridges, whether the tensor-core ridge rose from one data-centre
    generation to the next, and how far faster memory (H100 to H200) moves it back."""
    f_lo, _, f_hi, _ = _span(table, FP32)
    t_lo, t_lo_gpu, t_hi, t_hi_gpu = _span(table, FP16_TC)
    consumer = table["GPU"].str.contains("|".join(CONSUMER))
    c_lo, _, c_hi, _ = _span(table[consumer], FP16_TC) if consumer.any() else (None,) * 4
    d_lo, _, d_hi, _ = _span(table[~consumer], FP16_TC)
    text = (f"General FP32 math reaches its ridge at {w.number(f_lo, 2)} to {w.number(f_hi, 2)} FLOP per byte, "
            f"FP16 tensor-core math at {w.number(t_lo, 2)} ({t_lo_gpu}) to {w.number(t_hi, 2)} ({t_hi_gpu})")
    if c_lo is not None:
        text += (f": {w.number(d_lo, 2)} to {w.number(d_hi, 2)} on the data-centre and workstation parts, "
                 f"{w.number(c_lo, 2)} to {w.number(c_hi, 2)} on the GeForce cards")
    text += "."
    both = table.dropna(subset=[FP32, FP16_TC])
    ratio = both[FP16_TC] / both[FP32]
    facts = {"fp32": (float(f_lo), float(f_hi)), "fp16_tensor": (float(t_lo), float(t_hi))}
    if len(ratio) and ratio.min() > 1:
        facts["tensor_over_fp32"] = (float(ratio.min()), float(ratio.max()))
        text += (f" On each GPU the tensor-core ridge is {w.number(ratio.min(), 2)} to {w.number(ratio.max(), 2)} "
                 "times its FP32 one: the tensor cores need that much more reuse of every byte before they become "
                 "the limit.")
    gens = [(g, _ridge(table, g)) for g in GENERATIONS]
    if all(r is not None for _, r in gens):
        steps = " to ".join(f"{g} {w.number(r, 3)}" for g, r in gens)
        rising = all(a[1] < b[1] for a, b in zip(gens, gens[1:]))
        facts["generations"] = "rising" if rising else "not rising"
        text += (f" Across the data-centre generations the tensor-core ridge has moved to the right ({steps} "
                 "FLOP/byte), because peak FLOP/s grew faster than bandwidth (He, 2022)." if rising else
                 f" Across the data-centre generations the tensor-core ridge has not moved steadily to the right "
                 f"({steps} FLOP/byte), though He (2022) notes that peak FLOP/s tends to grow faster than "
                 "bandwidth.")
    old, new = (_ridge(table, g) for g in FASTER_MEMORY)
    if old is not None and new is not None:
        change = new / old - 1
        facts["faster_memory"] = change
        text += (f" The {FASTER_MEMORY[1]}, the same chip as the {FASTER_MEMORY[0]} with faster memory, "
                 + (f"moves it back by {w.percent(-change)}, from {w.number(old, 3)} to {w.number(new, 3)}."
                    if change < 0 else f"leaves it at {w.number(new, 3)}, against {w.number(old, 3)}."))
    return Prose(text, facts)
