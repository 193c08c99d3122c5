"""More of the DI paper's tables recomputed: Table V (layer-wise intensity) and the further
rows of Table VIII that :mod:`brrr.models` builds.

Jha, Mittal & Avancha (2020), Data-type Aware Arithmetic Intensity for Deep Neural Networks.
Table V gives the median and variance of the arithmetic intensity of each Conv and FC
layer. Its numbers are reproduced when a layer's activations are its *output* feature map
only, ``M_c / (W + ofmap)``, not the ifmap + ofmap of the paper's Table II (this module's
tests check both). Counting is :mod:`brrr.intensity_count`'s; networks are built on the
``meta`` device, so nothing here allocates memory or does arithmetic.
"""
from __future__ import annotations

from .intensity_paper import PAPER_NAMES, PAPER_NAMES_ADDED, PAPER_TABLE_V

LAYER_ACTIVATIONS = ("output", "input+output")

#: Per added network of Table VIII (:data:`PAPER_NAMES_ADDED`): the largest difference from
#: the paper beyond its rounding (per cent, over M_c/W, M_c/A, AI_c, DI and A/W) that the
#: tests accept, and what is known about it. The tests fail if a count drifts past it.
TOLERANCE = {
    "ResNet-101": (3.0, "the Caffe ResNet-101 (stride in the first 1x1 of a bottleneck): agrees"),
    "ResNet-152": (3.0, "the Caffe ResNet-152 (stride in the first 1x1 of a bottleneck): agrees"),
    "ResNext50-32x4d": (15.0, "ours has the published parameter count and MACs (Xie et al., 2017); the "
                              "paper's M_c/W is higher, its M_c/A a little higher: not explained"),
    "ResNext101-32x4d": (15.0, "as for ResNeXt-50: the paper's M_c/W is higher than the published network's"),
    "DenseNet-121": (10.0, "M_c/A agrees; the paper's M_c/W and A/W are higher, as if it counted fewer "
                           "weights than the published network has"),
    "DenseNet-169": (12.0, "as for DenseNet-121: M_c/A agrees, the paper's row implies fewer weights"),
}


def layer_intensities(model, input_shape, activations: str = "output"):
    """The arithmetic intensity M_c / (W + A) of every Conv and FC layer (every operator
    that does MACs) of ``model``, in MACs per element, as a pandas Series indexed by layer.

    ``activations='output'`` (default) counts a layer's output feature map alone, which
    reproduces the paper's Table V; ``'input+output'`` counts ifmap + ofmap, as its Table II
    does for one layer. W is the parameters the layer reads (weights and bias)."""
    import pandas as pd
    from .intensity_networks import trace_layers
    if activations not in LAYER_ACTIVATIONS:
        raise ValueError(f"activations must be one of {LAYER_ACTIVATIONS}, got {activations!r}")
    rows = [r for r in trace_layers(model, input_shape) if r["macs"] > 0]
    values = [r["macs"] / (r["weights"] + r["out_elements"]
                           + (r["in_elements"] if activations == "input+output" else 0)) for r in rows]
    return pd.Series(values, index=[r["layer"] for r in rows], name="intensity (MACs per element)")


def table_v_beside_paper(activations: str = "output"):
    """Table V recomputed beside the paper's: per network, the median and the (sample)
    variance of :func:`layer_intensities` over its Conv and FC layers, the paper's two
    numbers, the number of layers, and the relative difference of ours (per cent)."""
    import pandas as pd
    import torch
    from . import models
    keys = {name: key for key, name in PAPER_NAMES.items()}
    rows = []
    for name, (median, variance) in PAPER_TABLE_V.items():
        key = keys[name]
        with torch.device("meta"):
            net = models.get(key)
        ai = layer_intensities(net, models.INPUT_SHAPES[key], activations)
        rows.append({"network": name, "layers": len(ai), "median": ai.median(), "median (paper)": median,
                     "variance": ai.var(), "variance (paper)": variance,
                     "median difference (%)": 100 * (ai.median() - median) / median,
                     "variance difference (%)": 100 * (ai.var() - variance) / variance})
    return pd.DataFrame(rows).set_index("network")


def added_networks(alpha: float = 0.8):
    """:func:`brrr.intensity.compare_with_paper` for the networks of Table VIII added to
    :mod:`brrr.models` beyond the chapter's eight (:data:`PAPER_NAMES_ADDED`), with, per
    network, the largest difference beyond the paper's rounding, its column, the tolerance
    the tests accept (:data:`TOLERANCE`), what is known about it, and the weights and MACs
    the paper's row implies for our activation count (A from our count, W = A / (A/W) and
    M_c = (M_c/A) x A from the paper's row)."""
    from .intensity_networks import compare_with_paper, largest_differences
    table = compare_with_paper(list(PAPER_NAMES_ADDED), alpha=alpha)
    worst = largest_differences(table)
    table["largest difference (%)"] = worst["largest difference (%)"]
    table["column"] = worst["column"]
    table["tolerance (%)"] = [TOLERANCE[n][0] for n in table.index]
    table["known"] = [TOLERANCE[n][1] for n in table.index]
    table["implied weights"] = table["activations"] / table["a_over_w (paper)"]
    table["implied macs"] = table["activation_reuse (paper)"] * table["activations"]
    return table


def added_view(table):
    """:func:`added_networks`' table for the page: per network our and the paper's M_c/W,
    M_c/A, DI and A/W, our weights and MACs, and the largest difference beyond rounding."""
    import pandas as pd
    return pd.DataFrame({
        "network": table.index, "Mc/W": table["weight_reuse"], "Mc/W (paper)": table["weight_reuse (paper)"],
        "Mc/A": table["activation_reuse"], "Mc/A (paper)": table["activation_reuse (paper)"],
        "DI": table["di"], "DI (paper)": table["di (paper)"], "A/W": table["a_over_w"],
        "A/W (paper)": table["a_over_w (paper)"], "weights (M)": table["weights"] / 1e6,
        "MACs (G)": table["macs"] / 1e9, "largest difference (%)": table["largest difference (%)"]})
