"""A roofline profiler for PyTorch models: one row per operator, PyProf-style.

``profile(model, *inputs)`` runs the model once under a ``TorchDispatchMode``
that records every ATen operator it reaches (``aten.addmm``, ``aten._softmax``,
...) with its arguments. Then each recorded call is *replayed on its own* with
:func:`brrr.bench`, so every row has a measured time, on the CPU and on a GPU
alike. Beside the time go the operator's FLOPs and bytes, its arithmetic
intensity, the roofline time ``max(t_math, t_mem)`` on the live device, the
efficiency (roofline time / measured time) and the regime: whichever of
``t_math``, ``t_mem`` and chapter 3's fixed cost per call is the largest.

Why replay rather than ``torch.profiler``? The profiler's rows nest (``aten::linear``
contains ``aten::addmm``), on a GPU its kernel times must be matched to operators
through correlation ids, and one run gives one sample per op. Replaying each
recorded call gives a distribution per op with the same timer as the rest of the
book, and needs nothing device-specific. The price: an op runs out of context
(see ``cache`` below), and time the model spends between ops (Python, autograd
bookkeeping) is not in any row; ``table.attrs['model_seconds']`` holds the
whole model's measured time for comparison with ``table.seconds.sum()``.

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

import functools
import math
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .roofline import Roofline, COMPUTE, MEMORY, OVERHEAD

CATEGORIES = ("matmul", "normalisation", "elementwise", "other")

COLUMNS = ["op", "phase", "module", "category", "input_shapes", "dtype", "flops", "bytes",
           "intensity", "seconds", "roofline_seconds", "efficiency", "regime", "calls"]

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


@dataclass
class _Call:
    """One recorded operator call: what ran, on what, and in which phase."""
    func: Any
    args: tuple
    kwargs: dict
    phase: str
    module: str
    out: Any = None
    is_view: bool = False


# --- counting ----------------------------------------------------------------

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
    """Ideal unfused bytes of one call: distinct inputs read once + outputs written once."""
    name = _name(func)
    if name in _ALLOCATE_ONLY:
        return 0
    written = sum(tensor_bytes(t) for t in _distinct(_tensors(out)))
    if name in _WRITE_ONLY:
        return written
    kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    read = sum(tensor_bytes(t) for t in _distinct(_tensors((args, kwargs))))
    return read + written


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


# --- recording -----------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _recorder_class():
    """The dispatch mode that records calls, defined once: a class defined per profile
    sits in a reference cycle (as every class does), and its methods would keep the
    recorded tensors alive until the garbage collector next ran."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_map

    def keep(x):
        return x.clone() if isinstance(x, torch.Tensor) else x

    class Recorder(TorchDispatchMode):
        def __init__(self, calls: list, tracker, state: dict):
            super().__init__()
            self.calls, self.tracker, self.state = calls, tracker, state

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            mutable = func._schema.is_mutable
            # An in-place op would change its own inputs: keep a copy to replay it on.
            saved_args, saved_kwargs = (tree_map(keep, args), tree_map(keep, kwargs)) if mutable \
                else (args, kwargs)
            out = func(*args, **kwargs)
            is_view = False
            if not mutable:
                try:
                    inputs = {t.untyped_storage().data_ptr() for t in _tensors((args, kwargs))}
                    outs = [t.untyped_storage().data_ptr() for t in _tensors(out)]
                    is_view = bool(outs) and all(p in inputs for p in outs)
                except (RuntimeError, NotImplementedError):
                    is_view = False
            module = _innermost(self.tracker.parents)
            self.calls.append(_Call(func, saved_args, saved_kwargs, self.state["phase"], module,
                                    out, is_view))
            return out

    return Recorder


def _innermost(parents) -> str:
    """The deepest module active; where several tie (a backward pass through branches
    that share an input, such as Q, K and V), their common parent."""
    names = [p for p in parents if p != "Global"]
    if not names:
        return ""
    depth = max(n.count(".") for n in names)
    deepest = sorted({n for n in names if n.count(".") == depth})
    if len(deepest) == 1:
        return deepest[0]
    common = []
    for parts in zip(*(n.split(".") for n in deepest)):
        if len(set(parts)) > 1:
            break
        common.append(parts[0])
    return ".".join(common)


@contextmanager
def _modes_kept(model):
    """Put every module of ``model`` back in its own train/eval mode when the block ends."""
    modes = [(m, m.training) for m in model.modules()]
    try:
        yield
    finally:
        for m, training in modes:
            m.training = training


