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
    """The record tests use: name, backend, peak FLOP/s (float32) and bandwidth (bytes/s)."""
    return {"name": dev.name, "backend": dev.backend, "peak_flops": float(dev.peak_flops("float32")),
            "peak_bandwidth": float(dev.peak_bandwidth)}


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
