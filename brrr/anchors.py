"""Published GPT-2-small (124M) throughputs to set a page's own numbers beside.

:data:`ANCHORS` holds each figure as its source states it (with the line it is read from),
:func:`anchors_table` puts them in one table with this page's rows, tokens/s per GPU, and
:func:`differences` says, from the fields alone, how the published runs differ from the page's.
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


ANCHORS = (
    Anchor("nanoGPT", "train.py, GPT-2 124M", 37.14, "% of the A100 bf16 peak (MFU)",
           "I trained the model above with a batch_size of 20 and grad_accum of 5, which runs in about 755ms "
           "on a single A100 GPU. [...] fraction of A100 used: 37.14%",
           "A100 40GB", 1, "bf16 (train.py's dtype)", "training", _NANOGPT + "transformer_sizing.ipynb",
           "2023-02-04", "one training iteration (forward, backward, AdamW) of 20 × 5 sequences of 1024 tokens",
           tokens_per_second=20 * 5 * 1024 / 0.755,
           derivation="20 × 5 sequences × 1024 tokens ÷ 0.755 s per iteration, the notebook's figures",
           mfu="37.14%", mfu_peak="A100 bf16 tensor cores, 312 TFLOPS"),
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
           mfu_source=_LLMC + "discussions/481"),
    Anchor("modded-nanogpt", "record #21, re-timed", 2.997, "minutes to ≤3.28 FineWeb val loss",
           "21 | 2.997 minutes | 21st record with new timing | 02/01/25 | [log] | not a new record, just "
           "re-timing #21 [...]; log: step:1770/1770 val_loss:3.2788 train_time:179828ms",
           "H100 80GB HBM3", 8, "bf16, fp8 lm-head matmul", "training", _MODDED + _R21 + "/README.md",
           "2025-02-01", "timed training (validation excluded) of a modernised 124M GPT with Muon to the "
           "loss llm.c's GPT-2 reaches, data parallel over 8 GPUs",
           tokens_per_second=1770 * 8 * 48 * 1024 / 179.828,
           derivation="1770 steps × 8 GPUs × 48×1024 tokens ÷ 179.828 s, from the record's log "
                      "(records/020125_RuleTweak/eff63a8c-2f7e-4fc5-97ce-7f600dae0bc7.txt, same commit)"),
    Anchor("modded-nanogpt", "record #89 (current)", 1.23, "minutes to ≤3.28 FineWeb val loss",
           "89 | 1.23 minutes | MLP down projection in FP8 with efficient delayed scaling metric | 07/17/26",
           "H100 80GB HBM3", 8, "bf16, fp8 lm head and MLP forward", "training",
           _MODDED + "f411b3d346aa52d3504324ca93c230fd84c6c07f/README.md", "2026-07-17",
           "timed training to the same loss as #21 with more changes, 'under 400M tokens' (README)",
           derivation="not derivable: the README gives only 'under 400M tokens'"),
)

_FORMATS = (("fp8", ("fp8", "float8")), ("bf16", ("bf16", "bfloat16")), ("fp16", ("fp16", "float16", "half")),
            ("tf32", ("tf32",)), ("fp32", ("fp32", "float32")))


def _formats(precision: str) -> set:
    """The number formats named in ``precision`` ('bf16, fp8 head' -> {'bf16', 'fp8'})."""
    text = precision.lower().replace("bfloat16", "bf16")
    return {fmt for fmt, words in _FORMATS if any(w in text for w in words)}


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


def differences(own_kind: str, own_precision: str, own_gpus: int, own_device: str = None,
                anchors=ANCHORS, own_mfu: bool = True) -> list:
    """Sentences on how ``anchors`` differ from this page's run (its kind, 'training' or 'inference';
    precision; GPU count; GPU name; ``own_mfu``: whether it has an MFU), each chosen by comparing the fields."""
    out, needs_mfu = [], False
    compare = ": compare MFU, not tokens/s" if own_mfu else ""
    for kind in dict.fromkeys(a.kind for a in anchors if a.kind != own_kind):
        group = [a for a in anchors if a.kind == kind]
        s = f"The published figures of {_names(group)} are for {kind}; this page's run is {own_kind}."
        if {kind, own_kind} == {"training", "inference"}:
            s += (" A training step adds a backward pass (about twice the forward's FLOPs) and an optimizer "
                  f"step, so at equal MFU it moves about a third of the tokens a second{compare}.")
            needs_mfu = True
        out.append(s)
    own = _formats(own_precision)
    for fmt, _ in _FORMATS:
        group = [a for a in anchors if fmt in _formats(a.precision) and fmt not in own]
        if group and fmt == "fp8":
            out.append(f"The runs of {_names(group)} do some matmuls in fp8, whose tensor-core peak is above "
                       f"bf16's; this page's run uses {own_precision}.")
        elif group:
            out.append(f"The runs of {_names(group)} compute in {fmt}; this page's run uses {own_precision}.")
    for n in dict.fromkeys(a.gpus for a in anchors if a.gpus != own_gpus):
        group = [a for a in anchors if a.gpus == n]
        out.append(f"The runs of {_names(group)} used {n} GPU{'s' * (n > 1)} at once"
                   f"{' (data parallel)' * (n > 1)}, this page's run {own_gpus}: the table gives tokens/s per GPU.")
    if own_device:
        for model in dict.fromkeys(a.hardware.split()[0] for a in anchors):
            if model.lower() not in own_device.lower():
                group = [a for a in anchors if a.hardware.split()[0] == model]
                out.append(f"The runs of {_names(group)} used {model}s, this page's run {own_device}, "
                           f"whose peak differs{compare}.")
                needs_mfu = True
    if needs_mfu and not own_mfu:
        out.append(f"MFU would compare these runs with this page's, but this page's {own_kind} run has none: no "
                   "peak here bounds its precision.")
    return out