@contextmanager
def _left_as_found(model):
    """Leave ``model`` as it was, whatever runs inside: its parameters' and buffers'
    values (BatchNorm's running statistics and ``num_batches_tracked``), each
    parameter's ``.grad`` (the same tensor, unchanged, or None), ``requires_grad``
    flags, every module's train/eval mode, and the CPU and CUDA random number
    generators that dropout draws from.

    Gradients are None inside, so a backward pass makes new ones rather than adding
    into the old ones in place. A tensor is written back only if its value changed
    (writing into an unchanged parameter would break autograd graphs that saved it);
    values are compared, not version counters, because ``aten.native_batch_norm``
    updates the running statistics without bumping theirs.
    """
    import torch
    params = list(model.parameters())
    values = [(t, t.detach().clone()) for t in params + list(model.buffers())]
    grads = [(p, p.grad, p.requires_grad) for p in params]
    cpu_rng = torch.get_rng_state()
    cuda_rng = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
    for p in params:
        p.grad = None
    try:
        with _modes_kept(model):
            yield
    finally:
        with torch.inference_mode():   # which can also write tensors made under it
            for t, saved in values:
                if not torch.equal(t, saved):
                    t.copy_(saved)
        for p, grad, requires_grad in grads:
            if p.requires_grad != requires_grad:
                p.requires_grad_(requires_grad)
            p.grad = grad
        torch.set_rng_state(cpu_rng)
        if cuda_rng is not None:
            torch.cuda.set_rng_state_all(cuda_rng)


def _run(model, inputs, backward: bool, calls: list):
    """Run ``model(*inputs)`` (and ``out.sum().backward()``) under the recorder."""
    import torch
    from torch.utils.module_tracker import ModuleTracker
    state = {"phase": "forward"}
    with ModuleTracker() as tracker, _recorder_class()(calls, tracker, state):
        with torch.set_grad_enabled(backward):
            out = model(*inputs)
        if backward:
            state["phase"] = "loss"
            loss = _loss(out)
            state["phase"] = "backward"
            loss.backward()
    return out


def _loss(out):
    parts = [t.float().sum() for t in _tensors(out)
             if t.requires_grad and (t.is_floating_point() or t.is_complex())]
    if not parts:
        raise ValueError("backward=True needs a model output that requires grad "
                         "(no output tensor does: are all parameters frozen?)")
    loss = parts[0]
    for part in parts[1:]:
        loss = loss + part
    return loss


# --- timing ------------------------------------------------------------------------

def _signature(call: _Call):
    import torch
    from torch.utils._pytree import tree_flatten

    def sig(x):
        if isinstance(x, torch.Tensor):
            return ("T", tuple(x.shape), tuple(x.stride()), str(x.dtype), str(x.device))
        return repr(x)

    return (str(call.func), tuple(sig(x) for x in tree_flatten((call.args, call.kwargs))[0]))


def _replayable(call: _Call):
    import torch
    from torch.utils._pytree import tree_map

    def plain(x):
        return x.detach() if isinstance(x, torch.Tensor) else x

    args, kwargs = tree_map(plain, call.args), tree_map(plain, call.kwargs)
    func = call.func

    def run():
        with torch.no_grad():
            func(*args, **kwargs)
    return run


def _bench_kwargs(repeats, budget, cache, backend):
    kw = dict(cache=cache, budget=budget, warmup=min(0.02, budget), backend=backend)
    if repeats is not None:
        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise ValueError(f"repeats must be a positive integer or None, got {repeats!r}")
        kw.update(min_samples=repeats, max_samples=repeats)
    return kw


def dispatch_overhead(dev=None, budget: float = 0.05) -> float:
    """Seconds the host needs to issue one minimal PyTorch op: ``torch.add(a, b)`` on
    one-element tensors, a new output each call, as a model's ops allocate theirs.

    Timed back to back on the host clock (``cache='hot'``, many calls per sample),
    so on a GPU it is the Python + dispatch + launch cost per call, which CUDA
    events around a single kernel would not show. This is the fixed cost per call
    of chapter 3 (the flat part of time against size) for the call a model makes;
    chapter 3's own sweep times ``torch.add(a, b, out=out)`` on one thread, a
    slightly different call (see :func:`chapter3_call`). :func:`regime_of` calls an
    op overhead-bound when this cost is at least the op's roofline time.
    """
    import torch
    from .device import device as live
    from .timing import bench
    dev = dev or live()
    where = "cuda" if dev.backend == "cuda" else "cpu"
    a = torch.ones(1, device=where)
    b = torch.ones(1, device=where)
    return bench(torch.add, a, b, cache="hot", backend="cpu", budget=budget).median


