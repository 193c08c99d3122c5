"""Chapter 4, fusion: sentences chosen by the measurements.

Each function takes the chapter's live results (from :mod:`brrr.experiments.fusion`) and
the reference runs of the same experiments (from :func:`brrr.reference.beside`) and
returns :class:`~brrr.prose.Prose`. A record's ``fuser`` names what fused its chain
('brrr', 'cupy_fuse', 'torch_compile', ...).

One module per section of the chapter, gathered here so that the chapter and the tests
name one place: :mod:`.fusion_model` (the model's prediction, and the words the others
share), :mod:`.fusion_speedups` (measured speed-ups against the model),
:mod:`.fusion_bends` (where each curve bends; ``torch.compile`` beside the kernels),
:mod:`.fusion_cos` (the cosine chain) and :mod:`.fusion_compiled` (what ``torch.compile``
generated, and epilogue fusion).
"""
from __future__ import annotations

from .fusion_bends import BARELY, BEND_SLOPE, MAIN, _bend_sentence, bend, fusers
from .fusion_compiled import NOISY, epilogue, generated
from .fusion_cos import cos_chain, floor_k, marginal_cost
from .fusion_model import BUSY, CLOSE, FLOOR, OP_WORDS, prediction
from .fusion_speedups import (CEILING, FOCUS_K, LEVEL, compute_from, curve, focus, fusers_of, kernel_speedups,
                              levelled, rate_trend, serial_bound, serial_words)
from .words import ABOVE_ROOF

__all__ = ["ABOVE_ROOF", "BARELY", "BEND_SLOPE", "BUSY", "CEILING", "CLOSE", "FLOOR", "FOCUS_K", "LEVEL", "MAIN",
           "NOISY", "OP_WORDS", "_bend_sentence", "bend", "compute_from", "cos_chain", "curve", "epilogue",
           "floor_k", "focus", "fusers", "fusers_of", "generated", "kernel_speedups", "levelled", "marginal_cost",
           "prediction", "rate_trend", "serial_bound", "serial_words"]
