"""Activation checkpointing (Chen et al., 2016; ``torch.utils.checkpoint``), counted and timed.

Keep only each segment's input and run the segment's forward again during the
backward pass. Segments of ``every`` blocks in a stack of ``L`` blocks keep
``ceil(L / every)`` inputs plus, while one segment is being recomputed, that
segment's own activations, which is smallest near ``every ~ sqrt(L)``
(:func:`checkpoint_model`); the price is at most one more forward pass, a little less with
PyTorch's non-reentrant checkpoint, which stops recomputing early (:func:`checkpoint_flop_ratio`).
:func:`checkpoint_sweep` measures both on an MLP stack (:func:`mlp_stack`).
Sizes are bytes, times seconds.
"""
from __future__ import annotations

import math
import statistics

from .. import config
from ..device import device as live_device
from ..progress import progress as progress_bar
from ..recompute_model import checkpoint_flop_ratio  # noqa: F401 (public here too)
from ..timing import bench
from . import _arrays
from .common import run_sweep
from .recompute_saved import peak_memory, saved_bytes, training_step


def mlp_stack(layers: int = 8, width: int = 256, expansion: int = 4, dtype="float32", device=None, seed=0):
    """``layers`` pre-norm MLP blocks, ``x + Linear(GELU(Linear(LayerNorm(x))))``, as an nn.Sequential.

    This is a transformer's feed-forward half: per block it saves the block input,
    the normalised input, the hidden pre-activation and its GELU (``1 + 1 + 2 *
    expansion`` activations of the input's size, plus two per-row statistics).
    On ``device`` (default :attr:`brrr.Device.torch_device`).
    """
    import torch
    for name, v in (("layers", layers), ("width", width), ("expansion", expansion)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.LayerNorm(width)
            self.up = torch.nn.Linear(width, expansion * width)
            self.down = torch.nn.Linear(expansion * width, width)

        def forward(self, x):
            return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))

    torch.manual_seed(seed)
    model = torch.nn.Sequential(*[Block() for _ in range(layers)])
    return model.to(device=device or live_device().torch_device, dtype=_arrays.torch_dtype(dtype))


class Checkpointed:
    """Run an ``nn.Sequential`` with ``torch.utils.checkpoint`` around every segment of ``every`` blocks.

    ``every=0`` (or None) runs it plainly. Each segment keeps only its input; its
    activations are recomputed during the backward pass, up to the last operation whose output the
    backward pass needs (``use_reentrant=False`` stops early: a block's final matmul and residual
    addition, whose outputs nothing saves, are not rerun at a segment's end). Unlike
    ``checkpoint_sequential``, the last segment is checkpointed too.
    Callable like the model: ``Checkpointed(model, 2)(x)``.
    """

    def __init__(self, model, every=1):
        import torch
        if not isinstance(model, torch.nn.Sequential):
            raise TypeError(f"model must be a torch.nn.Sequential, got {type(model).__name__}")
        every = 0 if every is None else every
        if isinstance(every, bool) or not isinstance(every, int) or every < 0:
            raise ValueError(f"every must be an integer >= 0 (0: no checkpointing), got {every!r}")
        self.model, self.every = model, every

    @property
    def segments(self) -> int:
        """Number of checkpointed segments (0 when not checkpointing)."""
        return math.ceil(len(self.model) / self.every) if self.every else 0

    def parameters(self):
        return self.model.parameters()

    def __call__(self, x):
        from torch.utils.checkpoint import checkpoint
        if not self.every:
            return self.model(x)
        blocks = list(self.model)
        for start in range(0, len(blocks), self.every):
            segment = self.model[start:start + self.every]
            x = checkpoint(segment, x, use_reentrant=False)
        return x


def default_stack(quick=None) -> dict:
    """Stack size for :func:`checkpoint_sweep`: layers, width, batch (rows of the input)."""
    quick = config.quick_mode() if quick is None else quick
    if quick:
        return {"layers": 8, "width": 64, "batch": 128}
    if live_device().on_gpu:
        return {"layers": 32, "width": 1024, "batch": 4096}
    return {"layers": 32, "width": 256, "batch": 512}


