"""The figures say what they show: one tick style per axis, dots on log axes, every line and peak
named with how it was measured, no marker hidden under another (hand-made records; nothing measured)."""
import copy

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import brrr  # noqa: E402
from brrr import plot  # noqa: E402
from brrr.plot import _base  # noqa: E402
from brrr.plot.barchart import value_texts  # noqa: E402
from brrr.results import Result  # noqa: E402

from test_plot import CPU, GPU, SPEC, repeat_result, roofline_result, texts  # noqa: E402

SOURCE = "measured on this machine (2026-01-02, best of 5 rounds of np.copyto on 256 MiB and 2048x2048 np.matmul)"
CACHED_CPU = {**CPU, "source": SOURCE}


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def tick_labels(axis):
    axis.axes.figure.canvas.draw()
    return [t.get_text() for t in axis.get_ticklabels() if t.get_text() and t.get_visible()]


def reference(result, device=GPU, date="2026-01-03T00:00:00", **meta):
    run = Result(result.name, [dict(r) for r in result.records], copy.deepcopy(result.meta))
    run.meta.update(device=device, date=date, reference=True, **meta)
    return run


# --- axes ----------------------------------------------------------------------------------

def test_log_ticks_are_plain_numbers_in_one_style():
    assert [_base.plain_number(v) for v in (0.001, 0.1, 1, 10, 3000)] == ["0.001", "0.1", "1", "10", "3,000"]
    assert _base.plain_number(1e-5) == "$10^{-5}$" and _base.plain_number(2e7) == "$2\\times10^{7}$"
    recs = [{"n": n, "dtype": "float32", "flops": 2 * n ** 3, "seconds": 2 * n ** 3 / (1e8 * n)}
            for n in (32, 64, 128, 256, 512, 1024)]        # 3 GFLOP/s to 100 GFLOP/s: 0.001 to 0.1 TFLOP/s
    ref = Result("matmul_vs_size", [{**r, "seconds": r["seconds"] / 1e3} for r in recs],
                 {"device": GPU, "reference": True, "date": "2026-01-03"})
    fig = plot.matmul_vs_size(Result("matmul_vs_size", recs, {"device": CPU}), reference=[ref])
    labels = tick_labels(fig.axes[0].yaxis)
    assert "0.01" in labels and "1" in labels
    assert not any("e-" in t or "e+" in t for t in labels)


def test_a_short_log_time_axis_labels_more_than_one_tick():
    recs = [{"size": 2 ** k, "seconds": 1e-4 + 2e-6 * 2 ** k} for k in range(12)]   # per sample: 102 to 2 µs
    fig = plot.double_the_batch(Result("double_the_batch", recs, {"device": CPU}))
    labels = tick_labels(fig.axes[1].yaxis)
    assert len(labels) >= 3 and all(t.endswith("s") for t in labels)


# --- bars ----------------------------------------------------------------------------------

def test_values_beside_bars_share_their_decimals():
    assert value_texts([8.02, 3.99, 16, 2, 1.994]) == ["8.0", "4.0", "16.0", "2.0", "2.0"]
    assert value_texts([3.58, 104, 176]) == ["3.6", "104.0", "176.0"]
    assert value_texts([76, 295.4]) == ["76", "295"]
    assert value_texts([0.001, 5000]) == ["0.001", "5e+03"]           # a thousandfold apart: each its own
    assert value_texts([0, 0]) == ["0", "0"]


def test_a_log_axis_gets_dots_a_linear_one_bars():
    rows = [{"kind": "x * 2", "gflops": 3.6}, {"kind": "matmul", "gflops": 180.0}]
    fig = plot.bars(rows, label="kind", value="gflops")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and not ax.patches     # no bar lengths from an arbitrary edge
    dots = [line for line in ax.lines if line.get_marker() == "o"]
    assert sorted(line.get_xdata()[0] for line in dots) == [3.6, 180.0]
    assert [t.get_text() for t in ax.texts] == ["3.6", "180.0"]
    ref = Result("gap", [dict(r) for r in rows], {"device": GPU, "reference": True, "date": "2026-01-03"})
    fig = plot.bars(Result("gap", rows, {"device": CPU}), label="kind", value="gflops", reference=[ref])
    hollow = [line for line in fig.axes[0].lines if line.get_markerfacecolor() == "none"]
    assert len(hollow) == 2 and len(fig.legends[0].get_texts()) == 2
    fig = plot.bars([{"kind": "a", "ratio": 2.0}, {"kind": "b", "ratio": 16.0}], label="kind", value="ratio")
    assert fig.axes[0].get_xscale() == "linear" and len(fig.axes[0].patches) == 2


