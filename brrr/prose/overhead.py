"""Chapter 3, overhead: each generated cell's ``claims_of(run)`` (for :func:`brrr.claims.say`), and the worked
answers (:func:`brrr.claims.fill` templates), whose checks compare a time with both models. Seconds; elements."""
from __future__ import annotations

from ..claims import SAME, Bound, Cause, Compare, Missing, Regime, Share, Value, fill, say
from ..experiments import fusion_model as fm, overhead as ov
from ..roofline import Roofline, reference_roof

HE_PYTHON_OPS = 32e6          # He (2022): Python runs about 32 million additions per second
HE_A100_MEANWHILE = 9.75e6    # He (2022): FLOPs an A100 does in the time of one Python operation
NAMES = {"numpy": "NumPy", "torch": "PyTorch", "cupy": "CuPy"}
REF = reference_roof()   # the worked answers' reference GPU's float32 roof, by its spec sheet
MODEL = {"cuda": "a GPU, where they overlap", "cpu": "a CPU, where they add"}
UNANSWERED = "so this answer has no measured fixed cost to start from"
NEAREST, NO_FIXED = "so this check takes the sweep's size nearest the answer's", "and this page has no fixed cost"
DIPPED = ("More elements cannot cost less than the fixed cost of fewer, so the conditions changed during the sweep: "
          "its fixed cost does not hold at every size, and this sweep cannot tell the two models apart.")


def _kept(claims) -> list:
    return [c for c in claims if c]     # a claim is true; one left out is None or False


def _models(subject: str, seconds: float, fixed: float, work: float, name: str = "") -> list:
    """A measured time against both models: the larger of fixed cost and work, and their sum (unless within SAME)."""
    both = fixed + work <= (1 + SAME) * max(fixed, work)     # then no measurement can tell the two apart
    return [Compare(subject, seconds, "the larger of its fixed cost and its work" + ", which is also about their sum"
                    * both, max(fixed, work), name=f"{name}against overlap"),
            Compare("It", seconds, "their sum", fixed + work, name=f"{name}against add")][:2 - both]


def python_ops(run) -> list:
    """An addition against He's; the fastest statement against the slowest; the FLOPs meanwhile."""
    by_time = sorted(run.records, key=lambda r: r["seconds_per_op"])
    add = next((r for r in run.records if r["statement"] == "a + b"), by_time[0])
    cpu, name = add["backend"] == "cpu", run.meta.get("host_cpu")
    host = ("this CPU" if cpu else "the host CPU") + (f", {name}," if name else " (its record does not name it)")
    peak = "this CPU's best measured matmul rate" if cpu else "this GPU's FP16 tensor-core peak (spec sheet)"
    return [Compare(f"One integer addition on {host}", add["seconds_per_op"],
                    "one of He's 32 million per second (He, 2022)", 1 / HE_PYTHON_OPS, name="against He"),
            Compare(f"The fastest statement, {by_time[0]['op']},", by_time[0]["seconds_per_op"],
                    f"the slowest, {by_time[-1]['op']}", by_time[-1]["seconds_per_op"], name="fastest"),
            Compare(f"The work {peak} could do in the time of one addition", add["flops_meanwhile"],
                    "the 9.75 million He gives for an A100 (He, 2022)", HE_A100_MEANWHILE, "FLOP", name="meanwhile")]


def crossovers(backend: str):
    """claims_of ``time_vs_size`` on ``backend``: a call below the fixed cost, else the crossover's test."""
    def claims_of(run) -> list:
        out = []
        for lib, c in ((k, c) for k, c in ov.crossover_tests(run).items() if c["backend"] == backend):
            who, (n, t) = NAMES[lib], c["lowest"]
            low = Compare(f"{who}'s call at {n:,} elements", t, "its fixed cost", c["fixed"], name=f"{lib} lowest")
            if low.outcome == "shorter":
                out += [low, Cause(DIPPED, low, ("shorter",))]
            elif c["near"] is None:
                out.append(Compare(f"{who}'s call at its largest size, {c['largest'][0]:,} elements,",
                                   c["largest"][1], "its fixed cost", c["fixed"], name=f"{lib} largest"))
            else:
                out += _models(f"{who}'s call at {c['near'][0]:,} elements, the sweep's size nearest its "
                               "crossover,", c["near"][1], c["fixed"], c["near"][2], f"{lib} ")
        return out
    return claims_of


