"""Chapter 1's claims (brrr.prose.compute): which claims each cell makes of a record, with numbers from the record,
on every shipped record set and on hand-made Results that force a case (a twin reference GPU, a chain of FMAs); no
phrases (the claims' tests own those). And the static spec-sheet text quotes the numbers the spec table gives."""
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from brrr import Result, claims
from brrr.prose import compute
from brrr.roofline import Roofline
from brrr.specs import GPU_SPECS, spec_table
from record_sets import sets_with

ROOT = Path(__file__).resolve().parents[1]
H200 = {"name": "GPU A", "backend": "cuda", "l2_bytes": 60 * 2 ** 20, "peak_bandwidth": 4.8e12,
        "peak_flops_float32": 67e12, "source": "a datasheet"}


def page(run):
    """A shipped record as the page's own run (the chapter replays it so)."""
    return Result(run.name, list(run.records), {**run.meta, "reference": False})


def said(out):
    """{name (else kind): claim} of ``say``'s output, each claim checked, each paragraph of MOST_SENTENCES at most
    (the first claim of a name wins: a reference run's come after the page's)."""
    assert out.text and all(c.check() is None for c in out.claims)
    assert all(len(re.findall(r"[.!?](?:\s|$)", p)) <= claims.MOST_SENTENCES for p in out.text.split("\n\n"))
    return {getattr(c, "name", "") or type(c).__name__: c for c in reversed(out.claims)}


@pytest.mark.parametrize("runs", sets_with("matmul_vs_size"))
def test_the_sweep_claims_its_shape_best_and_the_last_size_no_bound_explains(runs):
    run = page(runs["matmul_vs_size"])
    got = said(compute.matmul_sweep(run))
    recs = sorted(run.records, key=lambda r: r["n"])
    assert got["outcome"].xs == [r["n"] for r in recs] and got["best"].measured == max(r["gflops"] for r in recs) * 1e9
    roof = Roofline.from_summary(run.meta["device"])
    far = [r for r in recs if claims.Regime("", r["flops"], r["nbytes"], roof, seconds=r["seconds"]).outcome
           == claims.UNEXPLAINED_REGIME]
    chosen = far[-1] if far else recs[0]
    assert (got["regime"].flops, got["regime"].seconds) == (chosen["flops"], chosen["seconds"])
    assert got["regime"].call_cost is None          # chapter 1 measures no fixed cost of a call


def matmuls(device, seconds_by_n, **meta):
    recs = [{"n": n, "op": "matmul", "dtype": "float32", "flops": 2.0 * n ** 3, "nbytes": 12.0 * n * n,
             "seconds": t, "gflops": 2 * n ** 3 / t / 1e9, "peak_flops": device["peak_flops_float32"]}
            for n, t in seconds_by_n.items()]
    return Result("matmul_vs_size", recs, {"device": device, "date": "2000-01-01", **meta})


@pytest.mark.parametrize("bandwidth,twin", [(3.35e12, True), (4.8e12, False)])
def test_a_reference_gpu_of_the_same_peak_and_another_bandwidth_is_compared_at_the_unexplained_size(bandwidth, twin):
    here = matmuls(H200, {64: 7e-6, 512: 17e-6, 4096: 2.7e-3})
    other = matmuls({**H200, "name": "GPU B", "peak_bandwidth": bandwidth}, {64: 7e-6, 512: 18e-6, 4096: 2.7e-3},
                    reference=True)
    got = said(compute.matmul_sweep(here, [other]))
    assert ("twin" in got) == twin
    assert not twin or ((got["twin"].value, got["twin"].base, got["Cause"].outcome) == (18e-6, 17e-6, "said")
                        and got["Cause"].evidence is got["twin"])


