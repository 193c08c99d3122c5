"""The exercise a batch is graded against: its autograder zip, its tests, its student files."""
from __future__ import annotations

import glob
import json
import os
import zipfile
from dataclasses import dataclass, field
from typing import Optional

AUTOGRADER_SUFFIX = "-autograder.zip"
ANSWER_TAG = "otter_answer_cell"  # otter assign tags the cells students fill in
MAX_NOTEBOOK_BYTES = 16 << 20     # a larger submission is refused unparsed (the grader's memory)


@dataclass
class Exercise:
    """An exercise: its autograder zip, its blank notebook and public tests folder if known."""
    name: str
    autograder: str
    blank: Optional[str] = None
    public_tests: Optional[str] = None
    _questions: Optional[dict] = field(default=None, repr=False)

    def extract_tests(self, folder: str) -> str:
        """Unpack the autograder's tests (public and hidden) into ``folder``; return their folder."""
        tests = os.path.join(folder, "tests")
        os.makedirs(tests, exist_ok=True)
        with zipfile.ZipFile(self.autograder) as archive:
            for name in archive.namelist():
                base = os.path.basename(name)
                if name.startswith("tests/") and base.endswith(".py") and name.count("/") == 1:
                    with open(os.path.join(tests, base), "wb") as f:
                        f.write(archive.read(name))
        return tests

    def questions(self) -> dict:
        """Question name -> points possible, from the tests in the autograder zip."""
        if self._questions is None:
            import tempfile

            from otter.nbmeta_config import NBMetadataConfig
            from otter.test_files import create_test_file
            with tempfile.TemporaryDirectory() as tmp:
                tests = self.extract_tests(tmp)
                self._questions = {}
                for path in sorted(glob.glob(os.path.join(tests, "*.py"))):
                    test = create_test_file(path, NBMetadataConfig())
                    self._questions[test.name] = float(test.possible)
        return dict(self._questions)


def _repository_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def check_autograder(path: str) -> None:
    """Raise ValueError unless ``path`` is an otter autograder zip with at least one test."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            config = json.loads(archive.read("otter_config.json")) if "otter_config.json" in names else None
    except (OSError, zipfile.BadZipFile, ValueError) as error:
        raise ValueError(f"exercise: {path!r} is not a readable autograder zip ({error})") from None
    tests = [n for n in names if n.startswith("tests/") and n.endswith(".py")]
    if config is None or "run_autograder" not in names or not tests:
        raise ValueError(f"exercise: {path!r} is not an otter autograder (it needs otter_config.json, "
                         "run_autograder and tests/*.py; build one with scripts/build_exercises.py)")


def find_exercise(exercise: str) -> Exercise:
    """Resolve EXERCISE: an autograder zip, an exercise folder, or a name like '01_compute'."""
    if not isinstance(exercise, str) or not exercise:
        raise ValueError(f"exercise must be a name, folder or autograder zip, got {exercise!r}")
    if exercise.endswith(".zip"):
        if not os.path.isfile(exercise):
            raise ValueError(f"exercise: no autograder zip at {exercise!r}")
        zips, folder = [os.path.abspath(exercise)], os.path.dirname(os.path.abspath(exercise))
    else:
        candidates = [exercise] if os.path.isdir(exercise) else [
            os.path.join("exercises", exercise), os.path.join(_repository_root(), "exercises", exercise)]
        zips, folder = [], None
        for candidate in candidates:
            zips = sorted(os.path.abspath(z) for z in glob.glob(os.path.join(candidate, "*" + AUTOGRADER_SUFFIX)))
            if zips:
                folder = os.path.abspath(candidate)
                break
        if not zips:
            raise ValueError(f"exercise: found no '*{AUTOGRADER_SUFFIX}' for {exercise!r} (looked in "
                             f"{', '.join(candidates)}); pass a name like '01_compute', an exercises/ "
                             "folder or the autograder zip itself")
    check_autograder(zips[0])
    notebooks = sorted(glob.glob(os.path.join(folder, "*.ipynb")))
    tests = os.path.join(folder, "tests")
    name = os.path.basename(zips[0])
    name = name[: -len(AUTOGRADER_SUFFIX)] if name.endswith(AUTOGRADER_SUFFIX) else name[:-4]
    return Exercise(name, zips[0], notebooks[0] if len(notebooks) == 1 else None,
                    tests if glob.glob(os.path.join(tests, "*.py")) else None)


def answers_of(nb: dict) -> list:
    """The source of every answer cell, in order."""
    return [_source(cell) for cell in nb.get("cells", []) if ANSWER_TAG in cell.get("metadata", {}).get("tags", [])]


def code_of(nb: dict) -> list:
    """The source of every code cell that holds any code, stripped, in order."""
    sources = (_source(cell).strip() for cell in nb.get("cells", []) if cell.get("cell_type") == "code")
    return [s for s in sources if s]


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def linked_component(path: str) -> str:
    """The first part of ``path``, as given, that is a symbolic link (a folder on the way or the
    file itself), or '' when there is none. A relative path's parts are checked from the current
    folder, whose own ancestors are the grader's choice."""
    current = os.sep if os.path.isabs(path) else ""
    for part in path.split(os.sep):
        if part in ("", "."):
            continue
        current = os.path.join(current, part)
        if os.path.islink(current):
            return current
    return ""


def read_submission(path: str):
    """(notebook dict, "") or (None, reason) when it is not a readable notebook. At most
    :data:`MAX_NOTEBOOK_BYTES` are read: a larger file is refused before it is parsed."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_NOTEBOOK_BYTES + 1)
    except OSError as error:
        return None, f"could not read the file: {error}"
    if len(data) > MAX_NOTEBOOK_BYTES:
        return None, (f"{os.path.basename(path)} is over {MAX_NOTEBOOK_BYTES >> 20} MiB, the most a notebook "
                      "may be (clear its outputs and hand it in again)")
    try:
        nb = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        return None, f"could not read the file: {error}"
    except json.JSONDecodeError as error:
        return None, f"not valid JSON (a corrupt or truncated notebook): {error}"
    except RecursionError:
        return None, "not valid JSON (nested too deep)"
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return None, "valid JSON but not a notebook (no list of cells)"
    try:
        import nbformat
        nbformat.validate(nbformat.from_dict(nb))
    except Exception as error:  # nbformat raises several kinds of errors
        return None, f"not a valid notebook: {str(error).splitlines()[0]}"
    return nb, ""


def is_untouched(nb: dict, blank_path: Optional[str]) -> bool:
    """True when every code cell still reads as in the blank exercise (none added, none changed)."""
    if blank_path is None:
        return False
    with open(blank_path, encoding="utf-8") as f:
        blank = json.load(f)
    # every code cell, not only the tagged answer cells: answers may sit in cells a student added
    return bool(answers_of(blank)) and code_of(nb) == code_of(blank)
