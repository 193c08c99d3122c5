"""What exercise tests may ask about the machine: the grader's view of the device.

Tests that judge a prediction or a measurement against "your device" call
:func:`grader_device`. In a graded batch the grader measures the device once, before any
submission runs, and the scorer reads that record from the file ``BRRR_GRADER_DEVICE``
names (a file no submission can reach). Anywhere else (the student's own ``grader.check``,
Gradescope) it describes ``brrr.device()`` as this process sees it.
"""
from __future__ import annotations

import json
import os

ENV = "BRRR_GRADER_DEVICE"
FIELDS = ("name", "backend", "peak_flops", "peak_bandwidth")


def describe(dev) -> dict:
    """The record tests use: name, backend, peak FLOP/s (float32), bandwidth (bytes/s) and the
    last-level cache (bytes; a transfer that fits in it may outrun the bandwidth)."""
    return {"name": dev.name, "backend": dev.backend, "peak_flops": float(dev.peak_flops("float32")),
            "peak_bandwidth": float(dev.peak_bandwidth), "cache_bytes": int(getattr(dev, "l2_bytes", 0) or 0)}


def grader_device() -> dict:
    """The device record tests judge answers against (see the module docstring)."""
    path = os.environ.get(ENV)
    if path:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
        missing = [k for k in FIELDS if k not in record]
        if missing:
            raise ValueError(f"{ENV} file {path} lacks {', '.join(missing)}")
        return record
    from ..device import device
    return describe(device())


def within(value, reference, factor: float) -> bool:
    """True when ``value`` is a positive number within ``factor`` times ``reference`` either way."""
    try:
        value, reference = float(value), float(reference)
    except (TypeError, ValueError):
        return False
    return value > 0 and reference > 0 and reference / factor <= value <= reference * factor


# --- givens: what a test checks before it compares anything -----------------------------
# A student's notebook defines the sizes and inputs an exercise gives, so a test that compares
# an answer with a formula of them must first check them: with n = inf, `abs(x - k n^3) <= eps k n^3`
# is `inf <= inf`, and a loop over an empty dict checks nothing.

def whole(name: str, value) -> int:
    """``value`` as a positive whole number (a size the exercise gives), or AssertionError naming it."""
    import numbers
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) and value > 0
    assert ok, f"{name} is a size the exercise gives: a positive whole number, not {value!r:.40}"
    return int(value)


def positive(name: str, value) -> float:
    """``value`` as a finite number above zero (the library's rule, :func:`brrr.checks.positive`),
    or AssertionError naming it: a test case fails, with the reason."""
    from ..checks import positive as library_rule
    try:
        return library_rule(name, value)
    except (TypeError, ValueError) as error:
        raise AssertionError(str(error)) from None


def filled(name: str, value, keys=None, least: int = 1):
    """``value`` as a container of at least ``least`` items that holds every one of ``keys``
    (a dict's keys), or AssertionError naming it."""
    try:
        size = len(value)
    except TypeError:
        size = -1
    assert size >= least, f"{name} should hold at least {least} item{'s' * (least != 1)}, not {value!r:.60}"
    if keys is not None:
        missing = [k for k in keys if k not in value]
        assert not missing, f"{name} lacks {', '.join(map(repr, missing[:5]))}"
    return value


RATE_SLACK = 2.0   # a timing may claim at most this many times the grading device's peaks


