"""Grade exercise notebooks with otter-grader, and set up the grader inside them.

Two jobs, both thin layers over otter-grader 7 (no grading logic of our own):

* ``public_tests(stem)`` is called by the setup cell of every student notebook. It
  returns the folder holding the exercise's public tests, downloading them (a small
  zip from the repository) when the folder is missing, as on Colab. The notebook
  then builds ``otter.Notebook(tests_dir=...)`` itself, so it works whatever the
  browser renamed the file to.
* ``main(argv)`` is ``brrr grade EXERCISE SUBMISSION... [--out scores.csv]``. Each
  submission is graded by otter (``otter.api.grade_submission``: otter run, no
  Docker) in its own subprocess with a time limit, and one CSV row per submission
  and question is written as soon as that submission is done: submission,
  question, score, possible, reason. A submission that raises, hangs, is not valid
  JSON or is the untouched blank gets the score it earned (zero where nothing
  ran) and a reason; the batch goes on.

Student code runs with the grader's permissions: grade untrusted work in a
container (otter's Docker grading, or Gradescope with the autograder zip).
"""
from __future__ import annotations

import argparse
import csv
import glob
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass
from typing import Optional

REPOSITORY_RAW = "https://raw.githubusercontent.com/brrr-book/brrr/main"
TESTS_ZIP = "tests.zip"           # the public tests, zipped, beside each student notebook
AUTOGRADER_SUFFIX = "-autograder.zip"
FIELDS = ("submission", "question", "score", "possible", "reason")
DEFAULT_TIMEOUT = 600.0           # seconds per notebook
ANSWER_TAG = "otter_answer_cell"  # otter assign tags the cells students fill in


# --- inside a student notebook --------------------------------------------------

