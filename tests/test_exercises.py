"""The graded exercises: masters, generated student notebooks, and their scores under otter."""
import glob
import json
import os
import re
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import build_exercises  # noqa: E402

STEMS = ["01_compute", "02_memory_bandwidth", "03_overhead", "04_fusion", "05_recomputation",
         "06_intensity_of_networks", "07_diagnosing_a_model", "08_making_a_model_go_brrr"]
MARKERS = ["# SOLUTION", "BEGIN SOLUTION", "END SOLUTION", "BEGIN QUESTION", "END QUESTION",
           "BEGIN TESTS", "END TESTS", "ASSIGNMENT CONFIG", "TEST CONFIG", "otter_assign_solution_cell"]


def _cells(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)["cells"]


def _source(cell):
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def _solution_lines(master):
    """Lines of solution code in a master notebook (marked lines and BEGIN/END blocks)."""
    lines, inside = [], False
    for cell in _cells(master):
        if cell["cell_type"] != "code":
            continue
        for line in _source(cell).splitlines():
            s = line.strip()
            if s.endswith("# END SOLUTION"):
                inside = False
            elif inside:
                lines.append(s)
            elif s.endswith("# BEGIN SOLUTION"):
                inside = True
            elif s.endswith("# SOLUTION"):
                lines.append(s[: -len("# SOLUTION")].strip())
    return [line for line in lines if len(line) >= 12]


@pytest.mark.parametrize("stem", STEMS)
def test_layout(stem):
    assert os.path.isfile(os.path.join(ROOT, "solutions", stem, f"{stem}.ipynb"))
    ex = os.path.join(ROOT, "exercises", stem)
    for name in (f"{stem}.ipynb", "tests.zip", f"{stem}-autograder.zip"):
        assert os.path.isfile(os.path.join(ex, name)), name
    questions = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ex, "tests", "q*.py")))
    assert len(questions) >= 5, "every exercise has at least five graded questions"
    with open(os.path.join(ex, "tests", "exercise.txt"), encoding="utf-8") as f:
        assert f.read().strip() == stem
    with zipfile.ZipFile(os.path.join(ex, "tests.zip")) as z:
        assert sorted(z.namelist()) == sorted(questions + ["exercise.txt"])
        for q in questions:  # the zip the setup cell downloads holds the same public tests
            with open(os.path.join(ex, "tests", q), "rb") as f:
                assert z.read(q) == f.read()
    with zipfile.ZipFile(os.path.join(ex, f"{stem}-autograder.zip")) as z:
        assert sorted(n for n in z.namelist() if n.startswith("tests/")) == [f"tests/{q}" for q in questions]


def test_at_least_forty_graded_questions_in_all():
    count = sum(len(glob.glob(os.path.join(ROOT, "exercises", stem, "tests", "q*.py"))) for stem in STEMS)
    assert count >= 40, f"{count} graded questions"


def test_the_instructor_guide_counts_what_the_exercises_hold():
    guide = open(os.path.join(ROOT, "book", "instructor_guide.md"), encoding="utf-8").read()
    per_stem = [len(glob.glob(os.path.join(ROOT, "exercises", stem, "tests", "q*.py"))) for stem in STEMS]
    assert f"({sum(per_stem)} in all)" in guide
    words = {4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}
    low, high = min(per_stem), max(per_stem)
    assert f"{words[low]} to {words[high]} automatically graded" in guide
    manual = sum("manual: true" in open(os.path.join(ROOT, "solutions", stem, f"{stem}.ipynb"),
                                      encoding="utf-8").read() for stem in STEMS)
    assert f"{words[manual].capitalize()} exercises\nadd a free-response question" in guide
    for stem in STEMS:
        assert f"`{stem}`" in guide, f"the guide's list of stems lacks {stem}"


