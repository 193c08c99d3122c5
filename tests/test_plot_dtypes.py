"""brrr.plot.dtypes: the data types on the roofline (hand-made records; nothing measured)."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from brrr import plot  # noqa: E402
from brrr.experiments.dtypes import matmul_counts, pointwise_counts  # noqa: E402
from brrr.plot import dtypes as dplot  # noqa: E402
from brrr.results import Result  # noqa: E402

TYPES = ("float32", "bfloat16", "float16", "int8")


def run(backend="cpu", peaks=None, skip=(), reference=False, name="Some CPU"):
    peaks = {"float32": 100e9} if peaks is None else peaks
    recs = []
    for op in ("matmul", "pointwise"):
        for i, dtype in enumerate(TYPES):
            flops, nbytes = matmul_counts(256, dtype) if op == "matmul" else pointwise_counts(2 ** 20, dtype)
            rec = {"op": op, "dtype": dtype, "flops": flops, "nbytes": nbytes, "peak_flops": peaks.get(dtype),
                   "skipped": "", "seconds": (flops / 50e9 if op == "matmul" else nbytes / 20e9) * (1 + i)}
            if (op, dtype) in skip:
                rec.pop("seconds")
                rec["skipped"] = "RuntimeError: not here"
            recs.append(rec)
    meta = {"device": {"name": name, "backend": backend}, "peak_bandwidth": 20e9, "date": "2026-11-24",
            "reference": reference}
    return Result("dtype_roofline", recs, meta)


def _arrows(ax):
    return [t for t in ax.texts if getattr(t, "arrow_patch", None) is not None]


def test_one_marker_per_op_and_type_and_an_arrow_from_float32():
    fig = plot.dtype_roofline(run())
    ax = fig.axes[0]
    assert len(_arrows(ax)) == 2 * 3
    markers = [line for line in ax.get_lines() if line.get_marker() in ("o", "s") and len(line.get_xdata()) == 1]
    assert len(markers) == 8
    xs = {(line.get_marker(), line.get_color()): line.get_xdata()[0] for line in markers}
    assert xs[("s", "C1")] == pytest.approx(2 * xs[("s", "C0")])        # bf16 pointwise: twice the intensity
    assert xs[("s", "C3")] == pytest.approx(4 * xs[("s", "C0")])        # int8: four times
    assert ax.get_xscale() == "log" and "Data types on the roofline" in ax.get_title()
    labels = fig.legends[0].get_texts()
    words = {t.get_text() for t in labels}
    assert {"float32", "matmul (n x n)"} <= words and "int8 (integer op/s, no roof drawn)" in words   # no int8 peak


def test_skipped_records_are_left_out():
    ax = plot.dtype_roofline(run(skip=[("matmul", "int8"), ("pointwise", "float32")])).axes[0]
    assert len(_arrows(ax)) == 2          # no float32 pointwise: no arrows there; no int8 matmul


def test_a_gpu_draws_its_tensor_core_roofs():
    fig = plot.dtype_roofline(run(backend="cuda", name="Some GPU",
                                  peaks={"float32": 60e12, "float16": 900e12, "bfloat16": 900e12}))
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any("BF16 / FP16 tensor 900 TFLOP/s" in t or "FP16 / BF16 tensor 900 TFLOP/s" in t for t in texts)


def test_reference_runs_are_grey_with_their_roof():
    ref = run(backend="cuda", name="Ref GPU", peaks={"float32": 60e12, "float16": 900e12}, reference=True)
    fig = plot.dtype_roofline(run(), reference=[ref])
    ax = fig.axes[0]
    assert any(line.get_label().startswith("Ref GPU float32 roof") for line in ax.get_lines())
    assert len(_arrows(ax)) == 12
    assert ax.get_ylim()[1] > 60e12 / 1e9     # the reference's roof fits (GFLOP/s axis)


def test_a_run_without_a_float32_roof_is_refused():
    with pytest.raises(ValueError, match="no float32 roof"):
        dplot.dtype_roof(run(peaks={}))