def public_tests(stem: str, tests_dir: str = "tests", url: Optional[str] = None) -> str:
    """Path of the folder with exercise ``stem``'s public tests, fetched if missing.

    ``tests_dir`` is used as it is when it holds test files (local Jupyter, or a
    graded run, where otter supplies the tests). Otherwise ``url`` (default: the
    exercise's ``tests.zip`` in the repository) is downloaded and unpacked there.
    """
    if not isinstance(stem, str) or not stem:
        raise ValueError(f"stem must be an exercise name such as '01_compute', got {stem!r}")
    if glob.glob(os.path.join(tests_dir, "*.py")):
        return tests_dir
    url = url or f"{REPOSITORY_RAW}/exercises/{stem}/{TESTS_ZIP}"
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            data = response.read()
    except OSError as error:
        raise RuntimeError(
            f"The tests for {stem} are not in {tests_dir!r} and could not be downloaded from {url} "
            f"({error}). Download the folder exercises/{stem}/tests from the repository and put it "
            "beside this notebook.") from error
    os.makedirs(tests_dir, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for name in archive.namelist():
            if name.endswith(".py") and "/" not in name.strip("/"):
                with open(os.path.join(tests_dir, name), "wb") as f:
                    f.write(archive.read(name))
    return tests_dir


# --- finding the exercise --------------------------------------------------------

@dataclass
class Exercise:
    """An exercise to grade against: its autograder zip, and its blank notebook if known."""
    name: str
    autograder: str
    blank: Optional[str] = None
    _questions: Optional[dict] = None

    def questions(self) -> dict:
        """Question name -> points possible, read from the tests in the autograder zip."""
        from otter.nbmeta_config import NBMetadataConfig
        from otter.test_files import create_test_file
        if self._questions is not None:
            return dict(self._questions)
        points = {}
        with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(self.autograder) as archive:
            for name in sorted(archive.namelist()):
                if name.startswith("tests/") and name.endswith(".py"):
                    path = os.path.join(tmp, os.path.basename(name))
                    with open(path, "wb") as f:
                        f.write(archive.read(name))
                    test = create_test_file(path, NBMetadataConfig())
                    points[test.name] = float(test.possible)
        self._questions = points
        return dict(points)


def _repository_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_exercise(exercise: str) -> Exercise:
    """Resolve EXERCISE: an autograder zip, an exercise folder, or a name like '01_compute'."""
    if not isinstance(exercise, str) or not exercise:
        raise ValueError(f"exercise must be a name, folder or autograder zip, got {exercise!r}")
    if exercise.endswith(".zip"):
        if not os.path.isfile(exercise):
            raise ValueError(f"exercise: no autograder zip at {exercise!r}")
        folder = os.path.dirname(os.path.abspath(exercise))
        return Exercise(_stem_of_zip(exercise), os.path.abspath(exercise), _blank_in(folder))
    candidates = [exercise] if os.path.isdir(exercise) else [
        os.path.join("exercises", exercise), os.path.join(_repository_root(), "exercises", exercise)]
    for folder in candidates:
        zips = sorted(glob.glob(os.path.join(folder, "*" + AUTOGRADER_SUFFIX)))
        if zips:
            blank = _blank_in(folder)
            return Exercise(_stem_of_zip(zips[0]), os.path.abspath(zips[0]),
                            os.path.abspath(blank) if blank else None)
    raise ValueError(f"exercise: found no '*{AUTOGRADER_SUFFIX}' for {exercise!r} (looked in "
                     f"{', '.join(candidates)}); pass a name like '01_compute', an exercises/ "
                     "folder or the autograder zip itself")


def _stem_of_zip(path: str) -> str:
    name = os.path.basename(path)
    return name[: -len(AUTOGRADER_SUFFIX)] if name.endswith(AUTOGRADER_SUFFIX) else name[:-4]


def _blank_in(folder: str) -> Optional[str]:
    notebooks = sorted(glob.glob(os.path.join(folder, "*.ipynb")))
    return notebooks[0] if len(notebooks) == 1 else None


# --- checks made before running anything -----------------------------------------

def _answers(nb: dict) -> list:
    """The source of every answer cell, in order."""
    out = []
    for cell in nb.get("cells", []):
        if ANSWER_TAG in cell.get("metadata", {}).get("tags", []):
            source = cell.get("source", "")
            out.append("".join(source) if isinstance(source, list) else source)
    return out


def read_submission(path: str):
    """The submission as a dict, or (None, reason) when it is not a readable notebook."""
    try:
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
    except (OSError, UnicodeDecodeError) as error:
        return None, f"could not read the file: {error}"
    except json.JSONDecodeError as error:
        return None, f"not valid JSON (a corrupt or truncated notebook): {error}"
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return None, "valid JSON but not a notebook (no list of cells)"
    try:
        import nbformat
        nbformat.validate(nbformat.from_dict(nb))
    except Exception as error:  # nbformat raises several kinds of errors
        return None, f"not a valid notebook: {str(error).splitlines()[0]}"
    return nb, ""


def is_untouched(nb: dict, blank_path: Optional[str]) -> bool:
    """True when every answer cell still reads as in the blank exercise."""
    if blank_path is None:
        return False
    with open(blank_path, encoding="utf-8") as f:
        blank = json.load(f)
    mine, theirs = _answers(nb), _answers(blank)
    return bool(theirs) and [s.strip() for s in mine] == [s.strip() for s in theirs]


# --- grading one notebook (in a child process) ------------------------------------

def _grade_here(submission: str, autograder: str, out: str, cell_timeout: Optional[float]) -> None:
    """Grade one submission with otter in this process and write a JSON summary to ``out``."""
    if cell_timeout:
        _limit_cells(cell_timeout)
    from otter.api import grade_submission
    results = grade_submission(submission, autograder, quiet=True)
    summary = {"questions": {}, "errors": _cell_errors(results.notebook)}
    for name, test in results.results.items():
        failed = []
        for r in test.test_case_results:
            if not r.passed:
                label = r.test_case.name or getattr(r.test_case.body, "test_func", None)
                label = getattr(label, "__name__", label) or "a test case"
                detail = [line for line in r.message.splitlines() if line.strip()][-1:]
                failed.append(f"{label}" + (f" ({detail[0].strip()})" if detail else ""))
        summary["questions"][name] = {"score": float(test.score), "possible": float(test.possible),
                                      "failed": failed, "cases": len(test.test_case_results)}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(summary, f)


def _limit_cells(seconds: float) -> None:
    """Make otter's notebook execution interrupt any cell that runs past ``seconds`` and go on."""
    import nbconvert.preprocessors as pre
    base = pre.ExecutePreprocessor

    class CellLimitedExecutePreprocessor(base):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.timeout = int(max(1, seconds))
            self.interrupt_on_timeout = True

    pre.ExecutePreprocessor = CellLimitedExecutePreprocessor


def _cell_errors(nb) -> list:
    """'ErrorName: message' for every cell of the executed notebook that raised."""
    errors = []
    for cell in (nb or {}).get("cells", []):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            if output.get("output_type") == "error":
                errors.append(f"{output.get('ename')}: {output.get('evalue', '')}"[:200])
    return errors


def grade_one(submission: str, exercise: Exercise, timeout: float = DEFAULT_TIMEOUT,
              cell_timeout: Optional[float] = None) -> list:
    """Rows (dicts with FIELDS) for one submission; never raises for a bad submission."""
    questions = exercise.questions()

    def rows(scores: dict, reason_of) -> list:
        return [{"submission": submission, "question": q, "score": scores.get(q, 0.0),
                 "possible": float(p), "reason": reason_of(q)} for q, p in questions.items()]

    nb, problem = read_submission(submission)
    if nb is None:
        return rows({}, lambda q: f"not graded: {problem}")
    untouched = is_untouched(nb, exercise.blank)
    if cell_timeout is None:
        cell_timeout = timeout / 2

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        command = [sys.executable, "-m", "brrr.grade", "--one", os.path.abspath(submission),
                   os.path.abspath(exercise.autograder), out, str(cell_timeout)]
        log_path = os.path.join(tmp, "log.txt")
        with open(log_path, "w+", encoding="utf-8", errors="replace") as log:
            child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=tmp,
                                     start_new_session=True)
            try:
                child.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(child)
                return rows({}, lambda q: f"timed out after {timeout:g} s: the notebook did not finish "
                                          "(nothing graded; look for a cell that never ends)")
            log.seek(0)
            tail = [line for line in log.read().splitlines() if line.strip()][-1:]
        if child.returncode != 0 or not os.path.isfile(out):
            why = tail[0][:200] if tail else f"exit status {child.returncode}"
            return rows({}, lambda q: f"not graded: otter failed on this notebook ({why})")
        with open(out, encoding="utf-8") as f:
            result = json.load(f)

    graded = result["questions"]
    errors = result["errors"]

    def reason(q: str) -> str:
        parts = []
        if untouched:
            parts.append("untouched blank: no answer cell was changed")
        info = graded.get(q)
        if info is None:
            parts.append("no result for this question (its check never ran)")
        elif info["failed"]:
            parts.append(f"{len(info['failed'])} of {info['cases']} test cases failed: "
                         + "; ".join(info["failed"]))
        else:
            parts.append(f"all {info['cases']} test cases passed")
        if errors and (info is None or info["failed"]):
            timeouts = [e for e in errors if "KeyboardInterrupt" in e or "Timeout" in e]
            if timeouts:
                parts.append(f"a cell ran past {cell_timeout:g} s and was interrupted")
            parts.append(f"{len(errors)} cell(s) raised, first: {errors[0]}")
        return "; ".join(parts)

    scores = {q: info["score"] for q, info in graded.items()}
    return rows(scores, reason)


