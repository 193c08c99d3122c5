"""Chapter 1's sentences agree with the numbers of every shipped record set.

Each experiment is checked twice: on every record set that holds it (the live run, with the
shipped GPU references beside it, as the chapter draws them), and on small hand-made Results
that force each wording (a GPU outcome on this CPU, a curve that falls, a point above its roof).
The hand-made records are inputs for the wording, not measurements.
"""
import pytest

import brrr
from brrr import Result, reference
from brrr.prose import compute as prose, words
from record_sets import close_to, record_sets, sets_with

H100 = {"name": "NVIDIA H100 80GB HBM3", "backend": "cuda", "l2_bytes": 50 * 2 ** 20,
        "peak_bandwidth": 3.35e12, "peak_flops_float32": 67e12}
CPU = {"name": "Some CPU (2 threads)", "backend": "cpu", "l2_bytes": 32 * 2 ** 20,
       "peak_bandwidth": 25e9, "peak_flops_float32": 200e9}


def made(name, records, device, **meta):
    """A hand-made Result (not a measurement) on ``device``."""
    return Result(name, records, {"device": dict(device), "date": "2000-01-01T00:00:00", **meta})


def matmul_run(gflops_by_n, device=CPU, peak=None, dtype="float32", tc=False, **meta):
    peak = peak or device["peak_flops_float32"]
    recs = [{"n": n, "dtype": dtype, "tensor_cores": tc, "op": "matmul", "flops": 2.0 * n ** 3,
             "seconds": 2.0 * n ** 3 / (g * 1e9), "gflops": g, "peak_flops": peak,
             "fraction_of_peak": g * 1e9 / peak} for n, g in gflops_by_n.items()]
    return made("matmul_vs_size", recs, device, **meta)


def first_paragraph(p) -> str:
    return str(p).split("\n\n")[0]


# --- record sets --------------------------------------------------------------------------

CHAPTER = ("matmul_vs_size", "mfu_vs_batch", "elementwise_vs_matmul")


def test_every_quick_set_has_the_chapter():
    # The full CPU set in brrr/data/reference is regenerated for all chapters at once.
    for name, runs in record_sets().items():
        if name.startswith("quick/"):
            for e in CHAPTER:
                assert e in runs, f"{name} lacks {e}: rerun scripts/make_reference.py --chapters 01"


def test_spec_ratios_state_the_range_and_the_exceptions():
    frame = brrr.specs.tensor_vs_general()
    p = prose.spec_ratios(frame)
    text = str(p)
    lo, hi = frame.loc[frame["ratio"].idxmin()], frame.loc[frame["ratio"].idxmax()]
    assert close_to(lo["ratio"], text, 0.03) and close_to(hi["ratio"], text, 0.03)
    assert "not measurements" in text and "(the GeForce cards)" in text and "(the A100)" in text
    # The training parts are chosen by their spec sheets (half-rate FP64), not by their ratio: the V100, at 8,
    # is one of them; the T4, also at 8, is not.
    specs = {s.name: s for s in brrr.specs.GPU_SPECS.values()}
    training = [g for g in frame["GPU"] if specs[g].fp64 and specs[g].fp64 >= 0.4 * specs[g].fp32]
    assert "Tesla V100 SXM2" in training and "Tesla T4" not in training
    assert p.facts["training"] == {"Volta": ["V100"], "Ampere": ["A100"], "Hopper": ["H100", "H200", "GH200"]}
    assert "8 times more on the V100 (Volta), 16 on the A100 (Ampere) and 14 to 15 on the H100, H200 and GH200" in text
    assert "He's sixteen-fold gap is the A100's" in text
    # A2:C7: the GeForce cards as one group, and the parts between them and the training parts by ratio
    small = [g for g, r in zip(frame["GPU"], frame["ratio"]) if r <= 2.5]
    if all("GeForce RTX" in g for g in small):
        models = sorted(g.split("RTX ")[1][:4] for g in small)
        assert f"the {words.spelled(len(small))} GeForce RTX cards ({models[0]} to {models[-1]})" in text
        assert "NVIDIA GeForce" not in text
    assert ("half the rate" in text) == all("GeForce" in g for g in frame[frame["ratio"] <= 2.5]["GPU"])
    one = frame[frame["ratio"] >= 10]
    assert "GeForce" not in str(prose.spec_ratios(one)) and "small ratios" not in str(prose.spec_ratios(one))
    inference = str(prose.spec_ratios(frame[frame["GPU"].isin(["Tesla T4", "NVIDIA L4"])]))
    assert "built for training" not in inference and "from 4 (NVIDIA L4) to 8 (Tesla T4)" in inference


