"""Chapter 1, compute: the claims each generated cell makes of a run (:func:`brrr.claims.say` names the record a
replayed set lacks) and the worked answers' templates (:func:`brrr.claims.fill`). The spec ratios are static text."""
from __future__ import annotations

import math
from string import Formatter

from ..claims import SAME, UNEXPLAINED_REGIME, Bound, Cause, Compare, Missing, Regime, Shape, Value, fill, say
from ..roofline import REFERENCE_GPU, Roofline, has_spec_sheet, worked_roofs
from ..specs import GPU_SPECS

REFERENCE = GPU_SPECS[REFERENCE_GPU]    # the worked answers' reference GPU, from its spec sheet
MATH = {"float32": "TF32", "float16": "FP16", "bfloat16": "BF16"}
SAME_COMPUTE = "The two GPUs share an FP32 peak but not a memory bandwidth, so memory traffic did not set that time."


def roof_of(run) -> Roofline:     # the FP32 general-math roofline of the run's device, as its record says
    return Roofline.from_summary(run.meta["device"])


def peak(d: dict, what: str = "FP32 peak") -> str:
    """'the spec sheet's FP32 peak', "this CPU's measured ..." or 'the derived ...' of a device's summary ``d``."""
    return ("the spec sheet's " if has_spec_sheet(d) else "this CPU's measured " if d["backend"] == "cpu"
            else "the derived ") + what


def _bound(run, *args, cache=False, **kwargs) -> Bound:
    """A Bound on the run's device: a CPU's roof is its own measurement; ``cache``: its last-level cache counts."""
    d = run.meta["device"]
    return Bound(*args, measured_roof=d["backend"] == "cpu", cache_bytes=d.get("l2_bytes") if cache else None, **kwargs)


def _matmuls(run, n=None) -> list:     # the run's matmul records by n (of size n only, where given)
    return sorted((r for r in run.records if r.get("op", "matmul") == "matmul" and n in (None, r["n"])),
                  key=lambda r: r["n"])


def _regime(run, what: str, rec) -> Regime:     # the roofline's rule, with the time the record measured
    return Regime(what, rec["flops"], rec["nbytes"], roof_of(run), seconds=rec["seconds"], name="regime")


def _rate(rec) -> float:       # a record's FLOP/s
    return rec["gflops"] * 1e9


def _constants(run) -> str:    # a record made before the matmuls multiplied random data (meta['data'])
    return "" if run.meta.get("data") else " of constant matrices"


def matmul_sweep(run, references=()):
    """The sweep's shape, the regime of its last size no bound explains (else its first), its best; and that size on
    a reference GPU of the same FP32 peak and another bandwidth (a twin: what it rules out)."""
    def claims(r):
        recs = _matmuls(r)
        regimes, best = [_regime(r, f"the n = {x['n']:,} matmul", x) for x in recs], max(recs, key=_rate)
        i = max((i for i, g in enumerate(regimes) if g.outcome == UNEXPLAINED_REGIME), default=0)
        out = [Shape(f"the {recs[0]['dtype']} matmul's FLOP/s", [x["n"] for x in recs], [_rate(x) for x in recs],
                     "n =", "FLOP/s", name="outcome"),
               _bound(r, f"the n = {best['n']:,} matmul{_constants(r)}", _rate(best), best["peak_flops"],
                      peak(r.meta["device"]), "FLOP/s", name="best"), regimes[i]]
        for ref in references if r is run else ():
            there, a, b = _matmuls(ref, recs[i]["n"]), roof_of(ref), roof_of(r)
            if there and abs(a.peak_flops / b.peak_flops - 1) <= SAME < abs(a.peak_bandwidth / b.peak_bandwidth - 1):
                same = Compare(f"on the {ref.meta['device']['name']} the n = {recs[i]['n']:,} matmul",
                               there[0]["seconds"], "on this page's run", recs[i]["seconds"], name="twin")
                return out + [same, Cause(SAME_COMPUTE, same, ("same",))]
        return out
    return say(claims, run, references, record="matmul_vs_size")