def chapter3_call(dev=None, budget: float = 0.05) -> float:
    """Seconds per call of chapter 3's call, ``torch.add(a, b, out=out)`` on one-element
    tensors with one PyTorch CPU thread, timed back to back the way chapter 3 times it
    (:func:`brrr.experiments.overhead.wall_time_per_call`): the flat part of chapter 3's
    curve, measured on this page beside :func:`dispatch_overhead` so the two can be compared."""
    import torch
    from .device import device as live
    from .experiments.overhead import limit_torch_threads, wall_time_per_call
    dev = dev or live()
    where = "cuda" if dev.backend == "cuda" else "cpu"
    a, b, out = (torch.ones(1, device=where) for _ in range(3))
    with limit_torch_threads(1 if where == "cpu" else None):
        return wall_time_per_call(lambda: torch.add(a, b, out=out), where, "torch", budget)["seconds"]


def replay_floor(bench_kw: dict = None, dev=None) -> float:
    """Seconds one replayed row takes when it does almost nothing: a one-element
    ``aten.add`` replayed exactly as :func:`profile` replays every row (same call
    path, same timer, same cache setting). No row can measure much less. On a CPU
    with ``cache='flush'`` it can be far above :func:`dispatch_overhead`: the flush
    evicts the framework's own code and data too, and they must come back from DRAM."""
    import torch
    from .device import device as live
    from .timing import bench
    dev = dev or live()
    where = "cuda" if dev.backend == "cuda" else "cpu"
    a, b = torch.ones(1, device=where), torch.ones(1, device=where)
    call = _Call(torch.ops.aten.add.Tensor, (a, b), {}, "forward", "")
    kw = dict(bench_kw or _bench_kwargs(None, 0.05, "flush", None))
    return bench(_replayable(call), **kw).median


def regime_of(roof: Roofline, flops, nbytes, overhead: Optional[float] = None) -> str:
    """Which of the three lower bounds on an op's time is the largest (He, 2022).

    ``t_math = flops / peak FLOP/s`` (compute-bound), ``t_mem = nbytes / bandwidth``
    (memory-bound), and the fixed cost of one call, ``overhead`` seconds (chapter 3:
    the flat part of time against size). An op is overhead-bound when that fixed
    cost is at least its roofline time ``max(t_math, t_mem)``, i.e. when it lies left
    of chapter 3's crossover: the work, done at the roof, costs no more than issuing
    the call. The measured time does not enter: it says how far the op is from its
    roof (the efficiency), not which bound applies. An op with neither FLOPs nor
    bytes is overhead-bound. ``overhead=None`` leaves out the third bound.
    """
    if not flops and not nbytes:
        return OVERHEAD
    return roof.with_ceilings(overhead=overhead).regime(flops, nbytes)


def _roofline_for(dev, dtype: str, category: str, cache: dict) -> Roofline:
    """The device roofline for this op: tensor-core roof for fp16/bf16 matmuls on a GPU."""
    import torch
    tensor_cores = False
    if dev.backend == "cuda" and category == "matmul":
        if dtype in ("float16", "bfloat16"):
            tensor_cores = True
        elif dtype == "float32" and torch.backends.cuda.matmul.allow_tf32:
            tensor_cores = True
    key = (dtype, tensor_cores)
    if key not in cache:
        roof_dtype = dtype if dtype in ("float64", "float32", "float16", "bfloat16") else "float32"
        cache[key] = Roofline.from_device(dev, roof_dtype, tensor_cores)
    return cache[key]


def _dtype(call: _Call) -> str:
    tensors = _tensors((call.args, call.kwargs)) or _tensors(call.out)
    for t in tensors:
        if t.is_floating_point():
            return str(t.dtype).replace("torch.", "")
    return str(tensors[0].dtype).replace("torch.", "") if tensors else "none"


# --- the table -----------------------------------------------------------------------

