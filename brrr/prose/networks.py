"""Chapter 6's claims: the layers against this device's ridge, the measured convolutions of Table III (which
check Worked problems 1 and 3), whole networks against their least time, MobileNet-V2 by kind of layer, and the
worked answers' templates. The paper's tables come out the same on every device: the notebook states them in
Markdown, and ``tests/test_prose_networks.py`` recomputes every number it quotes."""
from __future__ import annotations

from ..claims import Bound, Compare, Missing, Noisy, Regime, Share, Value, fill
from ..intensity_count import linear, ridge_rows  # noqa: F401 (ridge_rows: public here too)
from ..intensity_paper import conv_intensity
from ..intensity_predict import least_bytes, least_seconds
from ..roofline import Roofline, has_spec_sheet, worked_roofs
from .fusion import timed

KIND_NAMES = {"fc": "the fully-connected layers", "no MACs": "the layers that do no MACs"}


def _bound(run, subject: str, seconds: float, least: float, nbytes=None, name: str = "") -> Bound:
    """``subject``'s time against its least time on ``run``'s roof, with what a point above it needs to say why."""
    cache = run.meta.get("cache_bytes") or (run.meta.get("device") or {}).get("l2_bytes")
    return Bound(subject, seconds, least, "the roofline", nbytes=nbytes, cache_bytes=cache,
                 measured_roof=not has_spec_sheet(run.meta.get("device") or {}), name=name)


def _outliers(run, pairs, subject_of) -> list:
    """A Bound of the one of ``pairs`` ((record, least seconds)) furthest above its roof, a Noisy of the noisiest
    (a Missing where no record kept its spread)."""
    above = [(r, t) for r, t in pairs if t > r["seconds"]]
    r, t = max(above, key=lambda p: p[1] / p[0]["seconds"], default=(None, None))
    out = [] if r is None else [_bound(run, subject_of(r), r["seconds"], t, r.get("nbytes"), "above the roof")]
    r = max((r for r in run.records if r.get("iqr_seconds") is not None),
            key=lambda r: r["iqr_seconds"] / r["seconds"], default=None)
    return out + [Missing("iqr_seconds", "the spread of its samples, so whether these times are steady is unknown")
                  if r is None else Noisy(subject_of(r), r["iqr_seconds"], r["seconds"])]


def layer_claims(layers: dict, roof) -> list:
    """``roof``'s ridge; how many of each network's Conv and FC layers, then pointwise ones, lie left of it."""
    def left(table, of, name, where="left of it, memory-bound by the model"):
        k = int((table["intensity"] < roof.ridge).sum())
        return Share(len(table), {where: k}, of, unit="count", verb="lies" if k == 1 else "lie", name=name)
    out = [Value(roof.ridge, "FLOP/byte", subject=f"the {roof.name}'s float32 ridge", verb="sits at", name="ridge")]
    out += [left(table, f"Conv and FC layers of {net}", f"{net} left") for net, table in layers.items()]
    return out + [left(p, f"pointwise layers of {net}, among its {len(t)}", f"{net} pointwise left", "left of it")
                  for net, t in layers.items() if len(p := t[t["kind"] == "pointwise"])]


CONVS = """`standard {k}x{k}` does {std_flops} on {std_bytes}, {std_ai}. {std_here}

`depthwise {k}x{k}` does {dw_flops} on {dw_bytes}, {dw_ai}. {dw_here}

{std_ref} {dw_ref} The next section times both, with the fixed cost of a call where its run measured it."""


def counted(kind: str, M: int, S_o: int, S_k: int) -> tuple:
    """(FLOPs, bytes) of a float32 convolution of Table II, M channels in and out, batch 1, each tensor once."""
    c = conv_intensity(kind, M, M, S_o, S_k)
    return 2 * c.macs, 4 * (c.weights + c.activations)


def _op_slots(key: str, op: tuple, here, ref, named: str) -> dict:
    flops, nbytes = op
    return {f"{key}_flops": Value(flops, "FLOP"), f"{key}_bytes": Value(nbytes, "B"),
            f"{key}_ai": Value(flops / nbytes, "FLOP/byte"), f"{key}_here": Regime("here it", flops, nbytes, here),
            f"{key}_ref": Regime(f"on the reference {ref.name}, {named}", flops, nbytes, ref)}


