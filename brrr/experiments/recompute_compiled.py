"""Recomputation inside a compiler: ``torch.compile`` saves a pointwise chain's input and recomputes the rest.

``torch.compile``'s partitioner (the min-cut "rematerialization" partitioner of
AOTAutograd) saves the input of a fused chain of pointwise ops and recomputes the
chain inside the fused backward kernel, instead of saving every intermediate.
Horace He's "Making Deep Learning Go Brrrr From First Principles" (He 2022) explains
why that is nearly free: the recomputed ops are memory-bound, so their math hides
behind loads that happen anyway. :func:`compiled_recompute` compares eager mode,
a compiled chain that saves what eager saves, and the default (recomputing) one.
Sizes are bytes, times seconds.
"""
from __future__ import annotations

import time

from .. import config
from ..device import device as live_device
from ..timing import bench
from . import _arrays
from .common import run_sweep
from .recompute_saved import peak_memory, saved_tensors, training_step

POINTWISE = ("gelu", "silu", "tanh", "cos")
VARIANTS = ("eager", "compiled (save all)", "compiled (recompute)")


def pointwise_chain(op: str = "gelu", k: int = 4):
    """``f(x)``: ``op`` applied ``k`` times (x -> op(x) -> op(op(x)) ...); each link saves one tensor in eager mode."""
    import torch
    if op not in POINTWISE:
        raise ValueError(f"op must be one of {POINTWISE}, got {op!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    fn = {"gelu": lambda t: torch.nn.functional.gelu(t, approximate="tanh"),
          "silu": torch.nn.functional.silu, "tanh": torch.tanh, "cos": torch.cos}[op]

    def chain(x):
        for _ in range(k):
            x = fn(x)
        return x
    return chain


_SAVE_ALL = None


def _save_all_partitioner():
    """An Inductor custom partitioner that saves what eager autograd would (AOTAutograd's default_partition)."""
    global _SAVE_ALL
    if _SAVE_ALL is None:
        from torch._functorch.partitioners import default_partition
        from torch._inductor.custom_graph_pass import CustomPartitionerFn

        class SaveAll(CustomPartitionerFn):
            def __call__(self, gm, joint_inputs, **kwargs):
                kwargs.pop("compiler", None)
                return default_partition(gm, joint_inputs, **kwargs)

            def uuid(self):
                return "brrr-default-partition-v1"
        # Inductor pickles its config into the compile cache key: make the class findable by name.
        SaveAll.__qualname__ = SaveAll.__name__ = "_SaveAllPartitioner"
        globals()["_SaveAllPartitioner"] = SaveAll
        _SAVE_ALL = SaveAll()
    return _SAVE_ALL


def compile_chain(op: str = "gelu", k: int = 4, recompute: bool = True):
    """``torch.compile`` of :func:`pointwise_chain`, partitioned with or without recomputation.

    ``recompute=True`` is Inductor's default, the min-cut partitioner;
    ``recompute=False`` swaps in AOTAutograd's ``default_partition``, which saves
    what eager mode would, while still fusing the forward and the backward.
    Returns ``(compiled function, setting)``: the function compiles on its first call,
    which must happen inside the ``with setting:`` block so that this choice is in force.
    """
    import torch
    import torch._inductor.config as inductor_config
    torch._dynamo.reset()  # Dynamo caches graphs per code object: start clean for each variant
    compiled = torch.compile(pointwise_chain(op, k), dynamic=False)
    return compiled, inductor_config.patch(custom_partitioner_fn=None if recompute else _save_all_partitioner())


