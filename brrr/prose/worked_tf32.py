"""Chapter 8's worked problem 3, what TF32 can gain over FP32: Amdahl's law on step 2's profile, with the
TF32 and FP32 peaks of this device or of a reference GPU (:func:`tf32_gain`), and step 3's measurement against
that bound (:func:`tf32_check`). The chapter calls them through :mod:`.worked_gpt`."""
from __future__ import annotations

from . import Prose
from . import words as w
from .capstone import _records
from .worked import WITHIN


def _matmul_share(records) -> float:
    """The matmuls' share of the time of a profile (a :func:`brrr.profile` table, or its records)."""
    import pandas as pd
    from ..profiler import category_totals
    table = pd.DataFrame(list(records)) if not isinstance(records, pd.DataFrame) else records
    return float(category_totals(table)["time_share"].get("matmul", 0.0))


def _has_tf32(device: dict) -> bool:
    """Whether a record's device (its ``meta['device']``) is a GPU with a TF32 rate above its FP32 one (a CPU's
    record gives its float32 rate for every 'tensor' peak)."""
    tf32, fp32 = device.get("peak_flops_float32_tensor"), device.get("peak_flops_float32")
    return device.get("backend") == "cuda" and bool(tf32 and fp32) and tf32 > fp32


def tf32_gain(table, dev, references=()) -> Prose:
    """The most step 3 (TF32) can speed up step 2: the matmuls' share f of step 2's profile (``table``; None: none
    ran) gets at most r = TF32 / FP32 peak times faster and the rest keeps its time, so 1 / ((1 − f) + f / r)
    (Amdahl). Where ``dev`` has no TF32, the first of ``references`` (step 2's reference profiles) that has."""
    text = ("TF32 changes only the matmuls, and they can get at most r = TF32 peak / FP32 peak times faster. If the "
            "matmuls take a share f of step 2's time and the rest keeps its time, step 3 is at most "
            "1 / ((1 − f) + f / r) times as fast as step 2.")
    if dev.has_tensor_cores("float32"):
        where, peaks, f = "this device", (dev.peak_flops("float32", tensor_cores=True), dev.peak_flops("float32")), (
            None if table is None or not len(table) else _matmul_share(table))
    else:
        run = next((run for run in references if _has_tf32(run.meta.get("device", {}))), None)
        if run is None:
            return Prose(text + " This device has no TF32 tensor cores, so step 3 does not run here.",
                         {"problem": "tf32 gain", "here": False})
        spec = run.meta["device"]
        where = f"the reference {spec['name']}"
        peaks, f = (spec["peak_flops_float32_tensor"], spec["peak_flops_float32"]), _matmul_share(run.records)
        text += f" This device has no TF32 tensor cores, so step 3 does not run here; on {where}:"
    r = peaks[0] / peaks[1]
    owner = "this device's" if where == "this device" else "its"
    text += f" r = {w.rate(peaks[0])} / {w.rate(peaks[1])} = {w.number(r)} on {owner} spec sheet."
    facts = {"problem": "tf32 gain", "here": where == "this device", "r": r}
    if f is None:
        return Prose(text + " No profile of step 2 ran here, so f is unknown.", facts)
    bound = 1 / ((1 - f) + f / r)
    text += (f" Step 2's profile gives the matmuls f = {w.percent(f)} of its operators' time, so step 3 can be at "
             f"most **{w.times(bound)} as fast** (and no more than {w.times(1 / (1 - f))} even if the matmuls took no "
             "time).")
    return Prose(text, {**facts, "share": f, "bound": bound})


def tf32_check(result, answer: Prose) -> Prose:
    """Step 3's measured speed-up over step 2 (``result``: the chapter's ``capstone_steps``) against the answer's
    bound, and the speed-up of the matmuls alone that it implies."""
    records, f = _records(result), answer.facts
    r3, r2 = records.get("tf32"), records.get("batch")
    if r3 is None or r2 is None:
        return Prose("The run shown here has no record of step 3, so there is no measurement to check the bound "
                     "against.", {"outcome": "no step"})
    if r3.get("skipped"):
        return Prose("Step 3 did not run here (above), so there is no measurement to check the bound against.",
                     {"outcome": "skipped"})
    speedup = r2["seconds"] / r3["seconds"]
    text = f"Step 3 ran {w.times(speedup)} as fast as step 2"
    if "bound" not in f or not f["here"]:
        return Prose(text + ".", {"outcome": "measured", "speedup": speedup})
    share, bound, rest = f["share"], f["bound"], (1 - f["share"]) * r2["seconds"]
    if speedup > bound * (1 + WITHIN):
        outcome = "above"
        text += (f", more than the bound of {w.times(bound)}: so the operators outside the matmuls got faster too, "
                 "or step 2's profile, each operator replayed alone, overstated their share.")
    else:
        outcome = "as predicted" if speedup >= bound * (1 - WITHIN) else "below"
        text += f", {w.percent(speedup / bound)} of the bound of {w.times(bound)}."
        if outcome == "below" and r3["seconds"] > rest:
            mats = share * r2["seconds"] / (r3["seconds"] - rest)
            text += (" Had everything but the matmuls kept its time, the matmuls "
                     + (f"ran {w.times(mats)} as fast" if mats > 1 else "got no faster at all")
                     + f", not the {w.number(f['r'])} of the peaks: compare their TF32 rate with the spec sheet's "
                     "in Chapter 1.")
    return Prose(text, {"outcome": outcome, "speedup": speedup})
