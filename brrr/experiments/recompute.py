"""Recomputation: keep fewer activations for the backward pass and compute them again.

Training keeps, from the forward pass, every tensor the backward pass will
need (a layer's input for its weight gradient, an activation's input for its
derivative). Those *saved tensors* are most of a network's training memory.
Two ways to keep fewer of them, both measured, each in its own module and all
importable from here:

* **Activation checkpointing** (Chen et al., 2016), :mod:`.recompute_checkpoint`:
  keep only each segment's input and run the segment's forward again during the
  backward pass (:func:`checkpoint_sweep`, :func:`checkpoint_model`).
* **Recomputation inside a compiler** (He 2022), :mod:`.recompute_compiled`:
  ``torch.compile``'s min-cut partitioner saves a fused pointwise chain's input
  and recomputes the chain in the backward kernel (:func:`compiled_recompute`).

Both count saved bytes with :mod:`.recompute_saved` (:func:`saved_tensors`,
:func:`saved_bytes`, :func:`peak_memory`). Sizes are bytes, times seconds.
"""
from __future__ import annotations

from .recompute_saved import peak_memory, saved_bytes, saved_table, saved_tensors, training_step
from .recompute_checkpoint import (Checkpointed, checkpoint_flop_ratio, checkpoint_model, checkpoint_sweep,
                                   checkpoint_table, counted_flops, default_stack, late_peak, mlp_stack, step_ratios,
                                   sweep_rows)
from .recompute_compiled import (POINTWISE, VARIANTS, compile_chain, compiled_recompute, compiled_table,
                                 pointwise_chain, step_bytes)

__all__ = ["saved_tensors", "saved_bytes", "saved_table", "training_step", "peak_memory", "mlp_stack",
           "Checkpointed", "default_stack", "checkpoint_sweep", "checkpoint_table", "checkpoint_model",
           "checkpoint_flop_ratio", "counted_flops", "sweep_rows", "step_ratios", "late_peak", "POINTWISE",
           "VARIANTS", "pointwise_chain", "compile_chain", "compiled_table", "compiled_recompute", "step_bytes"]
