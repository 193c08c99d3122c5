"""Score a snapshot of answers against an exercise's tests, in a process of its own.

The scorer is started by the grader for each submission. It reads the submission's answers
as data (``brrr.grade.answers.restore``: nothing in them is executed), rebuilds a namespace
from them and runs every test file of the autograder with otter-grader's own test runner.
The submission never controlled this process and never saw these tests.

    python -m brrr.grade.score TESTS_DIR SNAPSHOT OUT
"""
from __future__ import annotations

import glob
import json
import os
import sys

from ..cache import write_text

MAX_SNAPSHOT_BYTES = 16_000_000


def score(tests_dir: str, snapshot_text: str) -> dict:
    """{question: {score, possible, cases, failed}} for every test file in ``tests_dir``."""
    from otter.nbmeta_config import NBMetadataConfig
    from otter.test_files import create_test_file

    from .answers import restore
    namespace = restore(snapshot_text) if snapshot_text else {}
    questions = {}
    for path in sorted(glob.glob(os.path.join(tests_dir, "*.py"))):
        test = create_test_file(path, NBMetadataConfig())
        try:
            test.run(dict(namespace))
            results = test.test_case_results
            failed = [f"{_label(r)}" + (f" ({_last_line(r.message)})" if _last_line(r.message) else "")
                      for r in results if not r.passed]
            questions[test.name] = {"score": float(test.score), "possible": float(test.possible),
                                    "cases": len(results), "failed": failed}
        except Exception as error:  # a test that cannot run on this answer scores nothing
            questions[test.name] = {"score": 0.0, "possible": float(test.possible),
                                    "cases": len(test.test_cases),
                                    "failed": [f"the checks could not run ({type(error).__name__}: {error})"]}
    return questions


def _label(result) -> str:
    name = result.test_case.name or getattr(result.test_case.body, "test_func", None)
    return getattr(name, "__name__", name) or "a test case"


def _last_line(message: str) -> str:
    lines = [line.strip() for line in (message or "").splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def main(argv=None) -> int:
    tests_dir, snapshot, out = (argv if argv is not None else sys.argv[1:])[:3]
    text = ""
    if os.path.isfile(snapshot) and os.path.getsize(snapshot) <= MAX_SNAPSHOT_BYTES:
        with open(snapshot, encoding="utf-8", errors="replace") as f:
            text = f.read()
    result = {"questions": score(tests_dir, text)}
    write_text(out, json.dumps(result))   # atomic: the grader never reads half a result
    return 0


if __name__ == "__main__":
    sys.exit(main())
