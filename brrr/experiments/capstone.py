"""Chapter 8, making one model go brrr: a GPT-2-style decoder (:mod:`brrr.gpt`) taken step by step.

Each step adds one change to the last configuration that ran (He, 2022):

``eager`` (float32, one short sequence per call); ``batch`` (a large batch); ``tf32`` (TF32 tensor
cores); ``autocast`` (to bfloat16, float16 on an older GPU); ``cast`` (the weights cast once instead);
``sdpa`` (``scaled_dot_product_attention``); ``vocab`` (padded to a multiple of 64); ``ridge`` (the
batch at which every weight matmul reaches the ridge, :func:`ridge_tokens`); ``compile``
(``torch.compile``, once); ``graphs`` (the compiled pass captured as a CUDA graph; GPU only).

:func:`run_steps` times every step (forward passes under ``torch.no_grad()``, wall clock,
:func:`brrr.experiments.wallclock.wall_time_per_call`), counts its FLOPs
(:func:`brrr.gpt.forward_flops`, of the unpadded model: padding adds work, not model FLOPs),
divides by one peak for every step (MFU, :func:`table_peak`) and profiles the step's operators
with :func:`brrr.profile` to find the regime that takes most of the time. A step that cannot run
here is a record with a ``skipped`` reason. :func:`steps_table` shows the records on the page.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional

from .. import config
from ..mfu import mfu, mfu_column, mfu_peak, table_peak  # noqa: F401 (public here too)
from ..device import provenance
from ..results import Result
from .capstone_rows import judged, regime_shares, summary as profile_parts  # noqa: F401 (public here too)
from .capstone_ridge import LINEAR_SHAPES, ridge_batch, ridge_tokens  # noqa: F401 (step 8, public here too)


@dataclass(frozen=True)
class Step:
    """One step of the chapter: the one setting it changes, as ``change``, pairs of (setting,
    value) of :data:`START`: 'batch' ('small', 'large': keys of :func:`brrr.gpt.sizes`; 'ridge':
    :func:`ridge_tokens`), 'tf32' (bool), 'autocast' (bool), 'weights' ('float32' or 'low': the
    autocast dtype), 'sdpa' (bool), 'vocab' ('exact' or 'padded'), 'compile' (None or 'default')
    and 'graphs' (bool)."""
    key: str
    label: str
    change: tuple = ()


STEPS = (
    Step("eager", "eager FP32"),
    Step("batch", "large batch", (("batch", "large"),)),
    Step("tf32", "TF32 matmuls", (("tf32", True),)),
    Step("autocast", "low-precision autocast", (("autocast", True),)),
    Step("cast", "weights cast once", (("autocast", False), ("weights", "low"))),
    Step("sdpa", "SDPA attention", (("sdpa", True),)),
    Step("vocab", "vocabulary padded to 64", (("vocab", "padded"),)),
    Step("ridge", "batch at the ridge", (("batch", "ridge"),)),
    Step("compile", "torch.compile", (("compile", "default"),)),
    Step("graphs", "CUDA graphs", (("graphs", True),)),
)
STEP_KEYS = tuple(s.key for s in STEPS)


def autocast_dtype(backend: str) -> str:
    """The autocast dtype: bfloat16, except float16 on a GPU without bfloat16 tensor cores (compute
    capability below 8.0, such as a T4: ``torch.cuda.is_bf16_supported()`` says True there too, since
    the type can be stored, but its matmuls would be emulated)."""
    if backend == "cuda":
        import torch
        return "bfloat16" if torch.cuda.get_device_capability() >= (8, 0) else "float16"
    return "bfloat16"


def autocast(model, dtype: str, device_type: str):
    """``model`` wrapped in a module that calls it inside ``torch.autocast(device_type, dtype)``,
    so that :func:`brrr.profile` sees the casts and the low-precision operators."""
    import torch

    class Autocast(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, idx):
            with torch.autocast(device_type, dtype=getattr(torch, dtype)):
                return self.model(idx)
    return Autocast()


def error_words(exc: Exception) -> str:
    """An exception as a record's reason: its type and the first line of its message (200 characters at most)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:200] if lines else ''}"


