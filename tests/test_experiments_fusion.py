"""Fusion: the bytes model, the predicted speed-up and the measured records (brrr.experiments.fusion)."""
import math

import numpy as np
import pytest

import brrr
from brrr.experiments import fusion

ROOF = brrr.Roofline(peak_flops=1e12, peak_bandwidth=1e11)   # ridge: 10 FLOP/byte


def test_chain_traffic_bytes_model():
    n = 1000
    for k in (1, 2, 3, 8):
        assert fusion.chain_traffic(k, n, True) == (2 * n * 4, k * n)
        assert fusion.chain_traffic(k, n, False) == (2 * k * n * 4, k * n)
    assert fusion.chain_traffic(4, n, False, op="fma", dtype="float64") == (2 * 4 * n * 8, 2 * 4 * n)


def test_predicted_speedup_is_k_then_capped():
    for k in (1, 2, 4, 8, 16, 64):          # fused stays memory-bound while k/(2*4) <= 10, i.e. k <= 80
        assert fusion.predicted_speedup(ROOF, k) == pytest.approx(k)
    cap = 2 * 4 * ROOF.ridge                # 80
    assert fusion.crossover_k(ROOF) == pytest.approx(cap)
    for k in (128, 1024, 10 ** 6):
        assert fusion.predicted_speedup(ROOF, k) == pytest.approx(cap)
    assert fusion.crossover_k(ROOF, "fma", "float64") == pytest.approx(2 * 8 * 10 / 2)


def test_epilogue_traffic():
    m, n, k = 4, 5, 6
    fused = fusion.epilogue_traffic(m, n, k, True)
    unfused = fusion.epilogue_traffic(m, n, k, False)
    assert fused == ((m * k + k * n + m * n + n) * 4, 2 * m * n * k + 2 * m * n)
    assert unfused[0] - fused[0] == 4 * m * n * 4 and unfused[1] == fused[1]
    kernels = fusion.epilogue_kernels(m, n, k, False)
    assert [name for name, _, _ in kernels] == ["matmul", "bias add", "ReLU"]
    assert kernels[0] == ("matmul", (m * k + k * n + m * n) * 4, 2 * m * n * k)
    assert kernels[1] == ("bias add", (2 * m * n + n) * 4, m * n) and kernels[2] == ("ReLU", 2 * m * n * 4, m * n)
    assert (sum(b for _, b, _ in kernels), sum(f for _, _, f in kernels)) == unfused
    assert len(fusion.epilogue_kernels(m, n, k, True)) == 1


def test_epilogue_time_sums_each_kernels_bound():
    """Kernels run one after another: eager mode's least time is the sum of each kernel's own bound,
    more than one bound of the summed bytes and FLOPs where the matmul is compute-bound and the
    passes memory-bound (the roof's spare bandwidth during the matmul cannot serve the passes)."""
    roof = brrr.Roofline(peak_flops=1e11, peak_bandwidth=2e10)           # ridge 5
    m, n, k = 256, 256, 16                                              # matmul ~7.5 FLOP/byte
    kernels = fusion.epilogue_kernels(m, n, k, False)
    assert [roof.regime(f, b) for _, b, f in kernels] == ["compute-bound", "memory-bound", "memory-bound"]
    each = sum(max(f / 1e11, b / 2e10) for _, b, f in kernels)
    assert fusion.epilogue_time(roof, m, n, k, False) == pytest.approx(each)
    assert each > roof.time(*fusion.epilogue_traffic(m, n, k, False)[::-1]) * 1.01
    assert fusion.epilogue_time(roof, m, n, k, True) == pytest.approx(roof.time(*fusion.epilogue_traffic(
        m, n, k, True)[::-1]))
    with pytest.raises(TypeError):
        fusion.epilogue_time(None, m, n, k, True)


