"""Worked problems of Chapters 1 to 3: an answer (``facts['seconds']``: the predicted time) from the device's
peaks and the reference GPU's spec sheet, and the ``*check`` functions: what a measurement found against it."""
from __future__ import annotations

from . import Prose, needs_measurements
from . import words as w

REFERENCE = "H100-SXM"   # the reference GPU's key in brrr.specs.GPU_SPECS
WITHIN = 0.20            # a measurement within 20% of the prediction is "as predicted"
NEAR_ROOF = 0.5          # half the peak or more is "near the roof"


def _whence(dev) -> str:
    return ("measured on this CPU when brrr first met it, not a hardware limit" if not dev.on_gpu else
            "derived from its clocks" if dev.spec is None or dev.source.startswith("unknown") else "its spec sheet")


def roofs(dev) -> tuple:
    """``dev``'s FP32 roofline (spec sheet on a known GPU, measured on a CPU) and the reference GPU's (spec)."""
    from ..roofline import Roofline
    from ..specs import GPU_SPECS
    spec = GPU_SPECS[REFERENCE]
    return (Roofline(peak_flops=dev.peak_flops("float32"), peak_bandwidth=dev.peak_bandwidth, name=dev.name),
            Roofline(peak_flops=spec.fp32, peak_bandwidth=spec.bandwidth, name=spec.name))


def reference_seconds(experiment: str, **match):
    """``(seconds, run)`` of the shipped reference GPU record of ``experiment`` with the fields ``match``, or None."""
    from ..reference import load
    return next(((rec["seconds"], run) for run in load(experiment) for rec in run.records
                 if all(rec.get(k) == v for k, v in match.items())), None)


def _reference(t: float, t_ref: float, found=None) -> str:
    r = t / t_ref
    text = f"**{w.seconds(t_ref)}**, " + ("the same as here." if abs(r - 1) < 1e-9 else
                                          "about the same as here." if abs(r - 1) <= w.SAME else
                                          f"{w.times(r)} faster than here." if r > 1 else
                                          f"{w.times(1 / r)} as long as here.")
    return text + ("" if found is None else f" The book's reference run on an {w.device_of(found[1])} "
                                            f"({w.date_of(found[1])}) took {w.seconds(found[0])} at this size.")


def matmul_time(n: int, dev) -> Prose:
    """Least time of an n x n float32 matmul: 2n^3 FLOPs at the peak, here and on the reference GPU."""
    (here, ref), flops, nbytes = roofs(dev), 2 * n ** 3, 12 * n ** 2
    t = here.t_math(flops)
    text = (f"The matmul does 2n³ = {w.integer(flops)} FLOPs. At this device's FP32 peak, {w.rate(here.peak_flops)} "
            f"({_whence(dev)}), they take at least **{w.seconds(t)}**. Its three matrices, {w.size(nbytes)}, need "
            f"only {w.seconds(here.t_mem(nbytes))} at the peak bandwidth, so the arithmetic sets the bound.\n\n"
            f"On the reference {ref.name}, at the spec sheet's FP32 peak of {w.rate(ref.peak_flops)}: "
            + _reference(t, ref.t_math(flops), reference_seconds("matmul_vs_size", n=n, dtype="float32")))
    return Prose(text, {"problem": "matmul", "seconds": t, "n": n})


def matmul_ridge(dev) -> Prose:
    """The n from which a square float32 matmul is compute-bound: n / 6 = ridge, so n = 6 x ridge."""
    from ..specs import GPU_SPECS
    here, ref = roofs(dev)
    n, n_ref = max(1, round(6 * here.ridge)), max(1, round(6 * ref.ridge))
    tf32 = GPU_SPECS[REFERENCE].tf32_tensor / ref.peak_bandwidth
    text = (f"Compute-bound means n/6 ≥ ridge, so n ≥ 6 × ridge. Here the ridge is {w.rate(here.peak_flops)} / "
            f"{w.rate(here.peak_bandwidth, 'B/s')} ≈ {w.number(here.ridge)} FLOP/byte (from the unrounded peaks): "
            f"from about **n = {w.integer(n)}** the roofline allows the full peak.\n\nOn the reference {ref.name} the FP32 "
            f"ridge is {w.number(ref.ridge)}, so n = {w.integer(n_ref)}; on its TF32 tensor cores it is "
            f"{w.number(tf32)}, so n = {w.integer(round(6 * tf32))}: the faster the arithmetic, the larger a matmul "
            "must be to keep it busy.")
    return Prose(text, {"problem": "ridge", "seconds": here.t_math(2 * n ** 3), "n": n, "reference_n": n_ref})


