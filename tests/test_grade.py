"""brrr grade: options, batches that never abort, and submissions that attack the grader.

A toy exercise (tests/grading_toy.py) keeps these fast; the real exercises are graded in
tests/test_exercises.py. The attack tests run at the strongest isolation level this machine
offers; bubblewrap is required on CI (.ci/run installs it), skipped elsewhere without it.
"""
import csv
import hashlib
import json
import math
import os
import time

import psutil
import pytest

from brrr import config
from brrr import grade as g
from brrr.grade import batch as batch_module
from brrr.grade import sandbox
from grading_toy import CORRECT, SECRET, make_exercise, notebook

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL_STEM = "01_compute"
REAL_BLANK = os.path.join(ROOT, "exercises", REAL_STEM, f"{REAL_STEM}.ipynb")
BWRAP = sandbox.bubblewrap_works()
needs_bwrap = pytest.mark.skipif(not BWRAP and not os.environ.get("CI"),
                                 reason="bubblewrap is not usable here (apt-get install bubblewrap)")


@pytest.fixture
def toy(tmp_path):
    return make_exercise(tmp_path / "toy")


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")


def by_submission(rows):
    out = {}
    for r in rows:
        out.setdefault(r["submission"], {})[r["question"]] = r
    return out


def read_scores(path):
    """The rows of a scores CSV, with score and possible as numbers."""
    with open(path, newline="", encoding="utf-8") as f:
        return [dict(r, score=float(r["score"]), possible=float(r["possible"])) for r in csv.DictReader(f)]


def full(rows_of_one):
    return all(r["score"] == r["possible"] for r in rows_of_one.values())


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# --- fast: no notebook is executed ---------------------------------------------------

def test_find_exercise_by_name_folder_and_zip():
    by_name = g.find_exercise(REAL_STEM)
    assert by_name.autograder.endswith(f"{REAL_STEM}-autograder.zip") and by_name.blank == REAL_BLANK
    assert g.find_exercise(os.path.join(ROOT, "exercises", REAL_STEM)).autograder == by_name.autograder
    assert g.find_exercise(by_name.autograder).name == REAL_STEM
    assert by_name.questions() and all(p > 0 for p in by_name.questions().values())


def test_unknown_exercise_and_fake_autograders_are_clear_errors(capsys, tmp_path):
    with pytest.raises(ValueError, match="no_such_exercise"):
        g.find_exercise("no_such_exercise")
    assert g.main(["no_such_exercise", REAL_BLANK]) == 2
    assert "no_such_exercise" in capsys.readouterr().err
    not_zip = tmp_path / "x-autograder.zip"
    not_zip.write_text("hello")
    with pytest.raises(ValueError, match="not a readable autograder"):
        g.find_exercise(str(not_zip))
    import zipfile
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("readme.txt", "not an autograder")
    with pytest.raises(ValueError, match="not an otter autograder"):
        g.find_exercise(str(other))
    assert g.main([str(other), REAL_BLANK]) == 2


@pytest.mark.parametrize("option, value", [("timeout", math.inf), ("timeout", math.nan), ("timeout", 0),
                                           ("timeout", -1), ("timeout", True), ("cell_timeout", -5),
                                           ("cell_timeout", math.inf), ("cell_timeout", 10_000)])
def test_timeouts_must_be_finite_and_positive(option, value, toy):
    with pytest.raises(ValueError, match=option):
        g.grade(toy, [REAL_BLANK], **{option: value})


def test_command_line_refuses_bad_timeouts(capsys):
    for args in (["--timeout", "inf"], ["--timeout", "nan"], ["--cell-timeout", "-5"]):
        assert g.main([REAL_STEM, REAL_BLANK] + args) == 2
        assert "timeout" in capsys.readouterr().err


def test_out_must_not_destroy_anything(tmp_path):
    sub = notebook(tmp_path / "a.ipynb", "answer_one = 42")
    before = digest(sub)
    for out, why in ((sub, "submission"), (str(tmp_path), "folder"),
                     (os.path.join(ROOT, "exercises", "scores.csv"), "exercises"),
                     (str(tmp_path / "nowhere" / "s.csv"), "does not exist")):
        with pytest.raises(ValueError, match=why):
            g.grade(REAL_STEM, [sub], out=out)
    link = tmp_path / "link.csv"
    link.symlink_to(sub)
    with pytest.raises(ValueError, match="submission"):
        g.grade(REAL_STEM, [sub], out=str(link))
    assert digest(sub) == before
    with pytest.raises(ValueError, match="submissions"):
        g.grade(REAL_STEM, [])
    totals = notebook(tmp_path / "scores-totals.csv", "answer_one = 42")   # where the totals would go
    with pytest.raises(ValueError, match="out: .*scores-totals.csv.* is one of the submissions"):
        g.grade(REAL_STEM, [totals], out=str(tmp_path / "scores.csv"))


def test_a_file_given_twice_or_by_two_spellings_counts_once(tmp_path, monkeypatch):
    """Issue 34: summary() counted one file once per spelling of its path, and the copy flags named
    a file as a copy of itself."""
    from brrr.grade.report import copy_groups
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    for name in ("a.ipynb", "copy.ipynb", "other.ipynb"):
        (tmp_path / name).write_text("{}" if name != "other.ipynb" else '{"x": 1}')
    spellings = ["a.ipynb", "a.ipynb", "./a.ipynb", str(tmp_path / "a.ipynb"), "sub/../a.ipynb"]
    rows = [{"submission": p, "question": q, "status": "graded"} for p in spellings for q in ("q1", "q2")]
    rows += [{"submission": p, "question": "q1", "status": s}
             for p, s in (("other.ipynb", "failed"), ("gone.ipynb", "failed"), ("copy.ipynb", "timed out"))]
    assert g.summary(rows) == {"graded": 1, "timed out": 1, "failed": 2}
    groups = copy_groups(spellings + ["copy.ipynb", "other.ipynb"])
    assert groups["copy.ipynb"] == spellings[:1] + spellings[2:]
    assert all(groups[p] == ["copy.ipynb"] for p in spellings), groups
    assert copy_groups(["a.ipynb", "./a.ipynb"]) == {}


