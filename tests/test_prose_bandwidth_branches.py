"""Chapter 2's data-chosen sentences, one test per wording, on hand-made records (not measurements):
the DRAM end of the bandwidth curve and the stores behind it, the steepest drop,
the repeat sweep's knee, the cos table, the intensity table and the roofline's one roof."""
import pandas as pd
import pytest

from brrr.prose import bandwidth as prose, bandwidth_dram as dram
from brrr.results import Result

MiB, KiB = 2 ** 20, 2 ** 10
CPU = {"name": "Test CPU (2 threads)", "backend": "cpu", "peak_bandwidth": 20e9, "l2_bytes": 32 * MiB,
       "peak_flops_float32": 100e9, "peak_flops_float32_tensor": 100e9, "source": "measured on this machine"}
GPU = {"name": "Test GPU", "backend": "cuda", "peak_bandwidth": 2000e9, "l2_bytes": 40 * MiB,
       "peak_flops_float32": 20e12, "peak_flops_float32_tensor": 20e12,
       "source": "unknown GPU: peaks derived from its properties"}
CACHES = {"L1d": 32 * KiB, "L2": 512 * KiB, "L3": 32 * MiB}
STORES = {"arch": "x86_64", "streaming_store_threshold": 192 * MiB, "roof_copy_bytes": 256 * MiB}


def curve_run(points, device=CPU, stores=STORES, caches=CACHES):
    """A bandwidth_vs_size result from (working set in bytes, GB/s) pairs."""
    records = [{"working_set": s, "gbps": g, "nbytes": s, "seconds": s / (g * 1e9)} for s, g in points]
    meta = {"device": device, "caches": caches, "llc_bytes": max(caches.values()), "date": "2026-11-22"}
    if stores is not None:
        meta["stores"] = stores
    return Result("bandwidth_vs_size", records, meta)


CLIMB = [(4 * KiB, 5.0), (32 * KiB, 30.0), (512 * KiB, 60.0), (8 * MiB, 58.0), (32 * MiB, 25.0)]


def test_the_dram_end_explained_by_the_stores():
    run = curve_run(CLIMB + [(64 * MiB, 13.0), (128 * MiB, 11.5), (256 * MiB, 11.0), (512 * MiB, 19.5)])
    p = prose.bandwidth_curve(run)
    text = str(p)
    assert p.facts["dram"] == "stores"
    assert "Past the last-level cache the curve is not level" in text
    assert "between 11 GB/s (at 256 MiB, 55% of the measured DRAM bandwidth) and 19.5 GB/s (at 512 MiB, 98%)" in text
    assert "at least 192 MiB (its non-temporal threshold) with streaming stores" in text
    assert "the 11 GB/s counted at 256 MiB is about 16.5 GB/s of real traffic" in text
    assert "The working set of 512 MiB copies at least the threshold per array and skips that read" in text
    assert "So does the copy behind the measured DRAM bandwidth (256 MiB per array): that working set" in text


def test_a_roof_copied_below_the_threshold_is_named():
    stores = dict(STORES, roof_copy_bytes=128 * MiB)
    run = curve_run(CLIMB + [(64 * MiB, 13.0), (512 * MiB, 19.5), (1024 * MiB, 19.0)], stores=stores)
    text = str(prose.bandwidth_curve(run))
    assert "The working sets of 512 MiB and 1 GiB copy at least the threshold per array and skip that read" in text
    assert "(128 MiB per array) is below the threshold, so it used ordinary stores too" in text


def test_a_last_point_above_the_measured_roof():
    text = str(prose.bandwidth_curve(curve_run(CLIMB + [(64 * MiB, 18.0), (512 * MiB, 22.0)])))
    assert "The largest working set reached 110% of the measured DRAM bandwidth: above it, because" in text
    text = str(prose.bandwidth_curve(curve_run(CLIMB + [(64 * MiB, 18.0), (512 * MiB, 19.0)])))
    assert "reached 95% of the measured DRAM bandwidth." in text and "above it" not in text
    gpu = curve_run([(4 * KiB, 4.0), (8 * MiB, 3000.0), (128 * MiB, 2000.0), (512 * MiB, 2300.0)], device=GPU,
                    stores=None, caches={"L2": 40 * MiB})
    assert "115% of the spec-sheet DRAM bandwidth: above the spec" in str(prose.bandwidth_curve(gpu))


def test_a_level_dram_end():
    run = curve_run(CLIMB + [(64 * MiB, 18.0), (512 * MiB, 19.0)])
    p = prose.bandwidth_curve(run)
    assert p.facts["dram"] == "level"
    assert "Past the last-level cache the curve is level" in str(p) and "streaming" not in str(p)


def test_too_few_dram_points_say_nothing_of_them():
    p = prose.bandwidth_curve(curve_run(CLIMB + [(64 * MiB, 18.0)]))
    assert p.facts["dram"] == "few" and "Past the last-level cache" not in str(p)


