"""brrr.book: the chapter's opening note (quick banner, live device, reference GPUs) and tables."""
import math

import pandas as pd
import pytest

import brrr
from brrr import book, config, reference


def test_intro_names_the_device_and_the_reference_gpus(monkeypatch):
    monkeypatch.delenv("BRRR_QUICK", raising=False)
    text = str(book.intro(chapter=2))
    assert brrr.device().name in text and "Quick build" not in text
    gpus = [r.meta["device"]["name"] for r in reference.load("measure_roofline")]
    for name in gpus:
        assert name in text
    if brrr.device().backend == "cpu":
        assert "no CUDA GPU was found" in text and "measured on this CPU" in text


def test_intro_in_quick_mode_opens_with_the_banner(monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")
    p = book.intro(chapter=2)
    assert str(p).startswith("> **Quick build: do not read the numbers on this page.**")
    assert book.QUICK_CAVEATS[2] in str(p) and p.facts["quick"] is True


def test_table_formats_units_and_hides_missing_values():
    frame = pd.DataFrame({"case": ["a", "b"], "time": [1.5e-6, 2.25e-3], "bytes": [4096, 2 ** 30],
                          "ratio": [1.23456, math.nan], "n": [1024, 2048]})
    html = book.table(frame, {"time": "time", "bytes": "bytes", "ratio": "ratio"}).to_html()
    for shown in ("1.5 µs", "2.25 ms", "4 KiB", "1 GiB", "1.23", "–", "1,024"):
        assert shown in html
    assert "nan" not in html.lower() and "None" not in html
    with pytest.raises(ValueError, match="not a column"):
        book.table(frame, {"missing": "time"})
    with pytest.raises(TypeError, match="DataFrame"):
        book.table([1, 2])


# --- the banner's reference sentence, per chapter (review B:M2) ---------------------------

def _runs(backend, name, dates):
    from brrr.results import Result
    return {exp: Result(exp, [], {"device": {"backend": backend, "name": name}, "date": f"{d}T00:00:00"})
            for exp, d in dates.items()}


@pytest.fixture
def shipped(monkeypatch):
    """Replace the shipped reference runs by synthetic ones: ``shipped(gpu={...}, cpu={...})``."""
    def use(gpu=None, cpu=None):
        sets = {}
        if gpu:
            sets["gpu-x"] = _runs("cuda", "GPU X", gpu)
        if cpu:
            sets["cpu-y"] = _runs("cpu", "CPU Y", cpu)
        monkeypatch.setattr(reference, "record_sets", lambda folder=None: sets)
    return use


def test_banner_when_no_gpu_run_ships_at_all(shipped):
    shipped(cpu={"checkpoint_sweep": "2026-01-01"})
    assert "No reference GPU runs ship with this copy" in book._references_sentence(5)


def test_banner_when_none_of_the_chapters_experiments_has_a_gpu_run(shipped, monkeypatch):
    shipped(gpu={"matmul_vs_size": "2026-01-01"}, cpu={"checkpoint_sweep": "2026-01-01"})
    text = book._references_sentence(5)
    assert text.startswith("No reference GPU run of this chapter's experiments ships")
    assert "GPU X" not in text and "each figure draws" not in text
    monkeypatch.setenv(config.REPLAY_ENV, "elsewhere")    # a replayed page is itself a GPU's run
    config.reread()
    try:
        assert book._references_sentence(5).startswith("No other GPU's run of this chapter's experiments ships")
    finally:
        monkeypatch.delenv(config.REPLAY_ENV)
        config.reread()


def test_banner_when_some_of_the_chapters_experiments_have_a_gpu_run(shipped):
    shipped(gpu={"checkpoint_sweep": "2026-01-02", "matmul_vs_size": "2026-01-01"})
    text = book._references_sentence(5)
    assert text.startswith("Of this chapter's 2 experiments, 1 (`checkpoint_sweep`) has a reference run")
    assert "GPU X (measured 2026-01-02)" in text and "the other 1 show this run alone" in text


def test_banner_when_every_experiment_of_the_chapter_has_a_gpu_run(shipped):
    shipped(gpu={"checkpoint_sweep": "2026-01-02", "compiled_recompute": "2026-01-03"})
    text = book._references_sentence(5)
    assert text.startswith("Beside this run, each figure draws in grey")
    assert "GPU X (measured 2026-01-02 to 2026-01-03)" in text


def test_banner_of_a_page_that_is_not_a_chapter_names_every_reference_gpu(shipped):
    shipped(gpu={"matmul_vs_size": "2026-01-01"})
    text = book._references_sentence(None)
    assert "GPU X (measured 2026-01-01)" in text and "where a reference run of that experiment ships" in text


def test_chapter_experiments_match_the_chapters_beside_calls():
    """Each chapter's list names as many experiments as it has ``beside`` calls, including
    every name a call spells out; every shipped experiment belongs to a chapter: drawn beside its run,
    or measured by it (``reference.measure``: a replayed page reads it from the set)."""
    import re
    from pathlib import Path
    import nbformat
    root = Path(__file__).resolve().parents[1]
    measured = set()
    for path in sorted((root / "chapters").glob("0*.ipynb")):
        chapter = int(path.name[:2])
        source = "\n".join(c.source for c in nbformat.read(str(path), 4).cells if c.cell_type == "code")
        calls = re.findall(r"reference\.beside\(([^\n]*)", source)
        named = re.findall(r"reference\.beside\([^\n]*?,\s*\"([a-z_0-9]+)\"", source)
        measured |= set(re.findall(r"reference\.measure\(\s*\"([a-z_0-9]+)\"", source))
        own = book.CHAPTER_EXPERIMENTS[chapter]
        assert len(calls) == len(own), (path.name, calls, own)
        assert set(named) <= set(own), (path.name, named, own)
    listed = {name for names in book.CHAPTER_EXPERIMENTS.values() for name in names}
    assert {"capstone_steps", "worked_forward_ridge", "capstone_call_cost"} <= measured     # the pattern finds them
    for runs in reference.record_sets().values():
        assert set(runs) <= listed | measured, set(runs) - listed - measured


def test_every_worked_answer_hides_its_code():
    """A worked problem's answer is collapsed on the page; the cell that computes it must not show the call (the
    reader would see which function answers it before predicting)."""
    from pathlib import Path
    import nbformat
    root = Path(__file__).resolve().parents[1]
    shown = [(path.name, c.get("id")) for path in sorted((root / "chapters").glob("0*.ipynb"))
             for c in nbformat.read(str(path), 4).cells
             if c.cell_type == "code" and "book.answer(" in c.source
             and "remove-input" not in c.metadata.get("tags", [])]
    assert not shown, shown