def _native_bf16() -> Optional[bool]:
    """Whether this CPU has bfloat16 dot-product instructions (oneDNN's check), if PyTorch says."""
    try:
        import torch
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except Exception:  # noqa: BLE001 - an older PyTorch, or a build without oneDNN
        return None


START = {"batch": "small", "tf32": False, "autocast": False, "weights": "float32", "sdpa": False,
         "vocab": "exact", "compile": None, "graphs": False}


def advance(current: dict, step: Step) -> dict:
    """The configuration of ``step``: ``current`` (the configuration kept so far, or
    :data:`START`) with the step's one change made."""
    return {**current, **dict(step.change)}


def _matmul_roof(dev, run: dict, dtype: str):
    """The roofline of a configuration's matmuls in ``dtype``, on tensor cores where the
    configuration uses them (a 16-bit type on a GPU, or TF32)."""
    from ..roofline import Roofline
    tensor = dev.on_gpu and (dtype != "float32" or run["tf32"]) and dev.has_tensor_cores(dtype)
    return Roofline.from_device(dev, dtype=dtype, tensor_cores=tensor)


def cannot_run(step: Step, backend: str, dev=None, cfg=None) -> Optional[str]:
    """Why ``step`` cannot run on ``backend`` (``dev``: the live device, for TF32; ``cfg``: the model,
    for the vocabulary), or None. The ridge step decides in :func:`run_steps` (:func:`ridge_batch`)."""
    if step.key == "graphs" and backend != "cuda":
        return "CUDA graphs record and replay GPU kernel launches; there is no CUDA GPU here"
    if step.key == "tf32" and (backend != "cuda" or dev is None or not dev.has_tensor_cores("float32")):
        return ("TF32 is a mode of NVIDIA tensor cores (Ampere and later); this device has none, so float32 "
                "matmuls stay float32")
    if step.key == "vocab" and cfg is not None:
        from ..gpt import padded
        if padded(cfg).vocab == cfg.vocab:
            return f"the vocabulary, {cfg.vocab:,} tokens, is already a multiple of 64"
    return None