def test_dram_points_that_all_store_alike():
    p = prose.bandwidth_curve(curve_run(CLIMB + [(64 * MiB, 18.0), (256 * MiB, 11.0)]))
    assert p.facts["dram"] == "stores alike"
    assert "This run does not show why: every one of them copies less than 192 MiB per array" in str(p)


def test_streaming_copies_that_were_not_the_fast_ones():
    p = prose.bandwidth_curve(curve_run(CLIMB + [(64 * MiB, 18.0), (512 * MiB, 11.0)]))
    assert p.facts["dram"] == "not the stores"
    assert "This run does not show why: the copies of at least 192 MiB per array" in str(p)
    assert "were not the fast ones; rerunning" in str(p)


def test_an_uneven_dram_end_without_the_threshold():
    p = prose.bandwidth_curve(curve_run(CLIMB + [(64 * MiB, 11.0), (512 * MiB, 19.0)], stores=None))
    assert p.facts["dram"] == "stores unknown"
    assert "This run does not show why (it did not record the size from which" in str(p)


def test_an_uneven_dram_end_on_a_gpu():
    caches = {"L2": 40 * MiB}
    points = [(4 * KiB, 4.0), (8 * MiB, 3000.0), (128 * MiB, 1000.0), (512 * MiB, 1900.0)]
    p = prose.bandwidth_curve(curve_run(points, device=GPU, stores=None, caches=caches))
    assert p.facts["dram"] == "unexplained"
    assert "of the spec-sheet DRAM bandwidth" in str(p) and "This run does not show why; rerunning" in str(p)
    assert "memcpy" not in str(p)


def test_the_steepest_drop_names_the_cache_level_around_it():
    flat = [(4 * KiB, 10.0), (256 * KiB, 80.0), (512 * KiB, 75.0), (1 * MiB, 78.0), (2 * MiB, 73.0),
            (8 * MiB, 74.0), (16 * MiB, 60.0), (32 * MiB, 25.0), (512 * MiB, 33.0)]
    text = str(prose.bandwidth_curve(curve_run(flat)))
    assert "It falls most steeply between 16 MiB and 32 MiB, around the size of the L3 (32 MiB)." in text
    assert "The largest working set, 512 MiB, past the 32 MiB last-level cache, ran at 33 GB/s" in text


def test_dram_outcome_splits_the_points_at_the_threshold():
    meta = {"stores": STORES}
    assert dram.kind(192 * MiB, 192 * MiB) == "streaming" and dram.kind(192 * MiB, 128 * MiB) == "ordinary"
    assert dram.kind(None, 128 * MiB) is None
    assert dram.dram_points([{"working_set": 32 * MiB, "gbps": 1.0}, {"working_set": 64 * MiB, "gbps": 2.0}],
                            32 * MiB) == [(64 * MiB, 2.0)]
    assert dram.dram_outcome([(64 * MiB, 10.0), (512 * MiB, 20.0)], meta, cpu=True) == "stores"


# --- the repeat sweep's knee ----------------------------------------------------------------

def sweep(times, predicted=40.0, measured=20.0, device=CPU, roof_bw=None, n=2 ** 25):
    """A pointwise_repeat_sweep result from {repeat: fused seconds}."""
    records = [{"variant": "fused", "repeat": r, "seconds": t, "gbps": 8 * n / t / 1e9} for r, t in times.items()]
    meta = {"device": device, "predicted_knee": predicted, "measured_knee": measured, "n": n, "dtype": "float32",
            "date": "2026-11-22", "roof": {"peak_bandwidth": roof_bw} if roof_bw else {}}
    return Result("pointwise_repeat_sweep", records, meta)


GRADUAL = {1: 10.0, 2: 10.0, 4: 10.2, 8: 14.0, 16: 16.0, 32: 20.0, 64: 30.0}


def test_the_knee_is_where_floor_and_line_meet_and_the_floor_is_left_earlier():
    p = prose.repeat_sweep(sweep(GRADUAL, predicted=45.4, measured=27.9))
    text = str(p)
    assert p.facts["outcome"] == "earlier" and p.facts["left_floor_at"] == 8
    assert "meet at about 27.9 multiplications per element, earlier than the 45.4" in text
    assert "left its flat floor" not in text
    assert "first rose more than 10% above its floor at 8 multiplications per element, where it took 1.4 times" in text
    assert "counts a fused multiply-add instruction as two FLOPs" in text


def test_a_sharp_knee_is_not_called_gradual():
    sharp = {1: 10.0, 8: 10.0, 16: 10.5, 32: 20.0, 64: 40.0}
    text = str(prose.repeat_sweep(sweep(sharp, predicted=20.0, measured=16.0)))
    assert "close to the 20" in text and "at 32 multiplications per element" in text
    assert "two FLOPs" not in text


