"""(d) The timer's floor on the CPU: what ``brrr.bench`` reports for an empty call.

In 'hot' mode (blocked auto-range: many calls per sample) the floor is the cost
of one Python call in a loop; in 'flush' mode (one call per sample, cache
flushed before it) it also holds a pair of ``perf_counter_ns`` reads and a cold
cache. Below 3x the floor, bench warns that a result is overhead-dominated.
Targets (so that the warning leaves room for real work): hot below 1 us, flush
below 10 us. For comparison, torch.utils.benchmark's median for an empty
statement is printed too.

    python benchmarks/timer_floor.py [--quick]
"""
from __future__ import annotations

import sys

import brrr
from common import figure, show

TARGETS = {"hot": 1e-6, "flush": 10e-6}


def _empty():
    return None


def run(quick: bool = False) -> list:
    out = []
    for cache in ("hot", "flush"):
        t = brrr.bench(_empty, cache=cache)
        out.append(figure("d", f"timer floor on the CPU, cache='{cache}'", t.floor * 1e9,
                          target=f"< {TARGETS[cache] * 1e9:.0f} ns",
                          passed=t.floor < TARGETS[cache], unit="ns",
                          empty_call_median_ns=t.median * 1e9, calls_per_sample=t.calls_per_sample))
    try:
        from torch.utils.benchmark import Timer
        m = Timer(stmt="pass").blocked_autorange(min_run_time=0.05 if quick else 0.2)
        out.append(figure("d", "  torch Timer median of an empty statement", m.median * 1e9,
                          unit="ns"))
    except ImportError:
        pass
    return out


if __name__ == "__main__":
    show(run("--quick" in sys.argv))