def _check(model, inputs):
    import torch
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    for name, t in [*model.named_parameters(), *model.named_buffers()]:
        if t.is_meta:
            raise ValueError(f"model must hold data on a real device (cpu, cuda), but it is on the "
                             f"'meta' device (its tensor {name!r}), which holds shapes only: "
                             "initialise or load the weights on a real device first")
    if not inputs:
        raise ValueError("profile(model, *inputs) needs at least one input tensor")
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"inputs must be torch.Tensor objects; input {i} is {type(x).__name__}")
        if x.is_meta:
            raise ValueError(f"inputs must hold data on a real device (cpu, cuda), but input {i} "
                             "is on the 'meta' device, which holds shapes only")


def _shapes(inputs) -> str:
    return ", ".join(str(tuple(x.shape)) for x in inputs)


def profile(model, *inputs, backward: bool = False, repeats: Optional[int] = None,
            cache: str = "flush", budget: float = 0.1, views: bool = False, measure: bool = True,
            merge: bool = False):
    """Profile ``model(*inputs)`` operator by operator; returns a pandas DataFrame.

    Parameters
    ----------
    model : a ``torch.nn.Module``; it runs as it is (train or eval mode, its device),
        and is left as it was found, even if it fails: parameter and buffer values
        (BatchNorm statistics), gradients, ``requires_grad`` flags, train/eval modes
        and the random number generators are put back (:func:`_left_as_found`).
    inputs : the tensors to call it with (not on the 'meta' device).
    backward : also run ``out.sum().backward()`` and add the backward ops
        (``phase`` column: 'forward', 'loss' or 'backward').
    repeats : samples per op (None: as many as ``budget`` allows).
    cache : 'flush' (default) empties the last-level cache / L2 before every sample,
        so each op reads its inputs from DRAM, which is what the roofline's memory
        roof assumes; 'hot' leaves them cached (closer to a small model running
        op after op, but then a memory-bound op can beat the DRAM roof).
    budget : seconds of measuring per distinct op (a fifth in quick mode).
    views : keep the ops that move no data (views such as ``transpose``, and bare
        allocations such as ``empty_like``; pure dispatch overhead) as rows.
    measure : False skips all timing (FLOPs and bytes only, fast).
    merge : one row per distinct (op, shapes) with a ``calls`` count, summed.

    Columns: op, phase, module, category, input_shapes, dtype, flops, bytes (ideal
    unfused), intensity (FLOP/byte), seconds (median measured, one call),
    roofline_seconds (max(t_math, t_mem) on this device), efficiency
    (roofline_seconds / seconds), regime ('compute-bound', 'memory-bound',
    'overhead-bound': the largest of t_math, t_mem and the fixed cost of a call, see
    :func:`regime_of`), calls. ``table.attrs`` holds the device, the per-call
    overhead used for the regime (``overhead_seconds``, :func:`dispatch_overhead`),
    ``model_seconds`` (one whole run of the model, measured like the ops),
    ``replay_floor_seconds`` (a one-element add replayed like the rows,
    :func:`replay_floor`) and ``chapter3_call_seconds`` (:func:`chapter3_call`).
    """
    import pandas as pd
    from .device import device as live
    from .timing import bench
    _check(model, inputs)
    if not isinstance(backward, bool):
        raise TypeError(f"backward must be True or False, got {backward!r}")
    if cache not in ("flush", "hot"):
        raise ValueError(f"cache must be 'flush' or 'hot', got {cache!r}")
    for flag, value in (("views", views), ("measure", measure), ("merge", merge)):
        if not isinstance(value, bool):
            raise TypeError(f"{flag} must be True or False, got {value!r}")
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) \
            or not (budget > 0 and math.isfinite(budget)):
        raise ValueError(f"budget must be a positive number of seconds, got {budget!r}")
    bench_kw = _bench_kwargs(repeats, budget, cache, None)

    calls: list = []
    try:
        with _left_as_found(model):
            try:
                _run(model, inputs, backward, calls)
            except ValueError as exc:
                if "backward=True" in str(exc):
                    raise
                raise ValueError(f"the model ({type(model).__name__}) failed on inputs of shape "
                                 f"{_shapes(inputs)}: {type(exc).__name__}: {exc}") from exc
            except Exception as exc:  # noqa: BLE001 - re-raised with the shapes that caused it
                raise ValueError(f"the model ({type(model).__name__}) failed on inputs of shape "
                                 f"{_shapes(inputs)}: {type(exc).__name__}: {exc}") from exc

            dev = live()
            roofs: dict = {}
            overhead = dispatch_overhead(dev) if measure else None
            timed: dict = {}
            rows = []
            for call in calls:
                if (call.is_view or _name(call.func) in _ALLOCATE_ONLY) and not views:
                    continue
                if call.is_view:  # a new header on the same memory: no FLOPs, no bytes
                    flops = nbytes = 0
                else:
                    flops = count_flops(call.func, call.args, call.kwargs, call.out)
                    nbytes = count_bytes(call.func, call.args, call.kwargs, call.out)
                category = categorise(call.func)
                dtype = _dtype(call)
                roof = _roofline_for(dev, dtype, category, roofs)
                seconds = math.nan
                if measure:
                    key = _signature(call)
                    if key not in timed:
                        try:
                            timed[key] = bench(_replayable(call), **bench_kw).median
                        except Exception:  # noqa: BLE001 - an op that cannot be replayed keeps NaN
                            timed[key] = math.nan
                    seconds = timed[key]
                t_roof = float(roof.time(flops, nbytes))
                regime = regime_of(roof, flops, nbytes, overhead)
                efficiency = t_roof / seconds if seconds > 0 else math.nan
                rows.append({
                    "op": str(call.func).replace("aten.", "").replace(".default", ""),
                    "phase": call.phase, "module": call.module, "category": category,
                    "input_shapes": tuple(tuple(t.shape)
                                          for t in _tensors((call.args, call.kwargs))),
                    "dtype": dtype, "flops": flops, "bytes": nbytes,
                    "intensity": flops / nbytes if nbytes else math.nan,
                    "seconds": seconds, "roofline_seconds": t_roof, "efficiency": efficiency,
                    "regime": regime, "calls": 1})
            table = pd.DataFrame(rows, columns=COLUMNS)
            if merge and len(table):
                table = _merge(table)
            table.attrs.update({"device": dev.name, "backend": dev.backend,
                                "overhead_seconds": overhead, "cache": cache, "backward": backward,
                                "model_seconds": math.nan, "replay_floor_seconds": math.nan,
                                "chapter3_call_seconds": math.nan, "summary": dev.summary()})
            if measure:
                table.attrs["model_seconds"] = _time_model(model, inputs, backward, bench_kw)
                table.attrs["replay_floor_seconds"] = replay_floor(bench_kw, dev)
                table.attrs["chapter3_call_seconds"] = chapter3_call(dev)
    finally:
        calls.clear()   # the recorded tensors: freed now, even while a traceback holds this frame
    return table


