"""Chapter 1, compute: sentences chosen by the measurements.

Each function takes the chapter's live result and the reference runs of the
same experiment (from :func:`brrr.reference.beside`) and returns
:class:`~brrr.prose.Prose`. The spec-sheet bars are data, not measurements;
:func:`spec_ratios` describes them all the same, so that no number is typed
into the chapter.
"""
from __future__ import annotations

from . import Prose, paragraphs, with_references
from . import words as w

PLATEAU = 0.8       # points at 80% or more of a curve's best are "on its plateau"
FLAT = 1.3          # best / worst below this: the curve is flat
ABOVE_ROOF = 1.05   # 5% above a roof is "above" it (less is noise)
DIP = 0.7           # a point below 70% of the one before it, on the way up, is a dip
HALF = 0.5          # where a curve first reaches half its best
GAP_SHOWS = 0.7     # a measured gap of 70% of the spec's or more "mostly shows"
THIS_RUNS_BEST = "this run's best"
NEAR = 1.5          # a call within 1.5x its roofline minimum is "close to" it
OVERHEAD = 3.0      # a call taking 3x its roofline minimum spends most of its time elsewhere


# --- the shape of a curve ---------------------------------------------------------------

def curve(xs, ys) -> dict:
    """The shape of ``ys`` against increasing ``xs``.

    ``shape`` is 'flat' (best under 1.3x the worst), 'falls after its best' (the last
    point is below 80% of the best), 'uneven' (the last point is back near the best,
    after a fall below 80% of it: ``low_x`` is the lowest point past the best), 'still
    rising' (only the last point is on the plateau) or 'flattens' (the plateau, the
    points from ``plateau_x`` on, all at 80% of the best or more, holds two points or
    more). ``half_x``: the first x at half the best; ``dips``: (x before, x after) pairs
    where the curve fell by 30% or more on its way up to its best.
    """
    pairs = sorted(zip(xs, ys))
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    best = max(ys)
    i_best = ys.index(best)
    start = len(ys)   # the plateau: the trailing points at PLATEAU * best or more (none: len)
    while start > 0 and ys[start - 1] >= PLATEAU * best:
        start -= 1
    if best < FLAT * min(ys):
        shape = "flat"
    elif ys[-1] < PLATEAU * best:
        shape = "falls after its best"
    elif i_best < start:
        shape = "uneven"
    elif start == len(ys) - 1:
        shape = "still rising"
    else:
        shape = "flattens"
    dips = [(xs[i], xs[i + 1]) for i in range(i_best) if ys[i + 1] < DIP * ys[i]]
    half_x = next(x for x, y in zip(xs, ys) if y >= HALF * best)
    low = min(range(i_best, len(ys)), key=ys.__getitem__)
    return {"shape": shape, "best": best, "best_x": xs[i_best], "first": ys[0], "first_x": xs[0],
            "last": ys[-1], "last_x": xs[-1], "plateau_x": xs[start] if start < len(ys) else None,
            "half_x": half_x, "dips": dips, "low_x": xs[low], "low": ys[low], "xs": xs, "ys": ys}


def _uneven(c: dict, what: str, value) -> str:
    """The sentence for an 'uneven' curve (``value`` formats a y value)."""
    return (f" The curve is uneven: after its best at {what} = {w.number(c['best_x'])} it fell to {value(c['low'])} "
            f"at {what} = {w.number(c['low_x'])}, then came back to {value(c['last'])} at {what} = "
            f"{w.number(c['last_x'])}. The model predicts a steady rise, so read the fall as noise: on a machine "
            "shared with other programs, a measurement can lose its cores for a while.")


def _dips(c: dict, what: str, worse: str) -> str:
    """A sentence on the dips of curve ``c`` (x named ``what``; ``worse``: 'ran at fewer FLOP/s than')."""
    if not c["dips"]:
        return ""
    a, b = c["dips"][0]
    more = f" (and {len(c['dips']) - 1} more such dip{'s' if len(c['dips']) > 2 else ''})" if len(c["dips"]) > 1 else ""
    return (f" The rise is not smooth: {what} = {w.number(b)} {worse} {what} = {w.number(a)}{more}. "
            "The model predicts that a larger problem is never slower per FLOP, so read that as noise: on a "
            "machine shared with other programs, a single measurement can lose its cores for a while.")