def run_steps(quick: Optional[bool] = None, steps=STEPS, budget: Optional[float] = None,
              profile_budget: Optional[float] = None, profiles: Optional[dict] = None,
              gpu: Optional[bool] = None) -> Result:
    """Run the chapter's steps on the live device and return a Result, one record per step.

    Each step makes its one change to the configuration kept so far, and is measured. The change
    is kept when the time per token did not grow (the first step is always kept); otherwise it is
    undone and the next step builds on the configuration before it, as an engineer would.

    ``quick``: quick-mode sizes (default: :func:`brrr.config.quick_mode`). ``steps``: which of
    :data:`STEPS` to run. ``budget``: seconds of timing per step (default 0.5, 0.2 in quick
    mode; a step whose call is slower gets up to three calls' worth, at most 5 × ``budget``).
    ``profile_budget``: seconds of replay per distinct operator in each profile (default 0.05).
    ``profiles``: a dict to fill with each step's :func:`brrr.profile` table, keyed by step (steps
    that change only compiling share the eager operators' table: the compiler starts from those
    operators). ``gpu``: model sizes for a GPU or a CPU (default: the live device's;
    :func:`brrr.gpt.sizes`).

    Records: step, label, batch, seq, tokens, dtype (of the matmuls), tf32, autocast, weights (their dtype),
    vocab (the head's width), attention ('manual' or 'sdpa'), compile (None or 'default'), graphs,
    seconds (median wall-clock seconds per forward pass), min_seconds, iqr_seconds, floor_seconds,
    calls_per_sample, flops (per forward pass of the unpadded model, :func:`brrr.gpt.forward_flops`),
    tokens_per_second, seconds_per_token, flops_per_second (achieved), peak_flops (the run's one
    peak, :func:`table_peak`, also in ``meta['mfu_peak']``), mfu (flops_per_second / peak_flops;
    None for a dtype that peak does not bound), counted_flops (all operators of the profile,
    :mod:`brrr.profiler.counting`), regime (the one that takes most of the profile's time),
    regime_shares ({regime: share of time}), the profile's parts the worked problems read and its rows
    (:func:`.capstone_rows.summary`; no rows for a step of :data:`COMPILED_ONLY`), compile_seconds (first call of a compiled step),
    backend, builds_on (the step whose configuration this one changed, None for the first), kept
    (whether its change stays), skipped (None, or why the step did not run; a skipped record has
    no times and is not kept). Where a profile runs out of memory the step keeps its times, its
    regime is None and ``profile_skipped`` says why.
    """
    import contextlib
    import copy
    import torch
    from .. import arrays, tf32
    from ..clocks import capture_torch
    from ..device import device as live
    from ..gpt import GPT, forward_flops, padded, sizes as gpt_sizes, tokens
    from ..profiler import profile
    from .common import free_memory, is_out_of_memory
    from .wallclock import wall_time_per_call
    quick = config.quick_mode() if quick is None else quick
    dev = live()
    backend, where = dev.backend, dev.torch_device
    s = gpt_sizes(quick, dev.on_gpu if gpu is None else gpu)
    cfg = s["config"]
    budget = budget or (0.2 if quick else 0.5)
    profile_budget = profile_budget or 0.05
    low = autocast_dtype(backend)
    base = GPT(cfg).eval().to(where)
    models = {("float32", "exact"): base}

    def model_for(run):
        key = (low if run["weights"] == "low" else "float32", run["vocab"])
        if key not in models:
            shape = padded(cfg) if run["vocab"] == "padded" else cfg
            models[key] = (copy.deepcopy(base) if shape == cfg else GPT(shape).eval()).to(
                where, dtype=arrays.torch_dtype(key[0]))
        return models[key]

    result = Result("capstone_steps", meta=provenance(
        f"brrr.experiments.capstone.run_steps(quick={quick})", model=s["name"], n_params=cfg.n_params(),
        config={k: getattr(cfg, k) for k in ("n_layer", "n_head", "d_model", "vocab", "context")},
        small=list(s["small"]), large=list(s["large"]), autocast_dtype=low, grad="torch.no_grad()",
        native_bf16=_native_bf16() if backend == "cpu" else None, quick=quick,
        mfu_peak=table_peak(dev, low), padded_vocab=padded(cfg).vocab))
    tables: dict = {}       # the configuration's eager operators -> profile table, or why there is none
    compiled: dict = {}     # the same key -> the compiled pass and its compile time
    current, kept = START, None     # the configuration kept so far, and its record
    batches = {"small": s["small"][0], "large": s["large"][0]}
    for step in steps:
        reason, run = cannot_run(step, backend, dev, cfg), advance(current, step)
        seq = s["small"][1] if run["batch"] == "small" else s["large"][1]
        dtype = low if run["autocast"] or run["weights"] == "low" else "float32"     # of the matmuls
        if step.key == "ridge" and not reason:
            ridge, reason = ridge_batch(cfg, seq, _matmul_roof(dev, run, dtype), arrays.itemsize(dtype),
                                        batches[current["batch"]] * seq)
            batches["ridge"] = ridge
        batch = batches.get(run["batch"]) or batches[current["batch"]]
        model = model_for(run)
        record = {"step": step.key, "label": step.label, "batch": batch, "seq": seq, "tokens": batch * seq,
                  "backend": backend, "builds_on": kept["step"] if kept else None, "kept": False,
                  "skipped": reason}
        if reason:
            result.records.append(record)
            continue
        record.update(dtype=dtype, tf32=run["tf32"] and dtype == "float32", autocast=run["autocast"], weights=str(model.wte.weight.dtype)[6:],
                      vocab=model.cfg.vocab, attention="sdpa" if run["sdpa"] else "manual",
                      compile=run["compile"], graphs=run["graphs"])
        model.use_sdpa(run["sdpa"])
        idx = tokens(cfg, batch, seq, device=where)
        net = autocast(model, dtype, backend) if run["autocast"] else model
        eager_key = (batch, seq, dtype, record["tf32"], record["weights"], record["vocab"], run["sdpa"],
                     run["autocast"])
        matmul_mode = tf32.setting(torch, "matmul", run["tf32"]) if backend == "cuda" else contextlib.nullcontext()
        with matmul_mode:
            fn, compile_seconds = net, None
            if run["compile"]:
                if eager_key not in compiled:
                    try:
                        torch._dynamo.reset()
                        fast = torch.compile(net, mode=run["compile"])
                        start = time.perf_counter()
                        with torch.no_grad():
                            fast(idx)                           # compiles now, outside the timing
                        dev.synchronize()
                        compiled[eager_key] = (fast, time.perf_counter() - start)
                    except Exception as exc:  # noqa: BLE001 - no compiler toolchain, unsupported platform
                        compiled[eager_key] = (None, f"torch.compile failed here ({error_words(exc)})")
                fn, compile_seconds = compiled[eager_key]
                if fn is None:
                    record["skipped"] = compile_seconds
                    result.records.append(record)
                    continue
            if run["graphs"]:
                def forward(fn=fn, idx=idx):
                    with torch.no_grad():
                        fn(idx)
                try:
                    replay = capture_torch(torch, None, forward, (), 1)
                except RuntimeError as exc:                     # a pass that cannot be captured here
                    record["skipped"] = f"the pass could not be captured as a CUDA graph ({error_words(exc)})"
                    result.records.append(record)
                    continue
                compile_seconds = None                          # any compiling was the step before's

                def call(replay=replay):
                    replay()
            else:
                def call(fn=fn, idx=idx):
                    with torch.no_grad():
                        fn(idx)
            start = time.perf_counter()
            call()
            dev.synchronize()
            one = time.perf_counter() - start                   # a slow step still gets about 3 samples
            timing = wall_time_per_call(call, backend, budget=max(budget, min(3 * one, 5 * budget)))
            if eager_key not in tables:
                try:
                    tables[eager_key] = profile(net, idx, budget=profile_budget)
                except Exception as exc:  # noqa: BLE001 - the recorded tensors of a large model fill the GPU
                    if not is_out_of_memory(exc):
                        raise
                    free_memory()
                    tables[eager_key] = f"the profile ran out of memory ({error_words(exc)})"
        flops = forward_flops(cfg, batch, seq)["total"]
        table = tables[eager_key] if not isinstance(tables[eager_key], str) else None
        if table is None:
            record["profile_skipped"] = tables[eager_key]
        if profiles is not None and table is not None:
            profiles[step.key] = table
        shares = regime_shares(table) if table is not None else {}
        peak = result.meta["mfu_peak"]
        record.update({**timing, "flops": flops,
                       "tokens_per_second": batch * seq / timing["seconds"],
                       "seconds_per_token": timing["seconds"] / (batch * seq),
                       "flops_per_second": flops / timing["seconds"], "peak_flops": peak["flops"],
                       "mfu": flops / timing["seconds"] / peak["flops"] if dtype in peak["dtypes"] else None,
                       "counted_flops": float(table.flops.sum()) if table is not None else None,
                       "regime": max(shares, key=shares.get) if shares else None, "regime_shares": shares,
                       "compile_seconds": compile_seconds, **(profile_parts(table) if table is not None else {})})
        if step.key in COMPILED_ONLY:
            record.pop("rows", None)        # the step before's eager rows: judged there
        record["kept"] = kept is None or record["seconds_per_token"] <= kept["seconds_per_token"]
        result.records.append(record)
        if record["kept"]:
            current, kept = run, record
    base.use_sdpa(False)
    models.clear()
    compiled.clear()
    if dev.on_gpu:
        torch.cuda.empty_cache()
    return result


