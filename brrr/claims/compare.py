"""Numbers and how they compare: a value, one value against another, the parts of a whole."""
from __future__ import annotations

from dataclasses import dataclass

from .base import SAME, Claim, cap, listing
from .quantity import ClaimError, agrees, finite, quantity


@dataclass
class Value(Claim):
    """'{Subject} {verb} {value}.'; with no subject, the quantity alone (a template's slot)."""
    value: float
    unit: str = ""
    subject: str = ""
    verb: str = "took"
    name: str = ""

    def validate(self):
        self.value = finite("Value", "value", self.value, positive=False)
        quantity(self.value, self.unit)

    def text(self) -> str:
        q = quantity(self.value, self.unit)
        return f"{cap(self.subject)} {self.verb} {q}." if self.subject else q

    def check(self):
        agrees(quantity(self.value, self.unit), self.value)


@dataclass
class Compare(Claim):
    """``subject``'s value against ``base_name``'s. Times (``unit='s'``): 'took 2.8 times as long as',
    'took about as long as', 'was 3.1 times as fast as'. Other units: 'was 4.9 times', 'was about the
    same as', 'was 61% of'. "About" exactly where the ratio is within SAME of 1."""
    subject: str
    value: float
    base_name: str
    base: float
    unit: str = "s"
    name: str = ""

    def validate(self):
        self.value = finite("Compare", "value", self.value)
        self.base = finite("Compare", "base", self.base)
        quantity(self.value, self.unit)

    @property
    def ratio(self) -> float:
        return self.value / self.base

    @property
    def outcome(self) -> str:
        if abs(self.ratio - 1) <= SAME:
            return "same"
        if self.unit == "s":
            return "longer" if self.ratio > 1 else "shorter"
        return "more" if self.ratio > 1 else "less"

    def words(self) -> str:
        o, r = self.outcome, self.ratio
        if self.unit == "s":
            return {"same": "took about as long as", "longer": f"took {quantity(r, 'x')} as long as",
                    "shorter": f"was {quantity(1 / r, 'x')} as fast as"}[o]
        return {"same": "was about the same as", "more": f"was {quantity(r, 'x')}",
                "less": f"was {quantity(r, '%')} of"}[o]

    def text(self) -> str:
        return (f"{cap(self.subject)} {self.words()} {self.base_name}: {quantity(self.value, self.unit)} "
                f"against {quantity(self.base, self.unit)}.")

    def check(self):
        words, r = self.words(), self.ratio
        if (abs(r - 1) <= SAME) != words.startswith(("took about", "was about")):
            raise ClaimError(f"'{words}' for a ratio of {r}")
        if self.outcome != "same":
            agrees(words.split(" ", 1)[1], 1 / r if self.outcome == "shorter" else r)
            if (r > 1) != (self.outcome in ("longer", "more")):
                raise ClaimError(f"'{words}' for a ratio of {r}")


@dataclass
class Share(Claim):
    """The parts of a whole: 'Of the 4.2 ms of operator time, 71% went to memory-bound operators and
    20% to compute-bound ones.' (``unit='count'``: 'Of the 34 layers, 12 are memory-bound ...'; ``unit='%'``:
    a whole of unknown size, 'Of the time its operators took, 96% went to ...')."""
    whole: float
    parts: dict
    of: str
    unit: str = "s"
    verb: str = "went to"
    name: str = ""

    def validate(self):
        self.whole = finite("Share", "whole", self.whole)
        if not self.parts:
            raise ValueError("Share: parts must name at least one part")
        pairs = self.parts.items() if isinstance(self.parts, dict) else self.parts   # [[name, value]], as to_dict writes
        self.parts = {k: finite("Share", f"parts[{k!r}]", v, positive=False) for k, v in pairs}

    def to_dict(self) -> dict:
        """As :meth:`Claim.to_dict`, its parts as [name, value] pairs: a notebook's metadata sorts a dict's keys."""
        return {**super().to_dict(), "parts": [[k, v] for k, v in self.parts.items()]}

    def _named(self) -> list:
        if self.unit == "count":
            return [f"{quantity(v, 'count')} {self.verb} {k}" for k, v in self.parts.items()]
        return [f"{quantity(v / self.whole, '%')} {self.verb if i == 0 else 'to'} {k}"
                for i, (k, v) in enumerate(self.parts.items())]

    def text(self) -> str:
        whole = "" if self.unit == "%" else quantity(self.whole, self.unit) + " "   # '%': a whole of unknown size
        return f"Of the {whole}{self.of}, {listing(self._named())}."

    def check(self):
        if sum(self.parts.values()) > self.whole * (1 + 1e-9):
            raise ClaimError(f"parts {self.parts} add up to more than the whole, {self.whole}")
        for named, value in zip(self._named(), self.parts.values()):
            agrees(named, value if self.unit == "count" else value / self.whole)
