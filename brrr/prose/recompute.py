"""Chapter 5, recomputation: sentences chosen by the measurements, gathered from
:mod:`.recompute_saved` (what the hooks count), :mod:`.recompute_checkpoint` (the checkpoint
sweep) and :mod:`.recompute_compiled` (recomputation inside ``torch.compile``).

Saved-tensor hooks count saved bytes exactly; a clock times the steps; on a GPU the allocator
measures the peak. The peak during the backward pass is *modelled* from the hook counts, so
only the allocator's peak checks it, and the prose says so where there is none.
"""
from __future__ import annotations

from .recompute_checkpoint import (CLOSE, ESTIMATE, FAR, NEAR, NOISY, allocator_peak, checkpoint_memory,
                                   checkpoint_time, sweep_facts)
from .recompute_compiled import chain_facts, compiled
from .recompute_saved import block, small_layer

__all__ = ["CLOSE", "ESTIMATE", "FAR", "NEAR", "NOISY", "allocator_peak", "block", "chain_facts",
           "checkpoint_memory", "checkpoint_time", "compiled", "small_layer", "sweep_facts"]
