"""Chapter 6: the layers of each network against this device's ridge and the reference GPUs', and
the four measured convolutions of Table III (:func:`brrr.intensity.measure_convs`).
"""
from __future__ import annotations

from . import Prose, with_references
from . import words as w
from .words import ABOVE_ROOF

FLAT_TIMES = 3.0     # slowest / fastest convolution below this, where the roofline expects
MODEL_SPREAD = 10.0  # more than this, means the times were set by a fixed cost, not the work


def _left(table, ridge) -> tuple:
    """(share of layers, share of FLOPs) left of ``ridge``."""
    left = table["intensity"] < ridge
    return left.mean(), table.loc[left, "flops"].sum() / table["flops"].sum()


def layers_on_roofline(layers: dict, roof, device: dict, references=()) -> Prose:
    """The Conv/FC layers left of this device's ridge, of each reference GPU's (``references``:
    measure_roofline runs) and of the highest in :mod:`brrr.specs`. ``device``: ``Device.summary()``."""
    from ..roofline import Roofline, has_spec_sheet
    from ..specs import GPU_SPECS, lookup
    spec = has_spec_sheet(device)
    name = device.get("name", "this device")
    if spec:
        text = f"On the spec-sheet roof of {name} the float32 ridge sits at {w.number(roof.ridge)} FLOP/byte."
    else:
        text = (f"On {name} the ridge of the measured roof sits at {w.number(roof.ridge)} FLOP/byte (a measured "
                "roof, not a hardware peak).")
    facts = {"ridge": roof.ridge, "spec": spec}
    shares = []
    for net, table in layers.items():
        n_share, f_share = _left(table, roof.ridge)
        facts[f"{net} left"] = n_share
        if not shares:
            shares.append(f"{w.percent(n_share)} of {net}'s {len(table)} Conv and FC layers lie left of it "
                          f"(memory-bound, by the model), holding {w.percent(f_share)} of its FLOPs")
        else:
            shares.append(f"{w.percent(n_share)} of {net}'s {len(table)}, holding {w.percent(f_share)} of its FLOPs")
    text += " " + "; ".join(shares) + "."
    fc = [x for t in layers.values() for x in t.loc[t["kind"] == "fc", "intensity"]]
    if fc:
        all_left = max(fc) < roof.ridge
        facts["fc_left"] = all_left
        text += (f" The fully-connected layers are all among them (at most {w.number(max(fc))} FLOP/byte): at "
                 "batch 1 a matrix-vector product uses every weight once." if all_left else
                 f" Not every fully-connected layer is left of it (they reach {w.number(max(fc))} FLOP/byte).")
    ref_roofs = []
    for run in references:
        try:
            # the spec row's name, as the worked problems name the reference GPU: its roof is that spec sheet
            row = lookup(w.device_of(run)) if not w.is_cpu(run) else None
            ref_roofs.append((row.name if row else w.device_of(run), Roofline.of_run(run)))
        except ValueError:
            continue
    pw = {net: t.loc[t["kind"] == "pointwise", "intensity"] for net, t in layers.items()}
    pw = {net: s for net, s in pw.items() if len(s)}
    std = {net: t.loc[t["kind"] == "standard", "intensity"] for net, t in layers.items()}
    for where, ridge in ([("here", roof.ridge)] if pw and ref_roofs else []) + [(n, r.ridge) for n, r in ref_roofs]:
        counts = []
        for net, s in pw.items():
            facts[f"{net} pointwise left {'here' if where == 'here' else f'of {where}'}"] = k = int((s < ridge).sum())
            counts.append(f"{k} of {net}'s {len(s)} pointwise layers")
        text += (f" Here {w.listing(counts)} sit left of the ridge." if where == "here" else
                 f" On the reference {where}, whose float32 ridge is at {w.number(ridge)} FLOP/byte"
                 + (f", {w.listing(counts)} would sit left of the ridge." if counts else "."))
    if not ref_roofs:
        text += " No reference GPU roof ships with this copy of `brrr` to compare with."
    fp32_ridges = {s.name: s.fp32 / s.bandwidth for s in GPU_SPECS.values()}
    top_gpu = max(fp32_ridges, key=fp32_ridges.get)
    for net, s in std.items():
        if len(s) and len(s) > len(layers[net]) / 2:
            lowest = s.min()
            if lowest > fp32_ridges[top_gpu]:
                text += (f" {net}'s standard convolutions, at {w.number(lowest)} FLOP/byte and more, stay right of "
                         "the float32 ridge of every GPU in the [device table](../book/device_table.ipynb) (the "
                         f"highest, the {top_gpu}'s, is {w.number(fp32_ridges[top_gpu])}).")
                facts[f"{net} right of every GPU"] = True
            else:
                k = sum(x < fp32_ridges[top_gpu] for x in s)
                text += (f" {k} of {net}'s {len(s)} standard convolutions sit left of the highest float32 ridge "
                         f"in the device table (the {top_gpu}'s, {w.number(fp32_ridges[top_gpu])} FLOP/byte).")
                facts[f"{net} right of every GPU"] = False
    return Prose(text, facts)


