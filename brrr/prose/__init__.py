"""Sentences about measurements, chosen by the data they describe.

A chapter never types a comparison into its text: "faster", "in steps",
"memory-bound", "73% of the peak" all depend on what this run measured. Each
function here takes the chapter's results (the live run and the reference
runs) and returns a :class:`Prose`: Markdown that a code cell displays, in the
published HTML (input hidden) and on Colab alike, plus ``facts``, the numbers
and the outcome it was chosen from, which the tests check against the records.

One module per chapter: :mod:`.compute`, :mod:`.bandwidth`, :mod:`.overhead`,
:mod:`.fusion`, :mod:`.recompute`, :mod:`.networks`, :mod:`.diagnosis`. Each gathers
the functions of its chapter from modules of one section each (``overhead_sizes``,
``fusion_cos``, ...), so that a chapter and its tests name one place. The small
vocabulary they share (ratios and lists in words, device names, whether a run was on a
CPU) is in :mod:`.words`, and :func:`with_references` puts a paragraph per reference
run after the live run's. Sections added later have modules of their own (:mod:`.dtypes`,
:mod:`.latency`, :mod:`.trace`) and chapter 8 has :mod:`.capstone`. :mod:`.worked` holds the
"predict, then measure" worked problems of chapters 1 to 3, and :mod:`.worked_networks` and
:mod:`.worked_more` those of chapters 4 to 7 (reusing
:mod:`.worked`'s roofs and checks): each answer (this device's roofline and the reference GPU's
spec sheet, shown collapsed by :func:`brrr.book.answer`) and the sentence that checks it against
the measurement.

The records they read follow :mod:`brrr.results`' schema: ``seconds``, ``min_seconds``,
``iqr_seconds``, ``nbytes``, ``backend`` ('cuda' or 'cpu') and ``fuser``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..claims.page import plain  # noqa: F401 (public here too)
from ..results import needs_measurements  # noqa: F401 (the verdicts of worked problems use it)


@dataclass
class Prose:
    """Markdown text and the facts it states (``outcome``: which wording was chosen)."""
    text: str
    facts: dict = field(default_factory=dict)

    def _repr_markdown_(self):
        """The text, and its facts as the output's metadata (``brrr.facts``): an executed notebook
        keeps what each sentence was chosen from, which the tests read back."""
        return self.text, {"brrr": {"facts": plain(self.facts)}}

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def __add__(self, other: "Prose") -> "Prose":
        """Two pieces of prose as one paragraph (facts merged)."""
        return Prose(f"{self.text} {other.text}".strip(), {**self.facts, **other.facts})


def paragraphs(*parts) -> Prose:
    """Several pieces of prose as separate paragraphs; ``None`` parts are left out."""
    parts = [p for p in parts if p is not None and str(p)]
    facts = {}
    for p in parts:
        facts.update(getattr(p, "facts", {}))
    return Prose("\n\n".join(str(p) for p in parts), facts)


def with_references(live: Prose, references, what: str | None, describe, shown: str | None = "figure") -> Prose:
    """``live``, then what ``describe(run)`` says of each reference run: a Prose (several paragraphs
    are one :func:`paragraphs`), a str, or ``None`` to leave that run out. With no reference runs,
    the sentence that none of ``what`` ships yet (:func:`.words.no_reference`; ``shown``: what shows
    this run alone instead, ``None`` for no more than that), or nothing where ``what`` is None (the
    live text says so itself)."""
    from .words import no_reference
    missing = Prose(no_reference(what, shown), {"references": 0}) if not references and what is not None else None
    return paragraphs(live, missing, *(describe(run) for run in references))


def __getattr__(name):
    # brrr.prose.bandwidth etc. load on first use.
    import importlib
    try:
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError:
        raise AttributeError(f"module 'brrr.prose' has no attribute {name!r}") from None
