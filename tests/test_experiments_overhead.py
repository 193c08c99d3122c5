"""brrr.experiments.overhead: records, fits and verdicts (never speed)."""
import math

import pytest

from brrr import reference

import brrr
from brrr.experiments import overhead as ov
from brrr.results import Result

ON_GPU = brrr.device().backend == "cuda"


def test_time_vs_size_records_are_consistent():
    sizes = [1, 16, 256]
    r = ov.time_vs_size(("numpy", "torch"), sizes=sizes, op="add", budget=0.01, progress=False)
    assert len(r) == 2 * len(sizes)
    for rec in r.records:
        assert rec["op"] == "add" and rec["dtype"] == "float32"
        assert rec["nbytes"] == 3 * 4 * rec["size"]          # two reads, one write of float32
        assert 0 < rec["min_seconds"] <= rec["seconds"]
        assert rec["iqr_seconds"] >= 0 and rec["calls_per_sample"] >= 1
    assert {rec["library"] for rec in r.records} == {"numpy", "torch"}
    assert [rec["size"] for rec in r.records if rec["library"] == "numpy"] == sizes
    assert all(rec["backend"] == "cpu" for rec in r.records if rec["library"] == "numpy")
    Result.from_dict(r.to_dict())  # plain data


def test_time_vs_size_cos_counts_one_read():
    r = ov.time_vs_size("numpy", sizes=[8], op="cos", dtype="float64", budget=0.01, progress=False)
    assert r.records[0]["nbytes"] == 2 * 8 * 8


@pytest.mark.skipif(ON_GPU, reason="checks the CPU-only behaviour")
def test_cupy_is_skipped_with_a_note_without_gpu():
    r = ov.time_vs_size(("numpy", "cupy"), sizes=[4], budget=0.01, progress=False)
    assert {rec["library"] for rec in r.records} == {"numpy"}
    assert any("cupy skipped" in note for note in r.meta["notes"])


@pytest.mark.gpu
def test_cupy_runs_on_gpu():
    r = ov.time_vs_size(("cupy", "torch"), sizes=[4, 4096], budget=0.01, progress=False)
    assert {rec["backend"] for rec in r.records} == {"cuda"}
    assert len(r) == 4


@pytest.mark.parametrize("kwargs, error", [
    (dict(libraries=("numpy", "jax")), ValueError),
    (dict(op="tanh"), ValueError),
    (dict(dtype="int8"), ValueError),
    (dict(sizes=[]), ValueError),
    (dict(sizes=[0, 4]), ValueError),
    (dict(sizes=[2.5]), ValueError),
    (dict(sizes=7), TypeError),
])
def test_time_vs_size_rejects_bad_input(kwargs, error):
    with pytest.raises(error):
        ov.time_vs_size(**{"libraries": ("numpy",), "sizes": [4], **kwargs})


def _synthetic(overhead, per_element, sizes, library="numpy"):
    return Result("time_vs_size", records=[
        {"library": library, "backend": "cpu", "size": n, "seconds": overhead + per_element * n}
        for n in sizes])


def test_fit_overhead_recovers_a_linear_model():
    sizes = [2 ** k for k in range(0, 25)]
    fit = ov.fit_overhead(_synthetic(2e-6, 1e-10, sizes), "numpy")
    assert fit["overhead"] == pytest.approx(2e-6, rel=1e-3)
    assert fit["per_element"] == pytest.approx(1e-10, rel=1e-3)
    assert fit["crossover"] == pytest.approx(2e4, rel=1e-2)


def test_fit_overhead_on_a_gpu_takes_the_larger_of_host_and_work():
    """On a GPU, calls back to back cost max(host, kernel): the cost per element is the largest sizes'
    whole time per element (subtracting a host cost that was hidden would make the kernel look faster
    than it ran), and the crossover is where the kernel's time reaches the host's."""
    sizes = [2 ** k for k in range(0, 27)]
    r = Result("time_vs_size", records=[{"library": "torch", "backend": "cuda", "size": n,
                                         "seconds": max(7e-6, 2.8e-12 * n)} for n in sizes])
    fit = ov.fit_overhead(r, "torch")
    assert fit["per_element"] == pytest.approx(2.8e-12, rel=1e-6)
    assert fit["crossover"] == pytest.approx(7e-6 / 2.8e-12, rel=1e-6)


def test_fit_overhead_needs_records():
    with pytest.raises(ValueError, match="library='torch'"):
        ov.fit_overhead(_synthetic(1e-6, 1e-9, [1, 2, 4, 8]), "torch")


def test_python_ops_per_second():
    r = ov.python_ops_per_second(number=2000, repeat=2)
    assert len(r) == len(ov.PYTHON_OPS)
    peak = r.meta["peak_flops"]
    for rec in r.records:
        assert rec["ops_per_second"] == pytest.approx(1 / rec["seconds_per_op"])
        assert rec["flops_meanwhile"] == pytest.approx(rec["seconds_per_op"] * peak)
    with pytest.raises(ValueError):
        ov.python_ops_per_second(number=0)