@pytest.mark.parametrize("runs", sets_with("matmul_vs_size"))
def test_worked_problems_1_and_2_are_checked_by_the_sweeps_own_points(runs):
    run = page(runs["matmul_vs_size"])
    roof, by_n = Roofline.from_summary(run.meta["device"]), {r["n"]: r for r in run.records}
    n = sorted(by_n)[len(by_n) // 2]
    got = said(compute.sweep_checks(run, n))
    x = by_n[n]
    assert (got["matmul"].measured, got["matmul"].allowed) == (x["seconds"], x["flops"] / x["peak_flops"])
    past = min((m for m in by_n if m >= math.ceil(6 * roof.ridge)), default=max(by_n))
    assert got["ridge"].measured == by_n[past]["seconds"] == got["regime"].seconds


@pytest.mark.parametrize("runs", sets_with("matmul_tensor_cores"))
def test_each_kind_of_tensor_core_math_is_held_to_its_own_peak(runs):
    run = page(runs["matmul_tensor_cores"])
    got = said(compute.tensor_cores(run))
    for dtype in {r["dtype"] for r in run.records}:
        best = max((r for r in run.records if r["dtype"] == dtype), key=lambda r: r["gflops"])
        claim = next(c for c in got.values() if c.measured == best["gflops"] * 1e9)
        assert claim.allowed == best["peak_flops"] and claim.unit == "FLOP/s"


@pytest.mark.parametrize("runs", sets_with("mfu_vs_batch"))
def test_mfu_names_its_peak_and_the_last_batch_no_bound_explains_is_compared_with_the_first(runs):
    run = page(runs["mfu_vs_batch"])
    got = said(compute.mfu(run))
    recs = sorted(run.records, key=lambda r: r["batch"])
    assert got["best"].mfu and got["best"].measured == max(r["gflops"] for r in recs) * 1e9
    small = got["small_batch"]
    assert (small.measured, small.allowed) == (recs[0]["seconds"], recs[0]["roofline_seconds"])
    far = [r for r in recs if r["seconds"] > claims.UNEXPLAINED * r["roofline_seconds"]]
    assert ("regime" in got) == bool(far)
    if far and far[-1] is not recs[0]:
        assert (got["time"].value, got["time"].base) == (far[-1]["seconds"], recs[0]["seconds"])


@pytest.mark.parametrize("runs", sets_with("elementwise_vs_matmul"))
def test_the_gap_is_the_best_matmul_over_the_best_elementwise_kernel(runs):
    run = page(runs["elementwise_vs_matmul"])
    got = said(compute.gap(run))
    by = {r["kind"]: r["gflops"] * 1e9 for r in run.records}
    assert got["gap"].value == max(v for k, v in by.items() if k.startswith("matmul"))
    assert got["gap"].base == max(v for k, v in by.items() if k.startswith("elementwise"))
    assert ("outcome" in got) == bool(run.meta.get("spec_gap") and "matmul FP16 tensor cores" in by)
    assert got["x2_outcome"].regime == "memory-bound"


def gap_run(device, fma):
    chain = {"kind": "elementwise fused FMA chain", "gflops": 20e3, "peak_flops": 67e12, "intensity": 256.0}
    recs = [{"kind": "elementwise x * 2", "gflops": 500.0, "gbps": 4e3, "flops": 2 ** 26, "nbytes": 2.0 ** 29,
             "seconds": 1.3e-4}, {**chain, **({"fma": fma} if fma is not None else {})},
            {"kind": "matmul FP32", "gflops": 50e3, "tensor_cores": False}]
    return Result("elementwise_vs_matmul", recs, {"device": device, "repeat": 1024})


@pytest.mark.parametrize("device,fma,ceiling", [(H200, None, 0.5), (H200, False, 0.5), (H200, True, 1.0),
                                                ({**H200, "backend": "cpu"}, False, 1.0)])
def test_the_chain_is_held_to_the_ceiling_of_the_instructions_its_record_ran(device, fma, ceiling):
    got = said(compute.gap(gap_run(device, fma)))
    assert got["chain"].allowed == ceiling * 67e12


@pytest.mark.parametrize("runs", sets_with("matmul_vs_size", "elementwise_vs_matmul"))
def test_worked_problem_3_is_checked_by_the_sweep_and_the_comparison_at_one_size(runs):
    sweep, gap = page(runs["matmul_vs_size"]), page(runs["elementwise_vs_matmul"])
    side = math.isqrt(gap.meta["n_elements"])
    got = said(compute.ratio_check(sweep, gap, side))
    mm, roof = [r["seconds"] for r in sweep.records if r["n"] == side], Roofline.from_summary(sweep.meta["device"])
    x2 = next(r["seconds"] for r in gap.records if r["kind"] == "elementwise x * 2")
    ratio = (got["ratio"].value, got["ratio"].base) if mm else None
    assert ratio == (mm[0] / x2, side / (4 * roof.ridge)) if mm else "Missing" in got


def test_a_missing_record_is_named():
    for out, record in ((compute.matmul_sweep(None), "matmul_vs_size"), (compute.mfu(None), "mfu_vs_batch"),
                        (compute.ratio_check(matmuls(H200, {8: 1e-6}), None, 8), "elementwise_vs_matmul")):
        assert out.facts == {"missing": record}


def test_the_answers_are_the_roofline_arithmetic_of_the_pages_peaks():
    dev = SimpleNamespace(peak_flops=lambda dtype: 67e12, peak_bandwidth=4.8e12, name="NVIDIA H200",
                          summary=lambda: H200)
    here = Roofline(dev.peak_flops("float32"), dev.peak_bandwidth)
    got = compute.answers(dev, 2048, 8192)
    for answer in got.values():
        assert "{" not in answer.text and all(c.check() is None for c in answer.claims)
    slots = {c.value for a in got.values() for c in a.claims if isinstance(c, claims.Value)}
    assert {here.t_math(2 * 2048 ** 3), math.ceil(6 * here.ridge), 8192 / (4 * here.ridge)} <= slots
    regimes = [c for a in got.values() for c in a.claims if isinstance(c, claims.Regime)]
    assert all(c.regime == here.regime(c.flops, c.nbytes) and c.seconds is None for c in regimes)


# --- static text: numbers recomputed from brrr.specs ------------------------------------------------------------

def markdown(notebook: str, start: str) -> str:
    cells = json.loads((ROOT / notebook).read_text())["cells"]
    return next("".join(c["source"]) for c in cells if c["cell_type"] == "markdown" and start in "".join(c["source"]))


def spread(values, fmt) -> str:
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo} to {hi}"