def calls(sizes):
    """claims_of ``call_overhead``: Chapter 7's call against this chapter's; the sweep's fixed costs against it."""
    fits = ov.fit_overheads(sizes)

    def claims_of(run) -> list:
        role, out = {("numpy" if r["library"] == "numpy" else r["role"]): r for r in run.records}, []
        if "chapter 3" in role:
            ch3, ch7 = role["chapter 3"], role["chapter 7"]
            pairs = list(zip(ch7["round_seconds"], ch3["round_seconds"]))
            out += [Compare("`torch.add(a, b)`, the call Chapter 7's profiler times,", ch7["seconds"],
                            "this chapter's `torch.add(a, b, out=out)`", ch3["seconds"], name="chapter 7"),
                    Share(len(pairs), {"it take less time": sum(a < b for a, b in pairs),    # parts in the order
                                       "it take longer": sum(a > b for a, b in pairs)},      # of sorted JSON keys
                          of="interleaved rounds", unit="count", verb="had")]
        for lib, r in (("numpy", role.get("numpy")), ("torch", role.get("chapter 3"))):
            if lib in fits and r and fits[lib]["backend"] == r["backend"]:
                out.append(Compare(f"{NAMES[lib]}'s fixed cost in the size sweep", fits[lib]["overhead"],
                                   "the same call timed here", r["seconds"], name=f"{lib} sweep"))
        return out
    return claims_of


def async_demo(run) -> list:
    """When the loop of matmuls had done its work, against when it returned to Python (both since its first call)."""
    ret, fin = ({r["stage"]: r for r in run.records}[k] for k in ("returned", "finished"))
    return [Compare(f"Finishing the work of the loop of {ret['calls']} matmuls of {ret['n']:,} x {ret['n']:,} "
                    f"({NAMES[ret['library']]})", fin["seconds"], "returning to Python from it", ret["seconds"],
                    name="finished")]


def trace(fits: dict):
    """claims_of a trace: host time in operators; operators with and without a kernel; the GPU's idle share."""
    def claims_of(run) -> list:
        from ..profiler.trace import summary
        s = summary(run)
        h, g, steps, gpu_cost = s["host"], s["gpu"], s["steps"], (fits.get("torch") or {}).get("backend") == "cuda"
        if h is None:
            return []
        what = {k: f"The median of the {h[k] / steps:g} operator calls per step that launched {w}" for k, w in
                (("launching", "a kernel"), ("quiet", "no kernel"))}
        return [Share(h["span"], {"operators": h["busy"], "the gaps between them": h["span"] - h["busy"]},
                      of=f"of the host thread's time over the {steps} traced steps"),
                *(Compare(what[k], h[f"{k}_median"], "the fixed cost of a PyTorch call in the size sweep",
                          fits["torch"]["overhead"], name=k) if k == "launching" and gpu_cost
                  else Value(h[f"{k}_median"], "s", what[k], "was") for k in ("launching", "quiet") if h[k]),
                g and Share(g["span"], {"idle time, no kernel running": g["span"] - g["busy"]}, of="of the GPU's span"),
                s["ahead"] and Value(s["ahead"]["median"], "s", "The median delay from a launch to its kernel's start",
                                     "was")]
    return claims_of


def graphs(calls_run):
    """claims_of ``reduce_overhead_demo``: graph, eager (against ``calls_run``'s new-output call), compiled."""
    def claims_of(run) -> list:
        t = {r["variant"]: r["seconds"] for r in run.records}
        if "eager" not in t:
            return []
        n_ops, compiled = run.records[0]["n_ops"], t.get("torch.compile reduce-overhead")
        new = next((r for r in getattr(calls_run, "records", []) if r["role"] == "chapter 7"
                    and r["backend"] == run.records[0]["backend"]), None)
        return _kept((Compare("Replaying the chain as a CUDA graph", t["CUDA graph"], "running it eagerly", t["eager"],
                              name="graph"),
                      Value(t["CUDA graph"] / n_ops, "s", "Per kernel, its launch and the gaps between kernels "
                            "included, the replay"),
                      new and Compare(f"Eagerly, each of the {n_ops} operations", t["eager"] / n_ops, "a "
                                      "`torch.add(a, b)` with a new output, timed above", new["seconds"], name="eager"),
                      compiled and Compare('`torch.compile(mode="reduce-overhead")`', compiled, "the hand-made graph",
                                           t["CUDA graph"], name="reduce-overhead")))
    return claims_of