# --- matmul against size ----------------------------------------------------------------

def expected_shape(ys):
    best = max(ys)
    if best < prose.FLAT * min(ys):
        return "flat"
    if ys[-1] < prose.PLATEAU * best:
        return "falls after its best"
    plateau = len(ys)
    while ys[plateau - 1] >= prose.PLATEAU * best:
        plateau -= 1
    if ys.index(best) < plateau:
        return "uneven"
    if ys[-2] < prose.PLATEAU * best:
        return "still rising"
    return "flattens"


@pytest.mark.parametrize("runs", sets_with("matmul_vs_size"))
def test_matmul_curve(runs):
    run = runs["matmul_vs_size"]
    refs = reference.load("matmul_vs_size")
    p = prose.matmul_curve(run, refs)
    text = first_paragraph(p)
    recs = sorted(run.records, key=lambda r: r["n"])
    ys = [r["gflops"] * 1e9 for r in recs]
    peak = max(r["peak_flops"] for r in recs)
    best = max(recs, key=lambda r: r["gflops"])
    assert words.rate(best["gflops"] * 1e9) in text and f"n = {best['n']:,}" in text
    assert words.percent(best["gflops"] * 1e9 / peak) in text
    assert words.rate(ys[0]) in text
    shape = expected_shape(ys)
    assert p.facts["outcome"] == shape
    phrase = {"flat": "barely changed", "falls after its best": "fell again", "uneven": "The curve is uneven",
              "still rising": "still rising at the largest size", "flattens": "the curve flattens"}[shape]
    assert phrase in text
    if shape == "flattens":
        start = len(ys)
        while ys[start - 1] >= prose.PLATEAU * max(ys):
            start -= 1
        assert f"From n = {recs[start]['n']:,} on" in text
        assert ("compute-bound" in text) == (best["gflops"] * 1e9 >= prose.HALF * peak)
    above = any(r["gflops"] * 1e9 > prose.ABOVE_ROOF * r["peak_flops"] for r in recs)
    assert ("above the" in text) == above
    import re
    roof = re.search(r"(\d+)x\1 np\.matmul", run.meta["device"].get("source", ""))
    at_roof = [r for r in recs if roof and run.meta["device"]["backend"] == "cpu" and r["n"] == int(roof.group(1))]
    assert ("the very size the measured roof was taken at" in text) == bool(
        at_roof and at_roof[0]["gflops"] * 1e9 < prose.HALF * at_roof[0]["peak_flops"])
    assert ("measured roof" in text) == (run.meta["device"]["backend"] == "cpu")
    for ref in refs:
        assert ref.meta["device"]["name"] in str(p)
        assert words.rate(max(r["gflops"] for r in ref.records) * 1e9) in str(p)
    if not refs:
        assert "No reference GPU run" in str(p)