def conv_facts(result) -> dict:
    """Per kind: share of the roof, memory-bound by the model, seconds, MACs; the device and cache."""
    from ..roofline import has_spec_sheet
    meta = result.meta
    dev = meta.get("device") or {}
    roof = meta.get("roof") or {}
    peak = roof.get("peak_flops") or max(r["attainable_flops"] for r in result.records)
    kinds = {}
    for r in result.records:
        kinds[r["kind"]] = {"share": r["achieved_flops"] / r["attainable_flops"],
                            "memory_bound": r["attainable_flops"] < peak * (1 - 1e-9),
                            "seconds": r["seconds"], "macs": r["macs"], "nbytes": r["nbytes"],
                            "roofline_seconds": r["roofline_seconds"], "warnings": r.get("warnings", [])}
    return {"kinds": kinds, "device": dev.get("name", "this device"), "cpu": w.is_cpu(result),
            "spec": has_spec_sheet(dev), "cache": meta.get("cache_bytes") or dev.get("l2_bytes") or 0}


def _above_roof(f: dict, kind: str) -> str:
    k = f["kinds"][kind]
    text = f"The {kind} convolution measured {w.times(k['share'])} what its roof allows. "
    fits = f["cache"] and k["nbytes"] < f["cache"]
    if k["memory_bound"]:
        text += ("Its bytes arrived faster than the spec-sheet DRAM bandwidth" if f["spec"] else
                 "The measured roof's bandwidth is one NumPy copy (a single thread), while PyTorch reads with "
                 "every core")
        if fits:
            text += (f"; and its {w.size(k['nbytes'])} fit in the {w.size(f['cache'])} cache, so part of the "
                     "traffic can come from cache despite the flush before each sample")
        return text + "."
    if not f["spec"]:
        return text + "The measured roof's FLOP/s is one NumPy (BLAS) matmul's, which PyTorch's convolutions beat."
    return text + ("Above a spec-sheet compute roof, the GPU ran above the clock the spec assumes, or the FLOP "
                   "count credits the layer with work it did not do.")


def _kind_list(f: dict) -> str:
    """'the standard convolution reached 25%, the pointwise one 13% and ...'."""
    parts = [f"the {kind} {'convolution reached' if i == 0 else 'one'} {w.percent(k['share'])}"
             for i, (kind, k) in enumerate(f["kinds"].items())]
    return w.listing(parts)


