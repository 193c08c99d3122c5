"""What a student reads (issue 34): answers tried as a student would, on exercises 1 and 2, against the
autograder's own test cases. A regime or letter is read whatever its case and spaces; a public test
catches a wrong unit where a range gives nothing away; a hint names the quantity that is wrong."""
import os
import zipfile

import pytest

from test_exercise_givens import ROOT, _cases

PEAKS = {"name": "test", "backend": "cpu", "peak_flops": 1e11, "peak_bandwidth": 1e10, "cache_bytes": 2 ** 20}


@pytest.fixture
def case(tmp_path, monkeypatch):
    """case(stem, 'q3/test_timing') -> that test function, judged against PEAKS."""
    from brrr.grade import context
    monkeypatch.setattr(context, "grader_device", lambda: dict(PEAKS))
    found = {}

    def get(stem, name):
        if stem not in found:
            archive = os.path.join(ROOT, "exercises", stem, f"{stem}-autograder.zip")
            found[stem] = dict(_cases(archive, str(tmp_path / stem)))
        return found[stem][name]
    return get


def timing(seconds, **counts):
    import brrr
    return brrr.Timing(samples=[seconds] * 5, floor=1e-8, backend="cpu", mode="flush", **counts)


def failure(fn, **answers) -> str:
    with pytest.raises(AssertionError) as error:
        fn(**answers)
    return str(error.value)


def test_a_regime_or_letter_passes_whatever_its_case(case):
    regime = case("01_compute", "q2/test_regime")
    peaks = {"peak_flops_used": PEAKS["peak_flops"], "peak_bandwidth_used": PEAKS["peak_bandwidth"]}
    right = next(r for r in ("compute-bound", "memory-bound")
                 if not _fails(regime, predicted_regime_mm=r, n_mm=256, **peaks))
    for written in (right.capitalize(), f" {right.upper()}\n"):
        regime(predicted_regime_mm=written, n_mm=256, **peaks)
    case("01_compute", "q4/test_answers")(answer_tensor_cores="B", answer_flop_share=" c ")
    case("02_memory_bandwidth", "q2/test_answer")(answer_intensity="B")
    assert "case and spaces do not matter" in failure(case("01_compute", "q5/test_format"),
                                                      regime_times_two="compute bound", max_fraction_times_two=0.5)


def _fails(fn, **answers) -> bool:
    try:
        fn(**answers)
    except AssertionError:
        return True
    return False


def test_public_ranges_catch_a_wrong_unit(case):
    n, seconds = 256, 1e-3
    flops = 2 * n ** 3
    t_mm = timing(seconds, flops=flops)
    tflops = flops / seconds / 1e12
    public = case("01_compute", "q3/test_tflops_from_your_timing")
    public(tflops_mm=tflops, mfu_mm=tflops * 1e12 / PEAKS["peak_flops"], t_mm=t_mm, n_mm=n)
    assert "near or below 1" in failure(public, tflops_mm=tflops, mfu_mm=100 * tflops * 1e12 / PEAKS["peak_flops"],
                                        t_mm=t_mm, n_mm=n)
    import brrr
    fmt = case("02_memory_bandwidth", "q2/test_format")
    fmt(roof_a100=brrr.Roofline(peak_flops=19.5e12, peak_bandwidth=1.5e12), answer_intensity="b")
    assert "bytes/s" in failure(fmt, roof_a100=brrr.Roofline(peak_flops=19.5e12, peak_bandwidth=1.5),
                                answer_intensity="b")
    n = 2 ** 22
    prediction = case("02_memory_bandwidth", "q3/test_prediction_follows_from_your_peaks")
    in_gb = 12 * n / 1e9
    assert "not GB" in failure(prediction, predicted_triad_seconds=in_gb / PEAKS["peak_bandwidth"],
                               nbytes_triad=in_gb, flops_triad=2 * n, peak_flops_used=PEAKS["peak_flops"],
                               peak_bandwidth_used=PEAKS["peak_bandwidth"], n=n)


def test_a_hint_names_the_wrong_quantity(case):
    n = 256
    wrong = timing(1e-3, flops=4 * n ** 3)            # flops_mm doubled
    message = failure(case("01_compute", "q3/test_timing"), t_mm=wrong, n_mm=n)
    assert "t_mm.flops (your flops_mm) is 2 times the product's FLOPs" in message
    n = 2 ** 22
    message = failure(case("02_memory_bandwidth", "q4/test_timing"), t_triad=timing(1e-2, nbytes=8 * n), n=n)
    assert "t_triad.nbytes (your nbytes_triad) is 0.667 times the bytes triad moves" in message


def test_a_public_success_says_what_it_checked():
    with zipfile.ZipFile(os.path.join(ROOT, "exercises", "01_compute", "tests.zip")) as z:
        q4 = z.read("q4.py").decode()
    assert "the hidden tests grade their values" in q4


