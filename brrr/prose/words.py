"""The small vocabulary the chapters' sentences share: numbers with units, ratios in words,
lists and counts, device names, and what to say where a reference run is missing."""
from __future__ import annotations

import math

from ..results import ran_on_cpu

SAME = 0.10         # two times within 10% of each other are "about the same"
ABOVE_ROOF = 1.05   # 5% faster than a roof is "above" it (less is noise)
ON_ROOF = 0.7       # 70% of a roof or more is "on" (or "near") it; less is below it
NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def seconds(value: float) -> str:
    """'12.3 µs', '4.56 ms', '1.2 s'."""
    from ..units import format_seconds
    return format_seconds(value)


def rate(value: float, unit: str = "FLOP/s") -> str:
    """FLOP/s or bytes/s with a readable prefix: '19.5 TFLOP/s', '24.3 GB/s'."""
    from ..units import format_rate
    if unit in ("B/s", "bytes/s"):
        return format_rate(value, "B/s")
    return format_rate(value)


def size(nbytes: float) -> str:
    """'16 MiB'."""
    from ..units import format_bytes
    return format_bytes(nbytes)


def number(value: float, digits: int = 3) -> str:
    """A number with ``digits`` significant digits and thousands separators: '1,230', '0.125'."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    if abs(value) >= 10 ** digits:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


def integer(value) -> str:
    """An exact whole number with thousands separators: '16,384'."""
    return f"{int(value):,}"


def spelled(n: int) -> str:
    """A count in words up to ten ('no', 'one', ... 'ten'), in digits above: '12', '1,024'."""
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else f"{n:,}"


def listing(items) -> str:
    """'a', 'a and b', 'a, b and c' ('' for none)."""
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def percent(fraction: float) -> str:
    """0.734 -> '73%'; small fractions keep two significant digits ('0.42%')."""
    p = 100 * fraction
    return f"{p:.0f}%" if abs(p) >= 10 else f"{p:.2g}%"


def times(ratio: float) -> str:
    """'3.2 times', '1.35 times', '0.956 times', '12 times': three significant digits below 2, where
    the second decimal is the point (a 35% rise is not a 30% one), two from 2 to 10, whole numbers above."""
    if ratio < 2:
        return f"{ratio:.3g} times"
    return f"{ratio:.2g} times" if ratio < 10 else f"{ratio:,.0f} times"


def relative(value: float, base: float, whose: str = "this run's") -> str:
    """'2.8 times this run's', 'about the same as this run's', 'a third of ...' (as 0.33 times)."""
    ratio = value / base
    if abs(ratio - 1) <= SAME:
        return f"about the same as {whose}"
    return f"{times(ratio)} {whose}"


def longer_or_shorter(t: float, base: float, what: str = "") -> tuple:
    """(outcome, words) comparing a time ``t`` with ``base``: 'about as long as', 'N times as
    long as' or 'N times shorter than' (outcome 'same', 'longer', 'shorter')."""
    ratio = t / base
    if abs(ratio - 1) <= SAME:
        return "same", f"about as long as{' ' + what if what else ''}"
    if ratio > 1:
        return "longer", f"{times(ratio)} as long as{' ' + what if what else ''}"
    return "shorter", f"{times(1 / ratio)} shorter than{' ' + what if what else ''}"


def device_of(result) -> str:
    """The device name saved with a result."""
    return (getattr(result, "meta", {}).get("device") or {}).get("name", "this device")


def is_cpu(result) -> bool:
    """Whether a result was measured on a CPU (:func:`brrr.results.ran_on_cpu` of its device)."""
    return ran_on_cpu(getattr(result, "meta", {}).get("device"))


def date_of(result) -> str:
    return getattr(result, "meta", {}).get("date", "")[:10]


def no_reference(what: str, shown: str | None = "figure") -> str:
    """The sentence for a figure that has no reference run of ``what`` yet (``shown``: what shows
    this run alone instead, e.g. 'table and the figure'; ``None``: that no run ships, and no more)."""
    text = f"No reference GPU run of {what} ships with this edition of the book yet"
    if shown is None:
        return text + "."
    return f"{text}, so the {shown} {'show' if ' and ' in shown else 'shows'} this run alone."


def reference_intro(run) -> str:
    """'On the reference NVIDIA H100 80GB HBM3 (measured 2026-11-22)'."""
    return f"On the reference {device_of(run)} (measured {date_of(run)})"
