"""Counting what autograd saves for the backward pass, and the peak memory of a training step.

Saved bytes are counted exactly with ``torch.autograd.graph.saved_tensors_hooks``:
the pack hook sees every tensor autograd stores (including what a compiled
graph's backward keeps, which it stores through ``ctx.save_for_backward``) and
we add up the distinct storages, each once. Peak memory comes from
``torch.cuda.max_memory_allocated`` on a GPU; the CPU has no such counter.
Sizes are bytes.
"""
from __future__ import annotations

from ..device import device as live_device


def saved_tensors(fn, *inputs, parameters=None) -> list:
    """Every distinct storage that autograd saves while running ``fn(*inputs)``.

    ``fn`` is any callable (an ``nn.Module`` too); ``parameters`` (default: the
    module's parameters, if ``fn`` is one) lets saved weights be told apart from
    activations. Several saved tensors that share one storage (a weight and its
    transpose, a ReLU's output saved by it and by the next layer) count once, at
    the size of that storage. Returns one dict per storage: ``shape``, ``dtype``,
    ``nbytes`` (bytes), ``kind`` ('activation' or 'parameter'), ``count`` (how
    many saved tensors use it), in the order they were first saved.
    """
    import torch
    if not callable(fn):
        raise TypeError(f"fn must be callable (a function or an nn.Module), got {type(fn).__name__}")
    if parameters is None and isinstance(fn, torch.nn.Module):
        parameters = list(fn.parameters())
    param_storages = {_storage_key(p) for p in (parameters or ())}
    seen: dict = {}

    def pack(tensor):
        key = _storage_key(tensor)
        if key in seen:
            seen[key]["count"] += 1
        else:
            seen[key] = {"shape": tuple(tensor.shape), "dtype": str(tensor.dtype).replace("torch.", ""),
                         "nbytes": int(tensor.untyped_storage().nbytes()),
                         "kind": "parameter" if key in param_storages else "activation", "count": 1}
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        fn(*inputs)
    return list(seen.values())


def _storage_key(tensor):
    storage = tensor.untyped_storage()
    return (str(tensor.device), storage.data_ptr(), storage.nbytes())


def saved_bytes(fn, *inputs, include_parameters: bool = False, parameters=None) -> int:
    """Bytes autograd keeps for the backward pass of ``fn(*inputs)`` (each storage once).

    By default only activations count (weights are in memory anyway); with
    ``include_parameters=True`` saved weights count too. See :func:`saved_tensors`.
    """
    rows = saved_tensors(fn, *inputs, parameters=parameters)
    return sum(r["nbytes"] for r in rows if include_parameters or r["kind"] == "activation")


def saved_table(rows):
    """The rows of :func:`saved_tensors` as a DataFrame for a page: 'shape' (as 8 x 16),
    'dtype', 'bytes', 'kind' and 'times saved' (how many saved tensors share the storage)."""
    import pandas as pd
    return pd.DataFrame([{"shape": " x ".join(str(d) for d in r["shape"]) or "scalar", "dtype": r["dtype"],
                          "bytes": r["nbytes"], "kind": r["kind"], "times saved": r["count"]}
                         for r in rows], columns=["shape", "dtype", "bytes", "kind", "times saved"])


def training_step(fn, x, parameters=()):
    """A zero-argument callable: forward ``fn(x)``, backward from ``sum(output)``, drop the gradients.

    Gradients are set to None first, so every call does the same work.
    """
    params = list(parameters)

    def step():
        for p in params:
            p.grad = None
        fn(x).sum().backward()
    return step


def peak_memory(step) -> int | None:
    """Peak GPU bytes allocated while ``step()`` runs, above what was allocated before; None where
    PyTorch's tensors are not on a GPU (:attr:`brrr.Device.torch_device` is 'cpu')."""
    dev = live_device()
    if dev.torch_device != "cuda":
        return None
    import torch
    dev.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    step()
    dev.synchronize()
    return int(torch.cuda.max_memory_allocated() - base)
