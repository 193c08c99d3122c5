"""A toy otter exercise for the grader's tests: three questions, small and fast.

q1 (public): ``answer_one == 42``. q2 (hidden): ``peak_used`` within 3x of the bandwidth the
grader measured for the batch. q3 (hidden): ``secret`` equals a word that appears only in
the hidden test, so a submission that reads the hidden tests can be caught scoring it.
With ``givens=True``, q4 (hidden) checks a timing the way the real exercises do (the
``brrr.grade.context`` helpers): the given size ``n``, the ``sizes`` timed, the Timing ``t`` of
an n x n matmul and the ``rate`` from it, so that degenerate values can be caught scoring it.
"""
import json
import os
import zipfile

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

SECRET = "swordfish-7c1e"
HEAD = "from otter.test_files import test_case\nOK_FORMAT = False\npoints = None\n"
TESTS = {
    "q1": HEAD + 'name = "q1"\n@test_case(points=1, hidden=False)\ndef test_value(answer_one):\n'
                 '    assert answer_one == 42, "the answer is 42"\n',
    "q2": HEAD + 'name = "q2"\n@test_case(points=2, hidden=True)\ndef test_device(peak_used):\n'
                 '    from brrr.grade.context import grader_device, within\n'
                 '    assert within(peak_used, grader_device()["peak_bandwidth"], 3)\n',
    "q3": HEAD + 'name = "q3"\n@test_case(points=1, hidden=True)\ndef test_secret(secret):\n'
                 f'    assert secret == "{SECRET}"\n',
}
CORRECT = ["answer_one = 42", "import brrr\npeak_used = brrr.device().peak_bandwidth", f"secret = {SECRET!r}"]
GIVENS_TEST = HEAD + '''name = "q4"
@test_case(points=1, hidden=True)
def test_timing(n, t):
    from brrr.grade.context import measured, whole
    flops = 2 * whole("n", n) ** 3
    assert measured("t", t, flops).flops == flops, "t should time an n x n matmul, with flops"
@test_case(points=1, hidden=True)
def test_sizes(sizes):
    from brrr.grade.context import filled, whole
    for key, size in filled("sizes", sizes, keys=["small"]).items():
        whole(f"sizes[{key!r}]", size)
@test_case(points=1, hidden=True)
def test_rate(n, t, rate):
    from brrr.grade.context import measured, positive, whole
    flops = 2 * whole("n", n) ** 3
    expected = flops / measured("t", t, flops).median
    assert abs(positive("rate", rate) - expected) <= 0.01 * expected, "rate is 2 n^3 / t.median"
'''
GIVENS_BLANK = "n = 64\nsizes = ...\nt = ...\nrate = ..."
GIVENS_CORRECT = ("import brrr, numpy as np\nn = 64\nsizes = {'small': n}\na = np.ones((n, n), np.float32)\n"
                  "t = brrr.bench(lambda: a @ a, flops=2 * n ** 3)\nrate = 2 * n ** 3 / t.median")


def notebook(path, *cells) -> str:
    nb = new_notebook()
    nb.cells = [new_code_cell(c) for c in cells]
    nbformat.write(nb, str(path))
    return str(path)


def make_exercise(folder, givens: bool = False) -> str:
    """Write exercises-style files (blank, public tests, autograder zip) into ``folder``; with
    ``givens``, question q4 too (answered by ``GIVENS_CORRECT``)."""
    folder = str(folder)
    os.makedirs(os.path.join(folder, "tests"), exist_ok=True)
    with open(os.path.join(folder, "tests", "q1.py"), "w", encoding="utf-8") as f:
        f.write(TESTS["q1"])
    with zipfile.ZipFile(os.path.join(folder, "toy-autograder.zip"), "w") as z:
        z.writestr("otter_config.json", json.dumps({"lang": "python"}))
        z.writestr("run_autograder", "#!/usr/bin/env bash\n")
        for name, text in TESTS.items():
            z.writestr(f"tests/{name}.py", text)
        if givens:
            z.writestr("tests/q4.py", GIVENS_TEST)
    notebook(os.path.join(folder, "toy.ipynb"), "answer_one = ...", "peak_used = ...", "secret = ...",
             *([GIVENS_BLANK] if givens else []))
    return folder