SPEC_GROUPS = {   # where the text quotes each row of the spec table
    "on the V100": ("V100", "V100-PCIe"), "on the A100": ("A100-40GB", "A100-80GB-SXM", "A100-80GB-PCIe"),
    "on the H100, H200 and GH200": ("H100-SXM", "H100-PCIe", "H100-NVL", "H200", "H200-NVL", "GH200-96GB", "GH200-144GB"),
    "on the T4": ("T4",), "on the A10, L4, L40S and RTX A6000": ("A10", "L4", "L40S", "RTX-A6000"),
    "belongs to the GeForce RTX cards": tuple(k for k in GPU_SPECS if k.startswith("RTX-") and k != "RTX-A6000")}


def test_the_spec_ratio_text_quotes_the_spec_table():
    text = " ".join(markdown("chapters/01_compute.ipynb", "These are spec-sheet figures").split())
    ratio = {k: s.fp16_tensor / s.fp32 for k, s in GPU_SPECS.items()}
    assert sorted(k for keys in SPEC_GROUPS.values() for k in keys) == sorted(GPU_SPECS)   # every row is said
    assert f"from {spread(ratio.values(), '{:.1f}'.format)}" in text
    for where, keys in SPEC_GROUPS.items():
        figure = spread([ratio[k] for k in keys], "{:.1f}".format)
        assert f"{figure} {where}" in text or f"{figure}, {where}" in text, where
    training = {k for k, s in GPU_SPECS.items() if s.fp64 and s.fp64 >= 0.4 * s.fp32}   # "FP64 at half the FP32 rate"
    assert training == {k for where in ("V100", "A100", "H100, H200 and GH200") for k in SPEC_GROUPS[f"on the {where}"]}


def test_the_device_tables_ridge_text_quotes_the_spec_table():
    text = " ".join(markdown("book/device_table.ipynb", "General FP32 math reaches its ridge").split())
    t, q = spec_table(), lambda v: claims.quantity(float(v), "")
    fp32, tc = t["ridge FP32 (FLOP/B)"], t["ridge FP16 tensor (FLOP/B)"]
    geforce = t["GPU"].str.contains("GeForce")
    ridge = dict(zip(t["GPU"], tc))
    for quote in (f"at {spread(fp32, q)} FLOP per byte", f"at {q(tc.min())} (GeForce RTX 3090) to {q(tc.max())} (L40S)",
                  f"{spread(tc[~geforce], q)} on the data-centre", f"{spread(tc[geforce], q)} on the GeForce",
                  f"is {spread(tc / fp32, q)} times its FP32 one",
                  f"(V100 SXM2 {q(ridge['Tesla V100 SXM2'])}, A100 40GB {q(ridge['NVIDIA A100 40GB'])}, H100 SXM "
                  f"{q(ridge['NVIDIA H100 SXM'])} FLOP/byte)",
                  f"back by {claims.quantity(1 - ridge['NVIDIA H200 SXM'] / ridge['NVIDIA H100 SXM'], '%')}, from "
                  f"{q(ridge['NVIDIA H100 SXM'])} to {q(ridge['NVIDIA H200 SXM'])}"):
        assert quote in text, quote
    assert t.loc[tc.idxmin(), "GPU"].endswith("RTX 3090") and t.loc[tc.idxmax(), "GPU"].endswith("L40S")