def checkpoint_sweep(every=None, layers=None, width=None, batch=None, dtype="float32", rounds=None,
                     progress: bool = True):
    """Saved bytes and training-step time of an MLP stack, checkpointed every ``every`` blocks.

    Parameters
    ----------
    every : segment lengths to try; 0 means no checkpointing (default: 0, 1, 2,
        4, ..., layers).
    layers, width, batch : the stack (:func:`mlp_stack`) and the input's rows
        (default :func:`default_stack`).
    dtype : 'float32' (default), 'float16' or 'bfloat16' ('float16' on a GPU only).
    rounds : how many times each segment length is timed, in turn, the order reversed each
        round (default 2): the step times are the best over the rounds, so that a burst of other
        work on the machine, or the first point's warm-up, spoils one round of one point rather
        than the whole comparison.

    Records (one per ``every``): ``every``, ``segments``, ``saved_bytes``
    (activations kept after the forward pass, measured), ``recompute_bytes``
    (the most any one segment saves while it is recomputed, measured on the
    segment alone), ``peak_activation_bytes`` (their sum: the activations alive at
    once during the backward pass, in this model), ``backend``, ``seconds`` (one forward +
    backward, median of the rounds' medians; ``min_seconds``: fastest sample of any round;
    ``iqr_seconds``: the widest round's interquartile range; ``floor_seconds``), ``peak_memory_bytes``
    (GPU: measured with ``torch.cuda.max_memory_allocated``; CPU: None), ``counted_flops`` (the
    FLOPs of one training step as PyTorch's FLOP counter sees them, recomputation included:
    :func:`counted_flops`), ``max_grad_error``
    (largest difference to the uncheckpointed gradients: recomputation changes no result).
    ``meta`` holds ``block_bytes`` (one block's saved activations),
    ``input_bytes`` (one block input), ``parameter_bytes`` (the weights, and
    so the bytes of their gradients) and ``step_flops`` (the matmul FLOPs of one
    training step without checkpointing: forward, and a backward of twice that).
    """
    import torch
    shape = default_stack()
    layers = shape["layers"] if layers is None else layers
    width = shape["width"] if width is None else width
    batch = shape["batch"] if batch is None else batch
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch must be an integer >= 1, got {batch!r}")
    dtype = _arrays.dtype_name(dtype)
    model = mlp_stack(layers, width, dtype=dtype)
    if every is None:
        every = [0] + [2 ** i for i in range(int(math.log2(layers)) + 1)]
        every += [] if layers in every else [layers]
    every = list(every)
    for e in every:
        if isinstance(e, bool) or not isinstance(e, int) or e < 0:
            raise ValueError(f"every must hold integers >= 0 (0: no checkpointing), got {e!r}")
    dev = live_device()
    gen = torch.Generator(device="cpu").manual_seed(1)
    x = torch.randn(batch, width, generator=gen).to(device=dev.torch_device, dtype=_arrays.torch_dtype(dtype))
    params = list(model.parameters())

    reference = _gradients(model, x)
    block_bytes = saved_bytes(model[0], x)
    input_bytes = x.numel() * x.element_size()
    parameter_bytes = sum(p.numel() * p.element_size() for p in params)  # = their gradients' bytes
    step_flops = 3 * layers * 2 * (2 * batch * width * 4 * width)  # two matmuls a block; backward = 2 forwards

    rounds = 2 if rounds is None else rounds
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")
    steps, medians = {}, {}

    def measure(e):
        run = Checkpointed(model, e)
        kept = saved_bytes(run, x, parameters=params)
        if e:
            recompute = max(saved_bytes(model[s:s + e], x, parameters=params) for s in range(0, layers, e))
        else:
            recompute = 0
        step = steps[e] = training_step(run, x, params)
        error = max(float((a - b).abs().max()) for a, b in zip(reference, _gradients(run, x, params)))
        peak = peak_memory(step)
        flops = counted_flops(step)
        t = bench(step, cache="hot", min_samples=5, label=f"checkpoint every {e}")
        medians[e] = [t.median]
        return {"device": dev.name, "backend": dev.torch_device, "every": e, "segments": run.segments,
                "layers": layers, "width": width, "batch": batch, "dtype": dtype, "saved_bytes": kept,
                "recompute_bytes": recompute, "peak_activation_bytes": kept + recompute,
                **t.record_fields(), "peak_memory_bytes": peak, "counted_flops": flops, "max_grad_error": error}

    result = run_sweep("checkpoint_sweep", every, measure, progress=progress,
                       command=f"brrr.experiments.checkpoint_sweep(every={every}, layers={layers}, "
                               f"width={width}, batch={batch}, dtype={dtype!r})",
                       layers=layers, width=width, batch=batch, dtype=dtype, block_bytes=block_bytes,
                       input_bytes=input_bytes, parameter_bytes=parameter_bytes, step_flops=step_flops,
                       rounds=rounds, quick=config.quick_mode())
    for i in range(1, rounds):   # time every point again, in the other order each round
        order = result.records[::-1] if i % 2 else result.records
        for rec in progress_bar(order, desc=f"checkpoint_sweep, timing round {i + 1}", enabled=progress):
            t = bench(steps[rec["every"]], cache="hot", min_samples=5, label=f"checkpoint every {rec['every']}")
            medians[rec["every"]].append(t.median)
            rec.update(min_seconds=min(rec["min_seconds"], t.min), iqr_seconds=max(rec["iqr_seconds"], t.iqr),
                       seconds=statistics.median(medians[rec["every"]]))
    if dev.torch_device != "cuda":
        result.meta["notes"].append("CPU: no allocator peak counter, so peak_memory_bytes is None; "
                                    "peak_activation_bytes is the model built from measured saved bytes")
    return result