@pytest.mark.parametrize("stem", STEMS)
def test_student_notebook_has_no_solutions(stem):
    path = os.path.join(ROOT, "exercises", stem, f"{stem}.ipynb")
    # otter keeps <!-- BEGIN QUESTION --> comments around hand-graded questions, for its PDF export
    text = re.sub(r"<!-- (BEGIN|END) QUESTION -->", "", open(path, encoding="utf-8").read())
    for marker in MARKERS:
        assert marker not in text, f"{marker!r} left in {path}"
    body = "\n".join(_source(c) for c in _cells(path))
    solutions = _solution_lines(os.path.join(ROOT, "solutions", stem, f"{stem}.ipynb"))
    assert solutions, "the master should have solution lines"
    for line in solutions:
        assert line not in body, f"solution line {line!r} reached the student notebook"
    assert all(not c.get("outputs") for c in _cells(path) if c["cell_type"] == "code")
    # public tests only: hidden cases stay in the autograder zip
    for test in glob.glob(os.path.join(ROOT, "exercises", stem, "tests", "*.py")):
        assert "hidden=True" not in open(test, encoding="utf-8").read()
    with zipfile.ZipFile(os.path.join(ROOT, "exercises", stem, f"{stem}-autograder.zip")) as z:
        hidden = [n for n in z.namelist() if n.startswith("tests/") and b"hidden=True" in z.read(n)]
    assert hidden, "every exercise should have hidden test cases in its autograder"


@pytest.mark.parametrize("stem", STEMS)
def test_setup_cell(stem):
    code = [_source(c) for c in _cells(os.path.join(ROOT, "exercises", stem, f"{stem}.ipynb"))
            if c["cell_type"] == "code"]
    setup = code[0]
    assert '"google.colab" in sys.modules' in setup and "%pip install" in setup
    assert f'public_tests("{stem}")' in setup
    # tests_dir is passed explicitly, never the notebook's file name (browsers rename downloads)
    assert re.search(r"otter\.Notebook\(tests_dir=", setup)
    assert f"{stem}.ipynb" not in setup


@pytest.mark.slow
def test_exercises_are_not_stale():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "build_exercises.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="session")
def solved(tmp_path_factory):
    return build_exercises.solution_notebooks(str(tmp_path_factory.mktemp("solutions")))


@pytest.fixture
def quick(monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")


@pytest.mark.slow
@pytest.mark.parametrize("stem", STEMS)
def test_solution_scores_full_marks(stem, solved, quick):
    from brrr.grade import grade
    rows = grade(stem, [solved[stem]], timeout=400)
    assert rows and all(r["possible"] > 0 for r in rows)
    for r in rows:
        assert r["score"] == r["possible"], f"{r['question']}: {r['score']} of {r['possible']}: {r['reason']}"


@pytest.mark.slow
@pytest.mark.parametrize("stem", STEMS)
def test_blank_scores_below_full_marks(stem, quick):
    from brrr.grade import grade
    blank = os.path.join(ROOT, "exercises", stem, f"{stem}.ipynb")
    rows = grade(stem, [blank], timeout=400)
    assert len(rows) == len(glob.glob(os.path.join(ROOT, "exercises", stem, "tests", "q*.py")))
    for r in rows:
        assert r["score"] < r["possible"], r
        assert "untouched blank" in r["reason"]


def _answers(notebook: str, stem: str) -> dict:
    """The namespace a solved notebook leaves, as the scorer reads it (a snapshot, restored)."""
    import nbformat
    from nbclient import NotebookClient
    from brrr.grade.answers import restore
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("from brrr.grade.answers import snapshot as _s\nprint(_s(globals()))"))
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": os.path.join(ROOT, "exercises", stem)}}).execute()
    return restore("".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout"))


@pytest.mark.slow
@pytest.mark.parametrize("stem", STEMS)
def test_every_argument_is_checked_among_right_answers(stem, solved, quick, tmp_path):
    """Every test case passes on the solution's answers and fails when any one of its arguments is
    replaced by a degenerate value (issue 34): the mixed fuzz rarely leaves all but one argument right."""
    import inspect
    import warnings
    from test_exercise_givens import _cases, _mixed_values, _shown
    answers, values, unchecked, tried = _answers(solved[stem], stem), _mixed_values(), [], 0
    cases = list(_cases(os.path.join(ROOT, "exercises", stem, f"{stem}-autograder.zip"), str(tmp_path)))
    for name, fn in cases:
        right = {p: answers[p] for p in inspect.signature(fn).parameters}
        try:
            fn(**right)
        except AssertionError:   # this run's measurement refused (test_solution_scores_full_marks judges that)
            continue
        tried += 1
        for p in right:
            for value in values:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        fn(**{**right, p: value})
                    except Exception:  # noqa: BLE001 - a degenerate argument should fail the case
                        continue
                unchecked.append(f"{name}({p}={_shown(value)})")
    assert tried >= len(cases) // 2, f"only {tried} of {len(cases)} cases passed on the solution's answers"
    assert not unchecked, f"arguments a test case reads without checking: {unchecked}"
