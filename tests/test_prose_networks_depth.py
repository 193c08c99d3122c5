"""Chapter 6's added sentences (brrr.prose.networks_predict, _tables, _energy): every wording
branch on small synthetic inputs, and the text on the live counts and one live measurement."""
import math

import pytest

pd = pytest.importorskip("pandas")
torch = pytest.importorskip("torch")

from brrr import intensity_energy as energy, intensity_predict as ip, intensity_tables as tables  # noqa: E402
from brrr.prose import networks as prose  # noqa: E402
from brrr.prose import networks_predict as npred  # noqa: E402
from brrr.results import Result  # noqa: E402
from brrr.roofline import Roofline  # noqa: E402

ROOF = Roofline(peak_flops=1e11, peak_bandwidth=1e10, name="test roof")
CPU = {"name": "Test CPU", "backend": "cpu"}
GPU = {"name": "Test GPU", "backend": "cuda", "gpu_name": "Test GPU"}


def _nets(ratios, device=CPU, warnings=()):
    """A measure_networks-like Result: ratios = {network: (ai_c, di, conv_fc, all_layers)} as
    measured / predicted, with 1 second measured each."""
    rows = [{"network": n, "seconds": 1.0, "ai_c_seconds": 1 / a, "di_seconds": 1 / d,
             "conv_fc_seconds": 1 / c, "all_layers_seconds": 1 / e, "warnings": list(warnings)}
            for n, (a, d, c, e) in ratios.items()]
    return Result(name="network predictions", records=rows, meta={"device": device, "roof": ROOF.to_dict()})


# --- networks_predict.network_predictions ---------------------------------------------------

def test_lower_bound_and_all_layers_closest():
    p = prose.network_predictions(_nets({"A": (4, 4, 3, 1.5), "B": (2, 2, 1.8, 1.2)}))
    assert p.facts["outcome"] == "lower bound" and p.facts["closest"] == "all_layers_seconds"
    assert "lower bound" in p.text and "activations they move" not in p.text   # H200 review item 3
    assert "overhead" not in p.facts   # ratios this close to the roof call for no word on fixed costs
    assert "It missed A most" in p.text and "No reference GPU run" in p.text
    assert "noisy" not in p.text


def test_faster_than_predicted_on_cpu_and_gpu_and_other_closest():
    r = _nets({"A": (0.5, 0.6, 3, 4), "B": (1.1, 1.2, 5, 6)})
    p = prose.network_predictions(r)
    assert p.facts["outcome"] == "faster than predicted" and p.facts["faster_than_predicted"] == ["A"]
    assert "single NumPy copy" in p.text and p.facts["closest"] in ("ai_c_seconds", "di_seconds")
    assert "activations they move" not in p.text
    g = prose.network_predictions(_nets({"A": (0.5, 0.6, 3, 4)}, device=GPU))
    assert "stayed in cache" in g.text and "would allow it" in g.text


def test_noisy_timings_and_reference_runs():
    p = prose.network_predictions(_nets({"A": (2, 2, 2, 1.5)}, warnings=["noisy: samples spread"]))
    assert p.facts["noisy"] == ["A"] and "noisy" in p.text
    ref = _nets({"A": (3, 3, 3, 2)}, device=GPU)
    ref.meta["date"] = "2026-11-22"
    q = prose.network_predictions(_nets({"A": (2, 2, 2, 1.5)}), [ref])
    assert "On the reference Test GPU" in q.text and "No reference GPU run" not in q.text


def test_out_of_line_network_on_cpu_and_gpu():
    ratios = {"A": (3, 3, 2, 1.5), "B": (3, 3, 2, 1.6), "C": (3, 3, 2, 1.4), "D": (90, 90, 90, 80)}
    p = prose.network_predictions(_nets(ratios))
    assert p.facts["out_of_line"] == ["D"] and "worker threads" not in p.text and "Run the cell again" in p.text
    g = prose.network_predictions(_nets(ratios, device=GPU))
    assert "worker threads" not in g.text and "Run the cell again" in g.text
    assert prose.network_predictions(_nets({"A": (3, 3, 2, 1.5)})).facts["out_of_line"] == []


