"""Recording a model's ATen operators, and replaying each one on its own.

:func:`_run` runs ``model(*inputs)`` under a ``TorchDispatchMode`` that records every
ATen operator it reaches (``aten.addmm``, ``aten._softmax``, ...) with its arguments,
its output and the innermost module it ran in; :func:`_left_as_found` puts the model
back as it was afterwards. :func:`_replayable` turns one recorded call into a
function that :func:`brrr.bench` can time on its own.

Why replay rather than ``torch.profiler``? The profiler's rows nest (``aten::linear``
contains ``aten::addmm``), on a GPU its kernel times must be matched to operators
through correlation ids, and one run gives one sample per op. Replaying each
recorded call gives a distribution per op with the same timer as the rest of the
book, and needs nothing device-specific. The price: an op runs out of context
(see ``cache`` in :func:`brrr.profile`), and time the model spends between ops
(Python, autograd bookkeeping) is not in any row.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .counting import _tensors


@dataclass
class _Call:
    """One recorded operator call: what ran, on what, and in which phase (``out``: its outputs'
    shapes, strides and dtypes, as tensors on the 'meta' device)."""
    func: Any
    args: tuple
    kwargs: dict
    phase: str
    module: str
    out: Any = None
    is_view: bool = False


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

    def shell(x):
        """An output's shape, strides and dtype, without its data: holding the output itself would
        keep a new gradient alive, and AccumulateGrad would then copy it instead of taking it."""
        if not isinstance(x, torch.Tensor):
            return x
        try:
            return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta")
        except (RuntimeError, NotImplementedError, TypeError):   # a layout meta tensors lack: keep it
            return x

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
                                    tree_map(shell, out), is_view))
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
    """The sum of every output that requires grad: what ``backward=True`` differentiates."""
    parts = [t.float().sum() for t in _tensors(out)
             if t.requires_grad and (t.is_floating_point() or t.is_complex())]
    if not parts:
        raise ValueError("backward=True needs a model output that requires grad "
                         "(no output tensor does: are all parameters frozen?)")
    loss = parts[0]
    for part in parts[1:]:
        loss = loss + part
    return loss


# --- replaying -------------------------------------------------------------------

def _signature(call: _Call):
    """What makes two calls the same to time: the op and its arguments' shapes, strides,
    dtypes and devices (other arguments by value)."""
    import torch
    from torch.utils._pytree import tree_flatten

    def sig(x):
        if isinstance(x, torch.Tensor):
            return ("T", tuple(x.shape), tuple(x.stride()), str(x.dtype), str(x.device))
        return repr(x)

    return (str(call.func), tuple(sig(x) for x in tree_flatten((call.args, call.kwargs))[0]))


def _replayable(call: _Call):
    """A function of no arguments that runs the recorded call again, without autograd."""
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
    """The :func:`brrr.bench` settings every replayed row is timed with."""
    kw = dict(cache=cache, budget=budget, warmup=min(0.02, budget), backend=backend)
    if repeats is not None:
        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise ValueError(f"repeats must be a positive integer or None, got {repeats!r}")
        kw.update(min_samples=repeats, max_samples=repeats)
    return kw
