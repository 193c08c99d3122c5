"""Wall-clock seconds per call of a tiny call, timed back to back as a user's loop runs it.

Overhead is the CPU's time to issue a call, so the clock here is the host's
``perf_counter``, not a GPU event: :func:`wall_time_per_call`. Around it, what the
overhead experiments (Chapter 3) and the profiler's dispatch overhead (Chapter 7)
share: which array libraries run here (:func:`available_libraries`), their operands
(:func:`operands`) and one elementwise call each (:func:`elementwise`), and PyTorch's
CPU thread count held fixed while timing (:func:`limit_torch_threads`).

Times are seconds; sizes are numbers of elements.
"""
from __future__ import annotations

import contextlib
import time
from typing import Callable, Iterable, Optional

import numpy as np

from ..device import device as live_device
from ..timing import bench

LIBRARIES = ("numpy", "torch", "cupy")


def available_libraries(libraries: Iterable[str] = LIBRARIES) -> tuple:
    """(usable, skipped): which of ``libraries`` can run here, and why the others cannot.

    NumPy always runs on the CPU. PyTorch runs on the GPU when CUDA works, else on
    the CPU. CuPy needs a CUDA GPU.
    """
    usable, skipped = [], {}
    for lib in libraries:
        if lib not in LIBRARIES:
            raise ValueError(f"libraries must be among {LIBRARIES}, got {lib!r}")
        if lib == "numpy":
            usable.append(lib)
        elif lib == "torch":
            try:
                import torch  # noqa: F401
                usable.append(lib)
            except ImportError:
                skipped[lib] = "PyTorch is not installed"
        else:
            try:
                import cupy
                if cupy.cuda.is_available():
                    usable.append(lib)
                else:
                    skipped[lib] = "CuPy found no CUDA GPU"
            except Exception:
                skipped[lib] = "CuPy is not installed or has no CUDA GPU (it needs one)"
    return usable, skipped


def operands(library: str, size: int, dtype: str) -> tuple:
    """``(a, b, out, backend)``: two random inputs and an output of ``size`` elements made by
    ``library``, and where they live ('cpu' or 'cuda'; PyTorch's tensors go to
    :attr:`brrr.Device.torch_device`)."""
    if library == "numpy":
        a = np.random.default_rng(0).random(size, dtype=np.float64).astype(dtype)
        return a, a.copy(), np.empty_like(a), "cpu"
    if library == "torch":
        import torch
        where = live_device().torch_device
        a = torch.rand(size, dtype=getattr(torch, dtype), device=where)
        return a, a.clone(), torch.empty_like(a), where
    import cupy
    a = cupy.random.random(size, dtype=dtype)
    return a, a.copy(), cupy.empty_like(a), "cuda"


def elementwise(library: str, op: str) -> Callable:
    """``f(a, b, out)`` doing ``op`` ('add', 'mul' or 'cos') elementwise into ``out`` with ``library``."""
    if library == "numpy":
        mod = np
    elif library == "torch":
        import torch as mod
    else:
        import cupy as mod
    if op == "add":
        return lambda a, b, out: mod.add(a, b, out=out)
    if op == "mul":
        return lambda a, b, out: mod.multiply(a, b, out=out) if library != "torch" else mod.mul(a, b, out=out)
    return lambda a, b, out: mod.cos(a, out=out)


@contextlib.contextmanager
def limit_torch_threads(threads: Optional[int]):
    """Run the block with PyTorch's CPU thread pool set to ``threads`` (restored after).

    ``None`` leaves PyTorch alone. One thread matches NumPy's elementwise ops,
    and on a machine with more runnable work than cores it avoids the thread
    pool's stalls (milliseconds each), which would swamp a microsecond overhead.
    """
    if threads is None:
        yield
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"torch_threads must be a positive integer or None, got {threads!r}")
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def synchronizer(backend: str) -> Callable:
    """Waits for the GPU's queued work when the call's work runs there ('cuda'); else does nothing."""
    return live_device().synchronize if backend == "cuda" else (lambda: None)


def wall_time_per_call(fn: Callable, backend: str = "cpu", *, budget: float = 0.2) -> dict:
    """Wall-clock seconds per call of ``fn()`` when called back to back, as a user's loop would.

    ``backend`` is where ``fn``'s work runs ('cpu' or 'cuda'). This is what overhead is
    about, so the clock is the CPU's ``perf_counter``: on a GPU a block of calls is
    issued and then synchronised once, so the time per call is the larger of the CPU's
    cost to issue it and the GPU's to run it. ``budget``: seconds of timing.
    Returns :meth:`brrr.Timing.record_fields` per call (``seconds`` the median,
    ``min_seconds``, ``iqr_seconds``, ``floor_seconds``) and ``calls_per_sample``.
    """
    from ..timing import refuse_in_replay
    refuse_in_replay("wall_time_per_call")
    sync = synchronizer(backend)
    fn()
    sync()
    start = time.perf_counter()
    fn()
    sync()
    estimate = max(time.perf_counter() - start, 1e-7)
    calls = int(min(max(2e-3 / estimate, 1), 10_000)) if backend == "cuda" else 1

    def block():
        for _ in range(calls):
            fn()
        sync()

    t = bench(block, cache="hot", backend="cpu", budget=budget, warmup=0.02)
    return {**t.record_fields(calls), "calls_per_sample": t.calls_per_sample * calls}
