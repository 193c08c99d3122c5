"""The library's layers, checked from its source: small modules, and imports that only point down.

Layers, bottom to top (README, "Layout"): foundation -> device -> measuring -> workloads ->
presentation -> entry points. Imports inside functions count too: a lazy import is still a
dependency.
"""
import ast
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "brrr")
MOST_LINES = 400

FOUNDATION = {"_release", "config", "checks", "units", "arrays", "hardware", "cache", "specs", "progress",
              "tf32"}
DEVICE = {"cpu_peaks", "device", "results", "record_check"}
MEASURING = {"clocks", "timing", "kernel_source", "kernels", "roofline", "mfu", "recompute_model"}
PRESENTATION = {"plot", "claims", "prose", "widgets", "book"}
ENTRY_POINTS = {"cli", "grade", "__main__"}


def _modules() -> dict:
    """{dotted name: path} of every module of the package."""
    out = {}
    for folder, _, files in os.walk(ROOT):
        if "__pycache__" in folder:
            continue
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                dotted = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
                out[dotted.removesuffix(".__init__")] = path
    return out


MODULES = _modules()


def _unit(dotted: str) -> str:
    """The part of brrr a module belongs to: 'device', 'plot', 'experiments', ..."""
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else ""


def _imports(dotted: str) -> set:
    """The parts of brrr that module ``dotted`` imports, anywhere in it."""
    path = MODULES[dotted]
    package = dotted if path.endswith("__init__.py") else dotted.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = base + ("." + node.module if node.module else "")
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {_unit(n) for n in names if n.split(".")[0] == "brrr" and _unit(n)}
    return found - {_unit(dotted)}


@pytest.mark.parametrize("dotted", sorted(MODULES))
def test_every_module_holds_one_idea_in_at_most_400_lines(dotted):
    with open(MODULES[dotted], encoding="utf-8") as f:
        lines = sum(1 for _ in f)
    assert lines <= MOST_LINES, f"{dotted} has {lines} lines: split it by idea"


@pytest.mark.parametrize("dotted", sorted(MODULES))
def test_imports_point_down_the_layers(dotted):
    unit, imported = _unit(dotted), _imports(dotted)
    if unit in FOUNDATION:
        allowed = FOUNDATION
    elif unit in DEVICE:
        allowed = FOUNDATION | DEVICE
    elif unit in MEASURING:
        allowed = FOUNDATION | DEVICE | MEASURING
    elif unit == "plot":
        allowed = FOUNDATION | DEVICE | MEASURING | {"plot", "fusion_tables", "claims"}   # never the experiments
    elif unit == "claims":
        allowed = FOUNDATION | DEVICE | MEASURING   # sentences from numbers: no experiment, no prose
    else:
        return
    assert imported <= allowed, f"{dotted} imports {sorted(imported - allowed)}, above its layer"


def test_nothing_below_the_entry_points_imports_them():
    for dotted in MODULES:
        if _unit(dotted) in ENTRY_POINTS or dotted == "brrr":
            continue
        assert not _imports(dotted) & ENTRY_POINTS, f"{dotted} imports an entry point"


def test_the_checker_sees_imports():
    """The rules above would pass vacuously if _imports found nothing."""
    assert {"device", "checks", "clocks", "config", "units"} <= _imports("brrr.timing")
    assert "device" in _imports("brrr.plot._base") or "results" in _imports("brrr.plot._base")


def test_no_two_layers_below_the_experiments_import_each_other():
    """A circle of imports (results asked device for its summary, device read results) makes neither
    layer testable alone: the record writer is handed the device summary (issue 33)."""
    below = FOUNDATION | DEVICE | MEASURING
    imports = {u: set() for u in below}
    for dotted in MODULES:
        if _unit(dotted) in below:
            imports[_unit(dotted)] |= _imports(dotted)
    assert not [(a, b) for a in below for b in imports[a] if b in below and a in imports[b]]


PROSE_LINES = 2500    # brrr/prose and brrr/claims together (issue 32: 8,283 lines before the claims)
PROSE_TEST_LINES = 2500


def _lines(paths) -> int:
    return sum(sum(1 for _ in open(p, encoding="utf-8")) for p in paths)


def test_the_prose_and_its_vocabulary_stay_small():
    """Generated text grows with (wordings x devices): the claims keep it to a vocabulary, and this
    keeps the vocabulary and its uses from growing back."""
    prose = [path for dotted, path in MODULES.items() if _unit(dotted) in ("prose", "claims")]
    assert _lines(prose) <= PROSE_LINES, f"brrr/prose and brrr/claims have {_lines(prose)} lines"
    tests = os.path.join(os.path.dirname(ROOT), "tests")
    mine = [os.path.join(tests, n) for n in os.listdir(tests)
            if n.startswith(("test_prose", "test_claims", "test_chapter_claims", "chapter_claims")) and n.endswith(".py")]
    assert _lines(mine) <= PROSE_TEST_LINES, f"the prose tests have {_lines(mine)} lines"


def _private_imports(dotted: str) -> list:
    """The private names (``_x``) module ``dotted`` imports from another brrr module."""
    found = []
    for node in ast.walk(ast.parse(open(MODULES[dotted], encoding="utf-8").read())):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("brrr")):
            found += [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    return found


@pytest.mark.parametrize("dotted", sorted(d for d in MODULES if _unit(d) in ("prose", "claims")))
def test_no_sentence_module_imports_another_ones_private_names(dotted):
    """A private helper shared across modules is a boundary drawn in the wrong place (the prose audit
    found 33 of them): what several modules say goes through the claims' public vocabulary."""
    assert not _private_imports(dotted), f"{dotted} imports {_private_imports(dotted)}: make them public or move them"


def test_the_registry_makes_measurements_without_the_presentation():
    """brrr record runs every recipe with no page: a recipe takes a worked problem's size from the experiments'
    arithmetic, which the answer's sentence uses too, never from the sentence."""
    for dotted in MODULES:
        if _unit(dotted) == "registry":
            assert not _imports(dotted) & PRESENTATION, f"{dotted} imports {sorted(_imports(dotted) & PRESENTATION)}"
