"""Chapter 7, diagnosing a model: the remedies, each measured and returned as a Result.

The profiles themselves come from :func:`brrr.profile` (a pandas table per model);
what is here measures the three remedies the chapter applies to the small
transformer block, one per regime:

* :func:`compile_remedy`: memory-bound operators, fused by ``torch.compile``;
* :func:`brrr.experiments.batch_remedy`: overhead-bound operators, given more work per call;
* :func:`precision_remedy`: compute-bound matmuls, in a lower-precision dtype.

:func:`sizes` holds the chapter's sizes (smaller in quick mode).
"""
from __future__ import annotations

import copy
import time
from typing import Optional, Sequence

from .. import config
from ..device import provenance
from ..results import Result


ROW_FIELDS = ["op", "module", "category", "dtype", "calls", "flops", "nbytes", "seconds", "roofline_seconds"]


def sizes(quick: Optional[bool] = None) -> dict:
    """The chapter's sizes: the small block's ``batch`` and ``seq`` (tokens = batch x seq),
    ResNet-18's input side ``image`` (pixels), and the batch remedy's ``batches`` of
    sequences of ``batch_seq`` tokens (the larger batch big enough that a GPU's matmul rows outgrow
    the fixed cost of a call, so the remedy can move rows out of the overhead regime). Smaller in
    quick mode."""
    quick = config.quick_mode() if quick is None else quick
    if quick:
        return {"batch": 2, "seq": 64, "image": 64, "batches": (1, 8), "batch_seq": 16}
    return {"batch": 8, "seq": 128, "image": 224, "batches": (1, 256), "batch_seq": 16}


def compile_remedy(model, *inputs, budget: Optional[float] = None) -> Result:
    """Time ``model(*inputs)`` eagerly and compiled with ``torch.compile`` (no autograd).

    Each is timed as a user's loop runs it, back to back on the host's clock
    (:func:`brrr.experiments.wallclock.wall_time_per_call`; ``meta['clock']`` 'host'). Compiling
    needs a working compiler toolchain; where it fails, the result has only the eager
    record and ``meta['error']`` says why. Records: variant ('eager', 'torch.compile'),
    seconds (median per call), iqr_seconds. Meta: compiled (bool), compile_seconds
    (the first compiled call, which compiles), error.
    """
    import torch
    from ..device import device as live
    from .wallclock import wall_time_per_call
    backend, budget = live().backend, budget or 0.2
    result = Result("compile_block", meta=provenance(
        "brrr.experiments.compile_remedy(model, x)", model=type(model).__name__,
        input_shapes=[list(x.shape) for x in inputs], quick=config.quick_mode(),
        compiled=False, compile_seconds=None, error="", clock="host"))
    with torch.no_grad():
        eager = wall_time_per_call(lambda: model(*inputs), backend, budget=budget)
        result.records.append({"variant": "eager", "seconds": eager["seconds"], "iqr_seconds": eager["iqr_seconds"]})
        try:
            fused = torch.compile(model)
            start = time.perf_counter()
            fused(*inputs)                                  # compiles now, outside the timing
            result.meta["compile_seconds"] = time.perf_counter() - start
            compiled = wall_time_per_call(lambda: fused(*inputs), backend, budget=budget)
        except Exception as exc:  # noqa: BLE001 - no compiler, unsupported platform: said in meta
            result.meta["error"] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}"
        else:
            result.meta["compiled"] = True
            result.records.append({"variant": "torch.compile", "seconds": compiled["seconds"],
                                   "iqr_seconds": compiled["iqr_seconds"]})
    return result


def batch_remedy(layer, batches: Sequence[int] = None, seq: int = None, device=None) -> Result:
    """Profile a transformer ``layer`` (:class:`brrr.transformer.EncoderLayer`) on
    ``batches`` sequences of ``seq`` tokens each, and see what a bigger batch does.

    Records, one per batch: batch, tokens, ops (rows of the profile), overhead_ops
    (rows whose regime is overhead-bound), overhead_time_share (their share of the
    summed replayed time), model_seconds (one whole run; model_iqr_seconds, its IQR), seconds_per_token,
    overhead_seconds (the fixed cost per call the regimes used), model_clock ('host': the whole run
    timed back to back), matmul_intensity (FLOPs per byte of the matmul rows together: their weights
    are read once per call, whatever the batch), rows (the profile's rows, :data:`ROW_FIELDS` of each,
    to judge again with the page's fixed cost).
    """
    from ..profiler import profile
    from ..transformer import encoder_input
    s = sizes()
    batches = tuple(batches or s["batches"])
    seq = seq or s["batch_seq"]
    if any(isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in batches):
        raise ValueError(f"batches must be positive integers, got {batches!r}")
    result = Result("profile_batches", meta=provenance(
        f"brrr.experiments.batch_remedy(layer, batches={batches}, seq={seq})", seq=seq,
        quick=config.quick_mode(), training=bool(layer.training)))
    if device is None:   # the inputs go where the layer's weights are
        device = next(layer.parameters()).device
    for batch in batches:
        table = profile(layer, encoder_input(layer, batch=batch, seq=seq, device=device))
        over = table.regime == "overhead-bound"
        total = table.seconds.sum()
        mm = table[table.category == "matmul"]
        result.records.append({
            "batch": batch, "tokens": batch * seq, "ops": int(len(table)), "overhead_ops": int(over.sum()),
            "overhead_time_share": float(table.seconds[over].sum() / total) if total > 0 else float("nan"),
            "model_seconds": table.attrs["model_seconds"],
            "model_iqr_seconds": table.attrs.get("model_iqr_seconds"),
            "seconds_per_token": table.attrs["model_seconds"] / (batch * seq),
            "overhead_seconds": table.attrs["overhead_seconds"], "model_clock": table.attrs.get("model_clock"),
            "replay_floor_seconds": table.attrs.get("replay_floor_seconds"),
            "matmul_intensity": float(mm.flops.sum() / mm["nbytes"].sum()) if len(mm) else float("nan"),
            "rows": table[ROW_FIELDS].to_dict("records")})
    return result


