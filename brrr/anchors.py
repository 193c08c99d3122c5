"""Published GPT-2-small (124M) throughputs to set a page's own numbers beside.

:data:`ANCHORS` holds each figure as its source states it (with the line it is read from),
:func:`anchors_table` puts them in one table with this page's rows (:func:`page_rows`), tokens/s per GPU,
and :func:`peaks` gives the bfloat16 tensor-core peak of each anchor's GPU (:mod:`brrr.specs`), the peak
their MFU is against, to set beside the page's own.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

_NANOGPT = "https://github.com/karpathy/nanoGPT/blob/3341b4cecc9d3a315330ad372c5473cf8de5addd/"
_LLMC = "https://github.com/karpathy/llm.c/"
_MODDED = "https://github.com/KellerJordan/modded-nanogpt/blob/"
_R21 = "662a291a98eb9fb7571729c3052101ce9655d839"


@dataclass(frozen=True)
class Anchor:
    """One published figure for a GPT-2-small run, as its source states it."""
    name: str            # the project
    run: str             # which of its runs
    figure: float        # the number the source states
    unit: str            # its unit
    quote: str           # the source's line(s) it is read from
    hardware: str        # GPU model
    gpus: int            # GPUs the figure is for
    precision: str       # number formats of its matmuls
    kind: str            # 'training' or 'inference'
    url: str             # the source, at a commit where there is one
    date: str            # of the run or the source (ISO)
    measures: str        # what the figure measures, in words
    tokens_per_second: Optional[float] = None   # all its GPUs together, tokens/s; None: not derivable
    derivation: str = ""  # how tokens_per_second follows from stated figures
    mfu: str = ""         # MFU as stated ('' where none is)
    mfu_peak: str = ""    # the peak that MFU is a share of
    mfu_source: str = ""  # where the MFU is stated, if not at url
    spec: str = ""        # the GPU's key in brrr.specs.GPU_SPECS


ANCHORS = (
    Anchor("nanoGPT", "train.py, GPT-2 124M", 37.14, "% of the A100 bf16 peak (MFU)",
           "I trained the model above with a batch_size of 20 and grad_accum of 5, which runs in about 755ms "
           "on a single A100 GPU. [...] fraction of A100 used: 37.14%",
           "A100 40GB", 1, "bf16 (train.py's dtype)", "training", _NANOGPT + "transformer_sizing.ipynb",
           "2023-02-04", "one training iteration (forward, backward, AdamW) of 20 × 5 sequences of 1024 tokens",
           tokens_per_second=20 * 5 * 1024 / 0.755,
           derivation="20 × 5 sequences × 1024 tokens ÷ 0.755 s per iteration, the notebook's figures",
           mfu="37.14%", mfu_peak="A100 bf16 tensor cores, 312 TFLOPS", spec="A100-40GB"),
    Anchor("llm.c", "train_gpt2cu, GPT-2 124M repro", 300, "ms per step of 524,288 tokens (about)",
           "# 18,865 steps of 524,288 tokens/step / # on 8X A100 80GB SXM ($14/hr) steps in ~300ms/iter; "
           "discussion #481: 'With llm.c, which is quite efficient at up to ~60% model flops utilization, "
           "reproducing this model on one 8X A100 80GB SXM node takes ~90 minutes.'",
           "A100 80GB SXM", 8, "bf16 (Makefile default)", "training",
           _LLMC + "blob/a0d5dbbda6ff10172d83ab2506aed0245c3b210b/scripts/run_gpt2_124M.sh", "2024-05-30",
           "training steps of the 10B-token FineWeb reproduction (~90 minutes in all), data parallel over 8 GPUs",
           tokens_per_second=524_288 / 0.300,
           derivation="524,288 tokens per step ÷ ~300 ms per step, the script's figures",
           mfu="up to ~60%", mfu_peak="bf16 tensor cores (llm.c prints 'bf16 MFU')",
           mfu_source=_LLMC + "discussions/481", spec="A100-80GB-SXM"),
    Anchor("modded-nanogpt", "record #21, re-timed", 2.997, "minutes to ≤3.28 FineWeb val loss",
           "21 | 2.997 minutes | 21st record with new timing | 02/01/25 | [log] | not a new record, just "
           "re-timing #21 [...]; log: step:1770/1770 val_loss:3.2788 train_time:179828ms",
           "H100 80GB HBM3", 8, "bf16, fp8 lm-head matmul", "training", _MODDED + _R21 + "/README.md",
           "2025-02-01", "timed training (validation excluded) of a modernised 124M GPT with Muon to the "
           "loss llm.c's GPT-2 reaches, data parallel over 8 GPUs",
           tokens_per_second=1770 * 8 * 48 * 1024 / 179.828,
           derivation="1770 steps × 8 GPUs × 48×1024 tokens ÷ 179.828 s, from the record's log "
                      "(records/020125_RuleTweak/eff63a8c-2f7e-4fc5-97ce-7f600dae0bc7.txt, same commit)",
           spec="H100-SXM"),
    Anchor("modded-nanogpt", "record #89 (current)", 1.23, "minutes to ≤3.28 FineWeb val loss",
           "89 | 1.23 minutes | MLP down projection in FP8 with efficient delayed scaling metric | 07/17/26",
           "H100 80GB HBM3", 8, "bf16, fp8 lm head and MLP forward", "training",
           _MODDED + "f411b3d346aa52d3504324ca93c230fd84c6c07f/README.md", "2026-07-17",
           "timed training to the same loss as #21 with more changes, 'under 400M tokens' (README)",
           derivation="not derivable: the README gives only 'under 400M tokens'", spec="H100-SXM"),
)

def _link(url: str) -> str:
    """An HTML link to a GitHub ``url`` named by repository and file (or discussion), not the whole address."""
    import html
    parts = url.split("github.com/", 1)[-1].strip("/").split("/")
    repo, rest = parts[1] if len(parts) > 1 else url, parts[2:]
    if rest[:1] == ["blob"]:
        name = f"{repo}/{'/'.join(rest[2:])}"
    elif rest[:1] == ["discussions"]:
        name = f"{repo} discussion #{rest[1]}"
    else:
        name = "/".join([repo] + rest)
    return f'<a href="{html.escape(url)}">{html.escape(name)}</a>'


def anchors_table(own=(), anchors=ANCHORS):
    """The anchors and this page's ``own`` rows (dicts: label, kind, device, precision,
    tokens_per_second in tokens/s, mfu as a fraction, peak it is against, gpus (default 1)) in one
    styled table; tokens/s per GPU, with where each comes from."""
    import pandas as pd
    from .book import table
    rows = [{"run": f"{a.name}, {a.run}", "kind": a.kind, "hardware": a.hardware, "GPUs": a.gpus,
             "precision": a.precision,
             "tokens/s per GPU": None if a.tokens_per_second is None else a.tokens_per_second / a.gpus,
             "tokens/s from": a.derivation + (f"; ÷ {a.gpus} GPUs" if a.tokens_per_second and a.gpus > 1 else ""),
             "MFU": a.mfu or "–", "MFU of": a.mfu_peak or "–", "as published": f"{a.figure:g} {a.unit}",
             "source": _link(a.url) + (f"; MFU: {_link(a.mfu_source)}" if a.mfu_source else "")} for a in anchors]
    for r in own:
        gpus = r.get("gpus", 1)
        tps, mfu = r.get("tokens_per_second"), r.get("mfu")
        rows.append({"run": f"this page: {r['label']}", "kind": r["kind"], "hardware": r["device"], "GPUs": gpus,
                     "precision": r["precision"], "tokens/s per GPU": None if tps is None else tps / gpus,
                     "tokens/s from": "measured on this page", "MFU": "–" if mfu is None else f"{100 * mfu:.1f}%",
                     "MFU of": r.get("peak") or "–", "as published": "–", "source": "this page"})
    return table(pd.DataFrame(rows), {"tokens/s per GPU": "int"})


def _names(group) -> str:
    names = list(dict.fromkeys(a.name for a in group))
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def peaks(anchors=ANCHORS) -> list:
    """[(GPU model, the projects that used it, its dense bfloat16 tensor-core peak in FLOP/s)], one per
    model (the first word of its hardware: 'A100', 'H100'), from its spec (:data:`brrr.specs.GPU_SPECS`):
    the peak the anchors' bf16 MFU is against."""
    from .specs import GPU_SPECS
    out = []
    for model in dict.fromkeys(a.hardware.split()[0] for a in anchors):
        group = [a for a in anchors if a.hardware.split()[0] == model]
        out.append((model, _names(group), GPU_SPECS[group[0].spec].bf16_tensor))
    return out


def page_rows(train=None, steps=None) -> list:
    """This page's rows for :func:`anchors_table`: the fastest training configuration of ``train``
    (:func:`brrr.experiments.capstone_train.train_steps`) and the fastest forward pass of ``steps``
    (:func:`brrr.experiments.capstone.run_steps`), each with its device, tokens/s, precision and MFU;
    none for a run that is None or did not measure them."""
    from .mfu import mfu, mfu_peak
    rows = []
    for run, kind, key in ((train, "training", "seconds"), (steps, "inference", "seconds_per_token")):
        ran = [r for r in (run.records if run is not None else ()) if not r.get("skipped") and r.get(key)]
        if not ran:
            continue
        best = min(ran, key=lambda r: r[key])
        device = (run.meta.get("device") or {}).get("name") or "this device"
        share = mfu(run, best)         # None where the run's one peak does not bound this dtype
        rows.append({"label": f"{kind}, {best['label']}", "kind": kind, "device": device,
                     "precision": best["dtype"], "tokens_per_second": best["tokens_per_second"],
                     "mfu": share, "peak": None if share is None else mfu_peak(run)["name"], "gpus": 1})
    return rows
