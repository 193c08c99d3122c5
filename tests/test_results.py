"""Results are plain data that survive a JSON round trip with their provenance."""
import json

import pytest

from brrr.results import Result, provenance, versions


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
