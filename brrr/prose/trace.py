"""Chapter 3, a real trace: what a ``torch.profiler`` timeline of a model shows. How much of the
host's time went to operators and how much to the gaps between them (Python, overhead); on a GPU,
whether the host ran ahead of the kernels or the GPU sat waiting for the next launch."""
from __future__ import annotations

from . import Prose, paragraphs, with_references
from . import words as w

MOSTLY_GAPS = 0.5   # the host spent at least half its span between operators: overhead dominates
FEW_GAPS = 0.1      # less than a tenth between operators: the operators kept it busy
GPU_WAITED = 0.5    # the GPU idle for at least half its span: it waited for launches (overhead-bound)
GPU_BUSY = 0.1      # the GPU idle for less than a tenth: the host kept ahead of it
NEAR_FIXED = 3.0    # a median operator within 3x the fixed cost of a call is mostly that fixed cost


def numbers(result) -> dict:
    """:func:`brrr.profiler.trace.summary` of a trace, a saved one or a reference run."""
    from ..profiler.trace import summary
    return summary(result)


def host_outcome(idle: float) -> str:
    if idle >= MOSTLY_GAPS:
        return "mostly gaps"
    if idle < FEW_GAPS:
        return "mostly operators"
    return "some gaps"


def gpu_outcome(idle: float) -> str:
    if idle >= GPU_WAITED:
        return "GPU waited"
    if idle < GPU_BUSY:
        return "host ahead"
    return "partly ahead"


def _host(s: dict) -> tuple:
    h = s["host"]
    outcome = host_outcome(h["idle_fraction"])
    steps = s["steps"]
    text = (f"Over the {w.spelled(steps)} step{'s' * (steps != 1)} traced, the host thread spent "
            f"{w.percent(1 - h['idle_fraction'])} of its time inside PyTorch operators ({w.seconds(h['busy'])} "
            f"of {w.seconds(h['span'])} in all, each step counted from its first operator to its last) and "
            f"{w.percent(h['idle_fraction'])} between operators, in {w.integer(h['gaps'])} gaps of a median "
            f"{w.seconds(h['median_gap'])}.")
    text += {
        "mostly gaps": (" Most of the time, then, no operator ran at all: the thread was in Python, between "
                        "calls, and that overhead is most of the step."),
        "some gaps": " The gaps are Python between one operator and the next: overhead, which no faster kernel would remove.",
        "mostly operators": " The operators kept the thread busy nearly all the time.",
    }[outcome]
    return outcome, text


def _short(name: str) -> str:
    return name.removeprefix("aten::")


def _calls(n: float, what: str = "call") -> str:
    """'one call', 'three calls', '2.5 calls' (a count per step)."""
    if float(n).is_integer():
        return f"{w.spelled(int(n))} {what}{'s' * (n != 1)}"
    return f"{w.number(n)} {what}s"


def _inside(s: dict, fixed: float | None) -> tuple:
    """Where the time inside operators went: the heaviest operator, and the rest against the fixed
    cost of a call measured earlier in the chapter (``fixed``, seconds; None: not compared)."""
    h, steps = s["host"], s["steps"]
    text = (f"Inside the operators, `{_short(h['heaviest'])}` ({_calls(h['heaviest_calls'] / steps)} per "
            f"step) took {w.percent(h['heaviest_share'])} of the time")
    others = (h["operators"] - h["heaviest_calls"]) / steps
    if others <= 0:
        return "one operator", text + "."
    text += f"; the other {_calls(others, 'operator call')} per step took a median of {w.seconds(h['rest_median'])}"
    if not fixed:
        return "not compared", text + " each."
    near = h["rest_median"] <= NEAR_FIXED * fixed
    text += (f" each, {w.relative(h['rest_median'], fixed, 'the fixed cost of a PyTorch call')} in the size sweep "
             f"above ({w.seconds(fixed)}): ")
    text += ("so for most operators the time inside is overhead too, not arithmetic." if near else
             "so even the small operators did real work beyond their fixed cost.")
    return ("rest near the fixed cost" if near else "rest above the fixed cost"), text


