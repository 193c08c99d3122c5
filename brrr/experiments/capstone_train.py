"""Chapter 8, training: one step of forward, loss, backward and AdamW update of :mod:`brrr.gpt`'s model.

:func:`train_steps` times a training step in three configurations, each adding to the one before:

1. ``eager``: float32, attention by hand, AdamW updating one tensor after another (for-each);
2. ``mixed``: ``torch.autocast`` to bfloat16 (float16 on an older GPU), ``scaled_dot_product_attention``
   and AdamW's fused kernel (``fused=True``);
3. ``compiled``: the same, with the forward pass and its loss compiled by ``torch.compile`` (and so
   the backward pass AOTAutograd derives from them).

FLOPs are :func:`brrr.gpt.train_flops` (6·N per token plus attention, of the unpadded model), the
MFU is against one peak (:func:`brrr.mfu.table_peak`), and :func:`step_costs` splits a traced step's
time by what its kernels do (:data:`COST_CLASSES`, named by :func:`cost_class`), so the page can
name the largest costs outside the matmuls. The ``mixed`` configuration's eager operators are
also profiled (:func:`brrr.profile` with its backward pass) for the regime that holds most of the
time; the compiled step starts from those operators.
"""
from __future__ import annotations

import math
import os
import re
import tempfile
import time
from dataclasses import dataclass
from typing import Optional

from .. import config
from ..mfu import table_peak
from ..device import provenance
from ..results import Result
from .capstone import measured  # noqa: F401 (the configurations that ran, as for the steps)


@dataclass(frozen=True)
class TrainConfig:
    """One configuration of the training step."""
    key: str
    label: str
    low_precision: bool = False     # bfloat16 autocast (float16 on a GPU without bfloat16)
    sdpa: bool = False              # scaled_dot_product_attention instead of attention by hand
    fused: bool = False             # AdamW's fused kernel instead of its for-each loop
    compiled: bool = False          # torch.compile of the forward pass and the loss
    profiled: bool = False          # profile its eager operators with brrr.profile


CONFIGS = (
    TrainConfig("eager", "eager FP32, for-each AdamW"),
    TrainConfig("mixed", "autocast, SDPA, fused AdamW", True, True, True, profiled=True),
    TrainConfig("compiled", "torch.compile, with autocast, SDPA, fused AdamW", True, True, True, compiled=True),
)
CONFIG_KEYS = tuple(c.key for c in CONFIGS)

COST_CLASSES = ("matmul", "attention", "loss", "norm", "optimizer", "other")
_PATTERNS = (          # checked in this order: a fused kernel goes to the first class its name names
    ("loss", r"cross_?entropy|log_?softmax|nll_?loss"),
    ("optimizer", r"adam|optimizer|multi_tensor"),
    ("norm", r"layer_?norm"),
    ("attention", r"flash|fmha|attention|softmax|masked_fill"),
    ("matmul", r"gemm|xmma|nvjet|cutlass|matmul|addmm|bmm|aten::mm$|mmbackward|aten::linear"),
)


def cost_class(name: str) -> str:
    """The class of :data:`COST_CLASSES` a kernel or operator belongs to, by its name: the loss
    (its log-softmax over the vocabulary and the NLL), the optimizer, LayerNorm, attention (its
    kernels or, by hand, its softmax and mask), matmuls, or 'other' (elementwise work, copies,
    casts, the embedding). A compiled kernel that fuses several is put in the first of those its
    name lists, in that order."""
    low = name.lower()
    for cls, pattern in _PATTERNS:
        if re.search(pattern, low):
            return cls
    return "other"


