"""Chapter 5, recomputation: each cell's claims (:mod:`brrr.claims`) and the worked answers' templates. The backward's
peak is *modelled* from the hooks' exact counts of saved bytes: only a GPU allocator's measured peak tests it."""
from __future__ import annotations

import math

from ..arrays import ITEMSIZE
from ..claims import Bound, Compare, Missing, Noisy, Regime, Share, Value, fill, say
from ..experiments.recompute_checkpoint import checkpoint_model, late_peak, step_ratios, sweep_rows
from ..experiments.recompute_compiled import step_bytes
from ..profiler.counting import PER_ELEMENT_FLOPS
from ..recompute_model import checkpoint_flop_ratio
from ..registry.chapter_05 import CHECKPOINT_EVERY as WORKED_EVERY   # Worked problem 2's segment length
from ..roofline import Roofline, has_spec_sheet, reference_roof
from ..units import format_si



def block_claims(input_bytes: int, layers: int):
    """claims_of for one block's saved-tensor rows: its activations against its input, and the stack's."""
    def claims_of(rows):
        total = sum(r["nbytes"] for r in rows if r["kind"] == "activation")
        return [Compare("one block's activation memory", total, "its input's", input_bytes, unit="B"),
                Value(layers * total, "B", f"a stack of {layers} blocks", "saves")]
    return claims_of


def memory_claims(run) -> list:
    """The segment length with the lowest modelled peak, that peak against no checkpointing, and the formula."""
    rows, meta = sweep_rows(run), run.meta
    best = min((e for e in rows if e), key=lambda e: (rows[e]["peak_activation_bytes"], e))
    return [Value(best, "count", "the segment length with the lowest modelled peak", "was"),
            Compare(f"the modelled peak with segments of {best}", rows[best]["peak_activation_bytes"],
                    "the activations the hooks counted without checkpointing", rows[0]["saved_bytes"], unit="B"),
            Value(math.sqrt(meta["layers"] * meta["input_bytes"] / meta["block_bytes"]), "",
                  "the formula's optimum, √(L · m_input / m_block),", "is")]


def time_claims(run) -> list:
    """The step time ratio farthest from its FLOP ratio, of the lengths Worked problem 2 did not check; the noisiest."""
    rows = sweep_rows(run)
    others = [e for e in rows if e and e != WORKED_EVERY]
    ratios = {e: step_ratios(run, e) for e in others}
    worst = max(others, key=lambda e: abs(ratios[e][0] / ratios[e][1] - 1)) if others else None
    noisiest = max(rows.values(), key=lambda r: r["iqr_seconds"] / r["seconds"])
    return [None if worst is None else Compare(f"with segments of {worst}, the step time over the plain step's",
                                               ratios[worst][0], "its FLOPs over the plain step's", ratios[worst][1],
                                               unit="x"),
            Noisy(f"the step with segments of {noisiest['every']}", noisiest["iqr_seconds"], noisiest["seconds"])]


def allocator_claims(run) -> list:
    """The allocator's lowest peak, its cut against the model's, the late peak (:func:`~brrr.experiments.late_peak`)."""
    rows, late = sweep_rows(run), late_peak(run)
    if not late:
        return [Missing("peak_memory_bytes", "since nothing on this run measured the peak apart from the hooks")]
    alloc = {e: rows[e]["peak_memory_bytes"] for e in late}
    best, model = (min(late, key=lambda e: (peak[e], e)) for peak in
                   (alloc, {e: rows[e]["peak_activation_bytes"] for e in late}))
    worst = max(late, key=lambda e: abs(alloc[e] / late[e][0] - 1))
    return [Value(best, "count", "the segment length with the lowest allocator's peak", "was"),
            Compare("checkpointing's cut of the allocator's peak", rows[0]["peak_memory_bytes"] / alloc[best],
                    "its cut of the modelled activations",
                    rows[0]["saved_bytes"] / rows[model]["peak_activation_bytes"], unit="x"),
            Compare(f"the allocator's peak with segments of {worst}", alloc[worst], "the late-peak sum",
                    late[worst][0], unit="B"),
            Share(late[best][0], {"the weights' gradients": late[best][1]},
                  f"of the late-peak sum with segments of {best}", unit="B", verb="were")]


