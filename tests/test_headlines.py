"""The appendix's headline numbers (brrr.headlines): each read from its own set's records, and drawn one panel a
number."""
import math

import pytest

from brrr import headlines, plot, reference
from brrr.experiments import fit_overheads
from brrr.experiments.capstone import by_step, overall


@pytest.fixture(scope="module")
def sets():
    return reference.record_sets()


def test_each_headline_is_its_own_sets_record(sets):
    table = headlines.headline_table(sets).set_index("device")
    for runs in sets.values():
        row = table.loc[reference.set_device(runs)["name"]]
        roof = runs["measure_roofline"].records
        assert row["copy (GB/s)"] == max(r["gbps"] for r in roof if r["kind"] == "bandwidth" and r["op"] == "copy")
        low = [r["gflops"] for r in roof if r["kind"] == "compute" and r.get("tensor_cores")
               and r["dtype"] in ("float16", "bfloat16")]
        assert (math.isnan(row["16-bit matmul (TFLOP/s)"]) if not low else
                row["16-bit matmul (TFLOP/s)"] == pytest.approx(max(low) / 1e3))
        if "time_vs_size" in runs:
            assert row["fixed cost of a torch add"] == fit_overheads(runs["time_vs_size"])["torch"]["overhead"]
        if "capstone_steps" in runs:
            kept = by_step(runs["capstone_steps"])[overall(runs["capstone_steps"])["last"]]
            assert row["capstone (tokens/s)"] == kept["tokens_per_second"]
        else:
            assert math.isnan(row["capstone (tokens/s)"])


def test_gpus_come_first_and_each_number_gets_a_panel(sets):
    table = headlines.headline_table(sets)
    backends = [reference.set_device(sets[name])["backend"] for name in sets]
    assert list(table["device"])[:backends.count("cuda")] == sorted(
        reference.set_device(sets[n])["name"] for n in sets if reference.set_device(sets[n])["backend"] == "cuda")
    fig = plot.headlines(table)
    drawn = [ax for ax in fig.axes if ax.axison]
    assert len(drawn) == sum(table[c].notna().any() for c in headlines.HEADLINES)
    with pytest.raises(ValueError, match="no record set"):
        plot.headlines(table.iloc[0:0].assign())
