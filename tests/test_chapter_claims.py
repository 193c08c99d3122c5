"""Every chapter, replayed from every record set (the shipped ones, the quick one, and synthetic
sets for GPUs we have no run of), runs without a cell error, and every claim it makes holds.

The replays are made once per session by ``scripts/replay_sets.py`` into ``_build/sets`` (about a
minute a set on two cores). ``BRRR_REUSE_REPLAYS=1`` reuses the notebooks there, and
``BRRR_CHAPTERS="02 08"`` replays only those chapters (for iterating on a chapter). Under ``make
test`` (``BRRR_BUILT_BOOKS=1``), the H200 set is read from the replayed book just built, and the
full book's live run on this machine is checked too (label ``live``).
"""
import json
import os
import re
import sys
from pathlib import Path

import pytest

from brrr import claims

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))
import chapter_claims  # noqa: E402
import replay_sets  # noqa: E402
import synthetic_sets  # noqa: E402

pytestmark = pytest.mark.slow
OUT = ROOT / "_build" / "sets"
GOLDEN = ROOT / "tests" / "data" / "golden"
CHAPTERS = [c.stem for c in replay_sets.CHAPTERS
            if not os.environ.get("BRRR_CHAPTERS") or any(c.stem.startswith(p) for p in os.environ["BRRR_CHAPTERS"].split())]
REAL_SETS = {"nvidia-h200": "nvidia-h200", "nvidia-h100-80gb-hbm3": "nvidia-h100-80gb-hbm3",
             "amd-epyc-2-threads": "amd-epyc-2-threads",
             "quick-amd-epyc-2-threads": str(ROOT / "tests" / "data" / "records" / "quick" / "amd-epyc-2-threads")}
# The chapters whose prose speaks only through claims: the stricter checks below hold for them.
MIGRATED = {"01", "02", "03", "04", "05", "06", "07", "08"}


BUILT = {"nvidia-h200": ROOT / "_build" / "replay" / "_build" / "jupyter_execute" / "chapters",
         "live": ROOT / "_build" / "jupyter_execute" / "chapters"}
USE_BUILT = bool(os.environ.get("BRRR_BUILT_BOOKS"))


@pytest.fixture(scope="session")
def replayed() -> dict:
    """{set label: folder of executed notebooks}, replayed now unless BRRR_REUSE_REPLAYS is set."""
    folders = dict(REAL_SETS)
    synthetic = synthetic_sets.make_all(OUT / "synthetic-records")
    folders.update({label: str(folder) for label, folder in synthetic.items()})
    labelled = {}
    if USE_BUILT:
        labelled.update(BUILT)
        folders.pop("nvidia-h200")
    labelled.update({label: OUT / label for label in folders})
    todo = {label: folder for label, folder in folders.items() if not (os.environ.get("BRRR_REUSE_REPLAYS") and all(
        (OUT / label / f"{c}.ipynb").exists() for c in CHAPTERS))}
    # one pool over every (set, chapter), so both cores stay busy to the end
    replay_sets.replay_sets(list(todo.values()), OUT, [c[:2] for c in CHAPTERS], jobs=2, labels=list(todo))
    return labelled


def _cases():
    labels = list(REAL_SETS) + list(synthetic_sets.DEVICES) + (["live"] if USE_BUILT else [])
    return [pytest.param(label, chapter, id=f"{label}-{chapter[:2]}") for label in labels for chapter in CHAPTERS]


def _cells(replayed, label, chapter):
    return chapter_claims.cells(replayed[label] / f"{chapter}.ipynb")


SPEAKS = ("brrr.prose.", "brrr.claims.say", "brrr.book.answer", "brrr.plot.", "profiler.plot_")


