"""The bytes model of vertical fusion: what k pointwise ops cost fused and unfused, by the roofline.

Run unfused, each of ``k`` pointwise ops reads its input from memory and writes
its output back: ``2 k`` array passes. Fused into one kernel, the chain reads
each element once and writes the result once: ``2`` passes, the same FLOPs
(:func:`chain_traffic`, bytes and FLOPs). While both are memory-bound the roofline
(Williams et al., 2009) predicts a speed-up of ``k``; once the fused kernel's intensity
``k * flops_per_op / (2 * itemsize)`` (FLOP/byte) passes the ridge point it becomes
compute-bound and the speed-up levels off at ``2 * itemsize * ridge / flops_per_op``
(:func:`predicted_speedup`, :func:`crossover_k`). Nothing here measures.
"""
from __future__ import annotations

import math

from .. import config
from ..kernel_source import CHAIN_OPS, OPS as KERNEL_OPS, _check_op, peak_share, traffic
from ..fusion_tables import ceiling_column
from ..roofline import Roofline
from . import _arrays

# The pointwise ops are brrr.kernels' own: (statement, FLOPs per element, constant c, constant d).
OPS = KERNEL_OPS


KS = {   # sweep -> (full-size chain lengths, quick-mode chain lengths)
    "kernels": (tuple(2 ** i for i in range(8)), (1, 2, 4, 16, 64)),
    "torch_compile": (tuple(2 ** i for i in range(7)), (1, 4, 16)),   # a compile (seconds) per k
    "cos": (tuple(2 ** i for i in range(7)), (1, 2, 4, 8)),
}


def check_op(op):
    """``op`` if it is one of :data:`OPS` (brrr.kernels' own), else a ValueError naming them."""
    _check_op(op)
    return op


def check_k(k):
    """``k`` if it is a chain length (an integer >= 1), else a ValueError."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k (the number of pointwise ops) must be an integer >= 1, got {k!r}")
    return k


def chain_traffic(k: int, n: int, fused: bool, op: str = "mul", dtype="float32") -> tuple:
    """``(bytes moved, FLOPs)`` of ``k`` ops ``op`` on ``n`` elements, fused or not.

    Fused: one read and one write per element (``2 n itemsize`` bytes). Unfused:
    ``k`` passes, each a read and a write (``2 k n itemsize``). FLOPs are
    ``k n`` times the op's count (``cos`` counts as one, though it costs many
    instructions).
    """
    check_k(k)
    check_op(op)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n (elements) must be an integer >= 1, got {n!r}")
    nbytes, flops = traffic("chain", n, k, fused, op, dtype=_arrays.dtype_name(dtype))
    return float(nbytes), float(flops)


def _check_roof(roof):
    if not isinstance(roof, Roofline):
        raise TypeError(f"roof must be a brrr.Roofline, got {type(roof).__name__}")
    return roof


def ceiling_roof(roof: Roofline, op: str = "mul", backend: str = "cuda") -> Roofline:
    """``roof`` with its peak FLOP/s at the share a chain of ``op`` can reach
    (:func:`brrr.kernel_source.peak_share`: half for multiplications, which the peak counts as half an FMA)."""
    _check_roof(roof)
    return roof.with_ceilings(peak_flops=peak_share(op, backend) * roof.peak_flops)


def predicted_speedup(roof: Roofline, k: int, n: int = 2 ** 24, op: str = "mul", dtype="float32",
                      at_ceiling: bool = False, backend: str = "cuda") -> float:
    """Roofline time of the unfused chain divided by that of the fused one (``at_ceiling``: with
    the op at the share of the peak it can reach, :func:`ceiling_roof`).

    Equals ``k`` while the fused kernel is memory-bound; levels off at
    ``2 * itemsize * ridge / flops_per_op`` once it is compute-bound.
    """
    roof = ceiling_roof(roof, op, backend) if at_ceiling else _check_roof(roof)
    unfused = roof.time(*chain_traffic(k, n, False, op, dtype)[::-1])
    fused = roof.time(*chain_traffic(k, n, True, op, dtype)[::-1])
    return float(unfused / fused)


def crossover_k(roof: Roofline, op: str = "mul", dtype="float32", at_ceiling: bool = False,
                backend: str = "cuda") -> float:
    """The chain length at which the fused kernel reaches the ridge point (becomes compute-bound);
    ``at_ceiling``: with the op at the share of the peak it can reach (:func:`ceiling_roof`), where the
    chain's own time bends. ``op`` may also be 'ffma' (one fused multiply-add per link)."""
    _check_op(op, CHAIN_OPS)
    share = peak_share(op, backend) if at_ceiling else 1.0
    return share * roof.ridge * 2 * _arrays.itemsize(dtype) / CHAIN_OPS[op][1]


def cap_length(roof: Roofline, op: str = "mul", backend: str = "cuda", dtype="float32") -> int:
    """The chain length, rounded up, past which a fused chain of ``op`` is compute-bound, the op at the
    most of the peak it can reach (:func:`crossover_k` ``at_ceiling``): where fusing more stops paying."""
    return math.ceil(crossover_k(roof, op, dtype, at_ceiling=True, backend=backend))


def past_cap(roof: Roofline, op: str = "mul", backend: str = "cuda") -> int:
    """Twice :func:`cap_length`: the fused chain chapter 4's worked problems 2 and 3 time, well past the cap."""
    return 2 * cap_length(roof, op, backend)


def default_ks(quick=None, sweep: str = "kernels") -> tuple:
    """Chain lengths for a sweep: 'kernels' 1, 2, 4, ..., 128 (quick mode: 1, 2, 4, 16, 64);
    'torch_compile' 1 to 64 (quick: 1, 4, 16), since each k costs a compilation; 'cos' 1 to 64
    (quick: 1, 2, 4, 8)."""
    if sweep not in KS:
        raise ValueError(f"sweep must be one of {tuple(KS)}, got {sweep!r}")
    quick = config.quick_mode() if quick is None else quick
    return KS[sweep][1 if quick else 0]


def predicted_table(roof: Roofline, ks=None, op: str = "mul", dtype="float32", backend: str = "cuda"):
    """The bytes model for each chain length ``k``, as a table for the page (a DataFrame):
    bytes per element moved unfused and fused, the fused kernel's intensity (FLOP/byte), the
    roofline's speed-up of fusing at the full peak and at the share of it the op can reach
    (:func:`ceiling_column`, :func:`ceiling_roof`), and the fused kernel's regime at that share. Nothing
    is measured."""
    import pandas as pd
    top = ceiling_roof(roof, op, backend)
    ks = default_ks() if ks is None else _arrays.check_sizes("ks", ks)
    rows = []
    for k in ks:
        unfused, _ = chain_traffic(k, 1, False, op, dtype)
        fused, flops = chain_traffic(k, 1, True, op, dtype)
        rows.append({"k (ops)": k, "unfused bytes per element": unfused, "fused bytes per element": fused,
                     "fused intensity (FLOP/byte)": flops / fused,
                     "predicted speed-up": predicted_speedup(roof, k, op=op, dtype=dtype),
                     f"predicted speed-up {ceiling_column(op, backend)}":
                         predicted_speedup(roof, k, op=op, dtype=dtype, at_ceiling=True, backend=backend),
                     f"fused kernel {ceiling_column(op, backend)}": top.regime(flops, fused)})
    return pd.DataFrame(rows)