def test_out_is_never_inside_the_exercise_folder_actually_used(tmp_path, monkeypatch):
    """Issue 34: a name resolves from ./exercises first, so the folder guarded is the one used,
    wherever it is (and its exercises/ and solutions/), reached through a link or not."""
    monkeypatch.chdir(tmp_path)
    make_exercise(tmp_path / "exercises" / "toy")
    (tmp_path / "solutions").mkdir()
    (tmp_path / "elsewhere").symlink_to(tmp_path / "exercises" / "toy")
    sub = notebook(tmp_path / "a.ipynb", "answer_one = 42")
    assert g.find_exercise("toy").autograder == str(tmp_path / "exercises" / "toy" / "toy-autograder.zip")
    for out in ("exercises/toy/s.csv", "exercises/s.csv", "solutions/s.csv", "elsewhere/s.csv",
                str(tmp_path / "exercises" / "toy" / "tests" / "s.csv")):
        with pytest.raises(ValueError, match="out: .* is inside .*write scores elsewhere"):
            g.grade("toy", [sub], out=out)
    other = make_exercise(tmp_path / "courses" / "toy2")        # an exercise folder given by its path
    with pytest.raises(ValueError, match="is inside"):
        g.grade(other, [sub], out=os.path.join(other, "s.csv"))
    with pytest.raises(ValueError, match="is inside"):
        g.grade(os.path.join(other, "toy-autograder.zip"), [sub], out=os.path.join(other, "s.csv"))
    assert not any(p.name.endswith(".csv") for p in tmp_path.rglob("*")), "a refused CSV was written"


def test_untouched_detection():
    with open(REAL_BLANK, encoding="utf-8") as f:
        nb = json.load(f)
    assert g.is_untouched(nb, REAL_BLANK)
    cell = next(c for c in nb["cells"] if "otter_answer_cell" in c["metadata"].get("tags", []))
    cell["source"] = "# my answer\n" + "".join(cell["source"])
    assert not g.is_untouched(nb, REAL_BLANK)
    assert not g.is_untouched(nb, None)
    with open(REAL_BLANK, encoding="utf-8") as f:
        added = json.load(f)       # the answers in a cell the student added: not a blank
    added["cells"].append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                           "source": "flops_small = 2 * 64 * 256 * 32"})
    assert not g.is_untouched(added, REAL_BLANK)
    added["cells"][-1]["source"] = "   "     # an empty cell added changes nothing
    assert g.is_untouched(added, REAL_BLANK)


def test_answers_cross_as_data_only():
    from brrr.grade import answers
    import brrr
    import numpy as np

    class AlwaysEqual:
        def __eq__(self, other):
            return True
    t = brrr.Timing(samples=[1e-3, 2e-3], floor=1e-6, backend="cpu", mode="hot")
    ns = {"a": np.float32(2.5), "b": {1: (2, 3)}, "t": t, "cheat": AlwaysEqual(), "f": lambda: 1,
          "arr": np.arange(4), "nan": math.nan, "_private": 1}
    back = answers.restore(answers.snapshot(ns))
    assert back["a"] == 2.5 and type(back["a"]) is float and back["b"] == {1: (2, 3)}
    assert isinstance(back["t"], brrr.Timing) and back["t"].median == t.median
    assert back["cheat"] != 42 and not (back["cheat"] == 42)
    with pytest.raises(TypeError, match="could not be graded: it is an AlwaysEqual"):
        float(back["cheat"])
    blank = answers.restore(answers.snapshot({"x": ...}))["x"]
    with pytest.raises(TypeError, match=r"could not be graded: it is still \.\.\., the blank's placeholder"):
        float(blank)
    assert "f" not in back and "_private" not in back and math.isnan(back["nan"])
    assert back["arr"].tolist() == [0, 1, 2, 3]
    # a forged record is rebuilt from fields or refused, never executed
    forged = json.dumps({"x": {"__brrr__": "os.system", "fields": {"__dict__": []}},
                         "y": {"__brrr__": "Timing", "fields": {"__dict__": [["samples", "rm -rf /"]]}}})
    back = answers.restore(forged)
    assert isinstance(back["x"], answers.Unsupported) and isinstance(back["y"], answers.Unsupported)


def test_a_file_named_like_an_option_is_refused_not_obeyed(tmp_path, monkeypatch, capsys):
    """A submission folder holding '--isolation=none' or '-h.ipynb', graded with `*`: the batch
    never runs with the name read as an option; after `--` the names are submissions."""
    monkeypatch.chdir(tmp_path)
    graded = []
    monkeypatch.setattr(g, "grade", lambda *a, **k: graded.append(k) or [])
    for name in ("--isolation=none", "-h.ipynb"):
        (tmp_path / name).write_text("{}", encoding="utf-8")
        assert g.main([REAL_STEM, "a.ipynb", name]) == 2
        assert name in capsys.readouterr().err and not graded
        (tmp_path / name).unlink()
    (tmp_path / "-h.ipynb").write_text("{}", encoding="utf-8")
    assert g.main([REAL_STEM, "--", "a.ipynb", "-h.ipynb"]) == 0
    assert g.main([REAL_STEM, "a.ipynb"]) == 0       # the isolation this machine gives by default
    assert len(graded) == 2 and graded[0]["isolation"] == graded[1]["isolation"]


