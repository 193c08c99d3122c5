"""Chapter 6 (brrr.prose.networks): which claims each generated cell makes, with which numbers, for given
records; and the chapter's static text: every number a Markdown cell quotes of the paper's tables is
recomputed here from brrr.intensity*, so a count that changes fails a test instead of a page going stale."""
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from brrr import intensity, intensity_energy as energy, intensity_tables as tables, models
from brrr.claims import Bound, Compare, Missing, Noisy, Regime, Share, quantity
from brrr.intensity_paper import PAPER_RANGES_AS_PRINTED, PAPER_TABLE_VIII, TABLE_VIII_COLUMNS, disparity
from brrr.prose import networks
from brrr.results import Result
from brrr.roofline import Roofline, worked_roofs
from brrr.specs import GPU_SPECS

NOTEBOOK = Path(__file__).resolve().parents[1] / "chapters" / "06_intensity_of_networks.ipynb"
CELLS = {c["id"]: "".join(c["source"]) for c in json.loads(NOTEBOOK.read_text())["cells"]}
NUMBER = re.compile(r"(?<![\w.×/^{−-])[−-]?\d[\d,]*(?:\.\d+)?(?:/\d+)?(?![\w×/])")
NOT_QUOTED = re.compile(r"\$[^$]*\$|\b(?:Tables?|Eq\.|Sec\.|Fig\.|Chapter) [\dIVX]+")


def quoted(cell: str) -> list:
    """The numbers the static cell ``cell`` quotes, as printed (no % sign), outside math and references."""
    return NUMBER.findall(NOT_QUOTED.sub(" ", CELLS[cell]))


def n(value) -> str:
    return quantity(value, "")


def pct(fraction) -> str:
    return quantity(fraction, "%")[:-1]


@pytest.fixture(scope="module")
def t8():
    return intensity.compare_with_paper()


@pytest.fixture(scope="module")
def vgg():
    with torch.device("meta"):
        net = models.vgg16()
    return [intensity.model_intensity(net, (1, 3, 224, 224), convention=c) for c in ("blobs", "layer")]


def test_table_iii_and_vgg16_as_the_static_text_says(vgg):
    kinds, t3 = intensity.convolution_table(normalize=False), intensity.table_iii_beside_paper()
    pairs = [c[:-len(" (brrr)")] for c in t3.columns if c.endswith(" (brrr)")]
    agree = sum(math.isclose(r[f"{c} (brrr)"], r[f"{c} (paper)"]) for _, r in t3.iterrows() for c in pairs)
    std, dw = kinds.loc["standard"], kinds.loc["depthwise"]
    assert agree == len(pairs) * len(t3) and kinds["weight_reuse"].nunique() == 1
    assert std.macs == 256 * dw.macs and std.activation_reuse == 256 * dw.activation_reuse
    assert quoted("static-table-iii") == [str(agree), "1/256", "1/256", n(dw.arithmetic_intensity),
                                          n(std.arithmetic_intensity), n(std.weight_reuse)]
    b, l = vgg
    paper = dict(zip(TABLE_VIII_COLUMNS, PAPER_TABLE_VIII["VGG-16"]))
    assert round(b.ai_c) == paper["ai_c"] and round(b.di) == paper["di"]
    bound, half = (b.weight_reuse + b.activation_reuse) / 4, intensity.data_type_aware_intensity(
        b.macs, b.weights, b.activations, 0.5)
    assert half == pytest.approx(bound / 2) and half < b.ai_c
    assert quoted("static-vgg16") == [n(b.ai_c), n(b.di), n(paper["ai_c"]), n(paper["di"]), n(l.activations / b.activations),
                                      n(l.ai_c), n(l.di), n(bound), n(half), n(b.ai_c)]