def step_costs(step, dev, steps: int = 2) -> dict:
    """{class of :data:`COST_CLASSES`: seconds per step} of ``step()``, traced by ``torch.profiler``
    over ``steps`` calls after one untraced call: on a GPU the kernels' own times (from the Chrome
    trace PyTorch writes), on a CPU each operator's self time (the profiler's bookkeeping adds a
    little to each)."""
    from torch.profiler import ProfilerActivity, profile
    from ..profiler.chrome import events_from_chrome
    from ..profiler.trace import _without_profiler_chatter
    step()
    dev.synchronize()
    gpu = dev.on_gpu and dev.torch_device == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if gpu else [])
    with _without_profiler_chatter(), profile(activities=activities) as prof:
        for _ in range(steps):
            step()
        dev.synchronize()
    totals = dict.fromkeys(COST_CLASSES, 0.0)
    if gpu:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "trace.json")
            prof.export_chrome_trace(path)
            events = events_from_chrome(path)
        for e in events:
            if e["side"] == "gpu" and e["category"] == "kernel":
                totals[cost_class(e["name"])] += e["seconds"]
    else:
        for e in prof.key_averages():
            if not e.key.startswith("ProfilerStep"):
                totals[cost_class(e.key)] += e.self_cpu_time_total * 1e-6
    return {k: v / steps for k, v in totals.items()}


def with_loss(model, low: Optional[str], device_type: str):
    """A module whose forward(idx, targets) returns ``model``'s mean cross-entropy loss, under
    ``torch.autocast(device_type, low)`` where ``low`` is a dtype name (None: float32)."""
    import contextlib
    import torch
    from torch.nn import functional as F

    class WithLoss(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, idx, targets):
            cast = torch.autocast(device_type, dtype=getattr(torch, low)) if low else contextlib.nullcontext()
            with cast:
                logits = self.model(idx)
                return F.cross_entropy(logits.flatten(0, 1), targets.flatten())
    return WithLoss()


def train_steps(quick: Optional[bool] = None, configs=CONFIGS, budget: Optional[float] = None,
                profile_budget: Optional[float] = None, gpu: Optional[bool] = None) -> Result:
    """Time a training step in each of ``configs`` on the live device; returns a Result.

    The model is :func:`brrr.gpt.sizes`'s (GPT-2 small on a GPU) with its vocabulary padded
    (:func:`brrr.gpt.padded`), in train mode, on ``sizes()['train']`` random tokens and targets.
    ``budget``: seconds of timing per configuration (default 0.5, 0.2 in quick mode);
    ``profile_budget``: seconds per distinct operator of the profile (default 0.05).

    Records: config, label, batch, seq, tokens, dtype (of the matmuls), attention, optimizer,
    compiled, seconds (median wall-clock seconds per step), iqr_seconds, tokens_per_second, flops
    (:func:`brrr.gpt.train_flops` total), flops_per_second, mfu (against ``meta['mfu_peak']``; None
    where that peak does not bound the dtype), compile_seconds (the first compiled step, whole),
    costs ({class: seconds per step}, :func:`step_costs`), regime and regime_shares (the profiled
    configuration only); a configuration that cannot run has ``skipped`` (why) and no times.
    """
    import torch
    from ..device import device as live
    from ..gpt import GPT, padded, sizes, tokens, train_flops
    from ..profiler import profile
    from .capstone import autocast_dtype, error_words, regime_shares
    from .common import free_memory, is_out_of_memory
    from .wallclock import wall_time_per_call
    quick = config.quick_mode() if quick is None else quick
    dev = live()
    backend, where = dev.backend, dev.torch_device
    s = sizes(quick, dev.on_gpu if gpu is None else gpu)
    cfg = s["config"]
    batch, seq = s["train"]
    budget = budget or (0.2 if quick else 0.5)
    profile_budget = profile_budget or 0.05
    low = autocast_dtype(backend)
    model = GPT(padded(cfg)).train().to(where)
    idx, targets = (tokens(cfg, batch, seq, device=where, seed=k) for k in (0, 1))
    flops = train_flops(cfg, batch, seq)
    peak = table_peak(dev, low)
    result = Result("capstone_train", meta=provenance(
        f"brrr.experiments.capstone_train.train_steps(quick={quick})", model=s["name"],
        n_params=cfg.n_params(), vocab=cfg.vocab, padded_vocab=model.cfg.vocab, batch=batch, seq=seq,
        flops=flops, autocast_dtype=low, mfu_peak=peak, quick=quick,
        optimizer="torch.optim.AdamW(lr=1e-4)", loss="cross-entropy over the padded vocabulary"))
    for c in configs:
        dtype = low if c.low_precision else "float32"
        record = {"config": c.key, "label": c.label, "batch": batch, "seq": seq, "tokens": batch * seq,
                  "dtype": dtype, "attention": "sdpa" if c.sdpa else "manual",
                  "optimizer": "fused AdamW" if c.fused else "for-each AdamW", "compiled": c.compiled,
                  "backend": backend}
        result.records.append(record)
        model.use_sdpa(c.sdpa)
        net = with_loss(model, low if c.low_precision else None, backend)
        try:
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4, **({"fused": True} if c.fused else {"foreach": True}))
        except (RuntimeError, TypeError, ValueError) as exc:     # no fused kernel for this device here
            record["skipped"] = f"AdamW cannot run this way here ({error_words(exc)})"
            continue
        try:
            if c.compiled:
                torch._dynamo.reset()
            fn = torch.compile(net) if c.compiled else net

            def step(fn=fn, opt=opt):
                fn(idx, targets).backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
            start = time.perf_counter()
            step()                                          # compiles here, outside the timing
            dev.synchronize()
            one = time.perf_counter() - start
            timing = wall_time_per_call(step, backend, budget=max(budget, min(3 * one, 5 * budget)))
            costs = step_costs(step, dev)
        except Exception as exc:  # noqa: BLE001 - out of memory, or no compiler toolchain
            if not (is_out_of_memory(exc) or c.compiled):
                raise
            free_memory()
            record["skipped"] = (f"{'the step ran out of memory' if is_out_of_memory(exc) else 'torch.compile failed here'}"
                                 f" ({error_words(exc)})")
            continue
        finally:
            opt.zero_grad(set_to_none=True)
        seconds = timing["seconds"]
        record.update({**timing, "tokens_per_second": batch * seq / seconds, "flops": flops["total"],
                       "flops_per_second": flops["total"] / seconds, "peak_flops": peak["flops"],
                       "mfu": flops["total"] / seconds / peak["flops"] if dtype in peak["dtypes"] else None,
                       "compile_seconds": one if c.compiled else None, "costs": costs,
                       "regime": None, "regime_shares": {}})
        if c.profiled:
            try:
                shares = regime_shares(profile(net, idx, targets, backward=True, budget=profile_budget))
                record.update(regime=max(shares, key=shares.get) if shares else None, regime_shares=shares)
            except Exception as exc:  # noqa: BLE001 - the recorded tensors fill the GPU
                if not is_out_of_memory(exc):
                    raise
                free_memory()
                record["profile_skipped"] = f"the profile ran out of memory ({error_words(exc)})"
        del opt, step
    model.use_sdpa(False)
    if dev.on_gpu:
        torch.cuda.empty_cache()
    return result