def _shown(output) -> bool:
    data = output.get("data", {})
    return output.get("output_type") == "stream" or "image/png" in data or "text/html" in data or \
        bool("".join(data.get("text/markdown", "")).strip()) or "Answer" in "".join(data.get("text/plain", ""))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_cell_that_says_or_draws_renders_empty_on_the_published_book(replayed, chapter):
    """Each cell of the replayed H200 book that speaks or draws shows it, or names the record it lacks (issue 33)."""
    nb = json.loads((replayed["nvidia-h200"] / f"{chapter}.ipynb").read_text())
    empty = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
             and any(s in re.sub(r"#.*", "", "".join(c["source"])) for s in SPEAKS)
             and not any(_shown(o) for o in c.get("outputs", []))]
    assert not empty, f"{chapter}: cells {empty} render nothing"


@pytest.mark.parametrize("label,chapter", _cases())
def test_a_replayed_chapter_runs_without_a_cell_error(replayed, label, chapter):
    failed = [c["key"][:80] for c in _cells(replayed, label, chapter) if c["error"]]
    assert not failed, f"{label}: {chapter} failed in {len(failed)} cell(s): {failed}"


@pytest.mark.parametrize("label,chapter", _cases())
def test_every_claim_a_chapter_makes_holds(replayed, label, chapter):
    for cell in _cells(replayed, label, chapter):
        page = "\n".join(cell["texts"])
        for data in cell["claims"]:
            try:
                claims.check_all(data, page)
            except (claims.ClaimError, ValueError) as e:
                pytest.fail(f"{label}, {chapter}, cell {cell['key'][:60]!r}: {e}")


@pytest.mark.parametrize("label,chapter", _cases())
def test_a_migrated_chapter_says_at_most_five_sentences_per_run_and_leaves_no_cell_empty(replayed, label, chapter):
    if chapter[:2] not in MIGRATED:
        pytest.skip(f"{chapter} still has prose written before the claims")
    for cell in _cells(replayed, label, chapter):
        if "brrr.prose" in cell["key"] or "brrr.claims" in cell["key"]:
            assert cell["texts"], f"{label}, {chapter}: the cell {cell['key'][:60]!r} shows nothing"
        for text in cell["texts"]:
            for paragraph in text.split("\n\n"):
                sentences = len(re.findall(r"[.!?](?:\s|$)", paragraph.replace("e.g.", "eg")))
                assert sentences <= claims.MOST_SENTENCES, f"{label}, {chapter}: {paragraph[:120]!r}"


def _golden_changes(chapter: str) -> dict:
    path = GOLDEN / "changes" / f"{chapter[:2]}.json"
    return json.loads(path.read_text()) if path.exists() else {"cells": {}, "facts": {}}


@pytest.mark.parametrize("label", ["nvidia-h200", "amd-epyc-2-threads"])
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_outcomes_are_the_golden_ones_unless_a_change_says_why(replayed, label, chapter):
    """The outcomes dumped before the claims (``tests/data/golden/<set>.json``) hold, or
    ``tests/data/golden/changes/<NN>.json`` says where the cell went and why an outcome changed."""
    golden = json.loads((GOLDEN / f"{label}.json").read_text()).get(chapter, [])
    changes = _golden_changes(chapter)
    now = {c["key"]: chapter_claims.categorical(c["facts"]) for c in _cells(replayed, label, chapter)}
    wrong = []
    for cell in golden:
        key = cell["key"]
        moved = changes["cells"].get(key, {"now": key})
        if moved.get("now") is None:
            continue    # the cell went, and the change says why
        facts = now.get(moved["now"])
        if facts is None:
            wrong.append(f"the cell {key[:70]!r} is gone (say where in changes/{chapter[:2]}.json)")
            continue
        for fact, value in cell["facts"].items():
            if facts.get(fact) != value and f"{label} :: {key} :: {fact}" not in changes["facts"] \
                    and f"* :: {key} :: {fact}" not in changes["facts"]:
                wrong.append(f"{key[:50]!r}: {fact} was {value!r}, now {facts.get(fact)!r}")
    assert not wrong, "\n".join(wrong)
