"""The ``brrr`` command: ``brrr info``, ``brrr roofline``, ``brrr record``, ``brrr grade``.

    brrr info [--json] [--refresh]               device, backend, peaks and their source, versions
    brrr roofline [--quick] [--out PNG] [--json FILE]
                                                 measure this machine's roofline and draw it
    brrr record [--out DIR] [--chapters NN...] [--quick]
                                                 make every measurement of the book here, into one set
    brrr record --check DIR                      check a record set before anything reads it
    brrr grade EXERCISE [options] -- SUBMISSION...  grade notebooks (see brrr.grade)

Exit statuses are listed in ``EXIT_STATUSES`` (shown by ``brrr --help``).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from .results import ran_on_cpu

DEBUG_ENV = "BRRR_DEBUG"

EXIT_STATUSES = f"""\
exit status:
  0    success
  1    a command failed: an error (one line on stderr), or for 'brrr grade' some
       submission could not be graded (see brrr grade --help)
  2    bad usage: unknown command or option, missing or invalid argument
  130  interrupted (Ctrl-C)

Set {DEBUG_ENV}=1 to get the Python traceback instead of the one-line error."""

# The peak FLOP/s rows of `brrr info`: (dtype, tensor cores?, JSON key, text label).
# Tensor-core rows appear only where the device has tensor cores for that dtype.
_FLOPS_ROWS = (("float64", False, "float64", "FP64"), ("float32", False, "float32", "FP32"),
               ("float32", True, "float32_tensor", "TF32 tensor"),
               ("float16", True, "float16_tensor", "FP16 tensor"),
               ("bfloat16", True, "bfloat16_tensor", "BF16 tensor"))

INFO_JSON_KEYS = """\
--json prints one JSON object:
  brrr_version                brrr's version
  device                      the device's name
  backend                     'cuda' or 'cpu'
  array_library               'cupy', 'torch' or 'numpy'
  peak_bandwidth_bytes_per_s  DRAM bandwidth, bytes/s
  peak_flops_per_s            FLOP/s by dtype: float64, float32 and, where the
                              GPU has tensor cores, float32_tensor (TF32),
                              float16_tensor, bfloat16_tensor
  ridge_flop_per_byte         FP32 general-math ridge point, FLOP/byte
  last_level_cache_bytes      the GPU's L2 or the CPU's last-level cache, bytes
  sm_count                    streaming multiprocessors (null on the CPU)
  peaks_source                where the peak figures come from
  versions                    {library: version}"""


def _rate(value, unit):
    from .units import format_rate
    return format_rate(value, unit)


def device_info(dev) -> dict:
    """What ``brrr info`` shows, as plain data: keys and units as in ``INFO_JSON_KEYS``."""
    from . import __version__
    from .results import versions
    return {
        "brrr_version": __version__,
        "device": dev.name,
        "backend": dev.backend,
        "array_library": dev.array_library,
        "peak_bandwidth_bytes_per_s": dev.peak_bandwidth,
        "peak_flops_per_s": {key: dev.peak_flops(dtype, tc) for dtype, tc, key, _ in _FLOPS_ROWS
                             if not tc or dev.has_tensor_cores(dtype)},
        "ridge_flop_per_byte": dev.ridge,
        "last_level_cache_bytes": dev.l2_bytes,
        "sm_count": dev.sm_count or None,
        "peaks_source": dev.source,
        "versions": versions(),
    }


def print_info(info: dict) -> None:
    """Print ``device_info``'s data as the aligned text of ``brrr info``."""
    from .units import format_bytes
    print(f"device     {info['device']}")
    print(f"backend    {info['backend']} (arrays: {info['array_library']})")
    if ran_on_cpu(info):
        print("           no CUDA GPU: every measurement runs on the CPU; peaks below are measured here")
    print(f"bandwidth  {_rate(info['peak_bandwidth_bytes_per_s'], 'B/s')}")
    labels = {key: label for _, _, key, label in _FLOPS_ROWS}
    for key, flops in info["peak_flops_per_s"].items():
        print(f"{labels[key]:<11}{_rate(flops, 'FLOP/s')}")
    print(f"ridge      {info['ridge_flop_per_byte']:.3g} FLOP/byte (FP32 general math)")
    cache_name = "LLC" if ran_on_cpu(info) else "L2"
    print(f"{cache_name:<11}{format_bytes(info['last_level_cache_bytes'])}")
    if info["sm_count"]:
        print(f"SMs        {info['sm_count']}")
    print(f"source     {info['peaks_source']}")
    print("versions   " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()))