def elementwise_vs_matmul(n: int, dev) -> Prose:
    """How many times longer an n x n matmul takes than ``x * 2`` on one of its matrices."""
    (here, ref), flops, nbytes = roofs(dev), 2 * n ** 3, 8 * n ** 2
    ratio, ratio_ref = (r.t_math(flops) / r.t_mem(nbytes) for r in (here, ref))
    text = (f"`x * 2` does n² FLOPs, the matmul 2n³: {w.integer(2 * n)} times as many. But `x * 2` reads 4 and "
            f"writes 4 bytes per element, 1/8 FLOP/byte, far below this device's ridge of {w.number(here.ridge)}: "
            f"memory-bound, and its bound is {w.size(nbytes)} at the peak bandwidth, {w.seconds(here.t_mem(nbytes))}. "
            f"The matmul's is {w.seconds(here.t_math(flops))}, so the roofline predicts a ratio of "
            f"**{w.number(ratio)}**, not {w.integer(2 * n)}.\n\nOn the reference {ref.name} the two bounds are "
            f"{w.seconds(ref.t_mem(nbytes))} and {w.seconds(ref.t_math(flops))}, a ratio of {w.number(ratio_ref)}: "
            + ("smaller than here, as its ridge is higher: its FLOPs are cheaper next to its bytes."
               if ratio_ref < ratio else "larger than here, as its ridge is lower: a FLOP costs more next to a byte."))
    return Prose(text, {"problem": "elementwise", "seconds": here.t_mem(nbytes), "n": n, "ratio": ratio})


def stream_time(kernel: str, elements: int, dev) -> Prose:
    """Least time of STREAM's 'copy' (8 bytes per float32 element) or 'triad' (12 bytes, 2 FLOPs) of ``elements``."""
    (here, ref), nbytes = roofs(dev), (8 if kernel == "copy" else 12) * elements
    t = here.t_mem(nbytes)
    text = ((f"A copy reads each element once and writes it once, {w.size(nbytes)} in all, and does no arithmetic."
             if kernel == "copy" else f"The triad reads x and y and writes out: 12 bytes and 2 FLOPs per element, "
             f"1/6 FLOP/byte, far below this device's ridge of {w.number(here.ridge)}: memory-bound, so its "
             f"{w.size(nbytes)} set the time.") + f" At this device's peak bandwidth, "
            f"{w.rate(here.peak_bandwidth, 'B/s')} ({_whence(dev)}), that takes at least **{w.seconds(t)}**.\n\nOn the "
            f"reference {ref.name}, at the spec sheet's {w.rate(ref.peak_bandwidth, 'B/s')}: "
            + _reference(t, ref.t_mem(nbytes), reference_seconds("measure_roofline", op=kernel, nbytes=float(nbytes))))
    return Prose(text, {"problem": kernel, "seconds": t, "nbytes": nbytes, "cache_bytes": dev.l2_bytes})


def two_ops(m: int, k: int, dev) -> Prose:
    """Which of ``A @ v`` (A m x m) and ``B @ B`` (B k x k) is memory-bound, and their least times."""
    here, ref = roofs(dev)
    ops = {"A @ v": (2 * m * m, 4 * m * m + 8 * m), "B @ B": (2 * k ** 3, 12 * k * k)}
    parts = [f"`{name}` does {w.integer(flops)} FLOPs on {w.size(nbytes)}, {w.number(flops / nbytes)} FLOP/byte: "
             f"**{here.regime(flops, nbytes)}** here (ridge {w.number(here.ridge)}), at least "
             f"{w.seconds(float(here.time(flops, nbytes)))}; on the reference {ref.name} (ridge {w.number(ref.ridge)}) "
             f"{ref.regime(flops, nbytes)}, at least {w.seconds(float(ref.time(flops, nbytes)))}."
             for name, (flops, nbytes) in ops.items()]
    regimes = {name: here.regime(*op) for name, op in ops.items()}
    return Prose("\n\n".join(parts), {"problem": "two ops", "regimes": regimes, "ops": ops})


