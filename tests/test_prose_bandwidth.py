"""Chapter 2's sentences agree with the numbers of every shipped record set."""
import pandas as pd
import pytest

import brrr
from brrr import reference
from brrr.prose import bandwidth as prose, words
from record_sets import close_to, record_sets, sets_with


def test_every_cpu_set_has_the_chapter():
    for name, runs in record_sets().items():
        if "amd" in name or "cpu" in name or "quick" in name:
            for e in ("bandwidth_vs_size", "measure_roofline", "pointwise_repeat_sweep", "cos_fusion"):
                assert e in runs, f"{name} lacks {e}: rerun scripts/make_reference.py --chapters 02"


def test_intensity_table_names_what_reaches_one():
    n = 2 ** 20
    rows = []
    for name, k, fused in (("copy", 1, True), ("triad", 1, True), ("chain", 8, True), ("chain", 8, False)):
        nbytes, flops = brrr.kernels.traffic(name, n, n=k, fused=fused, dtype="float32")
        rows.append({"kernel": f"{name} {'fused' if fused else 'unfused'}" if name == "chain" else name,
                     "intensity (FLOP/byte)": flops / nbytes})
    text = str(prose.intensity_table(pd.DataFrame(rows)))
    assert "the exception, the chain fused, sits exactly at one" in text and "below one FLOP per byte" in text
    assert "8 times the intensity" in text
    below = pd.DataFrame(rows[:2])
    assert str(prose.intensity_table(below)).startswith("Every one of these is below one FLOP per byte")


@pytest.mark.parametrize("runs", sets_with("bandwidth_vs_size"))
def test_bandwidth_curve(runs):
    run = runs["bandwidth_vs_size"]
    p = prose.bandwidth_curve(run, reference.load("bandwidth_vs_size"))
    text = str(p).split("\n\n")[0]
    recs = sorted(run.records, key=lambda r: r["working_set"])
    gbps = [r["gbps"] for r in recs]
    peak, first, last = max(gbps), gbps[0], gbps[-1]
    shape = p.facts["outcome"]
    written = lambda gb: words.rate(gb * 1e9, "B/s")  # noqa: E731 - as the prose writes GB/s
    if "rises" in shape:
        assert first < peak and written(first) in text
    if "falls" in shape:
        assert last < peak and written(last) in text and close_to(peak / last, text, 0.05)
    # The curve falls past its peak exactly when its last point is a cache step below the peak,
    # and the text never says it rises to the largest size unless the peak is the largest size.
    assert ("falls" in shape) == (shape != "flat" and peak >= prose.CACHE_STEP * last)
    if "the largest one" in text:
        assert gbps.index(peak) == len(gbps) - 1
    if shape == "flat":
        assert max(gbps) < prose.FLAT * min(gbps)
    else:
        assert written(peak) in text
    if recs[-1]["working_set"] > (run.meta.get("llc_bytes") or 0):
        assert "never passed the last-level cache" not in text
    dram = run.meta["device"]["peak_bandwidth"] / 1e9
    assert ("came from a cache" in text) == (peak > prose.ABOVE_ROOF * dram)
    assert close_to(100 * last / dram, text, 0.03)
    for ref in reference.load("bandwidth_vs_size"):
        assert ref.meta["device"]["name"] in str(p)


@pytest.mark.parametrize("runs", sets_with("measure_roofline"))
def test_roofline_summary(runs):
    run = runs["measure_roofline"]
    refs = reference.load("measure_roofline")
    p = prose.roofline_summary(run, refs)
    text = str(p).split("\n\n")[0]
    # One roof per device, the one every chapter draws: the spec sheet, else the device's own peaks.
    roof = brrr.Roofline.from_summary(run.meta["device"])
    assert close_to(roof.ridge, text, 0.03)
    spec = brrr.roofline.has_spec_sheet(run.meta["device"])
    cpu = words.is_cpu(run)
    assert ("it is a measured roof, not a hardware peak" in text.lower()) == (not spec and cpu)
    assert "no point can sit above it" not in text
    stream = max(r["flops"] / r["nbytes"] for r in run.records if r["kind"] == "bandwidth")
    assert ("Every STREAM kernel sits left of the ridge" in text) == (stream < roof.ridge)
    if stream < roof.ridge:
        # Left of the ridge is not "on the roof": each kernel's share of the roof is given, "memory-bound"
        # is said only when every one reached ON_ROOF of it, and each that did not is named as such.
        from brrr.prose.words import ON_ROOF
        shares = {(r["op"], r["library"]): r["gbps"] * 1e9 / roof.peak_bandwidth
                  for r in run.records if r["kind"] == "bandwidth"}
        for share in shares.values():
            assert close_to(100 * share, text, 0.02)
        off = [k for k, v in shares.items() if v < ON_ROOF]
        assert ("memory-bound" in text) == (not off)
        assert sorted(p.facts["stream_below_roof"]) == sorted(f"`{op}` ({lib})" for op, lib in off)
        if off:
            assert "not on the roof" in text
    mm = min(r["flops"] / r["nbytes"] for r in run.records if r["kind"] == "compute" and not r["tensor_cores"])
    assert ("The matmuls sit right of it" in text) == (mm > roof.ridge)
    for ref in refs:
        assert close_to(brrr.Roofline.of_run(ref).ridge, str(p), 0.03)


