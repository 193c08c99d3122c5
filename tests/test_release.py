"""The published package and location: one name, one address, one release, everywhere.

_config.yml's ``repository.url``, ``repository.branch`` (the release tag) and ``html.baseurl``
are the one source; scripts/sync_release.py derives every copy. These tests check that every
copy agrees, that no install line names PyPI's unrelated ``brrr``, that the licences and the
Python versions tell one story, that the dependency ranges keep Colab's preinstalled packages,
and (slow) that the wheel built by ``python -m build`` works in a clean virtual environment
from a folder outside the repository.
"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

import brrr
from brrr import _release

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = (ROOT / "pyproject.toml").read_text()

# Colab's GPU image (2026-08): the versions a reader there already has (project issue 15).
COLAB = {"python": "3.13", "torch": "2.11.0", "cupy-cuda12x": "14.0.1", "numba": "0.61.2",
         "numpy": "2.1.3", "matplotlib": "3.10.0", "ipywidgets": "7.7.1"}
SUPPORTED_PYTHONS = ["3.10", "3.11", "3.12", "3.13"]


def _sync():
    spec = importlib.util.spec_from_file_location("sync_release", ROOT / "scripts" / "sync_release.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _text_files():
    sync = _sync()
    return [p for pattern in sync.TEXT_FILES for p in sorted(ROOT.glob(pattern))]


def _requirements():
    """{name: Requirement} for pyproject's dependencies and every extra."""
    import tomllib
    project = tomllib.loads(PYPROJECT)["project"]
    listed = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    return {Requirement(r).name: Requirement(r) for r in listed}


# --- one published location ------------------------------------------------------------

def test_every_copy_agrees_with_config():
    todo = _sync().changes()
    assert not todo, ("these disagree with _config.yml; run python scripts/sync_release.py: "
                      + ", ".join(str(p.relative_to(ROOT)) for p in todo))


def test_release_module_is_the_config():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert _release.REPOSITORY == config["repository"]["url"]
    assert _release.TAG == config["repository"]["branch"] == f"v{_release.VERSION}"
    assert _release.SITE == config["html"]["baseurl"]
    assert brrr.__version__ == _release.VERSION
    from brrr import grade
    assert grade.REPOSITORY_RAW.endswith(f"/{_release.TAG}"), "public tests must come from the release tag"


def test_sync_rewrites_every_old_form():
    sync = _sync()
    r = {"DISTRIBUTION": "brrr-book", "VERSION": "1.2.3", "TAG": "v1.2.3", "ORG": "o", "REPO": "r",
         "REPOSITORY": "https://github.com/o/r", "SITE": "https://o.github.io/r/"}
    old = {"REPOSITORY": "https://github.com/old/brrr", "SITE": "https://old.example/"}
    text = ('%pip install -q \\"brrr[torch] @ git+https://github.com/old/brrr\\"\n'
            'pip install "brrr-book[torch,grading] @ git+https://github.com/old/brrr@v0.1.0"\n'
            "https://colab.research.google.com/github/old/brrr/blob/main/chapters/x.ipynb\n"
            "git clone https://github.com/old/brrr\ncd brrr\nsee https://old.example/ and "
            "https://github.com/old/brrr/issues\n")
    new = sync.rewrite(text, r, old)
    assert new == ('%pip install -q \\"brrr-book[torch] @ git+https://github.com/o/r@v1.2.3\\"\n'
                   'pip install "brrr-book[torch,grading] @ git+https://github.com/o/r@v1.2.3"\n'
                   "https://colab.research.google.com/github/o/r/blob/v1.2.3/chapters/x.ipynb\n"
                   "git clone --branch v1.2.3 https://github.com/o/r\ncd r\nsee https://o.github.io/r/ and "
                   "https://github.com/o/r/issues\n")
    assert sync.rewrite(new, r, {}) == new, "a second sync changes nothing"


def test_install_lines_pin_the_release_and_never_name_pypi_brrr():
    install = re.compile(r"pip install [^\n]*")
    found = 0
    for path in _text_files() + [ROOT / "README.md", ROOT / "brrr" / "cli.py"]:
        for line in install.findall(path.read_text()):
            assert not re.search(r"""pip install (?:-\S+ )*["']?brrr(?![-\w])""", line), \
                f"{path.name}: {line!r} would install PyPI's unrelated 'brrr'"
            if "git+" in line:
                found += 1
                assert f"@ git+{_release.REPOSITORY}@{_release.TAG}" in line, f"{path.name}: {line!r}"
    assert found >= 7 + 7, "every chapter and exercise installs the release on Colab"


def test_every_chapter_and_exercise_installs_on_colab():
    notebooks = sorted(ROOT.glob("chapters/*.ipynb")) + sorted(ROOT.glob("exercises/*/*.ipynb"))
    assert len(notebooks) >= 14
    for path in notebooks:
        assert f"{_release.DISTRIBUTION}[torch" in path.read_text() and f"@{_release.TAG}" in path.read_text(), path