def _kill_group(child: subprocess.Popen) -> None:
    """End the grading process and everything it started (the kernel), by process group."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        child.kill()
    child.wait()


# --- the command line ------------------------------------------------------------

def grade(exercise: str, submissions: list, out: Optional[str] = None,
          timeout: float = DEFAULT_TIMEOUT, cell_timeout: Optional[float] = None,
          progress=None) -> list:
    """Grade ``submissions`` against ``exercise``; rows are appended to CSV ``out`` as they come."""
    if not submissions:
        raise ValueError("submissions: give at least one notebook to grade")
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    ex = find_exercise(exercise)
    all_rows = []
    handle = open(out, "w", newline="", encoding="utf-8") if out else None
    try:
        writer = csv.DictWriter(handle, fieldnames=FIELDS) if handle else None
        if writer:
            writer.writeheader()
            handle.flush()
        for path in submissions:
            if not os.path.isfile(path):
                rows = [{"submission": path, "question": q, "score": 0.0, "possible": float(p),
                         "reason": "not graded: no such file"} for q, p in ex.questions().items()]
            else:
                rows = grade_one(path, ex, timeout=timeout, cell_timeout=cell_timeout)
            all_rows.extend(rows)
            if writer:
                writer.writerows(rows)
                handle.flush()
            if progress:
                progress(path, rows)
    finally:
        if handle:
            handle.close()
    return all_rows


def _print_summary(path: str, rows: list) -> None:
    score = sum(r["score"] for r in rows)
    possible = sum(r["possible"] for r in rows)
    print(f"{path}: {score:g} / {possible:g}")
    for r in rows:
        print(f"  {r['question']:>6}  {r['score']:g}/{r['possible']:g}  {r['reason']}")
    sys.stdout.flush()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="brrr grade",
        description="Grade exercise notebooks with otter-grader (otter run, no Docker). Student "
                    "code runs unsandboxed: grade untrusted work in a container or on Gradescope.")
    p.add_argument("exercise", help="exercise name (e.g. 01_compute), its exercises/ folder, "
                                    "or an otter autograder zip")
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="notebooks to grade")
    p.add_argument("--out", help="CSV file for the scores (one row per submission and question)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help=f"seconds allowed per notebook (default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--cell-timeout", type=float, default=None,
                   help="seconds before one cell is interrupted and grading goes on "
                        "(default: half of --timeout)")
    return p


def main(argv=None) -> int:
    """``brrr grade``: returns 0 when every submission was graded (whatever the scores)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--one"]:  # internal: grade one notebook in this (child) process
        submission, autograder, out, cell_timeout = argv[1:5]
        _grade_here(submission, autograder, out, float(cell_timeout) or None)
        return 0
    args = build_parser().parse_args(argv)
    try:
        rows = grade(args.exercise, args.submissions, out=args.out, timeout=args.timeout,
                     cell_timeout=args.cell_timeout, progress=_print_summary)
    except ValueError as error:
        print(f"brrr grade: error: {error}", file=sys.stderr)
        return 2
    if args.out:
        print(f"wrote {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