def tiny_add(n: int, fixed_cost: float, dev, library: str = "numpy") -> Prose:
    """The roofline's time of an add of n float32 elements, and the prediction that counts: the fixed cost."""
    here, ref = roofs(dev)
    roof = float(here.time(n, 12 * n))
    text = (f"By the roofline, {w.integer(12 * n)} bytes and {w.integer(n)} FLOPs take {w.seconds(roof)} here and "
            f"{w.seconds(float(ref.time(n, 12 * n)))} on the reference {ref.name}: the wrong model for a call this "
            f"small. Predict the fixed cost of a call, which the sweep above measured for `{library}`: "
            f"**{w.seconds(fixed_cost)}**, {w.times(fixed_cost / roof)} the roofline's time.")
    return Prose(text, {"problem": "tiny add", "seconds": fixed_cost, "roofline": roof, "n": n,
                        "bound": False})


@needs_measurements
def add_crossover(fixed_cost: float, dev) -> Prose:
    """The size at which an add's bytes, at the peak bandwidth, take as long as its fixed cost."""
    here, ref = roofs(dev)
    n, n_ref = (max(1, round(fixed_cost * r.peak_bandwidth / 12)) for r in (here, ref))
    t = fixed_cost if dev.on_gpu else 2 * fixed_cost
    text = (f"The work equals the fixed cost where 12n bytes / bandwidth = {w.seconds(fixed_cost)}: n = fixed cost × "
            f"{w.rate(here.peak_bandwidth, 'B/s')} / 12 = **{w.integer(n)} elements** ({w.size(12 * n)} moved). "
            f"{_combined(dev, 'a call', t)}\n\nOn the reference {ref.name}, with the same fixed cost, n = "
            f"{w.integer(n_ref)}.")
    return Prose(text, {"problem": "crossover", "seconds": t, "n": n, "nbytes": 12 * n,
                        "cache_bytes": dev.l2_bytes, "bound": False, "overlapped": dev.on_gpu})


def _combined(dev, what: str, t: float) -> str:
    return (f"On a GPU, calls made back to back overlap the two (the host issues the next while the GPU runs these), "
            f"so {what} should take about the larger, the fixed cost itself: **{w.seconds(t)}**." if dev.on_gpu else
            f"On a CPU one thread issues the calls and does the work, so the two add: {what} should take about twice "
            f"the fixed cost, **{w.seconds(t)}**.")


def _cpu_threads() -> int:   # the threads a CPU's peaks were measured on: all of them
    import os
    return os.cpu_count() or 1


def batch_to_amortise(t1: float, width: int, depth: int, dev, threads=None) -> Prose:
    """The batch at which an MLP's work (each kernel's bound, summed) equals its batch-1 time ``t1``; on a CPU
    the peak is scaled to ``threads`` (the sweep's PyTorch threads; None: all)."""
    here, ref = roofs(dev)
    flops, weights, acts = 2 * depth * width ** 2, 4 * depth * (width * width + width), 16 * depth * width
    share = min(1.0, threads / _cpu_threads()) if threads and not dev.on_gpu else 1.0
    peak = share * here.peak_flops

    def batch(peak_flops, bandwidth):   # the work per pass is the larger of two lines in the batch: each Linear
        per_sample = flops / peak_flops + acts / 2 / bandwidth   # at the peak plus each ReLU's bytes, or every
        return max(2, round(min(t1 / per_sample, (t1 * bandwidth - weights) / acts)))   # kernel's bytes
    b, b_ref = batch(peak, here.peak_bandwidth), batch(ref.peak_flops, ref.peak_bandwidth)
    t = t1 if dev.on_gpu else 2 * t1
    text = (f"Per sample the {depth} layers do {depth} × 2 × {width}² = {w.integer(flops)} FLOPs and move "
            f"{w.size(acts)} of activations (each Linear and each ReLU reads and writes {width} floats), and each "
            "pass reads the weights once. Each kernel's least time is its FLOPs at the peak or its bytes at the "
            "bandwidth, whichever is longer, and the kernels run one after another, so the pass's work is the sum. ")
    if share < 1:
        text += (f"The sweep held PyTorch to {w.spelled(threads)} of this CPU's {_cpu_threads()} threads, while its "
                 f"peak, {w.rate(here.peak_flops)}, was measured on all of them: split evenly, "
                 f"{w.spelled(threads)} thread{'s' if threads > 1 else ''} can do about {w.rate(peak)}. At that "
                 "rate and the peak bandwidth")
    else:
        text += "At this device's peaks"
    text += (f" that work reaches the batch-1 time of {w.seconds(t1)} at a batch of about **{w.integer(b)}**. "
             + _combined(dev, "the pass there", t)
             + f"\n\nOn the reference {ref.name}, were its fixed costs the same, that batch would be "
             f"{w.integer(b_ref)}.")
    return Prose(text, {"problem": "batch", "seconds": t, "batch": b, "on_gpu": dev.on_gpu, "bound": False,
                        "threads": threads if share < 1 else None, "peak_share": share, "batch_1": t1})