def test_async_demo_records():
    r = ov.async_demo("numpy", n=64, calls=3)
    stages = {rec["stage"]: rec for rec in r.records}
    assert set(stages) == {"returned", "finished"}
    assert 0 < stages["returned"]["seconds"] <= stages["finished"]["seconds"]
    assert stages["finished"]["flops"] == 2 * 64 ** 3 * 3
    with pytest.raises(ValueError):
        ov.async_demo("numpy", n=64, calls=0)
    with pytest.raises(ValueError):
        ov.async_demo("jax")


@pytest.mark.skipif(ON_GPU, reason="checks the CPU-only behaviour")
def test_async_demo_cupy_needs_gpu():
    with pytest.raises(RuntimeError, match="cupy"):
        ov.async_demo("cupy")


@pytest.mark.gpu
def test_async_demo_gpu_returns_early():
    r = ov.async_demo(calls=20)
    stages = {rec["stage"]: rec["seconds"] for rec in r.records}
    assert stages["returned"] < stages["finished"]


def test_double_the_batch_ratios_follow_the_times():
    sizes = [1, 2, 4, 8]
    calls = []

    def factory(size):
        calls.append(size)
        return lambda: sum(range(size * 50))

    r = ov.double_the_batch(factory, sizes, backend="cpu", budget=0.01, progress=False)
    assert calls == sizes
    recs = r.records
    assert [rec["size"] for rec in recs] == sizes
    assert recs[0]["time_ratio"] is None and recs[0]["size_ratio"] is None
    for prev, rec in zip(recs, recs[1:]):
        assert rec["time_ratio"] == pytest.approx(rec["seconds"] / prev["seconds"])
        assert rec["size_ratio"] == 2


def test_double_the_batch_rejects_bad_input():
    with pytest.raises(TypeError):
        ov.double_the_batch("not callable", [1, 2])
    with pytest.raises(ValueError, match="increasing"):
        ov.double_the_batch(lambda n: (lambda: None), [4, 2])
    with pytest.raises(TypeError, match="callable"):
        ov.double_the_batch(lambda n: 42, [1, 2], progress=False)


def test_mlp_factory_runs_forward():
    forward = ov.mlp_factory(width=8, depth=2, device="cpu")(3)
    assert tuple(forward().shape) == (3, 8)
    with pytest.raises(ValueError):
        ov.mlp_factory(width=0)


@pytest.mark.parametrize("ratio, verdict", [(1.05, "overhead-bound"), (1.5, "in between"),
                                            (1.95, "work-bound"), (0.6, "time fell"), (0.85, "overhead-bound")])
def test_batch_verdict(ratio, verdict):
    assert ov.batch_verdict(ratio) == verdict


def test_batch_verdict_rejects_nonsense():
    with pytest.raises(ValueError):
        ov.batch_verdict(-1.0)
    with pytest.raises(ValueError):
        ov.batch_verdict(1.2, size_ratio=1)


@pytest.mark.skipif(ON_GPU, reason="checks the CPU-only behaviour")
def test_reduce_overhead_demo_skips_without_gpu():
    r = ov.reduce_overhead_demo(size=16, n_ops=2)
    assert len(r) == 0
    assert any("CUDA" in note for note in r.meta["notes"])
    with pytest.raises(ValueError):
        ov.reduce_overhead_demo(size=0)


@pytest.mark.gpu
def test_reduce_overhead_demo_on_gpu():
    r = ov.reduce_overhead_demo(size=256, n_ops=4, compile=False, budget=0.05)
    assert [rec["variant"] for rec in r.records] == ["eager", "CUDA graph"]
    assert all(rec["seconds"] > 0 and not math.isnan(rec["seconds"]) for rec in r.records)


def test_limit_torch_threads_restores():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    with ov.limit_torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with ov.limit_torch_threads(None):
        assert torch.get_num_threads() == before
    with pytest.raises(ValueError):
        with ov.limit_torch_threads(0):
            pass
    r = ov.time_vs_size("torch", sizes=[4], budget=0.01, progress=False, torch_threads=1)
    assert r.meta["torch_threads"] == 1 and torch.get_num_threads() == before


def test_double_the_batch_statistic():
    factory = lambda size: (lambda: sum(range(size * 50)))  # noqa: E731
    r = ov.double_the_batch(factory, [1, 2], backend="cpu", budget=0.01, progress=False)
    for rec in r.records:
        assert rec["statistic"] == "min" and rec["seconds"] == rec["min_seconds"] <= rec["median_seconds"]
    r = ov.double_the_batch(factory, [1, 2], backend="cpu", budget=0.01, progress=False, statistic="median")
    assert all(rec["seconds"] == rec["median_seconds"] for rec in r.records)
    with pytest.raises(ValueError, match="statistic"):
        ov.double_the_batch(factory, [1, 2], statistic="mean")


