"""Chapter 7's softmax worked problem on every shipped BERT profile (review 07_08 items 10, 15):
the answer's regime is the chapter's three-regime rule, the same label the profile gives its
softmax row, and the check's reasons for a replayed row cite the replay floor, not other programs."""
import pytest

from brrr.prose import worked
from brrr.prose import worked_more as wm
from brrr.reference import as_frame
from record_sets import sets_with
from worked_fakes import FakeDevice


def _device_of(t):
    s = t.attrs["summary"]
    return FakeDevice(flops=s["peak_flops_float32"], bandwidth=s["peak_bandwidth"], on_gpu=s["backend"] == "cuda",
                      l2=s.get("l2_bytes", 0))


@pytest.mark.parametrize("runs", sets_with("profile_bert"))
def test_softmax_answer_uses_the_profiles_regime_and_floor(runs, monkeypatch):
    import brrr.reference
    monkeypatch.setattr(brrr.reference, "load", lambda *args, **kwargs: [])
    t = as_frame(runs["profile_bert"])
    row = t[t.op == "_softmax"].iloc[0]
    batch, heads, seq, _ = row.input_shapes[0]
    dev = _device_of(t)
    dev.backend = t.attrs["backend"]
    answer = wm.softmax_row(batch, heads, seq, dev, fixed_cost=t.attrs["overhead_seconds"],
                            replay_floor=t.attrs["replay_floor_seconds"])
    assert answer.facts["regime"] == row.regime
    if answer.facts["regime"] == "overhead-bound":   # review 07_08 item 22: which measurement of the fixed cost
        assert "the fixed cost of a call measured with the profile" in str(answer)
    assert f"**{row.regime}**" in str(answer)
    checked = str(wm.check(row.seconds, answer, "The softmax row"))
    assert "other programs" not in checked and "Chapter 3" not in checked
    if "more than once" in checked:                      # the reasons for a slower row: the floor, as measured
        floor = t.attrs["replay_floor_seconds"]
        assert "replay floor" in checked
        assert ("is only" in checked) == (floor < worked.FIXED_MATTERS * answer.facts["seconds"])
