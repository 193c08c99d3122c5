"""Chapter 6's sentences on measured network timings, on every shipped record set that has them
(H200 review items 3 and 4): a metric's call is said to be borne out only where the network came
near the roof that metric puts it under, and the activation count is never credited with time the
roofline cannot account for."""
import pytest

pytest.importorskip("pandas")
torch = pytest.importorskip("torch")

from brrr import intensity_predict as ip  # noqa: E402
from brrr.prose import networks as prose  # noqa: E402
from brrr.prose import networks_predict as npred  # noqa: E402
from record_sets import close_to, sets_with  # noqa: E402


@pytest.mark.parametrize("runs", sets_with("network_predictions"))
def test_bound_calls_side_only_near_a_roof(runs):
    nets = runs["network_predictions"]
    b = ip.bounds(nets)
    p = prose.bound_calls(nets, b)
    for n, x in b.items():
        if x["ai_c"] == x["di"]:
            continue
        near = {m: x[f"{m}_roof_share"] >= npred.NEAR_ROOF for m in ("ai_c", "di")}
        side = p.facts[n]
        assert side == ("both" if all(near.values()) else "DI" if near["di"] else
                        "$AI_c$" if near["ai_c"] else "neither"), n
        assert close_to(100 * x["di_roof_share"], p.text, 0.06)
    assert "as DI's call suggests" not in p.text


@pytest.mark.parametrize("runs", sets_with("network_predictions"))
def test_network_predictions_do_not_credit_activations(runs):
    nets = runs["network_predictions"]
    p = prose.network_predictions(nets)
    assert "Charging the layers that do no MACs" not in p.text
    ratios = [r["seconds"] / r["all_layers_seconds"] for r in nets.records]
    over = ip.overhead_bound(nets)
    if not over:
        med = sorted(ratios)[len(ratios) // 2] if len(ratios) % 2 else None
        if med is not None and med <= npred.OUT_OF_LINE:
            assert "CUDA graphs" not in p.text
    else:
        assert p.facts["overhead_bound"] == sorted(n for n, o in over.items() if o["overhead_bound"])


@pytest.mark.parametrize("runs", sets_with("network_predictions"))
def test_throughput_correlation_makes_no_tracking_claim(runs):
    nets = runs["network_predictions"]
    p = prose.throughput_correlation(ip.correlations(nets), ip.alpha_sweep(nets))
    assert "tracks time better" not in p.text


def test_count_operators_counts_dispatched_aten_ops():
    lin = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    x = torch.randn(2, 4)
    with torch.no_grad():
        n = ip.count_operators(lambda: lin(x))
    assert 2 <= n <= 4   # addmm (with its transpose view, on some versions) and relu


def test_reuse_does_not_credit_weights_with_activation_reuse():
    """H200 review item 10: M_c/A does not depend on W."""
    from brrr import intensity
    text = str(prose.reuse(intensity.compare_with_paper()))
    assert "because most of their data are weights" not in text
    assert "sit highest" in text


@pytest.mark.parametrize("runs", sets_with("network_predictions"))
def test_cache_resident_networks_are_named(runs):
    """H200 review item 14: the networks bench found cache-resident are named, and only those."""
    nets = runs["network_predictions"]
    p = prose.network_predictions(nets)
    flagged = [r["network"] for r in nets.records if any(str(x).startswith("cache-resident") for x in r["warnings"])]
    assert p.facts["cache_resident"] == flagged
    assert ("cache-resident" in p.text) == bool(flagged)
