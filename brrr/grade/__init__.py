"""Grade exercise notebooks, and set up the grader inside them.

* ``public_tests(stem)`` is called by the setup cell of every student notebook. It
  returns the folder holding the exercise's public tests, downloading them when the
  folder is missing, as on Colab.
* ``brrr grade EXERCISE [--out scores.csv] -- SUBMISSION...`` grades a batch
  (``brrr.grade.batch``): each submission runs in its own throwaway folder and sandbox
  (``brrr.grade.sandbox``), hands over its answers as data after every cell
  (``brrr.grade.runner``, ``brrr.grade.answers``), and is scored by a separate process
  with tests it never saw (``brrr.grade.score``, otter-grader's own test runner). One CSV
  row per submission and question (submission, question, score, possible, status, reason,
  isolation), and beside it ``<out>-totals.csv``, one row per submission (submission, score,
  possible, status, isolation).

The one risk that remains is the one otter documents for its own grading: a notebook's
answers are whatever its kernel hands over, so code that *computes* an answer by a trick
(reading a value it should have measured from elsewhere) is not detected by the tests.
"""
from __future__ import annotations

import argparse
import glob
import io
import os
import sys
import urllib.request
import zipfile
from typing import Optional

from . import sandbox
from .. import _release
from .batch import (DEFAULT_TIMEOUT, FIELDS, TOTAL_FIELDS, Stopped, grade, grade_one, prepare, safe_text,
                    summary, totals_path)
from .exercise import Exercise, find_exercise, is_untouched, linked_component, read_submission

# Public tests are downloaded from the release this library was built from, never from main.
REPOSITORY_RAW = _release.REPOSITORY.replace("https://github.com/", "https://raw.githubusercontent.com/") + "/" + _release.TAG
TESTS_ZIP = "tests.zip"           # the public tests, zipped, beside each student notebook
MANIFEST = "exercise.txt"         # in the tests folder and zip: the exercise they belong to


# --- inside a student notebook --------------------------------------------------

def public_tests(stem: str, tests_dir: str = "tests", url: Optional[str] = None) -> str:
    """Path of a folder holding exercise ``stem``'s public tests, fetched if missing.

    A folder counts only when its ``exercise.txt`` names ``stem`` (so a ``tests/`` folder
    left by another exercise is never used). ``tests_dir`` is used when it holds this
    exercise's tests (local Jupyter, a graded run); else ``<tests_dir>-<stem>`` from an
    earlier download; else ``url`` (default: the exercise's ``tests.zip`` in the
    repository) is downloaded into ``tests_dir`` when that does not exist yet, or into
    ``<tests_dir>-<stem>``. (otter-grader 7 cannot fetch tests on Colab itself: its
    ``tests_url_prefix`` works only on JupyterLite, and on Colab it needs a tests folder.)
    """
    if not isinstance(stem, str) or not stem.replace("_", "").isalnum():
        raise ValueError(f"stem must be an exercise name such as '01_compute', got {stem!r}")
    own = f"{tests_dir}-{stem}"
    for folder in (tests_dir, own):
        if _holds_tests_of(folder, stem):
            return folder
    target = own if os.path.exists(tests_dir) else tests_dir
    url = url or f"{REPOSITORY_RAW}/exercises/{stem}/{TESTS_ZIP}"
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            data = response.read()
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (OSError, zipfile.BadZipFile) as error:
        raise RuntimeError(
            f"The tests for {stem} are not in {tests_dir!r} and could not be downloaded from {url} "
            f"({error}). Download the folder exercises/{stem}/tests from the repository and put it "
            "beside this notebook.") from error
    names = [n for n in archive.namelist() if "/" not in n.strip("/")]
    if MANIFEST not in names or archive.read(MANIFEST).decode().strip() != stem:
        raise RuntimeError(f"{url} does not hold the tests of {stem}")
    os.makedirs(target, exist_ok=True)
    for name in names:
        if name.endswith(".py") or name == MANIFEST:
            with open(os.path.join(target, name), "wb") as f:
                f.write(archive.read(name))
    return target


