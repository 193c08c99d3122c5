"""Chapter 2's claims about a run (``*_claims``, for :func:`brrr.claims.say`) and its worked problems' templates."""
from __future__ import annotations

from ..claims import ABOVE_ROOF, Bound, Cause, Compare, Missing, Noisy, Regime, Shape, Value, fill, say
from ..kernel_source import chain_knee, peak_share
from ..roofline import OVERHEAD, Roofline, has_spec_sheet, worked_roofs


def _device(run) -> tuple:
    """(a run's device summary, its roof, 'spec-sheet', 'measured' or 'derived', whether a CPU measured it)."""
    cpu = (dev := run.meta.get("device") or {}).get("backend") != "cuda"
    kind = "spec-sheet" if has_spec_sheet(dev) else "measured" if cpu else "derived"
    return dev, Roofline.from_summary(dev), kind, cpu


def bandwidth_claims(run) -> list:
    """The DRAM end; the largest copy that the roofline calls bound by the fastest copy's time; the cache net of it."""
    (_, roof, kind, cpu), _copy = _device(run), lambda r: f"the copy of {Value(r['working_set'], 'B').text()}"
    llc = max([run.meta.get("llc_bytes") or 0, *(run.meta.get("caches") or {}).values()])
    recs = sorted(run.records, key=lambda r: r["working_set"])
    last, fast, best = recs[-1], min(recs, key=lambda r: r["seconds"]), max(recs, key=lambda r: r["gbps"])
    claims = [Bound(_copy(last), last["gbps"] * 1e9, roof.peak_bandwidth, f"the {kind} DRAM bandwidth", "B/s",
                    nbytes=last["working_set"], cache_bytes=llc, measured_roof=cpu, name="dram")]
    fixed = [r for r in recs if r["seconds"] > fast["seconds"]
             and roof.with_ceilings(overhead=fast["seconds"]).regime(0, r["nbytes"]) == OVERHEAD][-1:]
    for r in fixed:
        claims += [Regime(_copy(r), 0, r["nbytes"], roof, fast["seconds"], r["seconds"], name="smallest copies"),
                   Compare(f"{_copy(r)}, {Value(r['nbytes'] / fast['nbytes'], 'x').text()} the bytes of {_copy(fast)},",
                           r["seconds"], "that copy", fast["seconds"], name="fixed cost")]
    if best["working_set"] <= llc < last["working_set"] and best["seconds"] > fast["seconds"]:
        claims.append(Compare(f"{_copy(best)}, net of the fastest copy's time,", best["nbytes"] / (best["seconds"] -
                              fast["seconds"]), f"the rate of {_copy(last)}", last["gbps"] * 1e9, "B/s", name="net"))
    return claims


def latency_claims(run) -> list:
    """Bandwidth against parallelism, against the roof, and Little's law for the loads (half a copy's bytes)."""
    if not run.records:
        return [Missing("bandwidth_vs_parallelism", f"since {run.meta.get('unavailable', 'it did not run')}")]
    dev, _, kind, cpu = _device(run)
    recs = sorted(run.records, key=lambda r: r["parallelism"])
    unit, roof = recs[0].get("unit", "threads"), run.meta.get("roof_bandwidth") or dev.get("peak_bandwidth")
    one, best = recs[0], max(recs, key=lambda r: r["gbps"])
    worker = f"one block of {run.meta.get('block')} threads" if unit == "blocks" else "one thread"
    claims = [Shape("the copy's bandwidth", [r["parallelism"] for r in recs], [r["gbps"] * 1e9 for r in recs],
                    f"{unit[:-1]} count", "B/s", name="shape")]
    claims += [Bound(who, r["gbps"] * 1e9, roof, f"the {kind} DRAM bandwidth", "B/s", nbytes=r["nbytes"],
                     cache_bytes=dev.get("l2_bytes"), measured_roof=cpu, name=name)
               for who, r, name in ((worker, one, "one worker"), (f"the best, {best['parallelism']:,} {unit},", best,
                                                                   "best"))[:1 + (best is not one)] if roof]
    if roof and (latency := (run.meta.get("latency") or {}).get("seconds_per_load")):
        claims += [Value(latency, "s", "each load of the pointer chase", name="latency"),
                   Compare("what the roof needs in loads in flight", roof / 2 * latency, f"what {worker} kept",
                           one["gbps"] * 1e9 / 2 * latency, "B", name="in flight")]
    return claims