def test_no_sandbox_needs_an_unmistakable_flag(monkeypatch, capsys):
    graded = []
    monkeypatch.setattr(g, "grade", lambda *a, **k: graded.append(k) or [])
    assert g.main([REAL_STEM, REAL_BLANK, "--isolation", "none"]) == 2
    assert "--trust-all-submissions" in capsys.readouterr().err and not graded
    assert g.main([REAL_STEM, REAL_BLANK, "--isolation", "none", "--trust-all-submissions"]) == 0
    assert graded[-1]["isolation"] == "none"


def test_any_text_is_written_safely_to_the_csv_and_the_console(tmp_path):
    nasty = ["bad \ud800 surrogate", os.fsdecode(b"name-\xff.ipynb"), "line\nfake.ipynb: 10 / 10 (graded)",
             "tab\tand\x1b[31mcolour"]
    for text in nasty:
        safe = g.safe_text(text)
        safe.encode("utf-8")                        # no lone surrogate is left
        assert safe.isprintable(), safe             # no newline, tab or escape character
        assert safe != text or text.isprintable()
    out = tmp_path / "rows.csv"
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["reason"])
        writer.writerows({"reason": g.safe_text(t)} for t in nasty)
    assert len(out.read_text(encoding="utf-8").splitlines()) == len(nasty)


def _fake_batch(toy, tmp_path):
    return batch_module.Batch(g.find_exercise(toy), str(tmp_path / "batch"), "", "", "", "bubblewrap", 60.0, 30.0)


def test_one_submission_that_breaks_the_grader_fails_alone(toy, tmp_path, monkeypatch):
    """An exception anywhere in grading one submission gives that submission failed rows; links
    are refused; every member of a group of copies is flagged; every row says the level."""
    os.makedirs(tmp_path / "batch")
    monkeypatch.setattr(batch_module, "prepare", lambda *a, **k: _fake_batch(toy, tmp_path))
    one = notebook(tmp_path / "one.ipynb", *CORRECT)
    copy = tmp_path / "copy.ipynb"
    copy.write_bytes(one.read_bytes() if hasattr(one, "read_bytes") else open(one, "rb").read())
    link = tmp_path / "link.ipynb"
    link.symlink_to(one)
    breaks = os.fsdecode(b"breaks-\xff\n.ipynb")

    def grade_one(path, batch):
        if path == breaks:
            raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
        return batch_module._rows(path, batch, "graded", {}, lambda q: "fine")
    monkeypatch.setattr(batch_module, "grade_one", grade_one)
    out = tmp_path / "scores.csv"
    rows = g.grade(toy, [str(one), breaks, str(copy)], out=str(out))
    by = by_submission(rows)
    assert list(by) == [str(one), g.safe_text(breaks), str(copy)]
    assert all(r["status"] == "failed" and "grader failed" in r["reason"] for r in by[g.safe_text(breaks)].values())
    assert all(f"same file content as {one}" in r["reason"] for r in by[str(copy)].values())
    assert all(f"same file content as {copy}" in r["reason"] for r in by[str(one)].values()), \
        "the first of a group of copies is flagged too: who copied is not known"
    assert all(r["isolation"] == "bubblewrap" for r in rows)
    assert len(list(csv.DictReader(open(out, newline="", encoding="utf-8")))) == len(rows)
    monkeypatch.undo()
    refused = batch_module.grade_one(str(link), _fake_batch(toy, tmp_path))
    assert all(r["status"] == "failed" and "symbolic link" in r["reason"] for r in refused)


def test_a_link_anywhere_on_the_path_is_refused(toy, tmp_path, monkeypatch):
    """Issue 34: a folder link on the way to a classmate's file once scored the classmate's work."""
    (tmp_path / "bob").mkdir()
    notebook(tmp_path / "bob" / "work.ipynb", *CORRECT)
    (tmp_path / "alice").symlink_to(tmp_path / "bob")
    batch = _fake_batch(toy, tmp_path)
    monkeypatch.chdir(tmp_path)
    for path in (str(tmp_path / "alice" / "work.ipynb"), "alice/work.ipynb", "./alice/../alice/work.ipynb"):
        rows = batch_module.grade_one(path, batch)
        assert all(r["status"] == "failed" and r["score"] == 0 for r in rows)
        assert all("alice is a symbolic link" in r["reason"] for r in rows), rows[0]["reason"]
    assert g.linked_component("bob/work.ipynb") == "" and g.linked_component(str(tmp_path / "bob")) == ""


def test_the_csv_holds_totals_and_no_formula(toy, tmp_path, monkeypatch):
    """Issue 34: one total per submission goes to OUT-totals.csv; a field a spreadsheet would run
    as a formula (= + - @) gets a leading quote in both CSVs, never in the rows returned."""
    os.makedirs(tmp_path / "batch")
    monkeypatch.setattr(batch_module, "prepare", lambda *a, **k: _fake_batch(toy, tmp_path))
    monkeypatch.chdir(tmp_path)
    names = ["=HYPERLINK(1).ipynb", "+1.ipynb", "-h.ipynb", "@SUM(1).ipynb", "plain.ipynb"]
    for i, name in enumerate(names):
        notebook(tmp_path / name, f"answer_one = {i}")
    scores = {"q1": 1.0, "q2": 1.5}
    monkeypatch.setattr(batch_module, "grade_one", lambda path, batch: batch_module._rows(
        path, batch, "graded", scores, lambda q: "=cmd|' /C calc'!A0"))
    rows = g.grade(toy, names, out="scores.csv")
    assert [r["submission"] for r in rows[::3]] == names and rows[0]["reason"].startswith("=")
    with open(tmp_path / "scores.csv", newline="", encoding="utf-8") as f:
        written = list(csv.DictReader(f))
    with open(tmp_path / "scores-totals.csv", newline="", encoding="utf-8") as f:
        totals = list(csv.DictReader(f))
    assert len(written) == 3 * len(names) and all(r["reason"].startswith("'=") for r in written)
    assert list(totals[0]) == list(g.TOTAL_FIELDS) and len(totals) == len(names)
    for total, name in zip(totals, names):
        assert total["submission"] == (name if name == "plain.ipynb" else "'" + name)
        assert float(total["score"]) == 2.5 and float(total["possible"]) == 4 and total["status"] == "graded"
    for cell in (r[k] for r in written + totals for k in r):
        assert not cell.startswith(("=", "+", "-", "@")), cell