def _time_model(model, inputs, backward, bench_kw) -> float:
    """Median seconds of one whole forward (+ backward) pass, measured like the ops.
    It changes the model's state: :func:`profile` calls it inside :func:`_left_as_found`."""
    import torch
    from .timing import bench

    def step():
        with torch.set_grad_enabled(backward):
            out = model(*inputs)
            if backward:
                _loss(out).backward()
                for p in model.parameters():
                    p.grad = None
    return bench(step, **{**bench_kw, "budget": max(bench_kw["budget"], 0.2)}).median


def _merge(table):
    keys = ["op", "phase", "module", "category", "input_shapes", "dtype"]
    merged = table.groupby(keys, sort=False, dropna=False).agg(
        flops=("flops", "sum"), bytes=("bytes", "sum"), seconds=("seconds", "sum"),
        roofline_seconds=("roofline_seconds", "sum"), calls=("calls", "sum"),
        regime=("regime", "first")).reset_index()
    merged["intensity"] = merged.flops / merged.bytes.where(merged.bytes > 0)
    merged["efficiency"] = merged.roofline_seconds / merged.seconds
    return merged[COLUMNS]


def category_totals(table, by_phase: bool = False):
    """FLOPs, bytes and time per category, with each one's share of the total.

    Returns a DataFrame indexed by category (matmul, normalisation, elementwise,
    other; or by phase and category) with columns flops, bytes, seconds, ops,
    flop_share, byte_share, time_share (fractions of 1) and flops_per_second
    (achieved FLOP/s of the category as a whole).
    """
    missing = {"category", "flops", "bytes", "seconds"} - set(getattr(table, "columns", ()))
    if missing:
        raise ValueError(f"table must be a brrr.profile() DataFrame; it lacks {sorted(missing)}")
    keys = ["phase", "category"] if by_phase else ["category"]
    totals = table.groupby(keys).agg(flops=("flops", "sum"), bytes=("bytes", "sum"),
                                     seconds=("seconds", "sum"), ops=("calls", "sum"))
    if not by_phase:
        totals = totals.reindex([c for c in CATEGORIES if c in totals.index])
    grand = totals.sum()
    totals["flop_share"] = totals.flops / grand.flops if grand.flops else math.nan
    totals["byte_share"] = totals.bytes / grand.bytes if grand.bytes else math.nan
    totals["time_share"] = totals.seconds / grand.seconds if grand.seconds > 0 else math.nan
    totals["flops_per_second"] = totals.flops / totals.seconds.where(totals.seconds > 0)
    return totals