def roofline_claims(run) -> list:
    """The fastest and slowest STREAM kernels, the slowest against a heavier one, the best FP32 matmul."""
    _, roof, kind, cpu = _device(run)
    stream = [r for r in run.records if r["kind"] == "bandwidth"]
    name, per = (lambda r: f"`{r['op']}` ({r['library']})"), (lambda r: r["nbytes"] / r["size"])
    fast, slow = max(stream, key=lambda r: r["gbps"]), min(stream, key=lambda r: r["gbps"])
    claims = [Bound(f"{name(r)}, the {which},", r["gbps"] * 1e9, roof.peak_bandwidth, f"the {kind} bandwidth", "B/s",
                    nbytes=r["nbytes"], cache_bytes=run.meta.get("llc_bytes"), measured_roof=cpu, name=which)
              for r, which in ((fast, "fastest STREAM kernel"), (slow, "slowest"))[:1 + (slow is not fast)]]
    for h in sorted((r for r in stream if (r["library"], r["size"]) == (slow["library"], slow["size"])
                     and per(r) > per(slow)), key=per)[-1:]:
        pair = Compare(name(h), h["seconds"], name(slow), slow["seconds"], name="same elements")
        claims += [pair, Cause(f"Both take the same number of elements, and {name(h)} moves "
                               f"{Value(per(h) / per(slow), 'x').text()} the bytes: their time followed the elements, "
                               "not the bytes.", pair, ("same",))]
    for mm in sorted((r for r in run.records if r["kind"] == "compute" and not r.get("tensor_cores")),
                     key=lambda r: r["gflops"])[-1:]:
        claims.append(Bound(f"the best FP32 matmul (n = {mm['size']:,})", mm["gflops"] * 1e9, roof.peak_flops,
                            f"the {kind} FP32 peak", "FLOP/s", measured_roof=cpu, name="matmul"))
    return claims


def against_peaks(measured: Roofline, peaks: Roofline, cpu: bool) -> str:
    """A measured roof against the device's peaks (a spec sheet, or a CPU's cached measurement)."""
    kind = "cached (measured once)" if cpu else "spec-sheet"
    return " ".join(Bound(f"the measured {what}", got, peak, f"the {kind} {what}", unit, measured_roof=cpu).text()
                    for what, got, peak, unit in (("FLOP/s", measured.peak_flops, peaks.peak_flops, "FLOP/s"),
                                                  ("bandwidth", measured.peak_bandwidth, peaks.peak_bandwidth, "B/s")))


OLD_ONE = ("This record was made by older code, which passed the constant `one` as a 0-d tensor on the GPU; this "
           "edition passes a CPU scalar, and a rerun measures whether that input held the ops below the roof.")
OLD_DATA = ("These matmuls multiplied constant matrices (every element one), as older code did, and a GPU runs such "
            "data at a higher clock than a model's (Chapter 1); a rerun, on random matrices, measures the difference.")
OLD_INT8 = ("This record's `int8` matmul took its second matrix row-major, as older code did; this edition passes it "
            "column-major, and a rerun measures whether the layout was what held it back.")


def _types(run, op: str) -> tuple:
    """(float32's record of ``op``, the other types' records that ran, a Missing for each that did not)."""
    recs = [r for r in run.records if r["op"] == op]
    ran = [r for r in recs if not r.get("skipped") and (r.get("seconds") or 0) > 0]
    gone = [Missing(f"{op} {r['dtype']}", f"which did not run here ({r.get('skipped') or 'no time'})")
            for r in recs if r not in ran]
    return next((r for r in ran if r["dtype"] == "float32"), None), [r for r in ran if r["dtype"] != "float32"], gone


def pointwise_claims(run) -> list:
    """``y = 1 + 2x``: float32 against the roof, each narrower type against its bytes' share of float32's time."""
    (f32, others, gone), (dev, _, _, cpu), bw = _types(run, "pointwise"), _device(run), run.meta.get("peak_bandwidth")
    if f32 is None or not bw:
        return gone or [Missing("pointwise float32", "so nothing is compared with it")]
    def bound(r):
        return Bound(f"the `{r['dtype']}` pointwise op", r["nbytes"] / r["seconds"], bw, "the memory roof", "B/s",
                     nbytes=r["nbytes"], cache_bytes=dev.get("l2_bytes"), measured_roof=cpu, name=r["dtype"])
    claims = [bound(f32)] + [bound(r) if r["nbytes"] / r["seconds"] > ABOVE_ROOF * bw else
                             Compare(f"the `{r['dtype']}` op", r["seconds"], f"its bytes' share "
                                     f"({Value(r['nbytes'] / f32['nbytes'], '%').text()}) of `float32`'s time",
                                     f32["seconds"] * r["nbytes"] / f32["nbytes"], name=r["dtype"]) for r in others]
    return claims + gone + [Cause(OLD_ONE, claims[0], ("below",))] * (not cpu and "pointwise_one" not in run.meta)


