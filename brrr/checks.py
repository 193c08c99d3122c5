"""Argument checks shared across the library: errors that name the argument."""
from __future__ import annotations

import math

import numpy as np


def positive(name: str, value, zero_ok: bool = False, unit: str = "") -> float:
    """``value`` as a float: a finite number (not a bool), above zero (or at least zero
    with ``zero_ok``). TypeError or ValueError naming ``name`` otherwise; ``unit`` (e.g.
    ``" of seconds"``) completes the sentence "must be a positive finite number...".
    """
    what = f"{'non-negative' if zero_ok else 'positive'} finite number{unit}"
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a {what}, got {type(value).__name__}")
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
        raise ValueError(f"{name} must be a {what}, got {value!r}")
    return float(value)