def test_fit_overhead_says_what_it_measured():
    sizes = [2 ** k for k in range(0, 12)]
    r = _synthetic(2e-6, 1e-10, sizes, library="torch")
    r.meta["torch_threads"] = 1
    fit = ov.fit_overhead(r, "torch")
    assert fit["call"] == "torch.add(a, b, out=out)"
    assert fit["fixed_cost_sizes"] == sizes[:ov.FIXED_COST_SIZES]
    assert fit["threads"] == 1 and fit["dtype"] == "float32"
    assert ov.call_of("numpy", "mul") == "numpy.multiply(a, b, out=out)"
    assert ov.call_of("torch", "cos") == "torch.cos(a, out=out)"


def test_fit_overheads_and_table():
    sizes = [2 ** k for k in range(0, 12)]
    r = _synthetic(2e-6, 1e-10, sizes)
    r.records += _synthetic(4e-6, 1e-10, sizes, library="torch").records
    fits = ov.fit_overheads(r)
    assert list(fits) == ["numpy", "torch"]
    table = ov.fit_table(fits)
    assert list(table["library"]) == ["numpy", "torch"]
    assert table["fixed cost per call"].tolist() == pytest.approx([2e-6, 4e-6], rel=1e-3)
    # The crossover is a fitted size: three significant digits, as the chapter's text gives it.
    crossovers = table["work = fixed cost at (elements)"].tolist()
    assert crossovers == [float(f"{f['crossover']:.3g}") for f in fits.values()]
    # M3-2: the least time of a call at a larger size than the fixed cost's, beside the fixed cost it may undercut
    assert table["least time at a larger size"].tolist() == [f["lowest"][1] for f in fits.values()]
    assert all(f["lowest"][0] > max(f["fixed_cost_sizes"]) for f in fits.values())
    assert ov.fit_table({}) is None and ov.fit_overheads(None) == {}     # a replayed set without the sweep


def test_time_vs_size_meta_defines_the_fixed_cost():
    r = ov.time_vs_size(("numpy", "torch"), sizes=[1, 2, 4, 8], budget=0.01, progress=False)
    assert r.meta["calls"] == {"numpy": "numpy.add(a, b, out=out)", "torch": "torch.add(a, b, out=out)"}
    for lib, seconds in r.meta["fixed_cost"].items():
        assert seconds == ov.fit_overhead(r, lib)["overhead"]
    assert "smallest sizes" in r.meta["fixed_cost_method"] and "quick" in r.meta


def test_call_overhead_records():
    r = ov.call_overhead(rounds=2, budget=0.005, progress=False)
    roles = [rec["role"] for rec in r.records]
    assert roles[0] == "chapter 3" and r.records[0]["call"] == "numpy.add(a, b, out=out)"
    assert "chapter 7" in roles
    for rec in r.records:
        assert rec["rounds"] == 2 and len(rec["round_seconds"]) == 2
        assert rec["min_seconds"] <= rec["seconds"] <= rec["max_seconds"]
    table = ov.call_table(r)
    assert len(table) == len(r.records) and "used by" in table
    with pytest.raises(ValueError):
        ov.call_overhead(rounds=0)


def test_call_table_drops_threads_on_a_gpu():
    """PyTorch's CPU threads are a column only where a PyTorch call ran on the CPU."""
    h200 = reference.record_sets().get("nvidia-h200", {}).get("call_overhead")
    cpu = reference.record_sets()["amd-epyc-2-threads"]["call_overhead"]
    assert "PyTorch threads" in ov.call_table(cpu)
    if h200 is not None:
        assert "PyTorch threads" not in ov.call_table(h200)


def test_batch_table_verdicts():
    recs = [{"size": 1, "seconds": 1.0, "time_ratio": None, "size_ratio": None},
            {"size": 2, "seconds": 1.05, "time_ratio": 1.05, "size_ratio": 2.0},
            {"size": 4, "seconds": 2.1, "time_ratio": 2.0, "size_ratio": 2.0}]
    table = ov.batch_table(Result("double_the_batch", records=recs))
    assert table["verdict"].tolist()[1:] == ["overhead-bound", "work-bound"] and table["verdict"].isna()[0]
    assert table["time per sample"].tolist() == pytest.approx([1.0, 0.525, 0.525])
    assert table["median of its samples"].isna().all()      # N3-M1: the column stays, empty, for a record without
    recs[1]["median_seconds"] = 1.5
    assert ov.batch_table(Result("double_the_batch", records=recs))["median of its samples"][1] == 1.5