def test_overhead_words_with_and_without_operator_counts():
    """H200 review item 3: a median far above the roof says how to test the fixed cost per operator;
    with operator counts and a call cost, the book's rule names the overhead-bound networks."""
    far = _nets({"A": (50, 50, 40, 30), "B": (60, 60, 50, 40), "C": (3, 3, 2, 1.5)})
    p = prose.network_predictions(far)
    assert p.facts["overhead"] == "not measured" and "CUDA graphs" in p.text and "not as a test of" in p.text
    counted = _nets({"A": (50, 50, 40, 30), "B": (60, 60, 50, 40), "C": (3, 3, 2, 1.5)})
    for r, ops in zip(counted.records, (100, 200, 10)):
        r["operators"] = ops
    counted.meta["call_seconds"] = 1e-3     # A: 0.1 s fixed >= 1/30 s roof; C: 0.01 s < 1/1.5 s
    q = prose.network_predictions(counted)
    assert q.facts["overhead_bound"] == ["A", "B"] and "only C is not" in q.text
    over = ip.overhead_bound(counted)
    assert over["A"]["fixed_seconds"] == pytest.approx(0.1) and over["C"]["overhead_bound"] is False
    assert "not measured" not in str(q.facts)
    assert ip.overhead_bound(far) == {}


def test_median_helper():
    assert npred.statistics_median([3, 1, 2]) == 2 and npred.statistics_median([4, 1, 2, 3]) == 2.5


# --- bound_calls --------------------------------------------------------------------------------

def _b(ai, di, share, ai_roof=None, di_roof=None):
    out = {"ai_c": ai, "di": di, "share": share}
    if ai_roof is not None:
        out.update(ai_c_roof_share=ai_roof, di_roof_share=di_roof)
    return out


def test_bound_calls_every_branch():
    """H200 review item 4: a metric's call is borne out only near the roof it puts the network under."""
    agree = prose.bound_calls(None, {"A": _b("compute", "compute", 0.7), "B": _b("memory", "memory", 0.2)})
    assert agree.facts["outcome"] == "agree" and "B left of it" in agree.text
    right = prose.bound_calls(None, {"A": _b("compute", "compute", 0.7)})
    assert "compute-bound" in right.text and right.facts["both_memory"] == []
    neither = prose.bound_calls(None, {"AlexNet": _b("memory", "compute", 0.03, 0.08, 0.03),
                                       "ResNet": _b("compute", "memory", 0.02, 0.02, 0.023)})
    assert neither.facts["outcome"] == "neither" and "sides with neither" in neither.text
    assert "as DI's call suggests" not in neither.text and "2.3% of the memory roof DI puts it under" in neither.text
    ai = prose.bound_calls(None, {"AlexNet": _b("memory", "compute", 0.2, 0.9, 0.2)})
    assert ai.facts["outcome"] == "ai_c" and "sides with $AI_c$" in ai.text
    di = prose.bound_calls(None, {"X": _b("memory", "compute", 0.8, 0.8, 0.8), "Y": _b("compute", "memory", 0.2,
                                                                                      0.2, 0.7)})
    assert di.facts["X"] == "both" and di.facts["Y"] == "DI" and di.facts["outcome"] == "mixed"
    only_di = prose.bound_calls(None, {"Y": _b("compute", "memory", 0.2, 0.2, 0.7)})
    assert only_di.facts["outcome"] == "di" and "sides with DI" in only_di.text
    old = prose.bound_calls(None, {"Y": _b("compute", "memory", 0.2), "Z": _b("memory", "memory", 0.1)})
    assert old.facts["outcome"] == "neither" and "Both metrics put Z" in old.text   # records without roof shares


# --- throughput_correlation ------------------------------------------------------------------------

def _sweep(best_alpha):
    alphas = [round(0.05 * i, 2) for i in range(21)]
    return pd.DataFrame({"alpha": alphas, "r": [-abs(a - best_alpha) for a in alphas]})


