"""Build the book and check the HTML a reader gets.

Two builds are checked. The quick book (``make book-quick``: every chapter executed with
``BRRR_QUICK=1`` and ``-W``, warnings are errors) is built here. The full book, as readers
get it, is built by ``make book`` (which ``make test`` and CI run first) into
``_build/html`` with its log in ``_build/book.log``; its checks are skipped where it has
not been built. The checks read the HTML: every page of the table of contents exists;
each chapter shows numbered, captioned figures with real alt text, no error output, no
raw MyST, no plumbing, an "Open in Colab" link to its notebook and a link to its
exercises; a quick build says so on every chapter and a full build does not; math comes
from the book's own static files, never a CDN, and no page loads widget JavaScript; and
no solution text of the exercises reaches the public site.

Set ``BRRR_BOOK_HTML=path/to/_build/html`` to check an existing quick build instead of
building one (the build-warning test is then skipped).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

slow = pytest.mark.slow  # every test that needs a built book

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "quick"
FULL = ROOT / "_build" / "html"
FULL_LOG = ROOT / "_build" / "book.log"
CHAPTERS = ["01_compute", "02_memory_bandwidth", "03_overhead", "04_fusion",
            "05_recomputation", "06_intensity_of_networks", "07_diagnosing_a_model",
            "08_making_a_model_go_brrr"]
_REPOSITORY = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
# The Colab button opens the notebook of the release the book was built for (_config.yml).
COLAB = (_REPOSITORY["url"].replace("https://github.com/", "https://colab.research.google.com/github/")
         + f"/blob/{_REPOSITORY['branch']}/")
# otter-grader's assign markers: none may appear in the public site.
SOLUTION_MARKERS = ["BEGIN SOLUTION", "END SOLUTION", "# SOLUTION", "SOLUTION NO PROMPT",
                    "BEGIN QUESTION", "END QUESTION", "BEGIN TESTS", "END TESTS",
                    "BEGIN PROMPT", "# HIDDEN", "BEGIN ASSIGNMENT"]
TEXT_SUFFIXES = {".html", ".txt", ".ipynb", ".md", ".js", ".json", ".py"}
# The instructor guide explains the otter format and so names the markers in prose.
MARKERS_ALLOWED_IN = {"book/instructor_guide"}


def _jupyter_book() -> str:
    beside = Path(sys.executable).with_name("jupyter-book")
    found = str(beside) if beside.exists() else shutil.which("jupyter-book")
    if not found:
        pytest.skip("jupyter-book is not installed")
    return found


def _quick_book(request):
    existing = os.environ.get("BRRR_BOOK_HTML")
    if existing:
        html = Path(existing).resolve()
        assert (html / "index.html").is_file(), f"BRRR_BOOK_HTML={existing} has no index.html"
        return {"html": html, "returncode": None, "log": "", "seconds": None, "quick": True}
    # --all: re-read (so re-execute and re-warn) every page, even if an earlier build
    # left its environment in _build/quick; otherwise Sphinx skips unchanged pages.
    cmd = [_jupyter_book(), "build", str(ROOT), "--all", "-W", "-n", "--keep-going",
           "--path-output", str(OUT)]
    env = dict(os.environ, BRRR_QUICK="1")
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    log = proc.stdout + proc.stderr
    (OUT / "build.log").parent.mkdir(parents=True, exist_ok=True)
    (OUT / "build.log").write_text(log)
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\n[test_book] quick book built in {seconds:.0f} s "
              f"(exit {proc.returncode}; log: {OUT / 'build.log'})")
    html = OUT / "_build" / "html"
    assert (html / "index.html").is_file(), "the build produced no HTML:\n" + log[-4000:]
    return {"html": html, "returncode": proc.returncode, "log": log, "seconds": seconds, "quick": True}


def _full_book():
    if not (FULL / "index.html").is_file() or not FULL_LOG.is_file():
        pytest.skip("the full book is not built (run `make book`, as `make test` and CI do)")
    log = FULL_LOG.read_text(errors="replace")
    status = re.search(r"^exit status: (\d+)$", log, re.M)
    return {"html": FULL, "returncode": int(status.group(1)) if status else None, "log": log,
            "seconds": None, "quick": False}


@pytest.fixture(scope="session")
def quick_book(request):
    return _quick_book(request)


@pytest.fixture(scope="session", params=["quick", "full"])
def book(request):
    """A built site: {'html': Path, 'returncode': int|None, 'log': str, 'quick': bool}."""
    if request.param == "quick":
        return request.getfixturevalue("quick_book")
    return _full_book()


def _soup(path: Path):
    from bs4 import BeautifulSoup  # a dependency of the book's Sphinx theme
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _pages(html: Path):
    """The site's pages (not the theme's template fragments under _static/)."""
    return [p for p in sorted(html.rglob("*.html")) if "_static" not in p.relative_to(html).parts]


def _page(book, docname: str) -> Path:
    return book["html"] / f"{docname}.html"


def _toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for entry in part.get("chapters", []):
            files.append(entry["file"])
            files += [s["file"] for s in entry.get("sections", [])]
    return [re.sub(r"\.(ipynb|md)$", "", f) for f in files]


@slow
def test_build_has_no_warnings(book):
    if book["returncode"] is None:
        pytest.skip("checking an existing build (BRRR_BOOK_HTML)")
    warnings = [line for line in book["log"].splitlines() if "WARNING" in line or "ERROR" in line]
    warnings = [w for w in warnings if "Kernel is running over TCP" not in w]
    detail = "\n".join(warnings[:40]) if warnings else book["log"][-3000:]
    assert book["returncode"] == 0 and not warnings, "the -W build reported problems:\n" + detail


@slow
def test_every_toc_page_exists(book):
    missing = [f for f in _toc_files() if not _page(book, f).is_file()]
    assert not missing, f"pages in _toc.yml that were not built: {missing}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_runs_outside_the_book(chapter):
    """On Colab: the first code cell installs brrr, and no cell needs myst_nb (the book's
    builder), which Colab does not have."""
    import json
    cells = json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert '"google.colab" in sys.modules' in code[0] and "%pip install" in code[0], \
        f"{chapter}: the first code cell does not install brrr on Colab"
    for source in code:
        assert "myst_nb" not in source and "glue(" not in source, \
            f"{chapter}: a cell uses myst_nb's glue, which only the book's build has:\n{source[:300]}"


def test_toc_lists_every_chapter():
    files = _toc_files()
    assert [f"chapters/{c}" for c in CHAPTERS] == [f for f in files if f.startswith("chapters/")]


def test_every_cell_of_the_books_notebooks_has_an_id():
    """nbformat 4.5 gives each cell an id, and will refuse cells without one."""
    for path in sorted((ROOT / "chapters").glob("*.ipynb")) + sorted((ROOT / "book").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        assert all("id" in c for c in cells), f"{path.name} has cells without an id"


@slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_page(book, chapter):
    page = _page(book, f"chapters/{chapter}")
    assert page.is_file(), f"{page} was not built"
    soup = _soup(page)
    outputs = soup.select("div.cell_output")
    assert outputs, f"{chapter}: no executed output at all"

    # At least one figure, embedded or as an image file that was copied.
    figures = []
    for img in soup.select("div.cell_output img"):
        src = img.get("src", "")
        if src.startswith("data:image/"):
            figures.append(src[:30])
        elif src and (page.parent / src).resolve().is_file():
            figures.append(src)
    assert figures, f"{chapter}: no figure in any cell output"

    # No error output: tracebacks, or errors written to stderr.
    tracebacks = soup.select(".output.traceback")
    assert not tracebacks, f"{chapter}: error output:\n{tracebacks[0].get_text()[:1500]}"
    for out in outputs:
        text = out.get_text()
        assert "Traceback (most recent call last)" not in text, f"{chapter}: traceback:\n{text[:1500]}"
    for err in soup.select(".output.stderr"):
        text = err.get_text()
        assert not re.search(r"\b\w*Error\b|Exception\b", text), f"{chapter}: error on stderr:\n{text[:1500]}"

    # An "Open in Colab" link to this very notebook, and one to the chapter's exercises.
    links = [a["href"] for a in soup.find_all("a", href=True)]
    assert f"{COLAB}chapters/{chapter}.ipynb" in links, f"{chapter}: no Colab link to its notebook"
    assert f"../exercises/{chapter}/{chapter}.html" in links, f"{chapter}: no link to its exercises"

    # Figures: numbered, captioned, with alt text that describes them (not a file name).
    figs = soup.select("figure")
    assert figs, f"{chapter}: no numbered figure"
    for fig in figs:
        number = fig.select_one(".caption-number")
        caption = fig.select_one("figcaption")
        img = fig.find("img")
        assert number and re.match(r"Fig\. \d+\.\d+", number.get_text()), f"{chapter}: a figure without a number"
        assert caption and len(caption.get_text(strip=True)) > 30, f"{chapter}: a figure without a caption"
        alt = (img.get("alt") or "") if img else ""
        assert len(alt) > 30 and not re.search(r"\.(png|svg|jpe?g)\b|^_?build/|^/", alt), \
            f"{chapter}: figure alt text does not describe it: {alt!r}"
    # Every link to a figure on the page resolves to one.
    ids = {tag.get("id") for tag in soup.find_all(id=True)}
    for a in soup.select('a[href^="#fig-"]'):
        assert a["href"][1:] in ids, f"{chapter}: a link to {a['href']}, which is not on the page"

    # What readers see is the book, not its plumbing or raw MyST.
    article = soup.select_one("article") or soup
    text = article.get_text(" ")
    for leftover in ("{glue", "{cite}", "{doc}", "{numref}", "<IPython.core.display", "myst_nb",
                     "brrr.prose.", "brrr.book.intro", "HBox(children", "FloatProgress"):
        assert leftover not in text, f"{chapter}: the page shows {leftover!r}"
    for cell in article.select("table"):
        cells = [td.get_text(strip=True) for td in cell.find_all("td")]
        assert not {"nan", "NaN", "None"} & set(cells), f"{chapter}: a table shows nan or None"

    # A quick build says so at the top of every chapter; a full build does not.
    banner = "Quick build: do not read the numbers on this page"
    assert (banner in text) == book["quick"], \
        f"{chapter}: the quick-build banner is {'missing' if book['quick'] else 'shown in a full build'}"


def _local(src: str) -> bool:
    return not re.match(r"^([a-z][a-z0-9+.-]*:)?//", src, re.I) and not src.startswith("data:")


@slow
def test_scripts_and_styles_are_served_locally(book):
    """No page loads a script or stylesheet from the network, and every local one exists."""
    html = book["html"]
    problems = []
    for page in _pages(html):
        soup = _soup(page)
        refs = [s["src"] for s in soup.find_all("script", src=True)]
        refs += [link["href"] for link in soup.find_all("link", href=True)
                 if "stylesheet" in (link.get("rel") or [])]
        for ref in refs:
            if not _local(ref):
                problems.append(f"{page.relative_to(html)}: loads {ref}")
            elif not (page.parent / ref.split("?")[0]).resolve().is_file():
                problems.append(f"{page.relative_to(html)}: {ref} does not exist")
    assert not problems, "\n".join(problems[:30])


@slow
def test_math_is_vendored_and_no_page_loads_widget_javascript(book):
    html = book["html"]
    vendor = html / "_static" / "vendor"
    for rel in ["mathjax/tex-chtml-full.js", "mathjax/output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff"]:
        assert (vendor / rel).is_file(), f"_static/vendor/{rel} is missing"
    math_pages = 0
    for page in _pages(html):
        text = page.read_text(encoding="utf-8")
        srcs = [s["src"] for s in _soup(page).find_all("script", src=True)] if "<script" in text else []
        if "mathjax" in text.lower() and ("\\(" in text or "\\[" in text):
            math_pages += 1
            assert any("_static/vendor/mathjax/tex-chtml-full.js" in s for s in srcs), \
                f"{page}: has math but does not load the vendored MathJax"
        # Progress bars leave nothing behind and the explorer shows its picture: no widgets.
        assert "application/vnd.jupyter.widget-state+json" not in text, f"{page}: carries widget state"
        assert "application/vnd.jupyter.widget-view+json" not in text, f"{page}: embeds a widget view"
        assert not any("embed-amd" in s or "require.js" in s for s in srcs), f"{page}: loads widget JS"
    assert math_pages, "no page with math was found (the intro has some)"


@slow
def test_no_solutions_in_public_html(book):
    html = book["html"]
    assert not list(html.glob("solutions/**/*")), "solutions/ was published"
    found = []
    for path in html.rglob("*"):
        rel = path.relative_to(html).as_posix()
        doc = re.sub(r"^_sources/", "", rel).split(".")[0]
        if path.is_file() and path.suffix in TEXT_SUFFIXES and doc not in MARKERS_ALLOWED_IN:
            text = path.read_text(encoding="utf-8", errors="replace")
            # otter keeps these comments around hand-graded questions (for its PDF export)
            text = re.sub(r"<!-- (BEGIN|END) QUESTION -->", "", text)
            for marker in SOLUTION_MARKERS:
                if marker in text:
                    found.append(f"{path.relative_to(html)}: {marker!r}")
    assert not found, "solution markers in the public HTML:\n" + "\n".join(found[:30])


@slow
def test_exercises_are_shown_unexecuted(book):
    exercises = [f for f in _toc_files() if f.startswith("exercises/")]
    if not exercises:
        pytest.skip("no Exercises part in _toc.yml yet")
    for doc in exercises:
        soup = _soup(_page(book, doc))
        assert not soup.select("div.cell_output img"), f"{doc}: was executed (has figures)"


@slow
def test_device_table_page(book):
    page = _page(book, "book/device_table")
    soup = _soup(page)
    tables = soup.select("div.cell_output table")
    assert tables, "the device table was not rendered by the executed notebook"
    text = soup.get_text()
    from brrr.specs import GPU_SPECS
    for spec in GPU_SPECS.values():
        assert spec.name in text, f"{spec.name} is missing from the device table"
        assert spec.source in text, f"the source of {spec.name} is missing"


@slow
def test_bibliography_lists_the_references(book):
    text = _soup(_page(book, "book/bibliography")).get_text().lower()
    for needle in ["Making Deep Learning Go Brrrr", "Roofline", "Data Movement Is All You Need",
                   "Sublinear Memory Cost", "FlashAttention", "Data-type Aware Arithmetic Intensity"]:
        assert needle.lower() in text, f"{needle!r} is missing from the references page"


@slow
def test_math_renders_offline_and_the_explorer_is_a_picture(quick_book):
    """Headless Chromium, no network: MathJax renders, and chapter 2's roofline explorer
    appears as its picture (a figure with an image), not as an empty widget area."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        pytest.skip("chromium is not installed")
    page = quick_book["html"] / "chapters" / "02_memory_bandwidth.html"
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run",
             f"--user-data-dir={profile}", "--virtual-time-budget=20000", "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=180)
    dom = proc.stdout
    assert "<mjx-container" in dom, f"{page.name}: MathJax rendered no math"
    from bs4 import BeautifulSoup
    explorer = BeautifulSoup(dom, "html.parser").find(id="fig-explorer")
    assert explorer is not None and explorer.find("img"), "the roofline explorer is not shown as a figure"


