"""Chapter 7's remedies: ``torch.compile`` against eager, a larger batch, a low-precision dtype."""
from __future__ import annotations

import math

from . import Prose, with_references
from . import words as w
from .diagnosis_regimes import frame

NOISY = 0.25           # samples whose IQR exceeds 25% of the median are "noisy"


def _times(result) -> dict:
    return {r["variant"]: r for r in result.records}


def fusable(eval_table) -> dict:
    """Rows that are neither matmuls nor compute-bound: their summed time and share, and how many
    of them each regime labels ({regime: rows})."""
    t = frame(eval_table)
    bound = t[(t.category != "matmul") & (t.regime != "compute-bound")]
    total = t.seconds.sum()
    return {"seconds": float(bound.seconds.sum()), "share": float(bound.seconds.sum() / total) if total > 0 else 0.0,
            "regimes": {str(k): int(v) for k, v in bound.regime.value_counts().items()}}


def _spread(runs) -> str:
    """Each run's IQR beside its median, as the page's evidence of noise."""
    return w.listing(f"{w.seconds(r.get('iqr_seconds', 0))} around {w.seconds(r['seconds'])}" for r in runs)


def _overlap(a, b) -> bool:
    """Whether two timings' medians are closer than half their IQRs together: their spreads overlap."""
    return abs(a["seconds"] - b["seconds"]) < (a.get("iqr_seconds", 0) + b.get("iqr_seconds", 0)) / 2


# --- torch.compile ----------------------------------------------------------------------------

def compile_outcome(result, eval_table, references=()) -> Prose:
    """What torch.compile did to the block against eager (or why it could not run), with the
    budget fusion could win back; the same on each reference GPU."""
    budget = fusable(eval_table)
    labels = w.listing(f"{n} {k}" for k, n in sorted(budget["regimes"].items(), key=lambda kv: -kv[1]))
    text = (f"In inference mode, the rows that are neither matmuls nor compute-bound add up to "
            f"{w.seconds(budget['seconds'])} of replayed time, {w.percent(budget['share'])} of all rows"
            + (f" ({labels} rows)" if labels else "") + ": the replayed time fusing them could shorten. ")
    runs = _times(result)
    eager = runs["eager"]
    facts = {"fusable_share": budget["share"]}
    if "torch.compile" not in runs:
        error = result.meta.get("error") or "no reason recorded"
        text += (f"`torch.compile` failed on this machine ({error}), so there is no fused time to show; "
                 f"one eager run took {w.seconds(eager['seconds'])}.")
        facts["outcome"] = "failed"
    else:
        comp = runs["torch.compile"]
        ratio = eager["seconds"] / comp["seconds"]
        widest = max(r.get("iqr_seconds", 0) / r["seconds"] for r in (eager, comp))   # IQR over median
        noisy = widest > NOISY
        text += f"One eager run took {w.seconds(eager['seconds'])} and a compiled one {w.seconds(comp['seconds'])}"
        if _overlap(eager, comp) and abs(ratio - 1) > w.SAME:
            text += (f": their spreads (IQR {_spread((eager, comp))}) overlap, so this run cannot tell the two "
                     "apart.")
            outcome = "within spread"
        elif ratio > 1 + w.SAME:
            text += f": the compiled block ran {w.times(ratio)} as fast."
            outcome = "faster"
        elif ratio < 1 / (1 + w.SAME):
            text += (f": the compiled block was {w.times(1 / ratio)} slower. `torch.profiler` lists the kernels each "
                     "of the two ran, and `torch._dynamo.explain` whether the block broke into several graphs.")
            outcome = "slower"
        else:
            text += ": about the same."
            outcome = "same"
        if noisy and outcome != "within spread":
            text += (f" The samples spread by up to {w.percent(widest)} of their median (IQR {_spread((eager, comp))}): "
                     "a second run can move each time by as much.")
        facts.update(outcome=outcome, speedup=ratio, noisy=noisy)
    return with_references(Prose(text, facts), references, "this comparison", _reference_compile, shown="table")


def _reference_compile(run) -> Prose:
    r = _times(run)
    if "torch.compile" in r:
        ratio = r["eager"]["seconds"] / r["torch.compile"]["seconds"]
        t = f"{w.reference_intro(run)}, the compiled block ran " + (
            f"{w.times(ratio)} as fast as eager." if ratio > 1 + w.SAME else
            f"{w.times(1 / ratio)} slower than eager." if ratio < 1 / (1 + w.SAME) else "about as fast as eager.")
    else:
        t = f"{w.reference_intro(run)}, `torch.compile` did not run."
    return Prose(t, {f"reference {w.device_of(run)}": r.get("torch.compile", {}).get("seconds")})


# --- a larger batch ---------------------------------------------------------------------------

