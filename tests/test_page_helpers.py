"""brrr.book: the chapter's opening note (quick banner, live device, reference GPUs) and tables."""
import math

import pandas as pd
import pytest

import brrr
from brrr import book, reference


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
