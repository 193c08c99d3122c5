"""The GPU runs behind the CPU: asynchronous calls, and CUDA graphs that issue many kernels at once.

* :func:`async_demo`: on a GPU a call returns to Python long before its work is done;
  on the CPU it returns when the work is done.
* :func:`reduce_overhead_demo`: a chain of tiny PyTorch ops run eagerly, replayed as a
  CUDA graph, and under ``torch.compile(mode="reduce-overhead")`` (GPU only).

Times are wall-clock seconds.
"""
from __future__ import annotations

import time
from typing import Optional

import numpy as np

from .. import config
from ..device import device as live_device, provenance
from ..results import Result
from .wallclock import available_libraries, operands, synchronizer, wall_time_per_call

ASYNC_N = {"cuda": 4096, "cpu": 512}   # async_demo's matrix size n per backend (halved in quick mode)


def async_demo(library: Optional[str] = None, n: Optional[int] = None, calls: int = 10) -> Result:
    """Show when a call returns versus when its work is done.

    ``calls`` matrix multiplications of ``n x n`` float32 matrices are issued in a
    loop with ``library`` (default: the live device's, :attr:`brrr.Device.library`).
    Records hold ``returned`` (seconds until the loop of calls returned to Python) and
    ``finished`` (seconds until the device said the work was done, after a synchronise).
    On a GPU ``returned`` is far smaller: the CPU ran ahead and queued the work. On the
    CPU both are the same, because the call only returns once the work is done.
    """
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
        raise ValueError(f"calls must be a positive integer, got {calls!r}")
    dev = live_device()
    if n is None:
        n = ASYNC_N[dev.backend] // (2 if config.quick_mode() else 1)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    library = library or dev.library
    usable, skipped = available_libraries((library,))
    if not usable:
        raise RuntimeError(f"library {library!r} cannot run here: {skipped[library]}")
    a, b, out, backend = operands(library, n * n, "float32")
    a, b, out = a.reshape(n, n), b.reshape(n, n), out.reshape(n, n)
    matmul = (lambda: np.matmul(a, b, out=out)) if library == "numpy" else (lambda: a @ b)
    sync = synchronizer(backend)
    matmul()
    sync()
    rows = []
    for trial in range(3):
        start = time.perf_counter()
        for _ in range(calls):
            matmul()
        returned = time.perf_counter() - start
        sync()
        finished = time.perf_counter() - start
        rows.append((returned, finished))
    returned, finished = sorted(rows, key=lambda r: r[1])[len(rows) // 2]
    flops = 2.0 * n ** 3 * calls
    result = Result("async_demo", meta=provenance(
        f"brrr.experiments.async_demo({library!r}, n={n}, calls={calls})", notes=[],
        quick=config.quick_mode()))
    result.records = [
        {"library": library, "backend": backend, "stage": stage, "seconds": seconds,
         "n": n, "calls": calls, "flops": flops}
        for stage, seconds in (("returned", returned), ("finished", finished))]
    return result


def reduce_overhead_demo(size: int = 1024, n_ops: int = 20, compile: bool = True,
                         budget: float = 0.2) -> Result:
    """A chain of ``n_ops`` tiny pointwise PyTorch ops: eager vs CUDA graph vs torch.compile.

    Records: variant ('eager', 'CUDA graph', 'torch.compile default', 'torch.compile reduce-overhead'),
    seconds (wall-clock per call of the whole chain; min_seconds, iqr_seconds,
    floor_seconds), size, n_ops. Needs PyTorch on a CUDA GPU
    (:attr:`brrr.Device.torch_device` is 'cuda'): without one the result has no
    records and a note saying why (CUDA graphs replay GPU work;
    ``mode="reduce-overhead"`` is built on them).
    """
    for name, value in (("size", size), ("n_ops", n_ops)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    result = Result("reduce_overhead_demo", meta=provenance(
        f"brrr.experiments.reduce_overhead_demo(size={size}, n_ops={n_ops}, compile={compile})", notes=[],
        size=size, n_ops=n_ops, compile=compile, quick=config.quick_mode()))
    if live_device().torch_device != "cuda":
        result.meta["notes"].append("skipped: CUDA graphs and mode='reduce-overhead' need a CUDA GPU "
                                    "(PyTorch found none), so there is nothing to compare on this machine")
        return result
    import torch

    def chain(x):
        for i in range(n_ops):
            x = x * 1.0001 if i % 2 == 0 else x + 0.0001
        return x

    x = torch.rand(size, device="cuda")
    variants = {"eager": lambda: chain(x)}

    static_in = x.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            chain(static_in)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = chain(static_in)  # noqa: F841 - kept alive by the graph
    variants["CUDA graph"] = graph.replay

    if compile:
        # the default mode fuses without a graph: beside reduce-overhead it separates what fusion saves
        # from what the graph saves
        for variant, mode in (("torch.compile default", "default"), ("torch.compile reduce-overhead",
                                                                      "reduce-overhead")):
            try:
                compiled = torch.compile(chain, mode=mode)
                for _ in range(3):
                    compiled(x)
                variants[variant] = lambda compiled=compiled: compiled(x)
            except Exception as error:  # noqa: BLE001 - a compiler missing is a note, not a failure
                result.meta["notes"].append(f"{variant} skipped: {type(error).__name__}: {error}")

    for variant, fn in variants.items():
        rec = wall_time_per_call(fn, "cuda", budget=budget)
        result.records.append({"variant": variant, "size": size, "n_ops": n_ops, "backend": "cuda", **rec})
    return result