def test_matmul_curve_wordings():
    rising = matmul_run({32: 1, 64: 8, 128: 40, 256: 100})
    assert prose.matmul_curve(rising).facts["outcome"] == "still rising"
    flat_top = matmul_run({32: 1, 64: 20, 128: 150, 256: 160, 512: 170})
    t = str(prose.matmul_curve(flat_top))
    assert "From n = 128 on, the curve flattens" in t and "compute-bound" in t
    low_top = matmul_run({32: 1, 64: 20, 128: 50, 256: 55})
    assert "levels off at only" in str(prose.matmul_curve(low_top))
    # Falls after its best, where the last matrices outgrow the last-level cache (32 MiB: n > 1672).
    falls = matmul_run({256: 50, 1024: 150, 2048: 60})
    t = str(prose.matmul_curve(falls))
    assert "fell again" in t and "no longer fit in the 32 MiB last-level cache" in t
    falls_in_cache = matmul_run({64: 50, 128: 150, 256: 60})
    assert "shows whether it repeats" in str(prose.matmul_curve(falls_in_cache))
    assert "barely changed" in str(prose.matmul_curve(matmul_run({64: 100, 128: 110, 256: 105})))
    uneven = str(prose.matmul_curve(matmul_run({32: 1, 64: 5, 128: 0.2, 256: 1.2, 512: 4.5})))
    assert "uneven: after its best at n = 64 it fell to 200 MFLOP/s at n = 128" in uneven
    assert "still rising" not in uneven
    dip = str(prose.matmul_curve(matmul_run({32: 10, 64: 3, 128: 100, 256: 110})))
    assert "n = 64 ran at fewer FLOP/s than n = 32" in dip
    above = str(prose.matmul_curve(matmul_run({64: 10, 128: 150, 256: 230})))
    assert "n = 256 measured above the line" in above and "measured roof" in above
    gpu_above = str(prose.matmul_curve(matmul_run({1024: 10e3, 4096: 60e3, 8192: 71e3}, device=H100)))
    assert "above the spec-sheet peak" in gpu_above and "measured roof" not in gpu_above


def test_matmul_curve_says_when_the_roof_size_fell_short_of_the_roof():
    source = "measured on this machine (2000-01-01, best of np.copyto on 256 MiB and 256x256 np.matmul)"
    busy = matmul_run({64: 5, 128: 20, 256: 60}, device={**CPU, "source": source})
    p = prose.matmul_curve(busy)
    assert p.facts["busy"] and "At n = 256, the very size the measured roof was taken at" in str(p)
    quiet = matmul_run({64: 5, 128: 20, 256: 160}, device={**CPU, "source": source})
    assert not prose.matmul_curve(quiet).facts["busy"]
    assert not prose.matmul_curve(matmul_run({64: 5, 128: 20, 256: 60})).facts["busy"]   # no source


def test_matmul_curve_compares_where_the_reference_gets_going():
    live = matmul_run({32: 10, 64: 100, 128: 150, 256: 160})
    ref = matmul_run({64: 100, 256: 10e3, 1024: 40e3, 4096: 50e3}, device=H100, reference=True)
    t = str(prose.matmul_curve(live, [ref]))
    assert "It needed larger matrices to get going" in t and "n = 1,024, this run at n = 64" in t
    assert "312 times this run's best" in t


# --- tensor cores ----------------------------------------------------------------------------

def tensor_run(device=H100, reference_run=False, tc=True):
    rows = []
    for dtype, peak, rates in (("float32", 494.5e12, {1024: 50e3, 4096: 300e3, 8192: 320e3}),
                               ("float16", 989.5e12, {1024: 90e3, 4096: 600e3, 8192: 620e3})):
        rows += matmul_run(rates, device=device, peak=peak, dtype=dtype, tc=tc).records
    return made("matmul_tensor_cores", rows, device, reference=reference_run)


def test_tensor_cores_on_a_cpu_without_a_reference():
    mm = matmul_run({32: 1, 64: 8})
    p = prose.tensor_cores(None, [], fp32=mm)
    assert p.facts["outcome"] == "nothing to show"
    assert "no reference GPU run of the tensor-core sweep ships" in str(p)
    assert "#fig-tensor-cores" not in str(p)   # no figure is drawn, so none is linked


def test_tensor_cores_on_a_cpu_with_a_reference():
    mm = matmul_run({32: 1, 64: 8})
    ref_fp32 = matmul_run({1024: 30e3, 8192: 50e3}, device=H100, peak=67e12, reference=True)
    p = prose.tensor_cores(None, [tensor_run(reference_run=True)], fp32=mm, fp32_references=[ref_fp32])
    t = str(p)
    assert p.facts["outcome"] == "reference only" and "#fig-tensor-cores" in t
    assert "TF32 reached 320 TFLOP/s at n = 8,192" in t and words.percent(320e12 / 494.5e12) in t
    assert "FP16 reached 620 TFLOP/s" in t and "12 times the FP32 general-math best (50 TFLOP/s" in t


