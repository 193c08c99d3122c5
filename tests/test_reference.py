"""brrr.reference: shipped reference runs, recorded by the chapters' own beside() calls."""
import json
import time

import pandas as pd
import pytest

from brrr import reference
from brrr.results import Result

PROVENANCE = ("device", "versions", "date", "command")


def test_every_shipped_run_carries_its_provenance():
    """brrr/data/reference: only real full-size runs, each saying where and how it was made."""
    sets = reference.record_sets()
    backends = {next(iter(runs.values())).meta["device"]["backend"] for runs in sets.values()}
    assert backends >= {"cpu", "cuda"}, "brrr should ship a GPU and the book-building CPU"
    for device, runs in sets.items():
        for name, run in runs.items():
            for key in PROVENANCE:
                assert run.meta.get(key), f"{device}/{name} has no {key}"
            assert run.meta.get("reference") is True
            assert "make_reference.py" in run.meta["command"] or run.meta["command"].startswith("brrr record")
            assert not run.meta.get("quick"), f"{device}/{name} is a quick-mode run, not a reference"
            value = run.meta.get("kind") == "value" and run.meta.get("value", 0) > 0    # one measured number
            assert run.records or value or run.meta.get("notes"), f"{device}/{name} has no records and says not why"
            assert run.meta["date"][:4].isdigit() and run.meta["versions"].get("brrr")
            assert all(rec["seconds"] > 0 for rec in run.records if rec.get("seconds") is not None)


def test_load_keeps_one_backend_and_refuses_bad_names():
    gpus = reference.load("measure_roofline")
    assert gpus and all(r.meta["device"]["backend"] == "cuda" for r in gpus)
    assert all(r.meta["device"]["backend"] == "cpu" for r in reference.load("measure_roofline", backend="cpu"))
    assert reference.load("no_such_experiment") == []
    for bad in ("", "../etc", 3):
        with pytest.raises(ValueError):
            reference.load(bad)
    with pytest.raises(ValueError, match="backend"):
        reference.load("measure_roofline", backend="tpu")


def test_measure_records_only_when_asked(tmp_path, monkeypatch):
    run = Result("demo_sweep", [{"x": 1, "seconds": 0.5}], {"device": {"name": "Test", "backend": "cpu"},
                                                             "date": "2026-01-01", "versions": {}})
    monkeypatch.delenv(reference.RECORD_ENV, raising=False)
    assert reference.measure("demo_sweep", lambda: run) is run
    assert reference.beside(run) == []
    assert not list(tmp_path.iterdir())
    monkeypatch.setenv(reference.RECORD_ENV, str(tmp_path / "test-device"))
    monkeypatch.setenv(reference.COMMAND_ENV, "python scripts/make_reference.py --chapters 02")
    assert reference.measure("renamed", lambda: run) is run
    saved = json.loads((tmp_path / "test-device" / "renamed.json").read_text())
    assert saved["name"] == "renamed" and saved["records"] == run.records
    assert saved["meta"]["reference"] is True and saved["meta"]["command"].endswith("--chapters 02")
    assert "reference" not in run.meta     # the live result is left as it was

    def slow():
        time.sleep(0.05)
        return run
    reference.measure("slow", slow)
    took = json.loads((tmp_path / "test-device" / "slow.json").read_text())["meta"]["run_seconds"]
    assert 0.05 <= took < 1 and saved["meta"]["run_seconds"] < 0.05   # where a chapter's time goes


def test_measure_passes_arguments_and_refuses_bad_names():
    assert reference.measure("sum", lambda a, b=0: a + b, 2, b=3) == 5
    for bad in ("", "a/b", None):
        with pytest.raises(ValueError, match="name"):
            reference.measure(bad, lambda: 1)
    with pytest.raises(TypeError, match="callable"):
        reference.measure("x", 3)


def test_a_profiler_table_round_trips_with_its_attrs(tmp_path, monkeypatch):
    table = pd.DataFrame({"op": ["aten.mm", "aten.add"], "seconds": [1e-3, 2e-5]})
    table.attrs["model_seconds"] = 0.002
    with pytest.raises(ValueError, match="name is needed"):
        reference.beside(table)
    monkeypatch.setenv(reference.RECORD_ENV, str(tmp_path / "dev"))
    reference.measure("profile_demo", lambda: table)
    back = reference.as_data(Result.load(str(tmp_path / "dev" / "profile_demo.json")))
    assert list(back.op) == ["aten.mm", "aten.add"] and back.attrs["model_seconds"] == 0.002


def test_timings_and_plain_values_round_trip(tmp_path, monkeypatch):
    from brrr.timing import Timing
    one = Timing(samples=[1e-3, 2e-3, 3e-3], floor=1e-6, backend="cpu", mode="flush", nbytes=8.0, label="copy",
                 warnings=["noisy"])
    two = Timing(samples=[5e-3], floor=1e-6, backend="cpu", mode="hot")
    monkeypatch.setenv(reference.RECORD_ENV, str(tmp_path / "dev"))
    for name, data in (("one", one), ("two", [one, two]), ("value", {"kernels": ["k"], "error": None}),
                       ("seconds", 0.25)):
        reference.measure(name, lambda data=data: data)
    load = lambda name: reference.as_data(Result.load(str(tmp_path / "dev" / f"{name}.json")))  # noqa: E731
    back = load("one")
    assert isinstance(back, Timing) and back.median == one.median and back.gbps() == one.gbps()
    assert back.label == "copy" and back.warnings == ["noisy"]
    assert [t.median for t in load("two")] == [one.median, two.median]
    assert load("value") == {"kernels": ["k"], "error": None} and load("seconds") == 0.25
    with pytest.raises(TypeError, match="plain data"):
        reference.as_result(object(), "bad")


def test_appendix_tables_cover_every_device():
    runs = reference.record_sets()
    prov = reference.provenance_table(runs)
    assert len(prov) == len(runs) and list(prov.backend)[0] == "cuda"   # GPUs first
    cover = reference.coverage_table(runs)
    assert set(cover.columns) == set(prov.device)
    assert "measure_roofline" in cover.index
