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


