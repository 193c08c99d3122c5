"""Chapter 6, the arithmetic intensity of real networks: sentences chosen by the numbers.

Most of the chapter is computed, not measured: the formulas of Jha, Mittal & Avancha
(2020), their Table III and Table VIII recomputed from the networks in
:mod:`brrr.models`. Sentences that compare those numbers with the paper's, or rank
networks, are still chosen by the numbers here, so that a change in a model or a
count cannot leave a sentence behind. The one measurement, :func:`brrr.intensity.
measure_convs`, is discussed by :func:`conv_measurements` with its reference runs.

Two modules, gathered here so that the chapter and the tests name one place:
:mod:`.networks_paper` (the paper's tables recomputed) and :mod:`.networks_roofline`
(layers on this device's roofline, and the measured convolutions).
"""
from __future__ import annotations

from .networks_paper import (CLOSE, NAMES, NEAR, ai_c_vs_di, convolution_kinds, reuse, table_viii,
                             vgg16)
from .networks_roofline import (FLAT_TIMES, MODEL_SPREAD, conv_facts, conv_measurements,
                                layers_on_roofline)
from .words import ABOVE_ROOF

__all__ = ["ABOVE_ROOF", "CLOSE", "FLAT_TIMES", "MODEL_SPREAD", "NAMES", "NEAR", "ai_c_vs_di", "conv_facts",
           "conv_measurements", "convolution_kinds", "layers_on_roofline", "reuse", "table_viii", "vgg16"]