def conv_answer(M: int, S_o: int, S_k: int, dev):
    """Worked problem 1: the regimes and least times of a standard and a depthwise convolution, here and on an H100."""
    here, ref = worked_roofs(dev)
    return fill(CONVS, k=S_k, **_op_slots("std", counted("standard", M, S_o, S_k), here, ref, "the standard one"),
                **_op_slots("dw", counted("depthwise", M, S_o, S_k), here, ref, "the depthwise one"))


def conv_claims(run) -> list:
    """The standard and depthwise convolutions (:func:`brrr.intensity.measure_convs`) against their least times
    (with the run's fixed cost of a call, if measured) and each other; the one furthest above its roof; the noisiest."""
    roof, kinds = Roofline.from_dict(run.meta["roof"]), {r["kind"]: r for r in run.records}
    out = [Regime(f"the {k} convolution", kinds[k]["flops"], kinds[k]["nbytes"], roof, run.meta.get("call_seconds"),
                  kinds[k]["seconds"], name=f"{k} convolution") for k in ("standard", "depthwise") if k in kinds]
    if {"standard", "depthwise"} <= set(kinds):
        out.append(Compare("the depthwise convolution", kinds["depthwise"]["seconds"], "the standard one",
                           kinds["standard"]["seconds"], name="depthwise against standard"))
    pairs = [(r, float(roof.time(r["flops"], r["nbytes"]))) for r in run.records]
    return out + _outliers(run, pairs, lambda r: f"the {r['kind']} convolution")


RIDGE = """On B rows, `x @ W` does 2Bn² FLOPs and moves 4(2Bn + n²) bytes, the weights once: about B/2 FLOP/byte
while B is much smaller than n, so it reaches this device's ridge of {ridge} from **B = {batch}**, with {flops} on
{nbytes}. {regime} That is a least time, not the time to expect: the roofline bounds the speed from above, and at
the ridge a kernel would need the full bandwidth and the full arithmetic rate at once, which real kernels seldom
reach (the check below times it).

On the reference {ref}, whose ridge is {ref_ridge}, the fewest rows that reach it are {ref_batch}: a ridge is the
peak FLOP/s over the peak bandwidth, and either can move it. {peaks} {bandwidths}"""


def ridge_answer(n: int, dev):
    """Worked problem 2: the batch (``facts['batch']``) from which ``x @ W`` reaches the ridge, here and on an H100."""
    here, ref = worked_roofs(dev)
    b, b_ref = ridge_rows(n, here.ridge), ridge_rows(n, ref.ridge)
    if b is None:
        raise ValueError(f"n = {n} is too small: x @ W never reaches this ridge (take n > {4 * here.ridge:.0f})")
    flops, nbytes = linear(b, n)
    said = fill(RIDGE, ridge=Value(here.ridge, "FLOP/byte"), batch=Value(b, "count"), flops=Value(flops, "FLOP"),
                nbytes=Value(nbytes, "B"), regime=Regime("there the layer", flops, nbytes, here), ref=ref.name,
                ref_ridge=Value(ref.ridge, "FLOP/byte"), ref_batch=Value(b_ref, "count") if b_ref else "none at this n",
                peaks=Compare(f"the {ref.name}'s float32 peak", ref.peak_flops, "this device's", here.peak_flops,
                              "FLOP/s"),
                bandwidths=Compare("its bandwidth", ref.peak_bandwidth, "this device's", here.peak_bandwidth, "B/s"))
    said.facts.update(batch=b, reference_batch=b_ref)
    return said


def ridge_claims(timing, rows: int, n: int, dev) -> list:
    """The timed ``x @ W`` on ``rows`` rows (a :class:`brrr.Timing`) against its least time, and its noise."""
    flops, nbytes = linear(rows, n)
    least = float(worked_roofs(dev)[0].time(flops, nbytes))
    return timed(timing, least, f"`x @ W` on {rows} rows", dev, nbytes, "x @ W")


SEPARABLE = """`pointwise 1x1` does {pw_flops} on {pw_bytes}, {pw_ai}. {pw_here} {pw_ref}

The pair does {flop_ratio} fewer FLOPs than the standard {k}x{k} convolution, but by the roofline it is only
**{speedup} faster** here, {pair} against {std}. {split} {flop_split}

On the reference {ref} it is {ref_speedup} faster. {ref_split}"""