def test_package_metadata_agrees():
    import tomllib
    project = tomllib.loads(PYPROJECT)["project"]
    assert project["name"] == _release.DISTRIBUTION == "brrr-book"
    assert "version" in project["dynamic"] and 'attr = "brrr._release.VERSION"' in PYPROJECT
    assert project["urls"] == {"Homepage": _release.SITE, "Source": _release.REPOSITORY,
                               "Issues": f"{_release.REPOSITORY}/issues"}
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["version"] == _release.VERSION
    assert citation["repository-code"] == _release.REPOSITORY and citation["url"] == _release.SITE
    readme = (ROOT / "README.md").read_text()
    assert _release.SITE in readme and f"{_release.REPOSITORY}/issues" in readme


# --- licences and Python versions --------------------------------------------------------

def test_licences_match_what_the_footer_says():
    import tomllib
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "Creative Commons Attribution 4.0 International" in (ROOT / "LICENSE-BOOK").read_text()
    footer = yaml.safe_load((ROOT / "_config.yml").read_text())["html"]["extra_footer"]
    assert "CC BY 4.0" in footer and "MIT" in footer
    assert tomllib.loads(PYPROJECT)["project"]["license"] == "MIT"
    assert yaml.safe_load((ROOT / "CITATION.cff").read_text())["license"] == "MIT"


def test_supported_pythons_are_one_truth():
    import tomllib
    project = tomllib.loads(PYPROJECT)["project"]
    classified = [c.rsplit(" ", 1)[1] for c in project["classifiers"]
                  if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    assert classified == SUPPORTED_PYTHONS
    allowed = SpecifierSet(project["requires-python"])
    assert all(v in allowed for v in SUPPORTED_PYTHONS) and "3.9" not in allowed
    phrase = f"Python {SUPPORTED_PYTHONS[0]} to {SUPPORTED_PYTHONS[-1]}"
    for page in ("README.md", "book/how_to_run.md"):
        text = (ROOT / page).read_text()
        assert phrase in text, f"{page} must say {phrase!r}"
        assert not re.search(r"3\.10\+|3\.10 (?:and|or) later", text), f"{page}: another statement of the versions"


def test_code_uses_nothing_newer_than_the_oldest_python():
    """vermin reads the source and names the oldest Python each construct needs."""
    oldest = SUPPORTED_PYTHONS[0]
    run = subprocess.run([str(Path(sys.executable).with_name("vermin")), "--no-tips", "--violations", f"-t={oldest}-",
                          "--eval-annotations", "--backport", "dataclasses", str(ROOT / "brrr")],
                         capture_output=True, text=True)
    assert run.returncode == 0, f"needs a Python newer than {oldest}:\n{run.stdout[-3000:]}{run.stderr[-2000:]}"


def test_dependency_ranges_keep_colab_preinstalled_versions():
    requirements = _requirements()
    for name, version in COLAB.items():
        if name == "python":
            import tomllib
            assert version in SpecifierSet(tomllib.loads(PYPROJECT)["project"]["requires-python"])
        else:
            assert name in requirements, f"{name} is no longer a dependency: update COLAB"
            assert requirements[name].specifier.contains(version, prereleases=True), \
                f"{requirements[name]} would replace Colab's {name} {version}"


# --- the wheel, installed as a reader installs it (slow) --------------------------------

@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """sdist and wheel made by ``python -m build`` (what `make publish` and a release run)."""
    out = tmp_path_factory.mktemp("dist")
    run = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    wheel, = out.glob("*.whl")
    sdist, = out.glob("*.tar.gz")
    return wheel, sdist


@pytest.mark.slow
def test_wheel_and_sdist_hold_the_library_and_nothing_else(dist):
    wheel, sdist = dist
    assert wheel.name == f"brrr_book-{_release.VERSION}-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    stray = [n for n in names if not n.startswith(("brrr/", f"brrr_book-{_release.VERSION}.dist-info/"))]
    assert not stray, f"the wheel holds more than the library: {stray}"
    data = {str(p.relative_to(ROOT)) for p in (ROOT / "brrr" / "data").rglob("*.json")}
    assert data and data <= set(names), f"data the library reads is missing: {sorted(data - set(names))}"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    top = f"brrr_book-{_release.VERSION}/"
    allowed = {"PKG-INFO", "README.md", "LICENSE", "MANIFEST.in", "pyproject.toml", "setup.cfg"}
    with tarfile.open(sdist) as tar:
        members = [m.name[len(top):] for m in tar.getmembers() if m.name.startswith(top)]
    stray = [m for m in members if m and m.split("/")[0] not in allowed | {"brrr", "brrr_book.egg-info"}]
    assert not stray, f"the sdist holds more than the library: {stray}"


def _pip_can_reach_index() -> bool:
    run = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "ipywidgets"],
                         capture_output=True, text=True, timeout=120)
    return run.returncode == 0 and "7.7.1" in run.stdout