def regime_totals(table):
    """Time and op count per regime (which remedy would pay most)."""
    out = table.groupby("regime").agg(seconds=("seconds", "sum"), ops=("calls", "sum"))
    out["time_share"] = out.seconds / out.seconds.sum()
    return out.sort_values("seconds", ascending=False)


def op_totals(table):
    """One row per operator name: calls, FLOPs, bytes, seconds, share of time, usual regime."""
    out = table.groupby("op", sort=False).agg(
        category=("category", "first"), calls=("calls", "sum"), flops=("flops", "sum"),
        bytes=("bytes", "sum"), seconds=("seconds", "sum"),
        regime=("regime", lambda r: r.value_counts().index[0]))
    out["time_share"] = out.seconds / out.seconds.sum()
    return out.sort_values("seconds", ascending=False)


def _si(value, unit: str) -> str:
    if value is None or not np.isfinite(value):
        return "–"
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def readable(table, rows: Optional[int] = None):
    """A copy of a profile table for reading: units on FLOPs, bytes and times, rounded ratios."""
    from .timing import format_seconds
    out = table.head(rows) if rows else table.copy()
    if "calls" in out and (out["calls"] == 1).all():
        out = out.drop(columns=["calls"])
    units = {"flops": lambda v: _si(v, "FLOP"), "bytes": lambda v: _si(v, "B"),
             "seconds": lambda v: format_seconds(v) if np.isfinite(v) and v > 0 else "–",
             "roofline_seconds": lambda v: format_seconds(v) if np.isfinite(v) and v > 0 else "–"}
    for col, fmt in units.items():
        if col in out:
            out[col] = [fmt(v) for v in out[col]]
    for col in ("intensity", "efficiency", "time_share"):
        if col in out:
            out[col] = out[col].round(3)
    return out.rename(columns={"seconds": "time", "roofline_seconds": "roofline time",
                               "intensity": "FLOP/byte"})


# Columns a reader needs from a profile table (or its totals), with units in the headers, and
# how brrr.book.table formats each ('flop' columns are written out here as '134 MFLOP').
PAGE_COLUMNS = {
    "op": ("op", None), "module": ("module", None), "category": ("category", None),
    "calls": ("calls", "int"), "flops": ("FLOPs", "flop"), "bytes": ("bytes", "bytes"),
    "intensity": ("FLOP/byte", "number"), "seconds": ("replayed time", "time"),
    "roofline_seconds": ("roofline time", "time"), "efficiency": ("efficiency", "percent"),
    "time_share": ("share of time", "percent"), "regime": ("bound by", "regime"),
}
DEFAULT_PAGE_COLUMNS = ["op", "module", "flops", "bytes", "seconds", "roofline_seconds", "efficiency", "regime"]


def page_table(table, columns: Optional[list] = None):
    """A profile table (or :func:`op_totals`) styled for the page by :func:`brrr.book.table`:
    the ``columns`` a reader needs (default :data:`DEFAULT_PAGE_COLUMNS`, those present),
    units in the headers, FLOPs with a prefix, times in µs/ms, efficiency in percent,
    '–' where a value is missing."""
    from .book import table as styled
    frame = table.reset_index() if table.index.name in PAGE_COLUMNS else table
    columns = [c for c in (columns or DEFAULT_PAGE_COLUMNS) if c in frame.columns]
    unknown = [c for c in columns if c not in PAGE_COLUMNS]
    if unknown:
        raise ValueError(f"no page format for columns {unknown}; known: {sorted(PAGE_COLUMNS)}")
    out = frame[columns].copy()
    formats, headers = {}, []
    for col in columns:
        header, kind = PAGE_COLUMNS[col]
        if col == "module":   # 'EncoderLayer.attention.query' -> 'attention.query': the model's name once
            roots = {str(m).split(".")[0] for m in out[col]}
            if len(roots) == 1:
                root = roots.pop()
                out[col] = [str(m)[len(root) + 1:] or "(top level)" for m in out[col]]
                header = f"module of {root}"
        if kind == "flop":   # a no-break space keeps '32.8 kFLOP' on one line
            out[col] = [_si(v, "FLOP").replace(" ", "\u00a0") if v else "0" for v in out[col]]
        elif kind == "bytes":
            from .plot import format_bytes
            out[col] = [format_bytes(v).replace(" ", "\u00a0") if np.isfinite(v) else "–" for v in out[col]]
        elif kind == "regime":    # 'memory-bound' under the header 'bound by': 'memory'
            out[col] = [str(v).replace("-bound", "") for v in out[col]]
        elif kind == "percent":   # two significant digits below 10%: '0.42%', '73%'
            out[col] = ["–" if not np.isfinite(v) else f"{100 * v:.0f}%" if 100 * v >= 10 else f"{100 * v:.2g}%"
                        for v in out[col].astype(float)]
        elif kind:
            formats[header] = kind
        headers.append(header)
    out.columns = headers
    return styled(out, formats)