def doublings(run) -> list:
    """The doublings by verdict, the largest batch against batch 1, the largest fall: its next batch, median (N3-M1)."""
    recs, i = sorted(run.records, key=lambda r: r["size"]), ov.largest_fall(run)
    verdicts = [ov.batch_verdict(r["time_ratio"], r["size_ratio"]) for r in recs[1:]]
    t, b, med = [r["seconds"] for r in recs], [f"{r['size']:,}" for r in recs], [r.get("median_seconds") for r in recs]
    fell = Compare(f"A pass at a batch of {b[i]}", t[i], f"one at {b[i - 1]}", t[i - 1], name="largest fall")
    fell = fell.outcome == "shorter" and fell
    return _kept((Share(len(verdicts), {v.replace("time fell", "with a time that fell"): verdicts.count(v)   # in the
                                        for v in sorted(set(verdicts))}, of="doublings of the batch",   # order JSON
                        unit="count", verb="came out"),                                                # sorts them
                  Compare(f"A pass at the largest batch, {b[-1]},", t[-1], "one at a batch of 1", t[0], name="largest"),
                  fell, fell and i < len(recs) - 1 and Compare(f"A pass at {b[i + 1]}", t[i + 1], f"one at {b[i - 1]}",
                                                               t[i - 1], name="after the fall"),
                  fell and med[i] and med[i - 1] and Compare(f"The median of the samples at {b[i]}", med[i],
                                                             f"the median at {b[i - 1]}", med[i - 1], name="median")))


TINY = ("By the roofline, {nbytes} bytes and {flops} FLOPs take {roof} here and {roof_ref} on the reference {ref}: "
        "the wrong model for a call this small. {regime} Predict the fixed cost of a call, which the sweep above "
        "measured for `{lib}`: **{fixed}**, {ratio} the roofline's time.")
CROSS = ("The work equals the fixed cost where 12n bytes / {bw} = {fixed}: n = **{n} elements** ({nbytes} moved). "
         "A call of that size takes about twice the fixed cost, {added}, if the two add, and about the fixed cost, "
         "{fixed}, if they overlap. This device is {model}: predict **{predicted}**.\n\nOn the reference {ref}, "
         "with the same fixed cost, n = {n_ref}.")
BATCH = ("Per sample the {depth} layers do {depth} × 2 × {width}² = {flops} FLOPs and move {acts} of activations "
         "(each Linear and each ReLU reads and writes {width} floats), and each pass reads the weights once. For the "
         "fixed cost take the least time any pass of the sweep took, {fixed} at a batch of {at}: none took less. "
         "With each kernel at {peak} ({split}) or {bw}, the work reaches it at a batch of about **{batch}**, where a "
         "pass takes about the fixed cost if the two overlap and twice it, {added}, if they add. This device is "
         "{model}: predict **{predicted}**.\n\nOn the reference {ref}, with the same fixed costs: {batch_ref}.")


def tiny_answer(n: int, fits: dict, lib: str, dev):
    """Worked problem 1: an add of ``n`` elements by the roofline (additions at half the peak), and its fixed cost."""
    if lib not in fits:
        return fill("{m}", m=Missing("time_vs_size", UNANSWERED))
    here, fixed = fm.ceiling_roof(Roofline.from_device(dev), "add", dev.backend), fits[lib]["overhead"]
    roof = float(here.time(n, 12 * n))
    return fill(TINY, nbytes=Value(12 * n, "count"), flops=Value(n, "count"), roof=Value(roof, "s"),
                roof_ref=Value(float(fm.ceiling_roof(REF, "add").time(n, 12 * n)), "s"),
                fixed=Value(fixed, "s"), ratio=Value(fixed / roof, "x"), ref=REF.name, lib=lib,
                regime=Regime(f"An add of {n} elements", n, 12 * n, here, call_cost=fixed, name="regime"))


