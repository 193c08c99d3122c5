"""What one ATen operator call costs on paper: its FLOPs, its bytes and its category.

Counting conventions (documented so the numbers can be checked by hand):

* **FLOPs.** Matmul-like ops (mm, addmm, bmm, baddbmm, convolution, attention)
  use PyTorch's own formulas (``torch.utils.flop_counter``): 2·M·N·K for a matmul,
  a multiply and an add per multiply-accumulate; addmm's bias add is not counted.
  Other ops use per-element counts of our own, listed in :data:`PER_ELEMENT_FLOPS`:
  1 FLOP per output element for a pointwise op (a transcendental such as ``exp``
  or ``erf`` counts as one, as ``cos`` does in chapter 2), 5 for GELU (x/√2,
  erf, +1, ×x, ×½), 5 per element for softmax (max, subtract, exp, sum, divide),
  7 for layer/batch norm with affine weights (mean, subtract, square, sum,
  scale by 1/σ, ×γ, +β), 1 per *input* element for a reduction, 0 for copies.
* **Bytes** are the ideal unfused traffic: every distinct input tensor read once
  plus every output written once, at its dtype's size. A broadcast (stride-0)
  dimension counts once. Views (``view``, ``transpose``, ``expand``...) move no
  data and are left out of the table unless ``views=True``, as are bare allocations
  (``empty_like``). Ops that only write (``fill_``, ``zeros_like``, ``bernoulli_``)
  count their output. Pooling counts one FLOP per window element per output.
* **Categories** follow Ivanov et al. (2021): ``matmul`` (tensor contractions),
  ``normalisation`` (layer/batch/group norm and softmax, their "statistical
  normalisations"), ``elementwise`` (pointwise ops, dropout) and ``other``
  (copies, reductions, factories, indexing).
"""
from __future__ import annotations

import numpy as np

CATEGORIES = ("matmul", "normalisation", "elementwise", "other")

# FLOPs per output element (per input element for reductions). Anything pointwise
# and not listed counts 1.
PER_ELEMENT_FLOPS = {
    "gelu": 5, "gelu_backward": 11,                   # 0.5·x·(1+erf(x/√2)) and its derivative
    "silu": 4, "silu_backward": 7, "sigmoid": 3, "sigmoid_backward": 2, "tanh_backward": 2,
    "_softmax": 5, "_log_softmax": 5,                 # max, subtract, exp, sum, divide (or log)
    "_softmax_backward_data": 4, "_log_softmax_backward_data": 4,
    "native_layer_norm": 7, "native_layer_norm_backward": 12,
    "native_batch_norm": 7, "_native_batch_norm_legit": 7, "native_batch_norm_backward": 12,
    "_native_batch_norm_legit_no_training": 4,        # running statistics: (x-μ)·(γ/σ)+β
    "native_group_norm": 7, "native_group_norm_backward": 12, "_fused_rms_norm": 5,
    "native_dropout": 2, "native_dropout_backward": 2,  # compare with p, scale
    "addcmul": 2, "addcdiv": 2, "lerp": 3, "where": 1, "bernoulli_": 1,
}

_NORMALISATION = {"native_layer_norm", "native_layer_norm_backward", "native_batch_norm",
                  "native_batch_norm_backward", "_native_batch_norm_legit",
                  "_native_batch_norm_legit_no_training", "_native_batch_norm_legit_functional",
                  "batch_norm_backward", "cudnn_batch_norm", "cudnn_batch_norm_backward",
                  "miopen_batch_norm", "native_group_norm", "native_group_norm_backward",
                  "_fused_rms_norm", "_fused_rms_norm_backward", "_softmax", "_log_softmax",
                  "_softmax_backward_data", "_log_softmax_backward_data"}
_MATMUL = {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "convolution", "_convolution",
           "convolution_backward", "mkldnn_convolution", "cudnn_convolution", "_scaled_mm",
           "addbmm", "dot", "mv", "addmv"}
_ELEMENTWISE_EXTRA = {"native_dropout", "native_dropout_backward", "bernoulli_", "bernoulli",
                      "where", "add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_"}
_COPIES = {"clone", "copy_", "_to_copy", "contiguous", "_copy_from", "_copy_from_and_resize"}
_WRITE_ONLY = {"fill_", "zero_", "zeros_like", "ones_like", "full_like", "zeros", "ones", "full",
               "new_zeros", "new_ones", "new_full", "bernoulli_", "normal_", "uniform_",
               "rand_like", "randn_like", "scalar_tensor"}
