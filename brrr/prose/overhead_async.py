"""Chapter 3, overhead: what hides the fixed cost of a call. Asynchronous execution (did the loop
return before the work was done?) and CUDA graphs or ``torch.compile(mode="reduce-overhead")``."""
from __future__ import annotations

from . import Prose, paragraphs, with_references
from . import words as w
from .overhead_sizes import _name, curves

AHEAD = 0.5           # the loop returned before half the finished time: the host ran ahead


# --- asynchronous execution -------------------------------------------------------------------

def async_numbers(result) -> dict:
    stages = {r["stage"]: r for r in result.records}
    ret, fin = stages["returned"], stages["finished"]
    return {"returned": ret["seconds"], "finished": fin["seconds"], "share": ret["seconds"] / fin["seconds"],
            "n": ret["n"], "calls": ret["calls"], "library": ret["library"], "backend": ret["backend"],
            "flops": ret.get("flops", 2.0 * ret["n"] ** 3 * ret["calls"])}


def _async_outcome(a: dict) -> str:
    if a["share"] < AHEAD:
        return "ran ahead"
    if a["share"] >= 1 - w.SAME:
        return "returned = finished"
    return "partly ahead"


def async_demo(result, references=()) -> Prose:
    """Did the loop return before the work was done (a GPU's queue), or only once it was finished
    (a CPU); what the reference GPU did, or what the model says a GPU would show."""
    a = async_numbers(result)
    outcome = _async_outcome(a)
    lib = _name(a["library"])
    text = (f"The loop of {a['calls']} matmuls of {a['n']} x {a['n']} `float32` matrices ({lib}) returned to Python "
            f"after {w.seconds(a['returned'])}, and the work was finished after {w.seconds(a['finished'])}.")
    if outcome == "returned = finished":
        if a["backend"] == "cpu":
            text += (f" Returned and finished are the same moment here, as they should be on a CPU: {lib} hands "
                     "control back only when each product is complete, so there is no queue for Python to run "
                     "ahead of.")
        else:
            text += " On this GPU the loop returned only when the work was done: the host did not run ahead."
    elif outcome == "ran ahead":
        text += (f" The loop returned after {w.percent(a['share'])} of that time: the host queued the "
                 f"{a['calls']} launches and moved on, and only the synchronisation waited for the GPU, for "
                 f"{w.seconds(a['finished'] - a['returned'])}. While the device works through its queue, the host "
                 "is free to prepare the next calls: that is how asynchrony hides overhead.")
    else:
        text += (f" The loop returned after {w.percent(a['share'])} of that time: the host got partly ahead, "
                 "but not by much; some calls waited for earlier work to finish.")
    parts = [Prose(text, {"outcome": outcome, "share": a["share"], "returned": a["returned"],
                          "finished": a["finished"]})]
    if not references:
        parts.append(Prose(w.no_reference("this demo"), {"references": 0}))
    for run in references:
        r = async_numbers(run)
        o = _async_outcome(r)
        t = (f"{w.reference_intro(run)}, the loop of {r['calls']} matmuls of {r['n']} x {r['n']} "
             f"({_name(r['library'])}) "
             f"returned after {w.seconds(r['returned'])} and the work finished after {w.seconds(r['finished'])}: ")
        t += {"ran ahead": (f"the host was done issuing after {w.percent(r['share'])} of the time, and the GPU "
                            f"needed {w.times(1 / r['share'])} as long to finish. That is asynchrony: the "
                            "launches went into a queue and Python moved on."),
              "returned = finished": "the loop returned only once the work was done, so no queue hid anything.",
              "partly ahead": f"the host got ahead, returning after {w.percent(r['share'])} of the time."}[o]
        parts.append(Prose(t, {f"reference {w.device_of(run)}": o}))
    return paragraphs(*parts)


# --- CUDA graphs and torch.compile ------------------------------------------------------------

def graph_numbers(result) -> dict:
    times = {r["variant"]: r["seconds"] for r in result.records}
    rec = result.records[0] if result.records else {}
    n_ops = result.meta.get("n_ops") or rec.get("n_ops")
    size = result.meta.get("size") or rec.get("size")
    return {"times": times, "n_ops": n_ops, "size": size}


