"""``brrr record``: every measurement of the book (:mod:`brrr.registry`) made in one process on the live device, no
notebook and no Jupyter, into one record set (a folder of ``<experiment>.json``).

A record already in the folder that passes :func:`brrr.record_check.check_record` is kept, and read back for the
measurements that need it, so a run cut short by a crash or a time limit resumes where it stopped. Each record
carries its provenance (device, date, versions, the command, the git commit where brrr runs from a clone) and
``run_seconds`` (warm-up and compiling included). The run ends with each chapter's seconds, the total and the
coverage.
"""
from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path

GPU_BOOK_SECONDS = 400     # every measurement of the book in one sitting on an H100 or H200


def slug(name: str) -> str:
    """A folder name for a device: lower case, letters, digits and dashes ('NVIDIA H200' -> 'nvidia-h200')."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def commit() -> str | None:
    """The git commit of the brrr being run, where it runs from a clone (None from an installed wheel)."""
    import subprocess
    try:
        done = subprocess.run(["git", "-C", str(Path(__file__).resolve().parent), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def record(out, chapters=None, command: str = "brrr record", echo=print) -> dict:
    """Make every registered measurement of ``chapters`` (default: all, e.g. ``['01', '08']``) into the folder
    ``out``; returns ``{name: 'made' | 'kept' | 'reused' | 'not on this device' | 'failed'}`` (a measurement that
    raises is reported in one line, and the others still run)."""
    from ..record_check import RecordSetError, check_record
    from ..reference import as_data, save
    from . import CHAPTERS, context, registry
    chapters = [c.zfill(2) for c in chapters] if chapters else list(CHAPTERS)
    unknown = [c for c in chapters if c not in CHAPTERS]
    if unknown:
        raise ValueError(f"chapters must be among {', '.join(CHAPTERS)}, got {', '.join(unknown)}")
    out = Path(out)
    ctx, made_by = context(), commit()
    todo = [m for m in registry().values() if m.chapter in chapters]
    echo(f"Recording {len(todo)} measurements on {ctx.dev.name} ({ctx.dev.backend}) into {out}")
    outcome, seconds = {}, Counter()
    for i, m in enumerate(todo, 1):
        path, where = out / f"{m.name}.json", f"[{i}/{len(todo)}] {m.chapter} {m.name}"
        if not m.applies(ctx.dev):
            outcome[m.name] = "not on this device"
            echo(f"{where}: not measured on a {ctx.dev.backend.upper()} device")
            continue
        if path.exists():
            try:
                ctx.done[m.name] = as_data(check_record(path))
                outcome[m.name] = "kept"
                echo(f"{where}: kept (recorded already)")
                continue
            except RecordSetError as error:
                echo(f"{where}: measured again, the record there was refused ({error})")
        started = time.perf_counter()
        try:
            data = ctx.done[m.name] = m.run(ctx)
        except Exception as error:  # noqa: BLE001 - one measurement that cannot run here stops no other
            outcome[m.name] = "failed"
            echo(f"{where}: failed, {type(error).__name__}: {' '.join(str(error).split())[:300]}")
            continue
        took = time.perf_counter() - started
        seconds[m.chapter] += took
        outcome[m.name] = "reused" if data is None else "made"
        save(data, m.name, run_seconds=took, folder=out, command=command, commit=made_by)
        echo(f"{where}: {took:.1f} s" + (" (the chapter reads another measurement here)" if data is None else ""))
    _summary(outcome, seconds, chapters, ctx.dev, echo)
    return outcome


def _summary(outcome: dict, seconds: Counter, chapters, dev, echo):
    for chapter in chapters:
        echo(f"  chapter {chapter}: {seconds[chapter]:.0f} s")
    budget = f" (the book's budget on a GPU: {GPU_BOOK_SECONDS} s)" if dev.on_gpu else ""
    echo(f"  all: {sum(seconds.values()):.0f} s{budget}")
    counts = Counter(outcome.values())
    echo("  coverage: " + ", ".join(f"{counts[k]} {k}" for k in ("made", "kept", "reused", "not on this device", "failed")
                                    if counts[k]) + f", of {len(outcome)} measurements")
