"""Chapter 3, overhead: each generated cell's ``claims_of(run)`` (for :func:`brrr.claims.say`), and the worked
answers (:func:`brrr.claims.fill` templates), whose checks compare a time with both models. Seconds; elements."""
from __future__ import annotations

from ..claims import Cause, Compare, Missing, Regime, Share, Value, fill, say
from ..experiments import overhead as ov
from ..roofline import Roofline
from ..specs import GPU_SPECS

HE_PYTHON_OPS = 32e6          # He (2022): Python runs about 32 million additions per second
HE_A100_MEANWHILE = 9.75e6    # He (2022): FLOPs an A100 does in the time of one Python operation
NAMES = {"numpy": "NumPy", "torch": "PyTorch", "cupy": "CuPy"}
H100 = GPU_SPECS["H100-SXM"]   # the worked answers' reference GPU, by its spec sheet
MODEL = {"cuda": "a GPU, where they overlap", "cpu": "a CPU, where they add"}
UNANSWERED = "so this answer has no measured fixed cost to start from"
DIPPED = ("More elements cannot cost less than the fixed cost of fewer, so the conditions changed during the sweep: "
          "its fixed cost does not hold at every size, and this sweep cannot tell the two models apart.")


def _kept(*claims) -> list:
    return [c for c in claims if c]     # a claim is true; one left out is None or False


def _said(*claims):
    return say(lambda given: _kept(*given), claims)


def _models(subject: str, seconds: float, fixed: float, work: float, name: str = "") -> list:
    """A measured time against both models: the larger of fixed cost and work, and their sum."""
    return [Compare(subject, seconds, "the larger of its fixed cost and its work", max(fixed, work),
                    name=f"{name}against overlap"),
            Compare("It", seconds, "their sum", fixed + work, name=f"{name}against add")]


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
    """When the loop of matmuls returned to Python, against when its work was done."""
    ret, fin = ({r["stage"]: r for r in run.records}[k] for k in ("returned", "finished"))
    return [Compare(f"Returning to Python from the loop of {ret['calls']} matmuls of {ret['n']:,} x {ret['n']:,} "
                    f"({NAMES[ret['library']]})", ret["seconds"], "finishing their work", fin["seconds"],
                    name="returned")]


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
        n_ops, backend = run.records[0]["n_ops"], run.records[0]["backend"]
        new = next((r for r in getattr(calls_run, "records", []) if r["role"] == "chapter 7"
                    and r["backend"] == backend), None)
        compiled = t.get("torch.compile reduce-overhead")
        return _kept(Compare("Replaying the chain as a CUDA graph", t["CUDA graph"], "running it eagerly", t["eager"],
                             name="graph"),
                     Value(t["CUDA graph"] / n_ops, "s", "Per kernel, its launch and the gaps between kernels "
                           "included, the replay"),
                     new and Compare(f"Eagerly, each of the {n_ops} operations", t["eager"] / n_ops, "a "
                                     "`torch.add(a, b)` with a new output, timed above", new["seconds"], name="eager"),
                     compiled and Compare('`torch.compile(mode="reduce-overhead")`', compiled, "the hand-made graph",
                                          t["CUDA graph"], name="reduce-overhead"))
    return claims_of


def doublings(run) -> list:
    """The doublings by verdict; the largest batch against batch 1; the largest fall, and the next batch
    against the one before the fall (whether the step stayed)."""
    recs, i = sorted(run.records, key=lambda r: r["size"]), ov.largest_fall(run)
    verdicts = [ov.batch_verdict(r["time_ratio"], r["size_ratio"]) for r in recs[1:]]
    t, b = [r["seconds"] for r in recs], [f"{r['size']:,}" for r in recs]
    fell = Compare(f"A pass at a batch of {b[i]}", t[i], f"one at {b[i - 1]}", t[i - 1], name="largest fall")
    fell = fell.outcome == "shorter" and fell
    return _kept(Share(len(verdicts), {v.replace("time fell", "with a time that fell"): verdicts.count(v)   # in the
                                       for v in sorted(set(verdicts))}, of="doublings of the batch",   # order JSON
                       unit="count", verb="came out"),                                                # sorts them
                 Compare(f"A pass at the sweep's largest batch, {b[-1]},", t[-1], "one at a batch of 1", t[0],
                         name="largest"),
                 fell, fell and i < len(recs) - 1 and Compare(f"A pass at {b[i + 1]}", t[i + 1], f"one at {b[i - 1]}",
                                                              t[i - 1], name="after the fall"))


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
    """Worked problem 1: the roofline's time of an add of ``n`` elements, and the sweep's fixed cost."""
    if lib not in fits:
        return fill("{m}", m=Missing("time_vs_size", UNANSWERED))
    here, fixed = Roofline.from_device(dev), fits[lib]["overhead"]
    roof = float(here.time(n, 12 * n))
    return fill(TINY, nbytes=Value(12 * n, "count"), flops=Value(n, "count"), roof=Value(roof, "s"),
                roof_ref=Value(max(n / H100.fp32, 12 * n / H100.bandwidth), "s"), ref=H100.name, lib=lib,
                fixed=Value(fixed, "s"), ratio=Value(fixed / roof, "x"),
                regime=Regime(f"An add of {n} elements", n, 12 * n, here, call_cost=fixed, name="regime"))


