"""Arithmetic intensity of convolutions and of whole networks (Jha, Mittal & Avancha, 2020).

The paper splits data reuse into two parts. For a layer or a network that does
``M_c`` multiply-accumulates (MACs) on ``W`` weights and ``A`` activations:

* weight reuse ``M_c / W`` and activation reuse ``M_c / A`` (MACs per element);
* cumulative arithmetic intensity ``AI_c = M_c / (W + A)``;
* data-type aware intensity ``DI = 1/4 * (alpha * M_c/A + (1 - alpha) * M_c/W)``,
  with ``alpha = 0.8`` from the paper's fit to measured energy efficiency;
* relative disparity ``d_f = 100 * (AI_c - DI) / AI_c`` (per cent).

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
"""
from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass, asdict, field
from typing import Optional

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

@dataclass(frozen=True)
class ConvIntensity:
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

    @property
    def weight_reuse(self) -> float:
        """M_c / W: MACs per weight (S_o^2 for every kind)."""
        return self.macs / self.weights

    @property
    def activation_reuse(self) -> float:
        """M_c / A: MACs per activation."""
        return self.macs / self.activations

    @property
    def arithmetic_intensity(self) -> float:
        """M_c / (W + A): MACs per element."""
        return self.macs / (self.weights + self.activations)

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
_TABLE_III_NAMES = {"arithmetic_intensity": "intensity", "macs": "MACs", "weight_reuse": "M_c/W",
                    "activation_reuse": "M_c/A"}


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


# --- a whole network: Table VIII ------------------------------------------------------------

# Modules that only re-label memory: no new activations (Caffe has no such layer in these nets).
_VIEWS = ("Flatten", "Unflatten", "Identity")
# Caffe splits BatchNorm into BatchNorm + Scale, two in-place layers with a blob each.
_BLOB_COUNT = {"BatchNorm1d": 2, "BatchNorm2d": 2, "BatchNorm3d": 2, "SyncBatchNorm": 2}


@dataclass
class ModelIntensity:
    """Totals for one network (elements and MACs) plus its per-layer table.

    ``W`` counts every parameter once; ``A`` depends on ``convention`` (see
    :func:`model_intensity`). Reuse figures are MACs per element.
    """
    name: str
    input_shape: tuple
    convention: str
    alpha: float
    macs: int
    weights: int
    activations: int
    layers: object = field(repr=False)   # pandas DataFrame, one row per module call

    @property
    def weight_reuse(self) -> float:
        return self.macs / self.weights

    @property
    def activation_reuse(self) -> float:
        return self.macs / self.activations

    @property
    def ai_c(self) -> float:
        """Cumulative arithmetic intensity M_c / (W + A)."""
        return self.macs / (self.weights + self.activations)

    @property
    def di(self) -> float:
        """Data-type aware intensity with this result's ``alpha``."""
        return data_type_aware_intensity(self.macs, self.weights, self.activations, self.alpha)

    @property
    def a_over_w(self) -> float:
        return self.activations / self.weights

    @property
    def d_f(self) -> float:
        """Relative disparity between AI_c and DI, per cent (exact, not from rounded values)."""
        return disparity(self.ai_c, self.di)

    def row(self) -> dict:
        """The Table VIII columns for this network."""
        return {k: getattr(self, k) for k in TABLE_VIII_COLUMNS}

    def as_dict(self) -> dict:
        return {"name": self.name, "input_shape": list(self.input_shape), "convention": self.convention,
                "alpha": self.alpha, "macs": self.macs, "weights": self.weights,
                "activations": self.activations, **self.row()}

    def __repr__(self):
        return (f"ModelIntensity({self.name} at {tuple(self.input_shape)}, {self.convention!r} convention: "
                f"M_c={self.macs / 1e6:,.1f} M MACs, W={self.weights / 1e6:,.2f} M, A={self.activations / 1e6:,.2f} M; "
                f"M_c/W={self.weight_reuse:.0f}, M_c/A={self.activation_reuse:.0f}, AI_c={self.ai_c:.0f}, "
                f"DI={self.di:.0f} (alpha={self.alpha:g}), A/W={self.a_over_w:.2f}, d_f={self.d_f:.0f}%)")