def batch_remedy(result, references=()) -> Prose:
    """The whole model's time and the time per token at the smallest and largest batch (the table beside
    has the overhead-bound rows)."""
    recs = sorted(result.records, key=lambda r: r["batch"])
    small, big = recs[0], recs[-1]
    seq = result.meta.get("seq") or small["tokens"] // small["batch"]
    gain = small["seconds_per_token"] / big["seconds_per_token"]
    tokens = big["tokens"] / small["tokens"]
    text = (f"With {small['batch']} sequence{'s' if small['batch'] > 1 else ''} of {seq} tokens and with "
            f"{big['batch']}, the whole model took {w.seconds(small['model_seconds'])} and "
            f"{w.seconds(big['model_seconds'])}"
            + (f" (IQR {w.seconds(small['model_iqr_seconds'])} and {w.seconds(big['model_iqr_seconds'])})"
               if small.get("model_iqr_seconds") and big.get("model_iqr_seconds") else "")
            + f", for {w.times(tokens)} the tokens")
    if gain > tokens * (1 + w.SAME):
        text += (f", so the time per token fell {w.times(gain)}, more than the tokens grew: the larger batch's run "
                 "took less time than the small one's, which no cost model allows, so at least one of the two "
                 "medians is off; timing each again with `brrr.bench` tells which.")
        outcome = "fell, noisy"
    elif gain > 1 + w.SAME:
        text += f", so the time per token fell {w.times(gain)}."
        if gain > tokens / 2:
            text += (" That is close to the growth in tokens: at the small batch the time was almost all cost "
                     "that does not grow with the batch.")
        outcome = "fell"
    else:
        text += f", so the time per token did not fall on this run ({w.number(gain)} times)."
        outcome = "did not fall"
    if big["overhead_ops"] == big["ops"]:
        text += f" Every row stayed overhead-bound at {big['batch']} sequences."
    i1, i2 = small.get("matmul_intensity"), big.get("matmul_intensity")
    if i1 and i2 and math.isfinite(i1) and math.isfinite(i2):
        text += (f" The matmuls' intensity rose from {w.number(i1)} to {w.number(i2)} FLOP/byte: each reads its "
                 "weights once per call, whatever the batch.")
    facts = {"outcome": outcome, "gain": gain, "tokens_ratio": tokens,
             "overhead_ops": (small["overhead_ops"], big["overhead_ops"])}
    return with_references(Prose(text, facts), references, "this comparison", _reference_batches, shown="table")


def _reference_batches(run) -> Prose:
    rr = sorted(run.records, key=lambda r: r["batch"])
    g = rr[0]["seconds_per_token"] / rr[-1]["seconds_per_token"]
    t = (f"{w.reference_intro(run)}, {rr[0]['overhead_ops']} of {rr[0]['ops']} rows were overhead-bound at a "
         f"batch of {rr[0]['batch']} and {rr[-1]['overhead_ops']} of {rr[-1]['ops']} at {rr[-1]['batch']}, "
         f"and the time per token " + (f"fell {w.times(g)}." if g > 1 + w.SAME else "did not fall."))
    return Prose(t, {f"reference {w.device_of(run)}": g})


# --- low precision ----------------------------------------------------------------------------

def precision(result, references=()) -> Prose:
    """What the low-precision dtype did to the bytes, the matmuls and the whole block."""
    f32, low = result.records[0], result.records[-1]
    name = low["dtype"]
    bytes_ratio = f32["nbytes"] / low["nbytes"]
    mm = f32["matmul_seconds"] / low["matmul_seconds"]
    roof = f32["matmul_roofline_seconds"] / low["matmul_roofline_seconds"]
    whole = f32["model_seconds"] / low["model_seconds"]
    rows = f32["seconds"] / low["seconds"]
    fewer = "half the bytes" if abs(bytes_ratio - 2) < 0.05 else f"{w.times(bytes_ratio)} fewer bytes"
    text = (f"In `{name}` the block's operators move {fewer} they move in float32. Its matmuls took "
            f"{w.seconds(low['matmul_seconds'])} against {w.seconds(f32['matmul_seconds'])} in float32")
    if mm > 1 + w.SAME:
        text += f": {w.times(mm)} as fast."
        outcome = "faster"
    elif mm < 1 / (1 + w.SAME):
        text += f": {w.times(1 / mm)} slower."
        outcome = "slower"
    else:
        text += ": about as fast."
        outcome = "same"
    if roof > 1 + w.SAME:
        text += (f" The roofline, with this device's {name} roof, put them up to {w.times(roof)} as fast; the "
                 f"{name} matmuls took {w.times(low['matmul_seconds'] / low['matmul_roofline_seconds'])} their "
                 "roofline time, against "
                 f"{w.times(f32['matmul_seconds'] / f32['matmul_roofline_seconds'])} in float32: the {name} "
                 "profile's rows show which regime now limits them.")
    else:
        text += (f" The roofline expected no faster matmuls: `brrr` knows no separate {name} peak for this "
                 "device, so only the halved bytes count.")
    native = result.meta.get("native_bf16")
    if w.is_cpu(result) and native is not None:
        text += (" This CPU has bfloat16 dot-product instructions, so its matmul kernels can multiply bfloat16 "
                 "directly." if native else " This CPU has no bfloat16 dot-product instructions (oneDNN reports "
                 "none), so the matmul kernels convert every element to float32 before multiplying.")
    text += (f" All its rows together took {w.seconds(low['seconds'])} against {w.seconds(f32['seconds'])}: "
             + (f"{w.times(rows)} as fast." if rows > 1 + w.SAME else
                f"{w.times(1 / rows)} slower." if rows < 1 / (1 + w.SAME) else "about as fast."))
    facts = {"outcome": outcome, "matmul_speedup": mm, "bytes_ratio": bytes_ratio, "model_speedup": whole,
             "rows_speedup": rows,
             "roofline_speedup": roof}
    return with_references(Prose(text, facts), references, "this comparison", _reference_precision, shown="table")


def _reference_precision(run) -> Prose:
    a, z = run.records[0], run.records[-1]
    r = a["matmul_seconds"] / z["matmul_seconds"]
    t = (f"{w.reference_intro(run)}, the {z['dtype']} matmuls ran "
         + (f"{w.times(r)} as fast as float32" if r > 1 + w.SAME else
            f"{w.times(1 / r)} slower than float32" if r < 1 / (1 + w.SAME) else "about as fast as float32")
         + ".")
    return Prose(t, {f"reference {w.device_of(run)}": r})
