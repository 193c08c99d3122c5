"""The diagnosis as a flowchart: which of the three regimes limits an operation, and its remedy.

Two questions decide it, in the book's order: Chapter 3's "double the batch" test separates
overhead from work, and the roofline's ridge point (Chapter 2) separates arithmetic from bytes.
Each regime's box carries its symptom and the remedy of Chapter 7's "One remedy per regime"
table. A picture of an idea, not of a measurement: the only number it may show is a ridge point
passed in (:func:`regime_flowchart`).
"""
from __future__ import annotations

from ._base import _styled
from .diagrams import COMPUTE_COLOR, IDLE_COLOR, MEMORY_COLOR, _canvas

QUESTION_COLOR = "0.55"
REGIMES = ("overhead-bound", "memory-bound", "compute-bound")

# The "no" branch's exception: a call whose bytes are its weights also barely slows with the batch.
WEIGHTS_NOTE = ("* A call whose bytes are mostly weights, read once whatever the batch (a matmul on a few rows, "
                "an LLM's decoding step),\nalso barely slows when the batch doubles, yet it is memory-bound on its "
                "weights: a bigger batch helps it, CUDA graphs do not.")

# The figure's alt text, for the page that shows it (the cell's image alt), kept with the drawing.
ALT_TEXT = ("Flowchart in three levels. The top box asks whether the time per call grows when the batch "
            "is doubled. If it barely changes, an arrow leads to the overhead-bound box: give each call more "
            "work or make fewer calls (a bigger batch, fusion, CUDA graphs, torch.compile). If it about "
            "doubles, an arrow leads to a second question: is the operation's arithmetic intensity above "
            "the ridge point? Yes leads to the compute-bound box: faster math (tensor cores, lower "
            "precision). No leads to the memory-bound box: move fewer bytes (fuse, smaller dtypes, "
            "recompute instead of storing). A note at the bottom warns that a call whose bytes are mostly weights, "
            "read once whatever the batch, also barely slows when the batch doubles, yet is memory-bound on its "
            "weights: a bigger batch helps it, CUDA graphs do not. A last note says to profile again after each "
            "change.")


def _node(ax, x, y, w, h, color, title, body="", question=False):
    """A box centred on (x, y): a question (grey, square corners) or a regime (its colour)."""
    from matplotlib.patches import FancyBboxPatch
    style = "square,pad=0.02" if question else "round,pad=0.02,rounding_size=0.15"
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle=style, facecolor=color,
                                alpha=0.12 if question else 0.22, edgecolor="none"))
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle=style, facecolor="none",
                                edgecolor=color, linewidth=1.5))
    if body:
        ax.text(x, y + h / 2 - 0.14, title, ha="center", va="top", fontsize=9.5, fontweight="bold")
        ax.text(x, y - 0.08, body, ha="center", va="center", fontsize=8, linespacing=1.35)
    else:
        ax.text(x, y, title, ha="center", va="center", fontsize=9, linespacing=1.35)


def _edge(ax, start, end, label, where=0.5, dx=0.0, dy=0.12):
    """An arrow from ``start`` to ``end`` with ``label`` beside it, at fraction ``where`` of the way."""
    ax.annotate("", xy=end, xytext=start,
                arrowprops=dict(arrowstyle="-|>", color="0.2", linewidth=1.4, shrinkA=0, shrinkB=0))
    x = start[0] + where * (end[0] - start[0]) + dx
    y = start[1] + where * (end[1] - start[1]) + dy
    ax.text(x, y, label, ha="center", va="bottom", fontsize=8, style="italic",
            bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none"))


@_styled
def regime_flowchart(ridge: float = None):
    """The regime diagnosis as a flowchart; returns the Figure.

    ``ridge``, if given (FLOP/byte, e.g. ``brrr.device().ridge``), is written into the second
    question, so the reader sees the threshold of their own device; otherwise it stays symbolic.
    """
    if ridge is not None and not ridge > 0:
        raise ValueError(f"ridge must be a positive number of FLOP/byte, got {ridge!r}")
    fig, ax = _canvas(7.4, 5.5)
    q1, q2 = (5.0, 5.8), (6.9, 3.75)
    _node(ax, *q1, 6.4, 0.8, QUESTION_COLOR,
          "Double the batch (the work of each call).\nDoes the time per call grow with it?", question=True)
    ridge_text = (r"the ridge $I^\ast = P_\mathrm{peak}/\beta_\mathrm{peak}$"
                  + (f"\n(float32 here: {ridge:.3g} FLOP/byte)?" if ridge is not None else "?"))
    _node(ax, *q2, 4.9, 1.05, QUESTION_COLOR,
          r"Is the operation's intensity $I = F/B$" + "\nabove " + ridge_text, question=True)

    boxes = {
        "overhead-bound": ((1.75, 2.6), 3.3, 1.95, IDLE_COLOR,
                           "time barely changes with size\n\nmore work per call: a bigger batch;\n"
                           "fewer calls: fusion, CUDA graphs,\ntorch.compile"),
        "memory-bound": ((5.05, 1.05), 3.2, 1.75, MEMORY_COLOR,
                         "intensity left of the ridge\n\nmove fewer bytes: fuse, smaller\n"
                         "dtypes, recompute instead of storing"),
        "compute-bound": ((8.5, 1.05), 2.85, 1.75, COMPUTE_COLOR,
                          "intensity right of the ridge\n\nfaster math: tensor cores,\nlower precision"),
    }
    for title, (centre, w, h, color, body) in boxes.items():
        _node(ax, *centre, w, h, color, title, body)

    _edge(ax, (2.6, q1[1] - 0.4), (1.75, 2.6 + 0.975), "no, it barely changes*", dx=-0.05)
    _edge(ax, (6.9, q1[1] - 0.4), (q2[0], q2[1] + 0.525), "yes, about doubles", dx=1.0, dy=-0.1)
    _edge(ax, (5.9, q2[1] - 0.525), (5.05, 1.05 + 0.875), "no", dx=-0.2, dy=-0.05)
    _edge(ax, (7.9, q2[1] - 0.525), (8.5, 1.05 + 0.875), "yes", dx=0.2, dy=-0.05)
    ax.text(5.0, -0.05, WEIGHTS_NOTE, ha="center", va="top", fontsize=8, color="0.3", linespacing=1.35)
    ax.text(5.0, -0.75, "After each change, profile again: a remedy moves operations between regimes.",
            ha="center", va="top", fontsize=8, color="0.3")
    ax.set_ylim(-0.95, 6.3)
    return fig
