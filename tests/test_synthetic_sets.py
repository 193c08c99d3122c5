"""The synthetic sets (tests/synthetic_sets.py): the spec's device, never shipped; no rate above its roof;
derived fields that agree with their times; times that scale by the regime of what was timed."""
import math
import sys
from pathlib import Path

import pytest

from brrr import reference, specs
from brrr.device import _replayed_device
from brrr.experiments import measured_knee
from brrr.results import Result
from brrr.roofline import Roofline

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "sets" / "synthetic-records"     # where the chapter harness makes them
sys.path.insert(0, str(ROOT / "tests"))
import synthetic_sets  # noqa: E402

LABELS = list(synthetic_sets.DEVICES)
H200 = synthetic_sets.source_runs
FLOATS, BOTH = ("float32", "float16", "bfloat16"), (False, True)
COSTED = lambda r: r.get("seconds") and (r.get("flops") or r.get("nbytes"))  # noqa: E731


@pytest.fixture(scope="module")
def sets() -> dict:
    """{label: {experiment: Result}} (made again only where out of date)."""
    return {label: {p.stem: Result.load(str(p)) for p in sorted(f.glob("*.json"))}
            for label, f in synthetic_sets.make_all(OUT).items()}


def devices(label) -> tuple:
    """(the H200, the set's replayed device)."""
    return synthetic_sets.source(next(iter(H200().values())).meta["device"]), _replayed_device(str(OUT / label))


def use_of_roof(dev, rec) -> float:
    """Roofline time over time on ``dev``'s highest roof for the record's dtype (int8 as FP16 tensor cores)."""
    dtype = {"int8": "float16"}.get(rec.get("dtype"), rec.get("dtype"))
    peak = dev.peak_flops(dtype if dtype in synthetic_sets.FLOAT_TYPES else "float32", True)
    return max((rec.get("flops") or 0) / peak, (rec.get("nbytes") or 0) / dev.peak_bandwidth) / rec["seconds"]


@pytest.mark.parametrize("label", LABELS)
def test_the_device_is_the_spec_sheets_says_it_is_synthetic_and_is_never_shipped(sets, label):
    spec = specs.GPU_SPECS[synthetic_sets.DEVICES[label]]
    dev = devices(label)[1]
    assert (dev.spec, dev.sm_count, dev.l2_bytes) == (spec, spec.sm_count, spec.l2_bytes)
    assert label not in reference.record_sets() and reference.REFERENCE_DIR not in OUT.parents
    assert dev.name not in {r.meta["device"]["name"] for r in reference.load("matmul_vs_size")}
    assert set(sets[label]) == set(H200())
    for run in sets[label].values():
        assert run.meta["synthetic"] is True and run.meta["device"] == sets[label]["matmul_vs_size"].meta["device"]
        source = run.meta["device"]["source"]
        assert source.startswith("synthetic:") and "not a measurement" in source
        assert not [t for t in synthetic_sets.DEVICES.values() if t != synthetic_sets.DEVICES[label]
                    and synthetic_sets.target(t).name in str(run.meta)], f"{run.name} names another target"


@pytest.mark.parametrize("label", LABELS)
def test_no_rate_is_above_the_roof_unless_the_h200s_was(sets, label):
    src, dev = devices(label)
    for name, run in sets[label].items():
        before, after = [r for r in H200()[name].records if COSTED(r)], [r for r in run.records if COSTED(r)]
        paired = len(before) == len(after) and all(a.get(k) == b.get(k) for a, b in zip(before, after)
                                                   for k in ("size", "working_set", "parallelism", "index"))
        worst = max([use_of_roof(src, r) for r in before], default=0.0)
        for i, rec in enumerate(after):
            h200_use = use_of_roof(src, before[i]) if paired else worst
            assert use_of_roof(dev, rec) <= 1 + 1e-9 or h200_use > 1, f"{label} {name}: {rec}"