def sweep_checks(run, n: int):
    """Worked problems 1 and 2, checked: the sweep's n x n matmul, and its first size from the ridge's n on."""
    def claims(r):
        roof, recs, ridge_n = roof_of(r), _matmuls(r), math.ceil(6 * roof_of(r).ridge)
        x = next((x for x in recs if x["n"] >= ridge_n), recs[-1])
        return [_bound(r, f"the sweep's n = {n:,} matmul{_constants(r)}", y["seconds"], y["flops"] / y["peak_flops"],
                       peak(r.meta["device"]), name="matmul") for y in _matmuls(r, n)] + [
            _bound(r, f"the sweep's n = {x['n']:,} matmul (the ridge's n is {ridge_n:,})", x["seconds"],
                   float(roof.time(x["flops"], x["nbytes"])), "the roofline", name="ridge"),
            _regime(r, f"the n = {x['n']:,} matmul", x)]
    return say(claims, run, record="matmul_vs_size")


def tensor_cores(run, references=()):
    """Each kind of math's best against its own peak."""
    def claims(r):
        for t in dict.fromkeys(x["dtype"] for x in r.records):
            best = max((x for x in r.records if x["dtype"] == t), key=_rate)
            kind = f"{MATH.get(t, t)} tensor-core" if best["tensor_cores"] else f"{t} general-math"
            yield Bound(f"the {kind} matmul{_constants(r)} at n = {best['n']:,}", _rate(best), best["peak_flops"],
                        peak(r.meta["device"], f"{kind} peak"), "FLOP/s", name=kind)
    return say(lambda r: list(claims(r)), run, references, record="matmul_tensor_cores")


def mfu(run, references=()):
    """MFU at the best batch, the first batch against the roofline, the last no bound explains against the first."""
    def claims(r):
        recs, at = sorted(r.records, key=lambda x: x["batch"]), lambda x: f"the layer at batch {x['batch']:,}"
        best, first = max(recs, key=lambda x: x["mfu"]), recs[0]
        out = [_bound(r, at(best), _rate(best), best["peak_flops"], peak(r.meta["device"]), "FLOP/s", mfu=True,
                      name="best"), _bound(r, at(first), first["seconds"], first["roofline_seconds"], "the roofline",
                                           nbytes=first["nbytes"], cache=True, name="small_batch")]
        for x, g in [(x, g) for x in recs if (g := _regime(r, at(x), x)).outcome == UNEXPLAINED_REGIME][-1:]:
            out += [g] + [Compare(at(x), x["seconds"], f"at batch {first['batch']:,}", first["seconds"],
                                  name="time")] * (x is not first)
        return out
    return say(claims, run, references, record="mfu_vs_batch")


def gap(run, references=()):
    """The matmul-to-elementwise gap (and the spec's), the chain against its instructions' ceiling, and `x * 2`."""
    def claims(r):
        by, roof, d = {x["kind"]: x for x in r.records}, roof_of(r), r.meta["device"]
        x2, chain = by["elementwise x * 2"], by.get("elementwise fused FMA chain")
        top = max((x for x in r.records if x["kind"].startswith("matmul")), key=_rate)
        low = max((x for x in (x2, chain) if x), key=_rate)
        out = [Compare(f"the FLOP/s of the {'FP16 tensor-core' if top['tensor_cores'] else 'FP32'} matmul"
                       f"{_constants(r)}", _rate(top), "the chain's" if low is chain else "`x * 2`'s", _rate(low),
                       "FLOP/s", name="gap")]
        # on a GPU a multiply and an add (a record without fma True) take two issue slots: half the peak
        half = bool(chain) and chain.get("fma") is not True and d["backend"] != "cpu"
        if r.meta.get("spec_gap") and top["tensor_cores"]:   # against the slower side's own ceiling
            capped = half and low is chain
            out.append(Compare("that gap", out[0].ratio, "the spec sheet's FP16 tensor-core peak over "
                               + ("half its FP32 peak, the chain's ceiling" if capped else "its FP32 peak"),
                               r.meta["spec_gap"] * (1 + capped), "", name="outcome"))
        if chain:
            repeat = r.meta.get("repeat")
            links = ("fused multiply-adds" if chain.get("fma") is True else
                     "links, each a multiply and then an add (no fused multiply-add),")
            out.append(_bound(r, f"the chain of {repeat or round(4 * chain['intensity']):,} {links}", _rate(chain),
                              chain["peak_flops"] / (1 + half), f"half of {peak(d)}, all that two instructions a link "
                              "allow" if half else peak(d), "FLOP/s", name="chain"))
        return out + [_bound(r, "`x * 2`", x2["gbps"] * 1e9, roof.peak_bandwidth, peak(d, "DRAM bandwidth"), "B/s",
                             nbytes=x2["nbytes"], cache=True, name="x2"),
                      Regime("`x * 2`", x2["flops"], x2["nbytes"], roof, seconds=x2["seconds"], name="x2_outcome")]
    return say(claims, run, references, record="elementwise_vs_matmul")


