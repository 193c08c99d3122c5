"""brrr.prose.bandwidth: which claims chapter 2 makes of a run, with which numbers (taken from the
record), and the static text's numbers recomputed. Phrases are the claims' own tests' business."""
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from brrr import claims
from brrr.experiments import timed_at
from brrr.fusion_tables import cos_cases
from brrr.kernel_source import CUDA_BLOCK, chain_knee, cuda_threads, peak_share, traffic
from brrr.prose import bandwidth as B
from brrr.results import Result
from brrr.roofline import MEMORY, OVERHEAD, Roofline

NOTEBOOK = Path(__file__).resolve().parents[1] / "chapters" / "02_memory_bandwidth.ipynb"
GPU = {"name": "NVIDIA H200", "backend": "cuda", "peak_bandwidth": 4.8e12, "peak_flops_float32": 67e12,
       "l2_bytes": 60 * 2 ** 20, "source": "a datasheet"}
CPU = {"name": "Some CPU", "backend": "cpu", "peak_bandwidth": 20e9, "peak_flops_float32": 100e9,
       "l2_bytes": 32 * 2 ** 20, "source": "measured"}


def named(said) -> dict:
    return {c.name: c for c in said if getattr(c, "name", "")}


def markdown(cell_id: str) -> str:
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    return " ".join("".join(c["source"]) for c in cells if c["id"] == cell_id).replace("\n", " ")


def test_the_static_intensity_text_states_what_the_counts_give():
    """All but the fused chain below one FLOP per byte; fusing eight multiplications: 8 times the intensity."""
    n = 2 ** 20
    rows = {name: traffic(name, n, dtype="float32") for name in ("copy", "scale", "add", "triad")}
    fused, unfused = (traffic("chain", n, n=8, fused=f, dtype="float32") for f in (True, False))
    assert all(flops / nbytes < 1 for nbytes, flops in rows.values()) and fused[1] / fused[0] == 1
    ratio = (fused[1] / fused[0]) / (unfused[1] / unfused[0])
    assert f"has {ratio:.0f} times the intensity" in markdown("intensity-static")


