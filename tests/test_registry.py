"""The book's measurements, declared once (brrr.registry), and ``brrr record``, which makes them in one process: the
registry against the notebooks, and the recorder's order, resuming, provenance and coverage on a fake registry."""
import json
import re
from pathlib import Path

import pytest

from brrr import cli, reference, registry
from brrr.record_check import check_set
from brrr.registry import Measurement, record as recorder
from brrr.results import Result

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))


def _code(notebook) -> str:
    cells = json.loads(Path(notebook).read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def test_every_measurement_a_chapter_makes_is_declared_once_in_its_chapter_and_order():
    declared = registry.registry()
    for path in CHAPTERS:
        names = reference.recorded_names(path)
        assert names == [m.name for m in declared.values() if m.chapter == path.stem[:2]], path.stem
    assert sum(len(reference.recorded_names(p)) for p in CHAPTERS) == len(declared)


def test_a_chapter_measures_by_name_only():
    """One definition of each measurement: a notebook passes no function and no arguments."""
    for path in CHAPTERS:
        calls = re.findall(r"reference\.measure\(([^)]*)\)", _code(path))
        assert calls and all(re.fullmatch(r'"[\w.-]+"', c.strip()) for c in calls), path.stem


def test_the_quick_set_is_what_todays_recipes_make():
    """tests/data/records/quick is made by `brrr record --quick`: each record has every field its declaration
    names (which also keeps the declarations free of typos)."""
    for folder in (ROOT / "tests" / "data" / "records" / "quick").iterdir():
        runs = check_set(folder)
        assert set(runs) <= set(registry.registry())
        for name, run in runs.items():
            assert run.meta["command"].startswith("brrr record --quick"), name
            assert registry.lookup(name).lacks(run) == [], name


def test_a_replayed_page_names_the_records_older_than_their_experiment(monkeypatch):
    """The H200 run predates chapter 8's step list and its steps' rows: the page says so at the top."""
    from brrr import book
    h200 = reference.record_sets()["nvidia-h200"]
    monkeypatch.setattr(reference, "replay_runs", lambda: h200)
    sentence, names = book._older_records(8)
    assert "capstone_steps" in names and "`capstone_steps` lacks `mfu_peak`, `rows`" in sentence
    assert registry.lookup("capstone_steps").lacks(h200["capstone_steps"]) == ["meta.mfu_peak", "rows"]
    today = Result("capstone_steps", [{"builds_on": None, "rows": []}], {"mfu_peak": {}})
    assert registry.lookup("capstone_steps").lacks(today) == []
    monkeypatch.setattr(reference, "replay_runs", lambda: {"capstone_steps": today})
    assert book._older_records(8) == ("", [])


def test_a_name_not_declared_is_an_error_that_says_where_to_declare_it():
    with pytest.raises(ValueError, match="brrr.registry"):
        registry.lookup("no_such_measurement")
    with pytest.raises(TypeError, match="takes no arguments"):
        reference.measure("matmul_vs_size", None, 3)


@pytest.fixture
def fake(monkeypatch):
    """A registry of four cheap measurements: a value, one that reads it, one a chapter reads elsewhere, and one a
    GPU makes; ``calls`` counts each recipe's runs."""
    calls = {}

    def recipe(name, value):
        def run(ctx):
            calls[name] = calls.get(name, 0) + 1
            return value(ctx)
        return run
    fakes = [Measurement("fake_value", "01", recipe("fake_value", lambda ctx: 2.5)),
             Measurement("fake_double", "01", recipe("fake_double", lambda ctx: 2 * ctx.get("fake_value"))),
             Measurement("fake_reused", "02", recipe("fake_reused", lambda ctx: None)),
             Measurement("fake_gpu", "02", recipe("fake_gpu", lambda ctx: 1.0), when=lambda dev: False)]
    monkeypatch.setattr(registry, "registry", lambda: {m.name: m for m in fakes})
    monkeypatch.setattr(registry, "_CONTEXT", {})
    return calls


def test_record_makes_each_measurement_once_in_order_with_its_provenance(fake, tmp_path):
    lines = []
    outcome = recorder.record(tmp_path / "set", command="brrr record --out set", echo=lines.append)
    assert outcome == {"fake_value": "made", "fake_double": "made", "fake_reused": "reused",
                       "fake_gpu": "not on this device"}
    assert fake == {"fake_value": 1, "fake_double": 1, "fake_reused": 1}
    runs = check_set(tmp_path / "set")                 # a set the loader reads
    assert sorted(runs) == ["fake_double", "fake_value"]
    assert reference.as_data(runs["fake_double"]) == 5.0
    meta = runs["fake_value"].meta
    assert meta["command"] == "brrr record --out set" and meta["run_seconds"] >= 0 and meta["reference"]
    assert {"device", "date", "versions"} <= set(meta)
    assert meta.get("commit") == recorder.commit() and (meta.get("commit") is None or len(meta["commit"]) == 40)
    assert "coverage: 2 made, 1 reused, 1 not on this device, of 4 measurements" in lines[-1]


def test_record_resumes_keeping_what_is_recorded_and_redoes_what_is_refused(fake, tmp_path):
    folder = tmp_path / "set"
    recorder.record(folder, echo=lambda line: None)
    (folder / "fake_double.json").write_text("{")          # cut short as it wrote
    registry._CONTEXT.clear()
    outcome = recorder.record(folder, echo=lambda line: None)
    assert outcome["fake_value"] == "kept" and outcome["fake_double"] == "made"
    assert fake["fake_value"] == 1 and fake["fake_double"] == 2      # the kept record fed the one that needs it
    assert reference.as_data(Result.load(str(folder / "fake_double.json"))) == 5.0


def test_a_measurement_that_fails_is_reported_and_the_others_still_run(fake, tmp_path, monkeypatch):
    def broken(ctx):
        raise ImportError("No module named 'torch'")
    declared = {**registry.registry(), "fake_broken": Measurement("fake_broken", "01", broken)}
    monkeypatch.setattr(registry, "registry", lambda: declared)
    lines = []
    outcome = recorder.record(tmp_path / "set", echo=lines.append)
    assert outcome["fake_broken"] == "failed" and outcome["fake_double"] == "made"
    assert any("fake_broken: failed, ImportError: No module named 'torch'" in line for line in lines)
    assert not (tmp_path / "set" / "fake_broken.json").exists() and "1 failed" in lines[-1]


def test_record_takes_chapters_and_names_a_wrong_one(fake, tmp_path):
    assert list(recorder.record(tmp_path / "a", chapters=["2"], echo=lambda line: None)) == ["fake_reused", "fake_gpu"]
    with pytest.raises(ValueError, match="chapters must be among 01"):
        recorder.record(tmp_path / "b", chapters=["09"], echo=lambda line: None)


def test_quick_mode_never_writes_into_the_shipped_sets(capsys, monkeypatch):
    from brrr import config
    monkeypatch.setenv("BRRR_QUICK", "1")
    config.reread()
    try:
        with pytest.raises(SystemExit) as stop:
            cli.main(["record", "--out", str(reference.REFERENCE_DIR / "nvidia-h200")])
    finally:
        monkeypatch.delenv("BRRR_QUICK")
        config.reread()
    assert stop.value.code == 2 and "full-size" in capsys.readouterr().err


def test_a_device_gets_a_folder_name_of_its_own():
    assert recorder.slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"
    assert recorder.slug("AMD EPYC (2 threads)") == "amd-epyc-2-threads"


@pytest.mark.slow
def test_brrr_record_quick_writes_a_set_the_chapters_replay_without_an_error(tmp_path):
    """`brrr record --quick` on this machine, then chapters 1 and 3 replayed from what it wrote."""
    import os
    import subprocess
    import sys
    folder = tmp_path / "this-cpu"
    env = {**os.environ, "BRRR_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "brrr", "record", "--quick", "--chapters", "01", "03", "--out",
                           str(folder)], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "coverage:" in done.stdout and check_set(folder)
    declared = [m for m in registry.registry().values() if m.chapter in ("01", "03")]
    assert {p.stem for p in folder.glob("*.json")} <= {m.name for m in declared}
    replay = subprocess.run([sys.executable, str(ROOT / "scripts" / "replay_sets.py"), "--set", str(folder), "--out",
                             str(tmp_path / "replayed"), "--chapters", "01", "03"], capture_output=True, text=True,
                            timeout=900, env=env)
    assert replay.returncode == 0 and "0 cell error(s)" in replay.stdout, replay.stdout[-2000:] + replay.stderr[-2000:]