def test_table_viii_reuse_and_ai_c_against_di_as_the_static_text_says(t8):
    worst = intensity.largest_differences(t8)["largest difference (%)"]
    groups = [sorted(worst.index[(worst > lo) & (worst <= hi)]) for lo, hi in ((-1, 0), (0, 3), (3, 10), (10, 1e9))]
    assert groups == [["VGG-16"], sorted(["NiN", "ResNet-50", "MobileNet-V1", "SqueezeNet-V1.0", "SqueezeNet-V1.1"]),
                      ["AlexNet"], ["MobileNet-V2"]]
    a, m, r = t8.loc["AlexNet"], t8.loc["MobileNet-V2"], t8.loc["ResNet-50"]
    ai, di, df = (TABLE_VIII_COLUMNS.index(c) for c in ("ai_c", "di", "d_f"))
    assert all(abs(disparity(v[ai], v[di]) - v[df]) <= 0.5 for v in PAPER_TABLE_VIII.values())
    paper = PAPER_TABLE_VIII["AlexNet"]
    assert quoted("static-table-viii") == [
        str(len(t8)), "3", "10", pct(worst["AlexNet"] / 100), n(a.a_over_w), n(a["a_over_w (paper)"]), n(r.macs / 1e9),
        n(m.macs / 1e6), n(m.weights / 1e6), n(m["weight_reuse (paper)"]),
        n(m["weight_reuse (paper)"] * m.weights / 1e6),
        pct(worst["MobileNet-V2"] / 100), str(t8.loc["SqueezeNet-V1.0", "input_size"]),
        str(t8.loc["SqueezeNet-V1.1", "input_size"]), str(len(PAPER_TABLE_VIII)), n(paper[ai]), n(paper[di]),
        f"{disparity(paper[ai], paper[di]):.1f}".replace("-", "−"), f"{paper[df]:.0f}".replace("-", "−")]
    order = t8.sort_values("activation_reuse", ascending=False)
    assert list(order.index) == list(t8.sort_values("activation_reuse (paper)", ascending=False).index)
    top, low = order.iloc[:2], order.iloc[::-1].iloc[:3]
    assert list(top.index) == ["VGG-16", "AlexNet"] and list(low.index) == ["MobileNet-V2", "MobileNet-V1",
                                                                             "SqueezeNet-V1.1"]
    assert quoted("static-reuse") == [x for _, v in top.iterrows() for x in (n(v.activation_reuse), n(v.a_over_w))] + [
        n(v.activation_reuse) for _, v in low.iterrows()]
    above = [k for k, v in t8.iterrows() if v.di > v.ai_c]
    mb = t8.loc["MobileNet-V1"]
    assert above == ["AlexNet", "VGG-16"] and a.di > mb.di
    # DI read as a count of elements moved: more than ResNet-50's footprint, fewer than AlexNet's weights
    assert r.macs / r.di > r.weights + r.activations and a.macs / a.di < a.weights
    assert quoted("static-aic-vs-di") == [
        str(len(t8) - len(above)), n(a.a_over_w), n(a.ai_c), pct(1 - a.ai_c / a.weight_reuse), n(a.weight_reuse),
        n(mb.ai_c), quantity(mb.ai_c / a.ai_c, "x").split()[0], n(a.di), n(mb.di), n(r.macs / r.di / 1e6),
        n((r.weights + r.activations) / 1e6), n(a.macs / a.di / 1e6), n(a.weights / 1e6)]


def test_added_networks_ranges_and_table_v_as_the_static_text_says(vgg):
    t = tables.added_networks()
    res, dense = t.loc[["ResNext50-32x4d", "ResNext101-32x4d"]], t.loc[["DenseNet-121", "DenseNet-169"]]
    assert set(res["column"]) | set(dense["column"]) == {"weight_reuse"}

    def each(rows, f):
        return [f(v) for _, v in rows.iterrows()]

    def off(v):
        return pct(v["largest difference (%)"] / 100)
    assert quoted("static-added-networks") == (
        each(t.loc[["ResNet-101", "ResNet-152"]], off) + each(res, off)
        + each(res, lambda v: pct(v["implied weights"] / v.weights)) + each(res, lambda v: n(v.weights / 1e6))
        + each(res, lambda v: pct(v["implied macs"] / v.macs)) + each(res, lambda v: n(v.macs / 1e9))
        + each(dense, off) + [pct(dense.iloc[0]["implied macs"] / dense.iloc[0].macs)]
        + each(dense, lambda v: pct(v["implied weights"] / v.weights)) + each(dense, lambda v: n(v.weights / 1e6)))
    assert all(pct(v["implied macs"] / v.macs) == "100" for _, v in dense.iterrows())
    printed, b = PAPER_RANGES_AS_PRINTED, vgg[0]
    assert quoted("static-ranges") == [n(printed["weights_millions"][0]), n(printed["weights_millions"][1]),
                                       n(printed["macs_millions"][0]), n(printed["macs_millions"][1]),
                                       n(b.weights / 1e6), n(b.macs / 1e6)]
    assert n(b.weights / 1e6) == n(printed["macs_millions"][1]) and n(b.macs / 1e6) == n(printed["weights_millions"][1])
    t5, io = tables.table_v_beside_paper(), tables.table_v_beside_paper("input+output")
    worst = t5[["median difference (%)", "variance difference (%)"]].abs().max(axis=1)
    match = list(worst.index[worst <= 1])
    assert match == ["AlexNet", "VGG-16", "NiN", "MobileNet-V1"] and 1 < worst["SqueezeNet-V1.0"] <= 5
    assert worst["MobileNet-V2"] > 5
    high = t5.loc[["AlexNet", "VGG-16", "NiN", "SqueezeNet-V1.0"], "median"]
    assert high.idxmax() == "VGG-16" and high.idxmin() == "NiN"
    lower = pct((io["median"] / t5["median"]).median())
    assert quoted("static-table-v") == [str(len(match)), str(len(t5)), "1", "5", lower]