def test_a_reason_is_short_whatever_the_submission_says(toy, tmp_path):
    """Issue 34: a reason carries little out of the sandbox: kept errors are short, rows are cut."""
    from brrr.grade import runner
    rows = batch_module._rows("a.ipynb", _fake_batch(toy, tmp_path), "graded", {}, lambda q: "x" * 100_000)
    assert all(len(r["reason"]) <= batch_module.MAX_REASON_CHARS and r["reason"].endswith("[cut short]")
               for r in rows)
    line = runner.error_line(3, {"ename": "os.system('x')" + "y" * 1000, "evalue": "z" * 10_000})
    assert line.startswith("cell 3: an error: ") and len(line) < 120


def test_a_notebook_too_large_is_refused_unread(tmp_path):
    """Issue 34: a 49 MB notebook once drove the grader to 2.3 GB while it was parsed."""
    from brrr.grade.exercise import MAX_NOTEBOOK_BYTES
    big = tmp_path / "big.ipynb"
    with open(big, "wb") as f:
        f.truncate(MAX_NOTEBOOK_BYTES + 1)
    nb, problem = g.read_submission(str(big))
    assert nb is None and "big.ipynb is over 16 MiB" in problem
    nested = tmp_path / "nested.ipynb"
    nested.write_text("[" * 1_000_000)
    assert "not valid JSON" in g.read_submission(str(nested))[1]
    assert g.read_submission(notebook(tmp_path / "fine.ipynb", "x = 1"))[1] == ""


def test_the_batch_folder_stays_private_with_a_kept_measurement(toy, tmp_path, monkeypatch):
    """Issue 34: with BRRR_GRADE_DEVICE_DIR set, copying its measurement once made the folder of the
    hidden tests world-readable."""
    def fake_measure(folder):
        os.makedirs(os.path.join(folder, "cache"), exist_ok=True)
        with open(os.path.join(folder, "device.json"), "w") as f:
            json.dump({"name": "measured"}, f)
        return os.path.join(folder, "device.json"), os.path.join(folder, "cache")
    monkeypatch.setattr(batch_module, "_measure_into", fake_measure)
    monkeypatch.setenv(batch_module.DEVICE_DIR_ENV, str(tmp_path / "kept"))
    for _ in range(2):                          # measured into the kept folder, then copied from it
        os.makedirs(tmp_path / "kept" / "quick", exist_ok=True)
        os.chmod(tmp_path / "kept" / "quick", 0o755)
        batch = g.prepare(toy, timeout=60, isolation="none")
        try:
            assert os.stat(batch.folder).st_mode & 0o777 == 0o700
            assert os.path.isfile(os.path.join(batch.tests, "q3.py")) and batch.tests.startswith(batch.folder)
        finally:
            import shutil
            shutil.rmtree(batch.folder)


def test_the_client_sockets_have_the_message_cap_too(tmp_path):
    """Issue 34: the 32 MiB cap was set on the manager's context only; nbclient's client makes its
    own, so 400 MB messages reached the runner."""
    import zmq
    from brrr.grade import runner
    km = runner._kernel_manager(str(tmp_path), str(tmp_path), "none", 65534)
    kc = km.client()
    try:
        for channel in (kc.iopub_channel, kc.shell_channel, kc.control_channel, kc.stdin_channel):
            assert channel.socket.getsockopt(zmq.MAXMSGSIZE) == runner.MAX_MESSAGE_BYTES
    finally:
        kc.stop_channels()


# --- slow: notebooks are executed -------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("level", ["none", pytest.param("bubblewrap", marks=needs_bwrap)])
def test_correct_and_blank_and_broken(toy, tmp_path, level):
    good = notebook(tmp_path / "good (1).ipynb", *CORRECT)
    raising = notebook(tmp_path / "raising.ipynb", CORRECT[0], "raise RuntimeError('student bug')",
                       CORRECT[2])
    corrupt = tmp_path / "corrupt.ipynb"
    corrupt.write_text("{not json", encoding="utf-8")
    missing = str(tmp_path / "missing.ipynb")
    blank = os.path.join(toy, "toy.ipynb")
    out = tmp_path / "scores.csv"
    code = g.main([toy, good, raising, str(corrupt), missing, blank, "--out", str(out), "--isolation", level,
                   "--timeout", "120", *(["--trust-all-submissions"] if level == "none" else [])])
    assert code == 1  # two submissions could not be graded
    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(g.FIELDS) and {r["isolation"] for r in rows} == {level}
    by = by_submission(rows)
    assert list(by) == [good, raising, str(corrupt), missing, blank]  # nothing lost, order kept
    assert all(float(r["score"]) == float(r["possible"]) and r["status"] == "graded" for r in by[good].values())
    assert float(by[raising]["q1"]["score"]) == 1 and float(by[raising]["q3"]["score"]) == 1
    assert float(by[raising]["q2"]["score"]) == 0 and "RuntimeError: student bug" in by[raising]["q2"]["reason"]
    assert all(r["status"] == "failed" and "not valid JSON" in r["reason"] for r in by[str(corrupt)].values())
    assert all(r["status"] == "failed" and "no such file" in r["reason"] for r in by[missing].values())
    assert all(float(r["score"]) == 0 for r in by[blank].values())


def _alive(token):
    found = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if any(token in part for part in (p.info["cmdline"] or [])):
                found.append(p.pid)
        except psutil.Error:
            pass
    return found