@pytest.mark.parametrize("runs", sets_with("pointwise_repeat_sweep"))
def test_repeat_sweep(runs):
    run = runs["pointwise_repeat_sweep"]
    p = prose.repeat_sweep(run, reference.load("pointwise_repeat_sweep"))
    text = str(p).split("\n\n")[0]
    predicted, measured = run.meta["predicted_knee"], run.meta["measured_knee"]
    assert close_to(predicted, text, 0.01)
    if measured is None:
        assert "never rose clearly above its flat floor" in text
    else:
        assert close_to(measured, text, 0.01)
        word = ("earlier than" if measured < predicted / prose.KNEE_CLOSE else
                "later than" if measured > predicted * prose.KNEE_CLOSE else "close to")
        assert word in text
    roof_bw = run.meta["roof"]["peak_bandwidth"]
    above = sum(r["gbps"] * 1e9 > prose.ABOVE_ROOF * roof_bw for r in run.records)
    assert ("faster than the roof" in text) == (above > 0)


@pytest.mark.parametrize("runs", sets_with("cos_fusion"))
def test_cos_fusion(runs):
    run = runs["cos_fusion"]
    p = prose.cos_fusion(run, reference.load("cos_fusion"))
    text = str(p).split("\n\n")[0]
    t = {(r["k"], r["variant"]): r["seconds"] for r in run.records}
    fused, unfused = t[(2, "fused")] / t[(1, "fused")], t[(2, "unfused")] / t[(1, "fused")]
    assert close_to(fused, text, 0.01) and close_to(unfused, text, 0.01)
    # "The time follows the traffic" only where the fused pair (the bytes of one cos) took about one cos's time.
    assert ("He's argument, measured" in text) == (fused <= 1 + words.SAME and unfused > 1.6)
    if fused > 1.6 and unfused / fused < 1.3:
        saved = 1 - t[(2, "fused")] / t[(2, "unfused")]      # the share of the pair's time fusing saved, maybe < 0
        assert (f"fusing saved only {words.percent(saved)}" if saved > 0 else "fusing saved nothing") in text
    elif fused > 1 + words.SAME:
        assert f"yet it took {words.percent(fused - 1)} longer" in text


def test_against_peaks_explains_every_percentage_above_a_peak():
    peaks = brrr.Roofline(peak_flops=100e9, peak_bandwidth=20e9)
    above = str(prose.against_peaks(brrr.Roofline(peak_flops=80e9, peak_bandwidth=31.6e9), peaks, cpu=True))
    assert "158% of the cached peak (measured once) bandwidth: above it, because" in above
    assert "80% of the cached peak (measured once) FLOP/s;" in above
    gpu = str(prose.against_peaks(brrr.Roofline(peak_flops=30e9, peak_bandwidth=30e9), peaks, cpu=False))
    assert "30% of the spec-sheet peak FLOP/s: far below it" in gpu
    assert "150% of the spec-sheet peak bandwidth: above it, because faster than the spec allows" in gpu


def test_a_capped_sweep_counts_as_dram_only_what_is_past_the_reported_cache():
    """A 300 MiB L3 reported on a two-core slice: brrr sizes the sweep for 64 MiB (capped), so only
    points past twice the reported 300 MiB are DRAM's (issue 25)."""
    MiB = 2 ** 20
    sizes = [2 ** k * MiB for k in range(0, 11)]     # 1 MiB .. 1 GiB
    records = [{"working_set": s, "gbps": 20.0 if s <= 256 * MiB else 10.0 + k} for k, s in enumerate(sizes)]
    run = brrr.Result("bandwidth_vs_size", records,
                      {"device": {"name": "Xeon", "backend": "cpu"}, "llc_bytes": 64 * MiB,
                       "caches": {"L1d": 48 * 1024, "L2": 2 * MiB, "L3": 300 * MiB}})
    c = prose.curve(run)
    assert c["llc"] == 300 * MiB
    assert all(size >= 600 * MiB for size, _ in c["dram"])