def _layer_macs(module, inputs, output) -> int:
    from torch import nn
    if isinstance(module, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        k = math.prod(module.kernel_size)
        return output.numel() * (module.in_channels // module.groups) * k
    if isinstance(module, (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)):
        k = math.prod(module.kernel_size)
        return inputs[0].numel() * (module.out_channels // module.groups) * k
    if isinstance(module, nn.Linear):
        return output.numel() * module.in_features
    return 0


def _layer_kind(module) -> str:
    from torch import nn
    if isinstance(module, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        if module.groups == 1:
            return "pointwise" if math.prod(module.kernel_size) == 1 else "standard"
        if module.groups == module.in_channels == module.out_channels:
            return "depthwise"
        return "group"
    if isinstance(module, nn.Linear):
        return "fc"
    return "other"


def _tensors(obj):
    import torch
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [t for item in obj for t in _tensors(item)]
    if isinstance(obj, dict):
        return [t for item in obj.values() for t in _tensors(item)]
    return []


def _check_shape(model, input_shape) -> tuple:
    from torch import nn
    if isinstance(input_shape, (str, bytes)) or not hasattr(input_shape, "__len__"):
        raise TypeError(f"input_shape must be a tuple of positive integers, e.g. (1, 3, 224, 224), "
                        f"got {input_shape!r}")
    shape = tuple(input_shape)
    if not shape or any(isinstance(s, bool) or not isinstance(s, numbers.Integral) or s <= 0 for s in shape):
        raise ValueError(f"input_shape must be a non-empty tuple of positive integers, got {input_shape!r}")
    first = next((m for m in model.modules() if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d))), None)
    if first is not None:
        dims = len(first.kernel_size)
        if len(shape) not in (dims + 1, dims + 2):
            raise ValueError(f"input_shape {shape} has rank {len(shape)}, but the model's first "
                             f"convolution ({type(first).__name__}) expects rank {dims + 2} "
                             f"(batch, channels, {dims} spatial) or {dims + 1} without the batch")
        if shape[-dims - 1] != first.in_channels:
            raise ValueError(f"input_shape {shape} has {shape[-dims - 1]} channels, but the model's first "
                             f"convolution expects in_channels={first.in_channels}")
    return tuple(int(s) for s in shape)


def trace_layers(model, input_shape) -> list:
    """Run ``model`` once on zeros of ``input_shape`` and record every leaf-module call.

    Returns one dict per call (in execution order): name, type, kind, input/output
    shapes and element counts, MACs and the module's own parameter count. Only
    module calls are seen: write residual adds and concatenations as modules
    (:class:`brrr.models.Add`, :class:`brrr.models.Concat`). A model built under
    ``torch.device("meta")`` is traced without any arithmetic.
    """
    import torch
    from torch import nn
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    shape = _check_shape(model, input_shape)
    first = next(iter(model.parameters()), None)
    first = first if first is not None else next(iter(model.buffers()), None)
    dtype = first.dtype if first is not None and first.is_floating_point() else torch.float32
    device = first.device if first is not None else torch.device("cpu")
    _check_fits(shape, dtype, device)

    records, handles = [], []

    def hook(name):
        def record(module, inputs, output):
            ins, outs = _tensors(inputs), _tensors(output)
            records.append({
                "layer": name or type(module).__name__, "type": type(module).__name__,
                "kind": _layer_kind(module),
                "input_shape": tuple(ins[0].shape) if ins else (),
                "output_shape": tuple(outs[0].shape) if outs else (),
                "in_elements": sum(t.numel() for t in ins), "out_elements": sum(t.numel() for t in outs),
                "macs": _layer_macs(module, ins, outs[0]) if outs else 0,
                "weights": sum(p.numel() for p in module.parameters(recurse=False)),
                "bytes_per_element": outs[0].element_size() if outs else 4,
            })
        return record

    for name, module in model.named_modules():
        if next(module.children(), None) is None:
            handles.append(module.register_forward_hook(hook(name)))
    modes = [(m, m.training) for m in model.modules()]
    try:
        model.eval()
        x = torch.zeros(shape, dtype=dtype, device=device)
        with torch.no_grad():
            model(x)
    except Exception as error:
        raise RuntimeError(f"model failed on input_shape={shape}: {type(error).__name__}: {error}") from error
    finally:
        for h in handles:
            h.remove()
        for m, training in modes:   # each module's own mode, as it was
            m.training = training
    return records


def _available_bytes(device) -> Optional[int]:
    """Free memory on ``device`` in bytes (None where it can't be told, or on 'meta')."""
    import torch
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    if device.type == "cpu":
        try:
            return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return None
    return None


def _check_fits(shape: tuple, dtype, device) -> None:
    """Refuse, before allocating, an input of ``shape`` larger than the free memory."""
    import torch
    need = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
    free = _available_bytes(device)
    if free is not None and need > free:
        raise ValueError(f"input_shape={shape} needs {need / 2**30:.3g} GiB for the input alone, but "
                          f"{device} has {free / 2**30:.3g} GiB free; use a smaller shape, or move the "
                          "model to torch.device('meta') to trace shapes without memory")


def model_intensity(model, input_shape, convention: str = "blobs", alpha: float = DEFAULT_ALPHA,
                    name: Optional[str] = None) -> ModelIntensity:
    """M_c, W, A, reuse, AI_c, DI and d_f of a network, with a per-layer table.

    Parameters
    ----------
    model : any ``torch.nn.Module``; it is run once (eval mode, no grad) on zeros.
    input_shape : shape of that input, batch included, e.g. ``(1, 3, 224, 224)``.
        The paper counts at batch 1; a larger batch scales M_c and A but not W.
    convention : how activations A are counted.

        ``'blobs'`` (default) is what the paper's Table VIII was computed with (a Caffe
        network analyser at batch 1): the input plus the output of every layer, in-place
        layers included (ReLU, Dropout, and BatchNorm counted twice because Caffe splits
        it into BatchNorm + Scale), and the outputs of concatenations, residual adds,
        pooling and softmax. Views (Flatten, Identity) add nothing.

        ``'layer'`` is Table II per layer: every layer's inputs + outputs (ifmap + ofmap),
        summed over layers, i.e. what each layer would read and write if nothing stayed
        on chip between layers.
    alpha : DI's weight on activation reuse (0.8 in the paper's Table VIII; its Eq. 5
        and Table VII are worked with 0.75).

    W is every parameter once (weights, biases, BatchNorm's scale and shift); M_c is
    convolution MACs (divided by groups) plus fully-connected MACs.
    """
    import pandas as pd
    if not isinstance(convention, str) or convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    alpha = _check_alpha(alpha)
    records = trace_layers(model, input_shape)
    shape = _check_shape(model, input_shape)
    for r in records:
        if convention == "layer":
            r["activations"] = r["in_elements"] + r["out_elements"]
        else:
            r["activations"] = 0 if r["type"] in _VIEWS else r["out_elements"] * _BLOB_COUNT.get(r["type"], 1)
    if convention == "blobs":
        records.insert(0, {"layer": "input", "type": "input", "kind": "other", "input_shape": (),
                           "output_shape": shape, "in_elements": 0, "out_elements": math.prod(shape),
                           "macs": 0, "weights": 0, "activations": math.prod(shape),
                           "bytes_per_element": records[0]["bytes_per_element"] if records else 4})
    table = pd.DataFrame(records)
    if len(table):
        denominator = (table["weights"] + table["activations"]).where(lambda s: s > 0)
        table["weight_reuse"] = table["macs"] / table["weights"].where(table["weights"] > 0)
        table["activation_reuse"] = table["macs"] / table["activations"].where(table["activations"] > 0)
        table["intensity"] = table["macs"] / denominator
    weights = sum(p.numel() for p in model.parameters())
    activations = int(table["activations"].sum()) if len(table) else 0
    macs = int(table["macs"].sum()) if len(table) else 0
    if weights == 0 or activations == 0 or macs == 0:
        raise ValueError(f"model has {macs} MACs, {weights} weights and {activations} activations; "
                         "the intensities need all three > 0 (does it contain Conv or Linear layers?)")
    return ModelIntensity(name or type(model).__name__, shape, convention, alpha, macs, weights,
                          activations, table)


def roofline_points(model, input_shape, min_macs: int = 1):
    """Per-layer FLOPs and bytes in the roofline sense, for layers that do MACs.

    A pandas DataFrame with one row per Conv/Linear call: layer, kind, flops
    (= 2 x MACs), nbytes (= (own weights + inputs + outputs) x bytes per element of
    the model's dtype, i.e. the data that layer must move if nothing stays in cache
    between layers) and intensity (FLOP/byte). Layers with fewer than ``min_macs``
    MACs are left out.
    """
    import pandas as pd
    records = trace_layers(model, input_shape)
    rows = []
    for r in records:
        if r["macs"] < min_macs:
            continue
        elements = r["weights"] + r["in_elements"] + r["out_elements"]
        flops, nbytes = 2 * r["macs"], elements * r["bytes_per_element"]
        rows.append({"layer": r["layer"], "kind": r["kind"], "output_shape": r["output_shape"],
                     "flops": flops, "nbytes": nbytes, "intensity": flops / nbytes})
    return pd.DataFrame(rows, columns=["layer", "kind", "output_shape", "flops", "nbytes", "intensity"])


def paper_table8(names=None):
    """The paper's Table VIII as printed (a DataFrame indexed by network name)."""
    import pandas as pd
    names = names or list(PAPER_TABLE_VIII)
    unknown = [n for n in names if n not in PAPER_TABLE_VIII]
    if unknown:
        raise ValueError(f"names must be rows of Table VIII ({sorted(PAPER_TABLE_VIII)}), got {unknown}")
    return pd.DataFrame([PAPER_TABLE_VIII[n] for n in names], index=list(names), columns=TABLE_VIII_COLUMNS)


def compare_with_paper(names=None, convention: str = "blobs", alpha: float = DEFAULT_ALPHA):
    """Our Table VIII rows for the networks in :mod:`brrr.models` beside the paper's.

    Returns a DataFrame with, per network, our value and the paper's for each column,
    and our value's relative difference from the paper's (per cent). Networks are
    built on the meta device, so this does no arithmetic and takes seconds. Also
    ``d_f from rounded`` (d_f from our AI_c and DI rounded, as the paper computed its
    column) and our totals: ``macs``, ``weights``, ``activations``, ``input_size``.
    """
    import pandas as pd
    import torch
    from . import models
    names = names or list(PAPER_NAMES)
    rows = []
    for key in names:
        if key not in PAPER_NAMES:
            raise ValueError(f"names must be networks of brrr.models that are in Table VIII "
                             f"({sorted(PAPER_NAMES)}), got {key!r}")
        with torch.device("meta"):
            net = models.get(key)
        ours = model_intensity(net, models.INPUT_SHAPES[key], convention, alpha, name=key)
        paper = dict(zip(TABLE_VIII_COLUMNS, PAPER_TABLE_VIII[PAPER_NAMES[key]]))
        row = {"network": PAPER_NAMES[key]}
        for col in TABLE_VIII_COLUMNS:
            row[f"{col}"] = ours.row()[col]
            row[f"{col} (paper)"] = paper[col]
        row["d_f from rounded"] = disparity(round(ours.ai_c), round(ours.di))
        row.update(macs=ours.macs, weights=ours.weights, activations=ours.activations,
                   input_size=ours.input_shape[-1])
        rows.append(row)
    return pd.DataFrame(rows).set_index("network")


MAIN_COLUMNS = ("weight_reuse", "activation_reuse", "ai_c", "di", "a_over_w")
_VIII_NAMES = {"weight_reuse": "M_c/W", "activation_reuse": "M_c/A", "ai_c": "AI_c", "di": "DI",
               "a_over_w": "A/W", "d_f": "d_f (%)"}


def largest_differences(table):
    """Per network of :func:`compare_with_paper`'s table: the largest difference between ours
    and the paper's beyond the paper's rounding (per cent of the paper's value; 0 where ours
    rounds to the printed value), over the columns other than d_f (a small difference of two
    rounded numbers), and the column it is in."""
    import pandas as pd
    diff = {}
    for c in MAIN_COLUMNS:
        slack = 0.5 * 10.0 ** -TABLE_VIII_DIGITS[c]   # half a unit of the last printed digit
        gap = ((table[c] - table[f"{c} (paper)"]).abs() - slack).clip(lower=0)
        diff[c] = 100 * gap / table[f"{c} (paper)"].abs()
    diff = pd.DataFrame(diff)
    return pd.DataFrame({"largest difference (%)": diff.max(axis=1), "column": diff.idxmax(axis=1)})


def table_viii_view(table):
    """:func:`compare_with_paper`'s table for the page: per network, ours ('brrr') beside the
    paper's for each Table VIII column (two header rows), d_f also from rounded values, and
    the largest difference from the paper beyond its rounding, in per cent (d_f left out)."""
    import pandas as pd
    cols = {}
    for c in TABLE_VIII_COLUMNS:
        cols[(_VIII_NAMES[c], "brrr")] = table[c]
        if c == "d_f":
            cols[(_VIII_NAMES[c], "brrr, rounded")] = table["d_f from rounded"]
        cols[(_VIII_NAMES[c], "paper")] = table[f"{c} (paper)"]
    cols[("largest difference", "beyond rounding (%)")] = largest_differences(table)["largest difference (%)"]
    view = pd.DataFrame(cols, index=table.index)
    view.columns = pd.MultiIndex.from_tuples(view.columns)
    return view.reset_index()


#: Column names of this module's tables, as page headers with units.
HEADERS = {"layer": "layer", "type": "type", "kind": "kind", "output_shape": "output shape",
           "macs": "MACs", "weights": "weights (elements)", "activations": "activations (elements)",
           "weight_reuse": "M_c/W (MACs per weight)", "activation_reuse": "M_c/A (MACs per activation)",
           "arithmetic_intensity": "intensity (MACs per element)", "intensity": "intensity (MACs per element)",
           "ai_c": "AI_c (MACs per element)", "di": "DI (MACs per element)", "a_over_w": "A/W",
           "d_f": "d_f (%)", "convention": "convention"}


def readable(frame):
    """``frame`` (a table of this module: convolution_table(normalize=False), a ModelIntensity's
    layers) with its index as a column and its headers in words with units (:data:`HEADERS`)."""
    frame = frame.reset_index() if frame.index.name else frame.reset_index(drop=True)
    return frame.rename(columns={"convolution": "convolution", **HEADERS})


def totals_table(results):
    """One row per :class:`ModelIntensity` in ``results``: its convention and Table VIII
    columns, MACs, weights and activations (a DataFrame with readable headers)."""
    import pandas as pd
    rows = [{"network": r.name, "convention": r.convention, "macs": r.macs, "weights": r.weights,
             "activations": r.activations, **r.row()} for r in results]
    return readable(pd.DataFrame(rows))


def network_layers(names=("vgg16", "mobilenet_v2")) -> dict:
    """:func:`roofline_points` of each network of :mod:`brrr.models` in ``names`` at its
    paper input size, built on the meta device (no memory, no arithmetic):
    ``{'VGG-16': table, ...}``, keyed by the name Table VIII uses."""
    import torch
    from . import models
    out = {}
    for key in names:
        with torch.device("meta"):
            net = models.get(key)
        out[PAPER_NAMES.get(key, key)] = roofline_points(net, models.INPUT_SHAPES[key])
    return out


# --- measuring: how fast does this device run each kind? ----------------------------------

def _torch_device():
    import torch
    from .device import device as live
    return torch.device("cuda") if live().backend == "cuda" and torch.cuda.is_available() else torch.device("cpu")


def measure_conv(kind: str, M: int = 256, N: int = 256, S_o: int = 28, S_k: int = 3, g: int = 4,
                 batch: int = 1, dtype: str = "float32", roof=None) -> dict:
    """Time one convolution of Table II with PyTorch on the live device (:func:`brrr.bench`).

    Returns a record: the layer's MACs, FLOPs (2 x MACs x batch), nbytes (weights once
    plus ifmap and ofmap per image, x bytes per element), intensity (FLOP/byte), the
    median and fastest time (seconds), achieved FLOP/s (from the median), and the roofline's attainable FLOP/s and
    time for that intensity (``roof`` defaults to ``Roofline.from_device(dtype=dtype)``).
    ``g`` is used only by ``kind='group'``.
    """
    import torch
    from .roofline import Roofline
    from .timing import bench
    batch = _positive_int("batch", batch)
    layer = conv_intensity(kind, M, N, S_o, S_k, g if kind == "group" else 1)
    roof = roof or Roofline.from_device(dtype=dtype)
    dev = _torch_device()
    tdtype = getattr(torch, dtype, None)
    if not isinstance(tdtype, torch.dtype):
        raise ValueError(f"dtype must name a torch floating dtype such as 'float32', got {dtype!r}")
    conv = torch.nn.Conv2d(layer.M, layer.N, layer.S_k, padding=layer.S_k // 2, groups=layer.g,
                           bias=False).to(dev, tdtype).eval()
    x = torch.randn(batch, layer.M, S_o, S_o, device=dev, dtype=tdtype)
    itemsize = x.element_size()
    flops = 2 * layer.macs * batch
    nbytes = (layer.weights + layer.activations * batch) * itemsize

    def run():
        with torch.no_grad():
            return conv(x)

    t = bench(run, flops=flops, nbytes=nbytes, label=f"{kind} conv")
    achieved = flops / t.median
    intensity = flops / nbytes
    return {"kind": kind, "M": layer.M, "N": layer.N, "S_o": S_o, "S_k": layer.S_k, "g": layer.g,
            "batch": batch, "dtype": dtype, "device": roof.name or dev.type, "macs": layer.macs * batch,
            "flops": flops, "nbytes": nbytes, "intensity": intensity, "seconds": t.median,
            "min_seconds": t.min,
            "label": f"{kind} conv",
            "achieved_flops": achieved, "attainable_flops": float(roof.attainable(intensity)),
            "roofline_seconds": float(roof.time(flops, nbytes)),
            "efficiency": float(roof.time(flops, nbytes)) / t.median, "warnings": list(t.warnings)}


def measure_convs(kinds=KINDS, M: int = 256, N: int = 256, S_o: int = 28, S_k: int = 3, g: int = 4,
                  batch: int = 1, dtype: str = "float32", progress: bool = True):
    """:func:`measure_conv` for each kind (default: Table III's four layers); a :class:`brrr.Result`
    whose meta also holds the roof the records are judged against (``roof``) and the size
    of the cache a flush empties (``cache_bytes``: L2 on a GPU, the last-level cache on a CPU)."""
    from .experiments.common import run_sweep
    from .roofline import Roofline
    from .device import device as live, last_level_cache_bytes
    roof = Roofline.from_device(dtype=dtype)
    dev = live()
    cache = dev.l2_bytes if dev.backend == "cuda" else last_level_cache_bytes()
    return run_sweep("conv kinds", list(kinds),
                     lambda kind: measure_conv(kind, M, N, S_o, S_k, g, batch, dtype, roof),
                     command=f"brrr.intensity.measure_convs(M={M}, N={N}, S_o={S_o}, S_k={S_k}, g={g}, "
                             f"batch={batch}, dtype={dtype!r})", progress=progress,
                     roof=roof.to_dict(), cache_bytes=cache)



def conv_table(result):
    """:func:`measure_convs`'s records for the page: per convolution its MACs (millions),
    intensity (FLOP/byte), median time (seconds), achieved and roofline-attainable
    GFLOP/s, and the share of the roof it reached (achieved / attainable)."""
    import pandas as pd
    frame = result.to_frame()
    return pd.DataFrame({
        "convolution": frame["kind"], "MACs (millions)": frame["macs"] / 1e6,
        "intensity (FLOP/byte)": frame["intensity"], "time per call": frame["seconds"],
        "achieved (GFLOP/s)": frame["achieved_flops"] / 1e9,
        "roofline allows (GFLOP/s)": frame["attainable_flops"] / 1e9,
        "share of the roof": frame["achieved_flops"] / frame["attainable_flops"]})

# --- figures (they take data; nothing here measures) -----------------------------------------

_KIND_STYLE = {"standard": ("tab:blue", "o"), "pointwise": ("tab:green", "s"), "group": ("tab:purple", "D"),
               "depthwise": ("tab:red", "v"), "fc": ("tab:orange", "^"), "other": ("0.5", "x")}


def plot_layers(roof, layers: dict, axes=None, title=None):
    """Each Conv/FC layer of one or more networks placed on a roofline, one panel per network.

    ``layers`` maps a network's name to its :func:`roofline_points` table. A layer
    sits at its intensity (FLOP/byte) and at the FLOP/s the roofline allows there,
    so a point on the sloped part is a layer the model calls memory-bound. Colour
    and marker give the convolution kind; marker area is the layer's share of the
    network's FLOPs.
    """
    import matplotlib.pyplot as plt
    import numpy as np
    from . import plot
    if not isinstance(layers, dict) or not layers:
        raise ValueError("layers must be a non-empty dict {network name: roofline_points(...) table}")
    ais = np.concatenate([np.asarray(t["intensity"], dtype=float) for t in layers.values()])
    lo, hi = min(ais.min(), roof.ridge) / 16, max(ais.max(), roof.ridge) * 32  # room for the roof's labels
    xlim = (2.0 ** np.floor(np.log2(lo)), 2.0 ** np.ceil(np.log2(hi)))
    if axes is None:
        # No rc_context here: a first figure made inside one leaves Jupyter's inline backend
        # non-interactive afterwards, and later figures stop showing.
        fig, axes = plt.subplots(1, len(layers), figsize=(5.6 * len(layers), 4.4), layout="constrained",
                                 sharey=True, squeeze=False)
        axes = list(axes[0])
    else:
        axes = list(np.atleast_1d(axes))
        fig = axes[0].figure
    if len(axes) != len(layers):
        raise ValueError(f"axes must hold one matplotlib axes per network ({len(layers)}), got {len(axes)}")
    unit, scale = plot.flops_unit(max(roof.peak_flops, *roof.compute_ceilings.values()))
    info = _device_info(roof)
    for ax, (name, table) in zip(axes, layers.items()):
        plot.roofline(roof, ax=ax, xlim=xlim, title=name, device=info)
        share = np.asarray(table["flops"], dtype=float) / float(table["flops"].sum())
        table = table.assign(_size=20 + 600 * share)
        for kind, part in table.groupby("kind", sort=False):
            color, marker = _KIND_STYLE.get(kind, _KIND_STYLE["other"])
            y = np.asarray(roof.attainable(np.asarray(part["intensity"], dtype=float))) / scale
            ax.scatter(part["intensity"], y, s=part["_size"], color=color, marker=marker, alpha=0.7,
                       edgecolor="white", linewidth=0.5, label=f"{kind} ({len(part)})", zorder=3)
        ax.legend(loc="upper left", frameon=False, fontsize=7)
    fig.suptitle(title or plot.device_title("Conv and FC layers placed on the roofline (area: share of FLOPs)",
                                            device=info))
    return fig


def _device_info(roof):
    """The live device for titles; a roof named '<device> spec sheet' or '... measured roof'
    names the device without its suffix."""
    from .device import device as live
    dev = live()
    name = roof.name
    for suffix in (" spec sheet", " measured roof"):
        name = name[:-len(suffix)] if name.endswith(suffix) else name
    return {"name": name or dev.name, "backend": dev.backend}


def device_roof(dtype: str = "float32"):
    """The live device's :class:`~brrr.Roofline` for ``dtype`` (:meth:`Roofline.from_device`),
    named for where it comes from: '<GPU> spec sheet' on a GPU brrr has a spec sheet for,
    else '<device> measured roof' (on a CPU: copy bandwidth and matmul FLOP/s measured
    once and cached), so figures and text call a measured roof a measured roof."""
    from .device import device as live
    from .roofline import Roofline, has_spec_sheet
    dev = live()
    roof = Roofline.from_device(dev, dtype=dtype)
    suffix = "spec sheet" if has_spec_sheet(dev.summary()) else "measured roof"
    return roof.with_ceilings(name=f"{dev.name} {suffix}")


def plot_reuse(table, axes=None, title=None):
    """Two panels from :func:`compare_with_paper`'s table: reuse, and AI_c against DI.

    Left: activation reuse M_c/A against weight reuse M_c/W (log-log), ours filled and
    the paper's hollow, joined by a line. Right: DI against AI_c with the line DI = AI_c;
    networks below it are those the paper says AI_c overrates.
    """
    import matplotlib.pyplot as plt
    from . import plot
    for col in ("weight_reuse", "activation_reuse", "ai_c", "di"):
        if col not in table or f"{col} (paper)" not in table:
            raise ValueError(f"table needs {col!r} and '{col} (paper)' columns (from compare_with_paper)")
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")  # see plot_layers
    else:
        fig = axes[0].figure
    panels = (("weight_reuse", "activation_reuse", "weight reuse $M_c/W$ (MACs per weight)",
               "activation reuse $M_c/A$ (MACs per activation)"),
              ("ai_c", "di", "$AI_c = M_c/(W+A)$ (MACs per element)", r"DI, $\alpha$ = 0.8 (MACs per element)"))
    for ax, (x, y, xlabel, ylabel) in zip(axes, panels):
        labels = []
        for i, (name, row) in enumerate(table.iterrows()):
            color = f"C{i % 10}"
            ax.plot([row[x], row[f"{x} (paper)"]], [row[y], row[f"{y} (paper)"]], color=color, lw=0.8, alpha=0.6)
            ax.scatter(row[x], row[y], color=color, s=36, zorder=3, label=name)
            ax.scatter(row[f"{x} (paper)"], row[f"{y} (paper)"], facecolor="none", edgecolor=color, s=36, zorder=3)
            labels.append(ax.annotate(name, (row[x], row[y]), fontsize=7, xytext=(4, 3),
                                      textcoords="offset points"))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.margins(x=0.12, y=0.08)
        plot._style(ax)
        _spread_labels(ax, labels)
    lo = min(table[["ai_c", "di", "ai_c (paper)", "di (paper)"]].min()) / 1.5
    hi = max(table[["ai_c", "di", "ai_c (paper)", "di (paper)"]].max()) * 1.5
    axes[1].plot([lo, hi], [lo, hi], color="0.4", ls="--", lw=0.9, label="DI = $AI_c$")
    axes[0].set_title("Weight vs activation reuse (filled: brrr.models, hollow: paper)")
    axes[1].set_title("$AI_c$ vs DI (below the dashed line: $AI_c$ > DI)")
    axes[1].legend(handles=axes[1].get_lines()[-1:], frameon=False, loc="upper left")
    if title:
        fig.suptitle(title)
    return fig


def _spread_labels(ax, labels, pad: float = 1.0, rounds: int = 60):
    """Move point labels (annotations in offset points) off other points, to the left of
    their own point where the right is taken, then apart vertically until no two overlap."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    to_points = 72.0 / fig.dpi
    points = [ax.transData.transform(t.xy) for t in labels]
    for t, own in zip(labels, points):
        box = t.get_window_extent(renderer).expanded(1.0, 1.4)
        if any(box.contains(*p) for p in points if p is not own):
            dx, dy = t.xyann
            t.xyann = (-dx, dy)
            t.set_horizontalalignment("right")
    for _ in range(rounds):
        boxes = [t.get_window_extent(renderer) for t in labels]
        moved = False
        for i in range(len(labels)):
            for j in range(i + 1, len(labels)):
                a, b = boxes[i], boxes[j]
                if a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0:
                    continue
                # push the lower label down and the upper one up, half the overlap each
                lower, upper = (i, j) if a.y0 <= b.y0 else (j, i)
                overlap = (min(a.y1, b.y1) - max(a.y0, b.y0)) * to_points + pad
                for k, sign in ((lower, -1), (upper, 1)):
                    dx, dy = labels[k].xyann
                    labels[k].xyann = (dx, dy + sign * overlap / 2)
                moved = True
                boxes = [t.get_window_extent(renderer) for t in labels]
        if not moved:
            break
