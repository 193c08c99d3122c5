"""No hidden or public test of any exercise passes on nothing (issue 23, class 7): every test case,
called with one degenerate value for all of its arguments (inf, nan, 0, -1, empty containers,
None, an empty string), fails. A test that compares an answer with a formula of the givens
checks the givens first (brrr.grade.context: whole, positive, filled).

The same-value sweep misses a case that checks one argument and trusts the rest, so a mixed fuzz
(issue 34) also calls every case with each argument drawn on its own from those values, an empty
array and fabricated Timings: MIXES mixes per case, drawn with the fixed seed SEED."""
import glob
import inspect
import math
import os
import re
import warnings
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZIPS = sorted(glob.glob(os.path.join(ROOT, "exercises", "*", "*-autograder.zip")))
DEGENERATE = [math.inf, -math.inf, math.nan, 0, -1.0, [], {}, (), None, ""]
SEED = 34       # the mixed fuzz's seed (random.Random(SEED), one generator per exercise)
MIXES = 3000    # mixes per test case


def _mixed_values():
    """What the mixed fuzz draws each argument from: the degenerate values, an empty array and
    fabricated Timings (instant, empty, infinite, negative, and a millisecond that claims more
    FLOPs or bytes than any device moves in it)."""
    import numpy as np
    from brrr.timing import Timing

    def timing(samples, **counts):
        return Timing(samples=samples, floor=1e-8, backend="cpu", mode="flush", **counts)
    return DEGENERATE + [np.array([]), timing([1e-12] * 5), timing([]), timing([math.inf]), timing([-1e-3]),
                         timing([1e-3] * 5, flops=1e30), timing([1e-3] * 5, nbytes=1e30)]


def _cases(archive, folder):
    from otter.nbmeta_config import NBMetadataConfig
    from otter.test_files import create_test_file
    with zipfile.ZipFile(archive) as z:
        z.extractall(folder)
    for path in sorted(glob.glob(os.path.join(folder, "tests", "*.py"))):
        test = create_test_file(path, NBMetadataConfig())
        for case in test.test_cases:
            yield f"{test.name}/{case.body.test_func.__name__}", case.body.test_func


def test_every_exercise_has_an_autograder():
    assert len(ZIPS) == 8


@pytest.mark.parametrize("archive", ZIPS, ids=[os.path.basename(z).split("-")[0] for z in ZIPS])
def test_no_test_case_passes_on_degenerate_values(archive, tmp_path, monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")
    passed = []
    for name, fn in _cases(archive, str(tmp_path)):
        params = list(inspect.signature(fn).parameters)
        assert params, f"{name} checks no answer"
        for value in DEGENERATE:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    fn(**{p: value for p in params})
                except Exception:  # noqa: BLE001 - any failure is what a degenerate answer should get
                    continue
            passed.append(f"{name}({value!r})")
    assert not passed, f"test cases that pass on degenerate values: {passed}"


@pytest.mark.parametrize("archive", ZIPS, ids=[os.path.basename(z).split("-")[0] for z in ZIPS])
def test_no_test_case_passes_on_mixed_degenerate_values(archive, tmp_path, monkeypatch):
    """Each argument drawn independently (seed SEED, MIXES mixes a case): a case that checks
    n_mm but trusts peak_flops_used passes with n_mm fine and the peak 0."""
    import random
    monkeypatch.setenv("BRRR_QUICK", "1")
    rng, values, passed = random.Random(SEED), _mixed_values(), []
    for name, fn in _cases(archive, str(tmp_path)):
        params = list(inspect.signature(fn).parameters)
        for _ in range(MIXES):
            mix = {p: rng.choice(values) for p in params}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    fn(**mix)
                except Exception:  # noqa: BLE001 - any failure is what a degenerate answer should get
                    continue
            passed.append(f"{name}({', '.join(f'{p}={v!r:.40}' for p, v in mix.items())})")
            break           # one passing mix names the case
    assert not passed, f"test cases that pass on mixed degenerate values: {passed}"


def test_a_timing_faster_than_the_grading_device_is_refused(monkeypatch):
    """Timings claiming 10^9 times the CPU's peak once passed."""
    import brrr
    from brrr.grade import context
    monkeypatch.setattr(context, "grader_device", lambda: {"peak_flops": 1e11, "peak_bandwidth": 1e10})
    honest = brrr.Timing(samples=[1e-3, 1.1e-3, 1.2e-3], floor=1e-8, backend="cpu", mode="flush")
    assert context.measured("t", honest, flops=1e7) is honest          # 1e10 FLOP/s
    forged = brrr.Timing(samples=[1e-6], floor=1e-8, backend="cpu", mode="flush")     # 1e13 FLOP/s
    with pytest.raises(AssertionError, match="over 2 times this device's peak"):
        context.measured("t", forged, flops=1e7)
    instant = brrr.Timing(samples=[1e-12], floor=1e-8, backend="cpu", mode="flush")
    with pytest.raises(AssertionError, match="less than any call takes"):
        context.measured("t", instant)
    with pytest.raises(AssertionError, match="should be the Timing"):
        context.measured("t", {"median": 1.0}, flops=1e7)


@pytest.mark.parametrize("archive", ZIPS, ids=[os.path.basename(z).split("-")[0] for z in ZIPS])
def test_every_test_case_that_reads_a_timing_bounds_it(archive, tmp_path):
    """A test case that derives anything from a Timing's median checks that Timing against the grading
    device first (brrr.grade.context.measured, or its own bound from grader_device): a forged
    timing of 1e-12 s once earned the points of every rate computed from it."""
    unbounded = []
    for name, fn in _cases(archive, str(tmp_path)):
        source = inspect.getsource(fn)
        timings = set(re.findall(r"(\w+)\.median\b", source)) - {"np", "numpy", "statistics"}
        if timings and not re.search(r"\b(measured|grader_device)\(", source):
            unbounded.append(name)
    assert not unbounded, f"test cases that use a timing without bounding it: {unbounded}"