def measured(name: str, timing, flops: float = 0.0, nbytes: float = 0.0):
    """``timing`` as a brrr Timing of samples that are finite times a real call can take (the
    median at least :data:`brrr.timing.MIN_GRAPH_CALL_SECONDS`) and whose rates the grading
    device can reach: for a call of ``flops`` FLOPs (else the Timing's own ``flops``), at most
    :data:`RATE_SLACK` times its float32 peak; for ``nbytes`` bytes (else the Timing's own
    ``nbytes``) too many to stay in its last-level cache (:data:`brrr.timing.CACHE_FACTOR` times
    it), at most RATE_SLACK times its bandwidth. Else AssertionError naming it."""
    import math
    from ..timing import CACHE_FACTOR, MIN_GRAPH_CALL_SECONDS, Timing
    assert isinstance(timing, Timing), f"{name} should be the Timing that brrr.bench returns"
    try:
        samples = [float(t) for t in timing.samples]
    except (TypeError, ValueError):
        samples = []
    assert samples and all(math.isfinite(t) and t > 0 for t in samples), (
        f"{name} should hold the positive, finite times brrr.bench measured")
    median = timing.median
    assert median >= MIN_GRAPH_CALL_SECONDS, f"{name} has a median of {median!r:.20}, less than any call takes"
    flops = flops or timing.flops or 0.0
    nbytes = nbytes or timing.nbytes or 0.0
    if flops or nbytes:
        device = grader_device()
    if flops:
        peak = float(device["peak_flops"])
        assert flops / median <= RATE_SLACK * peak, (
            f"{name} claims {flops / median:.3g} FLOP/s, over {RATE_SLACK:g} times this device's peak of {peak:.3g}")
    if nbytes and nbytes >= CACHE_FACTOR * float(device.get("cache_bytes") or 0):
        peak = float(device["peak_bandwidth"])
        assert nbytes / median <= RATE_SLACK * peak, (
            f"{name} claims {nbytes / median:.3g} bytes/s, over {RATE_SLACK:g} times this device's peak "
            f"bandwidth of {peak:.3g}")
    return timing


# --- units: public ranges that catch a wrong unit and give no value away -----------------------
PEAK_RANGES = {"FLOP/s": (1e9, 1e17), "bytes/s": (1e9, 1e14)}   # from the slowest device to the fastest
FRACTION_SLACK = 3.0   # a fraction of a peak or of a time may reach this (peaks are trusted to a factor of 3)


def peak(name: str, value, unit: str) -> float:
    """``value`` as a device's peak in ``unit`` ('FLOP/s' or 'bytes/s'), inside :data:`PEAK_RANGES`,
    or AssertionError naming it and the likely slip (TFLOP/s or GB/s written as the number)."""
    low, high = PEAK_RANGES[unit]
    value = positive(name, value)
    example = "19.5 TFLOP/s is 19.5e12, not 19.5" if unit == "FLOP/s" else "1.5 TB/s is 1.5e12, not 1.5 or 1500"
    assert low <= value <= high, (f"{name} is in {unit}: a device's peak is between {low:.0e} and {high:.0e} "
                                  f"{unit} ({example}), not {value:.3g}")
    return value


def fraction(name: str, value, most: float = FRACTION_SLACK) -> float:
    """``value`` as a fraction above 0 and at most ``most``, or AssertionError naming it (a
    percentage is the likely slip)."""
    value = positive(name, value)
    assert value <= most, f"{name} is a fraction, near or below 1 (0.5, not 50 for 50%), not {value:.3g}"
    return value


def byte_count(name: str, value) -> float:
    """``value`` as a positive whole number of bytes, or AssertionError naming it (KB, KiB or MB
    are the likely slip)."""
    value = positive(name, value)
    assert value.is_integer(), f"{name} counts bytes: a whole number of them, not {value:.6g} (bytes, not KB or MB)"
    return value


# --- answers chosen from a list: a regime, a letter ------------------------------------------
REGIMES = ("compute-bound", "memory-bound", "overhead-bound")
LETTERS = ("a", "b", "c", "d")


def choice(name: str, value, choices=LETTERS) -> str:
    """A regime or letter answer, compared case- and whitespace-insensitively: ``value``
    stripped and lower-cased when that is one of ``choices``, else AssertionError naming it.
    Every test that reads such an answer reads it through this, public and hidden alike."""
    text = value.strip().lower() if isinstance(value, str) else None
    assert text in choices, (f"{name} should be one of {', '.join(map(repr, choices))} "
                             f"(as a string; case and spaces do not matter), not {value!r:.40}")
    return text