DAEMON = '''import os, subprocess, sys
code = """
import os, time
while True:
    for target in {targets!r}:
        try:
            with open(target, 'w') as f: f.write('q1,999,1')
        except OSError:
            pass
    time.sleep(0.05)
# {token}
"""
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    os._exit(0)
answer_one = 41
'''

TAMPER = '''import glob, os, shutil
stolen = []
for path in {targets!r}:
    try:
        os.remove(path)
    except OSError:
        pass
    try:
        with open(path, "ab") as f:
            f.write(b"corrupted")
    except OSError:
        pass
for pattern in ("/tmp/brrr-grade-*/hidden/tests/*.py", {hidden_glob!r}, "/tmp/**/q3.py", "/**/toy-autograder.zip"):
    for path in glob.glob(pattern, recursive=True)[:20]:
        try:
            stolen.append(open(path, "rb").read().decode("latin-1"))
        except OSError:
            pass
import re
found = re.findall("swordfish-[0-9a-f]+", "\\n".join(stolen))
secret = found[0] if found else "no luck"
answer_one = 42
'''

FORGER = '''import json, glob
class Always:
    def __eq__(self, other): return True
    def __float__(self): return 1e9
answer_one = Always()
secret = Always()
peak_used = Always()
for path in glob.glob("/tmp/**/result.json", recursive=True) + ["result.json", "../out/snapshot.json"]:
    try:
        json.dump({{"questions": {{"q1": {{"score": 1e9, "possible": 1}}}}}}, open(path, "w"))
    except OSError:
        pass
'''

HANG = '''import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    pass
'''

POISON = '''import json, os
os.makedirs(os.path.expanduser("~/.cache/brrr"), exist_ok=True)
for folder in (os.path.expanduser("~/.cache/brrr"), {cache!r}):
    try:
        path = os.path.join(folder, "cpu_peaks.json")
        data = json.load(open(path)) if os.path.exists(path) else {{}}
        for key in list(data) or ["x"]:
            data[key] = {{"bandwidth": 1.0, "flops_float32": 1.0, "flops_float64": 1.0}}
        json.dump(data, open(path, "w"))
    except OSError:
        pass
answer_one = 42
'''


@pytest.mark.slow
@needs_bwrap
def test_attackers_in_one_batch_with_a_correct_solution(toy, tmp_path, monkeypatch):
    """Every attack of issue 12 in one batch: none gets full marks, the honest notebooks do,
    no file outside the submissions' folders changes, no process survives."""
    # a poisoned peaks cache where the grader's user keeps it: the grader must not read it
    user_cache = tmp_path / "user-cache"
    user_cache.mkdir()
    (user_cache / "cpu_peaks.json").write_text(json.dumps({"any": {"bandwidth": 1.0}}))
    monkeypatch.setenv("BRRR_CACHE_DIR", str(user_cache))
    subs = tmp_path / "subs"
    subs.mkdir()
    good = notebook(subs / "good.ipynb", *CORRECT)
    out = tmp_path / "scores.csv"
    token = f"brrr-attack-{os.getpid()}-{time.time_ns()}"
    autograder = os.path.join(toy, "toy-autograder.zip")
    targets = [good, str(out), autograder, os.path.join(toy, "tests", "q1.py"), str(user_cache / "cpu_peaks.json")]
    attackers = {
        "daemon": notebook(subs / "daemon.ipynb", DAEMON.format(targets=targets, token=token), *CORRECT[1:]),
        "tamper": notebook(subs / "tamper.ipynb", TAMPER.format(targets=targets, hidden_glob=toy + "/**"),
                           CORRECT[1]),
        "forger": notebook(subs / "forger.ipynb", FORGER.format()),
        "hang": notebook(subs / "hang.ipynb", CORRECT[0], HANG, *CORRECT[1:]),
        "poison": notebook(subs / "poison.ipynb", POISON.format(cache=str(user_cache)), *CORRECT[1:]),
    }
    good_after = notebook(subs / "good-after.ipynb", *CORRECT)
    protected = {p: digest(p) for p in targets if os.path.isfile(p)}
    order = [attackers["daemon"], good, attackers["tamper"], attackers["forger"], attackers["hang"],
             attackers["poison"], good_after]
    code = g.main([toy, *order, "--out", str(out), "--timeout", "120", "--cell-timeout", "8",
                   "--isolation", "bubblewrap"])
    assert code == 0, "every submission is graded"
    time.sleep(0.5)
    assert _alive(token) == [], "a detached process outlived its grading"
    for path, before in protected.items():
        if path != str(out):
            assert digest(path) == before, f"{path} was changed by a submission"
    rows = read_scores(out)
    by = by_submission(rows)
    assert list(by) == order and len(rows) == 3 * len(order)
    assert full(by[good]) and full(by[good_after]), "honest work gets full marks, whatever came before"
    for name, path in attackers.items():
        if name != "poison":
            assert not full(by[path]), f"the {name} attacker got full marks"
    assert by[attackers["tamper"]]["q3"]["score"] == 0, "the hidden tests were readable"
    assert all(r["score"] <= r["possible"] for r in rows)
    hang = by[attackers["hang"]]
    assert hang["q1"]["score"] == 1 and hang["q2"]["score"] == 0 and hang["q1"]["status"] == "timed out"
    assert "kernel was killed" in hang["q2"]["reason"]
    # the poisoner only poisons its own throwaway home: it and everyone after it are graded on
    # the peaks the grader measured itself
    assert full(by[attackers["poison"]])
    assert SECRET not in out.read_text()


@pytest.mark.slow
def test_plain_processes_still_leave_no_survivors_and_give_partial_credit(toy, tmp_path):
    token = f"brrr-plain-{os.getpid()}-{time.time_ns()}"
    daemon = notebook(tmp_path / "daemon.ipynb", DAEMON.format(targets=[], token=token))
    hang = notebook(tmp_path / "hang.ipynb", CORRECT[0], HANG)
    rows = g.grade(toy, [daemon, hang], timeout=60, cell_timeout=5, isolation="none")
    time.sleep(0.5)
    assert _alive(token) == []
    by = by_submission(rows)
    assert by[hang]["q1"]["score"] == 1 and by[hang]["q1"]["status"] == "timed out"


