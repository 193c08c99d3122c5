"""brrr.anchors: published GPT-2-small throughputs, their table beside this page's rows, and the
sentences on how they differ from the page's run."""
import dataclasses

import pytest

from brrr.anchors import ANCHORS, Anchor, anchors_table, differences

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


def test_an_inference_run_is_told_the_anchors_are_training():
    said = differences("inference", "bf16", 8, anchors=ANCHORS)
    kind = [s for s in said if "training" in s]
    assert len(kind) == 1 and "nanoGPT, llm.c and modded-nanogpt" in kind[0] and "compare MFU" in kind[0]
    assert not any("training" in s for s in differences("training", "bf16", 8))


def test_bf16_is_told_of_fp8_and_fp32_of_bf16():
    bf16 = differences("training", "bfloat16", 8)
    assert [s for s in bf16 if "fp8" in s] == [next(s for s in bf16 if "fp8" in s)]
    assert "modded-nanogpt" in next(s for s in bf16 if "fp8" in s)
    assert "nanoGPT" not in next(s for s in bf16 if "fp8" in s)
    assert not any("compute in bf16" in s for s in bf16)
    fp32 = differences("training", "float32", 8)
    assert any("compute in bf16" in s and "float32" in s for s in fp32)
    assert differences("training", "bf16 with fp8", 8,
                       anchors=[a for a in ANCHORS if "fp8" in a.precision]) == []


def test_one_gpu_is_told_of_eight_and_of_the_gpu_models():
    said = differences("training", "bf16", 1)
    gpus = [s for s in said if "GPUs at once" in s]
    assert len(gpus) == 1 and "llm.c and modded-nanogpt" in gpus[0] and "nanoGPT," not in gpus[0]
    assert "8 GPUs" in gpus[0] and "per GPU" in gpus[0]
    eight = differences("training", "bf16", 8)
    assert [s for s in eight if "GPU at once" in s and "nanoGPT" in s]
    models = [s for s in differences("training", "bf16", 1, own_device="NVIDIA A100-SXM4-80GB") if "peak differs" in s]
    assert len(models) == 1 and "H100s" in models[0] and "modded-nanogpt" in models[0]
    assert len([s for s in differences("training", "bf16", 1, own_device="Tesla T4") if "peak differs" in s]) == 2
    assert "MFU compares" not in " ".join(models) and "compare MFU, not tokens/s" in models[0]
    none = differences("training", "bf16", 1, own_device="AMD EPYC", own_mfu=False)    # a CPU's bf16 step: no MFU
    assert none and not any("compare MFU" in s for s in none)
    assert none[-1] == ("MFU would compare these runs with this page's, but this page's training run has none: no "
                        "peak here bounds its precision.") and sum("MFU would" in s for s in none) == 1


def test_differences_follow_the_fields_not_the_names():
    one = Anchor("x", "run", 1.0, "u", "1.0", "H100 SXM", 4, "fp16", "inference", "https://github.com/x", "2024",
                 "m", derivation="stated")
    said = differences("training", "fp16", 4, own_device="NVIDIA H100 80GB HBM3", anchors=[one])
    assert said == ["The published figures of x are for inference; this page's run is training. A training step adds a backward "
                    "pass (about twice the forward's FLOPs) and an optimizer step, so at equal MFU it moves about "
                    "a third of the tokens a second: compare MFU, not tokens/s."]


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
