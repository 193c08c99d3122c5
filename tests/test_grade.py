"""brrr grade: otter-graded notebooks, and what happens to submissions that go wrong."""
import copy
import csv
import json
import os
import sys
import zipfile

import pytest

from brrr import grade as g

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEM = "01_compute"
BLANK = os.path.join(ROOT, "exercises", STEM, f"{STEM}.ipynb")


# --- fast: no notebook is executed ---------------------------------------------------

def test_find_exercise_by_name_folder_and_zip():
    by_name = g.find_exercise(STEM)
    assert by_name.autograder.endswith(f"{STEM}-autograder.zip") and by_name.blank.endswith(f"{STEM}.ipynb")
    assert g.find_exercise(os.path.join(ROOT, "exercises", STEM)).autograder == by_name.autograder
    assert g.find_exercise(by_name.autograder).name == STEM
    questions = by_name.questions()
    assert list(questions) == ["q1", "q2", "q3", "q4", "q5"] and all(p > 0 for p in questions.values())


def test_unknown_exercise_is_a_clear_error(capsys):
    with pytest.raises(ValueError, match="no_such_exercise"):
        g.find_exercise("no_such_exercise")
    assert g.main(["no_such_exercise", BLANK]) == 2
    assert "no_such_exercise" in capsys.readouterr().err


def test_corrupt_and_missing_submissions_score_zero_with_a_reason(tmp_path):
    corrupt = tmp_path / "corrupt.ipynb"
    corrupt.write_text('{"cells": [', encoding="utf-8")
    not_nb = tmp_path / "list.ipynb"
    not_nb.write_text("[1, 2]", encoding="utf-8")
    out = tmp_path / "scores.csv"
    rows = g.grade(STEM, [str(corrupt), str(not_nb), str(tmp_path / "missing.ipynb")], out=str(out))
    assert len(rows) == 15
    assert all(r["score"] == 0 and r["possible"] > 0 for r in rows)
    assert all("not valid JSON" in r["reason"] for r in rows[:5])
    assert all("not a notebook" in r["reason"] for r in rows[5:10])
    assert all("no such file" in r["reason"] for r in rows[10:])
    with open(out, newline="", encoding="utf-8") as f:
        written = list(csv.DictReader(f))
    assert [r["submission"] for r in written] == [r["submission"] for r in rows]
    assert list(written[0]) == list(g.FIELDS)


def test_untouched_detection():
    with open(BLANK, encoding="utf-8") as f:
        nb = json.load(f)
    assert g.is_untouched(nb, BLANK)
    changed = copy.deepcopy(nb)
    cell = next(c for c in changed["cells"] if g.ANSWER_TAG in c["metadata"].get("tags", []))
    cell["source"] = "def matmul_flops(m, k, n):\n    return 2 * m * k * n\n"
    assert not g.is_untouched(changed, BLANK)
    assert not g.is_untouched(nb, None)


def test_public_tests_uses_folder_or_downloads(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "q1.py").write_text("x = 1\n")
    assert g.public_tests(STEM) == "tests"
    url = "file://" + os.path.join(ROOT, "exercises", STEM, "tests.zip")
    got = g.public_tests(STEM, tests_dir=str(tmp_path / "fetched"), url=url)
    with zipfile.ZipFile(os.path.join(ROOT, "exercises", STEM, "tests.zip")) as z:
        assert sorted(os.listdir(got)) == sorted(z.namelist())
    with pytest.raises(RuntimeError, match="could not be downloaded"):
        g.public_tests(STEM, tests_dir=str(tmp_path / "none"), url="file:///no/such/tests.zip")
    with pytest.raises(ValueError, match="stem"):
        g.public_tests("")


def test_bad_timeout():
    with pytest.raises(ValueError, match="timeout"):
        g.grade(STEM, [BLANK], timeout=0)
    with pytest.raises(ValueError, match="submissions"):
        g.grade(STEM, [])


# --- slow: otter executes notebooks ---------------------------------------------------

@pytest.fixture(scope="module")
def solution(tmp_path_factory):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import build_exercises
    return build_exercises.solution_notebooks(str(tmp_path_factory.mktemp("sol")), [STEM])[STEM]


def _variant(solution, path, question_var, prefix):
    """A copy of the solution whose cell defining ``question_var`` starts with ``prefix``."""
    with open(solution, encoding="utf-8") as f:
        nb = json.load(f)
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "code" and f"\n{question_var} = " in "\n" + src:
            cell["source"] = prefix + src
            break
    else:
        raise AssertionError(f"no cell defines {question_var}")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(nb, f)
    return str(path)


@pytest.mark.slow
def test_batch_with_raising_hanging_and_corrupt_submissions(solution, tmp_path, monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")
    raising = _variant(solution, tmp_path / "raising.ipynb", "t_mm", "raise RuntimeError('student bug')\n")
    hanging = _variant(solution, tmp_path / "hanging (1).ipynb", "non_matmul_slowdown",
                       "import time\ntime.sleep(10**6)\n")
    corrupt = tmp_path / "corrupt.ipynb"
    corrupt.write_text("{not json", encoding="utf-8")
    out = tmp_path / "scores.csv"
    code = g.main([STEM, raising, str(corrupt), hanging, solution, "--out", str(out),
                   "--timeout", "300", "--cell-timeout", "10"])
    assert code == 0
    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    by = {}
    for r in rows:
        by.setdefault(r["submission"], {})[r["question"]] = (float(r["score"]), float(r["possible"]), r["reason"])
    assert list(by) == [raising, str(corrupt), hanging, solution]  # nothing lost, order kept

    full = lambda sub, q: by[sub][q][0] == by[sub][q][1]  # noqa: E731
    # raising: the questions that need t_mm lose their points, the rest are earned
    assert not full(raising, "q2") and not full(raising, "q3")
    assert full(raising, "q1") and full(raising, "q4") and full(raising, "q5")
    assert "RuntimeError: student bug" in by[raising]["q2"][2]
    # corrupt: zero everywhere, with the reason
    assert all(v[0] == 0 and "not valid JSON" in v[2] for v in by[str(corrupt)].values())
    # hanging: the endless cell is interrupted, the other questions still count
    assert by[hanging]["q4"][0] == 0 and "interrupted" in by[hanging]["q4"][2]
    assert full(hanging, "q1") and full(hanging, "q5")
    # the correct notebook after them is graded in full
    assert all(full(solution, q) for q in by[solution])


@pytest.mark.slow
def test_a_notebook_past_its_time_limit_scores_zero(solution, tmp_path, monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")
    hanging = _variant(solution, tmp_path / "forever.ipynb", "t_mm", "while True:\n    pass\n")
    rows = g.grade(STEM, [hanging], timeout=20, cell_timeout=1000)
    assert len(rows) == 5
    assert all(r["score"] == 0 and "timed out after 20 s" in r["reason"] for r in rows)
