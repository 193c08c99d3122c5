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


def _shown(value) -> str:
    """A mix's value in a report (a fabricated Timing's own repr may fail on its samples)."""
    if hasattr(value, "samples"):
        return f"Timing(samples={value.samples!r:.30}, flops={value.flops!r}, nbytes={value.nbytes!r})"
    return f"{value!r:.40}"


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
            passed.append(f"{name}({', '.join(f'{p}={_shown(v)}' for p, v in mix.items())})")
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


def test_a_rate_beyond_the_grading_device_is_refused_bytes_too(monkeypatch):
    """Timings at 500 TB/s once scored full marks: measured bounds bytes/s (for a transfer too big
    for the cache) and the counts a Timing carries itself, as it bounds FLOP/s."""
    import brrr
    from brrr.grade import context
    monkeypatch.setattr(context, "grader_device",
                        lambda: {"peak_flops": 1e11, "peak_bandwidth": 1e10, "cache_bytes": 2 ** 20})
    honest = brrr.Timing(samples=[1e-2] * 3, floor=1e-8, backend="cpu", mode="flush", nbytes=1e8)   # 1e10 B/s
    assert context.measured("t", honest) is honest
    assert context.measured("t", honest, nbytes=1e8) is honest
    with pytest.raises(AssertionError, match="bytes/s, over 2 times this device's peak bandwidth"):
        context.measured("t", honest, nbytes=1e9)                                          # 1e11 B/s
    forged = brrr.Timing(samples=[1e-2] * 3, floor=1e-8, backend="cpu", mode="flush", nbytes=5e12)
    with pytest.raises(AssertionError, match="bytes/s"):
        context.measured("t", forged)
    cached = brrr.Timing(samples=[1e-6] * 3, floor=1e-8, backend="cpu", mode="hot", nbytes=2 ** 16)
    assert context.measured("t", cached) is cached      # it fits in the cache: faster than DRAM is fine
    claims = brrr.Timing(samples=[1e-2] * 3, floor=1e-8, backend="cpu", mode="flush", flops=1e13)
    with pytest.raises(AssertionError, match="FLOP/s"):
        context.measured("t", claims)
    for samples in ([], [math.nan], [-1e-3, 1e-3, 1e-3]):
        bad = brrr.Timing(samples=samples, floor=1e-8, backend="cpu", mode="flush")
        with pytest.raises(AssertionError, match="positive, finite times"):
            context.measured("t", bad)


def test_choice_ignores_case_and_spaces_and_nothing_else():
    from brrr.grade.context import LETTERS, REGIMES, choice
    assert choice("r", " Compute-Bound\n", REGIMES) == "compute-bound"
    assert choice("a", "B ", LETTERS) == "b"
    for wrong in ("compute bound", "computebound", "e", "", None, 1, ["a"]):
        with pytest.raises(AssertionError, match="case and spaces do not matter"):
            choice("answer", wrong, REGIMES + LETTERS)


@pytest.mark.parametrize("archive", ZIPS, ids=[os.path.basename(z).split("-")[0] for z in ZIPS])
def test_regimes_and_letters_are_read_by_one_helper(archive, tmp_path):
    """Every test case reads a regime or a letter through brrr.grade.context.choice: "Compute-bound"
    once passed a public test and failed the hidden one."""
    own = re.compile(r"\.lower\(\)|\.strip\(\)|\bin \([\"'][a-d][\"']|\bin \([\"'](compute|memory|overhead)-bound|"
                     r"\bassert (answer\w*|\w+_answer|\w*regimes?\w*(\[[^]]*\])?|\w*fix\w*|next_step|recompute_policy) "
                     r"(==|in\b)")
    found = [name for name, fn in _cases(archive, str(tmp_path)) if own.search(inspect.getsource(fn))]
    assert not found, f"test cases that compare a regime or a letter themselves: {found}"


@pytest.mark.parametrize("archive", ZIPS, ids=[os.path.basename(z).split("-")[0] for z in ZIPS])
def test_every_public_test_case_says_what_it_checked(archive, tmp_path):
    """A public test that passes says what it checked, so that "All test cases passed!" is never read as
    full marks for answers the hidden tests have yet to grade."""
    from otter.nbmeta_config import NBMetadataConfig
    from otter.test_files import create_test_file
    with zipfile.ZipFile(archive) as z:
        z.extractall(tmp_path)
    silent = []
    for path in sorted(glob.glob(os.path.join(tmp_path, "tests", "*.py"))):
        test = create_test_file(path, NBMetadataConfig())
        silent += [f"{test.name}/{case.name}" for case in test.test_cases
                   if not case.hidden and not (case.success_message or "").strip()]
    assert not silent, f"public test cases without a success message: {silent}"
