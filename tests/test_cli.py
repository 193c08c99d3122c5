"""The command line: `brrr info`, `brrr roofline`, `brrr grade`, `python -m brrr`, and clear errors."""
import os
import subprocess
import sys
import types

import pytest

from brrr import cli
from brrr.results import Result


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    out = dict(os.environ, BRRR_QUICK="1", MPLBACKEND="Agg")
    out.setdefault("BRRR_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    return out


def run(args, env, timeout=300):
    return subprocess.run([sys.executable, "-m", "brrr", *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_info(env):
    p = run(["info"], env)
    assert p.returncode == 0, p.stderr
    for word in ("device", "backend", "bandwidth", "FP32", "ridge", "source", "versions", "numpy"):
        assert word in p.stdout


def test_roofline_quick_writes_png_and_json(env, tmp_path):
    png, js = tmp_path / "roof.png", tmp_path / "roof.json"
    p = run(["roofline", "--quick", "--no-progress", "--out", str(png), "--json", str(js)], env)
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    result = Result.load(str(js))
    assert result.meta["command"].startswith("brrr roofline --quick")
    from brrr.experiments import measured_roofline
    roof = measured_roofline(result)
    assert f"{roof.peak_bandwidth / 1e9:.4g} GB/s" in p.stdout
    assert "measured roof" in p.stdout and "spec roof" in p.stdout


@pytest.mark.parametrize("args, words", [
    ([], "required: COMMAND"),
    (["fly"], "invalid choice"),
    (["roofline", "--bogus"], "unrecognized arguments"),
    (["roofline", "--out", "/no/such/folder/x.png"], "does not exist"),
    (["roofline", "--out", "x.jpg"], ".png, .svg or .pdf"),
])
def test_bad_arguments_fail_clearly(args, words, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(args)
    assert exit_info.value.code == 2
    assert words in capsys.readouterr().err


def test_grade_is_handed_its_arguments(monkeypatch):
    seen = {}
    fake = types.ModuleType("brrr.grade")
    fake.main = lambda argv: seen.setdefault("argv", argv) and 0
    monkeypatch.setitem(sys.modules, "brrr.grade", fake)
    import brrr
    monkeypatch.setattr(brrr, "grade", fake, raising=False)
    assert cli.main(["grade", "ex1", "a.ipynb", "--timeout", "5"]) == 0
    assert seen["argv"] == ["ex1", "a.ipynb", "--timeout", "5"]


def test_grade_without_grader_says_what_to_install(monkeypatch, capsys):
    import brrr
    monkeypatch.setitem(sys.modules, "brrr.grade", None)   # makes `from . import grade` fail
    if "grade" in vars(brrr):                                # an earlier import bound it
        monkeypatch.delattr(brrr, "grade")
    assert cli.main(["grade", "ex1", "a.ipynb"]) == 2
    assert "pip install" in capsys.readouterr().err


def test_grade_help_is_the_graders_own(capsys):
    from brrr import cli
    with pytest.raises(SystemExit) as stop:
        cli.main(["grade", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "usage: brrr grade" in out and "--isolation" in out and "Exit status" in out
