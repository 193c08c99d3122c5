"""Numbers with units, written one way everywhere: seconds, bytes, rates and plain counts.

Seconds and SI prefixes are powers of 1000 ('12.3 µs', '19.5 TFLOP/s', '3.35 TB/s'); sizes
in memory are powers of 1024 ('16 MiB'), as operating systems and GPU spec sheets write them.
"""
from __future__ import annotations

import math


def format_seconds(seconds: float) -> str:
    """Seconds with a readable unit and three significant digits: '12.3 µs', '4.56 ms'."""
    rounded = float(f"{seconds:.3g}")   # so that 999.7 ns reads '1 µs', not '1e+03 ns'
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(rounded) >= scale:
            return f"{rounded / scale:.3g} {unit}"
    return f"{rounded / 1e-9:.3g} ns"


def format_bytes(nbytes: float) -> str:
    """'4 KiB', '1.5 MiB', '2 GiB'."""
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.3g} B"


def flops_unit(value: float):
    """('TFLOP/s', 1e12)-style unit and scale for FLOP/s values around ``value``."""
    for name, scale in (("PFLOP/s", 1e15), ("TFLOP/s", 1e12), ("GFLOP/s", 1e9), ("MFLOP/s", 1e6)):
        if value >= scale:
            return name, scale
    return "FLOP/s", 1.0


def format_rate(value: float, unit: str = "FLOP/s") -> str:
    """A FLOP/s rate ('19.5 TFLOP/s') or, with ``unit='B/s'``, a bandwidth ('3.35 TB/s', '24.3 GB/s')."""
    if unit == "FLOP/s":
        name, scale = flops_unit(value)
        return f"{value / scale:.3g} {name}"
    return f"{value / 1e12:.3g} TB/s" if value >= 1e12 else f"{value / 1e9:.3g} GB/s"


def format_si(value, unit: str) -> str:
    """A count with an SI prefix and three significant digits: '1.23 GFLOP', '456 kB'; '–' if missing."""
    if value is None or not math.isfinite(value):
        return "–"
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def format_number(v) -> str:
    """An exact count with thousands separators ('1,234'); other numbers to three significant digits."""
    if isinstance(v, (bool,)) or not isinstance(v, (int, float)):
        return str(v)
    if float(v).is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:,.3g}" if abs(v) >= 1e-3 else f"{v:.3g}"