def test_tensor_cores_live_on_a_gpu():
    mm = matmul_run({1024: 30e3, 8192: 50e3}, device=H100, peak=67e12)
    p = prose.tensor_cores(tensor_run(), [], fp32=mm)
    t = str(p)
    assert p.facts["outcome"] == "measured" and "#fig-tensor-cores" in t and "#fig-matmul" in t
    assert "12 times the FP32 general-math best" in t and "No reference GPU run" in t
    none = prose.tensor_cores(tensor_run(tc=False), [], fp32=mm)
    assert none.facts["outcome"] == "no tensor cores" and "ran on general math" in str(none)


@pytest.mark.parametrize("runs", sets_with("matmul_tensor_cores"))
def test_tensor_cores_on_record_sets(runs):
    run = runs["matmul_tensor_cores"]
    p = prose.tensor_cores(run, reference.load("matmul_tensor_cores"), fp32=runs.get("matmul_vs_size"),
                           fp32_references=reference.load("matmul_vs_size"))
    text = first_paragraph(p)
    for dtype in {r["dtype"] for r in run.records}:
        best = max(r["gflops"] for r in run.records if r["dtype"] == dtype)
        assert words.rate(best * 1e9) in text
        # The best point is not the only one quoted when the largest size ran slower than it.
        largest = max((r for r in run.records if r["dtype"] == dtype), key=lambda r: r["n"])
        assert words.rate(largest["gflops"] * 1e9) in text
    # Constant (all-ones) matrices are flagged wherever a GPU run did not record random data.
    gpu = run.meta["device"]["backend"] != "cpu"
    assert ("were constants" in text) == (gpu and run.meta.get("data") is None)


# --- MFU against the batch -------------------------------------------------------------------

def mfu_run(mfu_by_batch, device=CPU, seconds_over_roofline=None, width=1024, **meta):
    peak, bw = device["peak_flops_float32"], device["peak_bandwidth"]
    recs = []
    for batch, m in mfu_by_batch.items():
        flops = 2.0 * batch * width * width
        nbytes = 4.0 * (width * width + width + 2 * batch * width)
        seconds = flops / (m * peak)
        recs.append({"batch": batch, "width": width, "seconds": seconds, "flops": flops,
                     "gflops": flops / seconds / 1e9, "mfu": m, "peak_flops": peak, "nbytes": nbytes,
                     "intensity": flops / nbytes, "roofline_seconds": max(flops / peak, nbytes / bw)})
    if seconds_over_roofline:
        r = recs[0]
        r["seconds"] = seconds_over_roofline * r["roofline_seconds"]
        r["mfu"] = r["flops"] / r["seconds"] / peak
        r["gflops"] = r["flops"] / r["seconds"] / 1e9
    return made("mfu_vs_batch", recs, device, width=width, peak_flops=peak, peak_bandwidth=bw, **meta)


@pytest.mark.parametrize("runs", sets_with("mfu_vs_batch"))
def test_mfu(runs):
    run = runs["mfu_vs_batch"]
    refs = reference.load("mfu_vs_batch")
    p = prose.mfu(run, refs)
    text = first_paragraph(p)
    recs = sorted(run.records, key=lambda r: r["batch"])
    first, best = recs[0], max(recs, key=lambda r: r["mfu"])
    assert f"batch of {first['batch']}" in text and words.percent(first["mfu"]) in text
    assert f"best batch, {best['batch']:,}" in text and words.percent(best["mfu"]) in text
    assert p.facts["outcome"] == expected_shape([r["mfu"] for r in recs])
    ridge = run.meta["peak_flops"] / run.meta["peak_bandwidth"]
    assert ("memory-bound" in text) == (first["intensity"] < ridge)
    ratio = first["seconds"] / first["roofline_seconds"]
    # One named peak: the FP32 general-math one every record divides by (review 01_02 item 9).
    assert words.rate(run.meta["peak_flops"]) in text and "FP32 general-math" in text
    assert "close to compute-bound" not in text and "other programs" not in text and "busy machine" not in text
    if ratio > prose.OVERHEAD:
        assert "fixed cost per call" in text
    elif ratio < 1:
        assert f"{words.percent(1 - ratio)} less than the roofline's least time" in text
        assert "faster than the roofline allows" in text and ("stayed warm" in text or "measurement" in text)
    elif ratio <= prose.NEAR:
        assert "close to what the" in text
    else:
        assert "the rest is neither" in text and close_to(100 / ratio, text)
    above = any(r["mfu"] > prose.ABOVE_ROOF for r in recs)
    assert ("measured above the line" in text) == above
    assert len(str(p).split("\n\n")) == 1 + max(len(refs), 1)


