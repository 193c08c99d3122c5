"""The FLOPs activation checkpointing adds, in the model of PyTorch's checkpoint (one formula,
used by the chapter's experiments, its prose and its figure)."""
from __future__ import annotations

import math


def checkpoint_flop_ratio(layers: int, every: int) -> float:
    """FLOPs of a checkpointed training step of :func:`brrr.experiments.recompute.mlp_stack` over a plain one, with segments
    of ``every`` blocks, in the model of PyTorch's non-reentrant checkpoint (``use_reentrant=False``).

    A plain step is one forward and a backward of twice its matmul FLOPs: 3. The recomputation
    stops as soon as every tensor the backward pass needs exists again ("early stop",
    ``torch.utils.checkpoint.set_checkpoint_early_stop``), so it skips each segment's last
    ``down`` matmul, whose output nothing saves: of a segment's 2·every matmuls it reruns
    2·every − 1. With ``ceil(layers / every)`` segments that is ``1 + (1 − segments / (2 layers)) / 3``,
    below Chen et al.'s 4/3 of one whole extra forward pass. ``every=0``: 1.
    """
    if isinstance(every, bool) or not isinstance(every, int) or every < 0:
        raise ValueError(f"every must be an integer >= 0, got {every!r}")
    if not every:
        return 1.0
    return 1 + (1 - math.ceil(layers / every) / (2 * layers)) / 3
