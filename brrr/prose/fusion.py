"""Chapter 4, fusion: each cell's claims and the worked answers' templates. A chain's least time takes its op at the
most of the peak it can reach (``least_seconds``), and a speed-up, a ratio, is judged by each side's least time."""
from __future__ import annotations

import math

from ..claims import Bound, Compare, Noisy, Regime, Value, fill, say
from ..experiments.fusion_epilogue import epilogue_bounds
from ..experiments.fusion_model import cap_length, ceiling_roof, crossover_k, past_cap
from ..fusion_tables import OP_NAMES, chain_pairs, fusers_of, least_seconds
from ..kernel_source import peak_share
from ..roofline import Roofline, has_spec_sheet, reference_roof

WORKED_K = 8     # Worked problem 1's chain, whose row of the sweep checks its answer
FOCUS_K = 16     # the chain length at which torch.compile's speed-up is set against the model


def _where(run) -> dict:   # what a Bound needs to say why a point beat its roof
    dev = run.meta.get("device") or {}
    return dict(cache_bytes=dev.get("l2_bytes"), measured_roof=not has_spec_sheet(dev))


def _bound(run, rec, subject: str) -> Bound:
    share = peak_share(rec["op"], rec.get("backend", "cuda"))
    return Bound(subject, rec["seconds"], least_seconds(run, rec),
                 f"the roofline ({OP_NAMES[rec['op']]} at {share:.0%} of the peak)", nbytes=8 * rec["n"], **_where(run))


def _speedup(run, pair: dict, subject: str) -> Compare:   # measured against the roofline's, both at least times
    return Compare(subject, pair["unfused"]["seconds"] / pair["fused"]["seconds"], "the roofline's prediction",
                   least_seconds(run, pair["unfused"]) / least_seconds(run, pair["fused"]), unit="x")


def _longest(run, fuser) -> list:   # the two sides of the longest chain, each against its own least time
    k = max(pairs := chain_pairs(run, fuser), default=None)
    return [] if k is None else [_bound(run, pairs[k]["fused"], f"the `{pairs[k]['fused']['library']}` fused "
                                        f"chain of {k}"), _bound(run, pairs[k]["unfused"], f"its {k} unfused passes")]


def sweep_claims(run) -> list:
    """The hand-written fusers' sweep: Worked problem 1's chain, then each fuser's longest chain."""
    check = [_speedup(run, p, f"at k = {WORKED_K}, Worked problem 1's chain, the `{p['fused']['library']}` speed-up")
             for p in [chain_pairs(run).get(WORKED_K)] if p]
    return check + [c for fuser in fusers_of(run) for c in _longest(run, fuser)]


def compiled_claims(kernels):
    """claims_of the torch.compile sweep: its speed-up near FOCUS_K, longest chain, fused kernel against ``kernels``."""
    def claims_of(run):
        pairs, mine = chain_pairs(run), chain_pairs(kernels) if kernels is not None else {}
        if not pairs:
            return []
        k, both = min(pairs, key=lambda j: abs(math.log(j / FOCUS_K))), max(set(mine) & set(pairs), default=None)
        out = [_speedup(run, pairs[k], f"the `{pairs[k]['fused']['library']}` speed-up at k = {k}"),
               *_longest(run, fusers_of(run)[0])]
        return out + ([Compare(f"`torch.compile`'s fused chain of {both}", pairs[both]["fused"]["seconds"],
                               f"the `{mine[both]['fused']['library']}` one", mine[both]["fused"]["seconds"])]
                      if both and fusers_of(run)[0] == "torch_compile" else [])
    return claims_of


def cos_claims(run) -> list:
    """He's fused ``cos().cos()`` against one cos; the longest chain, fused and not; the last cosine's cost."""
    pairs = chain_pairs(run)
    fused = {k: p["fused"]["seconds"] for k, p in pairs.items()}
    out = [Compare("the fused `cos().cos()`", fused[2], "one `cos`", fused[1]) if {1, 2} <= set(fused) else None]
    if len(pairs) >= 2:
        (k0, k1), n = sorted(pairs)[-2:], pairs[max(pairs)]["fused"]["n"]
        out.append(Compare(f"the fused chain of {k1} cosines", fused[k1], f"its {k1} unfused passes",
                           pairs[k1]["unfused"]["seconds"]))
        extra = (fused[k1] - fused[k0]) / (k1 - k0)
        out.append(Compare(f"each cosine added to the fused chain from k = {k0} to {k1}", extra, "one FLOP per "
                           "element at the roof's peak", n / run.meta["roof"]["peak_flops"]) if extra > 0 else None)
    return out