_POOLING = {"max_pool2d_with_indices", "max_pool2d", "avg_pool2d", "max_pool3d_with_indices",
            "avg_pool3d", "max_pool1d", "avg_pool1d"}
_ALLOCATE_ONLY = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}
_GATHERS = {"embedding", "index_select"}   # read only the rows they gather from their first argument, the table


def _name(func) -> str:
    return func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)


def _tensors(tree) -> list:
    import torch
    from torch.utils._pytree import tree_flatten
    return [t for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


def _distinct(tensors) -> list:
    seen, out = set(), []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def tensor_bytes(t) -> int:
    """Bytes a tensor occupies once, a broadcast (stride-0) dimension counted once."""
    elements = 1
    for size, stride in zip(t.shape, t.stride()):
        if stride != 0:
            elements *= size
    return elements * t.element_size()


def count_bytes(func, args, kwargs, out) -> int:
    """Ideal unfused bytes of one call: distinct inputs read once + outputs written once (a gather such as
    ``embedding`` reads only the rows it gathers from its table, at most its output's bytes)."""
    name = _name(func)
    if name in _ALLOCATE_ONLY:
        return 0
    written = sum(tensor_bytes(t) for t in _distinct(_tensors(out)))
    if name in _WRITE_ONLY:
        return written
    kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    inputs = _distinct(_tensors((args, kwargs)))
    if name in _GATHERS and inputs:           # a gather reads at most the rows it writes out, not the whole table
        table, rest = inputs[0], inputs[1:]
        return min(tensor_bytes(table), written) + sum(tensor_bytes(t) for t in rest) + written
    return sum(tensor_bytes(t) for t in inputs) + written


def _numel(tensors) -> int:
    return sum(t.numel() for t in tensors)


def count_flops(func, args, kwargs, out) -> int:
    """FLOPs of one call: PyTorch's formula for matmul-like ops, else our per-element counts."""
    from torch.utils.flop_counter import flop_registry
    packet = getattr(func, "overloadpacket", None)
    if packet in flop_registry:
        return int(flop_registry[packet](*args, **kwargs, out_val=out))
    name = _name(func)
    category = categorise(func)
    if name in _POOLING:
        window = args[1] if len(args) > 1 else 1   # kernel size: one compare or add per window element
        return _numel(_tensors(out)[:1]) * int(np.prod(window))
    if name in _COPIES or name in _ALLOCATE_ONLY or category == "other" and not _is_reduction(func):
        return 0
    outputs = _tensors(out)
    if name in ("native_layer_norm", "native_batch_norm", "_native_batch_norm_legit",
                "_native_batch_norm_legit_no_training", "native_group_norm", "_fused_rms_norm",
                "native_dropout"):
        outputs = outputs[:1]                  # the normalised tensor; mean/rstd/mask are by-products
    if name.endswith("_backward") and category == "normalisation":
        outputs = outputs[:1]                  # grad_input; weight/bias grads are reductions on top
    if _is_reduction(func):
        return _numel(_tensors(args)[:1])      # one FLOP per element reduced
    per_element = PER_ELEMENT_FLOPS.get(name, 1)
    if name == "native_batch_norm" and len(args) > 5 and args[5] is False:
        per_element = PER_ELEMENT_FLOPS["_native_batch_norm_legit_no_training"]  # eval mode
    return per_element * _numel(outputs)


def _is_reduction(func) -> bool:
    import torch
    return torch.Tag.reduction in getattr(func, "tags", ())


def categorise(func) -> str:
    """'matmul', 'normalisation', 'elementwise' or 'other' for an ATen operator."""
    import torch
    from torch.utils.flop_counter import flop_registry
    name = _name(func)
    if name in _MATMUL or getattr(func, "overloadpacket", None) in flop_registry \
            or "scaled_dot_product" in name or "attention" in name:
        return "matmul"
    if name in _NORMALISATION:
        return "normalisation"
    if name in _COPIES or name in _ALLOCATE_ONLY:
        return "other"
    if name in _ELEMENTWISE_EXTRA or torch.Tag.pointwise in getattr(func, "tags", ()):
        return "elementwise"
    return "other"
