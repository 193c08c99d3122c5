"""brrr.anchors: published GPT-2-small throughputs, their table beside this page's rows, and the peak
each anchor's MFU is against."""
import dataclasses

import pytest

from brrr import specs
from brrr.anchors import ANCHORS, anchors_table, peaks

OWN = [{"label": "compiled, batch 8", "kind": "inference", "device": "Tesla T4", "precision": "fp16",
        "tokens_per_second": 12345.0, "mfu": 0.25, "peak": "the float16 tensor-core peak"},
       {"label": "training step", "kind": "training", "device": "Tesla T4", "precision": "fp16",
        "tokens_per_second": 2000.0, "mfu": None, "peak": None, "gpus": 2}]


def test_every_anchor_has_a_source_hardware_precision_and_kind():
    assert {a.name for a in ANCHORS} >= {"nanoGPT", "llm.c", "modded-nanogpt"}
    for a in ANCHORS:
        assert a.url.startswith("https://github.com/") and a.quote and a.measures
        assert a.hardware and a.gpus >= 1 and a.precision and a.unit
        assert a.kind in ("training", "inference")
        assert a.tokens_per_second is None or a.tokens_per_second > 0
        assert a.derivation, "a derived tokens/s says how; a missing one says why"
        assert str(a.figure).rstrip("0").rstrip(".") in a.quote.replace(",", ""), "the figure is in its quote"
    with pytest.raises(dataclasses.FrozenInstanceError):
        ANCHORS[0].figure = 1.0


def test_the_table_puts_the_own_rows_beside_the_anchors_with_per_gpu_rates():
    frame = anchors_table(OWN).data
    assert len(frame) == len(ANCHORS) + len(OWN)
    own = frame[frame["source"] == "this page"]
    assert list(own["run"]) == ["this page: compiled, batch 8", "this page: training step"]
    assert list(own["tokens/s per GPU"]) == [12345.0, 1000.0]
    assert list(own["MFU"]) == ["25.0%", "–"]
    llmc = frame[frame["run"].str.startswith("llm.c")].iloc[0]
    a = next(a for a in ANCHORS if a.name == "llm.c")
    assert llmc["tokens/s per GPU"] == pytest.approx(a.tokens_per_second / a.gpus)
    assert f"÷ {a.gpus} GPUs" in llmc["tokens/s from"]
    html = anchors_table(OWN).to_html()
    assert "this page: compiled, batch 8" in html and "12,345" in html
    assert len(anchors_table().data) == len(ANCHORS)


def test_each_anchor_gpu_has_its_spec_and_its_bf16_peak():
    for a in ANCHORS:
        assert a.hardware.split()[0] in specs.GPU_SPECS[a.spec].name      # the spec is of the GPU it names
    found = peaks()
    assert [m for m, _, _ in found] == list(dict.fromkeys(a.hardware.split()[0] for a in ANCHORS))
    for model, names, peak in found:
        group = [a for a in ANCHORS if a.hardware.startswith(model)]
        assert names.split(" and ")[-1] == group[-1].name and peak == specs.GPU_SPECS[group[0].spec].bf16_tensor
        assert {specs.GPU_SPECS[a.spec].bf16_tensor for a in group} == {peak}   # one peak per model


def test_sources_are_short_links_to_the_whole_address():
    import re
    html = anchors_table().to_html()
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', html)
    urls = {a.url for a in ANCHORS} | {a.mfu_source for a in ANCHORS if a.mfu_source}
    assert {href for href, _ in links} == urls
    assert ("https://github.com/karpathy/llm.c/discussions/481", "llm.c discussion #481") in links
    for href, text in links:
        assert len(text) <= 40 and "github.com" not in text, text
        assert text.split("/")[0].split(" ")[0] in href