def low_precision_dtype(backend: str) -> str:
    """The low-precision dtype the chapter tries: float16 on a GPU (tensor cores), bfloat16
    on a CPU (where float16 matmuls are rarely supported natively)."""
    return "float16" if backend == "cuda" else "bfloat16"


def _native_bf16() -> Optional[bool]:
    """Whether this CPU has bfloat16 dot-product instructions (oneDNN's check), if PyTorch says."""
    try:
        import torch
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except Exception:  # noqa: BLE001 - an older PyTorch, or a build without oneDNN
        return None


def precision_remedy(layer, x, base=None, dtype: Optional[str] = None) -> Result:
    """Profile ``layer`` on ``x`` in float32 (or take ``base``, its float32 profile) and a
    copy of it in ``dtype`` (default :func:`low_precision_dtype`), and compare.

    Records, one per dtype: dtype, matmul_seconds (summed replayed time of the matmul
    rows), matmul_roofline_seconds, seconds (all rows), nbytes (all rows), flops,
    model_seconds (one whole run; model_iqr_seconds, its IQR). Meta: backend, native_bf16 (a CPU's bfloat16
    instructions, where PyTorch can tell).
    """
    import torch
    from ..device import device as live
    from ..profiler import profile
    backend = live().backend
    dtype = dtype or low_precision_dtype(backend)
    if dtype not in ("float16", "bfloat16"):
        raise ValueError(f"dtype must be 'float16' or 'bfloat16', got {dtype!r}")
    base = profile(layer, x) if base is None else base
    low = copy.deepcopy(layer).to(getattr(torch, dtype))
    low_table = profile(low, x.to(getattr(torch, dtype)))
    result = Result("profile_precision", meta=provenance(
        f"brrr.experiments.precision_remedy(layer, x, dtype={dtype!r})", backend=backend,
        low_dtype=dtype, native_bf16=_native_bf16() if backend == "cpu" else None,
        quick=config.quick_mode()))
    for name, table in (("float32", base), (dtype, low_table)):
        mm = table[table.category == "matmul"]
        result.records.append({
            "dtype": name, "matmul_seconds": float(mm.seconds.sum()),
            "matmul_roofline_seconds": float(mm.roofline_seconds.sum()),
            "seconds": float(table.seconds.sum()), "nbytes": float(table["nbytes"].sum()),
            "flops": float(table.flops.sum()), "model_seconds": table.attrs["model_seconds"],
            "model_iqr_seconds": table.attrs.get("model_iqr_seconds"), "model_clock": table.attrs.get("model_clock")})
    return result

# --- the page's fixed cost of a call ---------------------------------------------------------

PROFILES = ("profile_block", "profile_bert", "profile_train", "profile_eval", "profile_resnet18")


def call_costs(samples: int = 7) -> Result:
    """The fixed cost of one PyTorch call on the live device (:func:`brrr.profiler.dispatch_overhead`),
    measured ``samples`` times one after another; the page judges every row with their median.
    Records: seconds."""
    from ..profiler import dispatch_overhead
    result = Result("call_costs", meta=provenance("brrr.experiments.diagnosis.call_costs()", samples=samples,
                                                  quick=config.quick_mode()))
    result.records = [{"seconds": dispatch_overhead()} for _ in range(samples)]
    return result


