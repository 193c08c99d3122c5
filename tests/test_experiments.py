"""The measurement experiments return tidy, self-consistent records (small sizes: seconds on 2 cores)."""

import pytest

import brrr
from brrr.experiments import (bandwidth_vs_size, matmul_vs_size, measure_roofline, measured_roofline,
                              measured_knee, pointwise_repeat_sweep, predicted_knee)
from brrr.experiments import _arrays
from brrr.experiments import roofline as roofline_experiment
from brrr.results import Result

KiB = 1024
COMMON = ("device", "backend", "dtype", "size", "nbytes", "flops", "seconds", "min_seconds", "iqr_seconds", "floor_seconds", "gbps", "gflops")


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")


def check_record(rec):
    for key in COMMON:
        assert key in rec, key
    assert rec["seconds"] > 0 and rec["min_seconds"] > 0 and rec["iqr_seconds"] >= 0 and rec["nbytes"] > 0
    assert rec["min_seconds"] <= rec["seconds"]
    assert rec["gbps"] == pytest.approx(rec["nbytes"] / rec["seconds"] / 1e9, rel=1e-12)
    assert rec["gflops"] == pytest.approx(rec["flops"] / rec["seconds"] / 1e9, rel=1e-12)
    assert rec["device"] == brrr.device().name


def test_bandwidth_vs_size_records():
    sizes = [16 * KiB, 256 * KiB]
    r = bandwidth_vs_size(sizes=sizes, progress=False)
    assert isinstance(r, Result) and len(r) == 2
    for rec, ws in zip(r.records, sizes):
        check_record(rec)
        assert rec["op"] == "copy" and rec["flops"] == 0 and rec["cache"] == "hot"
        assert rec["working_set"] == rec["nbytes"] == ws       # both arrays, one read + one write
        assert rec["size"] == ws // 8                          # float32: two arrays of 4 bytes
    assert "bandwidth_vs_size" in r.meta["command"] and r.meta["caches"]
    assert r.meta["device"]["backend"] == brrr.device().backend


def test_default_working_sets_pass_the_last_level_cache():
    from brrr.experiments.bandwidth import default_working_sets
    dev = brrr.device()
    for quick in (True, False):
        sizes = default_working_sets(dev, quick=quick)
        assert sizes == sorted(sizes) and sizes[0] <= 16 * KiB and sizes[-1] >= 4 * dev.l2_bytes
    assert len(default_working_sets(dev, quick=True)) < len(default_working_sets(dev, quick=False))


def test_matmul_vs_size_records():
    r = matmul_vs_size(sizes=[16, 32], progress=False)
    for rec in r.records:
        check_record(rec)
        n = rec["n"]
        assert rec["flops"] == 2 * n ** 3 and rec["nbytes"] == 3 * n * n * 4
        assert rec["peak_flops"] == brrr.device().peak_flops("float32")
        assert rec["fraction_of_peak"] == pytest.approx(rec["flops"] / rec["seconds"] / rec["peak_flops"])
        assert rec["intensity"] == pytest.approx(n / 6)


def test_matmul_tensor_cores_on_cpu_says_so():
    if brrr.device().backend != "cpu":
        pytest.skip("CPU behaviour")
    r = matmul_vs_size(sizes=[16], tensor_cores=True, progress=False)
    assert r.records[0]["tensor_cores"] is False
    assert any("no tensor cores" in note for note in r.meta["notes"])


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(sizes=[0]), ValueError, "sizes"),
    (dict(sizes="big"), TypeError, "sizes"),
    (dict(dtype="int8"), ValueError, "dtype"),
    (dict(tensor_cores="yes"), TypeError, "tensor_cores"),
    (dict(cache="cold"), ValueError, "cache"),
])
def test_matmul_bad_input(kwargs, error, words):
    with pytest.raises(error, match=words):
        matmul_vs_size(progress=False, **kwargs)


def test_bandwidth_bad_input():
    with pytest.raises(ValueError, match="sizes"):
        bandwidth_vs_size(sizes=[1024, -1], progress=False)
    with pytest.raises(ValueError, match="dtype"):
        bandwidth_vs_size(sizes=[1024], dtype="complex64", progress=False)


def test_out_of_memory_keeps_results(monkeypatch):
    import brrr.arrays
    real = brrr.arrays.full

    def full(n, *args, **kwargs):
        if n > 64 * KiB // 8:
            raise MemoryError("pretend the arrays do not fit")
        return real(n, *args, **kwargs)
    monkeypatch.setattr(brrr.arrays, "full", full)
    r = bandwidth_vs_size(sizes=[16 * KiB, 64 * KiB, 1024 * KiB, 4096 * KiB], progress=False)
    assert [rec["working_set"] for rec in r.records] == [16 * KiB, 64 * KiB]
    assert any("out of memory" in note and "2 records" in note for note in r.meta["notes"])


@pytest.fixture
def small_stream(monkeypatch):
    """measure_roofline on small arrays: the test checks bookkeeping, not DRAM bandwidth."""
    monkeypatch.setattr(roofline_experiment, "_stream_elements", lambda dev, item: 2 ** 16)


