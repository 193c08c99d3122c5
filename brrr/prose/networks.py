"""Chapter 6, the arithmetic intensity of real networks: sentences chosen by the numbers.

Most of the chapter is computed, not measured: the formulas of Jha, Mittal & Avancha
(2020), their Table III and Table VIII recomputed from the networks in
:mod:`brrr.models`. Sentences that compare those numbers with the paper's, or rank
networks, are still chosen by the numbers here, so that a change in a model or a
count cannot leave a sentence behind. The one measurement, :func:`brrr.intensity.
measure_convs`, is discussed by :func:`conv_measurements` with its reference runs.

The modules, gathered here so that the chapter and the tests name one place:
:mod:`.networks_paper` (the paper's tables recomputed), :mod:`.networks_roofline`
(layers on this device's roofline, and the measured convolutions), :mod:`.networks_tables`
(Table V, more rows of Table VIII, Sec. I's ranges), :mod:`.networks_energy` (Table IV,
Table IX, Eq. 6 and the Fig. 3 calls) and :mod:`.networks_predict` (what AI_c and DI predict
against the measured time of whole networks and of each kind of layer).
"""
from __future__ import annotations

from .networks_paper import (CLOSE, NAMES, NEAR, ai_c_vs_di, convolution_kinds, reuse, table_viii,
                             vgg16)
from .networks_roofline import (FLAT_TIMES, MODEL_SPREAD, conv_facts, conv_measurements,
                                layers_on_roofline)
from .networks_energy import gpus, statistics
from .networks_tables import added_networks, ranges, table_v
from .networks_predict import bound_calls, layer_kinds, network_predictions, throughput_correlation
from .words import ABOVE_ROOF

__all__ = ["ABOVE_ROOF", "CLOSE", "FLAT_TIMES", "MODEL_SPREAD", "NAMES", "NEAR", "ai_c_vs_di", "conv_facts",
           "conv_measurements", "convolution_kinds", "layers_on_roofline", "reuse", "table_viii", "vgg16",
           "gpus", "statistics", "added_networks", "ranges", "table_v", "bound_calls", "layer_kinds",
           "network_predictions", "throughput_correlation"]
