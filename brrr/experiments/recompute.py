"""Recomputation: keep fewer activations for the backward pass and compute them again.

Training keeps, from the forward pass, every tensor the backward pass will
need (a layer's input for its weight gradient, an activation's input for its
derivative). Those *saved tensors* are most of a network's training memory.
Two ways to keep fewer of them, both measured here:

* **Activation checkpointing** (Chen et al., 2016; ``torch.utils.checkpoint``):
  keep only each segment's input and run the segment's forward again during
  the backward pass. Segments of ``every`` blocks in a stack of ``L`` blocks
  keep ``ceil(L / every)`` inputs plus, while one segment is being recomputed,
  that segment's own activations, which is smallest near ``every ~ sqrt(L)``;
  the price is about one more forward pass.
* **Recomputation inside a compiler**: ``torch.compile``'s partitioner (the
  min-cut "rematerialization" partitioner of AOTAutograd) saves the input of a
  fused chain of pointwise ops and recomputes the chain inside the fused
  backward kernel, instead of saving every intermediate. Horace He's "Making
  Deep Learning Go Brrrr From First Principles" (2022) explains why that is nearly free: the
  recomputed ops are memory-bound, so their math hides behind loads that
  happen anyway.

Saved bytes are counted exactly with ``torch.autograd.graph.saved_tensors_hooks``:
the pack hook sees every tensor autograd stores (including what a compiled
graph's backward keeps, which it stores through ``ctx.save_for_backward``) and
we add up the distinct storages, each once. Peak memory comes from
``torch.cuda.max_memory_allocated`` on a GPU; the CPU has no such counter, so
there only the saved bytes (and a model of the peak built from them) are given.
"""
from __future__ import annotations

import math
import statistics
import time

from .. import config
from ..device import device as live_device
from ..timing import bench
from . import _arrays
from ..progress import progress as progress_bar
from .common import run_sweep


# --- counting saved tensors -----------------------------------------------------------------

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


# --- a transformer-ish stack -----------------------------------------------------------------

def mlp_stack(layers: int = 8, width: int = 256, expansion: int = 4, dtype="float32", device=None, seed=0):
    """``layers`` pre-norm MLP blocks, ``x + Linear(GELU(Linear(LayerNorm(x))))``, as an nn.Sequential.

    This is a transformer's feed-forward half: per block it saves the block input,
    the normalised input, the hidden pre-activation and its GELU (``1 + 1 + 2 *
    expansion`` activations of the input's size, plus two per-row statistics).
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
    return model.to(device=device or _torch_device(), dtype=_arrays.torch_dtype(dtype))


def _torch_device():
    return "cuda" if live_device().backend == "cuda" else "cpu"


class Checkpointed:
    """Run an ``nn.Sequential`` with ``torch.utils.checkpoint`` around every segment of ``every`` blocks.

    ``every=0`` (or None) runs it plainly. Each segment keeps only its input; its
    activations are recomputed during the backward pass. Unlike
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
    """Peak GPU bytes allocated while ``step()`` runs, above what was allocated before; None on the CPU."""
    import torch
    if live_device().backend != "cuda" or not torch.cuda.is_available():
        return None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    step()
    torch.cuda.synchronize()
    return int(torch.cuda.max_memory_allocated() - base)


def default_stack(quick=None) -> dict:
    """Stack size for :func:`checkpoint_sweep`: layers, width, batch (rows of the input)."""
    quick = config.quick_mode() if quick is None else quick
    if quick:
        return {"layers": 32, "width": 64, "batch": 128}
    if live_device().backend == "cuda":
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
    once during the backward pass, in this model), ``seconds`` (one forward +
    backward, median of the rounds' medians; ``min``: fastest sample of any round; ``iqr``:
    the widest round's interquartile range), ``peak_memory_bytes`` (GPU: measured with
    ``torch.cuda.max_memory_allocated``; CPU: None), ``max_grad_error`` (largest
    difference to the uncheckpointed gradients: recomputation changes no result).
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
    x = torch.randn(batch, width, generator=gen).to(device=_torch_device(), dtype=_arrays.torch_dtype(dtype))
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
        t = bench(step, cache="hot", min_samples=5, label=f"checkpoint every {e}")
        medians[e] = [t.median]
        return {"device": dev.name, "every": e, "segments": run.segments, "layers": layers,
                "width": width, "batch": batch, "dtype": dtype, "saved_bytes": kept,
                "recompute_bytes": recompute, "peak_activation_bytes": kept + recompute,
                "seconds": t.median, "min": t.min, "iqr": t.iqr, "peak_memory_bytes": peak,
                "max_grad_error": error}

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
            rec.update(min=min(rec["min"], t.min), iqr=max(rec["iqr"], t.iqr),
                       seconds=statistics.median(medians[rec["every"]]))
    if dev.backend != "cuda":
        result.meta["notes"].append("CPU: no allocator peak counter, so peak_memory_bytes is None; "
                                    "peak_activation_bytes is the model built from measured saved bytes")
    return result