def test_the_static_block_counts_are_the_kernels_launch():
    text = markdown("aea44e9d")
    blocks = -(-cuda_threads(2 ** 26) // CUDA_BLOCK)                     # a 256 MiB float32 array
    assert f"{blocks:,} blocks, about {round(blocks / 132, -2):.0f} per SM on a GPU with 132 SMs" in text
    threads = cuda_threads(10_000)
    assert f"{threads:,} threads, {-(-threads // CUDA_BLOCK)} blocks of {CUDA_BLOCK}" in text


def copies(t0=1e-6, cache=10e12, dram=4e12, llc=60 * 2 ** 20):
    """A bandwidth_vs_size run: a fixed cost t0 per copy, bytes at the cache's rate up to llc, DRAM's past it."""
    sizes = [2 ** k for k in range(12, 31, 2)]
    recs = [{"working_set": s, "nbytes": s, "seconds": t0 + s / (cache if s <= llc else dram)} for s in sizes]
    for r in recs:
        r["gbps"] = r["nbytes"] / r["seconds"] / 1e9
    return Result("bandwidth_vs_size", recs, {"device": GPU, "llc_bytes": llc, "caches": {"L2": llc}})


def test_the_bandwidth_sweep_names_the_fixed_cost_and_the_cache_net_of_it():
    run = copies()
    c = named(B.bandwidth_claims(run))
    fast = min(run.records, key=lambda r: r["seconds"])
    bound = [r for r in run.records if r["nbytes"] / GPU["peak_bandwidth"] <= fast["seconds"]][-1]
    assert c["smallest copies"].nbytes == bound["nbytes"] and c["smallest copies"].regime == OVERHEAD
    assert (c["fixed cost"].value, c["fixed cost"].base) == (bound["seconds"], fast["seconds"])
    best, last = max(run.records, key=lambda r: r["gbps"]), run.records[-1]
    assert c["net"].value == pytest.approx(best["nbytes"] / (best["seconds"] - fast["seconds"]))
    assert c["net"].base == pytest.approx(last["gbps"] * 1e9)
    assert c["dram"].measured == pytest.approx(last["gbps"] * 1e9) and c["dram"].allowed == GPU["peak_bandwidth"]
    assert set(named(B.bandwidth_claims(copies(t0=1e-12, cache=4e12)))) == {"dram"}   # no fixed cost, no cache


def test_littles_law_counts_half_a_copys_bytes_as_loads():
    recs = [{"parallelism": p, "unit": "blocks", "gbps": g, "nbytes": 2 ** 29} for p, g in ((1, 20.0), (8, 160.0),
                                                                                          (64, 3000.0), (512, 3100.0))]
    run = Result("bandwidth_vs_parallelism", recs, {"device": GPU, "block": 256, "latency": {"seconds_per_load": 4e-7}})
    c = named(B.latency_claims(run))
    assert c["in flight"].value == pytest.approx(GPU["peak_bandwidth"] / 2 * 4e-7)
    assert c["in flight"].base == pytest.approx(20e9 / 2 * 4e-7)
    assert c["shape"].outcome == "flattens" and c["best"].measured == 3100e9
    slower = [{**recs[0], "gbps": 500.0}, recs[1]]                                         # one worker was the best
    assert "best" not in named(B.latency_claims(Result("bandwidth_vs_parallelism", slower, run.meta)))
    missing = B.latency_claims(Result("bandwidth_vs_parallelism", [], {"unavailable": "no CuPy"}))
    assert [type(x) for x in missing] == [claims.Missing]


def stream(op, library, size, seconds, per_element):
    return {"kind": "bandwidth", "op": op, "library": library, "size": size, "nbytes": per_element * size,
            "seconds": seconds, "gbps": per_element * size / seconds / 1e9}


@pytest.mark.parametrize("add_seconds,said", [(1.0, True), (1.5, False)])
def test_the_roofline_compares_the_slowest_kernel_with_a_heavier_one_of_its_library(add_seconds, said):
    recs = [stream("copy", "cupy", 100, 0.3, 8), stream("scale", "cupy", 100, 1.0, 8),
            stream("add", "cupy", 100, add_seconds, 12), stream("triad", "brrr.kernels", 100, 0.2, 12),
            {"kind": "compute", "op": "matmul", "size": 4096, "gflops": 50e3, "tensor_cores": False},
            {"kind": "compute", "op": "matmul", "size": 4096, "gflops": 700e3, "tensor_cores": True}]
    made = B.roofline_claims(Result("measure_roofline", recs, {"device": GPU}))
    c = named(made)
    assert c["fastest STREAM kernel"].measured == pytest.approx(recs[3]["gbps"] * 1e9)
    assert c["slowest"].measured == pytest.approx(recs[1]["gbps"] * 1e9)
    assert (c["same elements"].value, c["same elements"].base) == (add_seconds, 1.0)
    assert bool(made[3].text()) == said                       # the cause only where the times matched
    assert c["matmul"].measured == 50e12 and c["matmul"].allowed == GPU["peak_flops_float32"]


def types(meta=None, device=GPU, pointwise=None, skipped=()):
    """A dtype_roofline run: matmuls as on the H200 record, pointwise ops of given seconds."""
    recs = []
    for op, seconds in (("matmul", {"float32": 21e-3, "bfloat16": 1.4e-3, "float16": 1.5e-3, "int8": 8.6e-3}),
                        ("pointwise", pointwise or {"float32": 240e-6, "bfloat16": 120e-6, "float16": 200e-6,
                                                    "int8": 60e-6})):
        for d, t in seconds.items():
            item = {"float32": 4, "bfloat16": 2, "float16": 2, "int8": 1}[d]
            nbytes, flops = (3 * 8192 ** 2 * item, 2 * 8192 ** 3) if op == "matmul" else (2 ** 28 * item, 2 ** 28)
            recs.append({"op": op, "dtype": d, "seconds": t, "nbytes": nbytes, "flops": flops,
                         "skipped": "no kernel" if (op, d) in skipped else "", "peak_flops": None})
    return Result("dtype_roofline", recs, {"device": device, "peak_bandwidth": device["peak_bandwidth"], **(meta or {})})


def test_each_narrower_pointwise_type_is_held_to_its_bytes_share_of_float32s_time():
    made = B.pointwise_claims(types(meta={"pointwise_one": "a CPU scalar"}))
    c = named(made)
    assert c["float32"].measured == pytest.approx(2 ** 30 / 240e-6)
    assert c["float16"].base == pytest.approx(240e-6 / 2) and c["float16"].outcome == "longer"
    assert (c["bfloat16"].outcome, c["int8"].outcome) == ("same", "same")   # their bytes' share of the time
    assert not any(isinstance(x, claims.Cause) for x in made + B.pointwise_claims(types(device=CPU)))
    old = B.pointwise_claims(types(pointwise={"float32": 240e-6, "bfloat16": 100e-6}))   # bf16 above the roof
    assert isinstance(named(old)["bfloat16"], claims.Bound) and named(old)["bfloat16"].outcome == "above"
    assert [x.because for x in old if isinstance(x, claims.Cause)] == [B.OLD_ONE]   # older code, said


def test_a_gpus_int8_matmul_is_compared_with_its_faster_16_bit_one_and_old_records_say_so():
    made = B.matmul_claims(types())
    c = named(made)
    assert (c["int8"].value, c["int8"].base) == (8.6e-3, 1.4e-3) and c["bfloat16"].base == 21e-3
    assert {x.because for x in made if isinstance(x, claims.Cause)} == {B.OLD_DATA, B.OLD_INT8}
    new = B.matmul_claims(types(meta={"data": "random normal", "int8_b": "column-major"}))
    assert not any(isinstance(x, claims.Cause) for x in new)
    cpu = named(B.matmul_claims(types(device=CPU, skipped={("matmul", "float16")})))
    assert cpu["int8"].base == 21e-3 and "float16" not in cpu
    assert any(isinstance(x, claims.Missing) for x in B.matmul_claims(types(skipped={("matmul", "float16")})))


def sweep(knee=None, ridge=14.0):
    roof = Roofline(peak_flops=ridge * 4.8e12, peak_bandwidth=4.8e12)
    recs = [{"variant": v, "repeat": r, "seconds": t, "flops": r * 2 ** 26, "nbytes": 2 ** 29 * (1 if v == "fused" else r)}
            for v in ("fused", "eager") for r, t in ((1, 1e-4), (64, 2e-4), (256, 6e-4))]
    return Result("pointwise_repeat_sweep", recs, {"device": GPU, "roof": roof.to_dict(), "n": 2 ** 26,
                                                   "dtype": "float32", "measured_knee": knee})


def test_the_repeat_sweep_predicts_with_the_multiplication_roof():
    c = named(B.repeat_claims(sweep(knee=50.0)))
    assert c["knee"].value == 50.0 and c["knee"].base == pytest.approx(14.0 * 4) == chain_knee(14.0, 4)
    assert c["compute"].allowed == pytest.approx(peak_share("mul") * 14.0 * 4.8e12)
    assert c["eager"].value == 6e-4 and c["bandwidth"].allowed == 4.8e12
    assert named(B.repeat_claims(sweep()))["fused"].value == 6e-4         # no knee: the fused time's growth
    assert chain_knee(14.0, 4, "fma") == chain_knee(14.0, 4) / 2 and chain_knee(14.0, 4, "ffma") == 14.0 * 4


@pytest.mark.parametrize("fused,unfused,causes", [(1.05, 2.0, [B.FOLLOWED]), (2.0, 2.05, [B.ARITHMETIC]),
                                                  (1.4, 2.0, []), (1.0, 1.05, [])])
def test_the_cos_pair_says_a_case_only_where_its_comparisons_measured_it(fused, unfused, causes):
    recs = [{"k": 1, "variant": "fused", "seconds": 1.0}, {"k": 2, "variant": "fused", "seconds": fused},
            {"k": 2, "variant": "unfused", "seconds": unfused}]
    made = B.cos_claims(Result("cos_fusion", recs, {}))
    assert [x.because for x in made if isinstance(x, claims.Cause) and x.text()] == causes
    assert cos_cases(None) is None


def device(on_gpu=True):
    return SimpleNamespace(name="dev", on_gpu=on_gpu, spec=object() if on_gpu else None, l2_bytes=50 * 2 ** 20,
                           peak_bandwidth=4e12 if on_gpu else 20e9, peak_flops=lambda dtype="float32": 60e12)


def test_the_worked_answers_are_this_devices_arithmetic():
    dev = device()
    copy = B.stream_answer("copy", 2 ** 26, dev)
    assert {c.name: c.value for c in copy.claims if c.name} == {"least": 8 * 2 ** 26 / 4e12}
    triad = named(B.stream_answer("triad", 2 ** 26, dev).claims)["triad"]
    assert (triad.flops, triad.nbytes, triad.outcome) == (2 ** 27, 12 * 2 ** 26, MEMORY)
    two = named(B.two_ops_answer(4096, 1024, dev).claims)
    here = Roofline(peak_flops=60e12, peak_bandwidth=4e12)
    assert two["A @ v"].outcome == here.regime(2 * 4096 ** 2, 4 * 4096 ** 2 + 8 * 4096)
    assert two["B @ B"].outcome == here.regime(2 * 1024 ** 3, 12 * 1024 ** 2)


def test_a_check_takes_a_timing_a_roofline_record_or_names_the_missing_record():
    dev, rec = device(), {"op": "copy", "library": "cupy", "size": 2 ** 26, "dtype": "float32", "seconds": 1.5e-4,
                          "nbytes": 2 ** 29, "flops": 0.0}
    assert timed_at(Result("measure_roofline", [rec], {}), "copy", 2 ** 26, "cupy") is rec
    assert timed_at(None, "copy", 2 ** 26, "cupy") is None and timed_at(Result("r", [rec], {}), "copy", 8, "cupy") is None
    timing = SimpleNamespace(median=2e-4, iqr=1e-6, nbytes=2 ** 29, flops=None)
    said = B.check(dev, {"copy": (rec, "worked_copy"), "triad": (timing, "worked_triad"), "x": (None, "worked_x")})
    bounds = [c for c in said.claims if isinstance(c, claims.Bound)]
    assert [(b.measured, b.allowed) for b in bounds] == [(1.5e-4, 2 ** 29 / 4e12), (2e-4, 2 ** 29 / 4e12)]
    assert [c.record for c in said.claims if isinstance(c, claims.Missing)] == ["worked_x"]


def test_against_peaks_gives_each_share_of_the_peaks():
    text = B.against_peaks(Roofline(peak_flops=30e12, peak_bandwidth=3e12), Roofline(peak_flops=60e12,
                                                                                     peak_bandwidth=4e12), cpu=False)
    shares = [float(x) / 100 for x in re.findall(r"(\d+)% of", text)]
    assert shares == [0.5, 0.75]