def cmd_info(args) -> int:
    """Print the live device, its peaks (with where they come from), caches and library versions.

    ``--refresh`` detects the device again and re-measures peaks not from a spec sheet."""
    from . import device
    if not args.json:
        print_info(device_info(device(refresh=args.refresh)))
        return 0
    with contextlib.redirect_stdout(sys.stderr):  # progress notes must not mix into the JSON
        info = device_info(device(refresh=args.refresh))
    print(json.dumps(info, indent=2))
    return 0


def _fail(message: str, command: str = "roofline"):
    """Exit like argparse does on bad arguments: usage-style message, status 2."""
    print(f"brrr {command}: error: {message}", file=sys.stderr)
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
        os.environ["BRRR_QUICK"] = "1"   # the edge: set before anything reads it, for this process
        from . import config
        config.reread()
    import matplotlib
    matplotlib.use("Agg")
    from . import Roofline, device as live_device
    from . import plot
    from .experiments.roofline import measure_roofline, measured_roofline
    dev = live_device()
    where = "the CPU" if not dev.on_gpu else dev.name
    print(f"brrr: measuring the roofline of {where}{' (quick mode)' if args.quick else ''}...")
    result = measure_roofline(quick=args.quick or None, progress=not args.no_progress)
    result.meta["command"] = "brrr " + " ".join(args.argv)
    measured = measured_roofline(result)
    spec = Roofline.from_device(dev)
    print(f"spec roof      {spec.peak_flops / 1e12:.4g} TFLOP/s, {spec.peak_bandwidth / 1e9:.4g} GB/s, "
          f"ridge {spec.ridge:.3g} FLOP/byte ({'measured once and cached' if not dev.on_gpu else 'spec sheet'})")
    print(f"measured roof  {measured.peak_flops / 1e12:.4g} TFLOP/s, {measured.peak_bandwidth / 1e9:.4g} GB/s, "
          f"ridge {measured.ridge:.3g} FLOP/byte")
    from .prose.bandwidth import against_peaks
    print(f"               {against_peaks(measured, spec, cpu=not dev.on_gpu)}")
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


def cmd_record(args) -> int:
    """Record every measurement of the book on this machine (:mod:`brrr.registry.record`), or with ``--check DIR``
    check a record set (:mod:`brrr.record_check`): a refused set is an error naming the file and the field."""
    if args.check:
        from .record_check import check_set
        runs = check_set(args.check)
        device = next(iter(runs.values())).meta["device"]
        dates = sorted(str(r.meta["date"])[:10] for r in runs.values())
        print(f"{args.check}: {len(runs)} records of {device['name']} ({device['backend']}), measured "
              f"{dates[0]}{' to ' + dates[-1] if dates[-1] != dates[0] else ''}: every file checked, none refused")
        return 0
    from . import config
    if args.quick:
        os.environ["BRRR_QUICK"] = "1"   # before anything reads it, for this process
        config.reread()
    from .device import device
    from .reference import REFERENCE_DIR
    from .registry.record import record, slug
    out = os.path.abspath(args.out or slug(device().name))
    if config.quick_mode() and os.path.dirname(out) == os.path.abspath(REFERENCE_DIR):
        _fail("the shipped reference sets are full-size measurements: pass --out another folder in quick mode",
              "record")
    command = ("BRRR_QUICK=1 " if config.quick_mode() and not args.quick else "") + "brrr " + " ".join(args.argv)
    outcome = record(out, args.chapters, command=command)
    return 1 if "failed" in outcome.values() else 0


