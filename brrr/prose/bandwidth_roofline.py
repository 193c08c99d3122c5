"""Chapter 2, the roofline: where a device's one roof came from, how the STREAM kernels and the
matmuls sit against its ridge, the reference GPUs' ridges, and a measured roof against the peaks."""
from __future__ import annotations

from . import Prose, with_references
from . import words as w
from .words import ABOVE_ROOF


def device_roof(run):
    """The device's one roof, as saved with ``run``: its spec sheet, else the peaks ``brrr`` holds for it."""
    from ..roofline import Roofline, has_spec_sheet
    summary = run.meta.get("device", {})
    if has_spec_sheet(summary):
        return Roofline.of_run(run)
    return Roofline.from_summary(summary)


def _roof_facts(run) -> dict:
    from ..roofline import has_spec_sheet
    roof = device_roof(run)
    meta = run.meta
    spec = has_spec_sheet(meta.get("device", {}))
    best_bw = max((r for r in run.records if r["kind"] == "bandwidth"), key=lambda r: r["gbps"], default=None)
    general = [r for r in run.records if r["kind"] == "compute" and not r.get("tensor_cores")]
    best_mm = max(general, key=lambda r: r["gflops"], default=None)
    points = [r for r in run.records if r.get("flops") and r.get("nbytes")]
    tensor_peak = max(roof.compute_ceilings.values(), default=roof.peak_flops)

    def attainable(r):  # a tensor-core matmul is judged against the tensor-core ceiling
        peak = max(tensor_peak, roof.peak_flops) if r.get("tensor_cores") else roof.peak_flops
        return min(peak, r["flops"] / r["nbytes"] * roof.peak_bandwidth)
    above = [r for r in points if r["flops"] / r["seconds"] > ABOVE_ROOF * attainable(r)]
    stream = [r["flops"] / r["nbytes"] for r in points if r["kind"] == "bandwidth"]
    mm = [r["flops"] / r["nbytes"] for r in points if r["kind"] == "compute" and not r.get("tensor_cores")]
    return {"roof": roof, "spec": spec, "best_bw": best_bw, "best_mm": best_mm, "above": above,
            "stream_max": max(stream, default=None), "mm_min": min(mm, default=None),
            "tensor": [r for r in run.records if r["kind"] == "compute" and r.get("tensor_cores")]}


