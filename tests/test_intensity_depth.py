"""More of the DI paper (Jha, Mittal & Avancha, 2020): its other tables as data and recomputed,
the six networks added to brrr.models against their rows of Table VIII, and the predictions
of brrr.intensity_predict against measured time (shape and arithmetic; no timing thresholds)."""
import math

import pytest

torch = pytest.importorskip("torch")
pd = pytest.importorskip("pandas")

from brrr import intensity, intensity_energy as energy, intensity_predict as ip, intensity_tables as tables  # noqa: E402
from brrr import models  # noqa: E402
from brrr.intensity_paper import (PAPER_FIG3_CALLS, PAPER_NAMES_ADDED, PAPER_RANGES_AS_PRINTED,  # noqa: E402
                                  PAPER_TABLE_IV, PAPER_TABLE_VIII)
from brrr.results import Result  # noqa: E402
from brrr.roofline import Roofline  # noqa: E402


# --- the paper's energy side: Eq. 1, Eq. 2, Table IV, Table IX, Eq. 6 ---------------------------

def test_energy_metrics_follow_eq1_and_eq2():
    assert energy.energy_per_pixel(100.0, 0.02, 224 * 224) == pytest.approx(2.0 / (224 * 224))
    assert energy.energy_efficiency(4, 1e9, 100.0, 0.02) == pytest.approx(4e9 / 2.0)
    for bad in (0, -1.0, float("nan"), True, "1"):
        with pytest.raises(ValueError, match="positive finite"):
            energy.energy_per_pixel(bad, 1.0, 1)


def test_table_iv_cmr_is_peak_over_bandwidth():
    view = energy.table_iv_view()
    assert list(view["GPU"]) == list(PAPER_TABLE_IV)
    assert (view["CMR recomputed (FLOP/byte)"] - view["CMR (paper, FLOP/byte)"]).abs().max() < 0.005


def test_fisher_interval_is_the_papers_recipe_and_checks_its_arguments():
    lo, hi = energy.fisher_interval(0.52, 25)
    half = 1.96 / math.sqrt(22)
    assert lo == pytest.approx(math.tanh(math.atanh(0.52) - half))
    assert hi == pytest.approx(math.tanh(math.atanh(0.52) + half))
    assert energy.fisher_interval(0.0, 28) == pytest.approx((-math.tanh(0.392), math.tanh(0.392)))
    with pytest.raises(ValueError, match="strictly between"):
        energy.fisher_interval(1.0, 25)
    with pytest.raises(ValueError, match="at least 4"):
        energy.fisher_interval(0.5, 3)
    assert energy.z_window(25) == pytest.approx(2 * 1.96 / math.sqrt(22))


def test_table_ix_and_eq6_recomputed_from_table_vi():
    t = energy.table_ix_recomputed()
    assert len(t) == 8
    # the paper's r is printed to two decimals, so a limit may land one unit of the last digit away
    assert (t["L"] - t["L (paper)"]).abs().max() <= 0.0100001
    assert (t["U"] - t["U (paper)"]).abs().max() <= 0.0100001
    eq6 = energy.eq6_recomputed()
    assert eq6["minimum"] == eq6["minimum (paper)"] == 19
    assert eq6["phi_bound"] == pytest.approx(eq6["phi_bound (paper)"], abs=0.005)
    assert eq6["window_at_25"] == pytest.approx(eq6["window_at_25 (paper)"], abs=0.0005)


def test_fig3_calls_need_the_unit_slip():
    calls = energy.fig3_calls()
    assert (calls["paper's call"] == calls["read against CMR"]).all()
    moved = calls[calls["paper's call"] != calls["in consistent units"]]
    assert "MobileNet-V1" in set(moved["network"]) and "AlexNet" not in set(moved["network"])
    assert set(calls["metric"]) == set(PAPER_FIG3_CALLS)
    assert calls["ridge in MACs per element"].max() == pytest.approx(2 * PAPER_TABLE_IV["P4000"]["cmr"])


# --- Table V and the added networks ------------------------------------------------------------

@pytest.fixture(scope="module")
def table5():
    return tables.table_v_beside_paper(), tables.table_v_beside_paper("input+output")