def epilogue_claims(run) -> list:
    """``relu(x @ w + b)``: each variant, and the speed-up, against the sum of its kernels' roofline times."""
    by, least = {r["variant"]: r["seconds"] for r in run.records}, epilogue_bounds(run)
    where = dict(nbytes=4 * run.meta["shape"][0] * run.meta["shape"][1], **_where(run))
    eager = Bound("eager mode's three kernels", by["eager"], least["eager"], "the sum of their own rooflines", **where)
    if "torch.compile" not in by:
        return [eager]
    what = " and ".join(f"`{x}`" for x in run.meta.get("compiled_kernels") or []) or "one fused kernel, had it been one"
    return [Compare("`torch.compile`'s layer", by["torch.compile"], "eager mode's", by["eager"]), eager,
            Bound(f"the kernels `torch.compile` launched ({what})", by["torch.compile"], least["torch.compile"],
                  "the sum of their own rooflines", **where),
            Compare("the measured speed-up", by["eager"] / by["torch.compile"], "the one those bounds predict",
                    least["eager"] / least["torch.compile"], unit="x")]


def timed(timing, least: float, subject: str, dev, nbytes: float, name: str = "") -> list:
    """A :class:`brrr.Timing`'s median against its ``least`` seconds on ``dev``'s roofline, and its noise."""
    return [Bound(subject, timing.median, least, "the roofline", nbytes=nbytes, cache_bytes=dev.l2_bytes,
                  measured_roof=not dev.on_gpu, name=name), Noisy(subject, timing.iqr, timing.median)]


def chain_check(fused, unfused, k: int, n: int, dev):
    """Worked problem 1 measured: the speed-up against the roofline's, and each side against its least time (N4-M1)."""
    roof = ceiling_roof(Roofline.from_device(dev), "mul", dev.backend)
    t_f, t_u = float(roof.time(k * n, 8 * n)), 8 * k * n / roof.peak_bandwidth
    return say(lambda t: [Compare(f"the measured speed-up of the chain of {k}", t[1].median / t[0].median,
                                  "the roofline's prediction", t_u / t_f, unit="x"),
                          *timed(t[0], t_f, "the fused kernel", dev, 8 * n),
                          *timed(t[1], t_u, f"the {k} unfused passes", dev, 8 * n)],
               None if fused is None or unfused is None else (fused, unfused),
               record="worked_fused_chain" if fused is None else "worked_unfused_chain")


def long_check(timing, k: int, n: int, dev, op: str = "mul", record: str = "worked_long_chain"):
    """Worked problem 2 or 3 measured: the fused chain of ``k`` against its least time, its op at its ceiling."""
    least = float(ceiling_roof(Roofline.from_device(dev), op, dev.backend).time((1 + (op == "ffma")) * k * n, 8 * n))
    return say(lambda t: timed(t, least, f"the fused chain of {k} {OP_NAMES[op]}", dev, 8 * n), timing, record=record)


PREDICTION = ("On this roof ({bandwidth} and {peak}: a ridge at {ridge}), a fused chain of float32 multiplications "
              "reaches the ridge at k = {cross} at the full peak, and at k = {own} at half of it, the most "
              "multiplications can reach, where the ridge is {own_ridge}: there the last two speed-up columns level "
              "off.")
CHAIN = ("Unfused, each of the {k} passes reads the array and writes a new one: 2 × {k} × {n} × 4 bytes = "
         "{unfused}. Fused, the chain reads it once and writes it once: {fused}, for the same {flops}. {regime} "
         "Each unfused pass is memory-bound too, {unfused_time} for all {k}, so the roofline's speed-up is "
         "**{speedup}**.\n\n{ref_regime} The speed-up there is {ref_speedup}.")
CAP = ("The fused chain moves 8 bytes per element whatever k is. The peak, {peak}, counts a fused multiply-add, one "
       "instruction, as two FLOPs; a multiplication is one instruction and one FLOP, so a chain of them does at most "
       "{rate}. Its least time is the larger of its bytes at {bandwidth} and its multiplications at {rate}, equal "
       "at k = 8 × {rate} / {bandwidth}, four times the ridge of {ridge}: about **k = {k_cap}**, past which fusing "
       "more stops paying. {regime}\n\nOn an H100 SXM ({ref_rate} for multiplications, {ref_bandwidth}) the cap is "
       "at k = {ref_cap}. {ref_regime}")
