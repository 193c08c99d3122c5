"""Chapter 6, the arithmetic intensity of real networks: sentences chosen by the numbers, gathered
from :mod:`.networks_paper` (the paper's tables recomputed), :mod:`.networks_roofline` (layers on
this device's roofline, the measured convolutions), :mod:`.networks_tables` (Table V, more rows of
Table VIII, Sec. I's ranges), :mod:`.networks_energy` (Tables IV and IX, Eq. 6) and
:mod:`.networks_predict` (AI_c and DI against measured times). Most numbers are computed from
Jha, Mittal & Avancha (2020) and :mod:`brrr.models`, not measured.
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
