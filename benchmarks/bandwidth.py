"""(a) Numba copy and triad bandwidth as a fraction of ``np.copyto`` on 256 MiB arrays.

``np.copyto`` is the reference: NumPy's contiguous copy (glibc's memmove, which
uses non-temporal stores for arrays this large), one thread. Target: the Numba
kernels reach at least 0.9 of its bandwidth. Bytes come from
``brrr.kernels.traffic`` (STREAM convention: reads + writes, no write-allocate).

How: each round times np.copyto and the two kernels back to back with
``brrr.bench`` (cache='flush'; at 256 MiB per array, 8x this CPU's last-level
cache, nothing stays cached anyway), once per Numba thread count from 1 to the
default. Each figure is the median over rounds of the ratio, so a burst of load
from another process hits both sides of a ratio. Like STREAM results, the
figure is reported at the kernel's best thread count (which one is printed);
the default thread count's ratio is printed too. On a machine whose other cores
are busy, the extra threads of a statically split parallel loop wait for CPU
time, and one core may already saturate memory for a plain copy.

    python benchmarks/bandwidth.py [--quick]
"""
from __future__ import annotations

import sys

import numba
import numpy as np

import brrr
from brrr import kernels
from common import MIB, figure, median, rounds, show

TARGET = 0.9


def run(quick: bool = False) -> list:
    nbytes = (16 if quick else 256) * MIB
    n = nbytes // 4
    x = np.full(n, 1.5, np.float32)
    y = np.full(n, 0.5, np.float32)
    out = np.zeros(n, np.float32)
    copy_bytes, _ = kernels.traffic("copy", x)
    triad_bytes, _ = kernels.traffic("triad", x)
    default_threads = numba.get_num_threads()
    thread_counts = list(range(1, default_threads + 1))
    calls = {"copy": (kernels.copy, (x, out), copy_bytes),
             "triad": (kernels.triad, (x, y, 2.0, out), triad_bytes)}
    ratios = {(k, t): [] for k in calls for t in thread_counts}
    gbps = {(k, t): [] for k in calls for t in thread_counts}
    reference = []
    try:
        for _ in range(rounds(quick, full=5)):
            for threads in thread_counts:
                numba.set_num_threads(threads)
                ref = brrr.bench(np.copyto, out, x, nbytes=copy_bytes, budget=0.25, backend="cpu").gbps()
                reference.append(ref)
                for name, (fn, args, moved) in calls.items():
                    bw = brrr.bench(fn, *args, nbytes=moved, budget=0.25, backend="cpu").gbps()
                    gbps[name, threads].append(bw)
                    ratios[name, threads].append(bw / ref)
    finally:
        numba.set_num_threads(default_threads)
    out_figures = []
    for name in calls:
        by_threads = {t: median(ratios[name, t]) for t in thread_counts}
        best = max(by_threads, key=by_threads.get)
        value = by_threads[best]
        details = dict(array_mib=nbytes // MIB, dtype="float32", best_threads=best,
                       default_threads=default_threads,
                       ratio_by_threads={str(t): round(v, 3) for t, v in by_threads.items()},
                       kernel_gbps={str(t): round(median(gbps[name, t]), 2) for t in thread_counts},
                       copyto_gbps=round(median(reference), 2),
                       ratios_per_round={str(t): [round(v, 3) for v in ratios[name, t]]
                                         for t in thread_counts})
        out_figures.append(figure(
            "a", f"Numba {name} / np.copyto bandwidth, {nbytes // MIB} MiB, {best} thread(s)",
            value, target=f">= {TARGET}", passed=value >= TARGET, unit="x", **details))
        if best != default_threads:
            out_figures.append(figure(
                "a", f"  same at the default {default_threads} threads", by_threads[default_threads],
                unit="x", threads=default_threads))
    return out_figures


if __name__ == "__main__":
    show(run("--quick" in sys.argv))