def agree(rec, dev) -> bool:
    """Whether every derived field of ``rec`` agrees with what it is derived from."""
    t, flops, nbytes = rec.get("seconds"), rec.get("flops") or 0, rec.get("nbytes") or 0
    derived = {"gbps": lambda: nbytes / t / 1e9, "gflops": lambda: flops / t / 1e9,
               "achieved_flops": lambda: flops / t, "fraction_of_peak": lambda: flops / t / rec["peak_flops"],
               "mfu": lambda: flops / t / rec["peak_flops"], "efficiency": lambda: rec["roofline_seconds"] / t,
               "tokens_per_second": lambda: rec["tokens"] / t, "seconds_per_token": lambda: t / rec["tokens"],
               "fraction_of_roof": lambda: nbytes / t / dev.peak_bandwidth}
    ok = [math.isclose(rec[k], f(), rel_tol=1e-9) for k, f in derived.items() if rec.get(k) is not None and t]
    bound = rec.get("roofline_seconds", rec.get("predicted_seconds"))
    if bound is not None and "m" not in rec:        # an eager epilogue's bound adds three kernels'
        roofs = [max(flops / dev.peak_flops(d, tc), nbytes / dev.peak_bandwidth) for d in FLOATS for tc in BOTH]
        ok.append(any(math.isclose(bound, r, rel_tol=1e-9) for r in roofs))
    return all(ok) and rec.get("min_seconds", 0) <= (t or math.inf)


@pytest.mark.parametrize("label", LABELS)
def test_derived_fields_agree_with_their_times_and_peaks(sets, label):
    dev = devices(label)[1]
    for name, run in sets[label].items():
        assert all(agree(rec, dev) for rec in run.records), f"{label} {name}"
        if "roof" in run.meta:
            roof = Roofline.from_dict(run.meta["roof"])
            assert roof.peak_bandwidth == dev.peak_bandwidth
            assert roof.peak_flops in {dev.peak_flops(), dev.peak_flops("float16", True)}
            assert run.meta.get("ridge", roof.ridge) == pytest.approx(roof.ridge)
    knee = sets[label]["pointwise_repeat_sweep"]
    assert knee.meta["measured_knee"] == measured_knee(knee.records, "fused")


def scaling(sets, label, name, rec) -> float:
    """Target seconds over H200 seconds of the H200 record ``rec`` of ``name`` (the same words, flags, sizes)."""
    ident = {k: v for k, v in rec.items() if isinstance(v, (str, bool, int)) and k not in ("device", "warnings")}
    same = [r for r in sets[label][name].records if all(r.get(k) == v for k, v in ident.items())]
    assert len(same) == 1, (name, ident)
    return same[0]["seconds"] / rec["seconds"]


@pytest.mark.parametrize("label", LABELS)
def test_memory_bound_time_scales_by_bandwidth_and_compute_bound_by_flops(sets, label):
    src, dev = devices(label)
    for name in ("measure_roofline", "elementwise_vs_matmul"):
        rec = max((r for r in H200()[name].records if not r["flops"] or r["intensity"] < 1),
                  key=lambda r: r["nbytes"] / r["seconds"])                     # the fastest memory-bound call
        fixed_share = rec["floor_seconds"] / (rec["nbytes"] / src.peak_bandwidth)    # a fixed cost does not scale
        bandwidth = src.peak_bandwidth / dev.peak_bandwidth
        assert scaling(sets, label, name, rec) == pytest.approx(bandwidth, rel=fixed_share)
        rec = max((r for r in H200()[name].records if r["dtype"] == "float32" and not r["tensor_cores"]),
                  key=lambda r: r["flops"])                                     # the largest FP32 matmul
        assert scaling(sets, label, name, rec) == pytest.approx(src.peak_flops() / dev.peak_flops(), rel=1e-3)


def test_a_path_the_target_lacks_runs_general_math_or_not_at_all(sets):
    t4 = sets["synthetic-tesla-t4"]
    assert not any(r["tensor_cores"] for r in t4["matmul_tensor_cores"].records if r["dtype"] != "float16")
    assert "no tensor cores for float32 on Tesla T4: ran general math" in t4["matmul_tensor_cores"].meta["notes"]
    assert not any(r["tensor_cores"] and r["dtype"] != "float16" for r in t4["measure_roofline"].records)
    assert t4["capstone_steps"].meta["autocast_dtype"] == "float16"
