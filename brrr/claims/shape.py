"""The shape of a curve: flat, still rising, flattening from a point, falling after its best, uneven."""
from __future__ import annotations

from dataclasses import dataclass

from .base import SAME, Claim, cap
from .quantity import ClaimError, finite, quantity, significant as number


@dataclass
class Shape(Claim):
    """``ys`` against increasing ``xs`` (``x_name``: 'n =', 'batch'), "near" being within SAME of the best: 'flat'
    (all near), 'still rising' (only the last), 'flattens' (near from the x stated to the end), 'falls after its
    best' (the last not near) or 'uneven' (near, not, near again)."""
    subject: str
    xs: list
    ys: list
    x_name: str
    unit: str = ""
    name: str = ""

    def validate(self):
        if len(self.xs) != len(self.ys) or len(self.xs) < 2:
            raise ValueError(f"Shape: xs and ys must be two or more points each, got {self.xs!r} and {self.ys!r}")
        pairs = sorted((finite("Shape", "xs", x, positive=False), finite("Shape", "ys", y))
                       for x, y in zip(self.xs, self.ys))
        self.xs, self.ys = [p[0] for p in pairs], [p[1] for p in pairs]
        quantity(self.ys[0], self.unit)

    def near(self) -> list:
        """Whether each point is within SAME of the best."""
        best = max(self.ys)
        return [y >= (1 - SAME) * best for y in self.ys]

    @property
    def plateau(self) -> int:
        """The index where the trailing run of near points starts."""
        near, start = self.near(), len(self.ys)
        while start > 0 and near[start - 1]:
            start -= 1
        return start

    @property
    def outcome(self) -> str:
        near, start = self.near(), self.plateau
        if all(near):
            return "flat"
        if not near[-1]:
            return "falls after its best"
        if any(near[:start]):
            return "uneven"
        return "still rising" if start == len(self.ys) - 1 else "flattens"

    def _at(self, i: int) -> str:
        return f"{quantity(self.ys[i], self.unit)} at {self.x_name} {number(self.xs[i])}"

    def text(self) -> str:
        s, o, n = cap(self.subject), self.outcome, len(self.ys)
        best = max(range(n), key=self.ys.__getitem__)
        within = quantity(SAME, "%")
        if o == "flat":
            return (f"{s} stayed within {within} of its best, {self._at(best)}, from {self.x_name} "
                    f"{number(self.xs[0])} to {number(self.xs[-1])}.")
        if o == "still rising":
            return f"{s} rose from {self._at(0)} to {self._at(n - 1)}, still rising at the largest {self.x_name.rstrip(' =')}."
        if o == "flattens":
            return (f"{s} rose from {self._at(0)} and flattened from {self.x_name} {number(self.xs[self.plateau])} "
                    f"on, within {within} of its best, {self._at(best)}.")
        if o == "falls after its best":
            return f"{s} peaked at {self._at(best)} and fell to {self._at(n - 1)}."
        low = min(range(best, n), key=self.ys.__getitem__)
        return f"{s} reached {self._at(best)}, fell to {self._at(low)} and came back to {self._at(n - 1)}."

    def check(self):
        near, start, o = self.near(), self.plateau, self.outcome
        if o == "flattens" and not (0 < start < len(near) - 1 and all(near[start:]) and not any(near[:start])):
            raise ClaimError(f"'flattens from' a point that does not start a plateau: {self.text()!r}")
        if o == "falls after its best" and near[-1]:
            raise ClaimError(f"'fell' to a point near the best: {self.text()!r}")