def by_step(result) -> dict:
    """{step key: record} of a run of :func:`run_steps`."""
    return {r["step"]: r for r in result.records}


def step_seconds(result, key: str) -> Optional[float]:
    """Median seconds of one call of step ``key`` in a run of :func:`run_steps`; None without a run, or where the
    step did not run."""
    record = None if result is None else by_step(result).get(key)
    return None if record is None or record.get("skipped") else record["seconds"]


def previous(result, key: str) -> Optional[dict]:
    """The record of the configuration step ``key`` changed (its ``builds_on``; in a record without
    that field, the last step before it that ran), or None for the first step."""
    records = by_step(result)
    if "builds_on" in records[key]:
        return records.get(records[key]["builds_on"])
    ran = [r for r in result.records[:[r["step"] for r in result.records].index(key)] if not r.get("skipped")]
    return ran[-1] if ran else None


def not_recorded(result) -> list:
    """The chapter's steps (:data:`STEPS`) that a run's record lacks: it was made before they joined."""
    have = by_step(result)
    return [s for s in STEPS if s.key not in have]


def measured(result) -> list:
    """The records of the steps that ran (not skipped), in order."""
    return [r for r in result.records if not r.get("skipped")]


def overall(result) -> dict:
    """The first measured step against the configuration kept at the end (the fastest, by
    construction): speed-up in time per token (first / final), their MFU (:func:`mfu`, None where
    the run's one peak does not bound the dtype), and the labels of the
    changes kept and of those undone."""
    runs = measured(result)
    if not runs:
        raise ValueError("no step of this result ran")
    kept = [r for r in runs if r.get("kept", True)] or runs[:1]
    first, final = runs[0], kept[-1]
    return {"first": first["step"], "last": final["step"], "speedup": first["seconds_per_token"] / final["seconds_per_token"],
            "first_mfu": mfu(result, first), "last_mfu": mfu(result, final),
            "kept": [r["label"] for r in kept[1:]], "undone": [r["label"] for r in runs if not r.get("kept", True)]}


