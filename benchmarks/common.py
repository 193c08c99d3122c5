"""What every benchmark script shares: sizes, interleaved rounds, and one printed line per figure.

A *figure* is a plain dict: {"figure": "a", "name": ..., "value": ..., "target": ...,
"passed": True/False/None, "details": {...}}. ``passed`` is None for figures shown
for information only. Benchmarks print; they never fail a build.
"""
from __future__ import annotations

import statistics

MIB = 2 ** 20


def rounds(quick: bool, full: int = 3) -> int:
    """How many interleaved rounds to measure (the machine is shared: medians of rounds)."""
    return 1 if quick else full


def figure(key, name, value, target=None, passed=None, unit="", **details) -> dict:
    return {"figure": key, "name": name, "value": value, "unit": unit, "target": target,
            "passed": passed, "details": details}


def median(values):
    return statistics.median(values)


def line(f: dict) -> str:
    """'(a) name ......... 0.97 x   target >= 0.9   PASS'"""
    value = f["value"]
    text = f"{value:.3g}" if isinstance(value, float) else str(value)
    verdict = {True: "PASS", False: "MISS", None: "info"}[f["passed"]]
    target = f"target {f['target']}" if f["target"] else ""
    return f"({f['figure']}) {f['name']:<58} {text:>9} {f['unit']:<4} {target:<22} {verdict}"


def show(figures):
    for f in figures:
        print(line(f), flush=True)