def cost_shares(record) -> dict:
    """{class: share of the traced step's time}, largest first, of a record with ``costs``."""
    costs = record.get("costs") or {}
    total = sum(costs.values())
    if total <= 0 or not math.isfinite(total):
        return {}
    return {k: v / total for k, v in sorted(costs.items(), key=lambda kv: -kv[1])}


def train_table(result):
    """The configurations for the page: time per step, tokens/s, achieved FLOP/s, MFU (the peak
    named in the header) and each cost class's share of the traced step (None where a run has no
    training records)."""
    import pandas as pd
    from ..book import table as styled
    from ..mfu import mfu, mfu_column
    from ..units import format_rate
    if result is None:
        return None
    header = mfu_column(result)
    rows = []
    for r in result.records:
        skipped = r.get("skipped")
        shares = cost_shares(r)
        rows.append({"configuration": r["label"], "dtype": r["dtype"], "tokens per step": r["tokens"],
                     "time per step": None if skipped else r["seconds"],
                     "tokens/s": None if skipped else r["tokens_per_second"],
                     "achieved": "skipped" if skipped else format_rate(r["flops_per_second"]),
                     header: None if skipped else mfu(result, r),
                     **{f"time in {k}": shares.get(k) for k in COST_CLASSES}})
    formats = {"tokens per step": "int", "time per step": "time", "tokens/s": "int", header: "percent",
               **{f"time in {k}": "percent" for k in COST_CLASSES}}
    return styled(pd.DataFrame(rows), formats)