_BEAT = "on a CPU the peak is itself a measurement, which this run beat (a measured roof, not a hardware limit)"
_PEAK_BW = "the peak bandwidth is the most the memory can move, not what a kernel gets"
REASONS = {  # problem: (why slower, why faster; None: the arrays were in the caches, or the CPU's peak was beaten)
    "matmul": ("the peak is every arithmetic unit busy on every cycle, which no real matmul sustains: the next "
               "section measures how near it gets at each n", _BEAT + "; on a GPU, check whether tensor cores did the work"),
    "copy": (_PEAK_BW, None),
    "triad": (_PEAK_BW, None),
    "tiny add": (("this is a second timing of the call the sweep timed; timing the two side by side, interleaved, as "
                  "the table of one call does, shows whether the difference repeats"),) * 2,
    "crossover": ("the prediction assumed the peak bandwidth, and the size sweep's linear part shows the bandwidth "
                  "this library's add reached", None),
    "batch": ("the prediction assumed every kernel at its roof; timing each layer alone at this batch "
              "(`brrr.bench`) shows which fell short",
              "part of the batch-1 time was not a fixed cost after all"),
}


def _s(t) -> float:
    return getattr(t, "median", t)   # a Timing's median, or seconds as they are


def _shaky(*timings) -> str:   # a sentence when the timer found any of ``timings`` (Timings, or seconds: never) noisy
    return (" The timer found the samples noisy (a wide spread between repeats), so part of this difference may "
            "be chance: re-running shows how much."
            if any(note.startswith("noisy") for t in timings for note in getattr(t, "warnings", ())) else "")


def _why(f: dict, slower: bool) -> str:
    """Why a measurement missed the prediction: the answer's ``reasons`` fact, else :data:`REASONS`."""
    text = (f.get("reasons") or REASONS[f["problem"]])[0 if slower else 1]
    if text is None:
        cached = fits_cache(f["nbytes"], f["cache_bytes"])
        text = (f"its {w.size(f['nbytes'])} {fit_words(f['nbytes'], f['cache_bytes'])} the caches, faster than the "
                "DRAM the roof's bandwidth assumes" if cached else _BEAT)
    if f["problem"] == "batch" and slower and not f["on_gpu"] and f.get("threads"):
        text += (f", and {w.spelled(f['threads'])} thread's even share of a peak measured on all of them is only "
                 "an estimate" if f["threads"] == 1 else
                 f", and {f['threads']} threads' even share of a peak measured on all of them is only an estimate")
    return text


def fits_cache(nbytes, cache_bytes) -> bool:
    """Whether ``nbytes`` fit, at least in part, in ``cache_bytes`` of cache (under four times as many)."""
    return bool(nbytes and cache_bytes) and nbytes < 4 * cache_bytes


def fit_words(nbytes, cache_bytes) -> str:
    return "fit in" if nbytes and cache_bytes and nbytes <= cache_bytes else "fit, at least in part, in"


def why_above(nbytes=None, cache_bytes=None, on_cpu=None, whose: str = "its") -> str:
    """Why a run beat the roofline's least time: its ``nbytes`` fit in the ``cache_bytes`` of cache, or, on a
    CPU (``on_cpu``; None: unknown), the roof is a measurement."""
    if fits_cache(nbytes, cache_bytes):
        return (f"{whose} {w.size(nbytes)} {fit_words(nbytes, cache_bytes)} the {w.size(cache_bytes)} of cache, "
                "faster than the DRAM the roof's bandwidth assumes")
    if on_cpu is None:
        return "on a CPU the roof is itself a measurement (a measured roof, not a hardware limit), which a run can beat"
    return ("the roof is this CPU's own measurement (the best that brrr timed when it first met it), not a hardware "
            "limit, and a run can beat it" if on_cpu else
            "a GPU's spec sheet is a hardware limit, so part of the bytes must have come from its caches")


