"""Measurements against the roofline: how near a bound one came, and which bound is the largest."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..roofline import COMPUTE, MEMORY, OVERHEAD, UNEXPLAINED_REGIME, Roofline
from .base import ABOVE_ROOF, Claim, cap, listing
from .quantity import ClaimError, agrees, finite, quantity


@dataclass
class Bound(Claim):
    """How near a measurement came to the most ``roof`` allows: a time against its least time (``unit='s'``),
    or a rate against a peak (``'FLOP/s'``, ``'B/s'``; ``mfu=True``: MFU, naming the peak). Above the roof it
    says why: timing noise (to ABOVE_ROOF), ``nbytes`` fitting the ``cache_bytes`` cache, a CPU's measured
    roof, or else that the count or the roof is wrong."""
    subject: str
    measured: float
    allowed: float
    roof: str
    unit: str = "s"
    mfu: bool = False
    nbytes: Optional[float] = None
    cache_bytes: Optional[float] = None
    measured_roof: bool = False
    name: str = ""

    def validate(self):
        self.measured = finite("Bound", "measured", self.measured)
        self.allowed = finite("Bound", "allowed", self.allowed)
        quantity(self.measured, self.unit)

    @property
    def share(self) -> float:
        """The share of the roof's speed reached: least time / time, or rate / peak."""
        return self.allowed / self.measured if self.unit == "s" else self.measured / self.allowed

    @property
    def outcome(self) -> str:
        return "above" if self.share > 1 else "below"

    def why(self) -> str:
        if self.share <= ABOVE_ROOF:
            return f"within the {quantity(ABOVE_ROOF - 1, '%')} a timing can err by"
        if self.nbytes and self.cache_bytes and self.nbytes <= self.cache_bytes:
            return (f"its {quantity(self.nbytes, 'B')} fit in the {quantity(self.cache_bytes, 'B')} cache, "
                    "which is faster than the DRAM the roof counts")
        if self.measured_roof:
            return "the roof is the peak this CPU measured, not a hardware limit"
        return "no roof allows that, so the count of its bytes or FLOPs, or the roof, is wrong"

    def text(self) -> str:
        m, a, share = quantity(self.measured, self.unit), quantity(self.allowed, self.unit), quantity(self.share, "%")
        if self.unit == "s":
            said = f"{cap(self.subject)} ran at {share} of the speed {self.roof} allows: {m} against at least {a}"
        elif self.mfu:
            said = f"{cap(self.subject)} ran at {share} MFU against {self.roof}: {m} of {a}"
        else:
            said = f"{cap(self.subject)} reached {share} of {self.roof}: {m} against {a}"
        return said + (f", a point above the roof: {self.why()}." if self.outcome == "above" else ".")

    def check(self):
        said = self.text()
        words = said.split(f"{cap(self.subject)} ", 1)[1].split(" ", 2)    # 'ran at 73% ...' or 'reached 61% of ...'
        agrees(words[1] if words[0] == "reached" else words[2], self.share)
        if (self.outcome == "above") != ("above the roof" in said):
            raise ClaimError(f"a share of {self.share} flagged wrongly: {said!r}")
        if self.mfu and f"of {quantity(self.allowed, self.unit)}" not in said:
            raise ClaimError(f"an MFU that does not name its peak: {said!r}")