def test_mfu_wordings():
    gpu = mfu_run({1: 0.0003, 64: 0.02, 1024: 0.3, 4096: 0.7, 16384: 0.72}, device=H100,
                  seconds_over_roofline=20)
    t = str(prose.mfu(gpu))
    assert "fixed cost per call" in t and "memory-bound" in t and "From batch 4,096 on" in t
    assert "72% of that FP32 spec-sheet peak" in t and "No reference GPU run" in t
    near = str(prose.mfu(mfu_run({1: 0.01, 64: 0.2, 1024: 0.6}, device=H100, seconds_over_roofline=1.5)))
    # Faster than the roofline's least time, even by 7%: a point above the roof, and why (4 MiB in 32 MiB of cache).
    warm = prose.mfu(mfu_run({1: 0.1, 64: 0.6, 1024: 0.9}, seconds_over_roofline=0.93))
    assert warm.facts["small_batch"] == "above roofline"
    t = str(warm)
    assert "7% less than the roofline's least time" in t and "faster than the roofline allows" in t
    most = 2.0 * 1024 * 1024 / (4.0 * (1024 * 1024 + 3 * 1024)) * 25e9 / 200e9   # intensity x bandwidth / peak
    assert f"an MFU of 6.7%, where the memory roof allows at most {words.percent(most)}" in t
    assert "back to back, so the weights stayed warm: the layer's 4.01 MiB fit in the 32 MiB" in t   # A2:C1
    cold = str(prose.mfu(mfu_run({1: 0.1, 64: 0.6, 1024: 0.9}, device={**CPU, "l2_bytes": 2 ** 20},
                                 seconds_over_roofline=0.93)))
    assert "This run beat the roof because the roof is this CPU's own measurement" in cold
    assert "close to what the memory traffic alone costs" in near
    partly = str(prose.mfu(mfu_run({1: 0.01, 64: 0.2, 1024: 0.6}, device=H100, seconds_over_roofline=2.5)))
    assert "accounts for 40% of the call" in partly
    above = str(prose.mfu(mfu_run({1: 0.1, 64: 0.6, 1024: 1.2})))
    assert "batch = 1,024 measured above the line" in above and "PyTorch" in above
    # Falls after its best: 16384 rows of activations (128 MiB) outgrow a 32 MiB cache.
    falls = str(prose.mfu(mfu_run({1: 0.1, 1024: 0.6, 16384: 0.3})))
    assert "fell again" in falls and "no longer fit" in falls
    same = str(prose.mfu(mfu_run({1: 0.5, 64: 0.52})))
    assert "the batch made little difference" in same


def test_mfu_reference_paragraph():
    live = mfu_run({1: 0.1, 16: 0.4, 256: 0.5})
    ref = mfu_run({1: 0.0003, 256: 0.05, 4096: 0.6}, device=H100, reference=True)
    t = str(prose.mfu(live, [ref]))
    assert "On the reference NVIDIA H100 80GB HBM3" in t and "batch 4,096, this run at batch 16" in t


# --- elementwise against matmul --------------------------------------------------------------

def gap_run(rates, device=CPU, spec_gap=None, gbps_x2=None, **meta):
    """rates: {kind: GFLOP/s}; peaks as elementwise_vs_matmul records them."""
    recs = []
    n = 2 ** 22
    for kind, g in rates.items():
        tc = "tensor" in kind
        flops = {"elementwise x * 2": n, "elementwise fused FMA chain": 2 * 512 * n}.get(kind, 2.0 * 1024 ** 3)
        nbytes = 8.0 * n if kind.startswith("elementwise") else 3 * 4.0 * 1024 ** 2
        peak = 989.5e12 if tc else device["peak_flops_float32"]
        seconds = flops / (g * 1e9)
        recs.append({"kind": kind, "library": "x", "dtype": "float16" if tc else "float32", "tensor_cores": tc,
                     "flops": flops, "nbytes": nbytes, "seconds": seconds, "gflops": g,
                     "gbps": nbytes / seconds / 1e9, "intensity": flops / nbytes, "peak_flops": peak,
                     "fraction_of_peak": g * 1e9 / peak})
    best_mm = max(g for k, g in rates.items() if k.startswith("matmul"))
    best_el = max(g for k, g in rates.items() if k.startswith("elementwise"))
    return made("elementwise_vs_matmul", recs, device, gap=best_mm / best_el, spec_gap=spec_gap, repeat=512,
                matmul_n=1024, n_elements=n, **meta)