def compiled_claims(run) -> list:
    """Saved bytes of the recomputing chain, and each variant's bandwidth (its bytes: ``step_bytes``; the times are
    the figure's)."""
    by, meta, dev = {r["variant"]: r for r in run.records}, run.meta, run.meta.get("device") or {}
    rec, item = by.get("compiled (recompute)"), ITEMSIZE.get(meta.get("dtype"), 4)

    def rate(variant, name):
        return by.get(variant) and Bound(
            name, step_bytes(variant, meta["k"], meta["n"], item) / by[variant]["min_seconds"],
            dev["peak_bandwidth"], "the peak bandwidth", unit="B/s", nbytes=2 * meta["n"] * item,
            cache_bytes=dev.get("l2_bytes"), measured_roof=not has_spec_sheet(dev))
    rates = [rate("eager", "eager mode's step"), rate("compiled (save all)", "the compiled step that saves everything"),
             rate("compiled (recompute)", "the recomputing step")]
    return [rec and Compare("the recomputing chain's saved memory", rec["saved_bytes"], "eager mode's",
                            by["eager"]["saved_bytes"], unit="B"), *rates,
            rates[1] and rates[2] and Compare("the recomputing step's bandwidth", rates[2].measured, "the saving one's",
                                              rates[1].measured, unit="B/s", name="rate")]


def _times(t) -> tuple:
    """(fastest, IQR, median) seconds of a Timing or of a sweep's record (its ``min_seconds``, ``iqr_seconds``,
    ``seconds``)."""
    if isinstance(t, dict):
        return t["min_seconds"], t["iqr_seconds"], t["seconds"]
    return t.min, t.iqr, t.median


def ratio_check(plain, checkpointed, ratio: float, least: float, record: str, what: str):
    """A worked problem measured: the step-time ratio (fastest samples) against the answer's; the plain step's bound.
    ``plain``, ``checkpointed``: Timings, or a sweep's records."""
    def claims_of(pair):
        (fast, iqr, median), (fast_ck, _, _) = (_times(t) for t in pair)
        return [Compare(f"the checkpointed {what}'s time over the plain one's", fast_ck / fast,
                        "the answer's ratio", ratio, unit="x"),
                Bound(f"the plain {what}", fast, least, "the roofline"),
                Noisy(f"the plain {what}", iqr, median)]
    return say(claims_of, None if plain is None or checkpointed is None else (plain, checkpointed), record=record)


def sweep_check(run, every: int, ratio: float, least: float):
    """Worked problem 2 measured by the checkpoint sweep's plain step and its step with segments of ``every``."""
    rows = {} if run is None else sweep_rows(run)
    if run is not None and (every not in rows or 0 not in rows):
        return say(lambda _: [Missing(f"checkpoint_sweep: every={every}", "so the answer is not checked here")], run)
    if run is not None and any(rows[e].get("min_seconds") is None for e in (0, every)):
        return say(lambda _: [Missing("checkpoint_sweep: min_seconds", "its fastest samples, which only later records "
                                      "keep, so the answer is not checked here")], run)
    return ratio_check(rows.get(0), rows.get(every), ratio, least, "checkpoint_sweep", "step")


CKPT = ("Plainly, all {layers} blocks keep their activations, {layers} × {block} = {plain}. With segments of {every}, "
        "the model keeps ⌈{layers}/{every}⌉ segment inputs of {input} and one segment's activations while it is "
        "recomputed: **{kept}**, {less} less.\n\nBy FLOPs, a step is a forward pass and a backward pass of twice its "
        "FLOPs, about {flops}; rerunning the whole forward pass would add a third (Chen et al., 2016). PyTorch's "
        "checkpoint (`use_reentrant=False`) stops recomputing a segment once every tensor its backward pass needs "
        "exists again, so it skips each segment's last matmul: {segments} of the {matmuls} matmuls of the forward "
        "pass are not rerun, and the FLOPs grow by 1 + (1 − {segments}/{matmuls})/3 = **{ratio}**. At the float32 "
        "peak, {peak}, the plain step's FLOPs take at least {t} and the checkpointed step's {t_ck}; on an H100 SXM "
        "({ref_peak}), {t_ref} and {t_ref_ck}.")
