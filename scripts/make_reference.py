"""Record every measurement of the book on this machine, as a shipped reference set: ``brrr record`` into
``<out>/<device>/`` (default ``brrr/data/reference/<device>/``).

    python scripts/make_reference.py                     # all chapters, full size
    python scripts/make_reference.py --chapters 02 07    # some of them
    BRRR_QUICK=1 python scripts/make_reference.py --out tests/data/records/quick

Every measurement is declared once in ``brrr.registry`` and made in this one process, no notebook; a record
already in the folder is kept (delete the folder to measure everything again). A reference is a full-size
measurement: quick mode (``BRRR_QUICK=1``) may only write elsewhere (the tests keep a quick set). Run it on a
quiet machine; it prints each measurement's and each chapter's seconds.
"""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from brrr import cli, device, reference  # noqa: E402
from brrr.registry.record import slug  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(reference.REFERENCE_DIR),
                        help="folder for <device>/<experiment>.json (default: brrr/data/reference)")
    parser.add_argument("--chapters", nargs="*", default=None, help="chapter numbers, e.g. 02 07 (default: all)")
    args = parser.parse_args(argv)
    folder = Path(args.out).resolve() / slug(device().name)
    return cli.main(["record", "--out", str(folder)] + (["--chapters", *args.chapters] if args.chapters else []))


if __name__ == "__main__":
    sys.exit(main())
