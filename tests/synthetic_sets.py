"""Synthetic record sets for GPUs we have no run of (a T4, an L4, an A100), made from a real set by
rescaling each record to the device's spec sheet, so that every chapter's claims are checked on
devices no one here has measured. Not measurements: never shipped, never drawn as a reference."""
from __future__ import annotations

from pathlib import Path

DEVICES = {}    # label -> brrr.specs key; filled in by the generator


def make_all(out) -> dict:
    """{label: folder} of every synthetic set, written under ``out``."""
    return {}