def beyond_roof(shares: dict, nbytes: dict = None, cache_bytes=None, on_cpu=None) -> str:
    """A sentence for the runs in ``shares`` ({name: speed over the roofline's}) that beat their roof, and why
    (:func:`why_above`, with ``nbytes`` {name: bytes}); '' when none did."""
    above = {name: share for name, share in shares.items() if share > 1 + 1e-9}
    if not above:
        return ""
    one, nbytes = len(above) == 1, nbytes or {}
    most = max((nbytes.get(name) or 0) for name in above) or None
    return (f" {w.listing(f'{name} ({w.percent(share)})' for name, share in above.items())} ran above "
            f"{'its' if one else 'their'} roof, faster than the roofline allows: "
            f"{why_above(most, cache_bytes, on_cpu, 'its' if one else 'their')}.")


@needs_measurements
def check(measured, answer: Prose, what: str = "The measurement") -> Prose:
    """A measured time (seconds, or a Timing) against the answer's; where the prediction is the roofline's least
    time (``bound`` is not False), a faster run is above the roof, and the text says so and why."""
    f, seconds = answer.facts, _s(measured)
    ratio, text, predicted = seconds / f["seconds"], f"{what} took {w.seconds(seconds)}, ", w.seconds(f["seconds"])
    above = ratio < 1 and f.get("bound", True)
    if abs(ratio - 1) <= WITHIN:
        outcome = "as predicted"
        text += f"within {w.percent(abs(ratio - 1))} of the predicted {predicted}" + (
            f", and below it, which the roofline does not allow: {_why(f, False)}." if above else ".")
    elif ratio > 1:
        outcome, text = "slower", text + f"{w.times(ratio)} the predicted {predicted}: {_why(f, True)}."
    else:
        outcome, text = "faster", text + f"{w.times(1 / ratio)} faster than the predicted {predicted}" + (
            ", the roofline's least time, so above the roof" if above else "") + f": {_why(f, False)}."
    text += "" if outcome == "as predicted" else _shaky(measured)
    if "roofline" in f:
        text += f" That is {w.times(seconds / f['roofline'])} the roofline's {w.seconds(f['roofline'])}."
    return Prose(text, {"outcome": outcome, "ratio": ratio, "above_roof": above})


@needs_measurements
def ridge_check(timings, sizes, dev) -> Prose:
    """Matmuls at the ridge size and larger (``sizes``, ascending; ``timings`` each): the share of the peak."""
    shares = [2 * n ** 3 / _s(t) / dev.peak_flops("float32") for n, t in zip(sizes, timings)]
    text = f"At the ridge size, n = {w.integer(sizes[0])}, the matmul reached "
    if shares[0] >= NEAR_ROOF:
        outcome, text = "near", text + f"{w.percent(shares[0])} of the peak: close to what the roofline allows."
    else:
        outcome, text = "below", text + (f"only {w.percent(shares[0])} of the peak, {w.times(1 / shares[0])} slower "
                                         "than the roofline allows.")
    text += f" At n = {w.integer(sizes[-1])} it reached {w.percent(shares[-1])}" + (
        ": still far from the peak, so a matmul here must be larger still to come near it."
        if shares[-1] < NEAR_ROOF else ": the ridge is where a matmul *can* become compute-bound; real ones get "
        "there at larger sizes." if outcome == "below" else ".")
    return Prose(text, {"outcome": outcome, "shares": shares})


@needs_measurements
def ratio_check(matmul, elementwise, answer: Prose) -> Prose:
    """The measured ratio of the two times (seconds or Timings), matmul / ``x * 2``, against the predicted one."""
    f, ratio = answer.facts, _s(matmul) / _s(elementwise)
    eff_x, eff_mm = f["seconds"] / _s(elementwise), f["seconds"] * f["ratio"] / _s(matmul)
    text = (f"The matmul took {w.times(ratio)} as long as `x * 2`: nowhere near the {w.integer(2 * f['n'])} the FLOP "
            "counts suggest, and ")
    outcome = "as predicted" if abs(ratio / f["ratio"] - 1) <= WITHIN else "smaller" if ratio < f["ratio"] else "larger"
    text += (f"within {w.percent(abs(ratio / f['ratio'] - 1))} of the roofline's {w.number(f['ratio'])}."
             if outcome == "as predicted" else f"{outcome} than the roofline's {w.number(f['ratio'])}: `x * 2` ran "
             f"at {w.percent(eff_x)} of the speed its bytes allow, the matmul at {w.percent(eff_mm)} of the speed "
             "its FLOPs allow." + _shaky(matmul, elementwise))
    return Prose(text, {"outcome": outcome, "ratio": ratio})


