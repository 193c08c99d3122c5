"""brrr.experiments.dtypes: bytes and FLOPs per data type, skipped types, records (never speed)."""
import math

import pytest

import brrr
from brrr.experiments import dtypes
from brrr.hardware import last_level_cache_bytes
from brrr.results import Result

pytest.importorskip("torch")
ON_GPU = brrr.device().backend == "cuda"
FASTEST = 1e13   # bytes/s: no memory, on any machine this suite runs on, moves data faster (a bug check)


@pytest.fixture(scope="module")
def tiny():
    return dtypes.dtype_roofline(n=32, elements=4096, budget=0.01, progress=False)


def test_pointwise_bytes_scale_with_the_item_size():
    f32 = dtypes.pointwise_counts(1000, "float32")
    assert f32 == (2000.0, 8000.0)                         # 2 operations; read 4 + write 4 bytes
    assert dtypes.pointwise_counts(1000, "bfloat16")[1] == f32[1] / 2
    assert dtypes.pointwise_counts(1000, "float16")[1] == f32[1] / 2
    assert dtypes.pointwise_counts(1000, "int8")[1] == f32[1] / 4
    assert {dtypes.pointwise_counts(1000, d)[0] for d in dtypes.DTYPES} == {2000.0}


def test_int8_matmul_writes_int32():
    n = 64
    assert dtypes.matmul_counts(n, "float32") == (2.0 * n ** 3, 3.0 * 4 * n * n)
    assert dtypes.matmul_counts(n, "bfloat16") == (2.0 * n ** 3, 3.0 * 2 * n * n)
    assert dtypes.matmul_counts(n, "int8") == (2.0 * n ** 3, 2.0 * n * n + 4.0 * n * n)
    assert dtypes.out_dtype("matmul", "int8") == "int32" and dtypes.out_dtype("pointwise", "int8") == "int8"


@pytest.mark.parametrize("bad", ["float64", "int4", None])
def test_unknown_types_are_refused(bad):
    with pytest.raises(ValueError, match="dtype must be one of"):
        dtypes.pointwise_counts(8, bad)
    with pytest.raises(ValueError, match="dtype must be one of"):
        dtypes.dtype_roofline(dtypes=("float32", bad), n=8, elements=8)


def test_full_size_pointwise_is_beyond_the_cache():
    dev = brrr.device()
    s = dtypes.sizes(dev, quick=False)
    cache = dev.l2_bytes if dev.on_gpu else last_level_cache_bytes()
    assert s["elements"] & (s["elements"] - 1) == 0                 # a power of 2
    assert 2 * s["elements"] * dtypes.ITEMSIZE["int8"] >= 4 * cache  # int8's read + write: 4x the cache
    assert dtypes.sizes(dev, quick=True)["elements"] < s["elements"]


def test_one_record_per_op_and_type_with_honest_counts(tiny):
    assert [(r["op"], r["dtype"]) for r in tiny.records] == \
        [(op, d) for op in ("matmul", "pointwise") for d in dtypes.DTYPES]
    for r in tiny.records:
        counts = dtypes.matmul_counts(32, r["dtype"]) if r["op"] == "matmul" else \
            dtypes.pointwise_counts(4096, r["dtype"])
        assert (r["flops"], r["nbytes"]) == counts
        assert r["intensity"] == pytest.approx(r["flops"] / r["nbytes"])
        assert r["backend"] in ("cpu", "cuda") and r["itemsize"] == dtypes.ITEMSIZE[r["dtype"]]


def test_each_record_ran_or_says_why_not(tiny):
    for r in tiny.records:
        if r["skipped"]:
            assert isinstance(r["skipped"], str) and len(r["skipped"]) > 10
            assert "seconds" not in r
        else:
            assert r["seconds"] > 0 and r["min_seconds"] <= r["seconds"]
            assert r["gbps"] == pytest.approx(r["nbytes"] / r["seconds"] / 1e9)
            assert r["seconds"] >= r["nbytes"] / FASTEST, f"{r['label']} moved its bytes faster than physics"
    assert not any(r["skipped"] for r in tiny.records if r["dtype"] == "float32")