def _gpu(s: dict, subject: str) -> tuple:
    g, a = s["gpu"], s["ahead"]
    outcome = gpu_outcome(g["idle_fraction"])
    text = (f"{subject} the GPU ran {w.integer(g['kernels'])} kernels (a median of {w.seconds(g['median_event'])} "
            f"each) and was idle for {w.percent(g['idle_fraction'])} of its span.")
    launch = (f" A kernel started a median of {w.seconds(a['median'])} after the launch that issued it "
              f"(from {w.seconds(a['min'])} to {w.seconds(a['max'])}, over {w.integer(a['count'])} launches)"
              if a else " The trace ties no launch to its kernel, so how far the host ran ahead is not known")
    text += launch + {
        "GPU waited": (": the kernels took less time than the host needed to issue them, so each one waited for "
                       "the next launch. This model is overhead-bound here, like the lower half of the "
                       "timeline sketch."),
        "host ahead": (": kernels queued up behind earlier work. The host ran ahead, and the launch overhead was "
                       "hidden behind the GPU's work, like the upper half of the timeline sketch."),
        "partly ahead": (": the host kept ahead of the GPU for part of the step, and the GPU waited for "
                         "launches for the rest."),
    }[outcome]
    wait = (s["host"] or {}).get("synchronize", 0.0)
    if wait > 0:
        text += (f" The host spent {w.seconds(wait / s['steps'])} per step waiting for the GPU to finish, in the "
                 "synchronise that ends each step.")
    return outcome, text


def timeline(result, references=(), fixed: float | None = None) -> Prose:
    """What the live trace shows (host busy against gaps; on a GPU, who waited for whom), then
    each reference GPU's trace, or the sentence that none ships yet and what the model says a GPU
    would show. ``fixed``: the fixed cost of one PyTorch call (chapter 3's size sweep), seconds."""
    s = numbers(result)
    if s["host"] is None:
        live = Prose("The trace recorded no operator on the host, so there is nothing to describe: "
                     "did the model run?", {"host": "empty"})
        return with_references(live, references, "this trace", _reference)
    host, text = _host(s)
    facts = {"host": host, "host_idle_fraction": s["host"]["idle_fraction"], "gaps": s["host"]["gaps"]}
    parts = [Prose(text, facts)]
    if s["host"]["operators"]:
        inside, t = _inside(s, fixed)
        parts.append(Prose(t, {"inside": inside, "heaviest": s["host"]["heaviest"],
                               "rest_median": s["host"]["rest_median"]}))
    if s["gpu"] is not None:
        gpu, t = _gpu(s, "On this GPU,")
        parts.append(Prose(t, {"gpu": gpu, "gpu_idle_fraction": s["gpu"]["idle_fraction"]}))
    elif w.is_cpu(result):
        parts.append(Prose("On a CPU there is no second lane: each operator runs on the thread that called it, "
                           "so the host has no queue to run ahead of (as the loop of matmuls showed above).",
                           {"gpu": "no GPU"}))
    else:
        parts.append(Prose("The trace has no GPU lane although a GPU was present: the model and its inputs "
                           "were on the CPU.", {"gpu": "model on the CPU"}))
    live = paragraphs(*parts)
    if references:
        return with_references(live, references, None, _reference)
    return paragraphs(live, Prose(w.no_reference("this trace"), {"references": 0}))


def _reference(run) -> Prose:
    s = numbers(run)
    subject = f"{w.reference_intro(run)},"
    if s["gpu"] is None:
        return Prose(f"{subject} the trace has no GPU lane.", {f"reference {w.device_of(run)}": "no GPU"})
    outcome, text = _gpu(s, subject)
    if s["host"] is not None:
        text += (f" Its host thread was between operators for {w.percent(s['host']['idle_fraction'])} of "
                 "its span.")
    return Prose(text, {f"reference {w.device_of(run)}": outcome})