FMA = ("A multiply-add is two FLOPs as the peak counts them, but on a GPU `fma` is one instruction, a fused "
       "multiply-add, in the issue slot a multiplication takes: a chain of them can reach the full peak (brrr's CPU "
       "kernels run it as a multiply, then an add, and reach half of it). Here that is {rate}: its 2k FLOPs take as "
       "long as its 8 bytes per element at {bandwidth} at k = 4 × {rate} / {bandwidth}: about **k = {k_cap}**. "
       "{versus} {regime}\n\nOn an H100 SXM ({ref_rate} for multiply-adds, {ref_bandwidth}) the cap is at k = "
       "{ref_cap}. {ref_regime}")


def prediction(roof: Roofline):
    """The ridge and the two crossovers of the table above (nothing measured)."""
    return fill(PREDICTION, bandwidth=Value(roof.peak_bandwidth, "B/s"), peak=Value(roof.peak_flops, "FLOP/s"),
                ridge=Value(roof.ridge, "FLOP/byte"), cross=Value(crossover_k(roof), ""), own_ridge=Value(
                    ceiling_roof(roof).ridge, "FLOP/byte"), own=Value(crossover_k(roof, at_ceiling=True), ""))


def chain(k: int, n: int, dev):
    """Worked problem 1: a chain of ``k`` float32 multiplications (at their ceiling, N4-M1), fused and not."""
    def on(roof, backend):
        roof = ceiling_roof(roof, "mul", backend)
        t_f, t_u = float(roof.time(k * n, 8 * n)), 8 * k * n / roof.peak_bandwidth
        return Regime(f"the fused chain on {roof.name}, its multiplications at "
                      f"{Value(roof.peak_flops, 'FLOP/s').text()},", k * n, 8 * n, roof), t_u, Value(t_u / t_f, "")
    (regime, t_u, speedup), (ref, _, ref_speedup) = (on(Roofline.from_device(dev), dev.backend),
                                                     on(reference_roof(), "cuda"))
    return fill(CHAIN, k=str(k), n=f"{n:,}", unfused=Value(8 * k * n, "B"), fused=Value(8 * n, "B"),
                flops=Value(k * n, "FLOP"), regime=regime, unfused_time=Value(t_u, "s"), speedup=speedup,
                ref_regime=ref, ref_speedup=ref_speedup)


def cap(n: int, dev, op: str = "mul"):
    """Worked problem 2 (``op='mul'``) or 3 (``'ffma'``): where a fused chain stops paying, and one twice as long."""
    here, ref = Roofline.from_device(dev), reference_roof()
    (top, k_cap), (ref_top, ref_cap) = ((ceiling_roof(r, op, b), cap_length(r, op, b))
                                        for r, b in ((here, dev.backend), (ref, "cuda")))
    k, rate = past_cap(here, op, dev.backend), Value(top.peak_flops, "FLOP/s")

    def regime(roof, where):
        return Regime(f"a fused chain of {k} {OP_NAMES[op]} on {n:,} elements {where}", (1 + (op == "ffma")) * k * n,
                      8 * n, roof)
    extra = dict(ridge=Value(here.ridge, "FLOP/byte"), peak=Value(here.peak_flops, "FLOP/s")) if op == "mul" else \
        dict(versus=Compare("this length", k_cap, "the cap of a chain of multiplications (Worked problem 2)",
                            cap_length(here, "mul", dev.backend), unit="count"))
    said = fill(CAP if op == "mul" else FMA, rate=rate, bandwidth=Value(here.peak_bandwidth, "B/s"),
                k_cap=Value(k_cap, "count"), regime=regime(top, f"at {rate.text()}"),
                ref_rate=Value(ref_top.peak_flops, "FLOP/s"), ref_bandwidth=Value(ref.peak_bandwidth, "B/s"),
                ref_cap=Value(ref_cap, "count"), ref_regime=regime(ref_top, "on an H100 SXM (this page's length, not "
                                                                   "twice the H100's own cap)"), **extra)
    said.facts.update(k=k, k_cap=k_cap)
    return said