@pytest.mark.parametrize("runs", sets_with("elementwise_vs_matmul"))
def test_elementwise_gap(runs):
    run = runs["elementwise_vs_matmul"]
    refs = reference.load("elementwise_vs_matmul")
    p = prose.elementwise_gap(run, refs)
    paras = str(p).split("\n\n")
    text, x2_text = paras[0], paras[1]
    by = {r["kind"]: r for r in run.records}
    for r in by.values():
        assert words.rate(r["gflops"] * 1e9) in text
    cpu = run.meta["device"]["backend"] == "cpu"
    chain = by.get("elementwise fused FMA chain")
    if cpu and chain:
        ratio = by["matmul FP32"]["gflops"] / chain["gflops"]
        if ratio > 1 + words.SAME:
            assert p.facts["outcome"] == "matmul faster" and close_to(ratio, text)
        elif ratio < 1 / (1 + words.SAME):
            assert p.facts["outcome"] == "chain faster" and close_to(1 / ratio, text)
        else:
            assert p.facts["outcome"] == "about the same"
        assert "The spec sheets' gap is a GPU's" in text
        assert close_to(chain["gflops"] / by["elementwise x * 2"]["gflops"], x2_text)
    if run.meta.get("spec_gap") and "matmul FP16 tensor cores" in by:
        assert close_to(run.meta["gap"], text) and close_to(run.meta["spec_gap"], text)
    # Every share names its peak; a chain that ran no FMA instruction is never called one, and its
    # ceiling (half the FP32 peak, which counts an FMA as two FLOPs) is given with its share of it.
    assert "of its peak" not in text and "because" not in text
    if chain:
        assert ("no FMA instruction" in text) == (not chain.get("fma"))
        if not chain.get("fma") and run.meta.get("spec_gap") and chain["gflops"] >= max(
                r["gflops"] for k, r in by.items() if k.startswith("elementwise")):
            assert words.rate(chain["peak_flops"] / 2) in text
            assert close_to(100 * chain["gflops"] * 2e9 / chain["peak_flops"], text, 0.02)
    frac = by["elementwise x * 2"]["gbps"] * 1e9 / run.meta["device"]["peak_bandwidth"]
    expected = ("above bandwidth" if frac > prose.ABOVE_ROOF else "memory-bound" if frac >= 0.3 else "below both")
    assert p.facts["x2_outcome"] == expected
    assert words.rate(by["elementwise x * 2"]["gbps"] * 1e9, "B/s") in x2_text
    for ref in refs:
        assert ref.meta["device"]["name"] in str(p)


