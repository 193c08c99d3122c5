#!/usr/bin/env python
"""Regenerate exercises/ from the otter-assign masters in solutions/, byte for byte.

For every master ``solutions/<stem>/<stem>.ipynb`` this runs ``otter assign`` (otter-grader 7)
into a temporary folder and writes, under ``exercises/<stem>/``:

* ``<stem>.ipynb``          the student notebook (no solutions, no hidden tests);
* ``tests/q*.py``           its public tests (what ``grader.check`` runs), and
                            ``tests/exercise.txt`` naming the exercise they belong to;
* ``tests.zip``             the same tests zipped, which the setup cell downloads on Colab;
* ``<stem>-autograder.zip`` otter's autograder (public and hidden tests) for ``brrr grade``
                            (otter run) and for Gradescope.

otter gives cells random ids and stamps the zip's name and entries with the time, so the
output is normalised: cell ids are derived from the stem and position, volatile metadata is
dropped, JSON is written in one fixed layout and zips get fixed dates and order. Running the
script twice gives identical files.

    python scripts/build_exercises.py            # rewrite exercises/
    python scripts/build_exercises.py --check    # exit 1 if exercises/ is stale
    python scripts/build_exercises.py 01_compute # only some stems
"""
from __future__ import annotations

import argparse
import filecmp
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOLUTIONS = os.path.join(ROOT, "solutions")
EXERCISES = os.path.join(ROOT, "exercises")
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
EXECUTABLE = {"run_autograder", "setup.sh"}
MANIFEST = "exercise.txt"   # beside the public tests: the stem they belong to