def _graph_sentence(g: dict, subject: str, fixed=None) -> tuple:
    t = g["times"]
    eager, graph = t["eager"], t.get("CUDA graph")
    per_op = eager / g["n_ops"]
    text = (f"{subject} the chain of {g['n_ops']} operations on {w.integer(g['size'])} elements took "
            f"{w.seconds(eager)} per "
            f"call eagerly, {w.seconds(per_op)} per operation")
    if fixed:
        text += f" ({w.relative(per_op, fixed, 'the fixed cost of one PyTorch call in the size sweep')})"
    text += "."
    if fixed and per_op > (1 + w.SAME) * fixed:
        text += (f" That fixed cost predicts {w.seconds(g['n_ops'] * fixed)} for the chain, less than it took; "
                 "unlike the sweep's calls, each of these allocates a new output and takes a Python number.")
    ratio = eager / graph
    if ratio > 1 + w.SAME:
        outcome = "graph faster"
        text += (f" Replaying it as a CUDA graph took {w.seconds(graph)}, {w.times(ratio)} faster: one launch "
                 f"for the whole chain instead of one per operation. The replay still ran {g['n_ops']} kernels, "
                 f"{w.seconds(graph / g['n_ops'])} each: a graph removes the host's cost of issuing them, not the "
                 "GPU's own time per kernel; only fusing them into fewer kernels (Chapter 4) removes that.")
    else:
        outcome = "graph no faster"
        text += (f" Replaying it as a CUDA graph took {w.seconds(graph)}, "
                 f"{w.longer_or_shorter(graph, eager, 'eager')[1]}: "
                 "the chain was not overhead-bound here, so removing the launches saved little.")
    default = t.get("torch.compile default")
    if default is not None:
        text += (f" `torch.compile` in its default mode (fused kernels, launched without a graph) took "
                 f"{w.seconds(default)}, {w.longer_or_shorter(default, eager, 'eager')[1]}.")
    comp = t.get("torch.compile reduce-overhead")
    if comp is not None:
        how, words_ = w.longer_or_shorter(comp, graph, "the hand-made graph")
        if how == "shorter":
            words_ = f"{w.times(graph / comp)} faster than the hand-made graph"
        text += f" `torch.compile(mode=\"reduce-overhead\")`, which fuses the operations and then captures the " \
                f"fused kernels in a graph, took {w.seconds(comp)}, {words_}"
        if how == "shorter":
            text += ": fewer kernels to replay than the hand-made graph's."
        elif how == "same":
            text += "."
        else:
            text += (f". Where the extra {w.seconds(comp - graph)} per call went, this page did not measure; "
                     "profiling one call, as in the trace above, shows it.")
    return outcome, text


def reduce_overhead(result, references=(), sizes=None) -> Prose:
    """Eager against CUDA graph (and torch.compile) on a GPU; on a CPU, why nothing ran, and the
    reference GPU's run or, without one, what the model says a GPU would show."""
    g = graph_numbers(result)
    torch = curves(sizes).get("torch") if sizes is not None else None
    fixed = torch["fixed"] if torch else None
    if g["times"]:
        outcome, text = _graph_sentence(g, "On this GPU,", fixed if torch and torch["backend"] == "cuda" else None)
        if "torch.compile reduce-overhead" not in g["times"]:
            text += (" The `torch.compile` variant was left out of this run (quick mode, or the compiler was "
                     "missing; see the result's notes).")
        live = Prose(text, {"outcome": outcome, **{k: v for k, v in g["times"].items()}})
    else:
        text = ("This run had no CUDA GPU, so there was nothing to capture: a CUDA graph records and replays "
                "GPU kernel launches, and `mode=\"reduce-overhead\"` is built on it. ")
        text += ("The figure shows the reference GPU's run instead." if references else
                 "No reference GPU run of this experiment ships with this edition of the book yet, so there is no "
                 "figure either.")
        facts = {"outcome": "no GPU", "references": len(references)}
        live = Prose(text, facts)
    # None: the no-GPU wording above says when no reference run ships (a GPU run needs none)
    return with_references(live, references, None, _reference_graphs)


def _reference_graphs(run):
    """A reference run's eager, graph and compiled times (None where it ran none)."""
    r = graph_numbers(run)
    if not r["times"]:
        return None
    o, t = _graph_sentence(r, f"{w.reference_intro(run)},")
    return Prose(t, {f"reference {w.device_of(run)}": o})
