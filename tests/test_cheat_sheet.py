"""The cheat sheet appendix: its ridge table is computed from the spec table, its flowchart names
the three regimes, and its Markdown reads the same in the book and on Colab with links that resolve."""
import dataclasses
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import brrr  # noqa: E402
from brrr.device import Device  # noqa: E402
from brrr.plot import flowchart  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "cheat_sheet.ipynb"
NB = nbformat.read(str(PAGE), as_version=4)
MARKDOWN = "\n".join(c.source for c in NB.cells if c.cell_type == "markdown")
H100 = Device(name="NVIDIA H100 80GB HBM3", backend="cuda", array_library="cupy", l2_bytes=50 * 2 ** 20,
              spec=brrr.specs.GPU_SPECS["H100-SXM"])


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _ridge_table(dev) -> pd.DataFrame:
    """The table the page draws, with ``dev`` as the live device (the page calls exactly this)."""
    assert any("brrr.specs.ridge_points(device=dev)" in c.source for c in NB.cells if c.cell_type == "code")
    return brrr.specs.ridge_points(device=dev)


def _spec_rows(table):
    """The table's rows that come from the spec table, as {GPU name: row}."""
    return {row["GPU"]: row for _, row in table.iterrows() if not row["GPU"].startswith("this page")}


# --- the ridge table -----------------------------------------------------------------------

def test_every_row_is_its_spec_entry_and_every_ridge_is_flops_over_bandwidth():
    table = _ridge_table(H100)
    specs = {s.name: s for s in brrr.specs.GPU_SPECS.values()}
    rows = _spec_rows(table)
    assert len(rows) >= 5, "the cheat sheet shows a handful of common GPUs"
    for name, row in rows.items():
        spec = specs[name]
        assert row["FP32 TFLOP/s"] * 1e12 == pytest.approx(spec.fp32)
        assert row["FP16 tensor TFLOP/s"] * 1e12 == pytest.approx(spec.fp16_tensor)
        assert row["DRAM GB/s"] * 1e9 == pytest.approx(spec.bandwidth)
        assert row["ridge FP32"] == pytest.approx(spec.fp32 / spec.bandwidth)
        assert row["ridge FP16 tensor"] == pytest.approx(spec.fp16_tensor / spec.bandwidth)
        assert spec.source.startswith(row["source"]) and row["source"], "the source column is the spec's"
    for _, row in table.iterrows():   # the columns agree with each other, the live row included
        assert row["ridge FP32"] == pytest.approx(row["FP32 TFLOP/s"] * 1e12 / (row["DRAM GB/s"] * 1e9))


def test_changing_a_spec_changes_its_row(monkeypatch):
    before = _spec_rows(_ridge_table(H100))["NVIDIA H100 SXM"]
    spec = brrr.specs.GPU_SPECS["H100-SXM"]
    monkeypatch.setitem(brrr.specs.GPU_SPECS, "H100-SXM",
                        dataclasses.replace(spec, bandwidth=2 * spec.bandwidth, fp32=3 * spec.fp32))
    after = _spec_rows(_ridge_table(H100))["NVIDIA H100 SXM"]
    assert after["DRAM GB/s"] == pytest.approx(2 * before["DRAM GB/s"])
    assert after["ridge FP32"] == pytest.approx(1.5 * before["ridge FP32"])
    assert after["ridge FP16 tensor"] == pytest.approx(0.5 * before["ridge FP16 tensor"])


def test_the_last_row_is_the_live_device():
    live = _ridge_table(H100).iloc[-1]
    assert live["GPU"] == "this page: NVIDIA H100 80GB HBM3"
    assert live["ridge FP32"] == pytest.approx(H100.ridge)
    assert live["ridge FP16 tensor"] == pytest.approx(H100.peak_flops("float16", True) / H100.peak_bandwidth)
    assert live["source"] == H100.source


