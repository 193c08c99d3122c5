"""What a batch writes, and where it may: the CSV rows and totals, text made safe for them, the
guard on ``--out``, and the groups of copies its reasons flag."""
from __future__ import annotations

import csv
import hashlib
import os
from typing import Optional

from .exercise import MAX_NOTEBOOK_BYTES, Exercise, linked_component

FIELDS = ("submission", "question", "score", "possible", "status", "reason", "isolation")
TOTAL_FIELDS = ("submission", "score", "possible", "status", "isolation")   # the totals CSV
MAX_REASON_CHARS = 400            # of one row's reason: a submission can carry little out in it


def check_out(out: str, submissions: list, protected: tuple = ()) -> str:
    """``out`` as an absolute path, or ValueError when writing there could destroy something:
    a submission, a folder, a notebook, or a path inside any of the folders ``protected`` (the
    exercise folder actually used, see :func:`protected_folders`)."""
    path = os.path.abspath(out)
    real = os.path.realpath(path)
    for sub in submissions:
        if os.path.exists(sub) and os.path.exists(path) and os.path.samefile(sub, path) \
                or os.path.realpath(sub) == real:
            raise ValueError(f"out: {out!r} is one of the submissions; it would be overwritten")
    if os.path.isdir(path):
        raise ValueError(f"out: {out!r} is a folder; give a CSV file name")
    if not os.path.isdir(os.path.dirname(path)):
        raise ValueError(f"out: the folder of {out!r} does not exist")
    if path.endswith((".ipynb", ".zip", ".py")):
        raise ValueError(f"out: {out!r} looks like a notebook, zip or test; give a .csv file")
    for folder in protected:
        if real.startswith(os.path.realpath(folder) + os.sep):
            raise ValueError(f"out: {out!r} is inside {folder}, the exercise's files; write scores elsewhere")
    return path


def protected_folders(exercise: Exercise) -> tuple:
    """Folders no output may go into: the folder of the exercise actually used (where its
    autograder zip is), and when that folder sits in an ``exercises/`` folder, that folder and the
    ``solutions/`` beside it; the installed checkout's ``exercises/`` and ``solutions/`` too."""
    own = os.path.dirname(os.path.abspath(exercise.autograder))
    folders, parent = [own], os.path.dirname(own)
    if os.path.basename(parent) == "exercises":
        folders += [parent, os.path.join(os.path.dirname(parent), "solutions")]
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    folders += [os.path.join(checkout, "exercises"), os.path.join(checkout, "solutions")]
    return tuple(dict.fromkeys(folders))


def totals_path(out: str) -> str:
    """The CSV of one total per submission, beside ``out``: ``scores.csv`` -> ``scores-totals.csv``."""
    stem = out[:-4] if out.lower().endswith(".csv") else out
    return stem + "-totals.csv"


def safe_text(value) -> str:
    """``value`` as text that any CSV writer and console takes as it is: a lone surrogate or a
    name's undecodable byte written as a backslash escape, control characters (newlines that
    would start a fake line) as escapes too."""
    text = value if isinstance(value, str) else str(value)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def cut_reason(text: str) -> str:
    """``text`` cut to :data:`MAX_REASON_CHARS`, marked where it was cut."""
    return text if len(text) <= MAX_REASON_CHARS else text[:MAX_REASON_CHARS - 14] + " [cut short]"


def csv_cell(value):
    """``value`` as a CSV field a spreadsheet shows as text: one starting with = + - @ gets a
    leading single quote, so that it is never run as a formula. Numbers are kept."""
    if isinstance(value, str) and value.startswith(("=", "+", "-", "@")):
        return "'" + value
    return value


def open_csv(path: Optional[str], fields: tuple):
    """(file, csv writer) for ``path`` with its header written, or (None, None)."""
    if not path:
        return None, None
    handle = open(path, "w", newline="", encoding="utf-8")
    writer = csv.DictWriter(handle, fieldnames=fields)
    writer.writeheader()
    handle.flush()
    return handle, writer


def total_row(rows: list) -> dict:
    """One submission's rows summed: a row of TOTAL_FIELDS."""
    first = rows[0]
    return {"submission": first["submission"], "score": sum(r["score"] for r in rows),
            "possible": sum(r["possible"] for r in rows), "status": first["status"],
            "isolation": first["isolation"]}


def copy_groups(submissions: list) -> dict:
    """{path: [the other submissions with the same bytes]} for every submission that has a copy
    in the batch (links, unreadable or oversized files, and other spellings of its own path left out)."""
    by_digest = {}
    for path in dict.fromkeys(submissions):
        if linked_component(path) or not os.path.isfile(path) or os.path.getsize(path) > MAX_NOTEBOOK_BYTES:
            continue
        digest = _digest(path)
        if digest:
            by_digest.setdefault(digest, []).append(path)
    groups = {p: [o for o in group if file_identity(o) != file_identity(p)] for group in by_digest.values() for p in group}
    return {p: others for p, others in groups.items() if others}   # two spellings of one file are no copies


def file_identity(path: str):
    """What names one file however its path is spelled: (device, inode), or the absolute path
    where it cannot be read."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return os.path.normpath(os.path.abspath(path))
    return st.st_dev, st.st_ino


def copy_note(others: list) -> str:
    """The reason's note for a member of a copy group: every member gets one (who copied whom is
    not known), naming up to three of the others."""
    names = ", ".join(safe_text(o) for o in others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
    return f"a copy group: the same file content as {names}"


def _digest(path: str) -> str:
    """SHA-256 of a file's bytes, read in blocks ('' where it cannot be read)."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return ""
    return h.hexdigest()