def _and(names) -> str:
    """'a', 'a and b', 'a, b and c'."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _kind_of_peak(result) -> str:
    return "measured roof" if w.is_cpu(result) else "spec-sheet peak"


def _by_name(runs, result) -> object:
    """The run in ``runs`` from the same device as ``result`` (or None)."""
    name = w.device_of(result)
    return next((r for r in runs if w.device_of(r) == name), None)


# --- the spec sheets --------------------------------------------------------------------

def spec_ratios(frame) -> Prose:
    """What the spec-sheet table (from :func:`brrr.specs.tensor_vs_general`) says about the
    ratio of tensor-core to general-math peaks, and where it is small."""
    ratios = dict(zip(frame["GPU"], frame["ratio"]))
    lo, hi = min(ratios, key=ratios.get), max(ratios, key=ratios.get)
    big = [g for g, r in ratios.items() if r >= 10]
    small = [g for g, r in ratios.items() if r <= 2.5]
    text = (f"These are spec-sheet figures, not measurements. The ratio is not one number: it runs from "
            f"{w.number(ratios[lo], 2)} ({lo}) to {w.number(ratios[hi], 2)} ({hi}).")
    if big:
        text += (f" The data-centre parts built for training, {_and(big)}, put {w.number(min(ratios[g] for g in big), 2)} "
                 "to " f"{w.number(max(ratios[g] for g in big), 2)} times more FP16 throughput into their tensor cores "
                 "than into general math: He's sixteen-fold gap.")
    if small:
        geforce = all("GeForce" in g for g in small)
        text += (f" The small ratios belong to {_and(small)}"
                 + (": consumer cards, whose spec lists FP16 tensor math with FP32 accumulation at half the "
                    "rate of FP16 accumulation." if geforce else ".")
                 + " Even there, a matmul can use the tensor cores and nothing else can.")
    return Prose(text, {"min_ratio": ratios[lo], "max_ratio": ratios[hi], "min_gpu": lo, "max_gpu": hi,
                        "big": big, "small": small})


# --- matmul throughput against size -------------------------------------------------------

def _matmul_curve(result) -> dict:
    recs = [r for r in result.records if r.get("op", "matmul") == "matmul"]
    c = curve([r["n"] for r in recs], [r["gflops"] * 1e9 for r in recs])
    c["peak"] = max(r["peak_flops"] for r in recs)
    c["fractions"] = {r["n"]: r["gflops"] * 1e9 / r["peak_flops"] for r in recs}
    c["above"] = sorted(n for n, f in c["fractions"].items() if f > ABOVE_ROOF)
    c["dtype"] = recs[0].get("dtype", "float32")
    return c


def _above_roof_sentence(result, above: list, what: str) -> str:
    """Why points measured above the peak line (a CPU's measured roof, or a spec sheet)."""
    if not above:
        return ""
    names = ", ".join(f"{what} = {w.number(x)}" for x in above)
    if w.is_cpu(result):
        return (f" {names} measured above the line. That line is a measured roof: the best of a few NumPy "
                "matmuls that `brrr.device()` timed once and cached, not the hardware's peak, so a later, "
                "quieter or better-tuned run can beat it. The hardware's own limit is higher still.")
    return (f" {names} measured above the spec-sheet peak, which no part should do for long: the datasheet "
            "figure assumes a clock this part exceeded, or the timing was disturbed.")


def _roof_size(result):
    """The matmul size a CPU's measured roof was taken at ('... 2048x2048 np.matmul'), else None."""
    import re
    if not w.is_cpu(result):
        return None
    found = re.search(r"(\d+)x\1 np\.matmul", (result.meta.get("device") or {}).get("source", ""))
    return int(found.group(1)) if found else None


def matmul_curve(result, references=()) -> Prose:
    """How the square-matmul FLOP/s rose with n on this device and on each reference GPU,
    where it flattened and at what fraction of the peak line."""
    c = _matmul_curve(result)
    kind = _kind_of_peak(result)
    frac = lambda n: w.percent(c["fractions"][n])  # noqa: E731
    text = (f"On {w.device_of(result)}, the {c['dtype']} matmul went from {w.rate(c['first'])} at n = "
            f"{w.number(c['first_x'])} ({frac(c['first_x'])} of the {kind}, {w.rate(c['peak'])}) to a best of "
            f"{w.rate(c['best'])} at n = {w.number(c['best_x'])} ({frac(c['best_x'])}).")
    if c["shape"] == "flattens":
        text += (f" From n = {w.number(c['plateau_x'])} on, the curve flattens: every larger matrix ran within "
                 f"{w.percent(1 - PLATEAU)} of the best.")
        if c["best"] >= HALF * c["peak"]:
            text += (" There the matmul is compute-bound: the arithmetic units, not the fixed cost of a call or "
                     "the memory traffic, set its time.")
        else:
            text += (f" It levels off at only {frac(c['best_x'])} of the {kind}, so even there something other than "
                     "the arithmetic units holds it back: on a shared machine, other programs take cores the "
                     "roof was measured with.")
    elif c["shape"] == "still rising":
        text += (f" It was still rising at the largest size, n = {w.number(c['last_x'])}: this sweep stopped "
                 "before the curve flattened" + (" (the quick build stops at small matrices)."
                                                 if result.meta.get("quick") else "."))
    elif c["shape"] == "falls after its best":
        text += (f" Past its best it fell again: n = {w.number(c['last_x'])} ran at {w.rate(c['last'])}, "
                 f"{w.percent(c['last'] / c['best'])} of the best.")
        llc = (result.meta.get("device") or {}).get("l2_bytes") or 0
        item = 2 if c["dtype"] in ("float16", "bfloat16") else 8 if c["dtype"] == "float64" else 4
        if llc and 3 * item * c["best_x"] ** 2 <= llc < 3 * item * c["last_x"] ** 2:
            text += (f" The three matrices of n = {w.number(c['last_x'])} ({w.size(3 * item * c['last_x'] ** 2)}) "
                     f"no longer fit in the {w.size(llc)} last-level cache, and the library's blocking did not "
                     "fully hide the trips to DRAM.")
        else:
            text += " That is not what the model predicts; the likeliest cause is a busy machine during that point."
    elif c["shape"] == "uneven":
        text += _uneven(c, "n", w.rate)
    else:
        text += (" The curve barely changed across the sweep: it never showed the rise that small matmuls "
                 "should show, which a short sweep or a busy machine can hide.")
    text += _dips(c, "n", "ran at fewer FLOP/s than")
    text += _above_roof_sentence(result, c["above"], "n")
    roof_n = _roof_size(result)
    busy = roof_n in c["fractions"] and c["fractions"][roof_n] < HALF
    if busy:
        text += (f" At n = {w.number(roof_n)}, the very size the measured roof was taken at, this run reached only "
                 f"{frac(roof_n)} of it: the roof is the best of a few calls timed when `brrr` first met this "
                 "machine, this is a median, and the machine was busier now than then.")
    facts = {"outcome": c["shape"], "best_flops": c["best"], "best_n": c["best_x"], "peak": c["peak"], "busy": busy,
             "best_fraction": c["best"] / c["peak"], "first_fraction": c["fractions"][c["first_x"]],
             "plateau_n": c["plateau_x"], "half_n": c["half_x"], "above_roof": c["above"]}
    return with_references(Prose(text, facts), references, "this sweep", lambda run: _reference_matmul(run, c))


def _reference_matmul(run, c: dict) -> Prose:
    """A reference run's matmul curve against this run's (``c``)."""
    r = _matmul_curve(run)
    t = (f"{w.reference_intro(run)}, the same sweep went from {w.percent(r['fractions'][r['first_x']])} of "
         f"its {_kind_of_peak(run)} at n = {w.number(r['first_x'])} to "
         f"{w.percent(r['fractions'][r['best_x']])} at n = {w.number(r['best_x'])} ({w.rate(r['best'])}, "
         f"{w.relative(r['best'], c['best'], THIS_RUNS_BEST)})")
    t += (f", flattening from n = {w.number(r['plateau_x'])}." if r["shape"] == "flattens" else
          ", still rising at its largest size." if r["shape"] == "still rising" else ".")
    if r["half_x"] > c["half_x"]:
        t += (f" It needed larger matrices to get going: it first reached half its best at n = "
              f"{w.number(r['half_x'])}, this run at n = {w.number(c['half_x'])}. A GPU spreads a matmul over "
              "all its streaming multiprocessors, and a small one leaves most of them idle while still "
              "paying microseconds to launch.")
    elif r["half_x"] < c["half_x"]:
        t += (f" It reached half its best sooner, at n = {w.number(r['half_x'])} against this run's "
              f"n = {w.number(c['half_x'])}.")
    else:
        t += f" Both reached half their best at the same size, n = {w.number(r['half_x'])}."
    return Prose(t, {f"reference {w.device_of(run)}": r["shape"], f"reference {w.device_of(run)} best": r["best"]})


# --- tensor cores -------------------------------------------------------------------------

MATH = {"float32": "TF32", "float16": "FP16", "bfloat16": "BF16", "float64": "FP64"}


def _tensor_kinds(result) -> list:
    """[(math name, curve, peak, on tensor cores)] per dtype of a tensor-core run."""
    out = []
    for dtype in dict.fromkeys(r["dtype"] for r in result.records):
        recs = [r for r in result.records if r["dtype"] == dtype]
        tc = all(r["tensor_cores"] for r in recs)
        c = curve([r["n"] for r in recs], [r["gflops"] * 1e9 for r in recs])
        name = MATH.get(dtype, dtype) if tc else f"{dtype} (general math)"
        out.append((name, c, max(r["peak_flops"] for r in recs), tc))
    return out


def _tensor_summary(result, fp32=None, where: str = "") -> str:
    """Each kind of math's best rate and share of its peak; with ``fp32`` (the same device's
    float32 general-math sweep), how the fastest compares with it (``where``: where that is drawn)."""
    parts = []
    for name, c, peak, tc in _tensor_kinds(result):
        s = (f"{name} reached {w.rate(c['best'])} at n = {w.number(c['best_x'])}, {w.percent(c['best'] / peak)} "
             f"of its {_kind_of_peak(result)}")
        if c["best"] > ABOVE_ROOF * peak:
            s += " (above it: the datasheet figure is conservative for this part)"
        if c["shape"] == "still rising":
            s += ", still rising at the largest size"
        parts.append(s)
    text = "; ".join(parts) + "."
    if fp32 is not None:
        best32 = _matmul_curve(fp32)["best"]
        top = max(c["best"] for _, c, _, _ in _tensor_kinds(result))
        text += (f" The fastest of them did {w.relative(top, best32, 'the FP32 general-math best')} "
                 f"({w.rate(best32)}{', ' + where if where else ''}).")
    return text


def tensor_cores(result, references=(), fp32=None, fp32_references=()) -> Prose:
    """The tensor-core sweep: measured here (a GPU), or the reference GPU's (a CPU has no
    tensor cores), or neither; each compared with the FP32 general-math sweep of the same
    device (``fp32``: this run's, ``fp32_references``: the references')."""
    facts = {"live": result is not None, "references": len(references)}
    in_fig = "in [the float32 figure](#fig-matmul)"
    if result is not None:
        kinds = _tensor_kinds(result)
        if not any(tc for *_, tc in kinds):
            text = (f"{w.device_of(result)} has no tensor cores for these types, so every sweep in "
                    "[the tensor-core figure](#fig-tensor-cores) ran on general math: "
                    + _tensor_summary(result, fp32, in_fig))
            facts["outcome"] = "no tensor cores"
        else:
            text = (f"On {w.device_of(result)}, in [the tensor-core figure](#fig-tensor-cores), "
                    + _tensor_summary(result, fp32, in_fig))
            facts["outcome"] = "measured"
        facts["best"] = {name: c["best"] for name, c, _, _ in kinds}
    else:
        device = w.device_of(fp32) if fp32 is not None else "This device"
        cpu = fp32 is None or w.is_cpu(fp32)
        why = (" (tensor cores are a GPU's; most CPUs multiply float32 matrices on the same vector units as "
               "everything else)" if cpu else "")
        if not references:
            facts["outcome"] = "nothing to show"
            return Prose(f"{device} has no tensor cores{why}, so this cell measured nothing here; and no reference "
                         "GPU run of the tensor-core sweep ships with this edition of the book yet, so there is no "
                         "figure either. On a GPU runtime (Colab's, for one) the cell measures TF32, FP16 and BF16 "
                         "matmuls; the spec sheets above say by how much they should beat FP32 general math.", facts)
        facts["outcome"] = "reference only"
        text = (f"{device} has no tensor cores{why}, so this cell measured nothing here; "
                "[the tensor-core figure](#fig-tensor-cores) shows the reference GPU's run instead.")
    return with_references(Prose(text, facts), references, "the tensor-core sweep",
                           lambda run: _reference_tensor(run, fp32_references))


def _reference_tensor(run, fp32_references) -> Prose:
    """A reference run's tensor-core sweep against the FP32 sweep of the same device."""
    t = f"{w.reference_intro(run)}, " + _tensor_summary(run, _by_name(fp32_references, run),
                                                          "grey in the float32 figure")
    return Prose(t, {f"reference {w.device_of(run)}": {n: c["best"] for n, c, _, _ in _tensor_kinds(run)}})


# --- MFU against the batch ----------------------------------------------------------------

def _mfu_facts(result) -> dict:
    recs = sorted(result.records, key=lambda r: r["batch"])
    c = curve([r["batch"] for r in recs], [r["mfu"] for r in recs])
    return {"curve": c, "first": recs[0], "above": [r["batch"] for r in recs if r["mfu"] > ABOVE_ROOF]}


def mfu(result, references=()) -> Prose:
    """MFU of one Linear layer at the smallest and the best batch, why the smallest is low
    (its roofline regime and its time against the roofline's minimum), and the references."""
    f = _mfu_facts(result)
    c, first = f["curve"], f["first"]
    width = result.meta.get("width", first.get("width"))
    kind = _kind_of_peak(result)
    text = (f"On {w.device_of(result)}, with a batch of {first['batch']} the `Linear({width}, {width})` layer "
            f"ran at {w.percent(c['first'])} MFU; the best batch, {w.number(c['best_x'])}, reached "
            f"{w.percent(c['best'])}")
    if c["best"] > (1 + w.SAME) * c["first"]:
        text += (f", {w.times(c['best'] / c['first'])} as much. Same layer, same weights, same FLOPs per row: "
                 "only the batch changed.")
    else:
        text += ": the batch made little difference here."
    if c["shape"] == "flattens":
        text += f" From batch {w.number(c['plateau_x'])} on, MFU stayed within {w.percent(1 - PLATEAU)} of its best."
    elif c["shape"] == "still rising":
        text += " MFU was still rising at the largest batch."
    elif c["shape"] == "falls after its best":
        text += f" Past its best it fell again, to {w.percent(c['last'])} at batch {w.number(c['last_x'])}"
        llc = (result.meta.get("device") or {}).get("l2_bytes") or 0
        nbytes = {r["batch"]: r["nbytes"] for r in result.records}
        text += (f": its {w.size(nbytes[c['last_x']])} of weights and activations no longer fit in the "
                 f"{w.size(llc)} last-level cache." if llc and nbytes[c["best_x"]] <= llc < nbytes[c["last_x"]]
                 else ", which the model does not predict; the likeliest cause is a busy machine.")
    elif c["shape"] == "uneven":
        text += _uneven(c, "batch", w.percent)
    text += _dips(c, "batch", "had a lower MFU than")
    peak = result.meta.get("peak_flops") or first["peak_flops"]
    bw = result.meta.get("peak_bandwidth") or (result.meta.get("device") or {}).get("peak_bandwidth")
    facts = {"outcome": c["shape"], "first_mfu": c["first"], "best_mfu": c["best"], "best_batch": c["best_x"],
             "above_roof": f["above"]}
    if bw:
        ridge = peak / bw
        ratio = first["seconds"] / first["roofline_seconds"]
        memory = first["intensity"] < ridge
        text += (f" At batch {first['batch']} the layer does {w.number(first['intensity'], 2)} FLOPs per byte it must "
                 f"move (the weights dominate), {'below' if memory else 'above'} this device's ridge of "
                 f"{w.number(ridge)} FLOP/byte: by the roofline it is "
                 f"{'memory-bound (Chapter 2)' if memory else 'compute-bound'}.")
        if ratio > OVERHEAD:
            text += (f" It took {w.seconds(first['seconds'])}, {w.times(ratio)} the roofline's least time of "
                     f"{w.seconds(first['roofline_seconds'])}: most of the call is neither arithmetic nor memory "
                     "traffic but the fixed cost of a call (Chapter 3)" + (
                         ", or time lost to other programs on a shared machine." if w.is_cpu(result) else "."))
            facts["small_batch"] = "overhead"
        elif ratio < 1 / (1 + w.SAME):
            text += (f" It took {w.seconds(first['seconds'])}, less than the {w.seconds(first['roofline_seconds'])} "
                     f"the roofline allows for reading its {w.size(first['nbytes'])} from DRAM: the calls were "
                     "timed back to back, so the weights stayed in the cache and did not come from DRAM.")
            facts["small_batch"] = "cached"
        elif ratio <= NEAR:
            text += (f" It took {w.seconds(first['seconds'])}, {w.times(ratio)} the roofline's least time of "
                     f"{w.seconds(first['roofline_seconds'])}: close to what the "
                     f"{'memory traffic' if memory else 'arithmetic'} alone costs.")
            facts["small_batch"] = "near roofline"
        else:
            text += (f" It took {w.seconds(first['seconds'])}, {w.times(ratio)} the roofline's least time of "
                     f"{w.seconds(first['roofline_seconds'])}: the {'memory traffic' if memory else 'arithmetic'} "
                     f"accounts for {w.percent(1 / ratio)} of the call, and the rest is the fixed cost of calling "
                     "the layer (Chapter 3)" + (", or time lost to other programs on a shared machine."
                                                if w.is_cpu(result) else "."))
            facts["small_batch"] = "partly overhead"
    if f["above"]:
        text += _above_roof_sentence(result, f["above"], "batch") + (
            " PyTorch's own matmul library can be faster than NumPy's." if w.is_cpu(result) else "")
    elif c["best"] >= HALF:
        text += f" At its best the layer is close to compute-bound: {w.percent(c['best'])} of the {kind}."
    return with_references(Prose(text, facts), references, "this sweep", lambda run: _reference_mfu(run, c))


def _reference_mfu(run, c: dict) -> Prose:
    """A reference run's MFU curve against this run's (``c``)."""
    r = _mfu_facts(run)["curve"]
    t = (f"{w.reference_intro(run)}, the same layer ran at {w.percent(r['first'])} MFU at batch "
         f"{w.number(r['first_x'])} and {w.percent(r['best'])} at its best batch, {w.number(r['best_x'])}; it "
         f"first reached half its best MFU at batch {w.number(r['half_x'])}, "
         + (f"this run at batch {w.number(c['half_x'])}." if r["half_x"] != c["half_x"] else "as did this run."))
    if r["half_x"] > c["half_x"]:
        t += (" A GPU's peak is so much higher that it takes far more rows before the arithmetic, rather "
              "than the weights' trip from memory and the launch, sets the time.")
    return Prose(t, {f"reference {w.device_of(run)}": r["best"]})


# --- elementwise against matmul -------------------------------------------------------------

def _gap_facts(result) -> dict:
    by = {r["kind"]: r for r in result.records}
    x2 = by.get("elementwise x * 2")
    chain = by.get("elementwise fused FMA chain")
    mm = by.get("matmul FP32")
    tc = by.get("matmul FP16 tensor cores")
    best_mm = max((r for r in (mm, tc) if r), key=lambda r: r["gflops"])
    best_el = max((r for r in (x2, chain) if r), key=lambda r: r["gflops"])
    repeat = result.meta.get("repeat") or (round(4 * chain["intensity"]) if chain else None)
    return {"x2": x2, "chain": chain, "mm": mm, "tc": tc, "gap": best_mm["gflops"] / best_el["gflops"],
            "spec_gap": result.meta.get("spec_gap"), "repeat": repeat, "best_mm": best_mm, "best_el": best_el}


def _rate_of(r) -> str:
    return f"{w.rate(r['gflops'] * 1e9)} ({w.percent(r['fraction_of_peak'])} of its peak)"


def _gap_list(g: dict) -> str:
    items = [f"`x * 2` reached {_rate_of(g['x2'])}"]
    if g["chain"]:
        items.append(f"the fused chain of {w.number(g['repeat'])} multiply-adds per element {_rate_of(g['chain'])}")
    items.append(f"the FP32 matmul {_rate_of(g['mm'])}")
    if g["tc"]:
        items.append(f"the FP16 matmul on tensor cores {_rate_of(g['tc'])}")
    return ", ".join(items[:-1]) + " and " + items[-1]


def elementwise_gap(result, references=()) -> Prose:
    """The measured matmul-over-elementwise gap against the spec's (GPU), or why a CPU shows
    no such gap; and what `x * 2`'s FLOP/s says."""
    g = _gap_facts(result)
    dev, cpu = w.device_of(result), w.is_cpu(result)
    text = f"On {dev}, {_gap_list(g)}."
    facts = {"gap": g["gap"], "spec_gap": g["spec_gap"]}
    if g["spec_gap"] and g["tc"]:
        shows = g["gap"] >= GAP_SHOWS * g["spec_gap"]
        facts["outcome"] = "gap shows" if shows else "gap smaller"
        text += (f" The fastest matmul did {w.times(g['gap'])} the FLOP/s of the best elementwise kernel; the spec "
                 f"sheet's ratio of FP16 tensor-core to FP32 general math is {w.number(g['spec_gap'], 2)}. ")
        if shows:
            text += "Most of the spec-sheet gap shows up in the measurement: it is a property of the hardware."
        else:
            low = min((g["chain"] or g["x2"], g["tc"]), key=lambda r: r["fraction_of_peak"])
            text += ("Less of it shows than the spec sheet predicts, because "
                     + ("the elementwise chain came closer to its peak than the tensor-core matmul did to its own."
                        if low is g["tc"] else
                        "the elementwise chain fell further short of its peak than the matmul did.") )
    elif cpu:
        ratio = g["mm"]["gflops"] / g["chain"]["gflops"] if g["chain"] else None
        if ratio is None:
            facts["outcome"] = "no chain"
            text += (" The fused chain could not run here (it needs `brrr.kernels`), so only `x * 2` stands for "
                     "elementwise work.")
        elif ratio > 1 + w.SAME:
            facts["outcome"] = "matmul faster"
            text += (f" The matmul did {w.times(ratio)} the chain's FLOP/s. That is no sixteen-fold gap, and none "
                     "was to be found: most CPUs have no separate unit for float32 matmuls, so the chain and the "
                     "matmul run on the same vector (SIMD) units, and the matmul library (BLAS) only uses them better, with cache "
                     "blocking and many independent multiply-adds in flight.")
        elif ratio < 1 / (1 + w.SAME):
            facts["outcome"] = "chain faster"
            text += (f" Here the chain outran the matmul, {w.times(1 / ratio)} its FLOP/s. Most CPUs have no separate "
                     "unit for float32 matmuls: both run on the same vector (SIMD) units, so nothing in the hardware favours the "
                     f"matmul, and at n = {w.number(result.meta.get('matmul_n') or 0)} this one reached only "
                     f"{w.percent(g['mm']['fraction_of_peak'])} of the measured roof.")
        else:
            facts["outcome"] = "about the same"
            text += (" The chain and the matmul ran at about the same FLOP/s: most CPUs have no separate unit for "
                     "float32 matmuls, so both keep the same vector (SIMD) units busy, and there is no sixteen-fold gap to find.")
        if g["chain"] and g["chain"]["fraction_of_peak"] > ABOVE_ROOF:
            text += (" The chain's rate is above the measured roof: that roof is a matmul's best, not the limit of "
                     "the vector units, which a well-vectorised chain can come closer to.")
    else:
        facts["outcome"] = "no tensor cores"
        text += (f" This GPU has no FP16 tensor cores known to `brrr`, so the fastest matmul did "
                 f"{w.times(g['gap'])} the FLOP/s of the best elementwise kernel on the same general-math units.")
    # x * 2: the same arithmetic, one FLOP per 8 bytes.
    x2 = g["x2"]
    dev_meta = result.meta.get("device") or {}
    bw = dev_meta.get("peak_bandwidth")
    t = ""
    if g["chain"]:
        t = (f"`x * 2` does the same arithmetic as the chain, yet reached {w.times(g['chain']['gflops'] / x2['gflops'])} "
             "fewer FLOP/s: one multiplication per 8 bytes moved is far too little to keep the arithmetic units busy.")
    else:
        t = "`x * 2` does one multiplication per 8 bytes moved, far too little to keep the arithmetic units busy."
    facts["x2_gflops"] = x2["gflops"]
    if bw:
        frac = x2["gbps"] * 1e9 / bw
        facts["x2_bandwidth_fraction"] = frac
        roof = "measured" if cpu else "spec-sheet"
        if frac > ABOVE_ROOF:
            working = x2["nbytes"]   # source and result
            llc = dev_meta.get("l2_bytes") or 0
            t += (f" It moved {w.rate(x2['gbps'] * 1e9, 'B/s')}, {w.times(frac)} the {roof} DRAM bandwidth: its "
                  f"{w.size(working)} of source and result ")
            if llc and working <= llc:
                t += f"fit in the {w.size(llc)} last-level cache, so the traffic need not reach DRAM."
            elif llc and working < 4 * llc:
                t += (f"are less than four times the {w.size(llc)} last-level cache, so part of the traffic was "
                      "served from it.")
            else:
                t += "are far larger than any cache, so the DRAM roof understates this machine."
            facts["x2_outcome"] = "above bandwidth"
        elif frac >= 0.3:
            t += (f" It moved {w.rate(x2['gbps'] * 1e9, 'B/s')}, {w.percent(frac)} of the {roof} DRAM bandwidth: "
                  "memory, not arithmetic, sets its speed. Chapter 2 is about that limit.")
            facts["x2_outcome"] = "memory-bound"
        else:
            t += (f" It moved only {w.rate(x2['gbps'] * 1e9, 'B/s')}, {w.percent(frac)} of the {roof} DRAM bandwidth: "
                  "neither arithmetic nor bandwidth limited it. Its time went to the fixed cost of a call, or to "
                  "other programs sharing the machine (Chapter 3).")
            facts["x2_outcome"] = "below both"
    return with_references(paragraphs(Prose(text, facts), Prose(t, {})), references, "this comparison",
                           lambda run: _reference_gap(run, cpu))


def _reference_gap(run, cpu: bool) -> Prose:
    """A reference run's rates and gap (``cpu``: this run is a CPU's, which has no such gap)."""
    r = _gap_facts(run)
    s = f"{w.reference_intro(run)}, {_gap_list(r)}: the fastest matmul did {w.times(r['gap'])} the best elementwise FLOP/s"
    s += (f", against the spec sheet's {w.number(r['spec_gap'], 2)}." if r["spec_gap"] else ".")
    if cpu:
        s += " There the tensor cores make the gap: separate units that do nothing but multiply matrices."
    return Prose(s, {f"reference {w.device_of(run)}": r["gap"]})
