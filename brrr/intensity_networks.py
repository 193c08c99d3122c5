"""Whole networks: M_c, W, A and the reuse figures of Table VIII, from an operator-level count.

Jha, Mittal & Avancha (2020), Data-type Aware Arithmetic Intensity for Deep Neural
Networks, Table VIII. The counting itself is :mod:`brrr.intensity_count`; this module
applies the paper's two conventions for activations to its rows and compares the
totals with the paper's.
"""
from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass, field
from typing import Optional

from .intensity_count import trace_rows, uncounted as _uncounted
from .intensity_paper import (CONVENTIONS, DEFAULT_ALPHA, PAPER_NAMES, PAPER_NAMES_ADDED, PAPER_TABLE_VIII,
                              TABLE_VIII_COLUMNS, TABLE_VIII_DIGITS, Reuse, _check_alpha, data_type_aware_intensity, disparity)
from .profiler.capture import _modes_kept


@dataclass
class ModelIntensity(Reuse):
    """Totals for one network (elements and MACs) plus its per-operator table.

    ``W`` counts every parameter once; ``A`` depends on ``convention`` (see
    :func:`model_intensity`). Reuse figures are MACs per element. ``uncounted``:
    ``{operator: calls}`` that no convention could count (they add nothing to the totals).
    """
    name: str
    input_shape: tuple
    convention: str
    alpha: float
    macs: int
    weights: int
    activations: int
    layers: object = field(repr=False)   # pandas DataFrame, one row per operator (see trace_layers)
    uncounted: dict = field(default_factory=dict)

    @property
    def ai_c(self) -> float:
        """Cumulative arithmetic intensity M_c / (W + A) (the paper's name for it)."""
        return self.arithmetic_intensity

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
                "activations": self.activations, **self.row(), "uncounted": dict(self.uncounted)}

    def __repr__(self):
        return (f"ModelIntensity({self.name} at {tuple(self.input_shape)}, {self.convention!r} convention: "
                f"M_c={self.macs / 1e6:,.1f} M MACs, W={self.weights / 1e6:,.2f} M, A={self.activations / 1e6:,.2f} M; "
                f"M_c/W={self.weight_reuse:.0f}, M_c/A={self.activation_reuse:.0f}, AI_c={self.ai_c:.0f}, "
                f"DI={self.di:.0f} (alpha={self.alpha:g}), A/W={self.a_over_w:.2f}, d_f={self.d_f:.0f}%"
                f"{self._uncounted_note()})")

    def _uncounted_note(self) -> str:
        if not self.uncounted:
            return ""
        calls = ", ".join(f"{op} x{n}" for op, n in self.uncounted.items())
        return f"; NOT COUNTED: {calls}"


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
    """Run ``model`` once on zeros of ``input_shape`` and count every operator it runs.

    Returns one dict per ATen operator, or per call of a function counted as one layer
    (:data:`brrr.intensity_count.ONE_LAYER`, e.g. ``F.linear``), in execution order:
    layer (the innermost module's name), type (its class), op, category (how it counts:
    :func:`brrr.intensity_count.classify`), kind, input/output shapes, in_elements and
    out_elements (activations read and written), macs, weights (parameter elements it
    reads), blobs and bytes_per_element. Functional code counts as modules do:
    ``F.relu``, ``out += identity``, ``torch.cat`` and ``q @ k.T`` are all seen. A model
    built under ``torch.device("meta")`` is traced without any arithmetic.
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
    try:
        with _modes_kept(model):   # each module's own mode, as it was
            model.eval()
            return trace_rows(model, torch.zeros(shape, dtype=dtype, device=device))
    except Exception as error:
        raise RuntimeError(f"model failed on input_shape={shape}: {type(error).__name__}: {error}") from error


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
    """M_c, W, A, reuse, AI_c, DI and d_f of a network, with a per-operator table.

    Parameters
    ----------
    model : any ``torch.nn.Module``; it is run once (eval mode, no grad) on zeros.
    input_shape : shape of that input, batch included, e.g. ``(1, 3, 224, 224)``.
        The paper counts at batch 1; a larger batch scales M_c and A but not W.
    convention : how activations A are counted.

        ``'blobs'`` (default) is what the paper's Table VIII was computed with (a Caffe
        network analyser at batch 1): the input plus the output (a "blob") of every
        operator that computes one, in-place ones included (ReLU, ``out += identity``),
        BatchNorm twice (Caffe splits it into BatchNorm + Scale), Dropout once (an in-place
        layer in Caffe, an identity at inference), and concatenations, residual adds,
        pooling and softmax. Views and copies (reshape, transpose, contiguous, Flatten,
        Identity) add nothing.

        ``'layer'`` is Table II per layer: every counted operator's inputs + outputs
        (ifmap + ofmap), summed, i.e. what each would read and write if nothing stayed
        on chip between them.
    alpha : DI's weight on activation reuse (0.8 in the paper's Table VIII; its Eq. 5
        and Table VII are worked with 0.75).

    W is every parameter once (weights, biases, BatchNorm's scale and shift); M_c is
    the MACs of convolutions and matrix products (linear layers, ``@``, attention).
    How each operator counts is :mod:`brrr.intensity_count`; those it cannot count are
    listed, with their number of calls, in the result's ``uncounted``.
    """
    import pandas as pd
    if not isinstance(convention, str) or convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    alpha = _check_alpha(alpha)
    records = trace_layers(model, input_shape)
    shape = _check_shape(model, input_shape)
    for r in records:
        if convention == "layer":
            r["activations"] = r["in_elements"] + r["out_elements"] if r["blobs"] else 0
        else:
            r["activations"] = r["out_elements"] * r["blobs"]
    if convention == "blobs":
        records.insert(0, {"layer": "input", "type": "input", "op": "input", "category": "input",
                           "kind": "other", "input_shape": (), "output_shape": shape, "in_elements": 0,
                           "out_elements": math.prod(shape), "macs": 0, "weights": 0, "blobs": 1,
                           "activations": math.prod(shape),
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
                         "the intensities need all three > 0 (does it contain Conv or Linear layers, "
                         "or matrix products?)")
    return ModelIntensity(name or type(model).__name__, shape, convention, alpha, macs, weights,
                          activations, table, _uncounted(records))


def roofline_points(model, input_shape, min_macs: int = 1):
    """Per-layer FLOPs and bytes in the roofline sense, for layers that do MACs.

    A pandas DataFrame with one row per operator that does MACs (a convolution, a
    linear layer, a matrix product, an attention): layer, kind, flops
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
    known = {**PAPER_NAMES, **PAPER_NAMES_ADDED}
    rows = []
    for key in names:
        if key not in known:
            raise ValueError(f"names must be networks of brrr.models that are in Table VIII "
                             f"({sorted(known)}), got {key!r}")
        with torch.device("meta"):
            net = models.get(key)
        ours = model_intensity(net, models.INPUT_SHAPES[key], convention, alpha, name=key)
        paper = dict(zip(TABLE_VIII_COLUMNS, PAPER_TABLE_VIII[known[key]]))
        row = {"network": known[key]}
        for col in TABLE_VIII_COLUMNS:
            row[f"{col}"] = ours.row()[col]
            row[f"{col} (paper)"] = paper[col]
        row["d_f from rounded"] = disparity(round(ours.ai_c), round(ours.di))
        row.update(macs=ours.macs, weights=ours.weights, activations=ours.activations,
                   input_size=ours.input_shape[-1])
        rows.append(row)
    return pd.DataFrame(rows).set_index("network")


MAIN_COLUMNS = ("weight_reuse", "activation_reuse", "ai_c", "di", "a_over_w")
# Page headers: plain text (no TeX, no underscores) in a table's header row: Mc/W for the prose's $M_c/W$.
_VIII_NAMES = {"weight_reuse": "Mc/W", "activation_reuse": "Mc/A", "ai_c": "AIc", "di": "DI",
               "a_over_w": "A/W", "d_f": "df (%)"}


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
    paper's for each Table VIII column (two header rows), and the largest difference from the
    paper beyond its rounding, in per cent (d_f left out). d_f from rounded values, the table's
    ``d_f from rounded``, is for the prose: one column fewer keeps the table within a page."""
    import pandas as pd
    cols = {}
    for c in TABLE_VIII_COLUMNS:
        cols[(_VIII_NAMES[c], "brrr")] = table[c]
        cols[(_VIII_NAMES[c], "paper")] = table[f"{c} (paper)"]
    cols[("off by", "beyond rounding, %")] = largest_differences(table)["largest difference (%)"]
    view = pd.DataFrame(cols, index=table.index)
    view.columns = pd.MultiIndex.from_tuples(view.columns)
    return view.reset_index()


#: Column names of this module's tables, as page headers with units.
HEADERS = {"layer": "layer", "type": "type", "op": "operator", "category": "counts as", "kind": "kind",
           "output_shape": "output shape",
           "macs": "MACs", "weights": "weights (elements)", "activations": "activations (elements)",
           "weight_reuse": "Mc/W (MACs per weight)", "activation_reuse": "Mc/A (MACs per activation)",
           "arithmetic_intensity": "intensity (MACs per element)", "intensity": "intensity (MACs per element)",
           "ai_c": "AIc (MACs per element)", "di": "DI (MACs per element)", "a_over_w": "A/W",
           "d_f": "df (%)", "convention": "convention"}


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
        out[{**PAPER_NAMES, **PAPER_NAMES_ADDED}.get(key, key)] = roofline_points(net, models.INPUT_SHAPES[key])
    return out