def test_names_match_the_chapter():
    """Exercise 1 names the FFMA chain as the chapter does."""
    import json
    path = os.path.join(ROOT, "exercises", "01_compute", "01_compute.ipynb")
    text = "".join("".join(c["source"]) for c in json.load(open(path, encoding="utf-8"))["cells"])
    assert 'op="ffma"' in text and 'op="fma"' not in text
    chapter = open(os.path.join(ROOT, "chapters", "01_compute.ipynb"), encoding="utf-8").read()
    assert 'op=\\"ffma\\"' in chapter


def test_exercise_two_explains_the_warnings_it_prints():
    import json
    path = os.path.join(ROOT, "exercises", "02_memory_bandwidth", "02_memory_bandwidth.ipynb")
    text = "".join("".join(c["source"]) for c in json.load(open(path, encoding="utf-8"))["cells"]
                   if c["cell_type"] == "markdown")
    from brrr import timing
    import inspect
    judged = inspect.getsource(timing._judge)
    for warning in ("cache-resident", "few samples"):
        assert f'"{warning}:' in judged or f'f"{warning}:' in judged, f"brrr.bench no longer says {warning}"
        assert f"*{warning}*" in text, f"exercise 2 does not explain {warning!r}"




def _wrong_units():
    """(id, stem, case, right answers, name, the answer in a wrong unit, words the hint must hold):
    the solution's answers against PEAKS, and one of them scaled by a likely unit slip."""
    flops, bw = PEAKS["peak_flops"], PEAKS["peak_bandwidth"]
    sizes = [2 ** k for k in range(4, 20, 3)]
    us = {n: (5e-6 + 12 * n / bw) * 1e6 for n in sizes}
    ks, n = [1, 2, 4, 16, 64], 2 ** 21
    ms = {k: max(k * n / flops, 8 * n / bw) * 1e3 for k in ks}
    q3 = dict(peak_bw=bw, t_pred_us=us, sizes=sizes)
    q2 = dict(speedup_pred={k: min(k, 8 * flops / bw) for k in ks}, t_fused_pred_ms=ms, ks=ks, n=n)
    by_hand = [4 * B * (10 * d + 2) for B, d in ((64, 32), (128, 64), (8, 16))]
    m_input, m_block = 4 * 64 * 32, 4 * 64 * (10 * 32 + 2)
    model = {e: 32 * m_block if e == 0 else -(-32 // e) * m_input + e * m_block for e in (0, 1, 2, 4, 8, 16, 32)}
    recompute = dict(peak_flops_used=flops, peak_bandwidth_used=bw, t_forward_pred=1e-3, t_step_pred=3e-3,
                     t_step_ckpt_pred=4e-3, matmul_regime="compute-bound")
    networks = dict(peak_flops_used=flops, peak_bandwidth_used=bw, regime_pred={k: "memory-bound" for k in KINDS},
                    t_pred={k: 1e-3 for k in KINDS})
    linear_bytes = 4 * (64 * 256 + 1024 * 256 + 1024 + 64 * 1024)
    diagnosis = dict(peak_flops=flops, peak_bandwidth=bw, linear_flops=2 * 64 * 1024 * 256, linear_bytes=linear_bytes,
                     predicted_seconds=linear_bytes / bw, predicted_regime="memory-bound")
    rows = {k: ["addmm"] * 4 for k in ("op", "category", "flops", "nbytes", "seconds", "roofline_seconds", "regime")}
    profile = dict(rows=rows, linear_seconds=2e-4, linear_efficiency=0.7, matmul_flop_share=0.9,
                   matmul_time_share=0.5, small_ops_answer="b")
    roofline = dict(peak_flops=flops, peak_bandwidth=bw, weight_bytes=4 * 462_336, roofline_per_token_small=1e-4,
                    roofline_per_token_large=1e-5, roofline_regime_small="memory-bound",
                    roofline_regime_large="compute-bound")
    measured = dict(t_small=timing(2e-3), t_large=timing(8e-3), seconds_per_token_small=1.25e-4,
                    seconds_per_token_large=1.6e-5, mfu_small=0.05, mfu_large=0.3, roofline_fraction_small=0.4,
                    roofline_fraction_large=0.6, batching_speedup=8.0)
    decode = dict(decode_weight_bytes=4 * 454_144, decode_floor=1.8e-4, t_decode=timing(1e-3),
                  decode_floor_multiple=5.5, decode_calls=90, fixed_cost=8e-6, decode_issue_seconds=7.2e-4,
                  decode_regime="overhead-bound", decode_issue_share=0.72)
    train = dict(n_matmul_weights=400_000, train_flops_per_token=2.4e6, train_step_flops=2.4e9, t_train=timing(0.1),
                 train_tokens_per_second=1e4, mfu_peak_name="float32", mfu_peak_flops=flops, train_mfu=0.24)
    o, f, r = "03_overhead", "04_fusion", "05_recomputation"
    i, d, m = "06_intensity_of_networks", "07_diagnosing_a_model", "08_making_a_model_go_brrr"
    return [
        ("03 peak_bw GB/s", o, "q3/test_shapes", q3, "peak_bw", bw / 1e9, "bytes/s"),
        ("03 t_pred_us s", o, "q3/test_shapes", q3, "t_pred_us", {k: v / 1e6 for k, v in us.items()}, "µs"),
        ("04 t_fused_pred_ms s", f, "q2/test_shapes", q2, "t_fused_pred_ms", {k: v / 1e3 for k, v in ms.items()},
         "milliseconds"),
        ("05 by_hand KB", r, "q2/test_shape", dict(by_hand=by_hand, counted=by_hand), "by_hand",
         [b / 1e3 for b in by_hand], "not KB"),
        ("05 counted KiB", r, "q2/test_shape", dict(by_hand=by_hand, counted=by_hand), "counted",
         [b / 1024 for b in by_hand], "not KB"),
        ("05 model_bytes MB", r, "q3/test_shape", dict(model_bytes=model), "model_bytes",
         {k: v / 1e6 for k, v in model.items()}, "not KB"),
        ("05 model_bytes KiB", r, "q3/test_shape", dict(model_bytes=model), "model_bytes",
         {k: v / 1024 for k, v in model.items()}, "not KB"),
        ("05 peak_flops_used TFLOP/s", r, "q4/test_types", recompute, "peak_flops_used", flops / 1e12, "FLOP/s"),
        ("05 peak_bandwidth_used GB/s", r, "q4/test_types", recompute, "peak_bandwidth_used", bw / 1e9, "bytes/s"),
        ("06 peak_flops_used TFLOP/s", i, "q4/test_types", networks, "peak_flops_used", flops / 1e12, "FLOP/s"),
        ("06 peak_bandwidth_used GB/s", i, "q4/test_types", networks, "peak_bandwidth_used", bw / 1e9, "bytes/s"),
        ("07 peak_flops TFLOP/s", d, "q2/test_format", diagnosis, "peak_flops", flops / 1e12, "FLOP/s"),
        ("07 peak_bandwidth GB/s", d, "q2/test_format", diagnosis, "peak_bandwidth", bw / 1e9, "bytes/s"),
        ("07 linear_bytes MB", d, "q2/test_format", diagnosis, "linear_bytes", linear_bytes / 1e6, "not KB"),
        ("07 linear_efficiency %", d, "q3/test_format", profile, "linear_efficiency", 70.0, "fraction"),
        ("08 peak_flops TFLOP/s", m, "q2/test_format", roofline, "peak_flops", flops / 1e12, "FLOP/s"),
        ("08 peak_bandwidth GB/s", m, "q2/test_format", roofline, "peak_bandwidth", bw / 1e9, "bytes/s"),
        ("08 weight_bytes MB", m, "q2/test_format", roofline, "weight_bytes", 4 * 462_336 / 1e6, "not KB"),
        ("08 mfu_large %", m, "q3/test_format", measured, "mfu_large", 30.0, "fraction"),
        ("08 roofline_fraction_small %", m, "q3/test_format", measured, "roofline_fraction_small", 40.0, "fraction"),
        ("08 decode_weight_bytes MB", m, "q6/test_format", decode, "decode_weight_bytes", 4 * 454_144 / 1e6, "not KB"),
        ("08 decode_issue_share %", m, "q6/test_format", decode, "decode_issue_share", 72.0, "fraction"),
        ("08 fixed_cost µs", m, "q6/test_format", decode, "fixed_cost", 8.0, "in seconds"),
        ("08 mfu_peak_flops TFLOP/s", m, "q7/test_format", train, "mfu_peak_flops", flops / 1e12, "FLOP/s"),
    ]


KINDS = ("standard", "pointwise", "group", "depthwise")
WRONG_UNITS = _wrong_units()


@pytest.mark.parametrize("label, stem, name, right, answer, wrong, hint", WRONG_UNITS, ids=[w[0] for w in WRONG_UNITS])
def test_public_ranges_catch_a_wrong_unit_in_exercises_3_to_8(case, label, stem, name, right, answer, wrong, hint):
    """Issue 34: each of these passed its public test in the wrong unit; a range that gives no value
    away (a peak between 1e9 and 1e17 FLOP/s, a whole number of bytes, a fraction at most 3, a call's
    fixed cost between 0.1 µs and 1 ms) now fails it."""
    fn = case(stem, name)
    fn(**right)
    message = failure(fn, **{**right, answer: wrong})
    assert answer in message and hint in message, message