def test_throughput_correlation_every_branch():
    base = {"n": 8, "ai_c_interval": (0.1, 0.9)}
    di = prose.throughput_correlation({**base, "ai_c": 0.3, "di": 0.8, "di_interval": (0.2, 0.95)}, _sweep(0.8))
    assert di.facts["outcome"] == "di" and "energy, not time" in di.text and "0.83" in di.text
    # a correlation with time is not set beside the paper's with energy as if it confirmed it
    assert "as it was for energy" not in di.text
    assert "tracks time better" not in di.text and di.facts["per_operator"] is None   # H200 review item 3
    ops = prose.throughput_correlation({**base, "ai_c": 0.3, "di": 0.8, "di_interval": (0.2, 0.95),
                                        "per_operator": 0.98}, _sweep(0.8))
    assert "r = 0.98, higher than either metric" in ops.text
    low = prose.throughput_correlation({**base, "ai_c": 0.3, "di": 0.8, "di_interval": (0.2, 0.95),
                                        "per_operator": 0.5}, _sweep(0.8))
    assert "r = 0.5." in low.text and "higher than either" not in low.text
    assert "includes zero" not in di.text and di.facts["best_alpha"] == pytest.approx(0.8)
    assert "activation reuse carries more" in di.text
    ai = prose.throughput_correlation({**base, "ai_c": 0.9, "di": 0.5, "di_interval": (-0.3, 0.9)}, _sweep(0.2))
    assert ai.facts["outcome"] == "ai_c" and "energy, not time" in ai.text and "includes zero" in ai.text
    assert "the reverse" not in ai.text
    # its interval includes zero, so the sweep's peak at 0.2 is only a lean (review B:M1)
    assert "leans towards weight reuse" in ai.text and "includes zero, that lean is no evidence" in ai.text
    assert "19" in ai.text and ai.facts["alpha_lean"] == "weight"
    assert "tracks throughput better than DI does at any" in ai.text   # r(AI_c) = 0.9 above the sweep's top
    same = prose.throughput_correlation({**base, "n": 3, "ai_c": 0.5, "di": 0.55,
                                         "di_interval": (math.nan, math.nan)}, _sweep(0.5))
    assert same.facts["outcome"] == "similar" and "Too few networks" in same.text and same.facts["interval"] is None
    assert "too few for a confidence interval, that lean" in same.text


def _curve(points):
    """A sweep over alpha 0, 0.05, ..., 1 with r given at some alphas and 0 elsewhere."""
    alphas = [round(0.05 * i, 2) for i in range(21)]
    return pd.DataFrame({"alpha": alphas, "r": [points.get(a, 0.0) for a in alphas]})


def test_alpha_sweep_words_for_a_sharp_a_flat_and_a_two_sided_top():
    corr = {"n": 30, "ai_c": 0.1, "di": 0.8, "ai_c_interval": (0.1, 0.9), "di_interval": (0.5, 0.9)}
    sharp = prose.throughput_correlation(corr, _sweep(0.3))
    assert "weight reuse carries more" in sharp.text and "stays within" not in sharp.text
    flat = prose.throughput_correlation(corr, _curve({0.6: 0.78, 0.65: 0.79, 0.7: 0.8, 0.75: 0.79, 0.8: 0.785,
                                                      0.85: 0.7, 0.95: 0.79}))
    assert "highest at $\\alpha$ = 0.7 (r = 0.8)" in flat.text
    assert "for every $\\alpha$ from 0.6 to 0.8" in flat.text       # 0.95 is not joined to the top
    assert "leans towards activation reuse; over 30 networks, with a top this flat" in flat.text
    assert flat.facts["alpha_lean"] == "activation" and "carries more" not in flat.text
    assert "better than DI does at any" not in flat.text        # r(AI_c) = 0.1, below the sweep's top
    both = prose.throughput_correlation(corr, _curve({0.4: 0.79, 0.45: 0.8, 0.5: 0.8, 0.55: 0.79}))
    assert both.facts["alpha_lean"] == "neither" and "does not say which reuse" in both.text
    assert "leans" not in both.text and "carries more" not in both.text


# --- layer_kinds ----------------------------------------------------------------------------------