def _holds_tests_of(folder: str, stem: str) -> bool:
    try:
        with open(os.path.join(folder, MANIFEST), encoding="utf-8") as f:
            named = f.read().strip()
    except OSError:
        return False
    return named == stem and bool(glob.glob(os.path.join(folder, "*.py")))


# --- the command line ------------------------------------------------------------

def _print_summary(path: str, rows: list) -> None:
    score = sum(r["score"] for r in rows)
    possible = sum(r["possible"] for r in rows)
    status = rows[0]["status"] if rows else "failed"
    print(f"{safe_text(path)}: {score:g} / {possible:g} ({status})")
    for r in rows:
        print(f"  {r['question']:>6}  {r['score']:g}/{r['possible']:g}  {r['reason']}")
    sys.stdout.flush()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="brrr grade",
        description="Grade exercise notebooks: each submission runs in its own sandbox and is "
                    "scored by a separate process with tests it never sees.",
        epilog="Exit status: 0 when every submission was graded (whatever the scores; a notebook "
               "stopped by a time limit is graded on the answers it gave before), 1 when some "
               "could not be graded, 2 for a usage error.")
    p.add_argument("exercise", help="exercise name (e.g. 01_compute), its exercises/ folder, "
                                    "or an otter autograder zip")
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="notebooks to grade")
    p.add_argument("--out", help="CSV file for the scores (one row per submission and question); the "
                                 "totals (one row per submission) go beside it, to OUT-totals.csv")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help=f"seconds allowed per notebook (default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--cell-timeout", type=float, default=None,
                   help="seconds one cell may run before the kernel is killed (the answers given "
                        "before it are still graded; default: half of --timeout)")
    p.add_argument("--isolation", default="auto", choices=("auto",) + sandbox.LEVELS,
                   help="where submissions run: bubblewrap (a namespace sandbox), none (plain "
                        f"processes with your permissions: needs {TRUST_FLAG} too); default: the "
                        "strongest available. Every CSV row records the level used")
    p.add_argument(TRUST_FLAG, action="store_true",
                   help="confirm --isolation none: every submission is code you trust")
    return p


TRUST_FLAG = "--trust-all-submissions"


def _files_read_as_options(argv: list) -> list:
    """Arguments before a ``--`` that start with '-' and name an existing file: a submission
    folder's file names, which a shell's ``*`` puts among the options."""
    head = argv[:argv.index("--")] if "--" in argv else argv
    return [a for a in head if a.startswith("-") and os.path.lexists(a)]


def main(argv=None) -> int:
    """``brrr grade``: see ``build_parser`` for the exit statuses."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    files = _files_read_as_options(argv)
    if files:
        print(f"brrr grade: error: {safe_text(files[0])} is a file, but it starts with '-' and would be read "
              "as an option: put -- before the submissions (brrr grade EXERCISE [options] -- FILE...)",
              file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if args.isolation == "none" and not args.trust_all_submissions:
        print(f"brrr grade: error: --isolation none runs every submission with your permissions; add "
              f"{TRUST_FLAG} to confirm", file=sys.stderr)
        return 2
    try:
        level = sandbox.level(args.isolation)
        print(sandbox.describe(level))
        print(sandbox.bounds(level))
        rows = grade(args.exercise, args.submissions, out=args.out, timeout=args.timeout,
                     cell_timeout=args.cell_timeout, isolation=level, progress=_print_summary)
    except (ValueError, RuntimeError) as error:
        print(f"brrr grade: error: {error}", file=sys.stderr)
        return 2
    except Stopped as stop:
        print(f"brrr grade: {stop}: the batch's private folder was removed and its processes killed",
              file=sys.stderr)
        return 128 + stop.signum
    counts = summary(rows)
    print(f"{sum(counts.values())} submission(s): " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    if args.out:
        print(f"wrote {len(rows)} rows to {safe_text(args.out)} and {len(args.submissions)} totals to "
              f"{safe_text(totals_path(args.out))}")
    return 1 if counts["failed"] else 0


__all__ = ["public_tests", "grade", "grade_one", "prepare", "summary", "main", "find_exercise",
           "Exercise", "read_submission", "is_untouched", "FIELDS", "TOTAL_FIELDS", "DEFAULT_TIMEOUT",
           "totals_path", "linked_component"]
