"""brrr.experiments.latency: the copy against its parallelism, and the pointer chase (never speed)."""
import os
import shutil
import subprocess

import numpy as np
import pytest

import brrr
from brrr.experiments import latency as L
from brrr.kernel_source import CUDA_BLOCK, cuda_source
from brrr.results import Result

ON_GPU = brrr.device().backend == "cuda"
cpu_only = pytest.mark.skipif(ON_GPU, reason="checks the CPU sweep (Numba threads)")
TINY = 2 ** 16              # elements per array: the tests check records, not bandwidth
CHASE = 64 * 4096           # a 256 KiB chase: enough to check the plumbing


def numba_threads():
    import numba
    return numba


@cpu_only
def test_cpu_sweep_records_are_valid():
    most = L.max_threads()
    r = L.bandwidth_vs_parallelism(elements=TINY, chase_bytes=CHASE, progress=False)
    assert r.name == "bandwidth_vs_parallelism"
    assert [rec["parallelism"] for rec in r.records] == L.default_threads(most)
    latency = r.meta["latency"]["seconds_per_load"]
    assert latency > 0 and r.meta["latency"]["buffer_bytes"] == CHASE
    assert r.meta["unit"] == "threads" and r.meta["max_threads"] == most
    assert r.meta["roof_bandwidth"] == brrr.device().peak_bandwidth
    assert set(r.meta["stores"]) == {"arch", "streaming_store_threshold", "roof_copy_bytes"}   # how copies store
    for rec in r.records:
        assert rec["backend"] == "cpu" and rec["library"] == "numba" and rec["unit"] == "threads"
        assert rec["threads"] == rec["parallelism"] and rec["size"] == TINY
        assert rec["nbytes"] == 2 * 4 * TINY and rec["flops"] == 0   # one read and one write of float32
        assert 0 < rec["min_seconds"] <= rec["seconds"] and rec["iqr_seconds"] >= 0
        assert rec["gbps"] == pytest.approx(rec["nbytes"] / rec["seconds"] / 1e9)
        assert rec["fraction_of_roof"] == pytest.approx(rec["gbps"] * 1e9 / r.meta["roof_bandwidth"])
        assert rec["bytes_in_flight"] == pytest.approx(rec["gbps"] * 1e9 * latency)
    again = Result.from_dict(r.to_dict())   # plain data
    assert again.records == r.records


@cpu_only
def test_without_latency_there_is_no_bytes_in_flight():
    r = L.bandwidth_vs_parallelism(parallelism=[1], elements=TINY, latency=False, progress=False)
    assert r.meta["latency"] is None
    assert "bytes_in_flight" not in r.records[0]


@cpu_only
def test_a_copy_that_does_nothing_is_refused(monkeypatch):
    """A kernel that skips its work would report a bandwidth above any physical bound: refused."""
    from brrr import kernels
    monkeypatch.setattr(kernels, "copy", lambda x, out=None: out)
    with pytest.raises(RuntimeError, match="unwritten"):
        L.bandwidth_vs_parallelism(parallelism=[1], elements=TINY, latency=False, progress=False)


@cpu_only
def test_the_thread_count_is_put_back():
    numba = numba_threads()
    most = L.max_threads()
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        L.bandwidth_vs_parallelism(parallelism=[most], elements=TINY, latency=False, progress=False)
        assert numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(before)


@cpu_only
def test_the_thread_count_is_put_back_after_an_error(monkeypatch):
    numba = numba_threads()
    most = L.max_threads()
    seen = []

    def failing_bench(*args, **kwargs):
        seen.append(numba.get_num_threads())
        raise RuntimeError("boom")
    monkeypatch.setattr(L, "bench", failing_bench)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        with pytest.raises(RuntimeError, match="boom"):
            L.bandwidth_vs_parallelism(parallelism=[most], elements=TINY, latency=False, progress=False)
        assert seen == [most]                       # it did run with the asked-for count
        assert numba.get_num_threads() == 1         # and put the caller's count back
    finally:
        numba.set_num_threads(before)


@cpu_only
@pytest.mark.parametrize("kwargs, error", [
    (dict(parallelism=[0]), ValueError),
    (dict(parallelism=[2.5]), ValueError),
    (dict(parallelism=7), TypeError),
    (dict(dtype="int8"), ValueError),
    (dict(elements=0), ValueError),
])
def test_bad_input_is_refused(kwargs, error):
    with pytest.raises(error):
        L.bandwidth_vs_parallelism(**{"elements": TINY, "latency": False, "progress": False, **kwargs})


@cpu_only
def test_more_threads_than_numba_has_are_refused():
    with pytest.raises(ValueError, match="NUMBA_NUM_THREADS"):
        L.bandwidth_vs_parallelism(parallelism=[L.max_threads() + 1], elements=TINY, latency=False,
                                   progress=False)


def test_the_chase_is_one_cycle_through_every_line():
    lines = 1000
    chain = L.chase_chain(L.LINE_BYTES * lines, seed=3)
    assert chain.dtype == np.int64 and chain.nbytes == L.LINE_BYTES * lines
    seen, i = [], 0
    for _ in range(lines):
        seen.append(i)
        i = int(chain[i])
    assert i == 0                                            # back at the start after every line
    assert sorted(seen) == [8 * j for j in range(lines)]     # each line's first element, once


@cpu_only
def test_load_latency_is_seconds_per_load():
    out = L.load_latency(CHASE, steps=4096)
    assert out["steps"] == 4096 and out["buffer_bytes"] == CHASE and out["backend"] == "cpu"
    assert out["seconds_per_load"] == pytest.approx(out["seconds"] / 4096)
    assert 0 < out["min_seconds"] <= out["seconds"]
    with pytest.raises(ValueError):
        L.load_latency(64, steps=10)