@pytest.mark.slow
def test_a_notebook_past_the_whole_time_limit_keeps_its_earlier_answers(toy, tmp_path):
    slow = notebook(tmp_path / "slow.ipynb", CORRECT[0], "import time\ntime.sleep(1000)")
    rows = g.grade(toy, [slow], timeout=15, cell_timeout=14, isolation="none")
    by = by_submission(rows)[slow]
    assert by["q1"]["score"] == 1 and by["q1"]["status"] == "timed out"
    assert "ran past" in by["q3"]["reason"]


def test_a_scorer_result_without_questions_fails_that_submission_only(toy, tmp_path, monkeypatch):
    batch = g.prepare(toy, timeout=60, isolation="none")
    try:
        with open(tmp_path / "result.json", "w") as f:
            json.dump({"no": "questions"}, f)
        monkeypatch.setattr(batch_module.subprocess, "run",
                            lambda *a, **k: type("Done", (), {"returncode": 0, "stderr": ""})())
        questions, problem = batch_module._score(batch, "/nonexistent", str(tmp_path))
        assert questions == {} and "scorer gave no result" in problem
    finally:
        import shutil
        shutil.rmtree(batch.folder, ignore_errors=True)


def test_public_tests_never_uses_another_exercises_tests(tmp_path, monkeypatch):
    import zipfile
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "q1.py").write_text("x = 1\n")
    (tmp_path / "tests" / "exercise.txt").write_text("02_memory_bandwidth\n")
    zipped = tmp_path / "tests.zip"
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("exercise.txt", "01_compute\n")
        z.writestr("q1.py", "y = 2\n")
    assert g.public_tests("02_memory_bandwidth") == "tests"
    got = g.public_tests("01_compute", url=zipped.as_uri())
    assert got == "tests-01_compute" and (tmp_path / got / "q1.py").read_text() == "y = 2\n"
    assert (tmp_path / "tests" / "q1.py").read_text() == "x = 1\n", "the other exercise's tests were kept"
    assert g.public_tests("01_compute", url="file:///nowhere.zip") == "tests-01_compute"  # found again
    with pytest.raises(RuntimeError, match="does not hold the tests of 03_overhead"):
        g.public_tests("03_overhead", url=zipped.as_uri())
    with pytest.raises(RuntimeError, match="could not be downloaded"):
        g.public_tests("04_fusion", url="file:///no/such/tests.zip")
    with pytest.raises(ValueError, match="stem"):
        g.public_tests("../x")


def test_shipped_public_tests_name_their_exercise():
    import glob
    for folder in glob.glob(os.path.join(ROOT, "exercises", "*")):
        stem = os.path.basename(folder)
        assert open(os.path.join(folder, "tests", "exercise.txt")).read().strip() == stem