def checkpoint_table(result):
    """A :func:`checkpoint_sweep` result as a DataFrame for a page: one row per segment length
    ('none' without checkpointing), bytes kept after the forward pass and saved by one recomputed
    segment (counted), the modelled peak (their sum), the allocator's peak (measured on a GPU;
    missing on a CPU), the fastest step time (seconds) and the largest gradient difference to no
    checkpointing. None for None (a replayed set without the record)."""
    import pandas as pd
    if result is None:
        return None
    frame = result.to_frame()
    table = pd.DataFrame({
        "segment length (blocks)": ["none" if e == 0 else str(e) for e in frame["every"]],
        "segments": frame["segments"].where(frame["every"] > 0),          # no segments: '–' on the page
        "kept after forward": frame["saved_bytes"],
        "one segment, recomputed": frame["recompute_bytes"].where(frame["every"] > 0),
        "modelled peak": frame["peak_activation_bytes"]})
    table["allocator's peak (GPU only)"] = frame["peak_memory_bytes"]   # measured; None on a CPU: '–'
    table["step time (fastest)"] = frame["min_seconds"]
    table["largest gradient difference"] = frame["max_grad_error"]
    return table


def sweep_rows(result) -> dict:
    """``{every: record}`` of a :func:`checkpoint_sweep` run (every = 0: no checkpointing)."""
    return {int(r["every"]): r for r in result.records}


def step_ratios(result, every: int) -> tuple:
    """(the step time with segments of ``every`` over the plain step's, fastest samples; its FLOPs over the
    plain step's, counted where the records have them (:func:`counted_flops`), else :func:`checkpoint_flop_ratio`)."""
    rows = sweep_rows(result)
    counted = rows[every].get("counted_flops"), rows[0].get("counted_flops")
    return (rows[every]["min_seconds"] / rows[0]["min_seconds"],
            counted[0] / counted[1] if all(counted) else checkpoint_flop_ratio(result.meta["layers"], every))


def late_peak(result) -> dict:
    """``{every: (bytes, of which the weights' gradients)}`` at a late peak of the backward pass, while the
    stack's first segment is recomputed: that segment's counted activations, the gradients of the other
    segments' weights (``(1 - every / layers)`` of ``meta['parameter_bytes']``) and what the allocator's
    peak without checkpointing holds beyond its counted activations. Empty without allocator peaks."""
    rows, layers, params = sweep_rows(result), result.meta["layers"], result.meta.get("parameter_bytes") or 0
    if not (rows.get(0) or {}).get("peak_memory_bytes"):
        return {}
    extra = max(rows[0]["peak_memory_bytes"] - rows[0]["saved_bytes"], 0)
    grads = {e: (1 - min(e, layers) / layers) * params for e in rows if e}
    return {e: (rows[e]["recompute_bytes"] + grads[e] + extra, grads[e]) for e in grads}


def _gradients(fn, x, params=None):
    params = list(fn.parameters()) if params is None else params
    for p in params:
        p.grad = None
    fn(x).sum().backward()
    grads = [p.grad.detach().clone() for p in params]
    for p in params:
        p.grad = None
    return grads


def counted_flops(step) -> int:
    """FLOPs of one call of ``step()`` (matmuls and the like), counted by PyTorch's
    ``torch.utils.flop_counter.FlopCounterMode``: it sees every operator dispatched, the
    recomputation inside the backward pass included."""
    from torch.utils.flop_counter import FlopCounterMode
    with FlopCounterMode(display=False) as counter:
        step()
    return int(counter.get_total_flops())


def checkpoint_model(block_bytes: float, input_bytes: float, layers: int, every: int) -> float:
    """Activation bytes alive at the backward's peak with segments of ``every`` blocks, in the model.

    ``ceil(layers / every)`` segment inputs stay saved, plus one segment's worth
    of block activations while it is recomputed; ``every=0`` keeps all
    ``layers`` blocks' activations. Minimal near ``every = sqrt(layers * input_bytes / block_bytes)``.
    """
    if isinstance(every, bool) or not isinstance(every, int) or every < 0:
        raise ValueError(f"every must be an integer >= 0, got {every!r}")
    if not every:
        return float(layers * block_bytes)
    return float(math.ceil(layers / every) * input_bytes + min(every, layers) * block_bytes)
