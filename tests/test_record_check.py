"""A record set from a stranger (brrr.record_check): each kind of bad set is refused, naming the file and the field,
and every shipped set passes."""
import json
import os
import shutil
from pathlib import Path

import pytest

from brrr import cli, reference
from brrr.record_check import MAX_FILE_BYTES, RecordSetError, check_set

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(p for base in (ROOT / "brrr" / "data" / "reference", ROOT / "tests" / "data" / "records" / "quick")
                 for p in base.iterdir() if p.is_dir())
H200 = ROOT / "brrr" / "data" / "reference" / "nvidia-h200"


@pytest.mark.parametrize("folder", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_shipped_set_passes(folder):
    runs = check_set(folder)
    assert set(runs) == {p.stem for p in folder.glob("*.json")}


@pytest.fixture
def copy(tmp_path):
    """A copy of the H200 set's roofline and bandwidth records, to spoil one way at a time."""
    folder = tmp_path / "set"
    folder.mkdir()
    for name in ("measure_roofline", "bandwidth_vs_size", "call_overhead"):
        shutil.copy(H200 / f"{name}.json", folder)
    return folder


def _edit(folder, name, change):
    path = folder / f"{name}.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _refused(folder, file, field):
    with pytest.raises(RecordSetError) as error:
        check_set(folder)
    assert error.value.path.endswith(file) and error.value.field.startswith(field), str(error.value)
    return str(error.value)


def test_a_clean_copy_passes(copy):
    assert sorted(check_set(copy)) == ["bandwidth_vs_size", "call_overhead", "measure_roofline"]


def test_truncated_json_is_refused(copy):
    path = copy / "measure_roofline.json"
    path.write_text(path.read_text()[:-40])
    _refused(copy, "measure_roofline.json", "JSON")


@pytest.mark.parametrize("change, field", [
    (lambda d: d.update(records={"seconds": 1}), "records"),            # not a list
    (lambda d: d.update(meta=[["device", {}]]), "meta"),
    (lambda d: d.pop("records"), "JSON"),
    (lambda d: d["records"].__setitem__(0, [1, 2]), "records"),         # a record that is no object
    (lambda d: d["records"][0].update(seconds="fast"), "records[0].seconds"),
    (lambda d: d["records"][0].update(seconds=True), "records[0].seconds"),
    (lambda d: d.update(name="bandwidth_vs_size"), "name"),
])
def test_a_wrong_type_is_refused(copy, change, field):
    _edit(copy, "measure_roofline", change)
    _refused(copy, "measure_roofline.json", field)


@pytest.mark.parametrize("value", [-1e-6, float("nan"), float("inf")])
def test_a_negative_or_nan_time_is_refused(copy, value):
    _edit(copy, "call_overhead", lambda d: d["records"][0]["round_seconds"].__setitem__(2, value))
    message = _refused(copy, "call_overhead.json", "records[0].round_seconds")
    assert "finite number of seconds" in message


def test_a_rate_above_twice_the_spec_is_refused(copy):
    spec = reference.record_sets()["nvidia-h200"]["measure_roofline"].meta["device"]
    def forge(data):
        matmul = next(r for r in data["records"] if r.get("gflops") and r["kind"] == "compute")
        matmul["gflops"] = 2.01 * spec["peak_flops_float16_tensor"] / 1e9
    _edit(copy, "measure_roofline", forge)
    _refused(copy, "measure_roofline.json", "records[")
    shutil.copy(H200 / "measure_roofline.json", copy)            # DRAM traffic past twice the bandwidth
    def stream(data):
        big = next(r for r in data["records"] if r.get("gbps") and r["nbytes"] > spec["l2_bytes"])
        big["gbps"] = 2.01 * spec["peak_bandwidth"] / 1e9
    _edit(copy, "measure_roofline", stream)
    assert "DRAM bandwidth" in _refused(copy, "measure_roofline.json", "records[")


def test_a_summary_that_claims_more_than_the_datasheet_is_refused(copy):
    _edit(copy, "bandwidth_vs_size", lambda d: d["meta"]["device"].update(peak_bandwidth=1e14))
    _refused(copy, "bandwidth_vs_size.json", "meta.device")


@pytest.mark.parametrize("key", ["device", "date", "versions", "command"])
def test_a_missing_provenance_field_is_refused(copy, key):
    _edit(copy, "bandwidth_vs_size", lambda d: d["meta"].pop(key))
    _refused(copy, "bandwidth_vs_size.json", f"meta.{key}")


def test_records_of_two_devices_are_refused(copy):
    _edit(copy, "measure_roofline", lambda d: d["meta"]["device"].update(name="AMD EPYC", backend="cpu"))
    assert "a set is one device's" in _refused(copy, "measure_roofline.json", "meta.device")


def test_a_gigabyte_file_is_refused_unread(copy):
    with open(copy / "huge.json", "wb") as f:      # sparse: takes no disk, and is never read
        f.truncate(2 ** 30)
    assert "bytes" in _refused(copy, "huge.json", "size")
    assert os.path.getsize(copy / "huge.json") > MAX_FILE_BYTES


def test_a_symbolic_link_out_of_the_folder_is_refused(copy, tmp_path):
    outside = tmp_path / "secret.json"
    outside.write_text((H200 / "async_demo.json").read_text())
    (copy / "async_demo.json").symlink_to(outside)
    _refused(copy, "async_demo.json", "file")


def test_a_folder_in_the_set_or_a_strange_record_name_is_refused_and_a_note_is_left_unread(copy):
    (copy / "nested").mkdir()
    _refused(copy, "nested", "file")
    (copy / "nested").rmdir()
    (copy / "README.md").write_text("measured on a quiet machine")
    assert sorted(check_set(copy)) == ["bandwidth_vs_size", "call_overhead", "measure_roofline"]
    (copy / "two words.json").write_text("{}")
    _refused(copy, "two words.json", "file name")


def test_the_replayed_book_refuses_a_bad_set(copy, monkeypatch):
    (copy / "measure_roofline.json").write_text("{")
    monkeypatch.setenv("BRRR_REPLAY", str(copy))
    reference._load_set.cache_clear()
    try:
        with pytest.raises(RecordSetError, match="measure_roofline.json: JSON"):
            reference.replay_runs()
    finally:
        reference._load_set.cache_clear()


def test_brrr_record_check_says_what_it_refused(copy, capsys):
    assert cli.main(["record", "--check", str(copy)]) == 0
    assert "3 records of NVIDIA H200 (cuda)" in capsys.readouterr().out
    (copy / "call_overhead.json").write_text("[]")
    assert cli.main(["record", "--check", str(copy)]) == 1
    err = capsys.readouterr().err
    assert "call_overhead.json: JSON" in err and err.count("\n") == 1