@dataclass
class Regime(Claim):
    """Which of a call's least times is the largest by ``Roofline.regime``, the book's one rule: the arithmetic,
    the memory traffic, or (``call_cost`` known) the fixed cost of a call. Where the measured ``seconds`` are
    over UNEXPLAINED times the largest, it says none explains the time, and gives no regime (:meth:`Roofline.judge`,
    with ``device_time``: the seconds are the GPU's own)."""
    subject: str
    flops: float
    nbytes: float
    roof: Roofline
    call_cost: Optional[float] = None
    seconds: Optional[float] = None
    name: str = ""
    device_time: bool = False

    def __post_init__(self):
        if isinstance(self.roof, dict):
            self.roof = Roofline.from_dict(self.roof)
        super().__post_init__()

    def validate(self):
        self.flops = finite("Regime", "flops", self.flops, positive=False)
        self.nbytes = finite("Regime", "nbytes", self.nbytes, positive=False)
        if not isinstance(self.roof, Roofline):
            raise ValueError(f"Regime: roof must be a brrr.Roofline, got {type(self.roof).__name__}")
        for name in ("call_cost", "seconds"):
            if getattr(self, name) is not None:
                setattr(self, name, finite("Regime", name, getattr(self, name)))
        if max(self.bounds().values()) <= 0:
            raise ValueError("Regime: a call with no FLOPs, no bytes and no call cost has no bound")

    def bounds(self) -> dict:
        """{regime: least seconds} of each bound the claim knows."""
        out = {COMPUTE: self.flops / self.roof.peak_flops, MEMORY: self.nbytes / self.roof.peak_bandwidth}
        if self.call_cost is not None:
            out[OVERHEAD] = self.call_cost
        return out

    @property
    def regime(self) -> str:
        return self.roof.with_ceilings(overhead=self.call_cost).regime(self.flops, self.nbytes)

    @property
    def hides_call(self) -> bool:
        """Whether the GPU's own time is longer than the cost of issuing the call, which it then hides."""
        return self.device_time and None not in (self.seconds, self.call_cost) and self.seconds > self.call_cost

    @property
    def outcome(self) -> str:
        return self.roof.with_ceilings(overhead=self.call_cost).judge(self.flops, self.nbytes, self.seconds,
                                                                      self.device_time)

    def _least(self) -> str:
        what = {COMPUTE: "the arithmetic", MEMORY: "the memory traffic", OVERHEAD: "the fixed cost of a call"}
        return listing([f"{quantity(t, 's')} for {what[k]}" for k, t in self.bounds().items()])

    def text(self) -> str:
        s, o = cap(self.subject), self.outcome
        case = ("the book's fourth case (Chapter 2)" if self.call_cost is not None else
                "the book's fourth case (Chapter 2), unless a fixed cost per call (Chapter 3), not known here, does")
        if self.hides_call:
            busy = (f"the GPU was busy for {quantity(self.seconds, 's')}, longer than the "
                    f"{quantity(self.call_cost, 's')} of issuing a call, which it hides")
            t = {k: quantity(v, "s") for k, v in self.bounds().items()}
            if o == UNEXPLAINED_REGIME:
                work = max(self.bounds()[COMPUTE], self.bounds()[MEMORY])
                return (f"{s}: {busy}, and {quantity(self.seconds / work, 'x')} the larger of its least times for the "
                        f"arithmetic ({t[COMPUTE]}) and the memory traffic ({t[MEMORY]}), so neither explains it: {case}.")
            return (f"{s} is {o}: {busy}, and its least times are {t[COMPUTE]} for the arithmetic and {t[MEMORY]} "
                    "for the memory traffic.")
        if o == UNEXPLAINED_REGIME:
            return (f"{s} took {quantity(self.seconds, 's')}, {quantity(self.seconds / max(self.bounds().values()), 'x')} "
                    f"the largest of its least times ({self._least()}): none of them explains it, {case}.")
        alone = "" if self.call_cost is not None else " alone"     # no fixed cost of a call known here
        return f"{s} is {self.regime} by the roofline{alone}: its least times are {self._least()}."

    def check(self):
        bounds, said = self.bounds(), self.text()
        largest = max(bounds.values())
        if bounds[self.regime] != largest and not (self.regime == OVERHEAD and bounds[OVERHEAD] >= largest):
            raise ClaimError(f"{self.regime} is not the largest of {bounds}")
        if self.outcome == UNEXPLAINED_REGIME:
            if any(r in said for r in (COMPUTE, MEMORY, OVERHEAD)):
                raise ClaimError(f"a time no bound explains, given a regime: {said!r}")
        elif self.hides_call:
            if self.outcome == OVERHEAD or f"is {self.outcome}:" not in said:
                raise ClaimError(f"a GPU busier than the call's cost, judged {self.outcome}: {said!r}")
        elif f"is {self.regime} by the roofline" not in said:
            raise ClaimError(f"{said!r} does not say {self.regime}")
