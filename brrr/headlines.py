"""The headline numbers of every record set side by side, one row a device (the appendix *Reference measurements*):
copy bandwidth, FP32 and 16-bit matmul rates, the fixed cost of a call, the repeat sweep's knee and the capstone's
tokens per second, each read from that set's own records (None where the set has no record of it)."""
from __future__ import annotations

from typing import Optional

HEADLINES = {                       # column -> (unit, what it is)
    "copy (GB/s)": ("GB/s", "the best copy of the roofline experiment (chapter 2)"),
    "FP32 matmul (TFLOP/s)": ("TFLOP/s", "the best float32 matmul on general math (chapter 2's roofline)"),
    "16-bit matmul (TFLOP/s)": ("TFLOP/s", "the best float16 or bfloat16 matmul on tensor cores (chapter 2's roofline)"),
    "fixed cost of a torch add": ("s", "the fitted fixed cost of a call of chapter 3's time-against-size sweep"),
    "repeat sweep's knee (FLOP/element)": ("FLOP/element", "where chapter 2's x * 2 sweep's time leaves its floor"),
    "capstone (tokens/s)": ("tokens/s", "chapter 8's configuration kept at the end"),
}


def _best(result, kind: str, field: str, keep) -> Optional[float]:
    values = [r[field] for r in (result.records if result is not None else []) if r.get("kind") == kind and keep(r)]
    return max(values) if values else None


def headlines(runs: dict) -> dict:
    """{column of :data:`HEADLINES`: value} of one record set ``runs`` ({experiment: Result}); None where it lacks it."""
    from .experiments import fit_overheads
    from .experiments.capstone import overall
    roof = runs.get("measure_roofline")
    fits = fit_overheads(runs.get("time_vs_size"))
    steps, sweep = runs.get("capstone_steps"), runs.get("pointwise_repeat_sweep")
    final = overall(steps) if steps is not None and any(not r.get("skipped") for r in steps.records) else None
    best = {r["step"]: r for r in steps.records}[final["last"]] if final else None
    fp32 = _best(roof, "compute", "gflops", lambda r: r["dtype"] == "float32" and not r.get("tensor_cores"))
    low = _best(roof, "compute", "gflops", lambda r: r["dtype"] in ("float16", "bfloat16") and r.get("tensor_cores"))
    copy = _best(roof, "bandwidth", "gbps", lambda r: r["op"] == "copy")
    return {"copy (GB/s)": copy, "FP32 matmul (TFLOP/s)": fp32 and fp32 / 1e3,
            "16-bit matmul (TFLOP/s)": low and low / 1e3,
            "fixed cost of a torch add": fits["torch"]["overhead"] if "torch" in fits else None,
            "repeat sweep's knee (FLOP/element)": sweep.meta.get("measured_knee") if sweep is not None else None,
            "capstone (tokens/s)": best["tokens_per_second"] if best else None}


def headline_table(runs_by_set: dict):
    """One row per record set of ``runs_by_set`` (:func:`brrr.reference.record_sets`), GPUs first: the device, the
    dates of its records, and :func:`headlines` (``attrs['headlines']``: :data:`HEADLINES`)."""
    import pandas as pd
    from .reference import set_device
    order = sorted(runs_by_set, key=lambda name: (set_device(runs_by_set[name]).get("backend") != "cuda", name))
    rows = []
    for name in order:
        runs = runs_by_set[name]
        dates = sorted(str(r.meta.get("date", ""))[:10] for r in runs.values())
        rows.append({"device": set_device(runs).get("name", name),
                     "measured": dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}",
                     **headlines(runs)})
    table = pd.DataFrame(rows)
    table.attrs["headlines"] = dict(HEADLINES)      # each column's unit and meaning, for brrr.plot.headlines
    return table
