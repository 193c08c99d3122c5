"""Counting what a network computes, operator by operator, by the DI paper's conventions.

Jha, Mittal & Avancha (2020), Data-type Aware Arithmetic Intensity for Deep Neural
Networks, count a network's MACs, weights and activations layer by layer. Here a layer
is found at the level of PyTorch's ATen operators, so a network counts the same however
it is written: ``nn.ReLU()`` or ``F.relu``, an ``Add`` module or ``out += identity``,
``Concat`` or ``torch.cat``, ``nn.Linear`` and ``q @ k.transpose(-2, -1)`` or
``F.linear`` and ``torch.matmul``.

:func:`trace_layers` runs the model once (eval mode, no grad, on zeros, or without any
arithmetic on the ``meta`` device) under three observers: a ``TorchDispatchMode`` sees
every ATen operator, a ``TorchFunctionMode`` sees the few functions that count as one
layer (:data:`ONE_LAYER`), and ``torch.utils.module_tracker.ModuleTracker`` names the
innermost module running, as :mod:`brrr.profiler` does. Each operator is one row,
classified by :data:`OPS` (then by its schema; see :func:`classify`):

=============  =======================================================  ==========  =====
category       what it is                                               MACs        blobs
=============  =======================================================  ==========  =====
``product``    convolution, mm, addmm, bmm, baddbmm, attention, ...     ``MACS``    1
``blob``       computes a new tensor: pointwise ops (in place too,      0           1
               as Caffe counts in-place ReLU), reductions, pooling,
               softmax, norms, concatenation, gathers
``batchnorm``  BatchNorm: Caffe's BatchNorm + Scale, two blobs          0           2
``layer``      a function of :data:`ONE_LAYER`: one blob, its output    inside      1
``view``       relabels memory (view, reshape, transpose, expand, ...)  0           0
``copy``       the same values laid out anew (clone, contiguous,        0           0
               dtype casts, padding, repeat)
``constant``   allocated or made inside forward (empty, zeros, arange)  0           0
``uncounted``  anything else: listed by name, counts nothing            0           0
=============  =======================================================  ==========  =====

The function level sees only the model's own calls: inside another Python function of
torch (``F.multi_head_attention_forward``, behind ``nn.MultiheadAttention`` and
``nn.Transformer*``) operators count one by one, so there an attention that ATen runs
unfused (on 'meta', or with ``need_weights=True``) also counts its L x S score matrices.

Weights: each row records the parameters its operator reads (through any view of
them); the network's W counts every parameter once. A row's ``in_elements`` are its
distinct activation inputs (parameters and buffers left out; a broadcast dimension
counted once) and ``out_elements`` its first output (a pooling's indices, a norm's
saved statistics are by-products).
"""
from __future__ import annotations

import functools
import math
from collections import Counter

# the module an operator ran in, as the profiler names it; the tensors in an argument tree
from .profiler.capture import _innermost
from .profiler.counting import _tensors

#: How each ATen operator (overload stripped) counts, when its schema does not say:
#: see the module docstring. Products are the keys of :data:`MACS`.
OPS = {
    **dict.fromkeys((
        "cat", "stack", "_softmax", "_log_softmax", "_safe_softmax", "native_layer_norm",
        "native_group_norm", "_fused_rms_norm", "native_dropout",
        "max_pool1d", "max_pool2d", "max_pool3d", "max_pool2d_with_indices", "max_pool3d_with_indices",
        "avg_pool1d", "avg_pool2d", "avg_pool3d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d",
        "adaptive_avg_pool1d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
        "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "upsample_linear1d",
        "upsample_bilinear2d", "upsample_bicubic2d", "upsample_trilinear3d",
        "embedding", "index", "index_select", "gather"), "blob"),
    **dict.fromkeys((
        "native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
        "_batch_norm_with_update", "_batch_norm_no_update", "cudnn_batch_norm", "miopen_batch_norm"),
        "batchnorm"),
    **dict.fromkeys(("_unsafe_view",), "view"),   # a view whose schema does not say so
    **dict.fromkeys((
        "clone", "_to_copy", "copy_", "constant_pad_nd", "repeat", "expand_copy", "roll", "flip"), "copy"),
    **dict.fromkeys((
        "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
        "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "arange",
        "scalar_tensor", "lift_fresh_copy", "fill_", "zero_", "bernoulli_", "rand_like", "randn_like"),
        "constant"),
}

#: Blobs (activations written, in units of the first output) per category.
BLOBS = {"product": 1, "blob": 1, "batchnorm": 2, "layer": 1,
         "view": 0, "copy": 0, "constant": 0, "uncounted": 0}


