"""Quantities as the page prints them, one format per unit, and the number read back from the page."""
from __future__ import annotations

import math
import numbers
import re

from ..units import format_bytes, format_rate, format_seconds

UNITS = ("s", "B", "B/s", "FLOP/s", "FLOP", "FLOP/byte", "%", "x", "count", "")
_SCALES = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "B": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30,
           "GB/s": 1e9, "TB/s": 1e12, "MFLOP/s": 1e6, "GFLOP/s": 1e9, "TFLOP/s": 1e12, "PFLOP/s": 1e15, "%": 0.01}
_QUANTITY = re.compile(r"(\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?)\s*"
                       r"(ns|µs|ms|s\b|B\b|KiB|MiB|GiB|[GT]B/s|[MGTP]?FLOP/s|%)?")


class ClaimError(AssertionError):
    """A claim whose sentence is not true of its numbers."""


def significant(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits in plain decimals, never in exponent notation:
    '0.25', '0.000123', '12.3', '120'; whole numbers with thousands separators from 1,000: '1,024'."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if value == 0 or abs(value) >= 10 ** (digits - 1):
        return f"{float(f'{value:.{digits}g}'):,.0f}"
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def quantity(value: float, unit: str) -> str:
    """``value`` in ``unit`` as the page prints it: '12.3 µs' (s), '16 MiB' (B), '3.35 TB/s' (B/s),
    '19.5 TFLOP/s', '7,516,192,768 FLOPs' (FLOP), '0.25 FLOP/byte', '73%' (a fraction), '2.8 times'
    (x), '1,024' (count), '0.125' ('')."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    if unit == "s":
        return format_seconds(value)
    if unit == "B":
        return format_bytes(value)
    if unit in ("B/s", "FLOP/s"):
        return format_rate(value, unit)
    if unit == "%":
        p = 100 * value
        return f"{p:.0f}%" if abs(p) >= 10 else f"{significant(p, 2)}%"
    if unit == "x":
        return f"{significant(value, 3)} times" if value < 10 else f"{value:,.0f} times"
    if unit in ("count", "FLOP"):
        return f"{round(value):,}" + (" FLOPs" if unit == "FLOP" else "")
    return significant(value) + (" FLOP/byte" if unit == "FLOP/byte" else "")


def read_back(text: str) -> tuple:
    """(value, half a unit of its last printed digit) of the first quantity in ``text``, in base
    units: seconds, bytes, bytes/s, FLOP/s, a percentage as a fraction."""
    found = _QUANTITY.search(text)
    if not found:
        raise ClaimError(f"no number in {text!r}")
    digits, unit = found.group(1).replace(",", ""), found.group(2)
    scale = _SCALES.get(unit or "", 1)
    mantissa, _, exponent = digits.partition("e")     # '1.02e+03' (units.format_bytes can print one)
    decimals = (len(mantissa.split(".")[1]) if "." in mantissa else 0) - int(exponent or 0)
    return float(digits) * scale, 0.5 * 10 ** -decimals * scale


def agrees(text: str, value: float):
    """Raise :class:`ClaimError` unless the first quantity in ``text`` is ``value`` to its printed digits."""
    printed, half = read_back(text)
    if abs(printed - value) > half * 1.0001 + 1e-12 * abs(value):
        raise ClaimError(f"{text!r} does not state {value!r}")


def finite(owner: str, name: str, value, positive: bool = True) -> float:
    """``value`` as a float; ValueError naming ``owner`` and ``name`` unless it is finite and
    positive (or, ``positive=False``, at least 0)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
            or (value <= 0 if positive else value < 0):
        kind = "a positive" if positive else "a non-negative"
        raise ValueError(f"{owner}: {name} must be {kind} finite number, got {value!r}")
    return float(value)