def test_kernel_names_parses_inductor_output():
    source = """
    def call(args):
        extern_kernels.addmm(arg2_1, arg0_1, arg1_1, alpha=1, beta=1, out=buf0)
        cpp_fused_relu_0(buf1)
        triton_poi_fused_mul_0.run(buf2, 1024, stream=stream0)
    cpp_fused_relu_0 = async_compile.cpp_pybinding(['float*'], '''...''')
    """
    assert fusion.kernel_names(source) == ["extern_kernels.addmm", "cpp_fused_relu_0", "triton_poi_fused_mul_0"]


def test_fusion_speedup_records_and_speedups(monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")
    n = 2 ** 16
    result = fusion.fusion_speedup(ks=(1, 4), n=n, backends=("brrr", "cupy_fuse"), roof=ROOF, progress=False)
    if brrr.device().backend != "cuda":
        assert any("cupy_fuse skipped" in note for note in result.meta["notes"])
    brrr_rows = [r for r in result.records if r["fuser"] == "brrr"]
    assert {(r["variant"], r["k"]) for r in brrr_rows} == {("fused", 1), ("unfused", 1), ("fused", 4), ("unfused", 4)}
    for r in brrr_rows:
        nbytes, flops = fusion.chain_traffic(r["k"], n, r["variant"] == "fused")
        assert (r["nbytes"], r["flops"]) == (nbytes, flops)
        assert r["predicted_seconds"] == pytest.approx(max(flops / 1e12, nbytes / 1e11))
        assert r["seconds"] > 0 and r["predicted_regime"] == "memory-bound"
        assert r["backend"] == brrr.device().backend and 0 < r["min_seconds"] <= r["seconds"]
    table = fusion.speedups(result)
    row = table[(table.fuser == "brrr") & (table.k == 4)].iloc[0]
    assert row.predicted_speedup == pytest.approx(4)
    assert row.speedup == pytest.approx(row.unfused_seconds / row.fused_seconds)
    lines = fusion.speedup_lines(result)
    assert set(lines.series) >= {"measured: brrr.kernels (Numba)" if brrr.device().backend == "cpu"
                                 else "measured: brrr.kernels (CuPy)", "predicted (roofline)"}
    per = fusion.time_lines(result, per_element=True)
    assert set(per.series) == {"measured: mul", "roofline: mul", "ceiling: mul"}
    assert per[per.series == "roofline: mul"].seconds.max() == pytest.approx(2 * 4 / 1e11)
    assert list(table.ceiling_speedup) == pytest.approx(list(table.predicted_speedup))   # k <= 4: memory-bound


def test_fused_and_unfused_kernels_agree():
    kernels = pytest.importorskip("brrr.kernels")
    if brrr.device().backend == "cuda" and brrr.device().array_library != "cupy":
        pytest.skip("brrr.kernels needs CuPy on a GPU")
    x = np.linspace(0, 1, 1000, dtype=np.float32)
    assert np.array_equal(kernels.chain(x, 5, fused=True), kernels.chain(x, 5, fused=False))


def test_bad_input():
    with pytest.raises(ValueError, match="op must be"):
        fusion.chain_traffic(2, 10, True, op="sqrt")
    with pytest.raises(ValueError, match="k"):
        fusion.chain_traffic(0, 10, True)
    with pytest.raises(ValueError, match="n"):
        fusion.chain_traffic(2, 0, True)
    with pytest.raises(TypeError, match="roof"):
        fusion.predicted_speedup("A100", 4)
    with pytest.raises(ValueError, match="backends"):
        fusion.fusion_speedup(ks=(1,), n=16, backends=("numpy",), progress=False)
    with pytest.raises(ValueError, match="dtype"):
        fusion.fusion_speedup(ks=(1,), n=16, dtype="float16", progress=False)
    with pytest.raises(ValueError, match="ks"):
        fusion.fusion_speedup(ks=(0,), n=16, progress=False)
    with pytest.raises(ValueError, match="columns"):
        fusion.speedups([{"k": 1}])
    with pytest.raises(ValueError, match="variant"):
        fusion.time_lines([{"k": 1}], variant="both")
    with pytest.raises(ValueError, match="m must be"):
        fusion.epilogue_traffic(0, 1, 1, True)


@pytest.mark.gpu
def test_cupy_fuse_runs_on_gpu():
    pytest.importorskip("cupy")
    result = fusion.fusion_speedup(ks=(2,), n=2 ** 20, backends=("cupy_fuse",), progress=False)
    assert {r["variant"] for r in result.records} == {"fused", "unfused"}


def test_torch_compile_backend_or_clear_note(monkeypatch):
    """torch.compile either runs (one fused kernel) or the run notes why it was skipped."""
    pytest.importorskip("torch")
    monkeypatch.setenv("BRRR_QUICK", "1")
    result = fusion.fusion_speedup(ks=(2,), n=4096, backends=("torch_compile",), progress=False)
    if result.records:
        assert {r["variant"] for r in result.records} == {"fused", "unfused"}
        assert math.isfinite(result.meta["compile_seconds"][2])
    else:
        assert any("torch_compile" in note for note in result.meta["notes"])


def test_default_ks_per_sweep():
    assert fusion.default_ks(quick=False) == tuple(2 ** i for i in range(8))
    assert fusion.default_ks(quick=True, sweep="torch_compile") == (1, 4, 16)
    assert max(fusion.default_ks(quick=False, sweep="cos")) == 64
    with pytest.raises(ValueError):
        fusion.default_ks(sweep="nope")


def test_predicted_table_is_the_model():
    table = fusion.predicted_table(ROOF, ks=(1, 16, 128))
    assert list(table["k (ops)"]) == [1, 16, 128]
    assert list(table["unfused bytes per element"]) == [8, 128, 1024]
    assert set(table["fused bytes per element"]) == {8}
    assert list(table["predicted speed-up"]) == pytest.approx([1, 16, 80])
    # multiplications at half the peak: the chain's own crossover at k = 40, where its speed-up levels off
    assert list(table["predicted speed-up at 50% of the peak"]) == pytest.approx([1, 16, 40])
    assert list(table["fused kernel at 50% of the peak"]) == ["memory-bound", "memory-bound", "compute-bound"]


def _hand_made_run(reference=False):
    records = []
    for k, tf, tu in ((1, 1e-3, 1e-3), (4, 1e-3, 4e-3)):
        for variant, t in (("fused", tf), ("unfused", tu)):
            nbytes, flops = fusion.chain_traffic(k, 1000, variant == "fused")
            records.append({"fuser": "brrr", "library": "brrr.kernels (Numba)", "variant": variant, "k": k,
                            "op": "mul", "n": 1000, "seconds": t, "predicted_seconds": ROOF.time(flops, nbytes),
                            "predicted_regime": "memory-bound"})
    meta = {"device": {"name": "Test GPU" if reference else "Test CPU", "backend": "cuda" if reference else "cpu"},
            "crossover_k": 80.0, "date": "2026-01-02", "reference": reference}
    return brrr.Result("fusion_speedup", records, meta)


def test_speedup_table_and_plots():
    run = _hand_made_run()
    table = fusion.speedup_table(run)
    assert list(table.columns) == ["fuser", "k (ops)", "fused time", "unfused time", "measured speed-up",
                                   "roofline speed-up", "roofline speed-up at 50% of the peak"]
    assert list(table["measured speed-up"]) == pytest.approx([1, 4])
    ref = _hand_made_run(reference=True)
    fig = brrr.plot.fusion_speedups([run], reference=[ref])
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("this run" in t for t in labels) and any("reference 2026-01-02" in t for t in labels)
    assert any("reaches the ridge (k = 80" in t for t in labels)
    fig = brrr.plot.fusion_times(run)
    assert {line.get_label() for line in fig.axes[0].get_lines()} == {"x * c chain, measured", "x * c chain, roofline"}


def test_epilogue_bars_and_inspect_compiled():
    roof = brrr.Roofline(peak_flops=1e12, peak_bandwidth=1e11)
    result = brrr.Result("epilogue_fusion", [{"variant": "eager", "seconds": 2e-3},
                                             {"variant": "torch.compile", "seconds": 1e-3}],
                         {"roof": roof.to_dict(), "shape": [64, 64, 8], "dtype": "float32"})
    bars = fusion.epilogue_bars(result).to_frame()
    assert list(bars["case"]) == ["eager (measured)", "torch.compile (measured)", "3 kernels (roofline)",
                                  "1 fused kernel (roofline)"]    # no kernels named: no bar for them
    nbytes, flops = fusion.epilogue_traffic(64, 64, 8, True)
    assert bars["time per call"].iloc[3] == pytest.approx(roof.time(flops, nbytes))
    assert bars["time per call"].iloc[2] == pytest.approx(fusion.epilogue_time(roof, 64, 64, 8, False))

    def broken(x):
        raise RuntimeError("no compiler here")
    torch = pytest.importorskip("torch")
    out = fusion.inspect_compiled(broken, torch.ones(4))
    assert out["kernels"] == [] and "no compiler here" in out["error"]


def test_a_chain_reaches_at_most_its_share_of_the_peak():
    # the peak counts an FMA, one instruction, as two FLOPs: one FLOP an instruction reaches half of it
    assert fusion.crossover_k(ROOF, at_ceiling=True) == pytest.approx(40)
    assert fusion.crossover_k(ROOF, "ffma", at_ceiling=True) == pytest.approx(40)    # one FFMA a link
    assert fusion.crossover_k(ROOF, "ffma", at_ceiling=True, backend="cpu") == pytest.approx(20)   # mul, then add
    assert fusion.cap_length(ROOF) == 40 and fusion.cap_length(brrr.Roofline(1.01e12, 1e11)) == 41
    assert fusion.ceiling_roof(ROOF, "fma").peak_flops == 0.5e12      # uncontracted: two instructions
    assert fusion.predicted_speedup(ROOF, 128, at_ceiling=True) == pytest.approx(40)
    assert fusion.ceiling_column("ffma") == "at 100% of the peak"


def test_the_kernels_torch_compile_launched_are_a_matmul_and_passes_over_its_output():
    m, n, k = 4, 5, 6
    mm, tail = fusion.launched_kernels(m, n, k, ["extern_kernels.mm", "triton_poi_fused_add_relu_0"])
    assert mm == ("extern_kernels.mm", (m * k + k * n + m * n) * 4, 2 * m * n * k)
    assert tail == ("triton_poi_fused_add_relu_0", (2 * m * n + n) * 4, 2 * m * n)    # reads b too: bias left
    addmm, relu = fusion.launched_kernels(m, n, k, ["extern_kernels.addmm", "cpp_fused_relu_0"])
    assert addmm[1:] == ((m * k + k * n + m * n + n) * 4, 2 * m * n * k + m * n) and relu[1:] == (2 * m * n * 4, m * n)
    (one,) = fusion.launched_kernels(m, n, k, ["triton_tem_fused_addmm_relu_0"])
    assert one[1:] == fusion.epilogue_traffic(m, n, k, True)
    # the same FLOPs, whatever ran them
    assert mm[2] + tail[2] == one[2] == fusion.epilogue_traffic(m, n, k, False)[1]
    result = brrr.Result("epilogue_fusion", [{"variant": "eager", "seconds": 2e-3}, {"variant": "torch.compile",
                                                                                   "seconds": 1e-3}],
                         {"roof": ROOF.to_dict(), "shape": [64, 64, 8], "compiled_kernels": ["extern_kernels.mm", "t"]})
    bars = fusion.epilogue_bars(result).to_frame()
    assert list(bars["case"])[3] == "2 kernels as compiled (roofline)"
    assert bars["time per call"].iloc[3] == pytest.approx(fusion.epilogue_bounds(result)["torch.compile"])