def _attention_macs(a, out):
    """Q K^T and P V: (..., L, E) x (..., S, E) and (..., L, S) x (..., S, Ev)."""
    q, k, v = a[0], a[1], a[2]
    return math.prod(q.shape[:-1]) * k.shape[-2] * (q.shape[-1] + v.shape[-1])


def _conv_macs(a, out):
    """Weights x output positions (input positions for a transposed convolution)."""
    x, w, transposed = a[0], a[1], a[6]
    return w.numel() * x.shape[0] * math.prod((x if transposed else out).shape[2:])


#: MACs of each product operator from its arguments ``a`` and first output: output
#: elements times the length of the sum behind each (K of an (M x K)(K x N) product).
#: Attention counts both products in full, causal or not.
MACS = {
    "convolution": _conv_macs, "_convolution": _conv_macs,
    "mm": lambda a, out: out.numel() * a[0].shape[-1],
    "addmm": lambda a, out: out.numel() * a[1].shape[-1],
    "_addmm_activation": lambda a, out: out.numel() * a[1].shape[-1],
    "bmm": lambda a, out: out.numel() * a[0].shape[-1],
    "baddbmm": lambda a, out: out.numel() * a[1].shape[-1],
    "addbmm": lambda a, out: a[1].numel() * a[2].shape[-1],
    "mv": lambda a, out: a[0].numel(), "addmv": lambda a, out: a[1].numel(),
    "dot": lambda a, out: a[0].numel(), "vdot": lambda a, out: a[0].numel(),
    "_scaled_dot_product_flash_attention_for_cpu": _attention_macs,
    "_scaled_dot_product_flash_attention": _attention_macs,
    "_scaled_dot_product_efficient_attention": _attention_macs,
    "_scaled_dot_product_cudnn_attention": _attention_macs,
}

#: Functions (of ``torch.nn.functional``) counted as one layer whatever ATen operators they
#: run: their MACs are those of the products inside, their one blob is their output.
#: linear: one layer on either of ATen's paths (addmm, or mm then a bias add).
#: local_response_norm, rms_norm: one normalisation layer (PyTorch runs 5 to 9 operators).
#: scaled_dot_product_attention: one fused kernel that writes only its output (on 'meta'
#: ATen falls back to the unfused maths, whose score matrices would otherwise count).
#: dropout and kin: no operator at all at inference, but an in-place layer with a blob in Caffe.
ONE_LAYER = ("linear", "local_response_norm", "rms_norm", "scaled_dot_product_attention",
             "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")


def _name(func) -> str:
    return func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)


def classify(func) -> str:
    """The category (see the module docstring) of an ATen operator such as ``torch.ops.aten.add_.Tensor``."""
    import torch
    name = _name(func)
    if name in MACS:
        return "product"
    if name in OPS:
        return OPS[name]
    if getattr(func, "is_view", False):
        return "view"
    tags = getattr(func, "tags", ())
    if torch.Tag.pointwise in tags or torch.Tag.reduction in tags:
        return "blob"
    return "uncounted"


def _storage(t):
    """An id of the memory ``t`` lives in, shared by all its views (None if it has none)."""
    try:
        return t.untyped_storage()._cdata
    except (RuntimeError, NotImplementedError, AttributeError):
        return None


def _elements(t) -> int:
    """Elements ``t`` holds, a broadcast (stride-0) dimension counted once."""
    return math.prod(n for n, s in zip(t.shape, t.stride()) if s != 0)


def _kind(name, args, weights) -> str:
    """'standard', 'pointwise', 'group', 'depthwise' (a convolution, Table II), 'fc' (a
    product with a weight), 'matmul' (of two activations) or 'other'."""
    if name in ("convolution", "_convolution"):
        x, w, transposed, groups = args[0], args[1], args[6], args[8]
        if transposed:
            return "other"
        if groups == 1:
            return "pointwise" if math.prod(w.shape[2:]) == 1 else "standard"
        return "depthwise" if groups == x.shape[1] == w.shape[0] else "group"
    if name in MACS:
        return "fc" if weights else "matmul"
    return "other"