def roofline_summary(measured, references=()) -> Prose:
    """Where this run's roof came from, how the kernels and matmuls sit against its ridge,
    and the same for each reference GPU."""
    f = _roof_facts(measured)
    roof, dev = f["roof"], w.device_of(measured)
    if f["spec"]:
        text = (f"{dev} has a spec sheet, so its roof is the spec's: {w.rate(roof.peak_bandwidth, 'B/s')} and "
                f"{w.rate(roof.peak_flops)} (FP32), a ridge at {w.number(roof.ridge)} FLOP/byte. The best "
                f"STREAM kernel here moved {w.rate(f['best_bw']['gbps'] * 1e9, 'B/s')} "
                f"({w.percent(f['best_bw']['gbps'] * 1e9 / roof.peak_bandwidth)} of the spec) and the best FP32 "
                f"matmul{_sizes(measured)} did {w.rate(f['best_mm']['gflops'] * 1e9)} "
                f"({w.percent(f['best_mm']['gflops'] * 1e9 / roof.peak_flops)}).")
    else:
        cpu = w.is_cpu(measured)
        where = ("the one `brrr` measured on it once and cached, which every chapter uses for it: "
                 f"{w.rate(roof.peak_bandwidth, 'B/s')} (a NumPy copy on one thread) and "
                 f"{w.rate(roof.peak_flops)} (a float32 NumPy matmul)" if cpu else
                 "the peaks `brrr` derived from its properties (clock rates, SM count, memory bus): "
                 f"{w.rate(roof.peak_bandwidth, 'B/s')} and {w.rate(roof.peak_flops)}")
        text = (f"{dev} has no spec sheet in `brrr`, so its roof is {where}, a ridge at {w.number(roof.ridge)} "
                f"FLOP/byte. This experiment's best STREAM kernel ({f['best_bw']['op']}, "
                f"{f['best_bw']['library']}) moved {w.rate(f['best_bw']['gbps'] * 1e9, 'B/s')} "
                f"({w.percent(f['best_bw']['gbps'] * 1e9 / roof.peak_bandwidth)} of that roof's bandwidth) and "
                f"its best float32 matmul did {w.rate(f['best_mm']['gflops'] * 1e9)} "
                f"({w.percent(f['best_mm']['gflops'] * 1e9 / roof.peak_flops)} of its FLOP/s).")
        if cpu:
            text += (" It is a measured roof, not a hardware peak: a kernel can sit above it, and the hardware "
                     "may be capable of more.")
    text += _tensor_sentence(measured, f)
    facts = {"spec": f["spec"], "ridge": roof.ridge, "above_roof": len(f["above"])}
    if f["stream_max"] is not None:
        left = f["stream_max"] < roof.ridge
        facts["stream_left_of_ridge"] = left
        text += (" Every STREAM kernel sits left of the ridge, where the roofline's bound is the slanted "
                 "bandwidth roof." if left else " Some STREAM kernel sits right of the ridge: the peaks are suspect.")
        if left:
            off, said = _stream_shares(measured, roof)
            facts["stream_below_roof"] = off
            text += said
    if f["mm_min"] is not None:
        right = f["mm_min"] > roof.ridge
        facts["matmuls_right_of_ridge"] = right
        text += (" The matmuls sit right of it, where the flat compute roof applies." if right else
                 " Not every matmul clears the ridge: the smaller ones do too few FLOPs per byte to be "
                 "compute-bound here.")
    if f["above"]:
        names = ", ".join(f"{r['op']} ({r['library']})" for r in f["above"])
        text += (f" {names} measured above the roof: "
                 + ("either its bytes came from a cache or the spec sheet understates the part."
                    if f["spec"] or not w.is_cpu(measured) else
                    "the roof is itself one measurement (one copy and one matmul), not a hardware limit."))
    return with_references(Prose(text, facts), references, "the roofline experiment",
                           lambda run: _reference_roof(run, roof))


def _sizes(run) -> str:
    """' (n up to 8,192)': the largest general-math matmul this experiment timed."""
    sizes = [r["size"] for r in run.records if r["kind"] == "compute" and not r.get("tensor_cores") and r.get("size")]
    return f" (n up to {w.integer(max(sizes))})" if sizes else ""


def _stream_shares(run, roof) -> tuple:
    """Each STREAM kernel's share of the bandwidth roof, which did not reach ON_ROOF of it, and a pair of
    one library whose time followed the elements, not the bytes."""
    stream = [r for r in run.records if r["kind"] == "bandwidth"]
    share = lambda r: r["gbps"] * 1e9 / roof.peak_bandwidth  # noqa: E731
    name = lambda r: f"`{r['op']}` ({r['library']})"  # noqa: E731
    text = (" Measured, they reached " + w.listing(f"{name(r)} {w.percent(share(r))}" for r in stream)
            + " of the roof's bandwidth.")
    off = [r for r in stream if share(r) < w.ON_ROOF]
    if not off:
        return [], text + " All of them sit close to the slanted roof: memory-bound."
    one = len(off) == 1
    text += (f" Below {w.percent(w.ON_ROOF)} of it, not on the roof, {'is' if one else 'are'} "
             f"{w.listing(name(r) for r in off)}: the bytes alone do not account for {'its' if one else 'their'} time.")
    per_element = lambda r: r["seconds"] / r["size"]  # noqa: E731
    pairs = [(a, b) for a in off for b in stream if a["library"] == b["library"] and a["nbytes"] / a["size"]
             < b["nbytes"] / b["size"] and abs(per_element(b) / per_element(a) - 1) < w.SAME]
    if pairs:
        a, b = pairs[0]
        text += (f" {name(b)} moves {w.times((b['nbytes'] / b['size']) / (a['nbytes'] / a['size']))} the bytes "
                 f"per element of {name(a)}, yet took about the same time per element: their time followed "
                 "the element count, not the traffic.")
    else:
        text += (" Timing the same operation with `brrr.kernels`, or with twice the bytes per element, would "
                 "show whether the memory or the library's kernel sets its pace.")
    return [name(r) for r in off], text


