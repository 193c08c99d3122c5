"""The ``brrr`` command: ``brrr info``, ``brrr roofline``, ``brrr grade``.

    brrr info                                    device, backend, peaks and their source, versions
    brrr roofline [--quick] [--out PNG] [--json FILE]
                                                 measure this machine's roofline and draw it
    brrr grade EXERCISE SUBMISSION...            grade notebooks (see brrr.grade)
"""
from __future__ import annotations

import argparse
import os
import sys


def _rate(value, unit):
    from .plot import format_rate
    return format_rate(value, unit)


def cmd_info(args) -> int:
    """Print the live device, its peaks (with where they come from), caches and library versions."""
    from . import device as live_device
    from .plot import format_bytes
    from .results import versions
    dev = live_device()
    print(f"device     {dev.name}")
    print(f"backend    {dev.backend} (arrays: {dev.array_library})")
    if dev.backend == "cpu":
        print("           no CUDA GPU: every measurement runs on the CPU; peaks below are measured here")
    print(f"bandwidth  {_rate(dev.peak_bandwidth, 'B/s')}")
    for dtype, tc, label in (("float64", False, "FP64"), ("float32", False, "FP32"),
                             ("float32", True, "TF32 tensor"), ("float16", True, "FP16 tensor"),
                             ("bfloat16", True, "BF16 tensor")):
        if tc and not dev.has_tensor_cores(dtype):
            continue
        print(f"{label:<11}{_rate(dev.peak_flops(dtype, tc), 'FLOP/s')}")
    print(f"ridge      {dev.ridge:.3g} FLOP/byte (FP32 general math)")
    cache_name = "LLC" if dev.backend == "cpu" else "L2"
    print(f"{cache_name:<11}{format_bytes(dev.l2_bytes)}")
    if dev.sm_count:
        print(f"SMs        {dev.sm_count}")
    print(f"source     {dev.source}")
    print("versions   " + ", ".join(f"{k} {v}" for k, v in versions().items()))
    return 0


def _fail(message: str):
    """Exit like argparse does on bad arguments: usage-style message, status 2."""
    print(f"brrr roofline: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _check_writable(path, option):
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        _fail(f"{option} {path}: the folder {folder} does not exist")


def cmd_roofline(args) -> int:
    """Measure the bandwidth and compute roofs, draw them over the spec roof, save PNG/JSON."""
    for path, option in ((args.out, "--out"), (args.json, "--json")):
        if path:
            _check_writable(path, option)
    if args.out and not args.out.lower().endswith((".png", ".svg", ".pdf")):
        _fail(f"--out {args.out}: use a .png, .svg or .pdf file name")
    if args.quick:
        os.environ["BRRR_QUICK"] = "1"
    import matplotlib
    matplotlib.use("Agg")
    from . import Roofline, device as live_device
    from . import plot
    from .experiments.roofline import measure_roofline, measured_roofline
    dev = live_device()
    where = "the CPU" if dev.backend == "cpu" else dev.name
    print(f"brrr: measuring the roofline of {where}{' (quick mode)' if args.quick else ''}...")
    result = measure_roofline(quick=args.quick or None, progress=not args.no_progress)
    result.meta["command"] = "brrr " + " ".join(args.argv)
    measured = measured_roofline(result)
    spec = Roofline.from_device(dev)
    print(f"spec roof      {spec.peak_flops / 1e12:.4g} TFLOP/s, {spec.peak_bandwidth / 1e9:.4g} GB/s, "
          f"ridge {spec.ridge:.3g} FLOP/byte ({'measured once and cached' if dev.backend == 'cpu' else 'spec sheet'})")
    print(f"measured roof  {measured.peak_flops / 1e12:.4g} TFLOP/s, {measured.peak_bandwidth / 1e9:.4g} GB/s, "
          f"ridge {measured.ridge:.3g} FLOP/byte")
    from .prose.bandwidth import against_peaks
    print(f"               = {against_peaks(measured, spec, cpu=dev.backend == 'cpu')}")
    for rec in result.records:
        rate = (f"{rec['gbps']:.4g} GB/s" if rec["kind"] == "bandwidth"
                else f"{rec['gflops']:.4g} GFLOP/s")
        print(f"  {rec['kind']:<9} {rec['op']:<6} {rec['library']:<13} {rec['dtype']:<8} size {rec['size']:<10} "
              f"{rate}{'  (' + rec['warnings'] + ')' if rec.get('warnings') else ''}")
    for note in result.meta.get("notes", []):
        print(f"note: {note}")
    if args.json:
        result.to_json(args.json)
        print(f"wrote {args.json}")
    if args.out:
        fig = plot.roofline(spec, points=result, measured=result)
        plot.save(fig, args.out)
        print(f"wrote {args.out}")
    return 0


def cmd_grade(args) -> int:
    """Hand the arguments to brrr.grade.main (imported only now: it needs otter-grader)."""
    try:
        from . import grade
    except ImportError as error:
        print(f"brrr grade: grading is not available here ({error}). Install brrr with its grading "
              "extra from the repository: pip install -e '.[grading]' in a clone (the name 'brrr' "
              "on PyPI is another project)", file=sys.stderr)
        return 2
    return int(grade.main(args.rest) or 0)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="brrr", description="Deep-learning performance from first "
                                     "principles: this machine's device, peaks and roofline.")
    from . import __version__
    parser.add_argument("--version", action="version", version=f"brrr {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    info = sub.add_parser("info", help="device, backend, peaks (with sources), caches, versions")
    info.set_defaults(func=cmd_info)
    roof = sub.add_parser("roofline", help="measure this machine's roofline and draw it")
    roof.add_argument("--quick", action="store_true", help="smaller matmuls and fewer samples (seconds, not minutes)")
    roof.add_argument("--out", metavar="PNG", help="save the figure here (.png, .svg or .pdf)")
    roof.add_argument("--json", metavar="FILE", help="save the measurements here as JSON (re-plot with brrr.plot)")
    roof.add_argument("--no-progress", action="store_true", help="no progress bar")
    roof.set_defaults(func=cmd_roofline)
    grade = sub.add_parser("grade", help="grade exercise notebooks (needs otter-grader)", add_help=False)
    grade.add_argument("rest", nargs=argparse.REMAINDER)
    grade.set_defaults(func=cmd_grade)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``brrr`` console script and of ``python -m brrr``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["grade"]:  # brrr.grade parses its own options, --help included
        return cmd_grade(argparse.Namespace(rest=argv[1:]))
    args = build_parser().parse_args(argv)
    args.argv = argv
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
