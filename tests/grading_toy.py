"""A toy otter exercise for the grader's tests: three questions, small and fast.

q1 (public): ``answer_one == 42``. q2 (hidden): ``peak_used`` within 3x of the bandwidth the
grader measured for the batch. q3 (hidden): ``secret`` equals a word that appears only in
the hidden test, so a submission that reads the hidden tests can be caught scoring it.
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


def notebook(path, *cells) -> str:
    nb = new_notebook()
    nb.cells = [new_code_cell(c) for c in cells]
    nbformat.write(nb, str(path))
    return str(path)


def make_exercise(folder) -> str:
    """Write exercises-style files (blank, public tests, autograder zip) into ``folder``."""
    folder = str(folder)
    os.makedirs(os.path.join(folder, "tests"), exist_ok=True)
    with open(os.path.join(folder, "tests", "q1.py"), "w", encoding="utf-8") as f:
        f.write(TESTS["q1"])
    with zipfile.ZipFile(os.path.join(folder, "toy-autograder.zip"), "w") as z:
        z.writestr("otter_config.json", json.dumps({"lang": "python"}))
        z.writestr("run_autograder", "#!/usr/bin/env bash\n")
        for name, text in TESTS.items():
            z.writestr(f"tests/{name}.py", text)
    notebook(os.path.join(folder, "toy.ipynb"), "answer_one = ...", "peak_used = ...", "secret = ...")
    return folder