def test_table_v_is_reproduced_with_output_only_activations(table5):
    out, io = table5
    for name in ("AlexNet", "VGG-16", "NiN", "MobileNet-V1"):
        assert abs(out.loc[name, "median difference (%)"]) < 1
        assert abs(out.loc[name, "variance difference (%)"]) < 1
    # SqueezeNet-V1.0: the variance matches, the median is a few per cent off (not explained)
    assert abs(out.loc["SqueezeNet-V1.0", "variance difference (%)"]) < 1
    assert abs(out.loc["SqueezeNet-V1.0", "median difference (%)"]) < 5
    # MobileNet-V2: the paper's network differs (as in Table VIII)
    assert abs(out.loc["MobileNet-V2", "median difference (%)"]) > 10
    # Table II's ifmap + ofmap does not reproduce it
    assert io.loc["VGG-16", "median difference (%)"] < -20


def test_layer_intensities_counts_each_conv_and_fc_layer():
    with torch.device("meta"):
        net = models.vgg16()
    ai = tables.layer_intensities(net, (1, 3, 224, 224))
    assert len(ai) == 16
    first = 3 * 64 * 9 * 224 * 224 / (3 * 64 * 9 + 64 + 64 * 224 * 224)   # weights + bias + ofmap
    assert ai.iloc[0] == pytest.approx(first)
    with pytest.raises(ValueError, match="activations must be one of"):
        tables.layer_intensities(net, (1, 3, 224, 224), "ifmap")


@pytest.fixture(scope="module")
def added():
    return tables.added_networks()


def test_added_networks_agree_with_table_viii_within_stated_tolerance(added):
    assert set(added.index) == set(PAPER_NAMES_ADDED.values())
    for name, row in added.iterrows():
        assert row["largest difference (%)"] <= tables.TOLERANCE[name][0], (name, row["known"])
    for name in ("ResNet-101", "ResNet-152"):
        assert added.loc[name, "largest difference (%)"] <= 3


def test_densenet_difference_is_in_the_weights(added):
    for name in ("DenseNet-121", "DenseNet-169"):
        row = added.loc[name]
        assert abs(row["activation_reuse"] - row["activation_reuse (paper)"]) <= 0.5 + 0.02 * row["activation_reuse (paper)"]
        assert 0.85 < row["implied weights"] / row["weights"] < 0.95
        assert abs(row["implied macs"] / row["macs"] - 1) < 0.02


def test_compare_with_paper_takes_added_names_and_refuses_others():
    t = intensity.compare_with_paper(["resnet101"])
    assert list(t.index) == ["ResNet-101"]
    with pytest.raises(ValueError, match="names must be networks"):
        intensity.compare_with_paper(["resnet18"])


def test_the_introductions_ranges_are_swapped():
    with torch.device("meta"):
        vgg = intensity.model_intensity(models.vgg16(), (1, 3, 224, 224))
    assert vgg.weights / 1e6 == pytest.approx(PAPER_RANGES_AS_PRINTED["macs_millions"][1], rel=0.01)
    assert vgg.macs / 1e6 == pytest.approx(PAPER_RANGES_AS_PRINTED["weights_millions"][1], rel=0.01)
    assert "VGG-16" in PAPER_TABLE_VIII


# --- predictions ------------------------------------------------------------------------------

ROOF = Roofline(peak_flops=1e11, peak_bandwidth=1e10, name="test roof")


def test_predict_is_the_roofline_of_the_counts():
    layers = pd.DataFrame({"macs": [0, 100, 0], "weights": [0, 10, 0], "in_elements": [0, 20, 30],
                           "out_elements": [1000, 30, 30], "blobs": [1, 1, 1],
                           "category": ["input", "product", "blob"]})
    p = ip.predict(layers, macs=100, weights=10, activations=60, roof=ROOF)
    assert p["compute_seconds"] == pytest.approx(200 / 1e11)
    assert p["ai_c_seconds"] == pytest.approx(max(200 / 1e11, 4 * 70 / 1e10))
    assert "di_seconds" not in p   # H200 review C6-2: DI is no count of bytes, so no time is made of it
    assert p["conv_fc_seconds"] == pytest.approx(4 * 60 / 1e10)
    assert p["all_layers_seconds"] == pytest.approx(4 * 60 / 1e10 + 4 * 60 / 1e10)


