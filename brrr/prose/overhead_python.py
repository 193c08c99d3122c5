"""Chapter 3, overhead: how many operations the Python interpreter runs per second, against
He's (2022) 32 million, and how many FLOPs the device could have done in the time of one.
"""
from __future__ import annotations

from . import Prose, with_references
from . import words as w

HE_PYTHON_OPS = 32e6          # He (2022): Python runs about 32 million additions per second
HE_A100_MEANWHILE = 9.75e6    # He (2022): FLOPs an A100 does in the time of one Python operation
HE_A100_WORDS = f"the {w.number(HE_A100_MEANWHILE / 1e6)} million He gives for an A100"


def _peak_words(run, whose: str = "its") -> str:
    device = "CPU" if w.is_cpu(run) else "GPU"
    whose = f"this {device}'s" if whose == "this" else whose
    return (f"{whose} best measured matmul rate" if w.is_cpu(run) else
            f"{whose} FP16 tensor-core peak (spec sheet)")


def _flops(value: float) -> str:
    """'about 3,530 FLOPs', '13.9 million FLOPs': three significant digits, as the rate and the time it comes
    from are printed, so that a reader who multiplies the two gets the same number."""
    return (f"{w.number(value / 1e6)} million FLOPs" if value >= 1e6 else
            f"about {float(f'{value:.3g}'):,.0f} FLOPs" if value >= 1000 else f"about {w.number(value)} FLOPs")


def python_numbers(result) -> dict:
    """The integer addition, the slowest statement and the FLOPs a matmul does meanwhile."""
    recs = result.records
    add = next((r for r in recs if r.get("statement") == "a + b"), recs[0])
    slow = max(recs, key=lambda r: r["seconds_per_op"])
    return {"add_seconds": add["seconds_per_op"], "add_per_second": add["ops_per_second"],
            "slow_op": slow["op"], "slow_seconds": slow["seconds_per_op"],
            "flops_meanwhile": add["flops_meanwhile"],
            "peak_flops": add["flops_meanwhile"] / add["seconds_per_op"],
            "python": (result.meta.get("versions") or {}).get("python", "")}


def python_ops(result, references=()) -> Prose:
    """How fast this interpreter is against He's 32 million operations per second, and how many
    FLOPs the device could do in the time of one; the same for each reference run."""
    p = python_numbers(result)
    ratio = p["add_per_second"] / HE_PYTHON_OPS
    if abs(ratio - 1) <= w.SAME:
        outcome, compare = "same as He", "about the 32 million per second He measured (He, 2022)"
    elif ratio > 1:
        outcome, compare = "faster than He", (f"{w.times(ratio)} the roughly 32 million per second He "
                                               "measured (He, 2022)")
    else:
        outcome, compare = "slower than He", (f"{w.percent(ratio)} of the roughly 32 million per second He "
                                               "measured (He, 2022)")
    text = (f"One integer addition took {w.seconds(p['add_seconds'])} here (Python {p['python']}), so this "
            f"interpreter runs about {w.number(p['add_per_second'] / 1e6)} million of them per second, {compare}.")
    if outcome != "same as He":
        text += " The interpreter and the CPU both set this number."
    slow = p["slow_seconds"] / p["add_seconds"]
    text += (f" The slowest statement, {p['slow_op']}, took {w.seconds(p['slow_seconds'])}, "
             f"{w.times(slow)} an addition.") if slow > 1 + w.SAME else " The other statements cost about as much."
    meanwhile = p["flops_meanwhile"]
    text += (f" In the time of one addition, {_peak_words(result, 'this')}, {w.rate(p['peak_flops'])}, could have done "
             f"{_flops(meanwhile)}")
    if w.is_cpu(result):
        text += (f", where He's A100 does about ten million (He, 2022). On a CPU the gap is "
                 f"{w.number(HE_A100_MEANWHILE / meanwhile, 2)} times smaller: the interpreter runs on the very "
                 "cores that would do the arithmetic.")
    else:
        text += f", {w.relative(meanwhile, HE_A100_MEANWHILE, HE_A100_WORDS)} (He, 2022)."
    facts = {"outcome": outcome, "add_per_second": p["add_per_second"], "he_ratio": ratio,
             "flops_meanwhile": meanwhile}
    return with_references(Prose(text, facts), references, "this measurement", lambda run: _reference_python(run, p))


def _reference_python(run, p: dict) -> Prose:
    """A reference run's Python addition against this run's (``p``), and its device's FLOPs meanwhile."""
    r = python_numbers(run)
    t = (f"{w.reference_intro(run)}, the same addition took {w.seconds(r['add_seconds'])} "
         f"({w.number(r['add_per_second'] / 1e6)} million per second, "
         f"{w.relative(r['add_per_second'], p['add_per_second'])}). That is the speed of its host CPU: "
         f"Python never runs on the GPU. In that time {_peak_words(run)}, {w.rate(r['peak_flops'])}, could "
         f"have done {_flops(r['flops_meanwhile'])}")
    t += ("." if w.is_cpu(run) else
          f", {w.relative(r['flops_meanwhile'], HE_A100_MEANWHILE, HE_A100_WORDS)}.")
    return Prose(t, {f"reference {w.device_of(run)}": r["add_per_second"]})
