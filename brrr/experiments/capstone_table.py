"""Chapter 8's table of steps (:func:`steps_table`), from a run of :func:`brrr.experiments.capstone.run_steps`."""
from __future__ import annotations

REGIME_COLUMNS = ("compute-bound", "memory-bound", "overhead-bound")


def steps_table(result, references=()):
    """The steps for the page, in the order the run made them: what ran, the configuration each changed
    (builds on), how it compiled, tokens per call, time per forward pass, time per token,
    tokens per second, achieved FLOP/s, MFU against the run's one peak (named in the header) and
    each regime's share of the profiled time ('–' for a step without a profile of its own: the
    compiled steps; a column of rows no bound explains where a judged record has them, :func:`brrr.prose.capstone.judged`); each reference's time per token beside; then the chapter's steps the run's record
    lacks (:func:`not_recorded`). None for a replayed set without the run."""
    if result is None:
        return None
    import pandas as pd
    from ..book import table as styled
    from ..mfu import mfu, mfu_column
    from ..units import format_rate
    from .capstone import COMPILED_ONLY, not_recorded, profiled
    mfu_header = mfu_column(result)
    regimes = REGIME_COLUMNS + tuple(sorted({k for r in result.records for k in r.get("regime_shares") or {}}
                                            - set(REGIME_COLUMNS)))   # a judged row no bound explains
    rows = []
    labels = {r["step"]: r["label"] for r in result.records}
    for r in result.records:
        skipped = r.get("skipped")
        own = profiled(r)
        rows.append({"step": r["label"],
                     "change": "skipped" if skipped else "kept" if r.get("kept", True) else "undone",
                     "builds on": labels.get(r.get("builds_on"), "–"), "compile": r.get("compile") or "–",
                     "dtype": (r.get("dtype") or "–") + (" (TF32)" if r.get("tf32") else ""),
                     "tokens per call": r["tokens"],
                     "time per forward": None if skipped else r["seconds"],
                     "time per token": None if skipped else r["seconds_per_token"],
                     "tokens/s": None if skipped else r["tokens_per_second"],
                     "achieved": "–" if skipped or not r.get("flops_per_second") else
                     format_rate(r["flops_per_second"]),
                     mfu_header: mfu(result, r),
                     "profile": "skipped" if skipped else ("own, uncompiled" if r.get("compile") else "own") if own else
                     "not profiled (compiled)" if r["step"] in COMPILED_ONLY else "not profiled",
                     **{f"time {k}": (r["regime_shares"].get(k, 0.0) if own else None) for k in regimes}})
    rows += [{"step": s.label, "change": "not in this record"} for s in not_recorded(result)]
    out = pd.DataFrame(rows)
    formats = {"tokens per call": "int", "time per forward": "time", "time per token": "time",
               "tokens/s": "int", mfu_header: "percent",
               **{f"time {k}": "percent" for k in regimes}}
    for run in references or ():
        from ..profiler.reports import short_device_name
        got = {r["step"]: (None if r.get("skipped") else r["seconds_per_token"]) for r in run.records}
        header = f"time per token, {short_device_name(run)} (reference)"
        out[header] = [got.get(r["step"]) for r in result.records] + [got.get(s.key) for s in not_recorded(result)]
        formats[header] = "time"
    return styled(out, formats)
