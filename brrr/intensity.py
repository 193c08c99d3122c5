"""Arithmetic intensity of convolutions and of whole networks (Jha, Mittal & Avancha, 2020).

The paper splits data reuse into two parts. For a layer or a network that does
``M_c`` multiply-accumulates (MACs) on ``W`` weights and ``A`` activations:

* weight reuse ``M_c / W`` and activation reuse ``M_c / A`` (MACs per element);
* cumulative arithmetic intensity ``AI_c = M_c / (W + A)``;
* data-type aware intensity ``DI = 1/4 * (alpha * M_c/A + (1 - alpha) * M_c/W)``,
  with ``alpha = 0.8`` from the paper's fit to measured energy efficiency;
* relative disparity ``d_f = 100 * (AI_c - DI) / AI_c`` (per cent).

Networks are counted operator by operator (:mod:`brrr.intensity_count`), so a network
gives the same M_c, W and A whether it is written with modules (``nn.ReLU``, an ``Add``
module, ``nn.Linear``) or functionally (``F.relu``, ``out += identity``, ``torch.cat``,
``q @ k.transpose(-2, -1)``); an operator no convention covers is listed in the result's
``uncounted``, never dropped silently.

All quantities here count *elements* and *MACs*, as the paper does. The roofline
needs FLOPs and bytes instead: :func:`roofline_points` converts (FLOPs = 2 x MACs,
bytes = elements x bytes per element).

Two places where the paper disagrees with itself, worth knowing when you compare:

* Eq. 5 (``d_f = 75 - 6.25 (A/W + 3 W/A)``) and Table VII follow from ``alpha = 0.75``,
  not the 0.8 of Eq. 4 and Table VIII; :func:`disparity_closed_form` takes ``alpha``.
* Table VIII's ``d_f`` column was computed from the *rounded* AI_c and DI of the
  same row (AlexNet: (11 - 73) / 11 = -564 %), so it differs from the exact value.

    from brrr import intensity, models
    intensity.conv_intensity("depthwise", M=256, N=256, S_o=28, S_k=3)
    intensity.model_intensity(models.vgg16(), (1, 3, 224, 224))        # Table VIII's row

The parts: :mod:`brrr.intensity_paper` (the formulas, Table II/III, the paper's Table VIII),
:mod:`brrr.intensity_count` (what each operator counts), :mod:`brrr.intensity_networks`
(whole networks, the two conventions, the comparison with the paper) and
:mod:`brrr.intensity_measure` (timing convolutions, the chapter's figures).
"""
from __future__ import annotations

# One idea per module; every public name stays importable from here.
from .intensity_paper import (  # noqa: F401
    CONVENTIONS, DEFAULT_ALPHA, KINDS, PAPER, PAPER_NAMES, PAPER_TABLE_III, PAPER_TABLE_VIII,
    TABLE_III_DIGITS, TABLE_VIII_COLUMNS, TABLE_VIII_DIGITS, ConvIntensity, conv_intensity,
    convolution_table, data_type_aware_intensity, disparity, disparity_closed_form, paper_table8,
    table_iii_beside_paper)
from .intensity_count import BLOBS, MACS, ONE_LAYER, OPS, classify  # noqa: F401
from .intensity_networks import (  # noqa: F401
    HEADERS, MAIN_COLUMNS, ModelIntensity, compare_with_paper, largest_differences, model_intensity,
    network_layers, readable, roofline_points, table_viii_view, totals_table, trace_layers)
from .intensity_measure import (  # noqa: F401
    conv_table, device_roof, measure_conv, measure_convs, plot_layers, plot_reuse)
