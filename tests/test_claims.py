"""The claim vocabulary: each kind's sentence, read back, says what its numbers say, on values at and
around every threshold, at 0, infinity, NaN and None; bad numbers are refused with the argument named."""
import json
import math
import re

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from brrr import claims as c
from brrr.results import plain
from brrr.roofline import COMPUTE, MEMORY, OVERHEAD, Roofline

ROOF = Roofline(peak_flops=67e12, peak_bandwidth=4.8e12)
EPS = 1e-6
BAD = [0.0, -1.0, math.inf, -math.inf, math.nan, None, "1", True]
positive = st.floats(min_value=1e-12, max_value=1e15, allow_nan=False, allow_infinity=False)
# ratios at and around every threshold, and anywhere
ratio = st.one_of(st.sampled_from([1 + c.SAME, 1 - c.SAME, 1, c.ABOVE_ROOF, c.UNEXPLAINED, 1 / c.ABOVE_ROOF])
                  .flatmap(lambda t: st.sampled_from([t * (1 - EPS), t, t * (1 + EPS)])),
                  st.floats(min_value=1e-4, max_value=1e4))
settings.register_profile("brrr", max_examples=150, deadline=None)
settings.load_profile("brrr")


def stated(text: str) -> list:
    """The numbers written in ``text``, in order."""
    return [float(m.replace(",", "")) for m in re.findall(r"(?<![\w.])\d[\d,]*(?:\.\d+)?", text)]


@given(value=positive, unit=st.sampled_from(["s", "B", "B/s", "FLOP/s", "FLOP/byte", "%", "x", ""]))
def test_a_quantity_reads_back_as_itself_to_its_digits(value, unit):
    if unit == "%":
        value = value % 10
    printed = c.quantity(value, unit)
    back, half = c.read_back(printed)
    assert abs(back - value) <= half * 1.0001 + 1e-12 * value, printed


@given(value=positive, base=positive)
@example(value=1.1, base=1.0).via("the edge of 'about the same'")
@example(value=1.0, base=1.1 / (1 + 1e-9)).via("just inside it, from below")
def test_compare_says_about_the_same_exactly_within_same_and_states_the_ratio(value, base):
    for unit in ("s", "B/s"):
        claim = c.Compare("this", value, "that", base, unit=unit)
        claim.check()
        text, r = claim.text(), value / base
        assert ("about" in text) == (abs(r - 1) <= c.SAME)
        said = text.split("This ", 1)[1]
        if "as long as" in text and "about" not in text:
            assert r > 1
            c.agrees(said, r)
        if "as fast as" in text:
            assert r < 1
            c.agrees(said, 1 / r)
        if unit == "B/s" and "% of" in text:
            assert r < 1
            c.agrees(said, r)


@given(measured=positive, r=ratio, cache=st.sampled_from([None, 1e6, 1e12]), cpu=st.booleans())
def test_a_bound_states_its_share_and_always_says_why_above_the_roof(measured, r, cache, cpu):
    claim = c.Bound("the kernel", measured, measured * r, "the roof", nbytes=1e9, cache_bytes=cache, measured_roof=cpu)
    claim.check()
    text = claim.text()
    assert ("above the roof" in text) == (r > 1)
    c.agrees(text.split(" at ", 1)[1], r)
    if r > c.ABOVE_ROOF:
        reason = ("fit in the" in text, "measured" in text, "is wrong" in text)
        assert sum(reason) == 1
        assert reason[0] == (cache == 1e12) and reason[1] == (cache != 1e12 and cpu)


@given(rate=positive, r=ratio, unit=st.sampled_from(["FLOP/s", "B/s"]))
def test_a_rate_against_its_peak_states_its_share(rate, r, unit):
    claim = c.Bound("the kernel", rate, rate / r, "the peak", unit=unit)
    claim.check()
    assert ("above the roof" in claim.text()) == (r > 1)
    c.agrees(claim.text().split(" reached ", 1)[1], r)


@given(rate=positive, peak=positive)
def test_a_rate_against_a_peak_states_its_share(rate, peak):
    claim = c.Bound("the layer", rate, peak, "the FP32 peak", unit="FLOP/s")
    claim.check()
    c.agrees(claim.text().split(" reached ", 1)[1], rate / peak)


@given(rate=positive, peak=positive)
def test_mfu_always_names_its_peak(rate, peak):
    claim = c.Bound("the layer", rate, peak, "the FP32 peak", unit="FLOP/s", mfu=True)
    claim.check()
    assert "MFU against the FP32 peak" in claim.text() and f"of {c.quantity(peak, 'FLOP/s')}" in claim.text()


@given(flops=st.floats(0, 1e15), nbytes=st.floats(0, 1e12), call=st.one_of(st.none(), positive),
       seconds=st.one_of(st.none(), positive))
