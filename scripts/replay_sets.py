"""Replay every chapter from record sets, without building the book: one executed notebook per
chapter and set, which keeps each sentence's claims and facts in its outputs' metadata.

    python scripts/replay_sets.py --set nvidia-h200 --set tests/data/records/quick/amd-epyc-2-threads \
        --out _build/sets [--chapters 02 08] [--jobs 2]

A set is a shipped set's name (``brrr/data/reference/<name>``) or a folder of records. Each
chapter runs in a fresh kernel with ``BRRR_REPLAY`` set to the set, errors allowed, and is written
to ``OUT/<label>/<chapter>.ipynb`` (the label is the folder's name). The tests read these
(``tests/chapter_claims.py``); a human reads them in Jupyter.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("0*.ipynb"))


def set_folder(name: str) -> Path:
    """The folder of set ``name``: a shipped set's name or a path."""
    if "/" in name or os.sep in name:
        return Path(name).resolve()
    return ROOT / "brrr" / "data" / "reference" / name


def is_quick(folder: Path) -> bool:
    """Whether the set in ``folder`` was recorded in quick mode (its records say so)."""
    import json
    first = min(folder.glob("*.json"))
    return bool(json.loads(first.read_text()).get("meta", {}).get("quick"))


def replay(chapter: Path, folder: Path, out: Path, timeout: int = 600) -> dict:
    """Execute ``chapter`` replayed from ``folder`` into ``out``; returns its label, seconds and errors."""
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(str(chapter), as_version=4)
    env = {**os.environ, "BRRR_REPLAY": str(folder), "MPLBACKEND": "module://matplotlib_inline.backend_inline",
           "BRRR_QUICK": "1" if is_quick(folder) else ""}     # a quick set replays the quick sizes
    started = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(chapter.parent)}}).execute(env=env)
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(out))
    errors = sum(1 for c in nb.cells if c.cell_type == "code"
                 and any(o.get("output_type") == "error" for o in c.get("outputs", [])))
    return {"chapter": chapter.stem, "seconds": time.perf_counter() - started, "errors": errors}


def replay_sets(sets, out, chapters=None, jobs: int = 2, labels=None) -> list:
    """Replay ``chapters`` (names like '02', default all) from each of ``sets`` into ``out/<label>``
    (``labels``: one per set; default each set's folder name), in one pool of ``jobs`` kernels."""
    chosen = [c for c in CHAPTERS if not chapters or any(c.stem.startswith(p) for p in chapters)]
    labels = labels or [set_folder(s).name for s in sets]
    work = [(c, set_folder(s), Path(out) / label / f"{c.stem}.ipynb") for s, label in zip(sets, labels) for c in chosen]

    def run(item):
        chapter, folder, target = item
        return {"set": folder.name, **replay(chapter, folder, target)}

    if jobs <= 1:
        return [run(item) for item in work]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(run, work))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", required=True, help="a shipped set's name or a folder")
    parser.add_argument("--out", default=str(ROOT / "_build" / "sets"))
    parser.add_argument("--chapters", nargs="*", default=None)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    failed = 0
    for r in replay_sets(args.set, args.out, args.chapters, args.jobs):
        print(f"{r['set']:32} {r['chapter']:36} {r['seconds']:6.1f} s  {r['errors']} cell error(s)")
        failed += r["errors"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
