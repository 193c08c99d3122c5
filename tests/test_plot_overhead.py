"""brrr.plot's chapter-3 figures: what they draw for live and reference runs (hand-made data)."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from brrr import plot  # noqa: E402
from brrr.experiments import overhead as ov  # noqa: E402
from brrr.results import Result  # noqa: E402

CPU = {"name": "Some CPU", "backend": "cpu"}
GPU = {"name": "Some GPU", "backend": "cuda"}


def sweep(device, libs, reference=False):
    recs = [{"library": lib, "backend": backend, "op": "add", "dtype": "float32", "size": n,
             "seconds": t0 + 1e-9 * n} for lib, backend, t0 in libs for n in (2 ** k for k in range(0, 20, 2))]
    return Result("time_vs_size", recs, {"device": device, "date": "2026-12-01", "reference": reference})


def test_time_vs_size_draws_fits_and_references():
    live = sweep(CPU, [("numpy", "cpu", 1e-6), ("torch", "cpu", 2e-6)])
    ref = sweep(GPU, [("torch", "cuda", 5e-6), ("cupy", "cuda", 7e-6)], reference=True)
    fig = plot.time_vs_size(live, ov.fit_overheads(live), reference=[ref])
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert "numpy on CPU (Some CPU, this run)" in labels
    assert "cupy on GPU (Some GPU, reference 2026-12-01)" in labels
    assert sum("fixed cost" in label for label in labels) == 2
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert len(plot.time_vs_size(live).axes[0].get_lines()) == 2   # no fits: just the curves


def test_reduce_overhead_without_gpu():
    empty = Result("reduce_overhead_demo", [], {"device": CPU, "n_ops": 20, "size": 1024})
    fig = plot.reduce_overhead(empty)
    assert "Nothing to draw" in fig.axes[0].texts[0].get_text()
    assert "not measured on Some CPU" in fig.axes[0].get_title()
    ref = Result("reduce_overhead_demo", [{"variant": v, "seconds": s, "n_ops": 20, "size": 1024}
                                          for v, s in (("eager", 1e-4), ("CUDA graph", 3e-5))],
                 {"device": GPU, "date": "2026-12-01", "reference": True, "n_ops": 20, "size": 1024})
    fig = plot.reduce_overhead(empty, reference=[ref])
    assert len(fig.axes[0].patches) == 2 and "reference run" in fig.axes[0].get_title()


def test_python_ops_and_batch():
    py = Result("python_ops_per_second", [{"op": "integer add (a + b)", "ops_per_second": 3e7}], {"device": CPU})
    fig = plot.python_ops_per_second(py)
    assert fig.axes[0].patches[0].get_width() == pytest.approx(30)
    recs = [{"size": 2 ** k, "seconds": 1e-4 + 1e-7 * 2 ** k} for k in range(12)]
    fig = plot.double_the_batch(Result("double_the_batch", recs, {"device": CPU}))
    assert len(fig.axes) == 2
    assert fig.axes[1].get_lines()[0].get_ydata()[-1] == pytest.approx(recs[-1]["seconds"] / recs[-1]["size"])


def test_time_vs_size_legend_rounds_the_crossover_as_the_table_does():
    """A2:C4: the legend gives the fitted crossover to three significant digits, as the table and the
    text do (3,754.2 -> 3,750), and names no size where the fit has none."""
    live = sweep(CPU, [("numpy", "cpu", 1e-6)])
    fit = dict(ov.fit_overheads(live)["numpy"], crossover=3754.2)
    labels = [line.get_label() for line in plot.time_vs_size(live, {"numpy": fit}).axes[0].get_lines()]
    assert any("work = fixed cost at 3,750 elements" in label for label in labels), labels
    assert not any("3,754" in label for label in labels)
    assert f"{ov.fit_table({'numpy': fit})['work = fixed cost at (elements)'].iloc[0]:,.0f}" == "3,750"
    fit = dict(fit, crossover=float("inf"))
    labels = [line.get_label() for line in plot.time_vs_size(live, {"numpy": fit}).axes[0].get_lines()]
    assert any("no size where work = fixed cost" in label for label in labels)


def test_time_vs_size_rings_a_larger_call_that_undercut_the_fixed_cost():
    """M3-2: where a call at a larger size took less than the fixed cost (beyond SAME), the figure says so."""
    live = sweep(CPU, [("numpy", "cpu", 1e-6)])
    assert not any("less than its fixed cost" in line.get_label()
                   for line in plot.time_vs_size(live, ov.fit_overheads(live)).axes[0].get_lines())
    next(r for r in live.records if r["size"] == 2 ** 12)["seconds"] = 0.5e-6
    labels = [line.get_label() for line in plot.time_vs_size(live, ov.fit_overheads(live)).axes[0].get_lines()]
    assert any("at 4,096 elements, less than its fixed cost" in label for label in labels), labels