def test_a_later_knee():
    text = str(prose.repeat_sweep(sweep(GRADUAL, predicted=5.0, measured=27.9)))
    assert "later than the 5" in text and "faster than the peak in the prediction assumes" in text


def test_no_knee():
    p = prose.repeat_sweep(sweep({1: 10.0, 64: 12.0}, predicted=45.0, measured=None))
    assert p.facts["outcome"] == "no knee"
    assert "never rose clearly above its flat floor" in str(p) and "at 64 multiplications" in str(p)


def test_a_reference_with_the_same_outcome_is_not_explained_twice():
    ref = sweep(GRADUAL, predicted=160.0, measured=87.7, device=GPU)
    ref.meta["reference"] = True
    text = str(prose.repeat_sweep(sweep(GRADUAL, predicted=45.4, measured=27.9), [ref]))
    assert text.count("counts a fused multiply-add instruction as two FLOPs") == 1
    assert "the measured knee is at about 87.7 multiplications per element, earlier than the 160" in text
    assert "It is earlier for the same reason as above." in text
    assert text.count("drawn dash-dotted") == 1


def test_points_above_a_cpu_roof_are_a_measured_roof():
    text = str(prose.repeat_sweep(sweep(GRADUAL, roof_bw=1e6)))   # the records move ~27 MB/s
    assert "moved data faster than the roof's 0.001 GB/s" in text and "not a hardware limit" in text
    gpu = str(prose.repeat_sweep(sweep(GRADUAL, roof_bw=1e6, device=GPU, n=2 ** 28)))
    assert "DRAM cannot beat its spec sheet" in gpu


# --- cos and its table ---------------------------------------------------------------------

def cos_run(single, fused, unfused, predicted=1.0, regime="memory-bound"):
    rows = [(1, "fused", single, predicted), (2, "fused", fused, predicted), (2, "unfused", unfused, 2 * predicted)]
    records = [{"k": k, "variant": v, "seconds": t, "predicted_seconds": pt, "predicted_regime": regime}
               for k, v, t, pt in rows]
    return Result("fusion_speedup", records, {"device": CPU, "date": "2026-11-22"})


def test_the_cos_table_regime_against_a_compute_bound_measurement():
    p = prose.cos_fusion(cos_run(5.0, 10.0, 10.5))
    assert p.facts["outcome"] == "compute-bound"
    assert "counting a `cos` as one FLOP, says memory-bound;" in str(p)
    assert "one `cos` ran at 20% of the speed the roofline allows" in str(p)


def test_what_fusing_a_compute_bound_pair_saved():
    assert "Here fusing saved only 4.8%: even fused" in str(prose.cos_fusion(cos_run(5.0, 10.0, 10.5)))
    assert "Here fusing saved nothing: even fused" in str(prose.cos_fusion(cos_run(5.0, 10.0, 10.0)))
    slower = str(prose.cos_fusion(cos_run(5.0, 10.1, 10.0)))
    assert "Here fusing saved nothing (the fused pair was even 1% slower): even fused" in slower
    assert "almost" not in slower
    ref = cos_run(5.0, 10.1, 10.0)
    ref.meta["reference"] = True
    assert "compute-bound, so fusion saved nothing (the fused pair was even 1% slower)." in str(
        prose.cos_fusion(cos_run(1.2, 1.3, 2.5), [ref]))


def test_the_cos_table_regime_agrees_with_a_memory_bound_measurement():
    p = prose.cos_fusion(cos_run(1.2, 1.3, 2.5))
    assert p.facts["outcome"] == "memory-bound"
    assert "says memory-bound too; one `cos` ran at 83%" in str(p)


def test_the_cos_table_regime_in_between():
    p = prose.cos_fusion(cos_run(1.0, 1.5, 2.0))
    assert p.facts["outcome"] == "in between"
    assert "The table's regime column, the roofline's verdict counting a `cos` as one FLOP, says memory-bound;" in str(p)


# --- the intensity table ------------------------------------------------------------------

def table(rows):
    return str(prose.intensity_table(pd.DataFrame(
        [{"kernel": k, "intensity (FLOP/byte)": v} for k, v in rows.items()])))


def test_one_exception_exactly_at_one():
    text = table({"copy": 0.0, "chain of 8 x*c (fused)": 1.0})
    assert "All but one of these are below one FLOP per byte; the exception, the chain of 8 x*c (fused), " \
           "sits exactly at one." in text


def test_one_exception_above_one():
    assert "the exception, the chain of 16 x*c (fused), does 2." in table({"copy": 0.0, "chain of 16 x*c (fused)": 2.0})


def test_several_exceptions():
    text = table({"copy": 0.0, "a": 1.0, "b": 2.5})
    assert "All but two of these are below one FLOP per byte; the exceptions, at or above one, are the a (1) " \
           "and the b (2.5) FLOP/byte." in text