def matmul_claims(run) -> list:
    """Each narrower type's matmul against float32's (a GPU's int8 against the faster 16-bit float one)."""
    (f32, others, gone), gpu = _types(run, "matmul"), (run.meta.get("device") or {}).get("backend") == "cuda"
    if f32 is None:
        return gone
    halves, claims, notes = [r for r in others if r["dtype"] != "int8"], [], []
    old = {"data", "int8_b"} - set(run.meta) if gpu else set()
    for r in others:
        base = min(halves, key=lambda h: h["seconds"]) if r["dtype"] == "int8" and gpu and halves else f32
        if r.get("peak_flops") and r["flops"] / r["seconds"] > ABOVE_ROOF * r["peak_flops"]:
            claims.append(Bound(f"the `{r['dtype']}` matmul", r["flops"] / r["seconds"], r["peak_flops"], "its roof",
                                "FLOP/s", measured_roof=not gpu, name=r["dtype"]))
            continue
        claims.append(Compare(f"the `{r['dtype']}` matmul", r["seconds"], f"the `{base['dtype']}` one", base["seconds"],
                              name=r["dtype"]))
        notes += [Cause(OLD_DATA, claims[-1], ("shorter",))] if "data" in old and r is halves[0] else []
        notes += [Cause(OLD_INT8, claims[-1], ("longer",))] if "int8_b" in old and base is not f32 else []
    return claims + gone + notes


def repeat_claims(run) -> list:
    """The knee against the multiplication roof's, the FLOP/s against that roof, the eager growth, the bandwidth."""
    (dev, _, _, cpu), meta, roof = _device(run), run.meta, Roofline.from_dict(run.meta["roof"])
    item, recs = 8 if meta.get("dtype") == "float64" else 4, sorted(run.records, key=lambda r: r["repeat"])
    fused, eager = ([r for r in recs if r["variant"] == v] for v in ("fused", "eager"))
    grew = lambda label, rows: Compare(f"{label} at repeat {rows[-1]['repeat']}", rows[-1]["seconds"],  # noqa: E731
                                       f"at repeat {rows[0]['repeat']}", rows[0]["seconds"], name=label.split()[1])
    claims = [Compare("the measured knee", meta["measured_knee"], "the knee the multiplication roof predicts",
                      chain_knee(roof.ridge, item), "", name="knee")] if meta.get("measured_knee") else \
        [grew("the fused runtime", fused)] if len(fused) > 1 else []
    claims += [Bound(f"the fused kernel at repeat {r['repeat']}", r["flops"] / r["seconds"], peak_share("mul") *
                     roof.peak_flops, "the multiplication roof (half the FP32 peak)", "FLOP/s", measured_roof=cpu,
                     name="compute") for r in fused[-1:]]
    claims += [grew("the eager runtime", eager)] if len(eager) > 1 else []
    mover = max(recs, key=lambda r: r["nbytes"] / r["seconds"])
    return claims + [Bound(f"the {mover['variant']} kernel at repeat {mover['repeat']}, the sweep's fastest mover,",
                           mover["nbytes"] / mover["seconds"], roof.peak_bandwidth, "the roof's bandwidth", "B/s",
                           nbytes=2 * meta.get("n", 0) * item, cache_bytes=dev.get("l2_bytes"), measured_roof=cpu,
                           name="bandwidth")]


FOLLOWED = ("So the second `cos` cost nothing extra: the pair moved the bytes of one `cos` in about its time, and the "
            "time followed the traffic, as He argues.")
ARITHMETIC = "So fusing saved no time: the arithmetic of the second `cos`, not its bytes, set the pair's time."


def cos_claims(run) -> list:
    """The fused and unfused pairs against one ``cos`` and each other, and the case that held."""
    rows = {(r["k"], r["variant"]): r for r in run.records}
    one, fused, unfused = rows.get((1, "fused"), rows.get((1, "unfused"))), rows[(2, "fused")], rows[(2, "unfused")]
    pair = Compare("the fused `cos().cos()`", fused["seconds"], "one `cos`", one["seconds"], name="fused")
    twice = Compare("the unfused pair", unfused["seconds"], "one `cos`", one["seconds"], name="unfused")
    fusing = Compare("the fused pair", fused["seconds"], "the unfused pair", unfused["seconds"], name="fusing")
    return [pair, twice, fusing] + ([Cause(FOLLOWED, pair, ("same",))] if twice.outcome == "longer" else []) + \
        ([Cause(ARITHMETIC, fusing, ("same",))] if pair.outcome == "longer" else [])


