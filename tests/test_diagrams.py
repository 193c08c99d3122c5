"""The explanatory diagrams: each is a Figure with its labelled parts, numbers only from its inputs."""
import sys
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import brrr  # noqa: E402
from brrr.plot import diagrams  # noqa: E402

ROOF = brrr.Roofline(peak_flops=19.5e12, peak_bandwidth=1.5e12, name="Test GPU")


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _texts(fig) -> str:
    """Every string drawn on the figure (texts, annotations, titles, tick labels), lower case."""
    fig.canvas.draw()
    out = [t.get_text() for t in fig.findobj(matplotlib.text.Text)]
    return "\n".join(out).lower()


def _inside(fig):
    """No drawn text sticks out of the figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    texts = [t for ax in fig.axes for t in ax.texts + [ax.title]] + list(fig.texts)
    extents = [(repr(t.get_text()), t.get_window_extent(renderer)) for t in texts if t.get_text().strip()]
    extents += [(f"axes {i} with its tick labels", ax.get_tightbbox(renderer)) for i, ax in enumerate(fig.axes)
                if ax.axison]
    for name, ext in extents:
        assert ext.x0 >= box.x0 - 1 and ext.x1 <= box.x1 + 1 and ext.y0 >= box.y0 - 1 and ext.y1 <= box.y1 + 1, \
            f"{name} leaves the figure"


GPU = SimpleNamespace(name="Test GPU", backend="cuda", l2_bytes=50 * 2 ** 20, spec=SimpleNamespace(bandwidth=3.35e12))


@pytest.mark.parametrize("draw, words", [
    (diagrams.factory_warehouse, ["factory", "warehouse", "bandwidth", "compute", "memory"]),
    (diagrams.memory_hierarchy, ["registers", "l2", "dram", "faster", "slower"]),
    (lambda: diagrams.roofline_anatomy(ROOF), ["ridge", "memory-bound", "compute-bound", "compute roof",
                                                "memory roof"]),
    (diagrams.fusion_dataflow, ["unfused", "fused", "op1", "op2", "2·n·s", "4·n·s"]),
    (diagrams.async_timeline, ["cpu", "gpu", "synchronize", "idle"]),
    (diagrams.profiler_trace, ["matmul", "add", "relu", "gaps = overhead"]),
])
def test_each_diagram_is_a_labelled_figure_inside_its_edges(draw, words):
    fig = draw()
    assert isinstance(fig, Figure)
    text = _texts(fig)
    for word in words:
        assert word in text, f"{word!r} not on the diagram"
    _inside(fig)


def test_roofline_anatomy_draws_the_roof_it_is_given():
    fig = diagrams.roofline_anatomy(ROOF)
    ax = fig.axes[0]
    ridge = [line for line in ax.get_lines() if line.get_label() == "ridge"]
    assert len(ridge) == 1
    x, y = ridge[0].get_xdata()[0], ridge[0].get_ydata()[0]
    assert x == pytest.approx(ROOF.ridge) and y == pytest.approx(19.5)   # TFLOP/s on the axis
    text = _texts(fig)
    assert "13 flop/byte" in text and "19.5 tflop/s" in text and "1.5 tb/s" in text and "test gpu" in text


@pytest.mark.parametrize("roof", [brrr.Roofline(peak_flops=1e11, peak_bandwidth=2e10),
                                  brrr.Roofline(peak_flops=990e12, peak_bandwidth=3.35e12)])
def test_roofline_anatomy_fits_any_ridge(roof):
    fig = diagrams.roofline_anatomy(roof)
    assert "ridge" in _texts(fig)
    _inside(fig)


def test_memory_hierarchy_reads_sizes_from_the_device():
    assert "mib" not in _texts(diagrams.memory_hierarchy())   # qualitative without a device
    text = _texts(diagrams.memory_hierarchy(GPU))
    assert "l2 cache: 50 mib" in text and "3.35 tb/s" in text
    text = _texts(diagrams.memory_hierarchy(SimpleNamespace(name="GPU", backend="cuda", l2_bytes=6 * 2 ** 20,
                                                            spec=None)))
    assert "l2 cache: 6 mib" in text and "tb/s" not in text


def test_memory_hierarchy_on_a_cpu_lists_its_caches(monkeypatch):
    caches = {"L1d": 48 * 1024, "L2": 2 * 2 ** 20, "L3": 96 * 2 ** 20}
    monkeypatch.setattr(sys.modules["brrr.device"], "cpu_caches", lambda: caches)
    cpu = SimpleNamespace(name="CPU", backend="cpu", l2_bytes=96 * 2 ** 20, spec=None)
    text = _texts(diagrams.memory_hierarchy(cpu))
    for label in ("l1d cache: 48 kib", "l2 cache: 2 mib", "l3 cache: 96 mib", "dram"):
        assert label in text


@pytest.mark.parametrize("n_ops", [1, 3])
def test_fusion_dataflow_counts_bytes_for_any_chain(n_ops):
    fig = diagrams.fusion_dataflow(n_ops)
    text = _texts(fig)
    assert f"op{n_ops}" in text and f"op{n_ops + 1}" not in text
    if n_ops > 1:
        assert f"{2 * n_ops}·n·s" in text
    _inside(fig)
    with pytest.raises(ValueError):
        diagrams.fusion_dataflow(0)


def test_diagrams_are_exported():
    assert brrr.plot.diagrams is diagrams