# --- the roofline --------------------------------------------------------------------------

def test_every_memory_ceiling_and_roof_is_named_with_its_kernel():
    res = roofline_result()
    res.records.append({"kind": "bandwidth", "op": "copy", "library": "brrr.kernels", "dtype": "float32",
                        "tensor_cores": False, "size": 2 ** 20, "nbytes": 8e6, "flops": 0.0, "seconds": 0.8e-3})
    from brrr.experiments.roofline import _roofs
    res.meta.update(_roofs(res.records))
    fig = plot.roofline(brrr.Roofline.of_run(res), points=res)
    words = " ".join(texts(fig)).replace("\n", " ").replace("   ", " ")
    # the roof: its best matmul and its best STREAM kernel; thin lines: the other kernels, top down
    assert "measured roof: FP32 matmul" in words and "triad (brrr.kernels) 10 GB/s" in words
    assert "thin lines, top down): copy (numpy) 8 GB/s" in words


def test_cached_cpu_peaks_say_how_they_were_measured():
    roof = brrr.Roofline(peak_flops=1e11, peak_bandwidth=2e10, name=CPU["name"])
    fig = plot.roofline(roof, points=[], device=CACHED_CPU)
    words = " ".join(texts(fig)).replace("\n", " ").replace("   ", " ")
    assert "measured once, cached: best 2048x2048 np.matmul and best np.copyto on 256 MiB" in words
    recs = [{"working_set": ws, "nbytes": ws, "seconds": ws / 30e9, "gbps": 30.0} for ws in (4096, 2 ** 26)]
    fig = plot.bandwidth_vs_size(Result("bandwidth_vs_size", recs, {"device": CACHED_CPU}))
    assert fig.axes[0].get_legend() is None and fig.legends          # below the chart: no cache label hidden
    assert any("DRAM peak, measured once and cached: best np.copyto on 256 MiB" in w.replace("\n", " ")
               .replace("   ", " ") for w in texts(fig))
    recs = [{"n": n, "dtype": "float32", "flops": 2 * n ** 3, "seconds": 1e-3, "peak_flops": 1e11} for n in (64, 128)]
    fig = plot.matmul_vs_size(Result("matmul_vs_size", recs, {"device": CACHED_CPU}))
    assert any("peak, measured once and cached: best 2048x2048 np.matmul" in w.replace("\n", " ")
               .replace("   ", " ") for w in texts(fig))


def test_a_cpus_float64_ceiling_says_it_was_measured():
    roof = brrr.Roofline(peak_flops=1e11, peak_bandwidth=2e10, name=CPU["name"],
                         compute_ceilings={"FP64": 5e10, "FP32": 1e11})
    fig = plot.roofline(roof, points=[], device=CACHED_CPU)
    words = " ".join(texts(fig)).replace("\n", " ").replace("   ", " ")
    assert "thin line: FP64 50 GFLOP/s, the same 2048x2048 np.matmul in float64" in words
    fig = plot.roofline(brrr.Roofline(peak_flops=1e11, peak_bandwidth=2e10, name=CPU["name"]), points=[],
                        device=CACHED_CPU)
    assert "thin line" not in " ".join(texts(fig))
    fig = plot.roofline(SPEC, points=[])                        # a spec sheet's ceilings need no such note
    assert "in float64" not in " ".join(texts(fig))


def ceiling_label(fig, start):
    return next(t for t in fig.axes[0].texts if t.get_text().startswith(start))


def test_a_ceiling_label_moves_off_the_points_under_it():
    fig = plot.roofline(SPEC, points=[])
    far = ceiling_label(fig, "FP16 / BF16 tensor")
    assert far.xy[0] == pytest.approx(fig.axes[0].get_xlim()[1])  # nothing under it: at the right edge
    crowd = [{"label": f"bf16 {n}", "flops": 2 * n ** 3, "nbytes": 6 * n ** 2, "seconds": 2 * n ** 3 / 280e12}
             for n in (4096, 8192)]                             # just under the 312 TFLOP/s ceiling, far right
    moved = ceiling_label(plot.roofline(SPEC, points=crowd), "FP16 / BF16 tensor")
    assert moved.xy[0] == pytest.approx(312e12 / 1.5e12)       # right-aligned at the ceiling's knee
    assert moved.get_ha() == "right" and moved.xy[1] == pytest.approx(312)


