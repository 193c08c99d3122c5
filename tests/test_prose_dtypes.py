"""brrr.prose.dtypes: every wording of the reduced-precision section, on small synthetic records,
and the live run's text checked against its own records."""
import pytest

from brrr.experiments.dtypes import matmul_counts, pointwise_counts
from brrr.prose import dtypes as prose
from brrr.prose.words import ON_ROOF
from brrr.results import Result

N, ELEMENTS, BW = 512, 2 ** 24, 30e9
F32_PW = 2 * 4 * ELEMENTS / BW          # float32 pointwise time at the memory roof, seconds


def run(pointwise=None, matmul=None, backend="cpu", peaks=None, native=None, skipped=(), reference=False,
        name=None):
    """A synthetic dtype_roofline Result: ``pointwise`` / ``matmul`` map dtype -> seconds;
    ``peaks`` dtype -> roof (CPU default: float32's only); ``skipped``: (op, dtype, reason)."""
    peaks = {"float32": 150e9} if peaks is None else peaks
    records = []
    for op, times in (("matmul", matmul or {}), ("pointwise", pointwise or {})):
        for dtype, seconds in times.items():
            flops, nbytes = (matmul_counts(N, dtype) if op == "matmul" else pointwise_counts(ELEMENTS, dtype))
            records.append({"op": op, "dtype": dtype, "size": N if op == "matmul" else ELEMENTS, "flops": flops,
                            "nbytes": nbytes, "intensity": flops / nbytes, "seconds": seconds,
                            "peak_flops": peaks.get(dtype), "skipped": "", "backend": backend})
    for op, dtype, reason in skipped:
        flops, nbytes = matmul_counts(N, dtype) if op == "matmul" else pointwise_counts(ELEMENTS, dtype)
        records.append({"op": op, "dtype": dtype, "size": N, "flops": flops, "nbytes": nbytes,
                        "intensity": flops / nbytes, "peak_flops": None, "skipped": reason, "backend": backend})
    device = {"name": name or ("Test CPU" if backend == "cpu" else "Test GPU"), "backend": backend}
    meta = {"device": device, "peak_bandwidth": BW, "native": native or {}, "date": "2026-11-24T00:00:00"}
    if reference:
        meta["reference"] = True
    return Result("dtype_roofline", records, meta)


# --- the pointwise op --------------------------------------------------------------------------

def test_pointwise_in_proportion_to_bytes():
    p = prose.pointwise(run(pointwise={"float32": F32_PW, "bfloat16": F32_PW / 2, "int8": F32_PW / 4}))
    assert p.facts["pointwise"] == {"bfloat16": "proportional", "int8": "proportional"}
    assert "Time followed the bytes" in p.text
    assert "`bfloat16` moves half the bytes and ran 2 times as fast" in p.text
    assert "`int8` moves a quarter of the bytes and ran 4 times as fast" in p.text
    assert "left of the float32 ridge at 5 FLOP/byte" in p.text and "0.25 FLOP/byte" in p.text


def test_pointwise_less_than_the_bytes_on_a_cpu_and_a_gpu():
    times = {"float32": F32_PW, "bfloat16": F32_PW / 1.3, "float16": F32_PW / 2}
    cpu = prose.pointwise(run(pointwise=times))
    assert cpu.facts["pointwise"] == {"bfloat16": "less", "float16": "proportional"}
    assert "`bfloat16` gained less than the bytes promise" in cpu.text
    assert "`float16` kept pace with the bytes" in cpu.text and "Time followed" not in cpu.text
    gpu = prose.pointwise(run(pointwise=times, backend="cuda", peaks={"float32": 60e12}))
    assert "gained less than the bytes promise" in gpu.text


def test_pointwise_more_than_the_bytes():
    p = prose.pointwise(run(pointwise={"float32": F32_PW, "float16": F32_PW / 3}))
    assert p.facts["pointwise"] == {"float16": "more"} and "more than the bytes explain" in p.text


@pytest.mark.parametrize("factor, outcome, said", [(1.05, "same", "about as fast"), (0.5, "slower", "2 times slower")])
def test_pointwise_no_faster(factor, outcome, said):
    p = prose.pointwise(run(pointwise={"float32": F32_PW, "bfloat16": F32_PW / factor}))
    assert p.facts["pointwise"] == {"bfloat16": outcome}
    assert said in p.text and "did not get faster" in p.text


def test_pointwise_without_float32_or_alone():
    p = prose.pointwise(run(pointwise={"bfloat16": 1.0}, skipped=[("pointwise", "float32", "no")]))
    assert p.facts["pointwise"] == "no float32" and "nothing to measure" in p.text
    p = prose.pointwise(run(pointwise={"float32": F32_PW}))
    assert p.facts["pointwise"] == "alone" and "No smaller type ran" in p.text