FAR_BELOW = 0.25         # under a quarter of the roof is "far below" it (between this and words.ON_ROOF: "below")
FIXED_MATTERS = 0.05     # a call's fixed cost is worth naming as a reason once it is 5% of the call's time


@needs_measurements
def two_ops_check(matvec, matmul, answer: Prose, dev, fixed_cost: float = None) -> Prose:
    """How near ``A @ v`` and ``B @ B`` (seconds or Timings) came to the roof each is bound by, in the answer;
    below it, ``fixed_cost`` (a call's, measured on the page; None: not measured) against the shorter call."""
    f, parts, shares, times = answer.facts, [], {}, {}
    for (name, (flops, nbytes)), t in zip(f["ops"].items(), (matvec, matmul)):
        roof = "bandwidth" if f["regimes"][name] == "memory-bound" else "FLOP/s"
        shares[name], times[name] = (nbytes / dev.peak_bandwidth if roof == "bandwidth" else
                                     flops / dev.peak_flops()) / _s(t), _s(t)
        parts.append(f"`{name}` ran at {w.percent(shares[name])} of its roof, the peak {roof}")
    far = [f"`{name}`" for name, share in shares.items() if share < FAR_BELOW]
    some = [f"`{name}`" for name, share in shares.items() if FAR_BELOW <= share < w.ON_ROOF]
    close = [f"`{name}`" for name, share in shares.items() if w.ON_ROOF <= share <= 1 + 1e-9]
    beyond = beyond_roof({f"`{name}`": share for name, share in shares.items()},
                         {f"`{name}`": nbytes for name, (_, nbytes) in f["ops"].items()}, dev.l2_bytes,
                         not dev.on_gpu)
    if far or some:
        shortest = min(times[name] for name, share in shares.items() if share < w.ON_ROOF)
        which = "that" if len(far + some) == 1 else "the shorter"
        end = " and ".join(([f"far below for {w.listing(far)}"] if far else []) +
                           ([f"below for {w.listing(some)}"] if some else []) +
                           ([f"near for {w.listing(close)}"] if close else [])) + "."
        if fixed_cost is None:
            end += " The roofline leaves out the fixed cost of a call (Chapter 3)."
        elif fixed_cost >= shortest:   # two clocks: a fixed cost longer than the call is not in its timing
            end += (f" The fixed cost of a call, {w.seconds(fixed_cost)}, timed on the host, is longer than the "
                    f"{w.seconds(shortest)} {which} call took, so it is not in that timing"
                    + ("; `brrr.bench` times a GPU's call on the GPU's own clock." if dev.on_gpu else "."))
        else:
            matters = fixed_cost >= FIXED_MATTERS * shortest
            end += (f" {'The roofline leaves out the' if matters else 'The'} fixed cost of a call, "
                    f"{w.seconds(fixed_cost)}, {'which is' if matters else 'is only'} "
                    f"{w.percent(fixed_cost / shortest)} of {which} call's time.")
        end += _shaky(matvec, matmul)
        outcome = "far" if far else "below"
    else:   # near: those above their roof are said so in the same sentence, each named once
        outcome, end = "near", _all_near(shares, f["ops"], dev)
    return Prose(", and ".join(parts) + ": " + end + (beyond if outcome != "near" else ""),
                 {"outcome": outcome, "shares": shares, "above_roof": bool(beyond)})


def _all_near(shares: dict, ops: dict, dev) -> str:
    """Two runs near their roofs, those above theirs named once, with why."""
    above = [name for name, share in shares.items() if share > 1 + 1e-9]
    if not above:
        return "both near their roofs, as predicted."
    near = [f"`{name}`" for name in shares if name not in above]
    why = why_above(max(ops[name][1] for name in above), dev.l2_bytes, not dev.on_gpu,
                    "its" if len(above) == 1 else "their")
    if not near:
        return f"both above their roofs, faster than the roofline allows: {why}."
    return (f"{w.listing(near)} near its roof, as predicted, and {w.listing(f'`{name}`' for name in above)} above "
            f"its own, faster than the roofline allows: {why}.")