def _reference_roof(run, roof) -> Prose:
    """A reference run's ridge against this run's ``roof``, and what its kernels reached."""
    r = _roof_facts(run)
    rr = r["roof"]
    t = (f"{w.reference_intro(run)}, the {'spec' if r['spec'] else 'measured'} ridge is at "
         f"{w.number(rr.ridge)} FLOP/byte for FP32, {w.relative(rr.ridge, roof.ridge)}.")
    if r["spec"] and r["best_bw"] and r["best_mm"]:
        t += (f" Its best STREAM kernel reached {w.percent(r['best_bw']['gbps'] * 1e9 / rr.peak_bandwidth)} "
              f"of the spec bandwidth and its FP32 matmul {w.percent(r['best_mm']['gflops'] * 1e9 / rr.peak_flops)} "
              "of the spec FLOP/s.")
    t += _tensor_sentence(run, r)
    return Prose(t, {f"reference {w.device_of(run)} ridge": rr.ridge})


def _tensor_sentence(run, r: dict) -> str:
    """The best tensor-core matmul of a run against its FP32 one, and where the ridge moves."""
    if not r["tensor"] or not r["best_mm"]:
        return ""
    from .compute_tensor import constant_data
    best = max(r["tensor"], key=lambda x: x["gflops"])
    return (f" Its tensor cores did {w.rate(best['gflops'] * 1e9)} on a {best['dtype']} matmul, "
            f"{w.times(best['gflops'] / r['best_mm']['gflops'])} its measured FP32 general-math rate"
            + _tensor_ridge(run, r, best["dtype"]) + constant_data(run, "these matmul rates"))


_TENSOR_FIELD = {"float32": "tf32_tensor", "float16": "fp16_tensor", "bfloat16": "bf16_tensor"}


def _tensor_ridge(run, r: dict, dtype: str) -> str:
    """How far the ridge moves with tensor cores: by the spec sheet's ratio, else by the measured one."""
    from ..specs import lookup
    spec = lookup(w.device_of(run)) if r["spec"] else None
    tensor = getattr(spec, _TENSOR_FIELD.get(dtype, ""), None) if spec else None
    if not tensor:
        return ". Its measured roof's ridge moves right by the same factor with tensor cores."
    rr = r["roof"]
    factor = tensor / rr.peak_flops
    return (f". On the spec sheet its {dtype} tensor-core rate is {w.rate(tensor)}, "
            f"{w.times(factor)} the FP32 figure, so with tensor cores the spec ridge moves right by that "
            f"factor, from {w.number(rr.ridge)} to {w.number(tensor / rr.peak_bandwidth)} FLOP/byte.")


def against_peaks(measured, peaks, cpu: bool) -> Prose:
    """How a measured roof compares with the device's peaks (spec sheet, or a CPU's cached
    one-off measurement), each percentage with what it means: 'brrr roofline' prints it."""
    kind = "cached peak (measured once)" if cpu else "spec-sheet peak"
    parts, facts = [], {}
    for what, got, peak in (("FLOP/s", measured.peak_flops, peaks.peak_flops),
                            ("bandwidth", measured.peak_bandwidth, peaks.peak_bandwidth)):
        fraction = got / peak
        facts[what] = fraction
        if fraction > ABOVE_ROOF:
            why = ("this run's kernels beat the one-off measurement those peaks came from, so they are "
                   "not a hardware limit" if cpu else
                   "faster than the spec allows: an array small enough to stay in cache, or a spec "
                   "sheet that understates this part")
            parts.append(f"{w.percent(fraction)} of the {kind} {what}: above it, because {why}")
        elif fraction < 0.5:
            parts.append(f"{w.percent(fraction)} of the {kind} {what}: far below it, so something other than "
                         "that peak set the pace of these kernels")
        else:
            parts.append(f"{w.percent(fraction)} of the {kind} {what}")
    return Prose("; ".join(parts) + ".", facts)
