"""Measure this machine by executing the chapters, and save every result they draw as reference.

    python scripts/make_reference.py                     # all chapters, full size
    python scripts/make_reference.py --chapters 02 07    # some of them
    BRRR_QUICK=1 python scripts/make_reference.py --out tests/data/records/cpu-quick

Each chapter notebook runs in a fresh kernel in chapters/ (as the book build runs
it) with ``BRRR_RECORD`` set, so every ``brrr.reference.measure(name, ...)`` call in
it saves that live result as ``<out>/<device>/<experiment>.json``: a brrr Result
marked ``reference: true``, with the device, the date, the library versions and
this command. The default ``--out`` is the folder brrr ships
(``brrr/data/reference``), which the chapters draw beside every live run. A
reference is a full-size measurement: quick mode (``BRRR_QUICK=1``) may only
write elsewhere (the tests keep a quick set to check the prose against).

Run it on a quiet machine; it prints each chapter's time (the chapters' own
full-mode execution times on this device).
"""
import argparse
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import brrr  # noqa: E402
from brrr import reference  # noqa: E402


GPU_BOOK_SECONDS = 400   # every chapter in one sitting on an H100 or H200 (the sum of the chapter times)


def slug(name: str) -> str:
    """A folder name for a device: lower case, letters, digits and dashes."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def run_chapter(path: Path, env: dict, timeout: int) -> float:
    """Execute one notebook in chapters/ with ``env`` added; returns the seconds it took."""
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(str(path), as_version=4)
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    start = time.perf_counter()
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(reference.REFERENCE_DIR),
                        help="folder for <device>/<experiment>.json (default: brrr/data/reference)")
    parser.add_argument("--chapters", nargs="*", default=None,
                        help="chapter numbers or names to run, e.g. 02 07 (default: all)")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds allowed per cell")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    if brrr.quick_mode() and out == reference.REFERENCE_DIR.resolve():
        parser.error("reference results are full-mode measurements: unset BRRR_QUICK, or pass --out")
    chapters = sorted((ROOT / "chapters").glob("*.ipynb"))
    if args.chapters:
        chapters = [c for c in chapters if any(c.stem.startswith(a) for a in args.chapters)]
        if not chapters:
            parser.error(f"no chapter matches {args.chapters}")
    dev = brrr.device()
    folder = out / slug(dev.name)
    command = "python scripts/make_reference.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if brrr.quick_mode():
        command = "BRRR_QUICK=1 " + command
    env = {reference.RECORD_ENV: str(folder), reference.COMMAND_ENV: command.strip()}
    print(f"Recording on {dev.name} ({dev.backend}) into {folder}")
    total = 0.0
    for path in chapters:
        seconds = run_chapter(path, env, args.timeout)
        total += seconds
        print(f"  {path.stem}: {seconds:.0f} s")
    budget = f" (the book's budget on a GPU: {GPU_BOOK_SECONDS} s)" if dev.on_gpu else ""
    print(f"  all chapters: {total:.0f} s{budget}")
    saved = {path.stem: brrr.results.Result.load(str(path)) for path in sorted(folder.glob("*.json"))}
    for name, result in saved.items():
        print(f"  {folder.name}/{name}.json: {result}")
    took = sorted(((r.meta.get("run_seconds") or 0.0, name) for name, r in saved.items()), reverse=True)
    print("Slowest measurements (seconds, warm-up and compiling included):")
    for seconds, name in took[:10]:
        print(f"  {seconds:7.1f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