STREAM = {"copy": "A copy reads and writes each element once, {nbytes} in all: at the peak bandwidth, {bandwidth} "
                  "({whence}), at least **{least}**.\n\nOn the {ref}, at {ref_bandwidth}: **{ref_least}**.",
          "triad": "The triad reads `x` and `y` and writes `out`: 12 bytes and 2 FLOPs per element, {nbytes} and "
                   "{flops} in all. {regime} So at this device's peak bandwidth, {bandwidth} ({whence}), it takes at "
                   "least **{least}**.\n\n{ref_regime} So there it takes at least **{ref_least}**."}
TWO_OPS = ("`A @ v` does {mv_flops} on {mv_bytes}, {mv_intensity} FLOP/byte; `B @ B` does {mm_flops} on {mm_bytes}, "
           "{mm_intensity} FLOP/byte. This device's ridge is {ridge} FLOP/byte.\n\nHere {mv} {mm}\n\nOn the {ref}, "
           "whose ridge is {ref_ridge} FLOP/byte, {ref_mv} {ref_mm}")


def stream_answer(kernel: str, elements: int, dev):
    """Worked problems 1 and 2: the least time of a float32 copy (8 bytes per element) or triad (12, 2 FLOPs)."""
    (here, ref), triad = worked_roofs(dev), kernel == "triad"
    flops, nbytes = 2 * elements * triad, (8 + 4 * triad) * elements
    whence = ("measured on this CPU when brrr first met it, not a hardware limit" if not dev.on_gpu else
              "derived from its clocks" if dev.spec is None else "its spec sheet")
    slots = dict(nbytes=Value(nbytes, "B"), whence=whence, bandwidth=Value(here.peak_bandwidth, "B/s"),
                 least=Value(here.t_mem(nbytes), "s", name="least"), ref=ref.name,
                 ref_bandwidth=Value(ref.peak_bandwidth, "B/s"), ref_least=Value(ref.t_mem(nbytes), "s"))
    if triad:
        slots.update(flops=Value(flops, "FLOP"), regime=Regime("the triad", flops, nbytes, here, name="triad"),
                     ref_regime=Regime(f"on the {ref.name}, at its spec sheet's {slots['ref_bandwidth'].text()},"
                                       " the triad", flops, nbytes, ref))
    return fill(STREAM[kernel], **slots)


def two_ops_answer(m: int, k: int, dev):
    """Worked problem 3: which of ``A @ v`` (A m x m) and ``B @ B`` (B k x k) is memory-bound, here and there."""
    (here, ref), (mv_f, mv_b) = worked_roofs(dev), (2 * m * m, 4 * m * m + 8 * m)
    mm_f, mm_b = 2 * k ** 3, 12 * k * k
    return fill(TWO_OPS, mv_flops=Value(mv_f, "FLOP"), mv_bytes=Value(mv_b, "B"), mv_intensity=Value(mv_f / mv_b),
                mm_flops=Value(mm_f, "FLOP"), mm_bytes=Value(mm_b, "B"), mm_intensity=Value(mm_f / mm_b),
                ridge=Value(here.ridge), ref=ref.name, ref_ridge=Value(ref.ridge),
                mv=Regime("`A @ v`", mv_f, mv_b, here, name="A @ v"),
                mm=Regime("`B @ B`", mm_f, mm_b, here, name="B @ B"),
                ref_mv=Regime("`A @ v`", mv_f, mv_b, ref), ref_mm=Regime("`B @ B`", mm_f, mm_b, ref))


def check(dev, ops: dict):
    """Worked problems' checks: each of ``ops`` ({name: (a Timing or the roofline experiment's record of the same
    call, with its bytes and FLOPs, or None; the name of the record it would be)}) against its least time here."""
    here = worked_roofs(dev)[0]

    def claims(_):
        out = []
        for name, (t, record) in ops.items():
            if t is None:
                out += [Missing(record, "so its time is not shown")]
                continue
            get = t.get if isinstance(t, dict) else lambda key: getattr(t, "median" if key == "seconds" else key)
            who = f"the roofline experiment's {name} ({t['library']})" if isinstance(t, dict) else f"the {name}"
            out += [Bound(who, get("seconds"), float(here.time(get("flops") or 0, get("nbytes"))), "the roofline",
                          nbytes=get("nbytes"), cache_bytes=dev.l2_bytes, measured_roof=not dev.on_gpu, name=name)]
            out += [] if isinstance(t, dict) else [Noisy(who, t.iqr, t.median)]
        return out
    return say(claims, ops)
