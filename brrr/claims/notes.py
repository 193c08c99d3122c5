"""What a page says about its own evidence: a missing record, noisy samples, a measured cause."""
from __future__ import annotations

from dataclasses import dataclass

from .base import NOISE_LIMIT, Claim
from .quantity import ClaimError, finite, quantity


@dataclass
class Missing(Claim):
    """The page's run has no record of ``record``: one sentence, naming it (``what``: what is lost)."""
    record: str
    what: str = "so nothing here is measured"

    def validate(self):
        if not isinstance(self.record, str) or not self.record:
            raise ValueError(f"Missing: record must name a measurement, got {self.record!r}")

    def text(self) -> str:
        return f"Not measured here: this page's run has no record of `{self.record}`, {self.what}."

    def check(self):
        if f"`{self.record}`" not in self.text():
            raise ClaimError("a missing record not named")


@dataclass
class Noisy(Claim):
    """Says, only where they are, that ``subject``'s samples spread (IQR over median) by more than
    NOISE_LIMIT; says nothing otherwise."""
    subject: str
    iqr: float
    median: float

    def validate(self):
        self.iqr = finite("Noisy", "iqr", self.iqr, positive=False)
        self.median = finite("Noisy", "median", self.median)

    @property
    def outcome(self) -> str:
        return "noisy" if self.iqr / self.median > NOISE_LIMIT else "steady"

    def text(self) -> str:
        if self.outcome == "steady":
            return ""
        return (f"The samples of {self.subject} spread by {quantity(self.iqr / self.median, '%')} of their median "
                f"(the interquartile range), more than the {quantity(NOISE_LIMIT, '%')} this book calls steady: "
                "rerun it before reading much into it.")

    def check(self):
        if (self.outcome == "noisy") != bool(self.text()):
            raise ClaimError("noise said where there is none, or not said where there is")


@dataclass
class Cause(Claim):
    """``because``, a fixed sentence naming a cause, said only where ``evidence`` (the claim that
    measured that cause on this page) came out as one of ``when``."""
    because: str
    evidence: Claim
    when: tuple = ()

    def __post_init__(self):
        if isinstance(self.evidence, dict):
            from .page import from_dict
            self.evidence = from_dict(self.evidence)
        self.when = tuple(self.when)
        super().__post_init__()

    def validate(self):
        if not isinstance(self.evidence, Claim) or not self.when:
            raise ValueError("Cause: evidence must be a claim and when the outcomes that show the cause")

    @property
    def outcome(self) -> str:
        return "said" if self.evidence.outcome in self.when else "not said"

    def text(self) -> str:
        return self.because if self.outcome == "said" else ""

    def check(self):
        self.evidence.check()
        if bool(self.text()) != (self.evidence.outcome in self.when):
            raise ClaimError(f"a cause said without its evidence: {self.because!r}")
