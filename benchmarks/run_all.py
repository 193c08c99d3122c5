"""Run every benchmark once and print its figures with targets; save them as JSON.

    python benchmarks/run_all.py            # the full run (a few minutes on 2 cores)
    python benchmarks/run_all.py --quick    # a smoke run: small arrays, short budgets

Figures (all measured in this one run, on this machine):
  (a) Numba copy and triad bandwidth as a fraction of np.copyto, 256 MiB    (target >= 0.9)
  (b) brrr.bench median vs torch.utils.benchmark blocked_autorange median  (within 5%)
  (c) fused vs unfused kernels.chain speed-up, n = 2, 4, 8, 2**26 float32  (>= 0.8 n)
  (d) the timer's floor on the CPU, both cache modes
  and, on a CUDA GPU, the same four for the GPU paths (benchmarks/gpu.py) and
  (e) torch.compile's modes on chapter 8's model: compile seconds and time per pass (compile_modes.py)

These are benchmarks, not tests: a MISS is reported, never raised. Timings on a
shared machine are noisy; the JSON keeps every round and the load average, and
a second run is the honest way to see the spread.
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and budgets (smoke run)")
    parser.add_argument("--out", help="JSON file to write (default: benchmarks/results/<date>.json)")
    args = parser.parse_args(argv)
    if args.quick:
        os.environ["BRRR_QUICK"] = "1"  # brrr.bench shortens its budgets

    import numba
    import brrr
    from brrr.device import provenance
    from brrr.results import Result
    import bandwidth
    import compile_modes
    import fusion
    import gpu
    import timer_floor
    import timer_vs_torch
    from common import show

    dev = brrr.device()
    print(f"brrr benchmarks on {dev.name} (backend {dev.backend}, Numba threads "
          f"{numba.get_num_threads()}){' [quick]' if args.quick else ''}; "
          f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    figures = []
    started = time.perf_counter()
    for module in (bandwidth, timer_vs_torch, fusion, timer_floor, gpu, compile_modes):  # the last two: CUDA only
        result = module.run(quick=args.quick)
        show(result)
        figures.extend(result)
    seconds = time.perf_counter() - started
    judged = [f for f in figures if f["passed"] is not None]
    passed = sum(f["passed"] for f in judged)
    print(f"{passed}/{len(judged)} figures meet their targets ({seconds:.0f} s; load average "
          f"after: {os.getloadavg()[0]:.2f})")

    command = "python benchmarks/run_all.py" + (" --quick" if args.quick else "")
    meta = provenance(command, quick=args.quick, numba_threads=numba.get_num_threads(),
                      seconds=round(seconds, 1), load_average_after=list(os.getloadavg()))
    path = args.out
    if path is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        path = os.path.join(HERE, "results", f"run_all{'-quick' if args.quick else ''}-{stamp}.json")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    Result(name="benchmarks", records=figures, meta=meta).to_json(path)
    print(f"results written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
