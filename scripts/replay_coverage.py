"""Which of the book's measurements (brrr.registry) a record set can replay, and which it lacks.

    python scripts/replay_coverage.py                 # the newest GPU set
    python scripts/replay_coverage.py nvidia-h100-80gb-hbm3
    python scripts/replay_coverage.py ./my-gpu        # a folder brrr record wrote
    python scripts/replay_coverage.py --newest        # print the newest GPU set's name only

Every measurement of a chapter goes through ``brrr.reference.measure(NAME)``; a replayed build
(``BRRR_REPLAY=<set>``) returns the set's record of NAME, and a page says so where the set has none.
This lists, per chapter, the names the set lacks (exit status 0 either way).
"""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from brrr import reference, registry  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set", nargs="?", help="record set (a folder of brrr/data/reference); default: the newest GPU set")
    parser.add_argument("--newest", action="store_true", help="print the newest GPU set's name and stop")
    args = parser.parse_args(argv)
    sets = reference.record_sets()
    newest = reference.newest_gpu_set(sets)
    if args.newest:
        print(newest)
        return 0
    name = args.set or newest
    if "/" in name:                                      # a folder of records, a reader's own
        from brrr.record_check import check_set
        sets[name] = check_set(name)
    if name not in sets:
        parser.error(f"no record set {name!r}; have {', '.join(sorted(sets))} (or give a folder: ./my-gpu)")
    have, declared = sets[name], registry.registry()
    missing_total = 0
    print(f"record set {name}: {len(have)} records")
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        names = [m.name for m in declared.values() if m.chapter == path.stem[:2]]
        missing = [n for n in names if n not in have]
        missing_total += len(missing)
        print(f"  {path.stem}: {len(names) - len(missing)} of {len(names)} measurements recorded"
              + (f"; no record of: {', '.join(missing)}" if missing else ""))
    print(f"  {missing_total} of {len(declared)} measurements lack a record: `brrr record` on that device makes "
          "those it can (not a GPU's on a CPU, nor one a chapter reads from another measurement there)"
          if missing_total else "  every measurement has a record")
    return 0


if __name__ == "__main__":
    sys.exit(main())
