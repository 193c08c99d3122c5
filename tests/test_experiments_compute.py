"""brrr.experiments.compute: FLOP counting and the elementwise-vs-matmul records (never speed)."""
import pytest

import brrr
from brrr.experiments import compute

ON_GPU = brrr.device().backend == "cuda"


def test_matmul_flops_counts_multiplies_and_adds():
    assert compute.matmul_flops(2, 3, 4) == 2 * 2 * 3 * 4
    assert compute.matmul_flops(1, 1, 1) == 2


def test_matmul_flops_agrees_with_pytorch():
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode
    a, b = torch.randn(6, 10), torch.randn(10, 3)
    with FlopCounterMode(display=False) as counter:
        a @ b
    assert counter.get_total_flops() == compute.matmul_flops(6, 3, 10)


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, "4"])
def test_matmul_flops_rejects_bad_shapes(bad):
    with pytest.raises(ValueError, match="m must"):
        compute.matmul_flops(bad, 2, 2)


def test_elementwise_vs_matmul_records():
    r = compute.elementwise_vs_matmul(n_elements=4096, matmul_n=32, repeat=8)
    kinds = [rec["kind"] for rec in r.records]
    assert kinds[0] == "elementwise x * 2" and "matmul FP32" in kinds
    by = {rec["kind"]: rec for rec in r.records}
    assert by["elementwise x * 2"]["flops"] == 4096 and by["elementwise x * 2"]["nbytes"] == 2 * 4 * 4096
    assert by["matmul FP32"]["flops"] == 2 * 32 ** 3 and by["matmul FP32"]["nbytes"] == 3 * 4 * 32 ** 2
    if "elementwise fused FMA chain" in by:
        chain = by["elementwise fused FMA chain"]
        assert chain["flops"] == 2 * 8 * 4096 and chain["intensity"] == pytest.approx(2.0)
    for rec in r.records:
        assert rec["gflops"] == pytest.approx(rec["flops"] / rec["seconds"] / 1e9)
        assert rec["fraction_of_peak"] == pytest.approx(rec["gflops"] * 1e9 / rec["peak_flops"])
    best_mm = max(rec["gflops"] for rec in r.records if rec["kind"].startswith("matmul"))
    best_el = max(rec["gflops"] for rec in r.records if rec["kind"].startswith("elementwise"))
    assert r.meta["gap"] == pytest.approx(best_mm / best_el)


@pytest.mark.skipif(ON_GPU, reason="checks the CPU-only behaviour")
def test_elementwise_vs_matmul_cpu_has_no_tensor_cores():
    r = compute.elementwise_vs_matmul(n_elements=1024, matmul_n=16, repeat=2)
    assert all(not rec["tensor_cores"] for rec in r.records)
    assert r.meta["spec_gap"] is None
    assert any("no tensor cores" in note for note in r.meta["notes"])


@pytest.mark.gpu
def test_elementwise_vs_matmul_gpu_tensor_cores():
    r = compute.elementwise_vs_matmul(n_elements=2 ** 20, matmul_n=1024, repeat=64)
    if brrr.device().has_tensor_cores("float16"):
        assert any(rec["kind"] == "matmul FP16 tensor cores" and rec["tensor_cores"] for rec in r.records)


@pytest.mark.parametrize("kwargs", [dict(n_elements=0), dict(matmul_n=-3), dict(repeat=1.5)])
def test_elementwise_vs_matmul_rejects_bad_sizes(kwargs):
    with pytest.raises(ValueError):
        compute.elementwise_vs_matmul(**kwargs)


def test_elementwise_vs_matmul_rejects_bad_flag():
    with pytest.raises(TypeError):
        compute.elementwise_vs_matmul(tensor_cores="yes")


# --- MFU of one layer against the batch ------------------------------------------------------

def test_mfu_vs_batch_records():
    pytest.importorskip("torch")
    r = compute.mfu_vs_batch(width=64, batches=[1, 4], progress=False)
    assert r.name == "mfu_vs_batch" and [rec["batch"] for rec in r.records] == [1, 4]
    peak = brrr.device().peak_flops("float32")
    assert r.meta["width"] == 64 and r.meta["peak_flops"] == peak
    for rec in r.records:
        assert rec["flops"] == compute.matmul_flops(rec["batch"], 64, 64)
        assert rec["nbytes"] == 4 * (64 * 64 + 64 + 2 * rec["batch"] * 64)
        assert rec["gflops"] == pytest.approx(rec["flops"] / rec["seconds"] / 1e9)
        assert rec["mfu"] == pytest.approx(rec["gflops"] * 1e9 / peak)
        assert rec["peak_flops"] == peak and rec["seconds"] > 0
        assert rec["roofline_seconds"] == pytest.approx(
            max(rec["flops"] / peak, rec["nbytes"] / r.meta["peak_bandwidth"]))


def test_mfu_vs_batch_quick_mode_picks_fewer_batches():
    dev = brrr.device()
    quick, full = compute.default_batches(dev, quick=True), compute.default_batches(dev, quick=False)
    assert len(quick) < len(full) and quick[0] == full[0] == 1 and max(quick) <= max(full)


@pytest.mark.parametrize("kwargs", [dict(width=0), dict(batches=[]), dict(batches=[2, -1])])
def test_mfu_vs_batch_rejects_bad_sizes(kwargs):
    pytest.importorskip("torch")
    with pytest.raises(ValueError):
        compute.mfu_vs_batch(**kwargs)


def test_mfu_vs_batch_is_exported():
    assert brrr.experiments.mfu_vs_batch is compute.mfu_vs_batch
    assert brrr.experiments.matmul_tensor_cores is compute.matmul_tensor_cores


# --- tensor cores -----------------------------------------------------------------------------

@pytest.mark.skipif(ON_GPU, reason="checks the CPU-only behaviour")
def test_matmul_tensor_cores_on_a_cpu_runs_general_math_and_says_so():
    r = compute.matmul_tensor_cores(sizes=[16, 32], dtypes=("float32",), progress=False)
    assert r.name == "matmul_tensor_cores" and [rec["n"] for rec in r.records] == [16, 32]
    assert all(not rec["tensor_cores"] for rec in r.records)
    assert r.meta["peaks"] == {"float32": brrr.device().peak_flops("float32")}
    assert any("no tensor cores" in note for note in r.meta["notes"])


def test_matmul_tensor_cores_rejects_bad_dtypes():
    for bad in ((), "float16"):
        with pytest.raises(ValueError):
            compute.matmul_tensor_cores(dtypes=bad)


@pytest.mark.gpu
def test_matmul_tensor_cores_gpu():
    r = compute.matmul_tensor_cores(sizes=[256, 512], progress=False)
    dev = brrr.device()
    assert {rec["dtype"] for rec in r.records} == {"float32", "float16", "bfloat16"}
    for rec in r.records:
        assert rec["tensor_cores"] == dev.has_tensor_cores(rec["dtype"])
        assert rec["peak_flops"] == dev.peak_flops(rec["dtype"], rec["tensor_cores"])


def test_gap_table_has_units():
    r = compute.elementwise_vs_matmul(n_elements=1024, matmul_n=16, repeat=2)
    frame = compute.gap_table(r)
    assert list(frame.columns) == ["kind", "library", "dtype", "time per call", "GFLOP/s", "GB/s",
                                   "FLOP/byte", "share of its peak"]
    assert len(frame) == len(r.records)
    assert r.meta["repeat"] == 2 and r.meta["matmul_n"] == 16 and r.meta["n_elements"] == 1024
