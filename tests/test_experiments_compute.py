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


def test_the_default_sizes_are_the_ones_the_comparison_takes():
    sizes = compute.default_sizes()
    r = compute.elementwise_vs_matmul(matmul_n=16, repeat=2)
    assert r.meta["n_elements"] == sizes["n_elements"] and set(sizes) == {"n_elements", "matmul_n", "repeat"}


def test_gap_table_of_a_missing_record_is_none():
    assert compute.gap_table(None) is None


def test_gap_table_has_units():
    r = compute.elementwise_vs_matmul(n_elements=1024, matmul_n=16, repeat=2)
    frame = compute.gap_table(r)
    assert list(frame.columns)[:3] == ["kind", "library", "dtype"] and list(frame.columns)[6:] == [
        "FLOP/byte", "share of its peak"]
    assert frame.columns[4] in ("GFLOP/s", "TFLOP/s") and frame.columns[5] in ("GB/s", "TB/s")
    assert len(frame) == len(r.records)
    assert r.meta["repeat"] == 2 and r.meta["matmul_n"] == 16 and r.meta["n_elements"] == 1024


@pytest.mark.parametrize("lib, dtype", [("numpy", "float32"), ("numpy", "float64"), ("torch", "float32"),
                                        ("torch", "bfloat16")])
def test_matmul_inputs_are_random_normal_not_constant(lib, dtype):
    """Constant matrices run faster on tensor cores than real data: every matmul benchmark
    multiplies random normal values instead (review: all-ones inputs inflated TFLOP/s)."""
    if lib == "torch":
        pytest.importorskip("torch")
    from brrr.experiments.matmul import random_normal
    dev = brrr.device()
    if lib == "numpy" and dev.on_gpu:
        pytest.skip("numpy arrays are CPU arrays")
    a = random_normal(dev, (64, 64), dtype, lib, seed=1)
    values = [float(v) for v in (a.float() if lib == "torch" else a).ravel()[:4096].tolist()]
    assert len(set(values)) > 20                            # not a constant matrix
    mean = sum(values) / len(values)
    sd = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    assert abs(mean) < 0.1 and 0.9 < sd < 1.1                # standard normal
    b = random_normal(dev, (64, 64), dtype, lib, seed=2)
    assert (a != b).any()                                   # two different matrices


def test_matmul_experiments_record_their_data():
    from brrr.experiments import matmul_vs_size
    assert matmul_vs_size(sizes=[16], progress=False).meta["data"] == "random normal"
    r = compute.elementwise_vs_matmul(n_elements=4096, matmul_n=32, repeat=8)
    assert r.meta["data"] == "random normal"


def test_no_matmul_experiment_fills_its_inputs_with_a_constant():
    """The source of each matmul benchmark builds its inputs with random_normal (a grep, so that a
    new benchmark that slips back to ones or full(1.0) fails here)."""
    import inspect
    import re
    from brrr.experiments import dtypes, matmul, roofline
    for module in (compute, dtypes, matmul, roofline):
        src = inspect.getsource(module)
        assert not re.search(r"(full\(\([^)]*\),\s*1\.0|torch\.ones\(\(n, n\))", src), module.__name__


def test_gap_table_never_prints_scientific_notation():
    """Rates in T units once they reach a thousand G, three significant digits (review 01_02 item 17)."""
    from brrr import reference
    from brrr.units import format_number
    for runs in reference.record_sets().values():
        if "elementwise_vs_matmul" not in runs:
            continue
        frame = compute.gap_table(runs["elementwise_vs_matmul"])
        for col in frame.columns[4:7]:
            assert all("e+" not in format_number(v) for v in frame[col]), (col, list(frame[col]))
        rate = frame.columns[4]
        assert frame[rate].max() < 1e3 or rate == "TFLOP/s"
        chain = [k for k in frame["kind"] if "chain" in k]
        recs = [r for r in runs["elementwise_vs_matmul"].records if "chain" in r["kind"]]
        assert all(("no FMA" in k) == (r.get("fma") is not True) for k, r in zip(chain, recs))