def test_kind_of_profiled_operators():
    assert ip._kind_of("convolution", [(1, 32, 8, 8), (32, 1, 3, 3)]) == "depthwise"
    assert ip._kind_of("convolution", [(1, 32, 8, 8), (64, 32, 1, 1)]) == "pointwise"
    assert ip._kind_of("convolution", [(1, 32, 8, 8), (64, 32, 3, 3)]) == "standard"
    assert ip._kind_of("convolution", [(1, 32, 8, 8), (64, 8, 3, 3)]) == "group"
    assert ip._kind_of("addmm", [(1000,), (1, 1280), (1280, 1000)]) == "fc"
    assert ip._kind_of("native_batch_norm", [(1, 32, 8, 8)]) == "no MACs"
    table = pd.DataFrame({"op": ["convolution", "addmm", "relu_"],
                          "input_shapes": [[(1, 32, 8, 8), (32, 1, 3, 3)], [(10,), (1, 4), (4, 10)], [(1, 4)]],
                          "calls": [1, 1, 2], "flops": [10, 20, 0], "nbytes": [4, 8, 16],
                          "seconds": [1.0, 2.0, 3.0], "roofline_seconds": [0.5, 0.5, 0.5]})
    rows = {r["kind"]: r for r in ip.kinds_table(table)}
    assert set(rows) == {"depthwise", "fc", "no MACs"} and rows["no MACs"]["operators"] == 2


def _result(rows):
    return Result(name="network predictions", records=rows, meta={"roof": ROOF.to_dict(),
                                                                  "device": {"name": "test", "backend": "cpu"}})


def test_correlations_and_sweep_from_records():
    rows = [{"network": f"n{i}", "macs": 1e9, "weights": w_, "activations": a, "ai_c": 1e9 / (w_ + a),
             "di": 0.25 * (0.8 * 1e9 / a + 0.2 * 1e9 / w_), "achieved_flops": f}
            for i, (w_, a, f) in enumerate([(1e7, 1e7, 5e10), (1e6, 5e7, 2e10), (5e7, 1e6, 3e10),
                                            (2e7, 2e7, 4e10), (1e6, 1e6, 9e10)])]
    r = _result(rows)
    corr = ip.correlations(r)
    assert corr["n"] == 5 and -1 <= corr["ai_c"] <= 1 and len(corr["di_interval"]) == 2
    sweep = ip.alpha_sweep(r)
    assert list(sweep["alpha"])[:2] == [0.0, 0.05] and len(sweep) == 21
    assert sweep.loc[sweep["alpha"] == 0.8, "r"].iloc[0] == pytest.approx(corr["di"])
    assert "per_operator" not in corr   # records without operator counts
    for row, ops in zip(rows, (10, 20, 30, 40, 50)):
        row["operators"] = ops
    assert -1 <= ip.correlations(_result(rows))["per_operator"] <= 1


def test_measure_networks_records_and_refuses_unknown_names():
    with pytest.raises(ValueError, match="names must be networks"):
        ip.measure_networks(["resnet9000"])
    r = ip.measure_networks(["squeezenet1_1"], budget=0.01, progress=False)
    rec = r.records[0]
    assert rec["network"] == "SqueezeNet-V1.1" and rec["seconds"] > 0 and "roof" in r.meta
    # H200 review item 3: the operators each forward pass dispatches, and the fixed cost of a call
    assert rec["operators"] >= 26 and r.meta["call_seconds"] > 0   # 26 convolutions at least
    least = ip.least_seconds(rec, ROOF.from_dict(r.meta["roof"]))
    # the AI_c count holds every weight and more, and the least time is at least the arithmetic's
    assert rec["ai_c_seconds"] >= least * (1 - 1e-12) and least >= rec["compute_seconds"] * (1 - 1e-12)
    table = ip.prediction_table(r)
    assert table.loc[0, "measured / least time"] == pytest.approx(rec["seconds"] / least)
    assert ip.prediction_table(None) is None


def test_network_predictions_figure():
    from brrr.plot import network_predictions
    rows = [{"network": n, "ai_c": a, "di": d, "achieved_flops": f, "seconds": 1.0, "ai_c_seconds": 0.5,
             "conv_fc_seconds": 0.3, "all_layers_seconds": 0.6}
            for n, a, d, f in [("A", 10, 70, 4e10), ("B", 20, 12, 7e10)]]
    kinds = Result(name="layer kinds", records=[
        {"network": "B", "kind": "pointwise", "flops": 8.0, "seconds": 0.4, "roofline_seconds": 0.1},
        {"network": "B", "kind": "no MACs", "flops": 0.0, "seconds": 0.3, "roofline_seconds": 0.1}])
    fig = network_predictions(_result(rows), kinds)
    assert len(fig.axes) == 3
    fig = network_predictions(_result(rows), reference=[_result(rows)])
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="no records"):
        network_predictions(_result([]))
