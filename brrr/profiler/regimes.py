"""Which bound an operator's time has, and the fixed cost per call it is compared with.

An op has three lower bounds on its time (He, 2022): ``t_math = flops / peak FLOP/s``,
``t_mem = bytes / bandwidth`` and the fixed cost of issuing one call (chapter 3).
:func:`regime_of` names the largest; :func:`dispatch_overhead` measures the third on
the live device, :func:`chapter3_call` measures chapter 3's own call beside it, and
:func:`replay_floor` the least time any replayed row can show.
"""
from __future__ import annotations

from typing import Optional

from .. import tf32
from ..roofline import Roofline, OVERHEAD
from .capture import _Call, _bench_kwargs, _replayable


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
    from ..device import device as live
    from ..timing import bench
    where = (dev or live()).torch_device
    a = torch.ones(1, device=where)
    b = torch.ones(1, device=where)
    return bench(torch.add, a, b, cache="hot", backend="cpu", budget=budget).median


def chapter3_call(dev=None, budget: float = 0.05) -> float:
    """Seconds per call of chapter 3's call, ``torch.add(a, b, out=out)`` on one-element
    tensors with one PyTorch CPU thread, timed back to back the way chapter 3 times it
    (:func:`brrr.experiments.wallclock.wall_time_per_call`): the flat part of chapter 3's
    curve, measured on this page beside :func:`dispatch_overhead` so the two can be compared."""
    import torch
    from ..device import device as live
    from ..experiments.wallclock import limit_torch_threads, wall_time_per_call
    where = (dev or live()).torch_device
    a, b, out = (torch.ones(1, device=where) for _ in range(3))
    with limit_torch_threads(1 if where == "cpu" else None):
        return wall_time_per_call(lambda: torch.add(a, b, out=out), where, budget=budget)["seconds"]


def replay_floor(bench_kw: dict = None, dev=None) -> float:
    """Seconds one replayed row takes when it does almost nothing: a one-element
    ``aten.add`` replayed exactly as :func:`brrr.profile` replays every row (same call
    path, same timer, same cache setting). No row can measure much less. On a CPU
    with ``cache='flush'`` it can be far above :func:`dispatch_overhead`: the flush
    evicts the framework's own code and data too, and they must come back from DRAM."""
    import torch
    from ..device import device as live
    from ..timing import bench
    where = (dev or live()).torch_device
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


def _roofline_for(dev, dtype: str, category: str, cache: dict, op: str = "") -> Roofline:
    """The device roofline for this op: tensor-core roof for fp16/bf16 matmuls on a GPU, and for
    float32 ones where PyTorch lets them use TF32 (cuBLAS for matmuls, off by default; cuDNN for
    convolutions, ``op`` names one, on by default)."""
    import torch
    tensor_cores = False
    if dev.on_gpu and category == "matmul":
        if dtype in ("float16", "bfloat16"):
            tensor_cores = True
        elif dtype == "float32":
            tensor_cores = tf32.enabled(torch, "conv" if "conv" in op else "matmul")
    key = (dtype, tensor_cores)
    if key not in cache:
        roof_dtype = dtype if dtype in ("float64", "float32", "float16", "bfloat16") else "float32"
        cache[key] = Roofline.from_device(dev, roof_dtype, tensor_cores)
    return cache[key]