def test_elementwise_gap_wordings():
    gpu = gap_run({"elementwise x * 2": 300, "elementwise fused FMA chain": 50e3, "matmul FP32": 55e3,
                   "matmul FP16 tensor cores": 650e3}, device=H100, spec_gap=14.8)
    t = str(prose.elementwise_gap(gpu))
    assert "13 times the FLOP/s of the best elementwise kernel" in t and "14.8" not in t and "15" in t
    assert "Most of the spec-sheet gap shows" in t
    smaller = gap_run({"elementwise x * 2": 300, "elementwise fused FMA chain": 60e3, "matmul FP32": 55e3,
                       "matmul FP16 tensor cores": 300e3}, device=H100, spec_gap=14.8)
    t = str(prose.elementwise_gap(smaller))
    assert "Less of it shows" in t and "because" not in t   # shares of different peaks explain nothing
    fma_chain = gap_run({"elementwise x * 2": 300, "elementwise fused FMA chain": 30e3, "matmul FP32": 55e3,
                         "matmul FP16 tensor cores": 650e3}, device=H100, spec_gap=14.8)
    fma_chain.records[1]["fma"] = True
    t = str(prose.elementwise_gap(fma_chain))
    assert "fused multiply-adds per element" in t and "half that peak" not in t and "no FMA" not in t
    larger = prose.elementwise_gap(gap_run({"elementwise x * 2": 300, "elementwise fused FMA chain": 30e3,
                                            "matmul FP32": 55e3, "matmul FP16 tensor cores": 650e3},
                                           device=H100, spec_gap=14.8))   # 650/30 = 21.7 > 14.8
    assert larger.facts["outcome"] == "gap larger" and "at most half that peak" in str(larger)
    chain_wins = str(prose.elementwise_gap(gap_run(
        {"elementwise x * 2": 1, "elementwise fused FMA chain": 120, "matmul FP32": 60})))
    assert "the chain outran the matmul, 2 times its FLOP/s" in chain_wins
    same = prose.elementwise_gap(gap_run({"elementwise x * 2": 1, "elementwise fused FMA chain": 100,
                                          "matmul FP32": 105}))
    assert same.facts["outcome"] == "about the same"
    above = str(prose.elementwise_gap(gap_run({"elementwise x * 2": 1, "elementwise fused FMA chain": 230,
                                               "matmul FP32": 180})))
    assert "above the measured roof" in above
    # x * 2 at 2 GFLOP/s moves 16 GB/s of a 25 GB/s roof: memory-bound.
    assert prose.elementwise_gap(gap_run({"elementwise x * 2": 2, "elementwise fused FMA chain": 100,
                                          "matmul FP32": 150})).facts["x2_outcome"] == "memory-bound"
    # x * 2 on 2^22 elements moves 32 MiB: within a 32 MiB cache, within four of them, beyond any.
    for llc, words_ in ((32 * 2 ** 20, "fit in the 32 MiB last-level cache"),
                        (16 * 2 ** 20, "less than four times the 16 MiB last-level cache"),
                        (2 * 2 ** 20, "the DRAM roof understates this machine")):
        above_bw = prose.elementwise_gap(gap_run({"elementwise x * 2": 4, "elementwise fused FMA chain": 100,
                                                  "matmul FP32": 150}, device={**CPU, "l2_bytes": llc}))
        assert above_bw.facts["x2_outcome"] == "above bandwidth" and words_ in str(above_bw)
    no_chain = prose.elementwise_gap(gap_run({"elementwise x * 2": 1, "matmul FP32": 150}))
    assert no_chain.facts["outcome"] == "no chain"


def test_elementwise_gap_reference_on_a_cpu():
    live = gap_run({"elementwise x * 2": 1, "elementwise fused FMA chain": 100, "matmul FP32": 150})
    ref = gap_run({"elementwise x * 2": 300, "elementwise fused FMA chain": 50e3, "matmul FP32": 55e3,
                   "matmul FP16 tensor cores": 650e3}, device=H100, spec_gap=14.8, reference=True)
    t = str(prose.elementwise_gap(live, [ref]))
    assert "On the reference NVIDIA H100 80GB HBM3" in t and "the tensor cores make the gap" in t


@pytest.mark.parametrize("runs", sets_with("elementwise_vs_matmul"))
def test_elementwise_gap_flags_constant_matmul_data(runs):
    run = runs["elementwise_vs_matmul"]
    text = str(prose.elementwise_gap(run, [])).split("\n\n")[0]
    tc = any(r.get("tensor_cores") for r in run.records)
    assert ("were constants" in text) == (tc and run.meta.get("data") is None and run.meta.get("spec_gap") is not None)


def test_no_compute_sentence_blames_noise_or_other_programs_without_measuring_them():
    """'Noise', 'a busy machine' and other programs are named only with the measurement that shows them."""
    runs = [matmul_run({64: 50, 128: 150, 256: 60}), matmul_run({32: 1, 64: 5, 128: 0.2, 256: 1.2, 512: 4.5}),
            matmul_run({32: 1, 64: 20, 128: 10, 256: 55, 512: 60}), matmul_run({32: 1, 64: 20, 128: 50, 256: 55})]
    for run in runs:
        t = str(prose.matmul_curve(run))
        assert "noise" not in t and "busy" not in t and "other programs" not in t, t