def test_tables_iv_and_ix_and_the_layers_as_the_static_text_says():
    iv, calls = energy.table_iv_view(), energy.fig3_calls()
    cmr = list(iv["CMR recomputed (FLOP/byte)"])
    assert all(abs(a - b) <= 0.005 for a, b in zip(cmr, iv["CMR (paper, FLOP/byte)"]))
    assert (calls["paper's call"] == calls["read against CMR"]).all()
    moved = calls[calls["paper's call"] != calls["in consistent units"]]
    assert sorted(set(moved["network"])) == ["DenseNet-121", "DenseNet-169", "MobileNet-V1"]
    assert set(moved["metric"]) == {"ai_c"}
    assert set(calls["network"]) - set(moved["network"]) == {"AlexNet", "XceptionNet"}
    assert quoted("static-table-iv") == [f"{c:.2f}" for c in cmr] + [n(2 * c) for c in cmr]
    ix, eq6 = energy.table_ix_recomputed(), energy.eq6_recomputed()
    assert all(abs(ix[c] - ix[f"{c} (paper)"]).max() <= 0.011 for c in ("L", "U"))
    assert eq6["minimum"] == eq6["minimum (paper)"] and abs(eq6["window_at_25"] - eq6["window_at_25 (paper)"]) < 1e-3
    di99 = ix[(ix["metric"] == "DI") & (ix["confidence (%)"] == 99)]
    weakest = di99.loc[di99["L"].idxmin()]
    assert weakest["GPU"] == "P100"
    assert quoted("static-table-ix") == ["25", str(2 * len(ix)), "0.01", "95", f"{eq6['phi_bound']:.2f}",
                                         str(eq6["minimum"]), "25", n(eq6["window_at_25"]), "99", f"{weakest['L']:.2f}",
                                         "25"]
    layers = intensity.network_layers(("vgg16", "mobilenet_v2"))
    h100, fc = GPU_SPECS["H100-SXM"], [x for t in layers.values() for x in t.loc[t["kind"] == "fc", "intensity"]]
    top = max(GPU_SPECS.values(), key=lambda s: s.fp32 / s.bandwidth)
    assert max(fc) < min(s.fp32 / s.bandwidth for s in GPU_SPECS.values())
    pw, std = (layers[k].loc[layers[k]["kind"] == kind, "intensity"] for k, kind in (("MobileNet-V2", "pointwise"),
                                                                                    ("VGG-16", "standard")))
    ridge, high = h100.fp32 / h100.bandwidth, top.fp32 / top.bandwidth
    assert top.name == "NVIDIA L40S"
    assert quoted("static-layers") == [n(max(fc)), n(ridge), str((pw < ridge).sum()), str(len(pw)),
                                       str((std < high).sum()), str(len(std)), n(high)]


# --- the generated cells' claims ------------------------------------------------------------------

ROOF = Roofline(peak_flops=1e13, peak_bandwidth=1e12, name="test")
DEV = SimpleNamespace(peak_flops=lambda dtype: 1e13, peak_bandwidth=1e12, name="test GPU", l2_bytes=2 ** 25,
                      on_gpu=True)


def _run(records, **meta) -> Result:
    return Result(name="test", records=records, meta={"roof": ROOF.to_dict(), "device": {"name": "test GPU",
                                                                                          "backend": "cuda"}, **meta})


def _conv(kind, seconds, iqr=None):
    flops, nbytes = networks.counted(kind, 256, 28, 1 if kind == "pointwise" else 3)
    return {"kind": kind, "flops": flops, "nbytes": nbytes, "seconds": seconds, "iqr_seconds": iqr}


def test_the_convolutions_claims_take_their_numbers_and_call_cost_from_the_record():
    recs = [_conv("standard", 2e-4, 1e-6), _conv("pointwise", 1e-7, 5e-8), _conv("depthwise", 1e-5, 1e-6)]
    claims = networks.conv_claims(_run(recs, call_seconds=5e-6))
    std, dw, cmp, above, noisy = claims
    assert isinstance(std, Regime) and std.seconds == 2e-4 and std.call_cost == 5e-6 and std.flops == recs[0]["flops"]
    assert dw.outcome == "overhead-bound"   # 10 µs, within twice the 5 µs call, which beats its bytes' 1.5 µs
    assert isinstance(cmp, Compare) and cmp.ratio == pytest.approx(1e-5 / 2e-4)
    assert isinstance(above, Bound) and above.subject == "the pointwise convolution" and above.outcome == "above"
    assert isinstance(noisy, Noisy) and noisy.subject == "the pointwise convolution" and noisy.outcome == "noisy"
    *_, lacks = networks.conv_claims(_run([dict(r, iqr_seconds=None) for r in recs]))    # an older record
    assert isinstance(lacks, Missing) and lacks.record == "iqr_seconds"
    pair, bound, split = networks.separable_claims(_run(recs))
    assert pair.value == pytest.approx(1e-5 + 1e-7) and pair.base == 2e-4
    assert split.parts == {"the depthwise half": 1e-5, "the pointwise half": 1e-7} and bound.measured == pair.value
    for c in claims + [pair, bound, split]:
        c.check()