GELU = ("Plainly, each GELU saves its input for its derivative: {k} arrays of {array}, {plain}. Checkpointed whole, "
        "the chain keeps its input alone: {k} times less.\n\nThe checkpointed step runs the forward pass again, less "
        "its last GELU, whose output nothing saves. By FLOPs (brrr counts {fwd} for `torch.nn.GELU()`, the erf form, "
        "and {bwd} for its derivative, per element) that makes it {flop_ratio} times as long. By bytes, a forward "
        "pass moves 8 per element, the `sum` 4 and a backward pass 12 (the first 8: its incoming gradient is a "
        "broadcast scalar). {regime} Its passes' least times put the checkpointed step at **{ratio}** times the "
        "plain one.\n\nThose least times, {t} and {t_ck}, hold only where the arrays ({array} each) do not stay in "
        "the {cache} cache between kernels; on an H100 SXM they are {t_ref} and {t_ref_ck}.")


def checkpoint_cost(block_bytes: float, input_bytes: float, layers: int, every: int, batch: int, width: int, dev):
    """Worked problem 2: memory at the backward's peak and the FLOP ratio of checkpointing every ``every`` blocks."""
    plain, kept = (checkpoint_model(block_bytes, input_bytes, layers, e) for e in (0, every))
    flops, ratio, peak = 3 * layers * 16 * batch * width ** 2, checkpoint_flop_ratio(layers, every), dev.peak_flops()
    ref = reference_roof()
    t, t_ref = flops / peak, flops / ref.peak_flops
    said = fill(CKPT, layers=str(layers), every=str(every), block=Value(block_bytes, "B"), plain=Value(plain, "B"),
                input=Value(input_bytes, "B"), kept=Value(kept, "B"), less=Value(plain / kept, "x"),
                flops=format_si(flops, "FLOP"), segments=str(math.ceil(layers / every)), matmuls=str(2 * layers),
                ratio=Value(ratio, ""), peak=Value(peak, "FLOP/s"), t=Value(t, "s"), t_ck=Value(ratio * t, "s"),
                ref_peak=Value(ref.peak_flops, "FLOP/s"), t_ref=Value(t_ref, "s"),
                t_ref_ck=Value(ratio * t_ref, "s"))
    said.facts.update(ratio=ratio, seconds=t)
    return said


def chain_checkpoint(k: int, n: int, dev):
    """Worked problem 3: memory and step time of checkpointing a chain of ``k`` float32 GELUs whole, in eager mode."""
    fwd, bwd = PER_ELEMENT_FLOPS["gelu"], PER_ELEMENT_FLOPS["gelu_backward"]

    def steps(roof):   # (plain, checkpointed) least times, pass by pass
        f, b0, b, s = (float(roof.time(fl * n, by * n)) for fl, by in ((fwd, 8), (bwd, 8), (bwd, 12), (1, 4)))
        return k * f + s + b0 + (k - 1) * b, (2 * k - 1) * f + s + b0 + (k - 1) * b
    here = Roofline(peak_flops=dev.peak_flops("float32"), peak_bandwidth=dev.peak_bandwidth, name=dev.name)
    (t, t_ck), (t_ref, t_ref_ck) = steps(here), steps(reference_roof())
    said = fill(GELU, k=Value(k, "count"), array=Value(4 * n, "B"), plain=Value(4 * k * n, "B"), fwd=str(fwd),
                bwd=str(bwd), flop_ratio=Value(((2 * k - 1) * fwd + k * bwd) / (k * (fwd + bwd)), ""),
                regime=Regime("the plain step", (k * (fwd + bwd) + 1) * n, 20 * k * n, here),
                ratio=Value(t_ck / t, ""), t=Value(t, "s"), t_ck=Value(t_ck, "s"), cache=Value(dev.l2_bytes, "B"),
                t_ref=Value(t_ref, "s"), t_ref_ck=Value(t_ref_ck, "s"))
    said.facts.update(ratio=t_ck / t, seconds=t)
    return said
