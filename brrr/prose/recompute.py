"""Chapter 5, recomputation: sentences chosen by the measurements.

What the chapter measures, and what it only models:

* **measured exactly**, by saved-tensor hooks: the bytes autograd keeps after the
  forward pass, and the bytes one segment saves while it is recomputed;
* **measured with a clock**: the time of a training step (fastest sample);
* **measured by the GPU's allocator**, on a GPU only: the peak memory of a step
  (``torch.cuda.max_memory_allocated``);
* **modelled**: the peak of the activations during the backward pass, taken to be
  what stays saved plus one segment's recomputed activations. It is built from
  the hook counts, so comparing it with them proves nothing; only the allocator's
  peak is an independent check, and the prose says so where there is none.

Each function takes the chapter's live result(s) and the reference runs of the
same experiment (from :func:`brrr.reference.beside`) and returns
:class:`~brrr.prose.Prose`.

One module per part of the chapter, gathered here so that the chapter and the tests
name one place: :mod:`.recompute_saved` (what the hooks count), :mod:`.recompute_checkpoint`
(the checkpoint sweep: memory, time, the allocator's peak) and :mod:`.recompute_compiled`
(recomputation inside ``torch.compile``).
"""
from __future__ import annotations

from .recompute_checkpoint import (CLOSE, ESTIMATE, FAR, NEAR, NOISY, allocator_peak, checkpoint_memory,
                                   checkpoint_time, sweep_facts)
from .recompute_compiled import chain_facts, compiled
from .recompute_saved import block, small_layer

__all__ = ["CLOSE", "ESTIMATE", "FAR", "NEAR", "NOISY", "allocator_peak", "block", "chain_facts",
           "checkpoint_memory", "checkpoint_time", "compiled", "small_layer", "sweep_facts"]
