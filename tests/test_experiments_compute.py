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