def crossover_answer(fits: dict, lib: str, dev):
    """Worked problem 2: the size (``facts['n']``) whose bytes at the peak bandwidth take the fixed cost."""
    if lib not in fits:
        return fill("{m}", m=Missing("time_vs_size", UNANSWERED))
    fixed = fits[lib]["overhead"]
    n, n_ref = (ov.crossover_elements(fixed, bw) for bw in (dev.peak_bandwidth, REF.peak_bandwidth))
    said = fill(CROSS, bw=Value(dev.peak_bandwidth, "B/s"), fixed=Value(fixed, "s"), n=Value(n, "count"),
                nbytes=Value(12 * n, "B"), added=Value(2 * fixed, "s"), model=MODEL[dev.backend],
                predicted=Value(fixed if dev.on_gpu else 2 * fixed, "s"), ref=REF.name, n_ref=Value(n_ref, "count"))
    said.facts["n"] = n
    return said


def batch_answer(doubling, width: int, depth: int, dev):
    """Worked problem 3: the batch (``facts['batch']``) where the work reaches the least time (``'fixed'``)."""
    if doubling is None:
        return fill("{m}", m=Missing("double_the_batch", UNANSWERED))
    peak, bw, threads, every = ov.batch_peaks(doubling)
    least = min(doubling.records, key=lambda r: r["seconds"])
    fixed, b = least["seconds"], ov.worked_batch(doubling, width, depth)
    said = fill(BATCH, depth=depth, width=width, flops=Value(2 * depth * width ** 2, "count"),
                acts=Value(16 * depth * width, "B"), fixed=Value(fixed, "s"), at=Value(least["size"], "count"),
                peak=Value(peak, "FLOP/s"), bw=Value(bw, "B/s"), batch=Value(b, "count"),
                split="its FP32 peak" if dev.on_gpu else f"its FP32 peak, split evenly over the {threads} of its "
                f"{every} threads the sweep used", added=Value(2 * fixed, "s"), model=MODEL[dev.backend],
                ref=REF.name, predicted=Value(fixed if dev.on_gpu else 2 * fixed, "s"), batch_ref=Value(
                    ov.batch_where_work_is(fixed, width, depth, REF.peak_flops, REF.peak_bandwidth), "count"))
    said.facts.update(batch=b, fixed=fixed)
    return said


def add_check(record: str, seconds, sizes, lib: str, n, fits: dict, dev):
    """Worked problems 1 and 2: the add of ``n`` elements (``seconds``, else the sweep's nearest size) against both
    models, its work at the sweep's cost per element (N3-M2), which the first sentence sets against the roofline's."""
    fit, point = fits.get(lib), (n, seconds) if seconds else n and ov.nearest(sizes, n, lib)
    if not fit or not point:
        return say(_kept, [Missing(record, NO_FIXED)])
    (size, t), work, nbytes = point, point[0] * fit["per_element"], 12 * point[0]
    models = _models(f"The add of {size:,} elements", t, fit["overhead"], work)
    roof = Bound(f"At the sweep's cost per element, the work of {size:,} elements", work, nbytes / dev.peak_bandwidth,
                 "the peak bandwidth", nbytes=nbytes, cache_bytes=dev.l2_bytes, measured_roof=not dev.on_gpu)
    within = ", one of the sizes its fixed cost came from" * (size in fit["fixed_cost_sizes"])
    return say(_kept, [not seconds and Missing(record, NEAREST + within), len(models) > 1 and roof, *models])


def batch_check(check, doubling, answer, width: int, depth: int):
    """Worked problem 3: batch 1 again and the pass at the answer's batch (else the sweep's nearest), against both."""
    fixed, b, recs = answer.facts.get("fixed"), answer.facts.get("batch"), getattr(check, "records", [])  # by size
    point = (recs[-1]["size"], recs[-1]["seconds"]) if recs else b and ov.nearest(doubling, b)
    if fixed is None or not point:
        return say(_kept, [Missing("worked_batch_check", NO_FIXED)])
    first = [Compare("Batch 1, timed again beside it,", recs[0]["seconds"], "the answer's fixed cost", fixed,
                     name="batch 1 again")] if recs else [Missing("worked_batch_check", NEAREST), Compare(
                         "The sweep's largest batch", doubling.records[-1]["size"], "the answer's", b, unit="count",
                         name="reach")]
    return say(_kept, [*first, *_models(f"The pass at a batch of {point[0]:,}", point[1], fixed,
                                        ov.mlp_work(point[0], width, depth, *ov.batch_peaks(doubling)[:2]))])