@needs_bwrap
def test_the_sandbox_sees_only_its_folder(tmp_path):
    """What code under the bubblewrap level can see: its folder, read-only Python, no more."""
    import subprocess
    import sys
    work = tmp_path / "work"
    work.mkdir()
    probe = f"""
import os, socket, json
out = {{}}
out["repository"] = os.path.exists({os.path.join(ROOT, 'solutions')!r})
out["tests_of_repo"] = os.path.exists({os.path.join(ROOT, 'exercises')!r})
out["home_of_grader"] = os.path.exists({os.path.expanduser('~/.cache')!r}) and os.path.expanduser('~') != os.getcwd()
out["outside_tmp"] = os.path.exists({str(tmp_path / 'outside.txt')!r})
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2); out["network"] = True
except OSError:
    out["network"] = False
try:
    open({os.path.join(os.path.dirname(os.path.abspath(g.__file__)), 'x.py')!r}, "w"); out["brrr_writable"] = True
except OSError:
    out["brrr_writable"] = False
open("mine.txt", "w").write("ok")
out["mine"] = os.listdir(".")
out["pid"] = os.getpid()
import brrr
print(json.dumps(out))
"""
    (tmp_path / "outside.txt").write_text("secret")
    sandbox.hand_over(str(work))
    env = sandbox.kernel_env(str(work))
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run(sandbox.sandboxed([sys.executable, "-c", probe], str(work), str(out), env),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen == {"repository": False, "tests_of_repo": False, "home_of_grader": False,
                    "outside_tmp": False, "network": False, "brrr_writable": False, "mine": ["mine.txt"],
                    "pid": seen["pid"]}
    assert seen["pid"] < 10, "the sandbox has a PID namespace of its own"
    assert os.listdir(work) == [], "the folder is a tmpfs of its own: nothing reaches the host"


def test_gpu_and_16_bit_answers_are_graded_as_their_values():
    # A student on a GPU answers with dev.xp (CuPy) or a CUDA tensor; a bfloat16 tensor has no NumPy twin.
    import numpy as np
    import torch
    from brrr.grade import answers

    class FakeCupyArray:   # what encode sees of a cupy.ndarray: its module, dtype and .get()
        __module__ = "cupy._core.core"
        dtype = np.dtype("float32")
        size = 3

        def get(self):
            return np.array([1.0, 2.0, 0.5], dtype="float32")

    assert answers.encode(FakeCupyArray()) == answers.encode(np.array([1.0, 2.0, 0.5], dtype="float32"))
    halves = torch.tensor([1.0, 2.0, 0.5], dtype=torch.bfloat16)
    assert answers.encode(halves) == answers.encode(np.array([1.0, 2.0, 0.5], dtype="float32"))


def test_forged_array_types_and_sizes_decode_to_placeholders():
    """About 130 characters of forged answer data once made the scorer allocate over 1 GB."""
    from brrr.grade import answers
    forged = [{"__ndarray__": [1, 2], "dtype": "S700000000"},
              {"__ndarray__": [1], "dtype": "[('a', '<f8', (100000000,))]"},
              {"__ndarray__": [1], "dtype": "(100000000,)f8"},
              {"__ndarray__": [[0] * 1000] * 1000, "dtype": "float64"},
              {"__ndarray__": [[1], [2, 3]], "dtype": "float32"},
              {"__ndarray__": [1], "dtype": ["float32"]}]
    for obj in forged:
        assert isinstance(answers.decode(obj), answers.Unsupported), obj
    fine = answers.decode({"__ndarray__": [[1, 2], [3, 4]], "dtype": "float32"})
    assert fine.dtype == "float32" and fine.shape == (2, 2)


def test_dicts_and_sets_of_too_many_keys_are_refused_before_they_are_built():
    """Issue 34: a snapshot of keys that share one hash (ints equal mod 2**61 - 1) made building its
    dict quadratic, 125 s of the scorer's CPU; 60,000 such keys took 19 s here. The count of keys is
    bounded, in one dict or set and in the whole snapshot, and keys must be cheap to compare."""
    from brrr.grade import answers
    P = 2 ** 61 - 1
    colliding = [k * P for k in range(1, 60_001)]
    assert len({hash(k) for k in colliding}) == 1
    snapshot = json.dumps({"pairs": {"__dict__": [[k, 0] for k in colliding]}, "members": {"__set__": colliding},
                           "words": {"__dict__": [[f"w{i}", i] for i in range(answers.MAX_KEYS + 1)]},
                           "long_keys": {"__dict__": [[[0] * 1000 + [k], 0] for k in colliding[:100]]}})
    start = time.process_time()
    back = answers.restore(snapshot)
    took = time.process_time() - start
    for name in ("pairs", "members", "words"):
        assert isinstance(back[name], answers.Unsupported) and "too many" in back[name].why, back[name]
    assert "not a number, string or short tuple" in back["long_keys"].why
    assert took < 10, f"{took:.1f} s of CPU to refuse it"       # generous: the old code took minutes
    # many small dicts are bounded by the snapshot's total, before any is built
    many = {f"d{i}": {"__dict__": [[k, 0] for k in colliding[:answers.MAX_KEYS]]}
            for i in range(answers.MAX_SNAPSHOT_KEYS // answers.MAX_KEYS + 1)}
    back = answers.restore(json.dumps(many))
    refused = [name for name, v in back.items() if isinstance(v, answers.Unsupported)]
    assert refused == [f"d{len(many) - 1}"] and "a snapshot may hold" in back[refused[0]].why
    # what a student hands in: a dict too large is a placeholder that says why; small ones come back
    ns = {"big": {i: i for i in range(answers.MAX_KEYS + 1)}, "ok": {("a", 1): {2, 3}, None: 1.5}}
    back = answers.restore(answers.snapshot(ns))
    assert "too many keys" in back["big"].why and back["ok"] == ns["ok"]


@pytest.mark.slow
def test_the_runner_keeps_what_a_kernel_sends_small(tmp_path):
    """The kernel holds no descriptor of the grader's log, long error messages are cut short (and
    only the first few kept), and comm messages are dropped (they once grew the runner to about 1 GB)."""
    import subprocess
    import sys
    from brrr.grade import runner
    path = notebook(tmp_path / "big.ipynb",
                    "import os\nopen_files = sorted(os.readlink(f'/proc/self/fd/{fd}') for fd in os.listdir('/proc/self/fd')"
                    " if os.path.exists(f'/proc/self/fd/{fd}'))",
                    "raise ValueError('x' * 5_000_000)",
                    "from ipykernel.comm import Comm\nfor _ in range(200):\n"
                    "    Comm(target_name='jupyter.widget', data={'state': {'v': 'y' * 100_000}})",
                    *[f"raise KeyError('k' * 10_000 + '{i}')" for i in range(6)],
                    "done = 1")
    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    out.mkdir()
    with open(out / "log.txt", "w") as log:     # as brrr grade starts the runner
        subprocess.run([sys.executable, "-m", "brrr.grade.runner", path, str(work), str(out), "60", "none"],
                       stdout=log, stderr=subprocess.STDOUT, check=True, timeout=300)
    status = json.loads((out / "status.json").read_text(encoding="utf-8"))
    answers = json.loads((out / "snapshot.json").read_text(encoding="utf-8"))
    files = answers["open_files"]["__ndarray__"] if isinstance(answers["open_files"], dict) else answers["open_files"]
    assert files and not any(str(out) in f for f in files), files
    assert answers["done"] == 1 and status["executed"] == 10
    assert status["error_count"] == 7 and len(status["errors"]) == runner.MAX_KEPT_ERRORS
    assert all(len(e) < 150 for e in status["errors"]), status["errors"]


def test_batches_share_one_device_measurement_when_asked(tmp_path, monkeypatch):
    """With BRRR_GRADE_DEVICE_DIR set, the first batch measures and later ones copy (issue 25:
    each batch measured again, about 5 GB of memory each time on a large-cache machine)."""
    calls = []

    def fake_measure(folder):
        calls.append(folder)
        os.makedirs(os.path.join(folder, "cache"), exist_ok=True)
        with open(os.path.join(folder, "device.json"), "w") as f:
            json.dump({"name": "measured once"}, f)
        return os.path.join(folder, "device.json"), os.path.join(folder, "cache")

    monkeypatch.setattr(batch_module, "_measure_into", fake_measure)
    monkeypatch.setenv(batch_module.DEVICE_DIR_ENV, str(tmp_path / "kept"))
    monkeypatch.setenv("BRRR_QUICK", "1")
    for name in ("one", "two", "three"):
        record, cache = batch_module._measure_device(str(tmp_path / name))
        assert json.load(open(record)) == {"name": "measured once"} and os.path.isdir(cache)
    assert calls == [str(tmp_path / "kept" / "quick")]
    monkeypatch.delenv("BRRR_QUICK")          # full size: a kernel would not find a quick measurement's peaks
    config.reread()
    batch_module._measure_device(str(tmp_path / "five"))
    batch_module._measure_device(str(tmp_path / "six"))
    assert calls[1:] == [str(tmp_path / "kept" / "full")]
    monkeypatch.delenv(batch_module.DEVICE_DIR_ENV)
    batch_module._measure_device(str(tmp_path / "four"))
    assert calls[-1] == str(tmp_path / "four")       # unset: every batch measures its own


@pytest.mark.slow
@pytest.mark.parametrize("signum", ["SIGTERM", "SIGHUP"])
def test_a_grader_stopped_by_a_signal_leaves_no_hidden_tests_and_no_process(toy, tmp_path, signum):
    """Issue 34: a grader stopped with SIGTERM left the hidden tests in /tmp. Sent the signal while
    a notebook runs, a grader process removes its private folder (0700 while it lived), kills what
    it started and exits with 128 + the signal's number."""
    import signal
    import subprocess
    import sys
    import pathlib
    import tempfile
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="brrr-sig-"))   # short: the kernel's socket paths must fit
    sleeper = notebook(tmp_path / "sleeper.ipynb", "open('started', 'w').close()\nimport time\ntime.sleep(600)")
    code = "import sys; from brrr import grade as g; sys.exit(g.main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, toy, "--isolation", "none", "--trust-all-submissions",
                             "--timeout", "500", "--", sleeper], env=dict(os.environ, TMPDIR=str(tmp)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300        # bounds a failure only: the test waits for the kernel
        started = []
        while not started and proc.poll() is None and time.monotonic() < deadline:
            started = list(tmp.glob("brrr-grade-*/run-*/work/started"))
            time.sleep(0.2)
        assert started, f"the notebook never started: {proc.poll()} {proc.communicate()[0][-3000:] if proc.poll() is not None else ''}"
        folder = started[0].parents[2]
        assert os.stat(folder).st_mode & 0o777 == 0o700 and list(folder.glob("hidden/tests/q3.py"))
        assert _alive(str(tmp)), "the runner and the kernel run from the batch's folder"
        proc.send_signal(getattr(signal, signum))
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        left = os.listdir(tmp)
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    assert proc.returncode == 128 + getattr(signal, signum), err
    assert f"stopped by {signum}" in err
    assert left == [], "the hidden tests were left behind"
    assert _alive(str(tmp)) == [], "a process of the batch outlived the grader"


MALFORMED_STATUS = '''k = get_ipython().kernel
k.session.send(k.iopub_socket, "status", {"no": "state"}, parent=k.get_parent("shell"))
'''


@pytest.mark.slow
def test_a_malformed_status_message_fails_that_submission_only(toy, tmp_path):
    """Issue 34: a `status` message without an execution_state crashed the runner."""
    bad = notebook(tmp_path / "bad.ipynb", CORRECT[0], MALFORMED_STATUS, *CORRECT[1:])
    good = notebook(tmp_path / "good.ipynb", *CORRECT)
    by = by_submission(g.grade(toy, [bad, good], timeout=120, isolation="none"))
    assert all(r["status"] == "failed" for r in by[bad].values())
    assert "malformed 'status' message" in by[bad]["q2"]["reason"], by[bad]["q2"]["reason"]
    assert by[bad]["q1"]["score"] == 1, "the answers given before it are still graded"
    assert full(by[good]) and by[good]["q1"]["status"] == "graded"


def test_the_instructor_guide_states_what_the_grader_does():
    """Issue 34: the guide's figures are the code's, the console and the CSVs are told apart, and
    it promises nothing of the out-of-memory killer."""
    from brrr.grade import runner
    from brrr.grade.exercise import MAX_NOTEBOOK_BYTES
    guide = open(os.path.join(ROOT, "book", "instructor_guide.md"), encoding="utf-8").read()
    text = " ".join(guide.split())
    assert f"A notebook over {MAX_NOTEBOOK_BYTES >> 20} MiB is refused before it is read" in text
    assert f"A reason is at most {batch_module.MAX_REASON_CHARS} characters" in text
    from brrr.grade import answers
    assert f"a dict or set of at most {answers.MAX_KEYS:,} keys" in text
    assert f"{answers.MAX_SNAPSHOT_KEYS:,} in the whole snapshot" in text
    assert f"the first {runner.MAX_KEPT_ERROR_CHARS} characters of its message" in text
    assert f"a message over {runner.MAX_MESSAGE_BYTES >> 20} MiB drops the connection" in text
    assert "the first five" in text and runner.MAX_KEPT_ERRORS == 5
    assert f"(`{os.path.basename(g.totals_path('scores.csv'))}`)" in text
    for field in g.TOTAL_FIELDS:
        assert f"`{field}`" in text[text.index("The totals go to a second CSV"):]
    assert "**Where to run it from.**" in text and "**What goes where.** The console gets" in text
    csv_paragraph = text[text.index("The CSV (`--out scores.csv`)"):text.index("Nothing stops the batch")]
    assert "last line" not in csv_paragraph and "console shows" in csv_paragraph
    assert "is ended by the operating system's out-of-memory killer" not in text
    assert "mode 0700" in text and "SIGTERM or SIGHUP" in text
    remains = text[text.index("**The risk that remains.**"):]
    for forgeable in ("computed instead of measured", "Copied records", "A channel between submissions",
                      "Like copying a classmate's answers"):
        assert forgeable in remains
    channel = remains[remains.index("A channel between submissions"):]
    for remedy in ("on its own", "drop_caches", "a machine (or virtual machine) of its own", "compare answers"):
        assert remedy in channel, remedy