def test_the_page_names_the_first_column_device_not_gpu():   # review B:C10: its last row may be a CPU
    cell = next(c for c in NB.cells if c.cell_type == "code" and "ridge_points(" in c.source)
    assert '.rename(columns={"GPU": "device"})' in cell.source


def test_a_device_without_tensor_cores_gets_no_tensor_ridge():
    t4 = Device(name="Tesla T4", backend="cuda", array_library="cupy", l2_bytes=4 * 2 ** 20,
                spec=dataclasses.replace(brrr.specs.GPU_SPECS["T4"], fp16_tensor=None))
    live = _ridge_table(t4).iloc[-1]
    assert pd.isna(live["FP16 tensor TFLOP/s"]) and pd.isna(live["ridge FP16 tensor"])
    assert live["ridge FP32"] == pytest.approx(t4.ridge)


# --- the flowchart -------------------------------------------------------------------------

def _texts(fig) -> str:
    fig.canvas.draw()
    return "\n".join(t.get_text() for t in fig.findobj(matplotlib.text.Text)).lower()


def test_flowchart_labels_the_three_regimes_and_both_questions():
    fig = flowchart.regime_flowchart()
    assert isinstance(fig, Figure)
    text = _texts(fig)
    for regime in flowchart.REGIMES:
        assert regime in text
    assert "double the batch" in text and "ridge" in text
    for remedy in ("cuda graphs", "fuse", "tensor cores", "lower precision", "recompute"):
        assert remedy in text
    assert "flop/byte" not in text, "without a ridge passed in, no number is drawn"
    # review B:M4: the "barely changes" branch warns about calls that read their weights once per batch
    assert "barely changes*" in text and "memory-bound on its weights" in text
    assert "memory-bound on its weights" in flowchart.ALT_TEXT
    fig.canvas.draw()
    renderer, box = fig.canvas.get_renderer(), fig.bbox
    for t in fig.axes[0].texts:
        ext = t.get_window_extent(renderer)
        assert box.x0 - 1 <= ext.x0 and ext.x1 <= box.x1 + 1 and box.y0 - 1 <= ext.y0 and ext.y1 <= box.y1 + 1, \
            f"{t.get_text()!r} leaves the figure"


def test_flowchart_writes_the_ridge_it_is_given():
    assert "12.3 flop/byte" in _texts(flowchart.regime_flowchart(ridge=12.3))
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(ValueError):
            flowchart.regime_flowchart(ridge=bad)


def test_the_page_shows_the_flowchart_as_a_numbered_figure_with_alt_text_naming_the_regimes():
    cell = next(c for c in NB.cells if c.cell_type == "code" and "regime_flowchart(" in c.source)
    figure = cell.metadata["mystnb"]["figure"]
    assert figure["name"].startswith("fig-") and figure["caption"].strip()
    alt = cell.metadata["image"]["alt"]
    assert alt == flowchart.ALT_TEXT
    for regime in flowchart.REGIMES:
        assert regime in alt
    assert f"(#{figure['name']})" in MARKDOWN, "the text refers to the figure"


# --- the page ------------------------------------------------------------------------------

def test_no_myst_roles_in_markdown():
    for role in ("{glue", "{cite", "{doc}", "{ref}", "{numref}"):
        assert role not in MARKDOWN


def test_links_point_to_files_that_exist():
    targets = re.findall(r"\]\(([^)#\s]+\.(?:ipynb|md))\)", MARKDOWN)
    assert any(t.startswith("../chapters/") for t in targets)
    for target in targets:
        assert (PAGE.parent / target).resolve().is_file(), f"{target} does not exist"
    chapters = {t for t in targets if t.startswith("../chapters/")}
    assert len(chapters) >= 6, f"the formulas link to the chapters that derive them: {sorted(chapters)}"
    assert "notation.md" in targets and "device_table.ipynb" in targets


def test_committed_without_outputs():
    for cell in NB.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None