def cmd_grade(args) -> int:
    """Hand the arguments to brrr.grade.main (imported only now: it needs otter-grader)."""
    try:
        from . import grade
    except ImportError as error:
        print(f"brrr grade: grading is not available here ({error}): install brrr's grading "
              "extra, e.g. pip install -e '.[grading]' in a clone of the repository", file=sys.stderr)
        return 2
    return int(grade.main(args.rest) or 0)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="brrr", description="Deep-learning performance from first "
                                     "principles: this machine's device, peaks\nand roofline.",
                                     epilog=EXIT_STATUSES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    from . import __version__
    parser.add_argument("--version", action="version", version=f"brrr {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    info = sub.add_parser("info", help="device, backend, peaks (with sources), caches, versions",
                          description="Print the live device, its peak bandwidth and FLOP/s (and where "
                                      "they come from),\nits last-level cache and the library versions.",
                          epilog=INFO_JSON_KEYS, formatter_class=argparse.RawDescriptionHelpFormatter)
    info.add_argument("--json", action="store_true", help="print the same data as one JSON object on "
                      "stdout (keys and units below)")
    info.add_argument("--refresh", action="store_true", help="measure the CPU's peaks again instead of "
                      "reading them from the cache (~/.cache/brrr or $BRRR_CACHE_DIR); a known GPU's "
                      "peaks come from its spec sheet")
    info.set_defaults(func=cmd_info)
    roof = sub.add_parser("roofline", help="measure this machine's roofline and draw it",
                          description="Measure this machine's bandwidth and compute roofs and draw them "
                                      "over the spec (or cached CPU) roof.")
    roof.add_argument("--quick", action="store_true", help="smaller matmuls and fewer samples (seconds, not minutes)")
    roof.add_argument("--out", metavar="PNG", help="save the figure here (.png, .svg or .pdf)")
    roof.add_argument("--json", metavar="FILE", help="save the measurements here as JSON (re-plot with brrr.plot)")
    roof.add_argument("--no-progress", action="store_true", help="no progress bar")
    roof.set_defaults(func=cmd_roofline)
    record = sub.add_parser("record", help="make every measurement of the book here, into one record set; or "
                            "check a record set", description="Make every measurement of the book (brrr.registry) on "
                            "this machine, one process, no notebook,\ninto a record set the book can replay "
                            "(BRRR_REPLAY=DIR). With --check, check a record set\nfrom anyone: plain *.json files "
                            "only, sizes bounded, schema and provenance, times and\nrates within the device's "
                            "physics.", formatter_class=argparse.RawDescriptionHelpFormatter)
    record.add_argument("--out", metavar="DIR", help="the record set's folder (default: the device's name, "
                        "e.g. ./nvidia-h200); records already there are kept, so a cut run resumes")
    record.add_argument("--chapters", nargs="+", metavar="NN", help="only these chapters, e.g. 01 08")
    record.add_argument("--quick", action="store_true", help="quick mode: small sizes, short budgets")
    record.add_argument("--check", metavar="DIR", help="record nothing: check the record set in DIR")
    record.set_defaults(func=cmd_record)
    grade = sub.add_parser("grade", help="grade exercise notebooks (needs otter-grader; "
                           "brrr grade --help for its options)", add_help=False)
    grade.add_argument("rest", nargs=argparse.REMAINDER)
    grade.set_defaults(func=cmd_grade)
    return parser


def _one_line(error: BaseException) -> str:
    """The error as one line; its type is named where the message alone may be unclear."""
    message = " ".join(str(error).split())
    if isinstance(error, (OSError, ValueError, RuntimeError)) and message:
        return message  # these read as sentences ("[Errno 2] No such file or directory: 'x'")
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _debug() -> bool:
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


def main(argv=None) -> int:
    """Entry point of the ``brrr`` console script and of ``python -m brrr``; returns the exit status.

    Usage errors exit with status 2 (argparse's SystemExit passes through); any other error
    prints one line on stderr and returns 1, Ctrl-C returns 130; BRRR_DEBUG=1 re-raises both.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    prog = "brrr"
    try:
        if argv[:1] == ["grade"]:  # brrr.grade parses its own options, --help included
            prog = "brrr grade"
            return cmd_grade(argparse.Namespace(rest=argv[1:]))
        args = build_parser().parse_args(argv)
        args.argv = argv
        prog = f"brrr {args.command}"
        return args.func(args)
    except BrokenPipeError:  # the reader stopped early (brrr info | head): nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no 2nd error at exit
        return 1
    except KeyboardInterrupt:
        if _debug():
            raise
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        if _debug():
            raise
        print(f"{prog}: error: {_one_line(error)} (set {DEBUG_ENV}=1 for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
