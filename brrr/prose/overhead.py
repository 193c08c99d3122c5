"""Chapter 3, overhead: sentences chosen by the measurements.

Each function takes the chapter's live result and the reference runs of the
same experiment (from :func:`brrr.reference.beside`) and returns
:class:`~brrr.prose.Prose`. Times are seconds, sizes numbers of elements.

One module per section of the chapter, gathered here so that the chapter and the
tests name one place: :mod:`.overhead_python` (Python operations per second),
:mod:`.overhead_sizes` (time against size; what the fixed cost measures),
:mod:`.overhead_calls` (one call, timed several ways), :mod:`.overhead_async`
(asynchronous execution, CUDA graphs and ``torch.compile``) and
:mod:`.overhead_batch` (doubling the batch, and Worked problem 3's check).
"""
from __future__ import annotations

from .overhead_async import AHEAD, async_demo, async_numbers, graph_numbers, reduce_overhead
from .overhead_batch import batch_check, batch_steps, double_the_batch
from .overhead_calls import call_overhead
from .overhead_python import HE_A100_MEANWHILE, HE_PYTHON_OPS, python_numbers, python_ops
from .overhead_sizes import (FLAT_SPAN, FLAT_WITHIN, LINEAR, NAMES, _sizes, curve, curves, fixed_cost,
                             time_vs_size)

__all__ = ["AHEAD", "FLAT_SPAN", "FLAT_WITHIN", "HE_A100_MEANWHILE", "HE_PYTHON_OPS", "LINEAR", "NAMES",
           "_sizes", "async_demo", "async_numbers", "batch_check", "batch_steps", "call_overhead", "curve", "curves",
           "double_the_batch", "fixed_cost", "graph_numbers", "python_numbers", "python_ops", "reduce_overhead",
           "time_vs_size"]