def test_none_at_one():
    assert table({"copy": 0.0, "triad": 1 / 6}).startswith("Every one of these is below one FLOP per byte")


# --- the roofline: one roof per device --------------------------------------------------------

def roofline_run(device, records):
    return Result("measure_roofline", records, {"device": device, "date": "2026-11-22"})


STREAM = [{"kind": "bandwidth", "op": "triad", "library": "brrr.kernels", "gbps": 19.0, "flops": 2e6,
           "nbytes": 12e6, "seconds": 12e6 / 19e9},
          {"kind": "compute", "op": "matmul", "library": "numpy", "gflops": 95.0, "gbps": 1.0, "flops": 2e9,
           "nbytes": 12e6, "seconds": 2e9 / 95e9, "tensor_cores": False}]


def test_a_cpu_roof_is_the_cached_device_roof():
    p = prose.roofline_summary(roofline_run(CPU, STREAM))
    text = str(p)
    assert p.facts["ridge"] == pytest.approx(5.0)
    assert "its roof is the one `brrr` measured on it once and cached, which every chapter uses" in text
    assert "20 GB/s (a NumPy copy on one thread) and 100 GFLOP/s" in text and "a ridge at 5 FLOP/byte" in text
    assert "moved 19 GB/s (95% of that roof's bandwidth)" in text and "95 GFLOP/s (95% of its FLOP/s)" in text
    assert "It is a measured roof, not a hardware peak: a kernel can sit above it" in text
    assert "no point can sit above it" not in text


def test_a_point_above_a_cpu_roof_is_explained_as_a_measured_roof():
    above = [dict(STREAM[0], gbps=25.0, seconds=12e6 / 25e9), STREAM[1]]
    text = str(prose.roofline_summary(roofline_run(CPU, above)))
    assert "triad (brrr.kernels) measured above the roof" in text
    assert "the roof is itself one measurement" in text and "spec sheet understates" not in text


def test_an_unknown_gpu_roof_is_its_derived_peaks():
    records = [dict(STREAM[0], gbps=1900.0, seconds=12e6 / 1900e9), dict(STREAM[1], gflops=19000.0,
                                                                          seconds=2e9 / 19000e9)]
    text = str(prose.roofline_summary(roofline_run(GPU, records)))
    assert "the peaks `brrr` derived from its properties" in text and "measured roof" not in text


H100 = {"name": "NVIDIA H100 80GB HBM3", "backend": "cuda", "peak_bandwidth": 3.35e12, "l2_bytes": 50 * MiB,
        "peak_flops_float32": 67e12, "peak_flops_float32_tensor": 494.5e12, "peak_flops_float16_tensor": 989.5e12,
        "source": "NVIDIA H100 Tensor Core GPU datasheet (2023)"}
TENSOR = {"kind": "compute", "op": "matmul", "library": "torch", "gflops": 800e3, "gbps": 1.0, "flops": 2e12,
          "nbytes": 1e9, "seconds": 2e12 / 800e12, "tensor_cores": True, "dtype": "bfloat16"}


def test_a_spec_sheet_reference_moves_its_ridge_by_the_spec_ratio():
    """The measured tensor-core ratio (800 / 50 = 16) is not how far the spec ridge moves (989.5 / 67)."""
    records = [dict(STREAM[0], gbps=3000.0, seconds=12e6 / 3000e9),
               dict(STREAM[1], gflops=50e3, seconds=2e9 / 50e12), TENSOR]
    ref = roofline_run(H100, records)
    ref.meta["reference"] = True
    text = str(prose.roofline_summary(roofline_run(CPU, STREAM), [ref]))
    assert "Its tensor cores did 800 TFLOP/s on a bfloat16 matmul, 16 times its measured FP32 general-math rate" in text
    assert ("On the spec sheet its bfloat16 tensor-core rate is 990 TFLOP/s, 15 times the FP32 figure, so with "
            "tensor cores the spec ridge moves right by that factor, from 20 to 295 FLOP/byte.") in text
    assert "same factor" not in text


def test_a_measured_reference_moves_its_ridge_by_the_measured_ratio():
    records = [dict(STREAM[0], gbps=1900.0, seconds=12e6 / 1900e9),
               dict(STREAM[1], gflops=19000.0, seconds=2e9 / 19000e9), dict(TENSOR, gflops=190e3)]
    ref = roofline_run(GPU, records)
    ref.meta.update(reference=True, peak_flops=19e12, peak_bandwidth=1.9e12)
    text = str(prose.roofline_summary(roofline_run(CPU, STREAM), [ref]))
    assert "10 times its measured FP32 general-math rate. Its measured roof's ridge moves right by the same " \
           "factor with tensor cores." in text and "spec sheet its" not in text