def test_vendored_javascript_is_small_and_complete():
    """The committed JS the offline site needs (see scripts/vendor_js.py)."""
    vendor = ROOT / "book" / "static" / "vendor"
    files = [p for p in vendor.rglob("*") if p.is_file()]
    names = {p.relative_to(vendor).as_posix() for p in files}
    for need in ["mathjax/tex-chtml-full.js"]:
        assert need in names, f"book/static/vendor/{need} is missing (run scripts/vendor_js.py)"
    assert sum(p.stat().st_size for p in files) < 4e6, "vendored JavaScript grew past 4 MB"
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    assert config["nb_ipywidgets_js"] == {}, "the static site loads no widget JavaScript"
    for path in [config["mathjax_path"]]:
        assert path.startswith("vendor/") and path[len("vendor/"):] in names, \
            f"_config.yml points at {path}, which book/static/ does not hold"


def test_vendored_javascript_matches_package_lock():
    """book/static/vendor is what `npm ci` + scripts/vendor_js.py produce (needs node_modules)."""
    if not (ROOT / "node_modules" / "mathjax").is_dir():
        pytest.skip("node_modules is absent (run `npm ci --ignore-scripts` to check the vendored JS)")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "vendor_js.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@slow
def test_reference_page_lists_and_draws_the_shipped_runs(book):
    soup = _soup(_page(book, "book/reference_measurements"))
    assert not soup.select(".output.traceback")
    text = soup.get_text()
    assert "brrr record --out" in text and "brrr.reference.measure(name)" in text
    from brrr import reference
    for runs in reference.record_sets().values():
        name = next(iter(runs.values())).meta["device"]["name"]
        assert name in text, f"the reference page does not list {name}"
    figures = soup.select("figure img")
    assert len(figures) >= 4, f"{len(figures)} figures on the reference page, expected the four kinds"


@slow
def test_instructor_edition_builds_cleanly():
    """`make solutions`: the book with the masters, warnings as errors, chapters executed."""
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_solutions_book.py")],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800)
    log = proc.stdout + proc.stderr
    warnings = [w for w in log.splitlines() if "WARNING" in w and "Kernel is running over TCP" not in w]
    assert proc.returncode == 0 and not warnings, "instructor build:\n" + "\n".join(warnings[:20]) + log[-2000:]
    html = ROOT / "_build" / "solutions" / "_build" / "html"
    masters = sorted(html.glob("solutions/*/*.html"))
    assert len(masters) == len(CHAPTERS), f"{len(masters)} master pages in the instructor edition"
    assert "BEGIN SOLUTION" in masters[0].read_text(encoding="utf-8") or \
        "# SOLUTION" in masters[0].read_text(encoding="utf-8")
    page = _soup(html / "chapters" / "02_memory_bandwidth.html").get_text(" ")
    assert "Measured on this page" in page and "{glue" not in page
