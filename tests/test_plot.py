"""Plots take data (never measure), label their units, use log scales, and re-plot from JSON identically."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import brrr  # noqa: E402
from brrr import plot  # noqa: E402
from brrr.results import Result  # noqa: E402

CPU = {"name": "Test CPU (2 threads)", "backend": "cpu", "peak_bandwidth": 20e9}
GPU = {"name": "NVIDIA A100 40GB", "backend": "cuda", "peak_bandwidth": 1.555e12}
SPEC = brrr.Roofline(peak_flops=19.5e12, peak_bandwidth=1.5e12,
                     compute_ceilings={"FP32": 19.5e12, "FP16 tensor": 312e12, "BF16 tensor": 312e12},
                     memory_ceilings={"DRAM": 1.5e12}, name="NVIDIA A100 40GB")


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def roofline_result(device=CPU, reference=False):
    recs = [
        {"kind": "bandwidth", "op": "copy", "library": "numpy", "dtype": "float32", "tensor_cores": False,
         "size": 2 ** 20, "nbytes": 8e6, "flops": 0.0, "seconds": 1e-3},
        {"kind": "bandwidth", "op": "triad", "library": "brrr.kernels", "dtype": "float32",
         "tensor_cores": False, "size": 2 ** 20, "nbytes": 12e6, "flops": 2e6, "seconds": 1.2e-3},
        {"kind": "compute", "op": "matmul", "library": "numpy", "dtype": "float32", "tensor_cores": False,
         "size": 512, "n": 512, "nbytes": 3 * 512 ** 2 * 4, "flops": 2 * 512 ** 3, "seconds": 5e-3},
    ]
    from brrr.experiments.roofline import _roofs
    meta = {"device": device, "date": "2026-01-02T00:00:00", "command": "test", "notes": [], **_roofs(recs)}
    if reference:
        meta["reference"] = True
    return Result("measure_roofline", recs, meta)


def repeat_result():
    recs = []
    for variant in ("fused", "eager"):
        for r in (1, 2, 4, 8, 16, 32, 64):
            passes = 1 if variant == "fused" else r
            seconds = max(1e-3, r / 16 * 1e-3) * (passes if variant == "eager" else 1)
            recs.append({"variant": variant, "repeat": r, "n": 2 ** 20, "flops": r * 2 ** 20,
                         "nbytes": 8 * passes * 2 ** 20, "seconds": seconds})
    meta = {"device": CPU, "n": 2 ** 20, "dtype": "float32", "predicted_knee": 42.0,
            "roof": {"peak_flops": 10.5e10, "peak_bandwidth": 2e10}, "measured_knee": 16.0, "notes": []}
    return Result("pointwise_repeat_sweep", recs, meta)


def texts(fig):
    out = []
    for ax in fig.axes:
        out += [t.get_text() for t in ax.texts]
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        legend = ax.get_legend()
        if legend:
            out += [t.get_text() for t in legend.get_texts()]
    out += [t.get_text() for t in fig.texts]
    for legend in fig.legends:
        out += [t.get_text() for t in legend.get_texts()]
    if fig._suptitle is not None:
        out.append(fig._suptitle.get_text())
    return out


def line_data(fig):
    return [(tuple(map(tuple, line.get_xydata())), line.get_linestyle()) for ax in fig.axes for line in ax.lines]


def test_roofline_axes_labels_and_title():
    res = roofline_result()
    fig = plot.roofline(SPEC, points=res, measured=res)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "FLOP/byte" in ax.get_xlabel() and "TFLOP/s" in ax.get_ylabel()
    assert "Test CPU" in ax.get_title() and "(measured on CPU)" in ax.get_title()
    words = " ".join(texts(fig))
    assert "spec sheet (NVIDIA A100 40GB)" in words and "measured roof" in words
    assert "FP16 / BF16 tensor 312 TFLOP/s" in words        # equal ceilings share one label
    assert "ridge 13 FLOP/byte" in words                     # 19.5 TFLOP/s / 1.5 TB/s (He 2022)
    assert "triad 11.4 MiB" in words and "matmul n=512" in words
    styles = {line.get_linestyle() for line in ax.lines}
    assert "-" in styles and "--" in styles                  # spec solid, measured dashed


def test_roofline_points_sit_at_their_intensity_and_rate():
    res = roofline_result()
    fig = plot.roofline(SPEC, points=res)
    unit, scale = plot.flops_unit(312e12)
    markers = [line for line in fig.axes[0].lines if line.get_marker() not in ("None", None, "")]
    xy = sorted(tuple(m.get_xydata()[0]) for m in markers)
    want = sorted((r["flops"] / r["nbytes"], r["flops"] / r["seconds"] / scale)
                  for r in res.records if r["flops"])         # the copy has no FLOPs: skipped
    assert [v for p in xy for v in p] == pytest.approx([v for p in want for v in p])


def test_roofline_reference_style():
    ref = roofline_result(device=GPU, reference=True)
    fig = plot.roofline(SPEC, points=ref, measured=ref)
    words = texts(fig)
    assert any("(reference)" in w for w in words)
    assert "reference run, 2026-01-02" in fig.axes[0].get_title()
    hollow = [line for line in fig.axes[0].lines if line.get_marker() not in ("None", None, "")]
    assert hollow and all(line.get_markerfacecolor() == "none" for line in hollow)


def test_roofline_json_round_trip_replots_identically(tmp_path):
    res = roofline_result()
    back = Result.load(res.to_json(str(tmp_path / "r.json")))
    a = plot.roofline(SPEC, points=res, measured=res)
    b = plot.roofline(SPEC, points=back, measured=back)
    assert line_data(a) == line_data(b) and texts(a) == texts(b)


def test_roofline_bad_input():
    with pytest.raises(TypeError, match="roof"):
        plot.roofline("A100")
    with pytest.raises(ValueError, match="needs a roof"):
        plot.roofline(None)
    with pytest.raises(ValueError, match="seconds"):
        plot.roofline(SPEC, points=[{"flops": 1.0, "nbytes": 2.0}])


def markers(fig):
    return [line for ax in fig.axes for line in ax.lines if line.get_marker() not in ("None", None, "")]


@pytest.mark.parametrize("empty", [[], (), Result("measure_roofline", [], {})])
def test_roofline_without_points_draws_the_roofs(empty):
    fig = plot.roofline(SPEC, points=empty)
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].lines and not markers(fig)


@pytest.mark.parametrize("field, value", [
    ("flops", float("nan")), ("nbytes", float("nan")), ("seconds", float("nan")),
    ("flops", float("inf")), ("seconds", float("inf")), ("nbytes", 0.0), ("seconds", 0.0),
    ("nbytes", -4e6), ("seconds", -1e-3), ("flops", -2e6), ("seconds", None),
])
def test_roofline_refuses_points_it_cannot_place(field, value):
    """NaN, infinite, zero or negative intensity or rate: an error naming points and the record."""
    good = {"label": "fine", "flops": 2e6, "nbytes": 12e6, "seconds": 1e-3}
    bad = {**good, "label": "broken", field: value}
    with pytest.raises(ValueError, match=r"points: record 1 \(broken\) has intensity .* finite and > 0"):
        plot.roofline(SPEC, points=[good, bad])


def test_roofline_names_the_bad_result_and_reference():
    res, broken = roofline_result(), roofline_result()
    broken.records[1]["seconds"] = float("nan")
    with pytest.raises(ValueError, match=r"points: record 1 of result 1 \(triad\)"):
        plot.roofline(SPEC, points=[res, broken])
    with pytest.raises(ValueError, match=r"reference: record 1 \(triad\)"):
        plot.roofline(SPEC, reference=[broken])
    with pytest.raises(TypeError, match="points: expected a brrr.Result"):
        plot.roofline(SPEC, points="triad")


def test_repeat_sweep_panels_and_knees(tmp_path):
    res = repeat_result()
    fig = plot.repeat_sweep(res)
    panels = [ax for ax in fig.axes if ax.axison]   # the fourth cell of the grid holds the legend
    assert len(panels) == 3
    for ax in panels:
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        xs = [line.get_xdata()[0] for line in ax.lines if len(line.get_xdata()) == 2
              and line.get_xdata()[0] == line.get_xdata()[1]]
        assert 21.0 in xs and 16.0 in xs     # the multiplication roof's knee (ridge 5.25 x 4) and the measured one
    assert "GB/s" in fig.axes[2].get_ylabel() and "FLOP/s" in fig.axes[1].get_ylabel()
    assert "(measured on CPU)" in fig._suptitle.get_text()
    labels = [t.get_text() for t in fig.axes[3].get_legend().get_texts()]
    assert labels[:2] == ["fused", "eager"] and any("knee, multiplication roof (21)" in t for t in labels)
    assert "multiplication roof, half the FP32 peak (52.5 GFLOP/s)" in [" ".join(t.split()) for t in labels]
    back = Result.load(res.to_json(str(tmp_path / "p.json")))
    assert line_data(plot.repeat_sweep(back)) == line_data(fig)


def test_bandwidth_vs_size_marks_caches_and_peak():
    recs = [{"working_set": ws, "nbytes": ws, "seconds": ws / 30e9, "gbps": 30.0} for ws in
            (4096, 65536, 2 ** 20, 2 ** 26)]
    res = Result("bandwidth_vs_size", recs, {"device": CPU, "caches": {"L1d": 32768, "L2": 2 ** 19,
                                                                       "L3": 2 ** 25}})
    fig = plot.bandwidth_vs_size(res)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and "GB/s" in ax.get_ylabel() and "bytes" in ax.get_xlabel()
    words = texts(fig)
    assert {"L1d 32 KiB", "L2 512 KiB", "L3 32 MiB"} <= set(words)
    assert any("DRAM peak, measured (20 GB/s)" in w for w in words)
    fig.canvas.draw()
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert "1 MiB" in ticks and "4 KiB" in ticks


def test_matmul_vs_size_peak_line():
    recs = [{"n": n, "dtype": "float32", "flops": 2 * n ** 3, "seconds": 2 * n ** 3 / 5e10,
             "peak_flops": 1e11} for n in (64, 128, 256)]
    res = Result("matmul_vs_size", recs, {"device": CPU})
    fig = plot.matmul_vs_size(res)
    ax = fig.axes[0]
    assert "GFLOP/s" in ax.get_ylabel() and ax.get_xscale() == "log" and ax.get_yscale() == "log"
    horizontal = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert horizontal and horizontal[0].get_ydata()[0] == pytest.approx(100.0)
    frac = plot.matmul_vs_size(res, fraction=True)
    data = frac.axes[0].lines[0].get_ydata()
    assert list(data) == pytest.approx([0.5, 0.5, 0.5])


def test_sweep_generic_and_bad_columns():
    recs = [{"size": s, "seconds": s * 1e-9, "library": lib} for s in (10, 100, 1000) for lib in ("a", "b")]
    fig = plot.sweep(recs, "size", "seconds", hue="library")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]
    assert ax.get_xscale() == "log" and "time" in ax.get_ylabel()
    fig2 = plot.sweep(recs, "size", "seconds", logx=False, logy=False, xlabel="X", ylabel="Y")
    assert fig2.axes[0].get_xscale() == "linear" and fig2.axes[0].get_xlabel() == "X"
    with pytest.raises(ValueError, match="not a column"):
        plot.sweep(recs, "size", "gbps")
    with pytest.raises(TypeError, match="Result"):
        plot.sweep(42, "size", "seconds")


def test_units():
    assert plot.flops_unit(2e12) == ("TFLOP/s", 1e12) and plot.flops_unit(5e9) == ("GFLOP/s", 1e9)
    assert plot.format_bytes(1536) == "1.5 KiB" and plot.format_bytes(2 ** 30) == "1 GiB"
    assert plot.format_rate(1.5e12, "B/s") == "1.5 TB/s"
    assert plot.format_rate(900e9, "B/s") == "900 GB/s"


def test_explorer_static_and_interactive():
    from brrr import widgets
    fig = widgets.roofline_explorer(static=True, intensity=0.25)
    assert isinstance(fig, matplotlib.figure.Figure)
    assert any("memory-bound" in t for t in texts(fig))
    line = widgets.explain(SPEC, intensity=100.0, nbytes=1e9)
    assert line.startswith("compute-bound") and "above the ridge" in line
    box = widgets._interactive(SPEC, 1.0, 1e9)
    assert len(box.children) == 6                                # 4 sliders, readout, figure
    box.children[0].value = 0.01                                 # move the intensity slider
    assert "memory-bound" in box.children[4].value
    with pytest.raises(TypeError, match="roof"):
        widgets.roofline_explorer(roof="A100", static=True)
    with pytest.raises(ValueError, match="intensity"):
        widgets.roofline_explorer(intensity=-1, static=True)


def test_explorer_shows_as_a_widget_under_ipywidgets_7_and_8():
    """Colab ships ipywidgets 7.7.1, whose widgets have no _repr_mimebundle_ (8 has one)."""
    from brrr import widgets

    class Widget7:                                  # what ipywidgets 7 offers: a model id, no bundle
        _model_id = "abc123"

        def __repr__(self):
            return "VBox(...)"

    bundle = widgets._widget_bundle(Widget7())
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == "abc123"
    assert bundle["text/plain"] == "VBox(...)"
    explorer = widgets.roofline_explorer(SPEC, static=False)  # the installed ipywidgets (8 here)
    shown = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in shown and "image/png" in shown
    plt.close("all")


def tensor_core_result(device=GPU, reference=False):
    recs = [{"n": n, "dtype": dtype, "tensor_cores": True, "gflops": g * n / 4096, "peak_flops": peak,
             "flops": 2.0 * n ** 3, "seconds": 2.0 * n ** 3 / (g * n / 4096 * 1e9)}
            for dtype, g, peak in (("float32", 100e3, 156e12), ("float16", 200e3, 312e12), ("bfloat16", 190e3, 312e12))
            for n in (1024, 2048, 4096)]
    meta = {"device": device, "date": "2026-01-02T00:00:00"}
    if reference:
        meta["reference"] = True
    return Result("matmul_tensor_cores", recs, meta)


def test_matmul_tensor_cores_lines_peaks_and_reference():
    fig = plot.matmul_tensor_cores(tensor_core_result(), reference=[tensor_core_result(reference=True)])
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sum("this run" in s for s in labels) == 3 and sum("reference" in s for s in labels) == 3
    # One dotted peak per value: TF32 alone, FP16 and BF16 together; the reference's same peaks not repeated.
    peaks = [s for s in labels if "peak" in s]
    assert len(peaks) == 2 and any("FP16 and BF16 peak, spec (312 TFLOP/s)" in s for s in peaks)
    assert ax.get_xscale() == "log" and "TFLOP/s" in ax.get_ylabel()


def test_matmul_tensor_cores_without_a_live_run():
    assert plot.matmul_tensor_cores(None, reference=[]) is None
    fig = plot.matmul_tensor_cores(None, reference=[tensor_core_result(reference=True)])
    assert "reference run" in fig.axes[0].get_title()


def test_sweep_mfu_axis_in_percent():
    frame = [{"batch": b, "mfu": m} for b, m in ((1, 0.001), (64, 0.1), (1024, 0.5))]
    fig = plot.sweep(frame, "batch", "mfu")
    ax = fig.axes[0]
    fig.canvas.draw()
    assert "%" in ax.get_ylabel() and any(t.get_text().endswith("%") for t in ax.get_yticklabels())


def test_coinciding_kinds_of_tensor_core_math_stay_told_apart():
    lines = [line for line in plot.matmul_tensor_cores(tensor_core_result()).axes[0].get_lines() if len(line.get_xdata()) > 2]
    assert len({(line.get_linestyle(), line.get_marker()) for line in lines}) == len(lines) == 3


def mfu_result(device=GPU, reference=False):
    recs = [{"batch": b, "mfu": m, "flops": 2.0 * b * 1024 ** 2, "roofline_seconds": 2.0 * b * 1024 ** 2 / 19.5e12 / r,
             "peak_flops": 19.5e12} for b, m, r in ((1, 1e-3, 0.03), (64, 0.03, 1.0), (4096, 0.6, 1.0), (16384, 0.7, 1.0))]
    return Result("mfu_vs_batch", recs, {"device": device, "date": "2026-01-02T00:00:00", "reference": reference})


def test_mfu_vs_batch_draws_the_mfu_the_roofline_allows_and_names_its_peak():
    fig = plot.mfu_vs_batch(mfu_result(), reference=[mfu_result(reference=True)])
    ax = fig.axes[0]
    fig.canvas.draw()
    allowed = [line for line in ax.get_lines() if line.get_linestyle() == ":"]
    assert len(allowed) == 2 and list(allowed[0].get_ydata()) == [0.03, 1.0, 1.0, 1.0]
    assert "FP32 peak (spec sheet, 19.5 TFLOP/s)" in ax.get_ylabel()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "64", "4,096", "16,384"]
    assert "100%" in [t.get_text() for t in ax.get_yticklabels()]
    assert plot.mfu_vs_batch(None) is None


def test_elementwise_vs_matmul_names_a_chain_without_fma_and_prints_no_exponents():
    recs = [{"kind": "elementwise x * 2", "gflops": 514.0}, {"kind": "elementwise fused FMA chain", "gflops": 28.4e3},
            {"kind": "matmul FP32", "gflops": 51.3e3}, {"kind": "matmul FP16 tensor cores", "gflops": 739e3}]
    fig = plot.elementwise_vs_matmul(Result("elementwise_vs_matmul", recs, {"device": GPU}))
    ax = fig.axes[0]
    assert "elementwise multiply-then-add chain (no FMA)" in [t.get_text() for t in ax.get_yticklabels()]
    assert [t.get_text() for t in ax.texts] == ["0.514", "28.4", "51.3", "739"] and "TFLOP/s" in ax.get_xlabel()
    fused = [{**r, "fma": True} for r in recs]
    ax = plot.elementwise_vs_matmul(Result("elementwise_vs_matmul", fused, {"device": GPU})).axes[0]
    assert "elementwise fused FMA chain" in [t.get_text() for t in ax.get_yticklabels()]


def test_explorer_names_where_a_cpus_roof_comes_from(monkeypatch):
    from brrr import widgets
    dev = brrr.device()
    roof = brrr.Roofline.from_device(dev)
    legend = " ".join(texts(widgets.roofline_explorer(roof, static=True, device=dev)))
    if not dev.on_gpu:
        assert "measured once, cached" in legend and "spec sheet" not in legend
    assert "MFLOP" in widgets.explain(roof, 0.125, 2 ** 28)   # 33.6 MFLOPs, not 3.36e+07
    seen = []
    monkeypatch.setattr(widgets, "roofline_figure", lambda r, *a, device=None, **k: seen.append((r.name, device))
                        or matplotlib.figure.Figure())
    box = widgets._interactive(roof, 1.0, 1e9, device=dev)
    box.children[1].value = roof.peak_flops * 4                  # the sliders' roof is no device's
    assert seen[-1] == (widgets.SLIDERS_ROOF, None)
