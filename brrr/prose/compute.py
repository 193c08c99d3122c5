"""Chapter 1, compute: sentences chosen by the measurements.

Each function takes the chapter's live result and the reference runs of the
same experiment (from :func:`brrr.reference.beside`) and returns
:class:`~brrr.prose.Prose`. The spec-sheet bars are data, not measurements;
:func:`spec_ratios` describes them all the same, so that no number is typed
into the chapter.

One module per section of the chapter, gathered here so that the chapter and the
tests name one place: :mod:`.compute_matmul` (matmul throughput against size, and
the shape of a curve), :mod:`.compute_tensor` (spec-sheet ratios, the tensor-core
sweep), :mod:`.compute_mfu` (MFU against the batch) and :mod:`.compute_gap`
(elementwise against matmul).
"""
from __future__ import annotations

from .compute_gap import GAP_SHOWS, elementwise_gap
from .compute_matmul import DIP, FLAT, HALF, PLATEAU, THIS_RUNS_BEST, curve, matmul_curve
from .compute_mfu import NEAR, OVERHEAD, mfu
from .compute_tensor import MATH, spec_ratios, tensor_cores
from .words import ABOVE_ROOF

__all__ = ["ABOVE_ROOF", "DIP", "FLAT", "GAP_SHOWS", "HALF", "MATH", "NEAR", "OVERHEAD", "PLATEAU",
           "THIS_RUNS_BEST", "curve", "elementwise_gap", "matmul_curve", "mfu", "spec_ratios", "tensor_cores"]
