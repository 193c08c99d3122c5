"""(b) ``brrr.bench`` against ``torch.utils.benchmark.Timer(...).blocked_autorange()``.

Workload: ``np.copyto`` of a 256 MiB float32 array (one thread, about 10-20 ms a
call here). Why this one is a fair comparison: torch's Timer never flushes the
cache and times blocks of calls, and it reports the median of per-call block
times. A copy of 256 MiB in and 256 MiB out is 16x this CPU's last-level cache,
so whether brrr flushes before a sample or not, the data comes from DRAM; and a
call lasts far longer than either timer's own overhead (a microsecond or less),
so both should see the same time. Both brrr modes are compared: 'hot'
(blocked auto-range, the same method as torch's) and the default 'flush'.
Target: medians agree within 5%. Nine short rounds, each timing torch and
brrr back to back (which goes first alternates); the figure is the median over
rounds of brrr / torch, so load from other processes that drifts during the
run hits both. The spread of the rounds is kept in the JSON.

    python benchmarks/timer_vs_torch.py [--quick]
"""
from __future__ import annotations

import sys

import numpy as np

import brrr
from common import MIB, figure, median, rounds, show

TOLERANCE = 0.05


def run(quick: bool = False) -> list:
    from torch.utils.benchmark import Timer
    nbytes = (32 if quick else 256) * MIB
    src = np.full(nbytes // 4, 1.5, np.float32)
    dst = np.zeros_like(src)
    timer = Timer(stmt="np.copyto(dst, src)", globals={"np": np, "dst": dst, "src": src},
                  label="np.copyto", description=f"{nbytes // MIB} MiB")
    min_run_time = 0.1 if quick else 0.2
    results = {"hot": [], "flush": []}
    medians = {"hot": [], "flush": [], "torch": []}
    for i in range(rounds(quick, full=9)):
        # Short, many, alternating rounds: slow drifts in load cancel out of the ratios.
        for cache in ("hot", "flush"):
            first_torch = (i % 2 == 0)
            if first_torch:
                torch_median = timer.blocked_autorange(min_run_time=min_run_time).median
            t = brrr.bench(np.copyto, dst, src, cache=cache, budget=min_run_time, backend="cpu").median
            if not first_torch:
                torch_median = timer.blocked_autorange(min_run_time=min_run_time).median
            medians["torch"].append(torch_median)
            medians[cache].append(t)
            results[cache].append(t / torch_median)
    out = []
    for cache in ("hot", "flush"):
        ratio = median(results[cache])
        out.append(figure(
            "b", f"brrr.bench(cache='{cache}') / torch Timer median, copy {nbytes // MIB} MiB",
            ratio, target=f"within {TOLERANCE:.0%} of 1", passed=abs(ratio - 1) <= TOLERANCE,
            unit="x", brrr_median_s=median(medians[cache]), torch_median_s=median(medians["torch"]),
            ratios_per_round=[round(r, 4) for r in results[cache]], workload="np.copyto float32"))
    return out


if __name__ == "__main__":
    show(run("--quick" in sys.argv))