def conv_measurements(result, references=()) -> Prose:
    """The four convolutions of Table III against the roof, and whether the depthwise layer's
    saving in MACs became a saving in time; the same for each reference GPU run."""
    f = conv_facts(result)
    kinds = f["kinds"]
    roof_kind = ("spec-sheet float32 roof without tensor cores (the timings turn off the TF32 that PyTorch "
                 "otherwise allows convolutions)" if f["spec"] and not f["cpu"] else
                 "spec-sheet roof" if f["spec"] else "measured roof")
    text = (f"On {f['device']}, against its {roof_kind}, {_kind_list(f)} of the throughput the roofline allows "
            "at its intensity.")
    bound = {kind: ("memory-bound" if k["memory_bound"] else "compute-bound") for kind, k in kinds.items()}
    mem = [kind for kind, b in bound.items() if b == "memory-bound"]
    text += (" By the model, all of them are compute-bound here." if not mem else
             " By the model, all of them are memory-bound here." if len(mem) == len(kinds) else
             f" By the model, the {w.listing(mem)} convolution{' is' if len(mem) == 1 else 's are'} "
             "memory-bound here and the rest compute-bound.")
    above = [kind for kind, k in kinds.items() if k["share"] > ABOVE_ROOF]
    facts = {"shares": {kind: k["share"] for kind, k in kinds.items()}, "above_roof": above, "bound": bound}
    for kind in above:
        text += " " + _above_roof(f, kind)
    times = [k["seconds"] for k in kinds.values()]
    model = [k["roofline_seconds"] for k in kinds.values()]
    flat = max(times) / min(times) < FLAT_TIMES and max(model) / min(model) > MODEL_SPREAD
    facts["flat"] = flat
    if flat:
        text += (f"\n\nAll {len(kinds)} took between {w.seconds(min(times))} and {w.seconds(max(times))} per call, "
                 f"although by the roofline the slowest should take {w.times(max(model) / min(model))} as long as "
                 "the fastest: something other than the work set these times, so these shares of the roof say "
                 "little about the layers.")
    elif "standard" in kinds and "depthwise" in kinds:
        s, d = kinds["standard"], kinds["depthwise"]
        macs, time = d["macs"] / s["macs"], d["seconds"] / s["seconds"]
        model = d["roofline_seconds"] / s["roofline_seconds"]
        facts.update(macs_ratio=macs, time_ratio=time, model_time_ratio=model)
        text += (f"\n\nThe depthwise layer does {w.percent(macs)} of the standard one's MACs and took "
                 f"{w.percent(time)} of its time")
        if time > 2 * macs:
            facts["saving"] = "smaller"
            text += ": the saving in arithmetic did not turn into the same saving in time."
            if model > 2 * macs:
                text += (f" Part of that is the roofline itself: it expects {w.percent(model)}, because the "
                         "depthwise layer's time follows its bytes, not its MACs.")
            if d["share"] < s["share"]:
                text += (f" The rest is how close each gets to its roof: the depthwise layer reached "
                         f"{w.percent(d['share'])} of its roof, the standard one {w.percent(s['share'])}.")
            else:
                text += (f" The depthwise layer still reached a larger share of its roof than the standard one "
                         f"({w.percent(d['share'])} against {w.percent(s['share'])}).")
        else:
            facts["saving"] = "comparable"
            text += ": here the saving in arithmetic did turn into a comparable saving in time."
    noisy = [kind for kind, k in kinds.items() if any(str(x).startswith("noisy") for x in k["warnings"])]
    facts["noisy"] = noisy
    if noisy:
        which = "all of these timings were" if len(noisy) == len(kinds) else \
            f"the timings of the {w.listing(noisy)} convolution{'s' if len(noisy) > 1 else ''} were"
        text += (f" `brrr.bench` warned that {which} noisy (their samples spread widely), "
                 "so read the order of magnitude, not the digits.")
    return with_references(Prose(text, facts), references, "these four convolutions", _reference_convs)


def _reference_convs(run) -> Prose:
    r = conv_facts(run)
    t = (f"{w.reference_intro(run)}, against its {'spec-sheet' if r['spec'] else 'measured'} roof, "
         f"{_kind_list(r)}.")
    rk = r["kinds"]
    if "standard" in rk and "depthwise" in rk:
        t += (f" Its depthwise layer took {w.percent(rk['depthwise']['seconds'] / rk['standard']['seconds'])} "
              "of the standard one's time.")
    ref_above = [kind for kind, k in rk.items() if k["share"] > ABOVE_ROOF]
    for kind in ref_above:
        t += " " + _above_roof(r, kind)
    return Prose(t, {f"reference {w.device_of(run)}": {k: v["share"] for k, v in rk.items()}})