def _kinds(rows):
    return Result(name="layer kinds", records=[dict(zip(("network", "kind", "flops", "seconds", "roofline_seconds"), r))
                                               for r in rows])


def test_layer_kinds_every_branch():
    p = prose.layer_kinds(_kinds([("M", "pointwise", 80, 4, 1), ("M", "depthwise", 10, 3, 0.3),
                                  ("M", "no MACs", 5, 3, 1)]))
    assert p.facts["M worst"] == "depthwise" and "lowest activation reuse" not in p.text   # Table III says it
    assert p.facts["M no-MAC share"] == pytest.approx(0.3)
    # H200 review item 3: never credited to the activation count, whatever the share
    assert "only the activation count" not in p.text and "paper's case" not in p.text
    q = prose.layer_kinds(_kinds([("R", "standard", 90, 9, 1), ("R", "fc", 9, 1, 0.5), ("R", "no MACs", 50, 0.5, 1)]))
    assert q.facts["R worst"] == "standard" and "lowest activation reuse" not in q.text
    assert "only the activation count" not in q.text and "against" in q.text
    assert "out of line" not in str(p.facts) and "wait for a core" not in p.text
    odd = prose.layer_kinds(_kinds([("M", "pointwise", 80, 4, 1), ("M", "depthwise", 10, 300, 0.3),
                                    ("M", "no MACs", 5, 3, 1)]))
    assert odd.facts["M out of line"] == "depthwise" and "profiling again" in odd.text
    gap = prose.layer_kinds(_kinds([("M", "pointwise", 80, 4, 1), ("M", "no MACs", 5, 30, 1)]))
    assert gap.facts["M no-MAC gap"] == pytest.approx(30) and "do not explain that time" in gap.text
    assert "no-MAC gap" not in str(p.facts) and "do not explain" not in p.text
    one = prose.layer_kinds(_kinds([("S", "standard", 1, 1, 0.5)]))
    assert "no MACs" not in one.text and "against" not in one.text


# --- networks_tables --------------------------------------------------------------------------------

def _table5(diffs, medians=None):
    names = ["AlexNet", "VGG-16", "NiN", "SqueezeNet-V1.0", "MobileNet-V1", "MobileNet-V2"]
    medians = medians or {"AlexNet": 150, "VGG-16": 560, "NiN": 117, "SqueezeNet-V1.0": 130,
                          "MobileNet-V1": 18, "MobileNet-V2": 37}
    return pd.DataFrame({"median": [medians[n] for n in names],
                         "median difference (%)": [diffs.get(n, 0.0) for n in names],
                         "variance difference (%)": [0.0] * len(names)}, index=names)


def test_table_v_every_branch():
    t = _table5({"SqueezeNet-V1.0": -4.0, "MobileNet-V2": 17.0})
    p = prose.table_v(t, t.assign(median=t["median"] * 0.7))
    assert p.facts["grades"]["AlexNet"] == "match" and p.facts["grades"]["SqueezeNet-V1.0"] == "close"
    assert "charges each layer for what it writes" in p.text and "70%" in p.text
    assert "MobileNet-V2 differs here" in p.text and "survives the recount" in p.text
    # review B:M6: the group is named, not left as "the four"
    assert "paper groups as having higher data reuse (AlexNet, VGG-16, NiN and SqueezeNet-V1.0)" in p.text
    bad = _table5({n: 20.0 for n in ("AlexNet", "VGG-16", "NiN", "SqueezeNet-V1.0")},
                  medians={"AlexNet": 600, "VGG-16": 100, "NiN": 117, "SqueezeNet-V1.0": 130,
                           "MobileNet-V1": 18, "MobileNet-V2": 37})
    q = prose.table_v(bad)
    assert "charges each layer" not in q.text and "needs restating" in q.text and "ifmap" not in q.text
    assert "among the four networks the paper groups as having higher data reuse (AlexNet" in q.text
    assert q.facts["highest"] == "AlexNet"
    small = prose.table_v(_table5({}).drop(["NiN", "VGG-16"]))
    assert "lowest" not in small.facts


def _added(rows):
    cols = ("largest difference (%)", "tolerance (%)", "column", "implied weights", "weights", "implied macs", "macs")
    return pd.DataFrame([dict(zip(cols, r[1:])) for r in rows], index=[r[0] for r in rows])