def step_bytes(variant: str, k: int, n: int, itemsize: int = 4) -> float:
    """Bytes one forward and backward pass of a ``k``-op chain on ``n`` elements moves through memory,
    by ``variant``, counting the ``sum`` of the output (outside the chain) and no read of its incoming
    gradient (a broadcast scalar). Eager: k kernels that read and write an array, the sum, then k
    backward kernels that read the saved input and the gradient and write a gradient (the first reads
    no gradient): 5k arrays. Saving everything: one forward kernel reads x and writes k arrays (k - 1
    saved, the output), the sum, and one backward kernel reads the k saved arrays and writes the
    gradient: 2k + 3. Recomputing: x in and the output out, the sum, x in and the gradient out: 5."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    arrays = {"eager": 5 * k, "compiled (save all)": 2 * k + 3, "compiled (recompute)": 5}[variant]
    return float(arrays * n * itemsize)


def compiled_table(result):
    """A :func:`compiled_recompute` result as a DataFrame for a page: per variant, the saved
    tensors and bytes (counted), the bytes predicted, the fastest forward + backward time and
    the time the first call took to compile (seconds). None for None (a replayed set without the record)."""
    import pandas as pd
    if result is None:
        return None
    frame = result.to_frame()
    if frame.empty:
        return pd.DataFrame(columns=["variant"])
    return pd.DataFrame({"variant": frame["variant"], "saved tensors": frame["saved_tensors"],
                         "saved bytes": frame["saved_bytes"], "predicted bytes": frame["predicted_saved_bytes"],
                         "time (fastest)": frame["min_seconds"], "compile time": frame["compile_seconds"]})


def compiled_recompute(op: str = "gelu", k: int = 4, n=None, dtype="float32", variants=VARIANTS,
                       progress: bool = True):
    """Saved bytes and forward+backward time of a k-op pointwise chain: eager, compiled without and with recomputation.

    ``n`` elements (default 2^24; 2^26 on a GPU; quick mode 2^20), on
    :attr:`brrr.Device.torch_device`. Records: ``variant``, ``op``, ``k``, ``n``, ``backend``,
    ``nbytes`` (the bytes a step moves, :func:`step_bytes`),
    ``saved_bytes`` and ``saved_tensors`` (measured with saved-tensors hooks),
    ``predicted_saved_bytes`` (eager and save-all: k arrays; recompute: 1), ``seconds``
    (forward + backward, median; ``min_seconds``, ``iqr_seconds``, ``floor_seconds``),
    ``peak_memory_bytes`` (GPU only), ``compile_seconds``. A compiler failure is noted in
    ``meta['notes']`` and that variant skipped.
    """
    import torch
    bad = [v for v in ((variants,) if isinstance(variants, str) else variants) if v not in VARIANTS]
    if bad or not variants:
        raise ValueError(f"variants must be a non-empty subset of {VARIANTS}, got {variants!r}")
    variants = (variants,) if isinstance(variants, str) else tuple(variants)
    chain = pointwise_chain(op, k)
    dev = live_device()
    if n is None:
        n = 2 ** 20 if config.quick_mode() else (2 ** 26 if dev.on_gpu else 2 ** 24)
    n = _arrays.check_sizes("n", [n])[0]
    dtype = _arrays.dtype_name(dtype)
    gen = torch.Generator(device="cpu").manual_seed(2)
    x = torch.randn(n, generator=gen).to(device=dev.torch_device, dtype=_arrays.torch_dtype(dtype))
    x.requires_grad_(True)
    item = x.element_size()
    notes = []
    expected = chain(x.detach())

    def measure(variant):
        if variant == "eager":
            return _measure_chain(variant, chain, None)
        try:
            fn, setting = compile_chain(op, k, recompute=variant.endswith("(recompute)"))
            with setting:  # kept for the whole measurement, in case Dynamo compiles again
                start = time.perf_counter()
                out = fn(x)
                out.sum().backward()  # compiles the backward graph too
                compile_seconds = time.perf_counter() - start
                x.grad = None
                if not torch.allclose(out.detach(), expected, rtol=1e-4, atol=1e-5):
                    notes.append(f"{variant}: output differs from eager")
                return _measure_chain(variant, fn, compile_seconds)
        except Exception as error:  # noqa: BLE001 - no C++ compiler, unsupported op: say so
            notes.append(f"{variant} skipped: {type(error).__name__}: {str(error)[:200]}")
            return []

    def _measure_chain(variant, fn, compile_seconds):
        rows = saved_tensors(fn, x)
        step = training_step(fn, x, [x])
        peak = peak_memory(step)
        t = bench(step, cache="hot", min_samples=5, label=variant)
        predicted = (1 if variant.endswith("(recompute)") else k) * n * item
        return {"device": dev.name, "backend": dev.torch_device, "variant": variant, "op": op, "k": k, "n": n,
                "dtype": dtype, "nbytes": step_bytes(variant, k, n, item),
                "saved_bytes": sum(r["nbytes"] for r in rows), "saved_tensors": len(rows),
                "predicted_saved_bytes": predicted, **t.record_fields(),
                "peak_memory_bytes": peak, "compile_seconds": compile_seconds}

    result = run_sweep("compiled_recompute", variants, measure, progress=progress,
                       command=f"brrr.experiments.compiled_recompute(op={op!r}, k={k}, n={n}, dtype={dtype!r})",
                       op=op, k=k, n=n, dtype=dtype, quick=config.quick_mode())
    result.meta["notes"].extend(notes)
    return result