REMEDIES = {
    COMPUTE: "use faster math: lower precision / tensor cores (bf16, fp16, TF32)",
    MEMORY: "move fewer bytes: fuse it with its neighbours (torch.compile), lower precision",
    OVERHEAD: "give each call more work: bigger batch, fewer calls (CUDA graphs, torch.compile)",
}


def roofline_points(table, by: str = "op"):
    """Points for :func:`brrr.plot.roofline`: FLOPs, bytes and seconds summed per ``by`` group.

    ``by`` is a column of the table ('op', 'category', 'module', ...). Groups
    without FLOPs (copies) or without a measured time are left out.
    """
    import pandas as pd
    if by not in getattr(table, "columns", ()):
        raise ValueError(f"by must be a column of the profile table, got {by!r}")
    rows = table[table.seconds > 0]
    grouped = rows.groupby(by, sort=False).agg(flops=("flops", "sum"), nbytes=("bytes", "sum"),
                                               seconds=("seconds", "sum"),
                                               category=("category", "first")).reset_index()
    grouped = grouped[(grouped.flops > 0) & (grouped.nbytes > 0)]
    # matplotlib hides legend labels that start with "_", so `_softmax` is shown as `softmax`
    grouped["label"] = [(f"{k} ({c})" if by != "category" else str(k)).lstrip("_")
                        for k, c in zip(grouped[by], grouped.category)]
    return pd.DataFrame(grouped[["label", "flops", "nbytes", "seconds"]]).reset_index(drop=True)


def reference_points(runs, by: str = "op") -> list:
    """Reference profiles (Results from :func:`brrr.reference.beside`) as Results of
    roofline points (:func:`roofline_points`), keeping each run's meta (device, date)."""
    from .reference import as_frame
    from .results import Result
    out = []
    for run in runs or ():
        points = roofline_points(as_frame(run), by)
        out.append(Result(name=run.name, records=points.to_dict("records"), meta=dict(run.meta)))
    return out


def plot_roofline(table, roof: Optional[Roofline] = None, by: str = "op", ax=None,
                  title: Optional[str] = None, reference=None):
    """The profile's ops on this device's roofline (log-log), one point per ``by`` group.

    Draws with :func:`brrr.plot.roofline`; ``roof`` defaults to the live device's
    float32 roofline. ``reference``: reference runs of the same profile (from
    :func:`brrr.reference.beside`), drawn grey with their device's roof. ``title``
    is followed by the device. Returns the matplotlib Figure.
    """
    from .device import device as live
    from .plot import roofline
    roof = roof or Roofline.from_device()
    dev = live()
    where = (f"{table.attrs.get('device') or dev.name}"
             f"{' (measured on CPU)' if (table.attrs.get('backend') or dev.backend) == 'cpu' else ''}")
    title = f"{title or 'Operators of the profiled model'}: {where}"
    return roofline(roof, points=roofline_points(table, by), ax=ax, title=title, device=dev,
                    reference=reference_points(reference, by))


# Ivanov et al. (2021), BERT-large training on a V100, as quoted by He (2022): the share of
# FLOPs and of runtime per operator class, and how far below the matmuls' FLOP/s the other
# classes run. The runtime shares are from the paper's table that He reproduces; the seed
# summaries of He's article carry the 99.8% and the 250x / 700x figures.
PUBLISHED = {
    "flop_share": {"matmul": 0.998, "normalisation": 0.0017, "elementwise": 0.0003},
    "time_share": {"matmul": 0.610, "normalisation": 0.255, "elementwise": 0.135},
    "flops_per_second_below_matmul": {"normalisation": 250, "elementwise": 700},
}