class _Counter:
    """The rows of one traced run, built as operators arrive."""

    def __init__(self, model, tracker):
        self.tracker, self.rows, self.group = tracker, [], None
        root = type(model).__name__   # ModuleTracker names modules '<root type>.<fqn>'
        self.modules = {(f"{root}.{fqn}" if fqn else root): (fqn or root, type(m).__name__)
                        for fqn, m in model.named_modules(remove_duplicate=False)}
        self.weights = {}   # parameter elements per storage: a view of a weight reads that weight
        for p in model.parameters():
            self.weights[_storage(p)] = self.weights.get(_storage(p), 0) + p.numel()
        self.state = (set(self.weights) | {_storage(b) for b in model.buffers()}) - {None}
        self.weights.pop(None, None)

    def _where(self):
        """(layer, type) of the innermost module running."""
        name = _innermost(self.tracker.parents)
        return self.modules.get(name, (name, name.split(".")[-1]))

    def _reads(self, tree):
        """(activation inputs, distinct; storages of the parameters read)."""
        ins, seen, params = [], set(), set()
        for t in _tensors(tree):
            key = _storage(t)
            if key in self.weights:
                params.add(key)
            elif key not in self.state and id(t) not in seen:
                seen.add(id(t))
                ins.append(t)
        return ins, params

    def _row(self, op, category, kind, ins, out, macs, params):
        layer, type_ = self.group["where"] if self.group and category == "layer" else self._where()
        first = next(iter(_tensors(out)), None)
        self.rows.append({
            "layer": layer, "type": type_, "op": op, "category": category, "kind": kind,
            "input_shape": tuple(ins[0].shape) if ins else (),
            "output_shape": tuple(first.shape) if first is not None else (),
            "in_elements": sum(_elements(t) for t in ins),
            "out_elements": first.numel() if first is not None else 0,
            "macs": int(macs), "weights": sum(self.weights[k] for k in params),
            "blobs": BLOBS[category], "bytes_per_element": first.element_size() if first is not None else 4})

    def op(self, func, args, kwargs, out):
        """One ATen operator: a row, or a part of the ONE_LAYER call running."""
        name, category = _name(func), classify(func)
        ins, params = self._reads((args, kwargs))
        macs = MACS[name](args, _tensors(out)[0]) if category == "product" else 0
        kind = _kind(name, args, sum(self.weights[k] for k in params))
        if category == "uncounted" or self.group is None:
            self._row(name, category, kind, ins, out, macs, params)
        if self.group is not None:
            self.group["macs"] += macs
            self.group["params"] |= params
            if self.group["kind"] == "other":
                self.group["kind"] = kind

    def begin(self, name, args, kwargs):
        self.group = {"name": name, "where": self._where(), "macs": 0, "params": set(), "kind": "other"}
        self.group["ins"] = self._reads((args, kwargs))[0]

    def end(self, out):
        g = self.group
        self._row(g["name"], "layer", g["kind"], g["ins"], out, g["macs"], g["params"])
        self.group = None


@functools.lru_cache(maxsize=None)
def _modes():
    """The dispatch and function modes, defined once (see brrr.profiler.capture._recorder_class)."""
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode
    one_layer = {getattr(F, name): name for name in ONE_LAYER if hasattr(F, name)}

    class Operators(TorchDispatchMode):
        def __init__(self, counter):
            super().__init__()
            self.counter = counter

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            self.counter.op(func, args, kwargs, out)
            return out

    class Layers(TorchFunctionMode):
        def __init__(self, counter):
            super().__init__()
            self.counter = counter

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            try:
                name = one_layer.get(func) if self.counter.group is None else None
            except TypeError:   # an unhashable callable is none of ONE_LAYER
                name = None
            if name is None:
                return func(*args, **kwargs)
            self.counter.begin(name, args, kwargs)
            out = func(*args, **kwargs)
            self.counter.end(out)
            return out

    return Operators, Layers


def trace_rows(model, x) -> list:
    """Run ``model(x)`` (no grad) and return one row (a dict) per ATen operator or
    :data:`ONE_LAYER` call, in execution order. The model's modes are left to the caller."""
    import torch
    from torch.utils.module_tracker import ModuleTracker
    operators, layers = _modes()
    with ModuleTracker() as tracker:
        counter = _Counter(model, tracker)
        with torch.no_grad(), operators(counter), layers(counter):
            model(x)
    return counter.rows


def uncounted(rows) -> dict:
    """``{op name: calls}`` of the rows no convention could count, most frequent first."""
    return dict(Counter(r["op"] for r in rows if r["category"] == "uncounted").most_common())


def linear(rows: int, n: int) -> tuple:
    """(FLOPs, bytes) of ``x @ W`` in float32 with W n x n on ``rows`` rows: x, W and the output once each."""
    return 2 * rows * n * n, 4 * (2 * rows * n + n * n)


def ridge_rows(n: int, ridge: float):
    """The fewest rows from which ``x @ W`` (W n x n, float32) reaches ``ridge``: 2Bn² / (4(2Bn + n²)) >= ridge,
    so B >= 2 ridge n / (n - 4 ridge); None where no batch does (n <= 4 ridge)."""
    return math.ceil(2 * ridge * n / (n - 4 * ridge)) if n > 4 * ridge else None
