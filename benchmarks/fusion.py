"""(c) Fused vs unfused ``brrr.kernels.chain`` at 2**26 float32 (256 MiB), n = 2, 4, 8 ops.

Unfused: n one-op kernels, each reading the previous array and writing a new
one (eager ``x = x * c``; ping-pong between two preallocated arrays, nothing
allocated while timing). Fused: one kernel doing all n multiplies per element.
Both are memory-bound, so the model predicts a speed-up of n (n passes over
memory against one); target >= 0.8 n. A fused chain of 8 multiplies moves the
bytes of a chain of one, so it should take about as long: target <= 1.2 x (a
kernel that spent a load and a store per multiply once took 1.4 x on an EPYC and
2.5 x on a Xeon). For information the script also times
unfused passes done in place (``x *= c``): on a CPU, a pass that writes to a
line it has just read skips the write-allocate read that an out-of-place store
pays, so in-place passes are cheaper per pass and the speed-up over them falls
below n, for a reason that is about caches, not fusion.

    python benchmarks/fusion.py [--quick]
"""
from __future__ import annotations

import sys

import numpy as np

import brrr
from brrr import kernels
from common import figure, median, rounds, show

TARGET = 0.8


def run(quick: bool = False) -> list:
    size = 2 ** (22 if quick else 26)
    x = np.random.default_rng(0).standard_normal(size, dtype=np.float32)   # realistic data, not constants
    out = np.zeros_like(x)
    scratch = np.zeros_like(x)
    figures = []
    for n in (2, 4, 8):
        fused_bytes, flops = kernels.traffic("chain", x, n=n, fused=True)
        unfused_bytes, _ = kernels.traffic("chain", x, n=n, fused=False)
        speedups, inplace = [], []
        times = {"fused": [], "unfused": [], "unfused_in_place": []}
        for _ in range(rounds(quick, full=5)):
            fused = brrr.bench(kernels.chain, x, n, "mul", True, out, nbytes=fused_bytes,
                               budget=0.25, backend="cpu").median
            unfused = brrr.bench(kernels.chain, x, n, "mul", False, out, None, None, scratch,
                                 nbytes=unfused_bytes, budget=0.25, backend="cpu").median
            in_place = brrr.bench(kernels.chain, x, n, "mul", False, out, None, None, out,
                                  nbytes=unfused_bytes, budget=0.25, backend="cpu").median
            times["fused"].append(fused)
            times["unfused"].append(unfused)
            times["unfused_in_place"].append(in_place)
            speedups.append(unfused / fused)
            inplace.append(in_place / fused)
        value = median(speedups)
        figures.append(figure(
            "c", f"chain n={n}: unfused / fused time, 2^{size.bit_length() - 1} float32", value,
            target=f">= {TARGET * n:.1f} (0.8 n)", passed=value >= TARGET * n, unit="x",
            n=n, size=size, fused_s=median(times["fused"]), unfused_s=median(times["unfused"]),
            speedups_per_round=[round(s, 3) for s in speedups],
            fused_gbps=fused_bytes / median(times["fused"]) / 1e9,
            unfused_gbps=unfused_bytes / median(times["unfused"]) / 1e9))
        figures.append(figure(
            "c", f"  same against in-place unfused passes (x *= c)", median(inplace), unit="x",
            n=n, unfused_in_place_s=median(times["unfused_in_place"]),
            speedups_per_round=[round(s, 3) for s in inplace]))
    ratios = []
    for _ in range(rounds(quick, full=5)):
        one, eight = (brrr.bench(kernels.chain, x, k, "mul", True, out, budget=0.25, backend="cpu").median
                      for k in (1, 8))
        ratios.append(eight / one)
    value = median(ratios)
    figures.append(figure(
        "c", f"fused chain n=8 / n=1 time (same bytes), 2^{size.bit_length() - 1} float32", value,
        target="<= 1.2", passed=value <= 1.2, unit="x", ratios_per_round=[round(r, 3) for r in ratios]))
    return figures


if __name__ == "__main__":
    show(run("--quick" in sys.argv))
