"""Chapter 8, decoding: the three regimes in one model (:mod:`brrr.decode`).

A prefill runs the prompt through the model once; each decode step then runs one new token per
sequence and reads every weight and the whole key/value cache to do it. :func:`decode_sweep`
times, at batch 1 and at a batch chosen from the roofline:

* ``prefill``: the prompt, one call (many tokens per weight read);
* ``eager``: one decode step, eager PyTorch (one host call per operator);
* ``graph``: the same step replayed as a CUDA graph (one launch; GPU only).

Each record is placed by the book's rule (:meth:`brrr.Roofline.regime`): its FLOPs and least
bytes (:func:`brrr.decode.call_counts`) at the device's roofs for the model's dtype, against the
host's cost of issuing the call: the step's operator calls times the fixed cost of one
(:func:`brrr.profiler.dispatch_overhead`; operators counted by :func:`brrr.gpt.count_operators`) eager, one such cost for a graph.
"""
from __future__ import annotations

import math
from typing import Optional

from .. import arrays, config
from ..device import provenance
from ..results import Result

MODES = ("prefill", "eager", "graph")


def weights_dtype(dev) -> str:
    """The type the decode sweep casts the weights to, once: bfloat16 on a GPU with bfloat16 tensor
    cores, float16 on an older GPU, float32 on a CPU."""
    if not dev.on_gpu:
        return "float32"
    return "bfloat16" if dev.has_tensor_cores("bfloat16") else "float16"


def prompt_tokens(dev, quick: bool) -> int:
    """The prompt the sweep runs by default: 16 tokens in quick mode, 128 on a GPU, 32 on a CPU."""
    return 16 if quick else 128 if dev.on_gpu else 32


def ridge_batch(roof, itemsize: int, most: int) -> int:
    """The power of two at or above the batch where a decode step's intensity, about
    ``2 · batch / itemsize`` FLOPs per byte of weights, reaches ``roof``'s ridge; at most ``most``."""
    batch = max(1.0, roof.ridge * itemsize / 2)
    return int(min(most, 2 ** math.ceil(math.log2(batch))))


def decode_sweep(quick: Optional[bool] = None, batches=None, prompt: Optional[int] = None,
                 progress: bool = True) -> Result:
    """Time a prefill and a decode step (eager, and as a CUDA graph on a GPU) per batch.

    The model is :func:`brrr.gpt.sizes`'s (GPT-2 small on a GPU), its weights cast once to
    :func:`weights_dtype`; the prompt has ``prompt`` tokens
    (default 128 on a GPU, 32 on a CPU, 16 in quick mode) and a step reads a cache one longer.
    ``batches`` default to 1 and :func:`ridge_batch`.

    Records: batch, mode (:data:`MODES`), tokens (generated or read per call), length (positions
    in the cache), seconds (median per call), seconds_per_token, tokens_per_second, flops,
    nbytes, weight_seconds (every weight read once at the DRAM bandwidth: a decode step's least
    time), roofline_seconds (max of FLOPs at the peak and bytes at the bandwidth),
    overhead_seconds (operator calls times the fixed cost of one; one for a graph), calls,
    regime; a mode that cannot run here has ``skipped`` (why) and no times.
    """
    import torch
    from ..decode import KVCache, call_counts, forward_cached
    from ..device import device as live
    from ..gpt import GPT, count_operators, sizes, tokens
    from ..profiler.regimes import dispatch_overhead
    from ..progress import progress as progress_bar
    from ..roofline import Roofline
    from ..timing import bench
    quick = config.quick_mode() if quick is None else quick
    dev = live()
    s = sizes(quick, dev.on_gpu)
    cfg = s["config"]
    dtype = weights_dtype(dev)
    torch_dtype, itemsize = arrays.torch_dtype(dtype), arrays.itemsize(dtype)
    prompt = prompt or prompt_tokens(dev, quick)
    length = prompt + 1
    roof = Roofline.from_device(dev, dtype=dtype, tensor_cores=dev.on_gpu)
    batches = list(batches or (1, ridge_batch(roof, itemsize, most=8 if quick else 256)))
    model = GPT(cfg).eval().to(device=dev.torch_device, dtype=torch_dtype)
    t_call = dispatch_overhead(dev)
    result = Result("capstone_decode", meta=provenance(
        f"brrr.experiments.capstone_decode.decode_sweep(quick={quick})", model=s["name"],
        n_params=cfg.n_params(), dtype=dtype, prompt=prompt, length=length, batches=batches,
        fixed_cost_seconds=t_call, roofline=roof.to_dict(), quick=quick))
    start, step_at = (torch.tensor(p, device=dev.torch_device) for p in (0, prompt))
    for batch in progress_bar(batches, desc="decode", enabled=progress):
        cache = KVCache(cfg, batch, length, device=dev.torch_device, dtype=torch_dtype)
        prompt_ids = tokens(cfg, batch, prompt, device=dev.torch_device)
        new_ids = tokens(cfg, batch, 1, device=dev.torch_device, seed=1)
        prefill = lambda: forward_cached(model, prompt_ids, cache, start)   # noqa: E731
        step = lambda: forward_cached(model, new_ids, cache, step_at)        # noqa: E731
        for mode in MODES:
            record = {"batch": batch, "mode": mode, "length": length,
                      "tokens": batch * (prompt if mode == "prefill" else 1)}
            result.records.append(record)
            if mode == "graph" and not dev.on_gpu:
                record["skipped"] = "CUDA graphs need a CUDA GPU"
                continue
            fn = prefill if mode == "prefill" else step
            with torch.no_grad():
                n_calls = count_operators(fn)
                try:
                    timing = bench(fn, cache="hot", cuda_graph=mode == "graph",
                                   label=f"{mode}, batch {batch}")
                except RuntimeError as error:       # a graph that cannot be captured here
                    record["skipped"] = f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"
                    continue
            counts = call_counts(cfg, batch, prompt if mode == "prefill" else 1, length, itemsize)
            flops, nbytes = counts["flops"], counts["nbytes"]
            overhead = t_call if mode == "graph" else n_calls * t_call
            seconds = timing.median
            record.update(seconds=seconds, iqr_seconds=timing.iqr, seconds_per_token=seconds / record["tokens"],
                          tokens_per_second=record["tokens"] / seconds, flops=flops, nbytes=nbytes,
                          weight_seconds=counts["weight_bytes"] / roof.peak_bandwidth,
                          roofline_seconds=float(roof.time(flops, nbytes)), overhead_seconds=overhead,
                          calls=1 if mode == "graph" else n_calls,
                          regime=roof.with_ceilings(overhead=overhead).regime(flops, nbytes))
    return result


def decode_table(result):
    """The decode records as the page shows them (None for a replayed run without them)."""
    import pandas as pd
    if result is None:
        return None
    rows = []
    for r in result.records:
        if r.get("skipped"):
            continue
        rows.append({"batch": r["batch"], "call": r["mode"], "tokens per call": r["tokens"],
                     "time per call": r["seconds"], "tokens/s": r["tokens_per_second"],
                     "weights at DRAM bandwidth": r["weight_seconds"], "roofline time": r["roofline_seconds"],
                     "host issue time": r["overhead_seconds"], "regime": r["regime"]})
    return pd.DataFrame(rows)