def test_the_networks_claims_name_the_nearest_and_farthest_network_and_its_calls():
    def net(name, seconds, weights, ops=None):
        return {"network": name, "flops": 2e10, "weights": weights, "nbytes": 8 * weights, "seconds": seconds,
                "iqr_seconds": seconds / 100, "operators": ops}
    recs = [net("A", 4e-3, 1e9, 100), net("B", 3e-3, 1e6, 100), net("C", 1e-1, 1e6, 300)]   # 100%, 67%, 2%
    near, far, calls, noisy = networks.network_claims(_run(recs, call_seconds=1e-5))
    assert (near.subject, far.subject) == ("A", "C") and near.nbytes == 4e9 and near.seconds == 4e-3
    assert calls.base == pytest.approx(100 * 1e-5) and calls.value == 4e-3
    assert noisy.outcome == "steady" and noisy.subject == "A"   # the widest spread of the three, 1% of its median
    assert len(networks.network_claims(_run(recs))) == 3   # no call cost recorded: no comparison with it
    kinds = _run([{"network": "M", "kind": k, "flops": f, "seconds": s, "nbytes": 1e6, "roofline_seconds": 1e-6}
                  for k, f, s in (("pointwise", 8e8, 2e-3), ("depthwise", 1e8, 1e-3), ("no MACs", 0.0, 3e-3))])
    time, flops, none = networks.kind_claims(kinds)
    assert time.parts == {"the layers that do no MACs": 3e-3, "the pointwise convolutions": 2e-3} and time.whole == 6e-3
    assert flops.parts == {"the pointwise convolutions": 8e8, "the depthwise convolutions": 1e8}
    assert none.measured == 3e-3 and none.allowed == 1e-6
    for c in (near, far, calls, time, flops, none):
        c.check()


def test_the_layers_and_the_worked_answers_come_from_the_counts_and_both_roofs():
    layers = {"N": intensity.roofline_points(torch.nn.Sequential(torch.nn.Conv2d(8, 8, 1), torch.nn.Conv2d(8, 8, 3)),
                                             (1, 8, 16, 16))}
    value, left, pointwise = networks.layer_claims(layers, ROOF)
    assert value.value == ROOF.ridge and pointwise.whole == (layers["N"]["kind"] == "pointwise").sum()
    assert left.parts == {"left of it, memory-bound by the model": int((layers["N"]["intensity"] < 10).sum())}
    here, ref = worked_roofs(DEV)
    said = networks.ridge_answer(2048, DEV)
    assert said.facts["batch"] == networks.ridge_rows(2048, 10) == math.ceil(20 * 2048 / (2048 - 40))
    assert said.facts["reference_batch"] == networks.ridge_rows(2048, ref.ridge)
    peaks, bandwidths = (c for c in said.claims if isinstance(c, Compare))
    assert (peaks.value, peaks.base) == (ref.peak_flops, 1e13)
    assert (bandwidths.value, bandwidths.base) == (ref.peak_bandwidth, 1e12)
    (f, b), (f_less, b_less) = (networks.linear(said.facts["batch"] - k, 2048) for k in (0, 1))
    assert f / b >= 10 > f_less / b_less   # the fewest rows at the ridge
    with pytest.raises(ValueError, match="too small"):
        networks.ridge_answer(32, DEV)
    conv, sep = networks.conv_answer(256, 28, 3, DEV), networks.separable_answer(256, 28, 3, DEV)
    regimes = [c for c in conv.claims if isinstance(c, Regime)]
    assert [r.roof.name for r in regimes] == [here.name, ref.name] * 2
    assert [(r.flops, r.nbytes) for r in regimes[::2]] == [networks.counted(k, 256, 28, 3)
                                                           for k in ("standard", "depthwise")]
    split = next(c for c in sep.claims if isinstance(c, Share))
    assert sum(split.parts.values()) == pytest.approx(split.whole)
    timing = SimpleNamespace(median=1e-5, iqr=1e-7)
    bound, noisy = networks.ridge_claims(timing, 4, 2048, DEV)
    assert bound.allowed == pytest.approx(float(here.time(*networks.linear(4, 2048)))) and noisy.outcome == "steady"
    for c in conv.claims + sep.claims + said.claims + [value, left, pointwise, bound, noisy]:
        c.check()