def checkpoint_table(result):
    """A :func:`checkpoint_sweep` result as a DataFrame for a page: one row per segment length
    ('none' without checkpointing), bytes kept after the forward pass and saved by one recomputed
    segment (counted), the modelled peak (their sum), the allocator's peak (measured on a GPU;
    missing on a CPU), the
    fastest step time and the largest gradient difference to no checkpointing."""
    import pandas as pd
    frame = result.to_frame()
    table = pd.DataFrame({
        "segment length (blocks)": ["none" if e == 0 else str(e) for e in frame["every"]],
        "segments": frame["segments"].where(frame["every"] > 0),          # no segments: '–' on the page
        "kept after forward": frame["saved_bytes"],
        "one segment, recomputed": frame["recompute_bytes"].where(frame["every"] > 0),
        "modelled peak": frame["peak_activation_bytes"]})
    table["allocator's peak (GPU only)"] = frame["peak_memory_bytes"]   # measured; None on a CPU: '–'
    table["step time (fastest)"] = frame["min"]
    table["largest gradient difference"] = frame["max_grad_error"]
    return table


def _gradients(fn, x, params=None):
    params = list(fn.parameters()) if params is None else params
    for p in params:
        p.grad = None
    fn(x).sum().backward()
    grads = [p.grad.detach().clone() for p in params]
    for p in params:
        p.grad = None
    return grads


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


# --- recomputation inside torch.compile ------------------------------------------------------

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
    The returned function compiles on its first call (which must happen while
    this choice is in force, so this function makes that call itself on a tiny input).
    """
    import torch
    import torch._inductor.config as inductor_config
    torch._dynamo.reset()  # Dynamo caches graphs per code object: start clean for each variant
    compiled = torch.compile(pointwise_chain(op, k), dynamic=False)
    return compiled, inductor_config.patch(custom_partitioner_fn=None if recompute else _save_all_partitioner())


def compiled_table(result):
    """A :func:`compiled_recompute` result as a DataFrame for a page: per variant, the saved
    tensors and bytes (counted), the bytes predicted, the fastest forward + backward time and
    the time the first call took to compile."""
    import pandas as pd
    frame = result.to_frame()
    if frame.empty:
        return pd.DataFrame(columns=["variant"])
    return pd.DataFrame({"variant": frame["variant"], "saved tensors": frame["saved_tensors"],
                         "saved bytes": frame["saved_bytes"], "predicted bytes": frame["predicted_saved_bytes"],
                         "time (fastest)": frame["min"], "compile time": frame["compile_seconds"]})


def compiled_recompute(op: str = "gelu", k: int = 4, n=None, dtype="float32", variants=VARIANTS,
                       progress: bool = True):
    """Saved bytes and forward+backward time of a k-op pointwise chain: eager, compiled without and with recomputation.

    ``n`` elements (default 2^24; 2^26 on a GPU; quick mode 2^20). Records:
    ``variant``, ``op``, ``k``, ``n``, ``saved_bytes`` and ``saved_tensors``
    (measured with saved-tensors hooks), ``predicted_saved_bytes`` (eager and
    save-all: k arrays; recompute: 1), ``seconds`` (forward + backward, median),
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
        n = 2 ** 20 if config.quick_mode() else (2 ** 26 if dev.backend == "cuda" else 2 ** 24)
    n = _arrays.check_sizes("n", [n])[0]
    dtype = _arrays.dtype_name(dtype)
    gen = torch.Generator(device="cpu").manual_seed(2)
    x = torch.randn(n, generator=gen).to(device=_torch_device(), dtype=_arrays.torch_dtype(dtype))
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
        return {"device": dev.name, "variant": variant, "op": op, "k": k, "n": n, "dtype": dtype,
                "saved_bytes": sum(r["nbytes"] for r in rows), "saved_tensors": len(rows),
                "predicted_saved_bytes": predicted, "seconds": t.median, "min": t.min, "iqr": t.iqr,
                "peak_memory_bytes": peak, "compile_seconds": compile_seconds}

    result = run_sweep("compiled_recompute", variants, measure, progress=progress,
                       command=f"brrr.experiments.compiled_recompute(op={op!r}, k={k}, n={n}, dtype={dtype!r})",
                       op=op, k=k, n=n, dtype=dtype, quick=config.quick_mode())
    result.meta["notes"].extend(notes)
    return result