@pytest.mark.slow
def test_wheel_works_in_a_clean_venv_with_colab_versions(dist, tmp_path):
    """Install the wheel into a fresh venv (no system packages) with Colab's numpy, numba,
    matplotlib and ipywidgets 7.7.1, then use it from a folder outside the repository."""
    if not _pip_can_reach_index():
        pytest.skip("no package index reachable to install the wheel's dependencies")
    wheel, _ = dist
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    constraints = tmp_path / "colab.txt"
    constraints.write_text("".join(f"{k}=={v}\n" for k, v in COLAB.items() if k not in ("python", "torch", "cupy-cuda12x")))
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "-c", str(constraints), str(wheel)],
                             capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    outside = tmp_path / "reader"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(BRRR_CACHE_DIR=str(tmp_path / "cache"), BRRR_QUICK="1", MPLBACKEND="Agg")

    def run(*argv):
        done = subprocess.run([str(a) for a in argv], cwd=outside, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"{argv}:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
        return done.stdout

    assert run(env_dir / "bin" / "brrr", "--version").strip() == f"brrr {_release.VERSION}"
    info = json.loads(run(env_dir / "bin" / "brrr", "info", "--json"))
    assert info["backend"] == "cpu" and info["peak_bandwidth_bytes_per_s"] > 0
    recorded = subprocess.run([str(env_dir / "bin" / "brrr"), "record", "--quick", "--chapters", "01", "--out",
                               "my-cpu"], cwd=outside, env=env, capture_output=True, text=True, timeout=600)
    failed = [line for line in recorded.stdout.splitlines() if ": failed, " in line]   # those that need torch
    assert recorded.returncode == (1 if failed else 0) and all("torch" in line for line in failed), \
        recorded.stdout[-2000:] + recorded.stderr[-2000:]
    assert "coverage:" in recorded.stdout and (outside / "my-cpu" / "matmul_vs_size.json").exists()
    assert "none refused" in run(env_dir / "bin" / "brrr", "record", "--check", "my-cpu")
    script = """
import json, os, sys
import numpy as np, ipywidgets, brrr
from brrr import kernels, reference, widgets
here = os.path.dirname(brrr.__file__)
assert here.startswith(sys.prefix), here            # the installed copy, not the repository
x = np.arange(1 << 16, dtype=np.float32)
t = brrr.bench(kernels.triad, x, x, budget=0.05)
assert np.array_equal(kernels.triad(x, x), x + 2 * x) and t.median > 0
runs = reference.record_sets()                      # the shipped reference records
explorer = widgets.roofline_explorer(brrr.Roofline(peak_flops=1e13, peak_bandwidth=1e12), static=False)
bundle = explorer._repr_mimebundle_()
print(json.dumps({"ipywidgets": ipywidgets.__version__, "numpy": np.__version__, "sets": len(runs),
                  "widget": "application/vnd.jupyter.widget-view+json" in bundle, "median": t.median}))
"""
    report = json.loads(run(python, "-c", script).strip().splitlines()[-1])
    assert report["ipywidgets"] == COLAB["ipywidgets"] and report["numpy"] == COLAB["numpy"]
    assert report["widget"], "the roofline explorer is a live widget under ipywidgets 7"
    assert report["sets"] >= 1


@pytest.mark.slow
@pytest.mark.parametrize("extra, may_change", [("", set()), ("grading", {"ipywidgets"})])
def test_resolving_for_colab_upgrades_nothing(dist, tmp_path, extra, may_change):
    """pip resolves the wheel for Python 3.13 with Colab's versions pinned: it must succeed and
    keep every one of them. (torch and CuPy are extras whose ranges a test above checks; their
    own dependencies are Colab's business.) The one documented exception: the grading extra that
    exercise notebooks install brings otter-grader, which requires ipywidgets 8.1.5 or later."""
    if not _pip_can_reach_index():
        pytest.skip("no package index reachable to resolve against")
    wheel, _ = dist
    pinned = {k: v for k, v in COLAB.items() if k not in {"python", "torch", "cupy-cuda12x"} | may_change}
    constraints = tmp_path / "colab.txt"
    constraints.write_text("".join(f"{k}=={v}\n" for k, v in pinned.items()))
    report = tmp_path / "report.json"
    platforms = [a for p in ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
                 for a in ("--platform", p)]
    run = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q",
                          "--report", str(report), "--python-version", COLAB["python"], *platforms,
                          "--only-binary=:all:", "--target", str(tmp_path / "target"), "-c", str(constraints),
                          f"{wheel}[{extra}]" if extra else str(wheel)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    chosen = {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}
    for name, version in pinned.items():
        assert chosen.get(name) == version, f"{name}: Colab has {version}, the resolver chose {chosen.get(name)}"
    for name in may_change:
        assert chosen.get(name) != COLAB[name], f"{name} no longer needs to change: drop the exception and its note"