def test_what_is_swept():
    assert L.default_threads(1) == [1]
    assert L.default_threads(2) == [1, 2]
    assert L.default_threads(8) == list(range(1, 9))
    assert L.default_threads(12) == [1, 2, 4, 8, 12]
    blocks = L.default_blocks(132)
    assert blocks == sorted(set(blocks)) and blocks[0] == 1 and blocks[-1] == L.BLOCKS_PER_SM * 132
    assert {132, 8 * 132, 1024} <= set(blocks)


def test_arrays_are_beyond_the_last_level_cache():
    dev = brrr.device()
    for quick, factor in ((False, L.ARRAY_FACTOR), (True, 1)):
        n = L.default_elements(dev, "float32", quick=quick)
        assert n & (n - 1) == 0                                   # a power of 2
        assert 4 * n >= factor * dev.l2_bytes and 2 * n < factor * max(dev.l2_bytes, 2 ** 20)


def _nvcc():
    for candidate in (shutil.which("nvcc"), "/usr/local/bin/nvcc",
                      os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


@pytest.mark.parametrize("arch", ["75", "90"])   # T4 and H100
def test_cuda_sources_compile(arch, tmp_path):
    """The chase and the copy the GPU sweep launches compile, so the GPU path is checked without a GPU."""
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("no nvcc here")
    path = tmp_path / "latency.cu"
    path.write_text(L.CHASE_CUDA + "\n" + cuda_source("copy", "float32") + "\n" + cuda_source("copy", "float64"))
    cubin = tmp_path / "latency.cubin"
    done = subprocess.run([nvcc, f"-arch=sm_{arch}", "--cubin", "--fmad=false", "-Werror", "all-warnings",
                           "-o", str(cubin), str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    binary = cubin.read_bytes()
    for name in (b"brrr_chase", b"brrr_copy_float", b"brrr_copy_double"):
        assert name in binary


def test_the_figure_draws_this_run_and_a_reference(tmp_path):
    from brrr.plot.latency import bandwidth_vs_parallelism as plot
    dev = {"name": "AMD EPYC (2 threads)", "backend": "cpu", "peak_bandwidth": 3e10}
    live = Result("bandwidth_vs_parallelism", [
        {"parallelism": p, "unit": "threads", "gbps": g, "nbytes": 8.0, "size": 1} for p, g in ((1, 8), (2, 14))],
        {"device": dev})
    gpu = {"name": "NVIDIA H100 80GB HBM3", "backend": "cuda", "peak_bandwidth": 3.35e12}
    ref = Result("bandwidth_vs_parallelism", [
        {"parallelism": b, "unit": "blocks", "gbps": min(8.0 * b, 3000.0), "nbytes": 8.0, "size": 1}
        for b in L.default_blocks(132)], {"device": gpu, "reference": True, "sm_count": 132, "block": CUDA_BLOCK})
    fig = plot(live)
    assert len(fig.axes) == 1
    fig = plot(live, reference=[ref])
    assert len(fig.axes) == 2
    assert "blocks of 256 threads" in fig.axes[1].get_xlabel() and "threads" in fig.axes[0].get_xlabel()
    roofs = [line.get_ydata()[0] for line in fig.axes[1].lines if line.get_linestyle() == "--"
             and len(set(line.get_ydata())) == 1]
    assert 3350.0 in roofs                                    # the GPU's roof, in GB/s
    fig.savefig(tmp_path / "latency.png")
    with pytest.raises(ValueError):
        plot(Result("x", [{"size": 1}], {}))


@pytest.mark.gpu
def test_gpu_sweep_launches_the_blocks_it_says():
    dev = brrr.device()
    r = L.bandwidth_vs_parallelism(parallelism=[1, 2, dev.sm_count], elements=2 ** 20, progress=False)
    assert [rec["parallelism"] for rec in r.records] == [1, 2, dev.sm_count]
    for rec in r.records:
        assert rec["backend"] == "cuda" and rec["unit"] == "blocks" and rec["library"] == "cupy"
        assert rec["threads"] == CUDA_BLOCK * rec["parallelism"]
        assert rec["bytes_in_flight"] > 0
    assert r.meta["latency"]["backend"] == "cuda" and r.meta["latency"]["seconds_per_load"] > 0


def test_each_chase_call_goes_on_where_the_last_stopped():
    """So the lines a call loads were not left in a cache by the call before."""
    chain = L.chase_chain(L.LINE_BYTES * 500, seed=1)
    chase = L._numba_chase()
    middle = chase(chain, 0, 120)
    assert middle != 0 and chase(chain, middle, 130) == chase(chain, 0, 250)
    assert chase(chain, 0, 500) == 0                     # the whole cycle comes back to the start
    assert "where[0] = i;" in L.CHASE_CUDA and "long long i = where[0];" in L.CHASE_CUDA


def test_a_gpu_without_cupy_gives_an_empty_result_that_says_why(monkeypatch):
    """A chapter must not stop on a GPU machine that has PyTorch but no CuPy."""
    import matplotlib
    matplotlib.use("Agg")
    from brrr.plot.latency import bandwidth_vs_parallelism as draw
    from brrr.claims import say
    from brrr.prose.bandwidth import latency_claims

    class TorchOnlyGpu:
        on_gpu, array_library, name = True, "torch", "a GPU without CuPy"
    monkeypatch.setattr(L, "live_device", lambda: TorchOnlyGpu())
    result = L.bandwidth_vs_parallelism()
    assert result.records == [] and "CuPy is not installed" in result.meta["unavailable"]
    said = say(latency_claims, result)
    assert said.facts == {} and "CuPy is not installed" in said.text   # the Missing claim says why
    fig = draw(result)
    assert "CuPy is not installed" in " ".join(t.get_text() for t in fig.axes[0].texts)
