"""Chapter 4, fusion: the kernels ``torch.compile`` made of a chain and of ``relu(x @ w + b)`` (an
epilogue), and that layer's speed-up over eager mode against the roofline's bound.
"""
from __future__ import annotations

from . import Prose, needs_measurements, with_references
from . import words as w
from .fusion_model import _ops, _relation, _roof_kind, _roof_of
from .words import ABOVE_ROOF

NOISY = 0.2         # an interquartile range above 20% of the median is a noisy timing


def _count(n: int, noun: str) -> str:
    return f"{w.spelled(n)} {noun}{'' if n == 1 else 's'}"

@needs_measurements
def generated(info: dict, k: int = 4, op: str = "mul") -> Prose:
    """What ``torch.compile`` made of a chain of ``k`` ops (``info``: ``inspect_compiled``)."""
    if info.get("error"):
        return Prose(f"`torch.compile` does not work on this machine ({info['error']}), so its sweep below "
                     "records nothing and the figures show the other fusers only.", {"outcome": "failed"})
    kernels = list(info.get("kernels") or [])
    own = [n for n in kernels if not n.startswith("extern_kernels.")]
    names = ", ".join(f"`{n}`" for n in kernels) or "no kernel at all"
    if len(kernels) == 1 and own:
        text = (f"Inductor turned the chain of {k} {_ops(op, k)} into one kernel, {names}: the chain is read once "
                "and written once, as in the bytes model's fused case.")
        outcome = "one kernel"
    else:
        text = (f"Inductor launched {len(kernels)} kernels for the chain of {k} {_ops(op, k)} ({names}), not "
                "one: on this machine it did not fuse the whole chain, so its fused time below is not "
                "the bytes model's fused case.")
        outcome = "several kernels"
    return Prose(text, {"outcome": outcome, "kernels": kernels})


def epilogue(epi, references=()) -> Prose:
    """The kernels of ``relu(x @ w + b)`` and its speed-up over eager mode against the roofline's bound."""
    meta = epi.meta or {}
    times = {r["variant"]: r for r in epi.records}
    eager, comp = times.get("eager"), times.get("torch.compile")
    shape, dtype = meta.get("shape"), meta.get("dtype", "float32")
    roof = _roof_of(epi)
    facts = {}
    if comp is None:
        why = next((n.split(": ", 1)[1] for n in meta.get("notes", []) if n.startswith("torch.compile")),
                   "it failed")
        text = f"`torch.compile` could not compile the layer on this machine ({why}), so only eager mode was timed."
        facts["outcome"] = "not compiled"
    else:
        kernels = list(meta.get("compiled_kernels") or [])
        lib = [k for k in kernels if k.startswith("extern_kernels.")]
        own = [k for k in kernels if k not in lib]
        names = ", ".join(f"`{k}`" for k in kernels) or "no kernel it could name"
        text = f"Here `torch.compile` launched {names}."
        if not lib and len(own) == 1:
            text += " That is one kernel for the matmul, the bias and the ReLU: a true epilogue."
            kind = "one kernel"
        elif any(k.endswith("addmm") for k in lib):
            text += (f" Inductor folded the bias into the library's `addmm` and ran the ReLU as "
                     f"{_count(len(own), 'generated loop')} after it: not a true epilogue.")
            kind = "addmm + loop"
        else:
            kind, tail = ("library + kernels" if lib else "generated kernels"), _count(len(own), "generated kernel")
            text += (f" The matmul is a library call and the pointwise tail ran as {tail} after it." if lib else
                     f" That is {tail}.")
        facts.update(kernels=kernels, kind=kind)
        speedup = eager["seconds"] / comp["seconds"]
        facts["speedup"] = speedup
        if abs(speedup - 1) <= w.SAME:
            text += f" It ran about as fast as eager mode ({w.number(speedup)} times)."
            outcome = "same"
        elif speedup > 1:
            text += f" It ran {w.number(speedup)} times as fast as eager mode."
            outcome = "faster"
        else:
            spread = max(r.get("iqr_seconds", 0) / r["seconds"] for r in (eager, comp))
            facts["spread"] = spread
            text += f" It ran {w.times(1 / speedup)} slower than eager mode" + (
                f", but the timings were noisy (an interquartile range of up to {w.percent(spread)} of the median)."
                if spread > NOISY else ".")
            outcome = "slower"
        facts["outcome"] = outcome
        if meta.get("compiled_matches_eager") is False:
            text += " Its output differed from eager mode's beyond float32 rounding, which is a bug to report."
    if roof and shape:
        m, n, k = (int(v) for v in shape)
        bounds, pe, pf, predicted = _bounds(roof, m, n, k, dtype)
        facts.update(predicted_speedup=predicted, eager_bound=pe, fused_bound=pf,
                     regimes={name: regime for name, _, _, regime in bounds[:3]})
        text += " " + _roof_words(bounds, roof, m, n, k, facts)
        eff_e = pe / eager["seconds"]
        facts["eager_efficiency"] = eff_e
        if comp is not None:
            eff_c = pf / comp["seconds"]
            rel = _relation(facts["speedup"], predicted)
            facts.update(compiled_efficiency=eff_c, relation=rel)
            text += (f" The measured speed-up is {rel} that bound: eager mode reached {w.percent(eff_e)} of its "
                     f"roofline speed and the compiled layer {w.percent(eff_c)} of the fully fused one's"
                     + (f", and it still makes {'a pass' if len(own) == 1 else f'{len(own)} passes'} over the "
                        "output after the matmul." if rel == "short of" and kind != "one kernel" else "."))
        for name, bar, t, eff in (("Eager mode", "its roofline bar", eager["seconds"], eff_e),
                                  ("The compiled layer", "the fully fused bar", comp and comp["seconds"],
                                   comp and pf / comp["seconds"])):
            if eff and eff > ABOVE_ROOF:
                text += (f" {name} ran faster than {bar} ({w.times(eff)} the roof's speed): " + (
                    f"the matmul's bound alone, {w.seconds(bounds[0][2])}, is longer than the whole layer took, so "
                    f"the matmul beat the {_roof_kind(epi)} roof." if bounds[0][2] > t else
                    f"the {_roof_kind(epi)} roof's bandwidth is DRAM's, and part of the {w.size(m * n * 4)} output "
                    "can stay in the cache."))
    return with_references(Prose(text, facts), references, "this layer", _reference_epilogue)