def otter_binary() -> str:
    """The otter next to this Python (the project's .venv), else the one on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "otter")
    found = here if os.path.isfile(here) else shutil.which("otter")
    if not found:
        raise SystemExit("otter not found: install otter-grader[grading]==7.0.0 (requirements.txt)")
    return found


def masters(stems=None) -> list:
    """(stem, path) of each master notebook, sorted; ``stems`` limits the list."""
    found = []
    for path in sorted(glob.glob(os.path.join(SOLUTIONS, "*", "*.ipynb"))):
        stem = os.path.basename(os.path.dirname(path))
        if os.path.basename(path) == f"{stem}.ipynb" and (not stems or stem in stems):
            found.append((stem, path))
    missing = set(stems or ()) - {s for s, _ in found}
    if missing:
        raise SystemExit(f"no master notebook for: {', '.join(sorted(missing))}")
    return found


def normalise_notebook(path: str, stem: str) -> bytes:
    """The notebook with deterministic cell ids, no outputs or counts, in one JSON layout."""
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    for i, cell in enumerate(nb["cells"]):
        cell["id"] = f"{stem.replace('_', '-')}-{i:03d}"
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        for key in ("execution", "collapsed", "scrolled", "ExecuteTime"):
            cell.get("metadata", {}).pop(key, None)
    nb["metadata"].pop("widgets", None)
    nb["metadata"].setdefault("language_info", {"name": "python"})
    nb["metadata"]["language_info"] = {"name": "python"}
    nb["nbformat"], nb["nbformat_minor"] = 4, 5
    return (json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def deterministic_zip(dest: str, files: dict) -> None:
    """Write ``files`` (archive name -> bytes) to ``dest`` with fixed dates and order."""
    with zipfile.ZipFile(dest, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = ((0o755 if os.path.basename(name) in EXECUTABLE else 0o644) << 16)
            info.create_system = 3
            archive.writestr(info, files[name])


def run_assign(stem: str, master: str, result: str) -> str:
    """``otter assign`` ``master`` into the folder ``result``; returns ``result``.

    ``result/student`` holds the student notebook and public tests, ``result/autograder``
    the solution notebook (``<stem>.ipynb``, solutions in, tests out) and the zip.
    """
    proc = subprocess.run([otter_binary(), "assign", "--no-run-tests", "--no-pdfs", master, result],
                          cwd=os.path.dirname(master), capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"otter assign failed for {stem}:\n{proc.stdout}\n{proc.stderr}")
    return result


def solution_notebooks(out_dir: str, stems=None) -> dict:
    """Write each exercise's solved notebook to ``out_dir/<stem>/<stem>.ipynb``; stem -> path.

    These are what otter assign calls the autograder notebook: the student notebook with
    the solutions filled in (no test code). Tests grade them; the instructor book shows them.
    """
    paths = {}
    for stem, master in masters(stems):
        with tempfile.TemporaryDirectory() as tmp:
            result = run_assign(stem, master, os.path.join(tmp, "dist"))
            os.makedirs(os.path.join(out_dir, stem), exist_ok=True)
            path = os.path.join(out_dir, stem, f"{stem}.ipynb")
            with open(path, "wb") as f:
                f.write(normalise_notebook(os.path.join(result, "autograder", f"{stem}.ipynb"), stem))
            paths[stem] = path
    return paths


def build_one(stem: str, master: str, dest: str) -> None:
    """Run otter assign on ``master`` and write the normalised exercise into ``dest``."""
    with tempfile.TemporaryDirectory() as tmp:
        result = run_assign(stem, master, os.path.join(tmp, "dist"))
        student = os.path.join(result, "student")
        zips = glob.glob(os.path.join(result, "autograder", "*-autograder_*.zip"))
        if len(zips) != 1:
            raise SystemExit(f"{stem}: expected one autograder zip from otter assign, found {zips}")

        shutil.rmtree(os.path.join(dest, "tests"), ignore_errors=True)
        os.makedirs(os.path.join(dest, "tests"))
        with open(os.path.join(dest, f"{stem}.ipynb"), "wb") as f:
            f.write(normalise_notebook(os.path.join(student, f"{stem}.ipynb"), stem))
        # MANIFEST names the exercise, so brrr.grade.public_tests never uses another's tests
        public = {MANIFEST: f"{stem}\n".encode()}
        with open(os.path.join(dest, "tests", MANIFEST), "wb") as f:
            f.write(public[MANIFEST])
        for path in sorted(glob.glob(os.path.join(student, "tests", "*.py"))):
            with open(path, "rb") as f:
                public[os.path.basename(path)] = f.read()
            with open(os.path.join(dest, "tests", os.path.basename(path)), "wb") as f:
                f.write(public[os.path.basename(path)])
        deterministic_zip(os.path.join(dest, "tests.zip"), public)
        with zipfile.ZipFile(zips[0]) as archive:
            entries = {n: archive.read(n) for n in archive.namelist() if not n.endswith("/")}
        deterministic_zip(os.path.join(dest, f"{stem}-autograder.zip"), entries)


def build(out_dir: str, stems=None) -> list:
    built = []
    for stem, master in masters(stems):
        dest = os.path.join(out_dir, stem)
        if os.path.isdir(dest):
            shutil.rmtree(dest)
        build_one(stem, master, dest)
        built.append(stem)
    return built


def differences(a: str, b: str) -> list:
    """Relative paths that differ between folder trees ``a`` and ``b``."""
    def files(top):
        return {os.path.relpath(p, top) for p in glob.glob(os.path.join(top, "**", "*"), recursive=True)
                if os.path.isfile(p) and "__pycache__" not in p and ".ipynb_checkpoints" not in p}
    fa, fb = files(a), files(b)
    diff = sorted((fa ^ fb))
    diff += sorted(p for p in fa & fb if not filecmp.cmp(os.path.join(a, p), os.path.join(b, p), shallow=False))
    return diff


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("stems", nargs="*", help="exercise stems to build (default: all)")
    p.add_argument("--check", action="store_true",
                   help="build into a temporary folder and exit 1 if exercises/ differs")
    args = p.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            built = build(tmp, args.stems or None)
            stale = []
            for stem in built:
                stale += [f"exercises/{stem}/{d}" for d in
                          differences(os.path.join(tmp, stem), os.path.join(EXERCISES, stem))]
            if not args.stems:  # exercises without a master are stale too
                extra = {os.path.basename(d) for d in glob.glob(os.path.join(EXERCISES, "*"))
                         if os.path.isdir(d)} - set(built)
                stale += [f"exercises/{e}/ (no master in solutions/)" for e in sorted(extra)]
        if stale:
            print("exercises/ is stale; run `make exercises` (python scripts/build_exercises.py):")
            for s in stale:
                print("  " + s)
            return 1
        print(f"exercises/ is up to date ({len(built)} exercises)")
        return 0
    built = build(EXERCISES, args.stems or None)
    print(f"built {len(built)} exercises into exercises/: {', '.join(built)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