def separable_answer(M: int, S_o: int, S_k: int, dev):
    """Worked problem 3: the pointwise convolution's regime; the depthwise-pointwise pair against the standard one."""
    here, ref = worked_roofs(dev)
    std, dw, pw = (counted(kind, M, S_o, k) for kind, k in (("standard", S_k), ("depthwise", S_k), ("pointwise", 1)))
    t, t_ref = ([float(roof.time(*op)) for op in (std, dw, pw)] for roof in (here, ref))

    def split(t):
        return Share(t[1] + t[2], {"the depthwise half": t[1], "the pointwise half": t[2]}, "of the pair's least time")
    return fill(SEPARABLE, k=S_k, ref=ref.name, **_op_slots("pw", pw, here, ref, "it"),
                flop_ratio=Value(std[0] / (dw[0] + pw[0]), "x"), speedup=Value(t[0] / (t[1] + t[2]), "x"),
                pair=Value(t[1] + t[2], "s"), std=Value(t[0], "s"), split=split(t),
                flop_split=Share(dw[0] + pw[0], {"the depthwise half": dw[0]}, "of the pair", unit="FLOP"),
                ref_speedup=Value(t_ref[0] / (t_ref[1] + t_ref[2]), "x"), ref_split=split(t_ref))


def separable_claims(run) -> list:
    """The measured depthwise-pointwise pair against the standard convolution and its least time; its halves."""
    roof, kinds = Roofline.from_dict(run.meta["roof"]), {r["kind"]: r for r in run.records}
    std, dw, pw = (kinds[k] for k in ("standard", "depthwise", "pointwise"))
    pair = dw["seconds"] + pw["seconds"]
    least = sum(float(roof.time(r["flops"], r["nbytes"])) for r in (dw, pw))
    return [Compare("the pair", pair, "the standard convolution", std["seconds"], name="pair against standard"),
            _bound(run, "the pair", pair, least, dw["nbytes"] + pw["nbytes"], "pair"),
            Share(pair, {"the depthwise half": dw["seconds"], "the pointwise half": pw["seconds"]},
                  "of the pair's measured time")]


def network_claims(run) -> list:
    """The nearest network to its least time (:func:`brrr.intensity_predict.least_seconds`) and the farthest, each's
    regime (no one call's cost bounds a network), the nearest against its calls' fixed cost; the outliers."""
    roof, call = Roofline.from_dict(run.meta["roof"]), run.meta.get("call_seconds")
    pairs = sorted(((r, least_seconds(r, roof)) for r in run.records), key=lambda p: p[1] / p[0]["seconds"])
    near = pairs[-1][0]
    ends = [near] + ([pairs[0][0]] if len(pairs) > 1 else [])
    out = [Regime(r["network"], r["flops"], least_bytes(r), roof, seconds=r["seconds"], name=which)
           for which, r in zip(("nearest its least time", "farthest from it"), ends)]
    if call and near.get("operators"):
        out.append(Compare(f"{near['network']}'s forward pass", near["seconds"],
                           f"the fixed cost of its {near['operators']} operator calls", near["operators"] * call,
                           name="forward pass against its calls"))
    return out + _outliers(run, pairs, lambda r: r["network"])


def kind_claims(run) -> list:
    """The first network's top two kinds of layer by time and by FLOPs; its no-MAC layers against their least time."""
    net = run.records[0]["network"]
    rows = [r for r in run.records if r["network"] == net]

    def top(key):
        ranked = sorted(rows, key=lambda r: -r[key])[:2]   # a Share's parts sorted: a notebook sorts a dict's keys
        return dict(sorted((KIND_NAMES.get(r["kind"], f"the {r['kind']} convolutions"), r[key]) for r in ranked))
    return ([Share(sum(r["seconds"] for r in rows), top("seconds"), f"of {net}'s profiled operator time", name="time"),
             Share(sum(r["flops"] for r in rows), top("flops"), f"of {net}", unit="FLOP", name="FLOPs")]
            + [_bound(run, f"{net}'s layers that do no MACs", r["seconds"], r["roofline_seconds"], r["nbytes"],
                      "no MACs") for r in rows if r["kind"] == "no MACs" and r["roofline_seconds"] > 0])