def test_pointwise_right_of_the_ridge_and_without_a_roof():
    high = prose.pointwise(run(pointwise={"float32": F32_PW, "int8": F32_PW / 4}, peaks={"float32": 1e9}))
    assert "right of the float32 ridge" in high.text
    none = prose.pointwise(run(pointwise={"float32": F32_PW, "int8": F32_PW / 4}, peaks={}))
    assert "ridge" not in none.text and "expects it to be memory-bound" in none.text


# --- the matmul --------------------------------------------------------------------------------

F32_MM = 2.0 * N ** 3 / 100e9


def test_matmul_slower_where_the_cpu_lacks_the_instructions():
    r = run(matmul={"float32": F32_MM, "bfloat16": F32_MM * 100, "float16": F32_MM * 90, "int8": F32_MM * 50},
            native={"bfloat16": False, "float16": False, "cpu_capability": "AVX2"})
    p = prose.matmul(r)
    assert p.facts["matmul"] == {"bfloat16": "slower", "float16": "slower", "int8": "slower"}
    assert "`bfloat16` ran 100 times slower" in p.text
    assert "no bfloat16 or float16 arithmetic instructions" in p.text and "AVX2" in p.text
    assert "those types" in p.text and "`int8` was slower too" in p.text
    assert "Fewer bytes buy nothing" in p.text
    assert "right of the float32 ridge" in p.text and "compute-bound" in p.text


def test_matmul_slower_with_nothing_known_of_the_cpu():
    p = prose.matmul(run(matmul={"float32": F32_MM, "bfloat16": F32_MM * 3}))
    assert "instructions" not in p.text and "`bfloat16` was slower too" in p.text and "for it here" in p.text


def test_matmul_faster_under_a_higher_roof_on_a_gpu():
    r = run(matmul={"float32": F32_MM, "float16": F32_MM / 12, "int8": F32_MM / 20}, backend="cuda",
            peaks={"float32": 60e12, "float16": 900e12})
    p = prose.matmul(r)
    assert p.facts["matmul"] == {"float16": "faster", "int8": "faster"}
    assert "`float16` ran 12 times as fast under a roof 15 times float32's" in p.text
    assert "`float16` sped up because its roof is higher" in p.text
    assert "`int8` sped up with no higher roof known" in p.text


def test_matmul_same_speed_and_below_the_ridge():
    p = prose.matmul(run(matmul={"float32": F32_MM, "bfloat16": F32_MM * 1.05}, peaks={"float32": 1e15}))
    assert p.facts["matmul"] == {"bfloat16": "same"} and "saved bytes and no time" in p.text
    assert "not compute-bound after all" in p.text


def test_matmul_without_float32_or_alone():
    p = prose.matmul(run(matmul={"int8": 1.0}, skipped=[("matmul", "float32", "x")]))
    assert p.facts["matmul"] == "no float32"
    p = prose.matmul(run(matmul={"float32": F32_MM}, peaks={}))
    assert p.facts["matmul"] == "alone" and "ridge" not in p.text


# --- roofs, physics, skipped, references -------------------------------------------------------

def test_roofs_on_a_cpu_and_a_gpu():
    cpu = prose.roofs(run(pointwise={"float32": F32_PW}))
    assert cpu.facts["roofs"] == "cpu" and "no spec sheet exists" in cpu.text and not cpu.facts["above_roof"]
    gpu = prose.roofs(run(matmul={"float32": F32_MM, "float16": F32_MM, "int8": F32_MM}, backend="cuda",
                          peaks={"float32": 60e12, "float16": 900e12}))
    assert gpu.facts["roofs"] == "gpu" and "15 times float32's" in gpu.text
    assert "No rate is known for `int8`" in gpu.text
    assert "same line for every type" in cpu.text and "same line for every type" in gpu.text


def test_a_point_above_its_roof_is_called_out():
    p = prose.roofs(run(pointwise={"float32": F32_PW / 3, "int8": F32_PW / 4}))
    assert p.facts["above_roof"] == ["the float32 pointwise"] and "above its roof" in p.text


def test_skipped_types_say_why():
    assert prose.skipped(run(pointwise={"float32": 1.0})) is None
    p = prose.skipped(run(pointwise={"float32": 1.0}, skipped=[("matmul", "int8", "RuntimeError: no kernel")]))
    assert "The int8 matmul did not run here (RuntimeError: no kernel)." == p.text