def test_reference_points_have_their_dtype_and_a_shape_of_their_own():
    gpu = roofline_result(device=GPU, reference=True)
    for dtype in ("float32", "float16", "bfloat16"):
        gpu.records.append({"kind": "compute", "op": "matmul", "library": "torch", "dtype": dtype,
                            "tensor_cores": True, "size": 4096, "n": 4096, "nbytes": 3 * 4096 ** 2 * 2,
                            "flops": 2 * 4096 ** 3, "seconds": 1e-3})
    cpu = roofline_result(device={**CPU, "backend": "cpu"}, reference=True)
    fig = plot.roofline(SPEC, points=gpu, reference=[cpu])
    labels = fig.legends[0].get_texts()
    words = [t.get_text() for t in labels]
    for name in ("TF32 tensor", "FP16 tensor", "BF16 tensor"):
        assert f"matmul n=4096 {name} (reference)" in words
    shapes = [line.get_marker() for line in fig.axes[0].lines if line.get_marker() not in ("None", None, "")]
    assert len(shapes) == len(set(shapes))                        # one shape per point and per device
    assert fig.axes[0].get_title() == "Roofline: every reference device"


# --- the repeat sweep, titles, checkpointing -------------------------------------------------

def test_runs_of_other_sizes_say_their_size():
    live = repeat_result()
    other = reference(live, n=2 ** 21)
    fig = plot.repeat_sweep(live, reference=[other])
    labels = [t.get_text().replace("\n", " ").replace("   ", " ") for t in fig.axes[3].get_legend().get_texts()]
    assert any(t.startswith("fused (Test CPU (2 threads), this run, 1,048,576 elements") for t in labels)
    assert any("2,097,152 elements" in t and "A100" in t for t in labels)
    assert "1,048,576" not in fig._suptitle.get_text()             # the title does not claim one size
    fig = plot.repeat_sweep(live, reference=[reference(live)])     # same size: the title says it
    assert "1,048,576 float32 elements" in fig._suptitle.get_text()


def test_device_title_says_what_the_cpu_measured():
    run = Result("x", [], {"device": CPU})
    assert plot.device_title("A", run) == "A: Test CPU (2 threads) (measured on CPU)"
    assert plot.device_title("A", run, measured="roof measured") == "A: Test CPU (2 threads) (roof measured on CPU)"
    assert plot.device_title("A", run, measured="") == "A: Test CPU (2 threads)"


def test_checkpoint_sweep_counts_are_not_called_measured():
    recs = [{"every": e, "saved_bytes": 2 ** 20 * (8 if e == 0 else 8 / e), "recompute_bytes": 2 ** 18 * max(e, 1),
             "peak_activation_bytes": 2 ** 20 * 2, "min_seconds": 1.0 if e == 0 else 1.3} for e in (0, 1, 2, 4)]
    fig = plot.checkpoint_sweep(Result("checkpoint_sweep", recs, {"device": CPU}))
    assert "(step time measured on CPU)" in fig._suptitle.get_text()
    assert "measured" not in fig.axes[0].get_title() and "counted" in fig.axes[0].get_title()


# --- markers that would cover each other; the trace's clock --------------------------------

def test_types_at_one_point_are_set_side_by_side():
    from test_plot_dtypes import run
    r = run()
    for rec in r.records:        # bf16 and fp16 matmuls at exactly one intensity and rate
        if rec["op"] == "matmul" and rec["dtype"] in ("bfloat16", "float16"):
            rec["seconds"] = rec["flops"] / 1e9
    fig = plot.dtype_roofline(r)
    ax = fig.axes[0]
    fig.canvas.draw()
    markers = [line for line in ax.lines if line.get_marker() == "o" and line.get_color() in ("C1", "C2")]
    assert len(markers) == 2
    (x1, y1), (x2, y2) = [line.get_transform().transform(line.get_xydata()[0]) for line in markers]
    assert abs(x1 - x2) > 5 and abs(y1 - y2) < 1e-6              # apart across, at the same height
    alone = [line for line in ax.lines if line.get_marker() == "o" and line.get_color() == "C0"][0]
    assert alone.get_transform().transform(alone.get_xydata()[0]) == pytest.approx(
        ax.transData.transform(alone.get_xydata()[0]))          # a marker with room stays where it is


def test_the_timeline_counts_from_the_first_operator():
    from test_trace import _chrome
    from brrr.profiler.trace import from_chrome
    fig = plot.trace_timeline(from_chrome(_chrome()))
    ax = fig.axes[0]
    starts = [path.vertices[:, 0].min() for coll in ax.collections for path in coll.get_paths()]
    assert min(starts) == pytest.approx(0, abs=1e-9)               # aten::linear, 10 µs after the step mark
    assert "first operator" in ax.get_xlabel()
