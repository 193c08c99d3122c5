"""The command line: `brrr info`, `brrr roofline`, `brrr grade`, `python -m brrr`, and clear errors."""
import importlib
import json
import os
import re
import subprocess
import sys
import types

import pytest

import brrr
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


# --- help, version and exit statuses -----------------------------------------------

def test_every_help_exits_0_and_names_its_options(capsys):
    helps = {("--help",): ("info", "roofline", "grade", "--version", "exit status:"),
             ("info", "--help"): ("--json", "--refresh", "peak_bandwidth_bytes_per_s",
                                  "ridge_flop_per_byte", "last_level_cache_bytes"),
             ("roofline", "--help"): ("--quick", "--out", "--json", "--no-progress"),
             ("grade", "--help"): ("--out", "--timeout", "--cell-timeout", "--isolation")}
    for argv, options in helps.items():
        with pytest.raises(SystemExit) as stop:
            cli.main(list(argv))
        assert stop.value.code == 0, argv
        out = capsys.readouterr().out
        for option in options:
            assert option in out, (argv, option)


def test_version_and_exit_statuses_end_to_end(env):
    p = run(["--version"], env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == f"brrr {brrr.__version__}"
    p = run(["--help"], env)
    assert p.returncode == 0, p.stderr
    epilog = p.stdout.split("exit status:", 1)[1]
    for status, meaning in (("0", "success"), ("1", "a command failed"), ("2", "bad usage"),
                            ("130", "interrupted")):
        assert re.search(rf"^ +{status} +{meaning}", epilog, re.MULTILINE), status
    assert "BRRR_DEBUG=1" in epilog


# --- brrr info --json and --refresh --------------------------------------------------

INFO_KEYS = {"brrr_version", "device", "backend", "array_library", "peak_bandwidth_bytes_per_s",
             "peak_flops_per_s", "ridge_flop_per_byte", "last_level_cache_bytes", "sm_count",
             "peaks_source", "versions"}


def test_info_json_end_to_end(env):
    p = run(["info", "--json"], env)
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)  # stdout is the JSON alone: progress notes go to stderr
    assert set(info) == INFO_KEYS
    flops, bandwidth = info["peak_flops_per_s"], info["peak_bandwidth_bytes_per_s"]
    assert {"float64", "float32"} <= set(flops)
    assert info["ridge_flop_per_byte"] == pytest.approx(flops["float32"] / bandwidth)
    dev = brrr.device()
    assert (info["device"], info["backend"], info["array_library"], info["last_level_cache_bytes"],
            info["sm_count"]) == (dev.name, dev.backend, dev.array_library, dev.l2_bytes,
                                  dev.sm_count or None)
    assert info["brrr_version"] == info["versions"]["brrr"] == brrr.__version__


def test_info_json_and_text_show_the_same_device(monkeypatch, capsys):
    t4 = brrr.Device(name="Tesla T4", backend="cuda", array_library="cupy", l2_bytes=4 * 2**20,
                     spec=brrr.specs.GPU_SPECS["T4"], sm_count=40)
    monkeypatch.setattr(brrr, "device", lambda refresh=False: t4)
    assert cli.main(["info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["peak_flops_per_s"] == {"float64": t4.peak_flops("float64"),
                                        "float32": t4.peak_flops("float32"),
                                        "float16_tensor": t4.peak_flops("float16", True)}
    assert info["peak_bandwidth_bytes_per_s"] == t4.peak_bandwidth
    assert info["ridge_flop_per_byte"] == t4.ridge
    assert (info["sm_count"], info["peaks_source"]) == (40, t4.source)
    assert cli.main(["info"]) == 0
    text = capsys.readouterr().out
    assert "FP16 tensor" in text and "TF32 tensor" not in text and "BF16 tensor" not in text
    assert "SMs        40" in text and f"source     {t4.source}" in text


def test_info_refresh_measures_the_cpu_peaks_again(monkeypatch, capsys):
    calls = []

    def fake_device(refresh=False):
        calls.append(("device", refresh))
        return brrr.Device(name="Test CPU", backend="cpu", array_library="numpy", l2_bytes=2**20,
                           _measured={"bandwidth": 10e9, "flops_float32": 40e9, "flops_float64": 20e9,
                                      "date": "today", "method": "a test"})

    monkeypatch.setattr(brrr, "device", fake_device)
    assert cli.main(["info", "--json"]) == 0
    assert calls == [("device", False)]
    assert cli.main(["info", "--json", "--refresh"]) == 0
    assert calls == [("device", False), ("device", True)]   # device(refresh=True) measures again
    info = json.loads(capsys.readouterr().out.split("\n}\n", 1)[1])  # the second object
    assert info["ridge_flop_per_byte"] == pytest.approx(40e9 / 10e9)


# --- errors: one line, 1; Ctrl-C: 130; BRRR_DEBUG=1: the traceback ----------------------

def failing(error):
    def fake_device(refresh=False):
        raise error
    return fake_device


@pytest.mark.parametrize("error, line", [
    (KeyError("float128"), "brrr info: error: KeyError: 'float128'"),
    (RuntimeError("CUDA driver failed\n  at line 2"), "brrr info: error: CUDA driver failed at line 2"),
])
def test_an_error_is_one_line_on_stderr(error, line, monkeypatch, capsys):
    monkeypatch.delenv("BRRR_DEBUG", raising=False)
    monkeypatch.setattr(brrr, "device", failing(error))
    assert cli.main(["info"]) == 1
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(line), lines
    assert "BRRR_DEBUG=1" in lines[0]
    assert "Traceback" not in captured.err + captured.out


def test_a_grader_crash_is_one_line_on_stderr(monkeypatch, capsys):
    monkeypatch.delenv("BRRR_DEBUG", raising=False)
    fake = types.ModuleType("brrr.grade")
    fake.main = failing(OSError("disk full"))
    monkeypatch.setitem(sys.modules, "brrr.grade", fake)
    monkeypatch.setattr(brrr, "grade", fake, raising=False)
    assert cli.main(["grade", "ex1", "a.ipynb"]) == 1
    assert capsys.readouterr().err.splitlines()[0].startswith("brrr grade: error: disk full")


def test_ctrl_c_exits_130_with_one_line(monkeypatch, capsys):
    monkeypatch.delenv("BRRR_DEBUG", raising=False)
    monkeypatch.setattr(brrr, "device", failing(KeyboardInterrupt()))
    assert cli.main(["info"]) == 130
    assert capsys.readouterr().err.splitlines() == ["brrr info: interrupted"]


@pytest.mark.parametrize("error, status", [(RuntimeError("boom"), 1), (KeyboardInterrupt(), 130)])
def test_brrr_debug_reraises(error, status, monkeypatch, capsys):
    monkeypatch.setattr(brrr, "device", failing(error))
    monkeypatch.setenv("BRRR_DEBUG", "0")
    assert cli.main(["info"]) == status
    monkeypatch.setenv("BRRR_DEBUG", "1")
    with pytest.raises(type(error)):
        cli.main(["info"])
