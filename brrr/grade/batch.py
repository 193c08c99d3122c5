"""Grade a batch of submissions: one throwaway folder and process tree per submission.

For each submission the grader (this process) puts the notebook and the exercise's public
tests, nothing else, in a fresh folder; runs it from there (``brrr.grade.runner``: the kernel
sandboxed in a size-limited folder of its own, one snapshot of answers after every cell);
kills whatever it left running; then
scores the last snapshot in a separate process (``brrr.grade.score``) with the hidden tests,
which only ever exist in the grader's private batch folder. Scores are clamped to the points
the exercise offers. A submission that cannot be read, hangs or crashes gets rows with a
reason; the batch always goes on.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import Optional

from .. import config
from ..units import format_bytes
from . import cgroup, limits, sandbox
from .exercise import Exercise, find_exercise, is_untouched, linked_component, read_submission
from .report import (FIELDS, MAX_REASON_CHARS, TOTAL_FIELDS, check_out, copy_groups, copy_note, csv_cell,  # noqa: F401
                     cut_reason, file_identity, open_csv, protected_folders, safe_text, total_row, totals_path)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
DEFAULT_TIMEOUT = 600.0           # seconds per notebook
SCORE_TIMEOUT = 300.0             # seconds for the scorer of one submission
STATUSES = ("graded", "timed out", "failed")
LOG_TAIL_BYTES = 64 << 10         # of a runner's log read for the reason it failed


@dataclass
class Batch:
    """What every submission of one batch shares (decided once, before any submission runs)."""
    exercise: Exercise
    folder: str          # the grader's private folder: hidden tests, device record, runs
    tests: str           # hidden + public tests, extracted from the autograder
    device_record: str   # JSON file of the device peaks measured once for the batch
    peaks_cache: str     # brrr's CPU-peaks cache from that measurement (copied to each run)
    level: str
    timeout: float
    cell_timeout: float


def _positive_seconds(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite positive number of seconds, got {value!r}")
    return float(value)


DEVICE_DIR_ENV = "BRRR_GRADE_DEVICE_DIR"   # a folder that keeps the measurement for later batches


def _measure_device(folder: str) -> tuple:
    """Measure the device once for the batch, in a fresh process with an empty peaks cache.
    Where ``BRRR_GRADE_DEVICE_DIR`` names a folder (the instructor's, or a test session's), the
    first batch of each mode (``BRRR_QUICK`` or not) measures into it and later batches on this
    machine copy that measurement."""
    kept = os.environ.get(DEVICE_DIR_ENV, "").strip()
    if kept:
        # one measurement per mode: kernels read the peaks cache of their own (quick or full) mode
        kept = os.path.join(kept, "quick" if config.quick_mode() else "full")
        if not os.path.isfile(os.path.join(kept, "device.json")):
            os.makedirs(kept, exist_ok=True)
            _measure_into(kept)
        shutil.copytree(kept, folder, dirs_exist_ok=True)
        os.chmod(folder, 0o700)       # copytree gave it the kept folder's mode
        return os.path.join(folder, "device.json"), os.path.join(folder, "cache")
    return _measure_into(folder)


def _measure_into(folder: str) -> tuple:
    cache = os.path.join(folder, "cache")
    record = os.path.join(folder, "device.json")
    code = ("import json, sys; from brrr.device import device; from brrr.grade.context import describe; "
            "json.dump(describe(device()), open(sys.argv[1], 'w'))")
    env = dict(os.environ, BRRR_CACHE_DIR=cache)
    proc = subprocess.run([sys.executable, "-c", code, record], env=env, capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0 or not os.path.isfile(record):
        raise RuntimeError(f"could not measure this device for the batch: {proc.stderr.strip()[-300:]}")
    return record, cache


def prepare(exercise: str, timeout: float = DEFAULT_TIMEOUT, cell_timeout: Optional[float] = None,
            isolation: str = "auto") -> Batch:
    """Validate the options, pick the isolation level, unpack the tests and measure the device."""
    timeout = _positive_seconds("timeout", timeout)
    cell_timeout = timeout / 2 if cell_timeout is None else _positive_seconds("cell_timeout", cell_timeout)
    if cell_timeout > timeout:
        raise ValueError(f"cell_timeout ({cell_timeout:g} s) must not exceed timeout ({timeout:g} s)")
    ex = find_exercise(exercise)
    level = sandbox.level(isolation)
    folder = tempfile.mkdtemp(prefix="brrr-grade-")     # mode 0700: only this user reads the tests
    try:
        tests = ex.extract_tests(os.path.join(folder, "hidden"))
        record, cache = _measure_device(folder)
        os.chmod(folder, 0o700)         # a kept measurement's copy brings its folder's mode along
    except BaseException:
        limits.remove_tree(folder)
        raise
    return Batch(ex, folder, tests, record, cache, level, timeout, cell_timeout)


def _safe_name(path: str) -> str:
    base = os.path.basename(path)
    keep = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in base).lstrip(".")
    return keep if keep.endswith(".ipynb") else (keep or "submission") + ".ipynb"


def _run(batch: Batch, nb: dict, submission: str, run_dir: str) -> tuple:
    """Execute the notebook in a fresh folder; return (status dict, snapshot path, timed out).
    Its files go to ``seed``, which the runner copies into ``work``: at the bubblewrap level a
    size-limited tmpfs only the runner and its kernel see (the host's ``work`` stays empty).
    The runner and its kernel run in a cgroup of their own where one can be made
    (``brrr.grade.cgroup``); an out-of-memory kill there is the status's ``over_limit``."""
    seed, work, out = (os.path.join(run_dir, name) for name in ("seed", "work", "out"))
    for folder in (seed, work, out):
        os.makedirs(folder)
    notebook = os.path.join(seed, _safe_name(submission))
    with open(notebook, "w", encoding="utf-8") as f:
        json.dump(nb, f)
    if batch.exercise.public_tests:
        shutil.copytree(batch.exercise.public_tests, os.path.join(seed, "tests"))
    if os.path.isdir(batch.peaks_cache):
        shutil.copytree(batch.peaks_cache, os.path.join(seed, ".cache"))
    identity = limits.sandbox_id()      # this submission's own user under a root grader
    import psutil
    spare = {p.pid for p in psutil.Process().children()}
    command = sandbox.own_folder([sys.executable, "-m", "brrr.grade.runner", notebook, work, out,
                                  repr(batch.cell_timeout), batch.level, str(identity), seed], work, out,
                                 batch.level, identity)
    timed_out = False
    group = cgroup.Group(cgroup.available())

    def start():
        group.join()
        limits.limit_trusted_memory()

    child = None
    try:
        with open(os.path.join(out, "log.txt"), "w", encoding="utf-8", errors="replace") as log:
            child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=out,
                                     start_new_session=True, preexec_fn=start)
            try:
                child.wait(timeout=batch.timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:          # also when the grader is stopped: the group is removed once it is empty
        if child is not None and child.poll() is None:
            child.kill()
            child.wait()
        sandbox.kill_descendants(spare=spare)
        out_of_memory = group.oom_kills() > 0
        group.remove()
    status = {}
    try:
        with open(os.path.join(out, "status.json"), encoding="utf-8") as f:
            status = json.load(f)
    except (OSError, ValueError):
        pass
    if child.returncode not in (0, None) and not timed_out:
        with open(os.path.join(out, "log.txt"), "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - LOG_TAIL_BYTES))    # the tail only
            lines = f.read().decode("utf-8", errors="replace").splitlines()
            tail = [line for line in lines if line.strip()][-1:]
        status["runner_error"] = tail[0][:200] if tail else f"exit status {child.returncode}"
    if out_of_memory and not status.get("over_limit"):
        status["over_limit"] = (f"it used more than {format_bytes(limits.MEMORY_BYTES)} of memory (its processes "
                                "and the files it kept in memory)")
    return status, os.path.join(out, "snapshot.json"), timed_out


def _score(batch: Batch, snapshot: str, run_dir: str) -> tuple:
    """Scores from the scorer process: ({question: info}, problem or "")."""
    result = os.path.join(run_dir, "result.json")
    env = dict(os.environ, BRRR_GRADER_DEVICE=batch.device_record, BRRR_CACHE_DIR=batch.peaks_cache)
    try:
        proc = subprocess.run([sys.executable, "-m", "brrr.grade.score", batch.tests, snapshot, result],
                              env=env, capture_output=True, text=True, timeout=SCORE_TIMEOUT, cwd=run_dir,
                              preexec_fn=limits.limit_trusted_memory)
    except subprocess.TimeoutExpired:
        return {}, f"the checks ran past {SCORE_TIMEOUT:g} s"
    try:
        with open(result, encoding="utf-8") as f:
            questions = json.load(f)["questions"]
        if not isinstance(questions, dict):
            raise ValueError("questions is not a mapping")
    except (OSError, ValueError, KeyError, TypeError) as error:
        tail = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        return {}, f"the scorer gave no result ({type(error).__name__}; {tail[:200]})"
    return questions, ""


def _rows(submission: str, batch: Batch, status: str, scores: dict, reason_of) -> list:
    """One row per question of the exercise, scores clamped to what it offers, all text safe."""
    out = []
    for q, possible in batch.exercise.questions().items():
        score = scores.get(q, 0.0)
        score = min(max(float(score), 0.0), possible) if isinstance(score, (int, float)) \
            and not isinstance(score, bool) and math.isfinite(score) else 0.0
        out.append({"submission": safe_text(submission), "question": q, "score": score + 0.0, "possible": possible,
                    "status": status, "reason": cut_reason(safe_text(reason_of(q))), "isolation": batch.level})
    return out


def grade_one(submission: str, batch: Batch) -> list:
    """Rows (dicts with FIELDS) for one submission; never raises for a bad submission."""
    def rows(status: str, scores: dict, reason_of) -> list:
        return _rows(submission, batch, status, scores, reason_of)

    link = linked_component(submission)
    if link:
        return rows("failed", {}, lambda q: f"not graded: {link} is a symbolic link (give the notebook "
                                            "file itself, on a path without links)")
    if not os.path.isfile(submission):
        return rows("failed", {}, lambda q: "not graded: no such file")
    nb, problem = read_submission(submission)
    if nb is None:
        return rows("failed", {}, lambda q: f"not graded: {problem}")
    untouched = is_untouched(nb, batch.exercise.blank)
    run_dir = tempfile.mkdtemp(prefix="run-", dir=batch.folder)
    try:
        status, snapshot, whole_timeout = _run(batch, nb, submission, run_dir)
        graded, problem = _score(batch, snapshot, run_dir)
    finally:
        limits.remove_tree(run_dir)
    cell_timeout = status.get("timed_out")
    notes = []
    if whole_timeout:
        notes.append(f"the notebook ran past {batch.timeout:g} s and was stopped; answers given "
                     "before that were graded")
    if cell_timeout:
        notes.append(f"cell {cell_timeout['cell']} ran past {batch.cell_timeout:g} s and the kernel was "
                     "killed; answers given before it were graded")
    if status.get("over_limit"):
        notes.append(f"{status['over_limit']}, so the kernel was killed; answers given before that were graded")
    elif status.get("kernel_died"):
        notes.append("the kernel died; answers given before that were graded")
    if status.get("runner_error"):
        notes.append(f"the run failed ({status['runner_error']})")
    errors = status.get("errors", [])
    if problem or status.get("runner_error"):  # not scored, or the notebook never ran in full
        state = "failed"
    elif whole_timeout or cell_timeout:
        state = "timed out"
    else:
        state = "graded"

    def reason(q: str) -> str:
        parts = ["untouched blank: no answer cell was changed"] if untouched else []
        if problem:
            return "; ".join(parts + [f"not graded: {problem}"] + notes)
        info = graded.get(q) if isinstance(graded.get(q), dict) else None
        failed = info.get("failed") if info else None
        if info is None:
            parts.append("no result for this question (its check never ran)")
        elif failed:
            parts.append(f"{len(failed)} of {info.get('cases', '?')} test cases failed: "
                         + "; ".join(str(f) for f in failed))
        else:
            parts.append(f"all {info.get('cases', '?')} test cases passed")
        if info is None or failed:
            parts += notes
            if errors:
                parts.append(f"{status.get('error_count', len(errors))} cell error(s), first: {errors[0]}")
        return "; ".join(parts)

    scores = {q: info.get("score", 0.0) for q, info in graded.items() if isinstance(info, dict)}
    return rows(state, scores, reason)


class Stopped(BaseException):
    """The grader was sent SIGTERM or SIGHUP: the batch stops, its private folder is removed."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def _raise_stopped(signum, frame):
    for s in STOP_SIGNALS:     # a second signal must not cut the cleanup short
        signal.signal(s, signal.SIG_IGN)
    raise Stopped(signum)


def _on_stop_signals(handler) -> dict:
    """Install ``handler`` for SIGTERM and SIGHUP (main thread only); the handlers it replaced."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {s: signal.signal(s, handler) for s in STOP_SIGNALS}


def grade(exercise: str, submissions: list, out: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT,
          cell_timeout: Optional[float] = None, isolation: str = "auto", progress=None) -> list:
    """Grade ``submissions`` against ``exercise``; rows are appended to CSV ``out`` as they come,
    and one total per submission to :func:`totals_path` of it. SIGTERM or SIGHUP stops the
    batch (:class:`Stopped`) after removing its private folder and killing what it started."""
    if not submissions or isinstance(submissions, str):
        raise ValueError("submissions: give a list of at least one notebook to grade")
    if out:
        protected = protected_folders(find_exercise(exercise))
        out = check_out(out, submissions, protected)
        check_out(totals_path(out), submissions, protected)
    previous = _on_stop_signals(_raise_stopped)
    batch = None
    handles = []
    try:
        batch = prepare(exercise, timeout, cell_timeout, isolation)
        sandbox.become_subreaper()
        groups = copy_groups(submissions)
        handle, writer = open_csv(out, FIELDS)
        totals_handle, totals = open_csv(out and totals_path(out), TOTAL_FIELDS)
        handles = [h for h in (handle, totals_handle) if h]
        all_rows = []
        for path in submissions:
            try:
                rows = grade_one(path, batch)
            except Exception as error:  # noqa: BLE001 - one submission never stops the batch
                why = f"not graded: the grader failed on this submission ({type(error).__name__}: {str(error)[:200]})"
                rows = _rows(path, batch, "failed", {}, lambda q: why)
            if groups.get(path):
                for r in rows:
                    r["reason"] = cut_reason(r["reason"] + "; " + copy_note(groups[path]))
            all_rows.extend(rows)
            if writer:
                writer.writerows({k: csv_cell(v) for k, v in r.items()} for r in rows)
                totals.writerow({k: csv_cell(v) for k, v in total_row(rows).items()})
                for h in handles:
                    h.flush()
            if progress:
                progress(path, rows)
        return all_rows
    finally:
        for h in handles:
            h.close()
        if batch is not None:
            sandbox.kill_descendants()
            limits.remove_tree(batch.folder)
        _restore_signals(previous)


def _restore_signals(previous: dict) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def summary(rows: list) -> dict:
    """Submissions counted by status: {'graded': n, 'timed out': n, 'failed': n}; a file given twice,
    or by two spellings of its path, counts once (with the status of its first rows)."""
    status = {}
    for r in rows:
        status.setdefault(file_identity(r["submission"]), r["status"])
    return {s: sum(1 for v in status.values() if v == s) for s in STATUSES}