def test_added_networks_every_branch():
    t = _added([("ResNet-101", 0.0, 3, "weight_reuse", 1, 1, 1, 1),
                ("DenseNet-121", 8.0, 10, "weight_reuse", 7.3e6, 8e6, 2.8e9, 2.8e9),
                ("ResNext50-32x4d", 20.0, 15, "activation_reuse", 23e6, 25e6, 4.5e9, 4.2e9)])
    p = prose.added_networks(t)
    assert p.facts["within"] == ["ResNet-101", "DenseNet-121"] and p.facts["outside"] == ["ResNext50-32x4d"]
    assert "every column but $d_f$" in p.text and "implies 91%" in p.text and "in the weights" in p.text
    assert "does not." in p.text
    assert "(3% to 15%, set per network)" in p.text   # H200 review item 22: the tolerance is stated
    q = prose.added_networks(_added([("DenseNet-121", 8.0, 10, "weight_reuse", 7.3e6, 8e6, 3.2e9, 2.8e9)]))
    assert "in the weights" not in q.text and "do not" not in q.text


def test_ranges_both_branches():
    class Counted:
        def __init__(self, macs, weights):
            self.macs, self.weights = macs, weights
    assert prose.ranges(Counted(15_470e6, 138e6)).facts["swapped"]
    p = prose.ranges(Counted(1e9, 1e6))
    assert not p.facts["swapped"] and "neither end" in p.text


# --- networks_energy -----------------------------------------------------------------------------

def test_gpus_every_branch():
    view = energy.table_iv_view()
    calls = energy.fig3_calls()
    p = prose.gpus(view, calls)
    assert p.facts["outcome"] == "agrees" and p.facts["direct"] and "MobileNet-V1" in p.text
    assert "stand either way" in p.text
    wrong = view.copy()
    wrong.iloc[0, 5] = 30.0
    assert prose.gpus(wrong).facts["outcome"] == "differs"
    same = calls.assign(**{"in consistent units": calls["paper's call"]})
    assert "come out the same" in prose.gpus(view, same).text
    off = calls.copy()
    off.loc[0, "read against CMR"] = "compute"
    assert "Not every call" in prose.gpus(view, off).text


def test_statistics_every_branch():
    t9, eq6 = energy.table_ix_recomputed(), energy.eq6_recomputed()
    p = prose.statistics(t9, eq6)
    assert p.facts["off"] == [] and p.facts["eq6"] and "within 0.01" in p.text and "P100" in p.text
    bad = t9.copy()
    bad.loc[0, "L"] = bad.loc[0, "L (paper)"] + 0.1
    q = prose.statistics(bad, {**eq6, "minimum": 18})
    assert q.facts["off"] and "differ for" in q.text and "does not come out" in q.text


# --- live ------------------------------------------------------------------------------------------

def test_live_tables_read_soundly():
    t5 = tables.table_v_beside_paper()
    p = prose.table_v(t5)
    assert p.facts["grades"]["VGG-16"] == "match" and "survives the recount" in p.text
    a = prose.added_networks(tables.added_networks())
    assert a.facts["outside"] == []
    assert prose.gpus(energy.table_iv_view(), energy.fig3_calls()).facts["outcome"] == "agrees"


def test_live_measurement_reads_soundly():
    r = ip.measure_networks(["squeezenet1_1", "mobilenet_v2"], budget=0.02, progress=False)
    p = prose.network_predictions(r)
    ratios = [rec["seconds"] / rec[c] for rec in r.records for c in ip.PREDICTIONS]
    assert (p.facts["outcome"] == "lower bound") == all(x >= 1 / 1.05 for x in ratios)
    assert p.facts["closest"] in ip.PREDICTIONS and p.facts["worst"] in ("SqueezeNet-V1.1", "MobileNet-V2")
    assert f"It missed {p.facts['worst']} most" in p.text
    b = prose.bound_calls(r, ip.bounds(r))
    assert b.facts["outcome"] in ("agree", "ai_c", "di", "mixed")
