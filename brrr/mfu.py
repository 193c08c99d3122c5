"""MFU: a run's achieved FLOP/s over one named peak, the same for every row of its table.

:func:`table_peak` picks that peak for a device, :func:`mfu_peak` reads it back from a run
(``meta['mfu_peak']``, or, for records made before it, the highest of their per-dtype peaks),
and :func:`mfu` takes one record's MFU against it: None where the peak does not bound the
record's dtype, so that no MFU exceeds 100%.
"""
from __future__ import annotations

from typing import Optional


def table_peak(dev, low: str) -> dict:
    """The one peak every step's MFU is taken against, so that the steps' MFU compare:
    {'flops': FLOP/s, 'name': what it is, 'dtypes': the step dtypes it bounds}.

    Where the device has tensor cores for ``low`` (the autocast dtype), their peak, which bounds
    float32 (and TF32) arithmetic too. Elsewhere (a CPU, a GPU without them) the float32 peak (on a
    CPU, a float32 matmul measured by :mod:`brrr.cpu_peaks`), which does not bound a 16-bit step:
    those steps get no MFU rather than one above 100%."""
    if dev.spec is not None and dev.has_tensor_cores(low):
        return {"flops": dev.peak_flops(low, tensor_cores=True), "name": f"the {low} tensor-core peak",
                "dtypes": ["float32", low]}
    name = "the float32 matmul rate measured on this CPU" if dev.spec is None else "the float32 peak"
    return {"flops": dev.peak_flops("float32"), "name": name, "dtypes": ["float32"]}


def mfu_peak(result) -> dict:
    """The peak of :func:`table_peak` a result's MFU is taken against. Records made before it
    (one peak per step's dtype) give the highest of their peaks, and the dtypes it bounds: those
    whose own peak is lower, and its own dtype where only one dtype had it."""
    if result.meta.get("mfu_peak"):
        return result.meta["mfu_peak"]
    ran = [r for r in result.records if not r.get("skipped") and r.get("peak_flops")]
    if not ran:
        return {"flops": None, "name": "no peak", "dtypes": []}
    top = max(r["peak_flops"] for r in ran)
    at_top = sorted({r["dtype"] for r in ran if r["peak_flops"] == top})
    one = at_top if len(at_top) == 1 else [d for d in at_top if d == "float32"]
    return {"flops": top, "name": f"the {one[0] if one else 'float32'} peak",
            "dtypes": sorted({r["dtype"] for r in ran if r["peak_flops"] < top} | set(one))}


def mfu(result, record) -> Optional[float]:
    """``record``'s achieved FLOP/s over the run's one peak (:func:`mfu_peak`), or None where that
    peak does not bound the step's dtype (or the step did not run)."""
    peak = mfu_peak(result)
    if record.get("skipped") or record.get("dtype") not in peak["dtypes"] or not peak["flops"]:
        return None
    rate = record.get("flops_per_second")
    if rate is None:                                    # hand-made records: their own mfu is on this peak
        return record.get("mfu")
    return rate / peak["flops"]


def mfu_column(result) -> str:
    """The header of a table's MFU column, naming the run's one peak (:func:`mfu_peak`)."""
    from .units import format_rate
    peak = mfu_peak(result)
    return f"MFU (of {peak['name']}, {format_rate(peak['flops'])})" if peak["flops"] else "MFU"