def _bounds(roof, m, n, k, dtype):
    """``[(name, intensity, seconds, regime)]`` of eager mode's three kernels and the fused one;
    eager mode's bound (their sum), the fused one's, and the speed-up the roofline allows."""
    from ..experiments.fusion import epilogue_kernels
    bounds = [(name, f / b, float(roof.time(f, b)), roof.regime(f, b))
              for fused in (False, True) for name, b, f in epilogue_kernels(m, n, k, fused, dtype)]
    pe, pf = sum(t for _, _, t, _ in bounds[:3]), bounds[3][2]
    return bounds, pe, pf, pe / pf


def _kernel_words(group) -> str:
    """'the matmul (7.97 FLOP/byte) is compute-bound, at least 2.8 ms'; kernels alike as one clause."""
    names = w.listing(f"the {name}" for name, _, _, _ in group)
    _, ai, _, regime = group[0]
    bounds = [w.seconds(t) for _, _, t, _ in group]
    at_least = bounds[0] + (" each" if len(group) > 1 else "") if len(set(bounds)) == 1 else w.listing(bounds)
    return (f"{names} ({w.number(ai)} FLOP/byte{' each' if len(group) > 1 else ''}) "
            f"{'are' if len(group) > 1 else 'is'} {regime}, at least {at_least}")


def _roof_words(bounds, roof, m, n, k, facts) -> str:
    """Each eager kernel's regime and bound, their sum, and what a fully fused kernel would save."""
    eager, (_, ai_f, pf, regime_f) = bounds[:3], bounds[3]
    pe = sum(t for _, _, t, _ in eager)
    shape_words = f"{w.integer(m)} × {w.integer(k)} times {w.integer(k)} × {w.integer(n)}"
    matmul, passes = eager[0], eager[1:]
    alike = len({(w.number(ai), regime) for _, ai, _, regime in passes}) == 1
    clauses = [_kernel_words([matmul])] + ([_kernel_words(passes)] if alike else [_kernel_words([p]) for p in passes])
    text = (f"Eager mode runs three kernels, so its roofline bound is the sum of theirs. For this shape "
            f"({shape_words}), against this roof's ridge of {w.number(roof.ridge)} FLOP/byte, "
            + "; ".join(clauses) + f". In all, at least {w.seconds(pe)}.")
    share = sum(t for _, _, t, _ in passes) / pe
    facts["passes_share"] = share
    fused = f"one fused kernel ({w.number(ai_f)} FLOP/byte) would be {regime_f}, at least {w.seconds(pf)}"
    passes_dominate = share > 0.5
    facts["roof_outcome"] = "passes dominate" if passes_dominate else "matmul dominates"
    text += (f" The two passes over the output are {w.percent(share)} of that bound" if passes_dominate else
             f" The matmul is {w.percent(1 - share)} of that bound, so removing the passes saves little")
    return (text + f"; {fused}, "
            f"so a fully fused layer would be {'' if passes_dominate else 'only '}"
            f"{w.number(facts['predicted_speedup'])} times as fast.")


def _reference_epilogue(run):
    """A reference run's compiled speed-up and kernels (None where it has no compiled time)."""
    t = {r["variant"]: r["seconds"] for r in run.records}
    if "eager" not in t or "torch.compile" not in t:
        return None
    s = t["eager"] / t["torch.compile"]
    kernels = ", ".join(f"`{k}`" for k in run.meta.get("compiled_kernels", [])) or "kernels it did not name"
    return Prose(f"{w.reference_intro(run)}, `torch.compile` ran the layer {w.number(s)} times as fast as eager mode, "
                 f"launching {kernels}.", {f"reference {w.device_of(run)}": s})
