"""Chapter 4, fusion: sentences chosen by the measurements, gathered from one module per section
(:mod:`.fusion_model`, :mod:`.fusion_speedups`, :mod:`.fusion_bends`, :mod:`.fusion_cos`,
:mod:`.fusion_compiled`). A record's ``fuser`` names what fused its chain ('brrr', 'cupy_fuse', ...).
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