def test_whole_section_without_and_with_references():
    live = run(pointwise={"float32": F32_PW, "bfloat16": F32_PW / 2}, matmul={"float32": F32_MM, "bfloat16": F32_MM * 9})
    alone = prose.dtype_roofline(live, None or ())
    assert "No reference GPU run of the data-type comparison ships" in alone.text
    assert alone.text.count("\n\n") == 3
    ref = run(pointwise={"float32": F32_PW, "float16": F32_PW / 2}, matmul={"float32": F32_MM, "float16": F32_MM / 10},
              backend="cuda", peaks={"float32": 60e12, "float16": 900e12}, reference=True, name="NVIDIA H100")
    both = prose.dtype_roofline(live, [ref])
    assert "No reference GPU run" not in both.text
    assert "On the reference NVIDIA H100 (measured 2026-11-24), against float32, the pointwise op ran " \
           "`float16` 2 times as fast; the matmul `float16` 10 times as fast." in both.text
    empty = run(pointwise={"float32": F32_PW}, reference=True, name="NVIDIA H200")
    assert "no smaller type ran beside float32" in prose.dtype_roofline(live, [empty]).text


def test_speed_words():
    assert prose.speed(1.05) == "about as fast"
    assert prose.speed(3.0) == "3 times as fast" and prose.speed(0.25) == "4 times slower"


def test_live_run_text_matches_its_records():
    pytest.importorskip("torch")
    from brrr.experiments import dtype_roofline
    live = dtype_roofline(n=32, elements=4096, budget=0.01, progress=False)
    p = prose.dtype_roofline(live)
    by = {(r["op"], r["dtype"]): r for r in live.records}
    for op in ("pointwise", "matmul"):
        for dtype, s in p.facts.get(f"{op}_speedup", {}).items():
            assert s == pytest.approx(by[(op, "float32")]["seconds"] / by[(op, dtype)]["seconds"])
            assert f"`{dtype}`" in p.text
    assert ("no spec sheet exists" in p.text) == (live.meta["device"]["backend"] == "cpu")
    assert "{" not in p.text and "None" not in p.text and "nan" not in p.text


from record_sets import close_to, sets_with  # noqa: E402


@pytest.mark.parametrize("runs", sets_with("dtype_roofline"))
def test_pointwise_shares_of_the_memory_roof_on_record_sets(runs):
    """Each type's bandwidth and share of the memory roof are printed, and the memory-bound premise is
    said not to hold exactly when some type ran below ON_ROOF of it (review 01_02 item 7)."""
    run = runs["dtype_roofline"]
    text = str(prose.pointwise(run))
    bw = run.meta["peak_bandwidth"]
    ran = [r for r in run.records if r["op"] == "pointwise" and not r.get("skipped") and r.get("seconds")]
    for r in ran:
        assert close_to(100 * r["nbytes"] / r["seconds"] / bw, text, 0.02)
    below = any(r["nbytes"] / r["seconds"] < ON_ROOF * bw for r in ran)
    assert ("the premise above did not hold" in text) == (below and len(ran) > 1)
    assert "noisy" not in text


@pytest.mark.parametrize("runs", sets_with("dtype_roofline"))
def test_int8_slower_than_16_bit_floats_is_said(runs):
    run = runs["dtype_roofline"]
    by = {(r["op"], r["dtype"]): r for r in run.records if not r.get("skipped") and r.get("seconds")}
    text = str(prose.matmul(run))
    i8, halves = by.get(("matmul", "int8")), [by[k] for k in (("matmul", "bfloat16"), ("matmul", "float16")) if k in by]
    slower = (run.meta["device"]["backend"] != "cpu" and i8 and halves
              and i8["seconds"] > 1.1 * min(r["seconds"] for r in halves))
    assert ("did not get that rate" in text) == bool(slower)


def test_int8_slower_than_bfloat16_on_a_gpu():
    gpu = run(matmul={"float32": 1.0, "bfloat16": 0.07, "int8": 0.4}, backend="cuda",
              peaks={"float32": 67e12, "bfloat16": 989.5e12})
    t = str(prose.matmul(gpu))
    assert "`int8` ran 5.7 times slower than `bfloat16`" in t and "row-major" in t
    gpu.meta["int8_b"] = "column-major"
    assert "row-major" not in str(prose.matmul(gpu))
    fast = run(matmul={"float32": 1.0, "bfloat16": 0.07, "int8": 0.035}, backend="cuda",
               peaks={"float32": 67e12, "bfloat16": 989.5e12})
    assert "did not get that rate" not in str(prose.matmul(fast))