TIE = 0.05     # two regimes' shares of a profile's time within 5 points: neither dominates


COMPILED_ONLY = tuple(s.key for s in STEPS if s.change and set(dict(s.change)) <= {"compile", "graphs"})
"""Steps that change only compiling (or capture the compiled pass): their profile is the eager operators' of the step before
(:func:`brrr.profile` replays eager operators), so it cannot show what compiling changed."""


def profiled(record) -> bool:
    """Whether ``record`` has a profile of its own configuration (ran, was profiled, and is not a
    step of :data:`COMPILED_ONLY`)."""
    return (not record.get("skipped") and record.get("step") not in COMPILED_ONLY
            and bool(record.get("regime_shares")) and record.get("regime") is not None)


def dominant(record) -> Optional[str]:
    """The regime holding the largest share of ``record``'s profiled time, or None where it has no
    profile of its own (:func:`profiled`) or the next share is within :data:`TIE` of it."""
    if not profiled(record):
        return None
    shares = sorted(record["regime_shares"].values(), reverse=True)
    if len(shares) > 1 and shares[0] - shares[1] < TIE:
        return None
    return max(record["regime_shares"], key=record["regime_shares"].get)


def regime_moves(run) -> dict:
    """{'moved' | 'stayed' | 'no one regime': [labels]} of the steps after the first with a profile of their
    own, each against the last configuration before it with one (:func:`dominant`); a mover's label says
    from which regime to which."""
    out = {"moved": [], "stayed": [], "no one regime": []}
    for r in [r for r in measured(run)[1:] if profiled(r)]:
        before = previous(run, r["step"])
        while before is not None and before["step"] in COMPILED_ONLY:
            before = previous(run, before["step"])
        now, then = dominant(r), dominant(before) if before else None
        kind = "no one regime" if None in (now, then) else "moved" if now != then else "stayed"
        out[kind].append(f"{r['label']}, from {then} to {now}" if kind == "moved" else r["label"])
    return out


from .capstone_table import REGIME_COLUMNS, steps_table  # noqa: E402,F401 (the steps' table, public here too)