def page_call_cost() -> Optional[Result]:
    """The page's fixed cost of a call, decided once: live, :func:`call_costs` (recorded as
    'call_costs'); replayed, that record, or, in a set made before the page measured it, the fixed
    cost each of the set's profiles measured for itself, one record each (``meta['from_profiles']``);
    None where the set has neither."""
    from .. import reference
    runs = reference.replay_runs()
    if not runs or "call_costs" in runs:
        return reference.measure("call_costs", call_costs)
    found = [(n, runs[n].meta.get("attrs", {}).get("overhead_seconds")) for n in PROFILES if n in runs]
    found += [("profile_batches", r.get("overhead_seconds")) for r in getattr(runs.get("profile_batches"), "records", [])]
    records = [{"seconds": float(s), "profile": n} for n, s in found if s]
    if not records:
        return None
    first = runs[records[0]["profile"]].meta
    return Result("call_costs", records=records, meta={"device": first.get("device", {}), "date": first.get("date", ""),
                                                       "from_profiles": True})


def rows(table, op: str):
    """A profile's rows of operator ``op`` (None for None: a replayed set without that profile)."""
    return None if table is None else table[table.op == op]


def median_seconds(result: Optional[Result]) -> Optional[float]:
    """The median of a result's ``seconds`` (None for None)."""
    import numpy as np
    return None if result is None else float(np.median([r["seconds"] for r in result.records]))

# --- the remedies as tables for the page -----------------------------------------------------

def _ref_header(run, what: str) -> str:
    from ..profiler.reports import short_device_name
    return f"{what}, {short_device_name(run)} (reference)"


def _clocked(run: Result, header: str) -> str:
    """A whole-run column's header, marked where a GPU's run timed it with older code's clock, not back to back on
    the host's (:func:`~brrr.experiments.diagnosis_records.host_clocked`): the page compares none of those times."""
    from .diagnosis_records import backend, host_clocked, whole_run
    old = not all(host_clocked(whole_run(r)[2], backend(run)) for r in run.records)
    mark = "older clock: not compared"
    return (f"{header[:-1]}, {mark})" if header.endswith(")") else f"{header} ({mark})") if old else header


def compile_table(result: Result, references=()):
    """Eager and compiled time per call and its IQR, this run beside each reference run."""
    import pandas as pd
    from ..book import table as styled
    if result is None:
        return None
    variants = ["eager", "torch.compile"]

    def times(run, field="seconds"):
        got = {r["variant"]: r.get(field) for r in run.records}
        return [got.get(v) for v in variants]
    call, iqr = _clocked(result, "time per call, this run"), _clocked(result, "IQR, this run")
    out = pd.DataFrame({"variant": variants, call: times(result), iqr: times(result, "iqr_seconds")})
    formats = {call: "time", iqr: "time"}
    for run in references or ():
        header = _clocked(run, _ref_header(run, "time per call"))
        out[header] = times(run)
        formats[header] = "time"
    return styled(out, formats)


def batches_table(result: Result, references=()):
    """The batch remedy per batch: tokens, the matmuls' FLOPs per byte, the whole model's time and
    the time per token; each reference's time per token beside. (The regimes of its rows are the
    page's to judge, with the page's fixed cost: :mod:`brrr.prose.diagnosis`.)"""
    import pandas as pd
    from ..book import table as styled
    if result is None:
        return None
    f, whole, per = pd.DataFrame(result.records), _clocked(result, "whole model"), _clocked(result, "time per token")
    out = pd.DataFrame({"batch (sequences)": f.batch, "tokens": f.tokens, "matmul FLOP/byte": f.matmul_intensity,
                        whole: f.model_seconds, per: f.seconds_per_token})
    formats = {"batch (sequences)": "int", "tokens": "int", "matmul FLOP/byte": "number", whole: "time", per: "time"}
    for run in references or ():
        got = {r["batch"]: r["seconds_per_token"] for r in run.records}
        header = _clocked(run, _ref_header(run, "time per token"))
        out[header] = [got.get(b) for b in f.batch]
        formats[header] = "time"
    return styled(out, formats)


def precision_table(result: Result, references=()):
    """float32 against the low-precision dtype: matmul time (replayed) and its roofline time,
    all rows, bytes moved and the whole model; each reference's matmul time beside."""
    import pandas as pd
    from ..book import table as styled
    if result is None:
        return None
    f, whole = pd.DataFrame(result.records), _clocked(result, "whole model")
    out = pd.DataFrame({"dtype": f.dtype, "matmul time": f.matmul_seconds,
                        "matmul roofline time": f.matmul_roofline_seconds, "all rows": f.seconds,
                        "bytes moved": f["nbytes"], whole: f.model_seconds})
    formats = {"matmul time": "time", "matmul roofline time": "time", "all rows": "time",
               "bytes moved": "bytes", whole: "time"}
    for run in references or ():
        recs = run.records
        header = _ref_header(run, f"matmul time ({recs[0]['dtype']}, {recs[-1]['dtype']})")
        out[header] = [r["matmul_seconds"] for r in recs][:len(out)]
        formats[header] = "time"
    return styled(out, formats)
