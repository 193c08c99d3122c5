"""Results are plain data that survive a JSON round trip with their provenance."""
import json

import pytest

import brrr

from brrr.device import provenance
from brrr.results import Result, versions


def test_round_trip(tmp_path):
    r = Result("demo", records=[{"size": 1, "seconds": 2.5e-6}], meta=provenance("pytest", reference=True))
    path = r.to_json(str(tmp_path / "demo.json"))
    back = Result.load(path)
    assert back.records == r.records and back.meta == r.meta and back.is_reference
    assert back.to_frame()["seconds"].iloc[0] == 2.5e-6
    assert "reference" in repr(back) and "1 records" in repr(back)


def test_provenance_names_device_versions_date_and_command():
    meta = provenance("brrr roofline --quick")
    assert meta["command"] == "brrr roofline --quick"
    assert meta["device"]["backend"] in ("cpu", "cuda")
    assert "numpy" in meta["versions"] and "python" in versions()
    assert meta["date"][:2] == "20"


def test_numpy_values_are_saved(tmp_path):
    import numpy as np
    r = Result("np", records=[{"x": np.float32(1.5), "v": np.arange(3)}])
    data = json.loads(open(r.to_json(str(tmp_path / "np.json"))).read())
    assert data["records"][0] == {"x": 1.5, "v": [0, 1, 2]}


def test_not_a_result(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"records": []}')
    with pytest.raises(ValueError, match="name"):
        Result.load(str(p))


def test_load_all_rejects_a_missing_folder(tmp_path):
    from brrr.results import load_all
    with pytest.raises(ValueError, match="folder"):
        load_all(str(tmp_path / "nope"))


def test_to_json_is_atomic_and_never_writes_through_a_symlink(tmp_path, monkeypatch):
    """A failed write leaves the old file whole; a symlink is replaced, its target untouched."""
    path = tmp_path / "r.json"
    Result("first", [{"x": 1}], {}).to_json(str(path))
    before = path.read_text()

    def half_then_fail(self, *args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr("brrr.results.Result.to_dict", half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        Result("second", [{"x": 2}], {}).to_json(str(path))
    monkeypatch.undo()
    assert path.read_text() == before and sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]

    target = tmp_path / "target.json"
    target.write_text("keep me")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    Result("third", [{"x": float("nan")}], {}).to_json(str(link))    # NaN allowed in results
    assert target.read_text() == "keep me" and not link.is_symlink()
    assert Result.load(str(link)).name == "third"


# --- the record schema ---------------------------------------------------------------------------

def test_results_are_saved_with_their_schema_version(tmp_path):
    from brrr.results import SCHEMA
    path = Result("x", [{"seconds": 1.0}], {}).to_json(str(tmp_path / "x.json"))
    assert json.load(open(path))["schema"] == SCHEMA


def test_schema_1_records_are_renamed_on_reading_and_values_kept(tmp_path):
    old = {"name": "fusion_kernels", "meta": {"device": {"backend": "cpu"}},
           "records": [{"seconds": 2.0, "min": 1.5, "iqr": 0.1, "floor": 1e-7, "bytes": 64, "backend": "brrr"},
                       {"seconds": 3.0, "backend": "cpu"}]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    first, second = Result.load(str(path)).records
    assert first == {"seconds": 2.0, "min_seconds": 1.5, "iqr_seconds": 0.1, "floor_seconds": 1e-7,
                     "nbytes": 64, "fuser": "brrr"}
    assert second == {"seconds": 3.0, "backend": "cpu"}     # a real backend stays a backend


def test_a_newer_or_bogus_schema_is_refused_with_its_value(tmp_path):
    for schema in (99, "two", 0):
        path = tmp_path / "new.json"
        path.write_text(json.dumps({"schema": schema, "name": "x", "meta": {}, "records": []}))
        with pytest.raises(ValueError, match="schema"):
            Result.load(str(path))


def test_every_shipped_record_reads_with_schema_2_names():
    import glob
    import os
    from brrr.results import BACKENDS
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = glob.glob(os.path.join(root, "brrr", "data", "reference", "**", "*.json"), recursive=True)
    paths += glob.glob(os.path.join(root, "tests", "data", "records", "**", "*.json"), recursive=True)
    assert paths
    for path in paths:
        result = Result.load(path)
        timing = result.meta.get("kind") in ("timing", "timings")   # a brrr.Timing's own fields ('floor')
        for record in result.records:
            assert not ({"min", "iqr", "bytes"} | (set() if timing else {"floor"})) & set(record), (path, record)
            assert record.get("backend", "cpu") in BACKENDS, (path, record)


def test_ran_on_cpu_reads_summaries_and_devices():
    from brrr.results import ran_on_cpu
    assert ran_on_cpu({"backend": "cpu"}) and not ran_on_cpu({"backend": "cuda"})
    assert not ran_on_cpu(None) and not ran_on_cpu({})
    assert ran_on_cpu(brrr.device()) == (not brrr.device().on_gpu)


def test_quick_mode_is_read_once_until_reread(monkeypatch):
    from brrr import config
    monkeypatch.setenv("BRRR_QUICK", "1")
    assert config.quick_mode()
    monkeypatch.setenv("BRRR_QUICK", "0")
    assert config.quick_mode()            # decided once for the process...
    config.reread()
    assert not config.quick_mode()        # ...until asked to read again