def test_mlp_factory_describes_itself():
    factory = ov.mlp_factory(width=8, depth=2, device="cpu")
    assert "2 Linear(8, 8)" in factory.description and factory.layers == 2
    r = ov.double_the_batch(factory, [1, 2], backend="cpu", budget=0.01, progress=False)
    assert r.meta["workload"] == factory.description


def test_fit_overhead_takes_its_cost_per_element_where_the_work_first_doubles_the_time():
    """A CPU sweep whose elements cost four times more once they leave the cache: the cost per element,
    and so the crossover, are those of the sizes where the work first reached the fixed cost (in the
    cache), not those of the largest sizes (the review's M3-2)."""
    sizes = [2 ** k for k in range(0, 25)]
    cached, dram, cache = 2.5e-10, 1e-9, 2 ** 16
    r = _synthetic(1e-6, 0, sizes)
    for rec in r.records:
        rec["seconds"] += rec["size"] * (cached if rec["size"] <= cache else dram)
    fit = ov.fit_overhead(r, "numpy")
    assert fit["doubled"] and all(n >= 4000 for n in fit["per_element_sizes"])
    assert fit["per_element"] == pytest.approx(cached, rel=1e-2)
    assert fit["crossover"] == pytest.approx(1e-6 / cached, rel=1e-2)
    flat = ov.fit_overhead(_synthetic(1e-6, 1e-12, sizes[:10]), "numpy")     # never doubled: the largest sizes
    assert not flat["doubled"] and flat["per_element_sizes"] == sizes[8:10]


def test_crossover_tests_give_both_models_at_the_size_nearest_the_crossover_and_the_lowest_call():
    sizes = [2 ** k for k in range(0, 25)]
    r = _synthetic(1e-6, 1e-10, sizes)
    c = ov.crossover_tests(r)["numpy"]
    fit = ov.fit_overhead(r, "numpy")
    n, t, work, add, overlap = c["near"]
    assert n == ov.nearest(r, fit["crossover"], "numpy")[0] and t == 1e-6 + 1e-10 * n
    assert work == pytest.approx(n * fit["per_element"]) and add == pytest.approx(c["fixed"] + work)
    assert overlap == max(c["fixed"], work) and c["largest"] == (sizes[-1], r.records[-1]["seconds"])
    r.records[8]["seconds"] = 0.5e-6                                          # a call below the fixed cost
    assert ov.crossover_tests(r)["numpy"]["lowest"] == (sizes[8], 0.5e-6)
    assert ov.crossover_tests(None) == {}


def test_nearest_is_by_ratio():
    r = _synthetic(1e-6, 1e-10, [1, 4, 16, 64])
    assert ov.nearest(r, 9)[0] == 16 and ov.nearest(r, 7)[0] == 4 and ov.nearest(None, 4) is None


def test_the_batch_where_the_mlp_work_reaches_a_time_is_the_inverse_of_its_work():
    for peak, bw in ((67e12, 4.8e12), (8e10, 2.4e10)):
        b = ov.batch_where_work_is(169e-6, 128, 4, peak, bw)
        assert ov.mlp_work(b, 128, 4, peak, bw) == pytest.approx(169e-6, rel=0.05)
        assert ov.mlp_work(2 * b, 128, 4, peak, bw) > 169e-6 > ov.mlp_work(b / 2, 128, 4, peak, bw)
    assert ov.batch_where_work_is(1e-12, 128, 4, 67e12, 4.8e12) == 2     # at least a batch of 2


def test_batch_peaks_split_a_cpu_peak_over_the_sweeps_threads():
    def run(backend, threads, every):
        return Result("double_the_batch", meta={"torch_threads": threads, "cpu_threads": every, "device": {
            "backend": backend, "peak_flops_float32": 8e10, "peak_bandwidth": 2e10}})
    assert ov.batch_peaks(run("cpu", 1, 4)) == (2e10, 2e10, 1, 4)
    assert ov.batch_peaks(run("cuda", 1, 4))[0] == 8e10


def test_largest_fall_is_the_doubling_whose_time_grew_least():
    recs = [{"size": 1, "seconds": 1.0, "time_ratio": None}, {"size": 2, "seconds": 1.1, "time_ratio": 1.1},
            {"size": 4, "seconds": 0.6, "time_ratio": 0.6 / 1.1}, {"size": 8, "seconds": 1.2, "time_ratio": 2.0}]
    assert ov.largest_fall(Result("double_the_batch", records=recs)) == 2


def test_the_records_say_which_cpu_ran_them():
    assert ov.python_ops_per_second(number=100, repeat=1).meta["host_cpu"]
    factory = ov.mlp_factory(width=8, depth=1, device="cpu")
    assert ov.double_the_batch(factory, [1, 2], backend="cpu", budget=0.01, progress=False).meta["cpu_threads"] >= 1
    assert ov.call_table(None) is None