def ratio_check(sweep, gap, n: int):
    """Worked problem 3, checked: the sweep's n x n matmul over the comparison's `x * 2` on n² elements."""
    def claims(runs):
        x2 = [x for x in runs[1].records if x["kind"] == "elementwise x * 2" and x["flops"] == n * n]
        return [Compare("the measured ratio of the two times", m["seconds"] / e["seconds"], "the roofline's",
                        n / (4 * roof_of(runs[0]).ridge), "", name="ratio") for m in _matmuls(runs[0], n) for e in x2] \
            or [Missing(f"matmul_vs_size at n = {n:,}")]
    return say(claims, None if sweep is None or gap is None else (sweep, gap),
               record="matmul_vs_size" if sweep is None else "elementwise_vs_matmul")


# --- worked answers, on this device's peaks (``dev``) and the reference GPU's spec sheet ----------------------

ANSWERS = {"matmul": """The matmul does 2n³ = {flops}. At {whose}, {peak}, they take at least **{least}**. {matmul}

On the reference {ref}, at the spec sheet's FP32 peak of {ref_peak}, they take at least {ref_least}.""",
           "ridge": """Compute-bound means n/6 ≥ ridge, so n ≥ 6 × ridge. Here the ridge is {peak} / {bandwidth} \
= {ridge} (from the unrounded peaks): from **n = {ridge_n}** on, the roofline allows the full peak. But it is a \
bound, not a prediction: it leaves out the fixed cost of a call, and whether the matmul has the parallel work to \
keep every unit busy.

On the reference {ref} the FP32 ridge is {ref_ridge}, so n = {ref_n}; on its TF32 tensor cores it is \
{tf32_ridge}, so n = {tf32_n}: faster arithmetic on the same memory needs a larger matmul.""",
           "ratio": """`x * 2` does n² FLOPs, the matmul 2n³: {fold} times as many. But `x * 2` reads 4 and writes 4 \
bytes per element, 1/8 FLOP/byte. {x2} {big} So the roofline's ratio is the matmul's arithmetic time over \
`x * 2`'s memory time, (2n³ / peak FLOP/s) / (8n² / peak bandwidth) = n / (4 × ridge): **{ratio}**, not {fold}.

On the reference {ref}, with a ridge of {ref_ridge}, it is {ref_ratio}: the higher the ridge, the smaller the ratio."""}


def answers(dev, n: int, side: int = None) -> dict:
    """The templates of :data:`ANSWERS` filled: 'matmul', the least time of an n x n float32 matmul; 'ridge', the
    n from which one is compute-bound; 'ratio', a side x side one's time over `x * 2`'s on side² elements (side: n)."""
    here, ref = worked_roofs(dev)
    flops, tf32, side = 2 * n ** 3, REFERENCE.tf32_tensor / REFERENCE.bandwidth, side or n
    slots = dict(flops=Value(flops, "FLOP"), whose=peak(dev.summary()), peak=Value(here.peak_flops, "FLOP/s"),
                 least=Value(here.t_math(flops), "s"), matmul=Regime("the matmul", flops, 12 * n * n, here),
                 ref=REFERENCE.name, ref_peak=Value(ref.peak_flops, "FLOP/s"), ref_least=Value(ref.t_math(flops), "s"),
                 bandwidth=Value(here.peak_bandwidth, "B/s"), ridge=Value(here.ridge, "FLOP/byte"),
                 ridge_n=Value(math.ceil(6 * here.ridge), "count"), ref_ridge=Value(ref.ridge, "FLOP/byte"),
                 ref_n=Value(math.ceil(6 * ref.ridge), "count"), tf32_ridge=Value(tf32, "FLOP/byte"),
                 tf32_n=Value(math.ceil(6 * tf32), "count"), fold=Value(2 * side, "count"),
                 x2=Regime("`x * 2`", side ** 2, 8 * side ** 2, here), ref_ratio=Value(side / 4 / ref.ridge, ""),
                 big=Regime("the matmul", 2 * side ** 3, 12 * side ** 2, here), ratio=Value(side / 4 / here.ridge, ""))
    return {name: fill(t, **{k: slots[k] for _, k, _, _ in Formatter().parse(t) if k}) for name, t in ANSWERS.items()}
