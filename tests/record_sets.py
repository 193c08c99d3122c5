"""The shipped record sets the prose tests render every chapter's sentences from.

* ``brrr/data/reference/<device>/``: the reference runs brrr ships (full size: the GPUs
  and the CPU that builds the book), made by ``brrr record`` (or, before it, by executing the chapters);
* ``tests/data/records/quick/<device>/``: every measurement in quick mode, made by
  ``brrr record --quick --out tests/data/records/quick/<device>``.

Each set maps an experiment name (the name a chapter passes to ``brrr.reference.beside``)
to its Result. A prose test takes every set that holds the experiments it needs, uses
it as the live run, draws the shipped GPU references beside it (as the chapter does),
and checks each sentence against the numbers.
"""
import re
from pathlib import Path

import pytest

from brrr import reference

ROOT = Path(__file__).resolve().parents[1]
QUICK = ROOT / "tests" / "data" / "records" / "quick"


def record_sets() -> dict:
    """{'reference/<device>' or 'quick/<device>': {experiment: Result}}."""
    sets = {}
    for label, folder in (("reference", reference.REFERENCE_DIR), ("quick", QUICK)):
        for device, runs in reference.record_sets(folder).items():
            sets[f"{label}/{device}"] = runs
    return sets


def sets_with(*experiments):
    """pytest params, one per record set holding all of ``experiments``: (runs,)."""
    return [pytest.param(runs, id=name) for name, runs in record_sets().items()
            if all(e in runs for e in experiments)]


def numbers(text: str) -> list:
    """Every number written in ``text`` ('1,230', '0.125', '73%' -> 1230, 0.125, 73)."""
    return [float(m.replace(",", "")) for m in re.findall(r"(?<![\w.])\d[\d,]*(?:\.\d+)?", text)]


def close_to(value: float, text: str, rel: float = 0.051) -> bool:
    """Whether ``text`` states ``value`` (to the 2-3 significant digits prose uses)."""
    return any(abs(n - value) <= rel * abs(value) + 1e-12 for n in numbers(text))