def test_roofs_per_type(tiny):
    dev = brrr.device()
    for r in tiny.records:
        if r["dtype"] == "int8":
            assert r["peak_flops"] is None and "int8" in r["peak_source"]
        elif r["dtype"] == "float32" or dev.on_gpu:
            assert r["peak_flops"] > 0
        else:
            assert r["peak_flops"] is None and "no spec sheet" in r["peak_source"]
    assert tiny.meta["peak_bandwidth"] == dev.peak_bandwidth
    if not ON_GPU:
        assert set(tiny.meta["native"]) >= {"bfloat16", "float16", "cpu_capability"}


def test_the_result_round_trips_through_json(tiny, tmp_path):
    back = Result.load(tiny.to_json(str(tmp_path / "dtypes.json")))
    assert back.name == "dtype_roofline" and len(back.records) == len(tiny.records)
    for a, b in zip(tiny.records, back.records):
        assert a["label"] == b["label"] and a.get("seconds") == b.get("seconds")
        assert a["peak_flops"] == b["peak_flops"] or (a["peak_flops"] is None and b["peak_flops"] is None)


def test_a_type_that_cannot_run_is_a_skipped_record(monkeypatch):
    real = dtypes._matmul_call

    def refuse(torch, dtype, where, n):
        if dtype == "int8":
            raise RuntimeError("no int8 kernel for this device\nsecond line")
        return real(torch, dtype, where, n)

    monkeypatch.setattr(dtypes, "_matmul_call", refuse)
    r = dtypes.dtype_roofline(dtypes=("float32", "int8"), n=16, elements=256, budget=0.01, progress=False)
    rec = next(x for x in r.records if (x["op"], x["dtype"]) == ("matmul", "int8"))
    assert rec["skipped"] == "RuntimeError: no int8 kernel for this device"
    assert rec["nbytes"] == dtypes.matmul_counts(16, "int8")[1] and "seconds" not in rec
    other = next(x for x in r.records if (x["op"], x["dtype"]) == ("pointwise", "int8"))
    assert other["skipped"] == "" and other["seconds"] > 0


@pytest.mark.skipif(ON_GPU, reason="the CPU's roof for float32 is the measured one")
def test_cpu_float32_roof_is_the_measured_one(tiny):
    rec = next(x for x in tiny.records if (x["op"], x["dtype"]) == ("matmul", "float32"))
    assert rec["peak_flops"] == brrr.device().peak_flops("float32")
    assert "measured" in rec["peak_source"]
    assert math.isfinite(rec["peak_flops"])


@pytest.mark.gpu
def test_gpu_roofs_rise_with_tensor_cores():
    dev = brrr.device()
    peak, source = dtypes.roof_for(dev, "float16")
    if dev.has_tensor_cores("float16"):
        assert peak == dev.peak_flops("float16", True) and "tensor cores" in source
    assert dtypes.roof_for(dev, "float32")[0] == dev.peak_flops("float32")


def test_matmul_inputs_are_random_and_int8_b_is_column_major():
    import torch
    for dtype in ("float32", "int8"):
        fn, (a, b, c) = dtypes._matmul_call(torch, dtype, "cpu", 16)
        assert len(set(a.flatten().tolist())) > 4 and not torch.equal(a, b.t().contiguous().t())
        if dtype == "int8":
            assert b.stride() == (1, 16)                      # column-major B for the int8 GEMM
            assert torch.equal(fn(a, b, c), a.int() @ b.int())


def test_pointwise_scalar_is_a_cpu_scalar():
    import torch
    fn, (one, x, y) = dtypes._pointwise_call(torch, "float32", "cpu", 8)
    assert one.dim() == 0 and one.device.type == "cpu"
    assert torch.equal(fn(one, x, y), 1 + 2 * x)


def test_a_pointwise_op_is_judged_against_general_math_not_tensor_cores():
    class FakeGPU:
        on_gpu, source = True, "a spec sheet"
        def has_tensor_cores(self, dtype):
            return True
        def peak_flops(self, dtype="float32", tensor_cores=False):
            return 1000e12 if tensor_cores else 67e12
    dev = FakeGPU()
    assert dtypes.roof_for(dev, "bfloat16", "matmul")[0] == 1000e12
    assert dtypes.roof_for(dev, "bfloat16", "pointwise") == (67e12, "a spec sheet (general math)")
