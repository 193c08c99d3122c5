"""(a)-(d) on a CUDA GPU: the same four questions, asked of the GPU paths.

Runs only where ``brrr.device()`` is a CUDA GPU driven by CuPy (run_all.py calls it
then; elsewhere it returns no figures).

(a) CuPy ``kernels.copy`` / ``kernels.triad`` bandwidth as a fraction of CuPy's
    own ``cupy.copyto``, 1 GiB float32 arrays (far beyond any L2), L2 flushed
    before every sample; the fraction of the spec-sheet bandwidth is printed too.
    Target >= 0.9.
(b) ``brrr.bench`` median against ``triton.testing.do_bench`` (which also flushes
    L2 and uses CUDA events) and ``torch.utils.benchmark.Timer.blocked_autorange``
    (no flush; synchronises around blocks of calls) on one workload: a torch copy
    of 1 GiB, so caches cannot matter and launch overhead is negligible.
    Target: within 5%.
(c) fused vs unfused ``kernels.chain`` at 2**26 float32, n = 2, 4, 8. Target >= 0.8 n.
(d) the timer's floor on the GPU: an empty call timed in each mode.

    python benchmarks/gpu.py [--quick]
"""
from __future__ import annotations

import sys

import brrr
from brrr import kernels
from common import MIB, figure, median, rounds, show


def run(quick: bool = False) -> list:
    dev = brrr.device()
    if dev.backend != "cuda" or dev.array_library != "cupy":
        return []
    import cupy as cp
    out = []
    nbytes = (64 if quick else 1024) * MIB
    x = cp.full(nbytes // 4, 1.5, cp.float32)
    y = cp.full_like(x, 0.5)
    z = cp.zeros_like(x)

    # (a) brrr's CuPy kernels against cupy.copyto.
    copy_bytes, _ = kernels.traffic("copy", x)
    triad_bytes, _ = kernels.traffic("triad", x)
    ratios = {"copy": [], "triad": []}
    gbps = {"copy": [], "triad": [], "cupy.copyto": []}
    for _ in range(rounds(quick, full=5)):
        ref = brrr.bench(cp.copyto, z, x, nbytes=copy_bytes, budget=0.2).gbps()
        gbps["cupy.copyto"].append(ref)
        for name, fn, args, moved in (("copy", kernels.copy, (x, z), copy_bytes),
                                      ("triad", kernels.triad, (x, y, 2.0, z), triad_bytes)):
            bw = brrr.bench(fn, *args, nbytes=moved, budget=0.2).gbps()
            gbps[name].append(bw)
            ratios[name].append(bw / ref)
    for name in ("copy", "triad"):
        value = median(ratios[name])
        out.append(figure("a", f"CuPy {name} / cupy.copyto bandwidth, {nbytes // MIB} MiB", value,
                          target=">= 0.9", passed=value >= 0.9, unit="x",
                          kernel_gbps=median(gbps[name]), copyto_gbps=median(gbps["cupy.copyto"]),
                          ratios_per_round=[round(r, 4) for r in ratios[name]]))
        out.append(figure("a", f"  {name} as a fraction of the spec's {dev.peak_bandwidth / 1e9:.0f} GB/s",
                          median(gbps[name]) * 1e9 / dev.peak_bandwidth, unit="x"))

    # (b) brrr.bench against Triton's do_bench and torch's Timer on one torch copy.
    import torch
    src = torch.full((nbytes // 4,), 1.5, device="cuda")
    dst = torch.zeros_like(src)
    copy = lambda: dst.copy_(src)  # noqa: E731
    from torch.utils.benchmark import Timer
    try:
        from triton.testing import do_bench
    except ImportError:
        do_bench = None
    anchors = {"triton.testing.do_bench": [], "torch Timer": []}
    ours = []
    for _ in range(rounds(quick, full=5)):
        ours.append(brrr.bench(copy, budget=0.2).median)
        if do_bench is not None:  # milliseconds, L2 flushed before each call, CUDA events
            anchors["triton.testing.do_bench"].append(do_bench(copy, warmup=25, rep=200, return_mode="median") * 1e-3)
        anchors["torch Timer"].append(
            Timer("copy()", globals={"copy": copy}).blocked_autorange(min_run_time=0.2).median)
    for name, values in anchors.items():
        if values:
            value = median(ours) / median(values)
            out.append(figure("b", f"brrr.bench / {name} median, torch copy {nbytes // MIB} MiB", value,
                              target="within 5% of 1", passed=abs(value - 1) <= 0.05, unit="x",
                              brrr_median_s=median(ours), anchor_median_s=median(values)))

    # (c) fused against unfused chains.
    size = 2 ** (22 if quick else 26)
    a, b, scratch = (cp.full(size, 1.5, cp.float32) for _ in range(3))
    for n in (2, 4, 8):
        speedups = []
        for _ in range(rounds(quick, full=5)):
            fused = brrr.bench(kernels.chain, a, n, "mul", True, b, budget=0.1).median
            unfused = brrr.bench(kernels.chain, a, n, "mul", False, b, None, None, scratch,
                                 budget=0.1).median
            speedups.append(unfused / fused)
        value = median(speedups)
        out.append(figure("c", f"GPU chain n={n}: unfused / fused time, 2^{size.bit_length() - 1} float32",
                          value, target=f">= {0.8 * n:.1f} (0.8 n)", passed=value >= 0.8 * n, unit="x",
                          speedups_per_round=[round(s, 3) for s in speedups]))

    # (d) the floor in each mode.
    for mode, options in (("flush", {}), ("hot", {"cache": "hot"}), ("graph", {"cuda_graph": True})):
        t = brrr.bench(lambda: None, **options) if mode != "graph" else \
            brrr.bench(kernels.copy, x[:1024], z[:1024], **options)
        out.append(figure("d", f"GPU timer floor, mode '{mode}'", t.floor * 1e9, unit="ns",
                          median_ns=t.median * 1e9, calls_per_sample=t.calls_per_sample))
    return out


if __name__ == "__main__":
    show(run("--quick" in sys.argv))
