"""The DI paper's formulas and printed tables: one convolution (Table II/III) and Table VIII.

Jha, Mittal & Avancha (2020), Data-type Aware Arithmetic Intensity for Deep Neural
Networks. Everything here counts *elements* and *MACs*, as the paper does; see
:mod:`brrr.intensity` for the definitions and the paper's inconsistencies.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, asdict

KINDS = ("standard", "pointwise", "group", "depthwise")
CONVENTIONS = ("blobs", "layer")
DEFAULT_ALPHA = 0.8
PAPER = "Jha, Mittal & Avancha (2020), Data-type Aware Arithmetic Intensity for Deep Neural Networks"

#: Table III of the paper: metrics normalised to standard convolution
#: (M = N = 256, 28x28 feature maps, 3x3 filters, g = 4 groups; depthwise has g = M).
PAPER_TABLE_III = {
    "standard": {"arithmetic_intensity": 1.00, "macs": 1.000, "weight_reuse": 1, "activation_reuse": 1.000},
    "pointwise": {"arithmetic_intensity": 0.24, "macs": 0.111, "weight_reuse": 1, "activation_reuse": 0.111},
    "group": {"arithmetic_intensity": 0.45, "macs": 0.250, "weight_reuse": 1, "activation_reuse": 0.250},
    "depthwise": {"arithmetic_intensity": 0.01, "macs": 0.004, "weight_reuse": 1, "activation_reuse": 0.004},
}

#: Table VIII of the paper: (M_c/W, M_c/A, AI_c, DI, A/W, d_f) per network, as printed.
PAPER_TABLE_VIII = {
    "AlexNet": (12, 362, 11, 73, 0.03, -564), "VGG-16": (112, 537, 93, 113, 0.21, -22),
    "NiN": (146, 291, 97, 66, 0.50, 32), "GoogLeNet": (227, 158, 93, 43, 1.44, 54),
    "Inception-V2": (196, 122, 75, 34, 1.61, 55), "Inception-V3": (240, 138, 88, 40, 1.74, 55),
    "Inception-V4": (287, 169, 106, 48, 1.70, 55), "ResNet-50": (151, 83, 54, 24, 1.83, 56),
    "ResNet-101": (170, 108, 66, 30, 1.58, 55), "ResNet-152": (188, 113, 70, 32, 1.66, 54),
    "ResNet101-V2": (176, 112, 68, 31, 1.56, 54), "ResNet152-V2": (192, 116, 72, 33, 1.65, 54),
    "Inception-ResNet-V2": (236, 139, 87, 40, 1.70, 54), "ResNext50-32x4d": (191, 72, 52, 24, 2.67, 54),
    "ResNext101-32x4d": (206, 89, 62, 28, 2.31, 55), "DenseNet-121": (386, 44, 40, 28, 8.77, 30),
    "DenseNet-169": (263, 43, 37, 22, 6.10, 41), "SqueezeNet-V1.0": (678, 69, 63, 48, 9.84, 24),
    "SqueezeNet-V1.1": (282, 48, 41, 24, 5.81, 41), "1.0-SqNxt-23": (381, 15, 15, 22, 24.84, -47),
    "1.0-SqNxt-23v5": (242, 16, 15, 15, 15.12, 0), "1.0-G-SqNxt-23": (406, 12, 12, 23, 32.80, -92),
    "MobileNet-V1": (136, 28, 23, 12, 4.80, 48), "MobileNet-V2": (125, 12, 11, 9, 10.10, 18),
    "XceptionNet": (367, 85, 69, 35, 4.32, 49),
}
TABLE_VIII_COLUMNS = ("weight_reuse", "activation_reuse", "ai_c", "di", "a_over_w", "d_f")
#: Digits after the point to which Table VIII prints each column.
TABLE_VIII_DIGITS = {"weight_reuse": 0, "activation_reuse": 0, "ai_c": 0, "di": 0, "a_over_w": 2, "d_f": 0}

#: Which network of :mod:`brrr.models` is which row of Table VIII.
PAPER_NAMES = {"alexnet": "AlexNet", "vgg16": "VGG-16", "nin": "NiN", "resnet50": "ResNet-50",
               "mobilenet_v1": "MobileNet-V1", "mobilenet_v2": "MobileNet-V2",
               "squeezenet1_0": "SqueezeNet-V1.0", "squeezenet1_1": "SqueezeNet-V1.1"}
#: More rows of Table VIII that :mod:`brrr.models` builds (kept apart so that the chapter's
#: eight-network table and figure stay as they are; ``compare_with_paper`` takes both).
PAPER_NAMES_ADDED = {"resnet101": "ResNet-101", "resnet152": "ResNet-152",
                     "resnext50_32x4d": "ResNext50-32x4d", "resnext101_32x4d": "ResNext101-32x4d",
                     "densenet121": "DenseNet-121", "densenet169": "DenseNet-169"}

# --- the paper's other tables, as printed (cited data, not measurements) -------------------

#: Table IV: the two GPUs of the experiments (Sec. II-C): CUDA cores, L2 bytes, peak
#: bandwidth (B/s), peak float32 throughput (FLOP/s) and the printed compute-to-memory ratio
#: CMR (FLOP/byte), which is the roofline's ridge point.
PAPER_TABLE_IV = {
    "P4000": {"cores": 1792, "l2_bytes": 2 * 2**20, "bandwidth": 243e9, "peak_flops": 5.2e12, "cmr": 21.4},
    "P100": {"cores": 3584, "l2_bytes": 4 * 2**20, "bandwidth": 549e9, "peak_flops": 9.3e12, "cmr": 16.94},
}

#: Table V (Sec. III-A): median and variance of the layer-wise arithmetic intensity of the
#: Conv and FC layers (MACs per element), as printed. "SqNet" is SqueezeNet-V1.0.
PAPER_TABLE_V = {
    "AlexNet": (154, 2.69e4), "VGG-16": (560, 2.09e5), "NiN": (117, 2.24e4),
    "SqueezeNet-V1.0": (134, 8.30e3), "MobileNet-V1": (18, 3.70e3), "MobileNet-V2": (32, 4.52e3),
}

#: Table VI (Sec. IV-B): Pearson r between each metric and the energy efficiency (MACs per
#: joule) the authors measured for their 25 networks, with alpha = 0.8 for DI. The keys are
#: display names (they head the page's tables), so AI_c is written "AIc" there.
PAPER_TABLE_VI = {("P4000", "AIc"): 0.52, ("P4000", "DI"): 0.83,
                  ("P100", "AIc"): 0.23, ("P100", "DI"): 0.64}

#: Table IX (Sec. VII): confidence intervals (L, U) for the population correlation, at
#: 95% and 99%, from Table VI's r over 25 networks (Fisher's z transform).
PAPER_TABLE_IX = {
    ("P4000", "AIc"): {95: (0.16, 0.76), 99: (0.03, 0.81)},
    ("P4000", "DI"): {95: (0.65, 0.92), 99: (0.57, 0.94)},
    ("P100", "AIc"): {95: (-0.18, 0.57), 99: (-0.30, 0.66)},
    ("P100", "DI"): {95: (0.33, 0.83), 99: (0.21, 0.86)},
}
#: Sec. VII: the number of networks, and the z values the paper uses for 95% and 99%.
PAPER_SAMPLE = 25
PAPER_Z = {95: 1.96, 99: 2.58}
#: Eq. 6 (Sec. VII): the least sample with a z-window at most 1 wide at 95%, as printed
#: (phi >= 18.37, so 19 networks), and the window at the paper's 25 networks.
PAPER_EQ6 = {"phi_bound": 18.37, "minimum": 19, "window_at_25": 0.836}

#: Sec. III-B and IV-C: the side of the ridge the paper's rooflines (Fig. 3, both GPUs) put
#: networks on, at AI_c and at DI, as its text states them.
PAPER_FIG3_CALLS = {
    "ai_c": {"AlexNet": "memory", "MobileNet-V1": "compute", "DenseNet-121": "compute",
             "DenseNet-169": "compute", "XceptionNet": "compute"},
    "di": {"AlexNet": "compute", "MobileNet-V1": "memory"},
}

#: Sec. I, contribution 4, as printed: "between 221 to 15,470 million weights and between
#: 0.54 to 138 million MACs". The two ranges are swapped: 138 M is VGG-16's weights and
#: 15,470 M its MACs (see tests).
PAPER_RANGES_AS_PRINTED = {"weights_millions": (221, 15470), "macs_millions": (0.54, 138)}


# --- the formulas ----------------------------------------------------------------------

def _check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be a number between 0 and 1, got {alpha!r}")
    return float(alpha)


def data_type_aware_intensity(macs, weights, activations, alpha: float = DEFAULT_ALPHA) -> float:
    """DI = 1/4 (alpha M_c/A + (1 - alpha) M_c/W) in MACs per element (the paper's Eq. 4)."""
    alpha = _check_alpha(alpha)
    for name, value in (("macs", macs), ("weights", weights), ("activations", activations)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0:
            raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    if weights == 0 or activations == 0:
        raise ValueError("weights and activations must both be > 0 to form DI")
    return 0.25 * (alpha * macs / activations + (1 - alpha) * macs / weights)


def disparity(ai_c: float, di: float) -> float:
    """Relative disparity d_f = 100 (AI_c - DI) / AI_c, in per cent (the paper's Eq. 5, left side)."""
    if not ai_c:
        raise ValueError(f"ai_c must be non-zero, got {ai_c!r}")
    return 100.0 * (ai_c - di) / ai_c


def disparity_closed_form(a_over_w: float, alpha: float = DEFAULT_ALPHA) -> float:
    """d_f from A/W alone: 75 - 25 alpha W/A - 25 (1 - alpha) A/W (per cent).

    With ``alpha=0.75`` this is the paper's Eq. 5, ``75 - 6.25 (A/W + 3 W/A)``; the
    paper's Table VIII uses ``alpha=0.8``, for which the coefficients are 20 and 5.
    """
    alpha = _check_alpha(alpha)
    if isinstance(a_over_w, bool) or not isinstance(a_over_w, numbers.Real) or not a_over_w > 0:
        raise ValueError(f"a_over_w must be a number > 0, got {a_over_w!r}")
    return 75.0 - 25.0 * alpha / a_over_w - 25.0 * (1 - alpha) * a_over_w


# --- one convolution: Table II -------------------------------------------------------------

class Reuse:
    """Reuse ratios of anything with ``macs``, ``weights`` and ``activations`` (element counts)."""

    @property
    def weight_reuse(self) -> float:
        """M_c / W: MACs per weight (S_o^2 for every kind of convolution)."""
        return self.macs / self.weights

    @property
    def activation_reuse(self) -> float:
        """M_c / A: MACs per activation."""
        return self.macs / self.activations

    @property
    def arithmetic_intensity(self) -> float:
        """M_c / (W + A): MACs per element (the paper's cumulative AI_c)."""
        return self.macs / (self.weights + self.activations)


@dataclass(frozen=True)
class ConvIntensity(Reuse):
    """MACs, weights and activations (elements) of one convolution, and its reuse (MACs per element)."""
    kind: str
    M: int            # input channels (filter channels)
    N: int            # output channels (filters)
    S_o: int          # output feature map height = width
    S_k: int          # filter height = width
    g: int            # groups
    macs: int
    weights: int
    activations: int  # ifmap + ofmap

    def di(self, alpha: float = DEFAULT_ALPHA) -> float:
        """Data-type aware intensity of this layer (MACs per element)."""
        return data_type_aware_intensity(self.macs, self.weights, self.activations, alpha)

    def as_dict(self) -> dict:
        out = asdict(self)
        out.update(weight_reuse=self.weight_reuse, activation_reuse=self.activation_reuse,
                   arithmetic_intensity=self.arithmetic_intensity)
        return out

    def __repr__(self):
        return (f"ConvIntensity({self.kind}: M={self.M} N={self.N} S_o={self.S_o} S_k={self.S_k} g={self.g}; "
                f"{self.macs:,} MACs, W={self.weights:,}, A={self.activations:,}; "
                f"M_c/W={self.weight_reuse:.4g}, M_c/A={self.activation_reuse:.4g}, "
                f"AI={self.arithmetic_intensity:.4g} MACs/element)")


def _positive_int(name, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def conv_intensity(kind: str, M: int, N: int, S_o: int, S_k: int, g: int = 1) -> ConvIntensity:
    """A convolution's MACs, weights, activations and reuse by the paper's Table II.

    Parameters
    ----------
    kind : 'standard', 'pointwise', 'group' or 'depthwise'.
    M, N : input channels and output channels (filters).
    S_o : output feature map size (height = width; the paper takes ifmap = ofmap size).
    S_k : filter size (height = width). A pointwise convolution is 1x1 whatever ``S_k`` says.
    g : number of groups (``kind='group'``; must divide M and N). Depthwise convolution
        has g = M groups and N = M by definition: pass g=1 (the default) or g=M.

    Activations are ifmap + ofmap, ``(M + N) S_o^2`` (``2 M S_o^2`` for depthwise).
    """
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    M, N, S_o, S_k, g = (_positive_int(n, v) for n, v in
                         (("M", M), ("N", N), ("S_o", S_o), ("S_k", S_k), ("g", g)))
    if kind == "group":
        if M % g or N % g:
            raise ValueError(f"g must divide both M and N for group convolution, got g={g}, M={M}, N={N}")
    elif kind == "depthwise":
        if N != M:
            raise ValueError(f"depthwise convolution has N = M (one filter per channel), got M={M}, N={N}")
        if g not in (1, M):
            raise ValueError(f"depthwise convolution has g = M = {M} groups; pass g=1 or g={M}, got g={g}")
        g = M
    elif g != 1:
        raise ValueError(f"g must be 1 for {kind} convolution (use kind='group'), got g={g}")
    if kind == "pointwise":
        S_k = 1
    # Every kind is a group convolution with some g: MACs and weights shrink by g,
    # the feature maps do not.
    weights = M * N * S_k ** 2 // g
    macs = weights * S_o ** 2
    activations = (M + N) * S_o ** 2
    return ConvIntensity(kind, M, N, S_o, S_k, g, macs, weights, activations)


def convolution_table(M: int = 256, N: int = 256, S_o: int = 28, S_k: int = 3, g: int = 4,
                      normalize: bool = True):
    """Table III: the four kinds side by side (a pandas DataFrame), normalised to standard.

    Columns: arithmetic_intensity, macs, weight_reuse, activation_reuse (ratios to the
    standard convolution when ``normalize``, else absolute values), plus weights and
    activations. The defaults are the paper's (M = N = 256, 28x28, 3x3, g = 4).
    """
    import pandas as pd
    rows = {}
    for kind in KINDS:
        c = conv_intensity(kind, M, N, S_o, S_k, g if kind == "group" else 1)
        rows[kind] = {"arithmetic_intensity": c.arithmetic_intensity, "macs": c.macs,
                      "weight_reuse": c.weight_reuse, "activation_reuse": c.activation_reuse,
                      "weights": c.weights, "activations": c.activations}
    table = pd.DataFrame.from_dict(rows, orient="index")
    if normalize:
        table = table / table.loc["standard"]
    table.index.name = "convolution"
    return table


#: Digits after the point to which Table III prints each column.
TABLE_III_DIGITS = {"arithmetic_intensity": 2, "macs": 3, "weight_reuse": 0, "activation_reuse": 3}
_TABLE_III_NAMES = {"arithmetic_intensity": "intensity", "macs": "MACs", "weight_reuse": "Mc/W",
                    "activation_reuse": "Mc/A"}


def table_iii_beside_paper(M: int = 256, N: int = 256, S_o: int = 28, S_k: int = 3, g: int = 4):
    """Table III recomputed beside the paper's printed values (a pandas DataFrame).

    One row per kind of convolution; for each metric (intensity, MACs, M_c/W, M_c/A,
    all relative to the standard convolution) a column ``'<metric> (brrr)'``, rounded
    to the digits the paper prints, and ``'<metric> (paper)'``. The defaults are the
    paper's layer (M = N = 256, 28x28, 3x3, g = 4).
    """
    import pandas as pd
    ours = convolution_table(M, N, S_o, S_k, g)
    rows = []
    for kind in KINDS:
        row = {"convolution": kind}
        for col, digits in TABLE_III_DIGITS.items():
            row[f"{_TABLE_III_NAMES[col]} (brrr)"] = round(float(ours.loc[kind, col]), digits)
            row[f"{_TABLE_III_NAMES[col]} (paper)"] = PAPER_TABLE_III[kind][col]
        rows.append(row)
    return pd.DataFrame(rows)



def paper_table8(names=None):
    """The paper's Table VIII as printed (a DataFrame indexed by network name)."""
    import pandas as pd
    names = names or list(PAPER_TABLE_VIII)
    unknown = [n for n in names if n not in PAPER_TABLE_VIII]
    if unknown:
        raise ValueError(f"names must be rows of Table VIII ({sorted(PAPER_TABLE_VIII)}), got {unknown}")
    return pd.DataFrame([PAPER_TABLE_VIII[n] for n in names], index=list(names), columns=TABLE_VIII_COLUMNS)

