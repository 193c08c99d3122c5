"""Every notebook reads the same in Jupyter/Colab as in the book: no raw MyST in what a reader sees.

The book's HTML understands MyST (roles such as {glue} or {cite}, directive fences); Jupyter
and Colab render plain CommonMark and show those roles as raw text. The notebooks a reader can
open (chapters, exercises, the appendix notebooks) therefore use only what both understand, and
sentences about measurements come from code cells as Markdown output. This renders each
notebook's Markdown the way Jupyter does (nbconvert's HTML exporter) and looks for leftovers.
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*ROOT.glob("chapters/*.ipynb"), *ROOT.glob("exercises/*/*.ipynb"),
                    *ROOT.glob("book/*.ipynb")])
MYST = [
    # a role: {name} or {domain:name} glued to its content (the backticks render as <code>)
    (re.compile(r"\{[a-z][a-z0-9]*(:[a-z0-9]+)*\}(?=\S)"), "a MyST role such as {cite}`...`"),
    (re.compile(r"(^|\n)\s*(```|~~~|:::)\{"), "a MyST directive fence such as ```{note}"),
    (re.compile(r"(^|\n)\([\w-]+\)=\s*(\n|$)"), "a MyST target such as (label)="),
]


def _rendered_markdown(path: Path) -> str:
    """The text a Jupyter reader sees in the notebook's Markdown cells (nbconvert's HTML)."""
    import nbformat
    from bs4 import BeautifulSoup
    from nbconvert import HTMLExporter
    nb = nbformat.read(str(path), as_version=4)
    nb.cells = [c for c in nb.cells if c.cell_type == "markdown"]
    html, _ = HTMLExporter(template_name="classic").from_notebook_node(nb)
    soup = BeautifulSoup(html, "html.parser")
    text = "\n".join(div.get_text() for div in soup.select("div.text_cell_render"))
    return re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", " MATH ", text, flags=re.S)  # LaTeX braces are not MyST


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 16


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_raw_myst_in_what_jupyter_shows(path):
    text = _rendered_markdown(path)
    assert text.strip(), f"{path.name}: no Markdown rendered at all"
    for pattern, what in MYST:
        match = pattern.search(text)
        assert not match, (f"{path.relative_to(ROOT)} shows {what} as raw text in Jupyter/Colab: "
                           f"...{text[max(0, match.start() - 80):match.end() + 80]}...")


@pytest.mark.parametrize("path", sorted(ROOT.glob("chapters/*.ipynb")), ids=lambda p: p.name)
def test_chapter_opens_with_its_title(path):
    """The first cell is the chapter's title, so nothing (no setup cell) sits above it."""
    import nbformat
    first = nbformat.read(str(path), as_version=4).cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# "), \
        f"{path.name}: the first cell is not the title"
