"""The roofline model, checked exactly against figures from the seeds."""
import math

import numpy as np
import pytest

import brrr
from brrr.roofline import COMPUTE, MEMORY, OVERHEAD, Roofline, arithmetic_intensity
from brrr.specs import SEED_A100


def seed_a100():
    return Roofline(peak_flops=SEED_A100["fp32"], peak_bandwidth=SEED_A100["bandwidth"])


def test_a100_fp32_ridge_is_13_flop_per_byte():
    # He's A100: 19.5 TFLOP/s general math, 1.5 TB/s -> 13 FLOP/byte.
    assert seed_a100().ridge == pytest.approx(13.0, rel=1e-12)


def test_a100_tensor_core_ridge_is_208():
    roof = Roofline(peak_flops=SEED_A100["fp16_tensor"], peak_bandwidth=SEED_A100["bandwidth"])
    assert roof.ridge == pytest.approx(208.0, rel=1e-12)


def test_attainable_is_bandwidth_times_intensity_below_ridge_and_peak_above():
    roof = seed_a100()
    assert roof.attainable(1.0) == pytest.approx(1.5e12)
    assert roof.attainable(0.25) == pytest.approx(0.375e12)
    assert roof.attainable(13.0) == pytest.approx(19.5e12)
    assert roof.attainable(1000.0) == pytest.approx(19.5e12)
    arr = roof.attainable(np.array([0.5, 100.0]))
    np.testing.assert_allclose(arr, [0.75e12, 19.5e12])


def test_time_is_max_of_memory_and_math():
    roof = seed_a100()
    # x * 2 on 1e9 float32: 1e9 FLOPs, 8e9 bytes -> memory: 8e9 / 1.5e12 s.
    assert roof.time(1e9, 8e9) == pytest.approx(8e9 / 1.5e12)
    assert roof.t_math(1e9) == pytest.approx(1e9 / 19.5e12)
    # A big matmul is compute-bound.
    n = 4096
    flops, nbytes = 2 * n ** 3, 3 * n * n * 4
    assert roof.time(flops, nbytes) == pytest.approx(flops / 19.5e12)


def test_regime_prediction_and_overhead():
    roof = seed_a100().with_ceilings(overhead=5e-6)
    assert roof.regime(1e9, 8e9) == MEMORY
    assert roof.regime(2 * 4096 ** 3, 3 * 4096 ** 2 * 4) == COMPUTE
    # One element: the fixed cost per call dwarfs the work.
    assert roof.regime(1, 8, seconds=6e-6) == OVERHEAD
    # A big memory-bound op measured near its roofline time is memory-bound.
    assert roof.regime(1e9, 8e9, seconds=8e9 / 1.5e12 * 1.2) == MEMORY
    # Without a known overhead the model cannot say "overhead".
    assert seed_a100().regime(1, 8, seconds=6e-6) == MEMORY
    # A call whose roofline time (8 us) exceeds the fixed cost (5 us) is bound by its work,
    # however slowly it was measured (chapter 3's crossover, and chapter 7's rule).
    nbytes = 8e-6 * 1.5e12
    assert roof.regime(1e6, nbytes, seconds=12e-6) == MEMORY
    assert roof.regime(1e6, nbytes, seconds=1e-3) == MEMORY


def test_efficiency():
    roof = seed_a100()
    t = roof.time(1e9, 8e9)
    assert roof.efficiency(1e9, 8e9, 2 * t) == pytest.approx(0.5)


def test_arithmetic_intensity():
    assert arithmetic_intensity(1e9, 8e9) == pytest.approx(0.125)
    np.testing.assert_allclose(arithmetic_intensity(np.array([2.0, 4.0]), 2.0), [1.0, 2.0])
    with pytest.raises(ValueError, match="nbytes"):
        arithmetic_intensity(1.0, 0)


@pytest.mark.parametrize("kwargs, word", [
    (dict(peak_flops=0, peak_bandwidth=1), "peak_flops"),
    (dict(peak_flops=1, peak_bandwidth=-2), "peak_bandwidth"),
    (dict(peak_flops=math.inf, peak_bandwidth=1), "peak_flops"),
    (dict(peak_flops=1, peak_bandwidth=1, compute_ceilings={"bad": 0}), "bad"),
])
def test_non_positive_peaks_are_refused(kwargs, word):
    with pytest.raises(ValueError, match=word):
        Roofline(**kwargs)


def test_wrong_types_are_refused():
    with pytest.raises(TypeError, match="peak_flops"):
        Roofline(peak_flops="fast", peak_bandwidth=1)
    with pytest.raises(TypeError, match="peak_bandwidth"):
        Roofline(peak_flops=1, peak_bandwidth=True)
    with pytest.raises(ValueError, match="flops"):
        seed_a100().time(-1, 1)
    with pytest.raises(TypeError, match="ai"):
        seed_a100().attainable("high")


def test_from_device_has_ceilings_and_round_trips():
    roof = Roofline.from_device()
    dev = brrr.device()
    assert roof.peak_bandwidth == dev.peak_bandwidth
    assert roof.peak_flops == dev.peak_flops("float32")
    assert "FP32" in roof.compute_ceilings and "DRAM" in roof.memory_ceilings
    again = Roofline.from_dict(roof.to_dict())
    assert again.ridge == roof.ridge and again.compute_ceilings == roof.compute_ceilings
    assert "ridge" in repr(roof)


def test_roofline_from_a_saved_device_summary():
    summary = {"name": "A100", "peak_flops_float32": 19.5e12, "peak_bandwidth": 1.5e12,
               "peak_flops_float32_tensor": 156e12, "peak_flops_float16_tensor": 312e12}
    roof = Roofline.from_summary(summary)
    assert roof.ridge == 13.0 and roof.name == "A100"
    assert roof.compute_ceilings == {"FP32": 19.5e12, "TF32 tensor": 156e12, "FP16 tensor": 312e12}
    cpu = Roofline.from_summary({"peak_flops_float32": 1e11, "peak_bandwidth": 1e10,
                                 "peak_flops_float32_tensor": 1e11, "peak_flops_float16_tensor": 1e11})
    assert cpu.compute_ceilings == {"FP32": 1e11}  # a CPU has no separate tensor rates
    with pytest.raises(ValueError, match="summary"):
        Roofline.from_summary({"peak_bandwidth": 1e12})