def test_a_regime_is_the_roofline_rule_unless_no_bound_explains_the_time(flops, nbytes, call, seconds):
    assume(max(flops / ROOF.peak_flops, nbytes / ROOF.peak_bandwidth, call or 0) > 0)
    claim = c.Regime("the call", flops, nbytes, ROOF, call_cost=call, seconds=seconds)
    claim.check()
    largest = max(flops / ROOF.peak_flops, nbytes / ROOF.peak_bandwidth, call or 0)
    text = claim.text()
    if seconds is not None and seconds > c.UNEXPLAINED * largest:
        assert claim.outcome == c.UNEXPLAINED_REGIME and "none of them explains it" in text
        assert not any(word in text for word in (COMPUTE, MEMORY, OVERHEAD))
    else:
        rule = ROOF.with_ceilings(overhead=call).regime(flops, nbytes)
        assert claim.outcome == rule and f"is {rule} by the roofline" in text
        assert ("alone" in text) == (call is None)


@given(flops=st.floats(0, 1e12), nbytes=st.floats(1, 1e10), call=positive, seconds=positive)
def test_a_gpu_busier_than_the_cost_of_issuing_a_call_is_never_overhead_bound(flops, nbytes, call, seconds):
    claim = c.Regime("the row", flops, nbytes, ROOF, call_cost=call, seconds=seconds, device_time=True)
    claim.check()
    work = max(flops / ROOF.peak_flops, nbytes / ROOF.peak_bandwidth)
    if seconds > call:
        assert claim.outcome != OVERHEAD
        assert (claim.outcome == c.UNEXPLAINED_REGIME) == (seconds > c.UNEXPLAINED * work)
    else:
        assert claim.outcome == ROOF.with_ceilings(overhead=call).regime(flops, nbytes)


def test_a_regime_at_the_edge_of_unexplained():
    call = 6.5e-6
    for seconds, outcome in ((c.UNEXPLAINED * call * (1 - EPS), OVERHEAD), (c.UNEXPLAINED * call * (1 + EPS), c.UNEXPLAINED_REGIME)):
        assert c.Regime("x", 1.0, 1.0, ROOF, call_cost=call, seconds=seconds).outcome == outcome


@given(ys=st.lists(positive, min_size=2, max_size=12))
def test_a_shape_is_read_from_the_points_it_names(ys):
    xs = [2 ** i for i in range(len(ys))]
    claim = c.Shape("the rate", xs, ys, "n =")
    claim.check()
    near = [y >= (1 - c.SAME) * max(ys) for y in ys]
    text, outcome = claim.text(), claim.outcome
    if outcome == "flattens":
        x = int(re.search(r"flattened from n = ([\d,]+)", text).group(1).replace(",", ""))
        i = xs.index(x)
        assert all(near[i:]) and not any(near[:i]) and 0 < i < len(ys) - 1
    assert (outcome == "flat") == all(near)
    assert (outcome == "falls after its best") == (not near[-1])
    assert (outcome == "still rising") == (near == [False] * (len(ys) - 1) + [True])


@given(parts=st.lists(st.floats(0, 10), min_size=1, max_size=4), slack=st.floats(1e-3, 10))
def test_a_share_states_each_part_and_refuses_parts_above_the_whole(parts, slack):
    whole = sum(parts) + slack
    claim = c.Share(whole, {f"part {i}": p for i, p in enumerate(parts)}, "of the time")
    claim.check()
    for i, p in enumerate(parts):
        c.agrees(re.search(rf"([\d.]+%) (?:went )?to part {i}\b", claim.text()).group(1), p / whole)
    with pytest.raises(c.ClaimError):
        c.Share(0.5 * sum(parts) + 1e-9, {f"part {i}": p for i, p in enumerate(parts)}, "of the time").check() \
            if sum(parts) > 1e-6 else (_ for _ in ()).throw(c.ClaimError("nothing to exceed"))


@given(iqr=st.floats(0, 10), median=positive)
@example(iqr=c.NOISE_LIMIT * (1 + EPS), median=1.0).via("just noisy")
@example(iqr=c.NOISE_LIMIT, median=1.0).via("just steady")
def test_noise_is_said_only_above_the_one_noise_limit(iqr, median):
    claim = c.Noisy("the copy", iqr, median)
    claim.check()
    assert bool(claim.text()) == (iqr / median > c.NOISE_LIMIT)


def test_a_cause_is_said_only_where_its_evidence_holds():
    evidence = c.Compare("the pair", 2.0, "one", 1.0)
    assert c.Cause("Because.", evidence, when=("longer",)).text() == "Because."
    assert c.Cause("Because.", evidence, when=("same",)).text() == ""
    with pytest.raises(ValueError, match="evidence"):
        c.Cause("Because.", "not a claim", when=("same",))