def test_measure_roofline_roofs_are_the_best_records(small_stream, tmp_path):
    r = measure_roofline(quick=True, progress=False)
    kinds = {rec["kind"] for rec in r.records}
    assert kinds == {"bandwidth", "compute"}
    for rec in r.records:
        check_record(rec)
    best_bw = max(rec["nbytes"] / rec["seconds"] for rec in r.records if rec["kind"] == "bandwidth")
    best_fl = max(rec["flops"] / rec["seconds"] for rec in r.records
                  if rec["kind"] == "compute" and not rec["tensor_cores"])
    assert r.meta["peak_bandwidth"] == best_bw and r.meta["peak_flops"] == best_fl
    roof = measured_roofline(r)
    assert isinstance(roof, brrr.Roofline)
    assert roof.peak_bandwidth == best_bw and roof.peak_flops == best_fl
    assert "measured" in roof.name and "FP32 matmul" in roof.compute_ceilings
    back = Result.load(r.to_json(str(tmp_path / "roof.json")))
    assert measured_roofline(back).to_dict() == roof.to_dict()


def test_measured_roofline_needs_both_roofs():
    r = Result("measure_roofline", records=[{"kind": "bandwidth", "op": "copy", "library": "numpy",
                                             "dtype": "float32", "tensor_cores": False,
                                             "nbytes": 1e9, "seconds": 0.1}],
               meta={"notes": ["out of memory at ..."]})
    with pytest.raises(ValueError, match="peak flops"):
        measured_roofline(r)
    with pytest.raises(TypeError, match="Result"):
        measured_roofline([1, 2])


def test_pointwise_repeat_sweep_records():
    n = 2 ** 16
    r = pointwise_repeat_sweep(repeats=(1, 4), n=n, progress=False)
    variants = {rec["variant"] for rec in r.records}
    assert "eager" in variants
    for rec in r.records:
        check_record(rec)
        assert rec["flops"] == rec["repeat"] * n
        passes = 1 if rec["variant"] == "fused" else rec["repeat"]
        assert rec["nbytes"] == 2 * passes * n * 4
    roof = brrr.Roofline.from_device()
    assert r.meta["predicted_knee"] == pytest.approx(roof.ridge * 8)
    assert r.meta["ridge"] == pytest.approx(roof.ridge)
    assert r.meta["n"] == n
    assert any("smaller than 4x" in note for note in r.meta["notes"]) or brrr.device().backend == "cuda"


def test_pointwise_uses_a_given_roof_and_skips_fused_without_kernels(monkeypatch):
    monkeypatch.setattr(_arrays, "try_kernels", lambda: (None, "brrr.kernels is not available (test)"))
    roof = brrr.Roofline(peak_flops=1e12, peak_bandwidth=1e11)
    r = pointwise_repeat_sweep(repeats=(1, 2), n=2 ** 12, roof=roof, progress=False)
    if brrr.device().backend == "cpu":
        assert {rec["variant"] for rec in r.records} == {"eager"}
        assert any("fused variant skipped" in note for note in r.meta["notes"])
    assert r.meta["predicted_knee"] == pytest.approx(10 * 8)


def test_predicted_and_measured_knee():
    roof = brrr.Roofline(peak_flops=19.5e12, peak_bandwidth=1.5e12)     # A100 FP32 (He 2022)
    assert predicted_knee(roof, "float32") == pytest.approx(13 * 8)    # ~100 ops per element
    assert predicted_knee(roof, "float64") == pytest.approx(13 * 16)
    flat_then_linear = [{"variant": "fused", "repeat": r, "seconds": max(1.0, r / 8)} for r in (1, 2, 4, 8, 16, 32)]
    assert measured_knee(flat_then_linear) == pytest.approx(8.0)
    flat = [{"variant": "fused", "repeat": r, "seconds": 1.0} for r in (1, 2, 4)]
    assert measured_knee(flat) is None
    assert measured_knee(flat_then_linear, "eager") is None


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(repeats=(0, 1)), ValueError, "repeats"),
    (dict(variants=("fast",)), ValueError, "variants"),
    (dict(dtype="float16"), ValueError, "dtype"),
    (dict(n=-5), ValueError, "n"),
    (dict(roof="A100"), TypeError, "roof"),
])
def test_pointwise_bad_input(kwargs, error, words):
    with pytest.raises(error, match=words):
        pointwise_repeat_sweep(progress=False, **{"n": 1024, **kwargs})


def test_timing_fields_are_consistent():
    t = brrr.Timing(samples=[2.0, 4.0, 3.0], floor=1e-7, backend="cpu", mode="hot",
                    warnings=["noisy: spread", "cache-resident: small"])
    f = _arrays.timing_fields(t, nbytes=6e9, flops=3e9)
    assert f["seconds"] == 3.0 and f["gbps"] == 2.0 and f["gflops"] == 1.0 and f["intensity"] == 0.5
    assert f["warnings"] == "noisy"          # cache-resident is expected in cache sweeps


def test_cpu_arrays_start_at_different_page_offsets():
    """Successive CPU arrays never share a page offset (no 4K aliasing between a copy's source
    and destination), stay 64-byte aligned, and hold the value asked for."""
    from brrr.experiments import _arrays
    arrays = [_arrays.full(1000, 1.5, "float32", "numpy") for _ in range(4)]
    offsets = [a.ctypes.data % 4096 for a in arrays]
    assert len(set(offsets)) == 4 and all(o % 64 == 0 for o in offsets)
    assert all(a.shape == (1000,) and (a == 1.5).all() and a.flags.c_contiguous for a in arrays)
    torch = pytest.importorskip("torch")
    t = _arrays.full((3, 4), 2.0, "float32", "torch")
    assert isinstance(t, torch.Tensor) and t.shape == (3, 4) and float(t.sum()) == 24.0
