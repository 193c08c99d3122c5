"""Chapter 8's training and decode sentences rendered from every record set that holds their runs
(tests/record_sets.py): each states the fastest configuration's figures, names the one peak of its
MFU, and each decode batch the sweep ran."""
import pytest

from brrr.prose import decode, training
from brrr.prose import words as w
from record_sets import close_to, sets_with


@pytest.mark.parametrize("runs", sets_with("capstone_train"))
def test_the_training_sentence_on_every_record_set(runs):
    from brrr.experiments.capstone_train import measured
    from brrr.mfu import mfu, mfu_peak
    run = runs["capstone_train"]
    text = str(training.training(run))
    ran = measured(run)
    if not ran:
        assert "No training configuration ran here" in text
        return
    best = min(ran, key=lambda r: r["seconds"])
    assert f"**{best['label']}**" in text and w.integer(best["tokens_per_second"]) in text
    share = mfu(run, best)
    assert (share is None and "no MFU" in text) or (0 < share <= 1 and f"MFU (of {mfu_peak(run)['name']}" in text)
    for r in run.records:
        if r.get("skipped"):
            assert r["skipped"] in text


@pytest.mark.parametrize("runs", sets_with("capstone_decode"))
def test_the_decode_sentence_on_every_record_set(runs):
    run = runs["capstone_decode"]
    prose = decode.decode_steps(run)
    text = str(prose)
    ran = {r["batch"] for r in run.records if r["mode"] == "eager" and not r.get("skipped")}
    assert set(prose.facts["batches"]) == ran
    for batch in ran:
        assert f"at batch {w.integer(batch)} it took" in text.lower()
        for mode, ratio in prose.facts["batches"][batch].items():
            assert ratio > 0 and (close_to(ratio, text) or "below the floor" in text), (batch, mode, ratio)