@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_bad_numbers_are_refused_naming_the_argument(bad):
    makers = {"Value value": lambda: c.Value(bad, "s"),
              "Compare value": lambda: c.Compare("a", bad, "b", 1.0),
              "Compare base": lambda: c.Compare("a", 1.0, "b", bad),
              "Bound measured": lambda: c.Bound("a", bad, 1.0, "the roof"),
              "Bound allowed": lambda: c.Bound("a", 1.0, bad, "the roof"),
              "Regime seconds": lambda: c.Regime("a", 1.0, 1.0, ROOF, seconds=bad),
              "Shape ys": lambda: c.Shape("a", [1, 2], [1.0, bad], "n ="),
              "Share whole": lambda: c.Share(bad, {"x": 0.0}, "of it"),
              "Noisy median": lambda: c.Noisy("a", 0.1, bad)}
    for label, make in makers.items():
        if (label == "Value value" and bad == 0.0) or (label == "Regime seconds" and bad is None):
            continue    # a value may be 0, and a regime needs no measured time
        owner, name = label.split()
        with pytest.raises(ValueError, match=f"{owner}: {name}"):
            make()


def test_every_kind_round_trips_through_the_notebook_metadata():
    made = [c.Value(1.23e-5, "s", "one cos"), c.Compare("a", 2.0, "b", 1.0), c.Bound("a", 1.0, 2.0, "the roof"),
            c.Regime("a", 1e9, 1e6, ROOF, call_cost=5e-6, seconds=1e-3), c.Shape("a", [1, 2, 4], [1, 2, 2], "n ="),
            c.Share(1.0, {"x": 0.5}, "of it"), c.Missing("worked_copy"), c.Noisy("a", 0.5, 1.0),
            c.Cause("Because.", c.Compare("a", 2.0, "b", 1.0), when=("longer",))]
    assert {type(m).__name__ for m in made} == set(c.KINDS)
    made.append(c.Share(1.0, {"y": 0.25, "x": 0.5}, "of it"))     # parts not in their keys' order
    for claim in made:
        back = c.check_all(json.loads(json.dumps(plain(claim.to_dict()), sort_keys=True)))  # as nbformat
        assert back.text() == claim.text() and back.outcome == claim.outcome
    with pytest.raises(c.ClaimError, match="now renders"):
        c.check_all({**made[1].to_dict(), "text": "A took half as long as b."})


class _Run:
    def __init__(self, name, seconds):
        self.meta = {"device": {"name": name}, "date": "2026-11-28T05:36:17"}
        self.seconds = seconds


def test_say_renders_the_same_claims_for_each_reference_run_and_names_a_missing_record():
    def claims_of(run):
        return [c.Compare("one call", run.seconds, "a microsecond", 1e-6, name="call"), None,
                c.Noisy("it", 0.0, 1.0)]
    said = say = c.say(claims_of, _Run("NVIDIA H200", 3e-6), [_Run("NVIDIA H100", 1e-6)])
    assert said.text.split("\n\n")[1].startswith("On the NVIDIA H100 (measured 2026-11-28, drawn in grey): One call")
    assert said.facts == {"call": "longer", "NVIDIA H100: call": "same"} and len(said.claims) == 3
    text, meta = said._repr_markdown_()
    assert [d["kind"] for d in meta["brrr"]["claims"]] == ["Compare", "Noisy", "Compare"]
    missing = c.say(claims_of, None, record="worked_copy")
    assert "`worked_copy`" in missing.text and c.say(claims_of, None) is None
    assert say is said


def test_fill_puts_each_claim_in_its_slot():
    filled = c.fill("The copy moves {bytes} in at least {least}: it is {regime}.",
                    bytes=c.Value(2 ** 29, "B"), least=c.Value(1.1e-4, "s"), regime="memory-bound")
    assert filled.text == "The copy moves 512 MiB in at least 110 µs: it is memory-bound."
    assert [type(x).__name__ for x in filled.claims] == ["Value", "Value"]


def test_a_share_keeps_the_order_of_its_parts_through_a_notebooks_metadata():
    import json
    made = c.Share(1.0, {"z": 0.5, "a": 0.2}, "of it")
    back = c.check_all(json.loads(json.dumps(made.to_dict(), sort_keys=True)))     # nbformat sorts keys
    assert back.text() == made.text() and list(back.parts) == ["z", "a"]


def test_a_share_of_a_whole_of_unknown_size_states_no_size():
    made = c.Share(1.0, {"overhead-bound operators": 0.96}, "time its operators took", unit="%")
    assert made.text() == "Of the time its operators took, 96% went to overhead-bound operators." and not made.check()
