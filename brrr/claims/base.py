"""What every claim is: numbers, one sentence, one invariant; and the thresholds, one per meaning."""
from __future__ import annotations

from dataclasses import dataclass, fields

from ..roofline import UNEXPLAINED, Roofline  # noqa: F401 (a time over twice its largest bound: here too)
from ..timing import NOISE_LIMIT  # noqa: F401 (the one noise limit, public here too)

SAME = 0.10          # two values within 10% of each other are "about the same"
ABOVE_ROOF = 1.05    # up to 5% faster than a bound is timing noise; more is a point above the roof
MOST_SENTENCES = 5   # sentences about the page's run in one cell (and one per reference run)


def cap(text: str) -> str:
    """``text`` with a capital first letter (a name in `code` or an acronym stays as it is)."""
    return text[:1].upper() + text[1:] if text[:1].islower() else text


def listing(items) -> str:
    """'a', 'a and b', 'a, b and c'."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


@dataclass
class Claim:
    """A sentence and the numbers it is true of. A subclass's ``name`` keys its outcome in the
    cell's facts; :meth:`validate` refuses, naming the argument, a number that cannot be stated."""

    def __post_init__(self):
        self.validate()

    def validate(self):     # a subclass refuses what it cannot state
        pass

    @property
    def outcome(self):
        """Which wording the numbers chose (None where there is only one)."""
        return None

    def text(self) -> str:
        """The sentence ('' where the claim says nothing on this run)."""
        raise NotImplementedError

    def check(self):
        """Raise :class:`~brrr.claims.ClaimError` unless the sentence is true of the numbers."""

    def to_dict(self) -> dict:
        """The claim as plain data, with its outcome and text (:func:`brrr.claims.from_dict` reads it)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data = {k: (v.to_dict() if isinstance(v, (Roofline, Claim)) else v) for k, v in data.items()}
        return {"kind": type(self).__name__, **data, "outcome": self.outcome, "text": self.text()}