def ivanov_comparison(totals):
    """Published (Ivanov et al., 2021) beside measured: FLOP share, time share, FLOP/s gap.

    ``totals`` is :func:`category_totals` of a profile. The published shares leave out
    everything that is neither a contraction, a normalisation nor elementwise, so the
    measured shares here are renormalised over those three categories too.
    """
    import pandas as pd
    three = totals.reindex(["matmul", "normalisation", "elementwise"]).fillna(0)
    flop_share = three.flops / three.flops.sum()
    time_share = three.seconds / three.seconds.sum()
    rows = []
    for cat in three.index:
        rows.append({"category": cat, "quantity": "share of FLOPs",
                     "published": PUBLISHED["flop_share"][cat], "measured": flop_share[cat]})
        rows.append({"category": cat, "quantity": "share of time",
                     "published": PUBLISHED["time_share"][cat], "measured": time_share[cat]})
    rate = three.flops / three.seconds.where(three.seconds > 0)
    for cat, gap in PUBLISHED["flops_per_second_below_matmul"].items():
        rows.append({"category": cat, "quantity": "matmul FLOP/s ÷ this FLOP/s",
                     "published": float(gap), "measured": rate["matmul"] / rate[cat]})
    return pd.DataFrame(rows)


def _short_device(run) -> str:
    """A reference run's device name, short enough for a column header."""
    name = (getattr(run, "meta", {}).get("device") or {}).get("name", "reference")
    return name.replace("NVIDIA ", "")


def ivanov_table(table, references=()):
    """:func:`ivanov_comparison` of a profile, for the page: the published figure (Ivanov et
    al., 2021) beside this run and each reference profile (Results from
    :func:`brrr.reference.beside`), shares in percent and FLOP/s gaps as 'N×'."""
    import pandas as pd
    from .book import table as styled
    from .reference import as_frame

    def compared(t):
        return ivanov_comparison(category_totals(t))

    def fmt(quantity, v):
        if v is None or not np.isfinite(v):
            return "–"
        return f"{100 * v:.3g}%" if quantity.startswith("share") else f"{v:,.3g}×"

    live = compared(table)
    out = pd.DataFrame({"operator class": live.category, "quantity": live.quantity.replace(
        {"matmul FLOP/s ÷ this FLOP/s": "matmul FLOP/s ÷ its FLOP/s"})})
    out["published (V100)"] = [fmt(q, v) for q, v in zip(live.quantity, live.published)]
    out["this run"] = [fmt(q, v) for q, v in zip(live.quantity, live.measured)]
    for run in references or ():
        ref = compared(as_frame(run))
        out[f"{_short_device(run)} (reference)"] = [fmt(q, v) for q, v in zip(ref.quantity, ref.measured)]
    return styled(out)


def phase_totals(table):
    """FLOPs, summed replayed time and the matmuls' share of it per phase ('forward',
    'backward'; the one-op 'loss' phase is left out) of a ``backward=True`` profile."""
    rows = table[table.phase.isin(["forward", "backward"])]
    out = rows.groupby("phase", sort=False).agg(flops=("flops", "sum"), seconds=("seconds", "sum"),
                                                ops=("calls", "sum"))
    mm = rows[rows.category == "matmul"].groupby("phase").seconds.sum()
    out["matmul_time_share"] = mm.reindex(out.index).fillna(0) / out.seconds
    mm_flops = rows[rows.category == "matmul"].groupby("phase").flops.sum()
    out["matmul_flops"] = mm_flops.reindex(out.index).fillna(0)
    return out.reindex([p for p in ("forward", "backward") if p in out.index])


def phase_table(table):
    """:func:`phase_totals` styled for the page."""
    from .book import table as styled
    t = phase_totals(table).reset_index()
    out = t[["phase", "ops"]].copy()
    out["FLOPs"] = [_si(v, "FLOP") for v in t.flops]
    out["time (replayed, summed)"] = t.seconds
    out["matmul share of the time"] = t.matmul_time_share
    return styled(out, {"ops": "int", "time (replayed, summed)": "time", "matmul share of the time": "percent"})