def crossover_answer(fits: dict, lib: str, dev):
    """Worked problem 2: the size (``facts['n']``) whose bytes at the peak bandwidth take the fixed cost."""
    if lib not in fits:
        return fill("{m}", m=Missing("time_vs_size", UNANSWERED))
    fixed = fits[lib]["overhead"]
    n, n_ref = (max(1, round(fixed * bw / 12)) for bw in (dev.peak_bandwidth, H100.bandwidth))
    said = fill(CROSS, bw=Value(dev.peak_bandwidth, "B/s"), fixed=Value(fixed, "s"), n=Value(n, "count"),
                nbytes=Value(12 * n, "B"), added=Value(2 * fixed, "s"), model=MODEL[dev.backend],
                predicted=Value(fixed if dev.on_gpu else 2 * fixed, "s"), ref=H100.name, n_ref=Value(n_ref, "count"))
    said.facts["n"] = n
    return said


def batch_answer(doubling, width: int, depth: int, dev):
    """Worked problem 3: the batch (``facts['batch']``) where the work reaches the least time (``'fixed'``)."""
    if doubling is None:
        return fill("{m}", m=Missing("double_the_batch", UNANSWERED))
    peak, bw, threads, every = ov.batch_peaks(doubling)
    least = min(doubling.records, key=lambda r: r["seconds"])
    fixed, b = least["seconds"], ov.batch_where_work_is(least["seconds"], width, depth, peak, bw)
    said = fill(BATCH, depth=depth, width=width, flops=Value(2 * depth * width ** 2, "count"),
                acts=Value(16 * depth * width, "B"), fixed=Value(fixed, "s"), at=Value(least["size"], "count"),
                peak=Value(peak, "FLOP/s"), bw=Value(bw, "B/s"), batch=Value(b, "count"),
                split="its FP32 peak" if dev.on_gpu else f"its FP32 peak, split evenly over the {threads} of its "
                f"{every} threads the sweep used", added=Value(2 * fixed, "s"), model=MODEL[dev.backend],
                ref=H100.name, predicted=Value(fixed if dev.on_gpu else 2 * fixed, "s"),
                batch_ref=Value(ov.batch_where_work_is(fixed, width, depth, H100.fp32, H100.bandwidth), "count"))
    said.facts.update(batch=b, fixed=fixed)
    return said


def _check(record: str, measured, fallback, fixed, work, subject: str, first=()):
    """``measured`` (size, seconds), else the page's ``fallback`` (naming ``record``), against both models."""
    if fixed is None or (measured or fallback) is None:
        return _said(Missing(record, "and this page has no fixed cost to check it against"))
    said = [] if measured else [Missing(record, "so this check takes the sweep's size nearest the answer's")]
    size, seconds = measured or fallback
    return _said(*first, *said, *_models(subject.format(f"{size:,}"), seconds, fixed, work(size)))


def add_check(record: str, seconds, sizes, lib: str, n, fits: dict, dev):
    """Worked problems 1 and 2: the add of ``n`` elements (``seconds``, or the sweep's nearest size)."""
    return _check(record, seconds and (n, seconds), n and ov.nearest(sizes, n, lib), fits.get(lib, {}).get("overhead"),
                  lambda size: 12 * size / dev.peak_bandwidth, "The add of {} elements")


def batch_check(check, doubling, answer, width: int, depth: int):
    """Worked problem 3: the pass at the answer's batch (else the sweep's nearest), and batch 1 again."""
    fixed, b = answer.facts.get("fixed"), answer.facts.get("batch")
    recs = sorted(check.records, key=lambda r: r["size"]) if check is not None else []
    peak, bw = ov.batch_peaks(doubling)[:2] if doubling is not None else (1.0, 1.0)
    first = [Compare("Batch 1, timed again beside it,", recs[0]["seconds"], "the answer's fixed cost", fixed,
                     name="batch 1 again")] if recs else []
    return _check("worked_batch_check", recs and (recs[-1]["size"], recs[-1]["seconds"]), b and ov.nearest(doubling, b),
                  fixed, lambda size: ov.mlp_work(size, width, depth, peak, bw), "The pass at a batch of {}", first)
