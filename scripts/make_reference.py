"""Measure this machine in full mode and save reference results for the published book.

    python scripts/make_reference.py            # writes book/reference/<device>/*.json

Each file is a brrr.Result marked ``reference: true`` whose meta names the device,
the date, the library versions and this command. The appendix page
"Reference measurements" draws every file it finds there, labelled as reference.
Run it on a quiet machine: nothing else should be using the CPU or GPU.
"""
import argparse
import os
import re
import sys

import brrr
from brrr import experiments

SWEEPS = {
    "roofline": experiments.measure_roofline,
    "bandwidth_vs_size": experiments.bandwidth_vs_size,
    "matmul_vs_size": experiments.matmul_vs_size,
    "pointwise_repeat_sweep": experiments.pointwise_repeat_sweep,
}


def slug(name: str) -> str:
    """A folder name for a device: lower case, letters, digits and dashes."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join("book", "reference"),
                        help="folder for the JSON files (default: book/reference)")
    parser.add_argument("--only", nargs="*", choices=sorted(SWEEPS), help="run only these sweeps")
    args = parser.parse_args(argv)
    if brrr.quick_mode():
        parser.error("reference results are full-mode measurements: unset BRRR_QUICK")
    dev = brrr.device()
    folder = os.path.join(args.out, slug(dev.name))
    os.makedirs(folder, exist_ok=True)
    command = "python scripts/make_reference.py " + " ".join(argv if argv is not None else sys.argv[1:])
    for name in args.only or SWEEPS:
        result = SWEEPS[name]()
        result.meta.update(reference=True, command=command.strip())
        path = result.to_json(os.path.join(folder, f"{name}.json"))
        print(f"{path}: {result}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
