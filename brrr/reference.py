"""Reference runs: the chapters' experiments measured on real GPUs, shipped with brrr.

A reader without a GPU (or reading the published HTML, built on a CPU) still
sees what a chapter teaches: every measured figure draws, beside the live run,
the same experiment from the reference devices, in grey and labelled with the
device and the date. The runs are brrr :class:`~brrr.Result` files in
``brrr/data/reference/<device>/<experiment>.json``, made on that device by ``brrr record``
(:mod:`brrr.registry.record`), which runs every measurement declared in :mod:`brrr.registry`
and saves each with the provenance the Result carries (device, date, library versions) and
the command. A chapter runs the same recipe by name (:func:`measure`), so a reference is, by
construction, the same measurement with the same arguments as the chapter's live run.

Every measured number of a chapter goes through :func:`measure`, which runs the
measurement (live) or returns its record from a set (replayed, ``BRRR_REPLAY=<set>``):
the published book is the newest GPU run, replayed on a CPU, and a replayed
page holds no number measured by the machine that built it.
"""
from __future__ import annotations

import functools
import numbers
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Optional

from . import config
from .record_check import check_record, check_set
from .results import REFERENCE_DIR, Result, record_set_folder  # noqa: F401 (REFERENCE_DIR public here too)

RECORD_ENV = "BRRR_RECORD"            # a folder to save a live kernel's measurements into, as brrr record does
COMMAND_ENV = "BRRR_RECORD_COMMAND"   # the command that made them, for the provenance


def as_result(data, name: str) -> Result:
    """``data`` as a :class:`Result` named ``name``, with ``meta['kind']`` saying how to turn it
    back (:func:`as_data`): a Result as it is; a pandas DataFrame (a profiler table) as its rows,
    its ``attrs`` in ``meta['attrs']``; a :class:`~brrr.Timing` or a list of them as one record
    each; other plain data (numbers, strings, lists and dicts of them) in ``meta['value']``."""
    from .device import provenance
    from .timing import Timing
    if isinstance(data, Result):
        return data
    command = f"brrr.reference.measure({name!r}, ...)"
    if hasattr(data, "to_dict") and hasattr(data, "attrs"):
        meta = provenance(command, attrs=dict(data.attrs), kind="frame")
        return Result(name=name, records=data.reset_index().to_dict("records"), meta=meta)
    if isinstance(data, Timing):
        return Result(name=name, records=[asdict(data)], meta=provenance(command, kind="timing"))
    if isinstance(data, (list, tuple)) and data and all(isinstance(t, Timing) for t in data):
        return Result(name=name, records=[asdict(t) for t in data], meta=provenance(command, kind="timings"))
    if _plain_data(data):
        return Result(name=name, records=[], meta=provenance(command, kind="value", value=data))
    raise TypeError(f"data must be a brrr.Result, a pandas DataFrame, a brrr.Timing (or a list of them) "
                    f"or plain data (numbers, strings, lists, dicts), got {type(data).__name__}")


def _plain_data(value) -> bool:
    if value is None or isinstance(value, (numbers.Number, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain_data(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_data(v) for k, v in value.items())
    return False


def as_frame(result: Result):
    """A Result made by :func:`as_result` from a DataFrame, as that DataFrame again (attrs too)."""
    frame = result.to_frame()
    frame.attrs.update(result.meta.get("attrs", {}))
    return frame


def as_data(result: Result):
    """A Result made by :func:`as_result`, as what was measured: the Result itself, the DataFrame,
    the Timing (or list of Timings) or the plain value."""
    from .timing import Timing
    kind = result.meta.get("kind") or ("frame" if "attrs" in result.meta else "result")
    if kind == "frame":
        return as_frame(result)
    if kind == "timing":
        return Timing(**result.records[0])
    if kind == "timings":
        return [Timing(**record) for record in result.records]
    if kind == "value":
        return result.meta.get("value")
    return result


def _check_name(name):
    if not isinstance(name, str) or not name or os.sep in name:
        raise ValueError(f"name must be an experiment name such as 'bandwidth_vs_size', got {name!r}")


def set_device(runs: dict) -> dict:
    """The device summary (``meta['device']``) of a record set ``{experiment: Result}``."""
    return next(iter(runs.values())).meta.get("device", {})


def load(name: str, backend: str = "cuda", folder=None) -> list:
    """The shipped reference runs of experiment ``name``, one per device, sorted by device.

    ``backend='cuda'`` (default) keeps the GPU runs, ``'cpu'`` the CPU runs, ``None``
    all. ``folder`` reads another set of runs (default: the ones shipped with brrr; in a
    replayed build, without the replayed set, which is the page's own run).
    Returns ``[]`` where no device has a run of that experiment yet.
    """
    _check_name(name)
    if backend not in ("cuda", "cpu", None):
        raise ValueError(f"backend must be 'cuda', 'cpu' or None, got {backend!r}")
    base = Path(folder) if folder is not None else REFERENCE_DIR
    runs = []
    for path in sorted(base.glob(f"*/{name}.json")):
        if folder is None and is_replayed(path.parent):
            continue    # a replayed page shows that set as its own run, not beside it
        result = check_record(path)
        result.meta["reference"] = True
        if backend is None or result.meta.get("device", {}).get("backend") == backend:
            runs.append(result)
    return runs


def is_replayed(folder) -> bool:
    """Whether ``folder`` (a path, or a set's name in brrr/data/reference) is the record set this
    build replays (``BRRR_REPLAY``): that set is the page's own run, never a reference beside it."""
    replayed = config.replay_set()
    if not replayed:
        return False
    def where(name):
        return Path(name) if isinstance(name, Path) or "/" in str(name) else REFERENCE_DIR / name
    return where(folder).resolve() == where(replayed).resolve()


def record_sets(folder=None) -> dict:
    """Every set of runs under ``folder`` (default: the shipped references):
    ``{device folder: {experiment name: Result}}``."""
    base = Path(folder) if folder is not None else REFERENCE_DIR
    return {sub.name: check_set(sub) for sub in sorted(base.iterdir()) if sub.is_dir() and any(sub.glob("*.json"))}


def beside(data, name: str = None) -> list:
    """The reference runs to draw beside a run ``data`` (a Result or a profiler DataFrame,
    or None where nothing was measured) of experiment ``name`` (default: the Result's own
    name): :func:`load` of that name, each device's run."""
    if name is None:
        if data is None:
            return []       # a replayed set without this record: nothing to draw it beside
        if not isinstance(data, Result):
            raise ValueError("name is needed for a DataFrame, e.g. beside(table, 'profile_block')")
        name = data.name
    return load(name)


# --- measure: live, recorded or replayed -------------------------------------------------

def measure(name: str, fn=None, *args, **kwargs):
    """Measurement ``name`` of a chapter: its recipe in :mod:`brrr.registry` (``fn`` None), or ``fn(*args, **kwargs)``.

    Live: runs it and returns what it returns; where ``BRRR_RECORD`` names a folder, also saves it there as
    ``<name>.json`` with its provenance. The process's :func:`brrr.registry.context` keeps it, for a later recipe
    that reads it.
    Replayed (``BRRR_REPLAY`` names a record set): never runs it, and returns that set's
    record of ``name`` as it was returned (:func:`as_data`), no longer marked as a reference
    (it is the page's own run); where the set has none, says so on the page and returns None.
    """
    _check_name(name)
    if fn is not None and not callable(fn):
        raise TypeError(f"fn must be callable (the measurement to run), got {type(fn).__name__}")
    if fn is None and (args or kwargs):
        raise TypeError(f"measure({name!r}) runs its recipe in brrr.registry, which takes no arguments")
    if config.replay_set():
        record = replay_runs().get(name)
        if record is None:
            say_not_recorded(name)
            return None
        # the page's own run, drawn and named as a live run is (the banner says it is replayed)
        return as_data(Result(record.name, list(record.records), {**record.meta, "reference": False}))
    from . import registry
    ctx = registry.context()
    recipe = registry.lookup(name).run if fn is None else None
    started = time.perf_counter()
    data = recipe(ctx) if recipe else fn(*args, **kwargs)
    save(data, name, run_seconds=time.perf_counter() - started)
    ctx.done[name] = data
    return data


def save(data, name: str, run_seconds: Optional[float] = None, folder=None, command: Optional[str] = None,
         **extra):
    """Save ``data`` as ``<name>.json`` in ``folder`` (default: the folder ``BRRR_RECORD`` names), marked as a
    reference run with the command that made it (nothing when there is no folder or ``data`` is None).
    ``run_seconds``: wall-clock seconds the measurement took, warm-up and compiling included
    (``meta['run_seconds']``: where a chapter's time goes). ``extra``: more provenance for ``meta`` (the commit)."""
    folder = str(folder or os.environ.get(RECORD_ENV, "")).strip()
    if not folder or data is None:
        return
    result = as_result(data, name)
    saved = Result(name=name, records=result.records, meta=dict(result.meta))
    saved.meta.update(reference=True, command=command or os.environ.get(COMMAND_ENV, "brrr.reference.measure"))
    if run_seconds is not None:
        saved.meta["run_seconds"] = round(run_seconds, 3)
    saved.meta.update({k: v for k, v in extra.items() if v is not None})
    os.makedirs(folder, exist_ok=True)
    saved.to_json(os.path.join(folder, f"{name}.json"))


# --- replay -------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _load_set(set_name: str) -> dict:
    return check_set(record_set_folder(set_name))


def replay_runs() -> dict:
    """``{experiment: Result}`` of the set a replayed build shows, or {} in a live build."""
    set_name = config.replay_set()
    return _load_set(set_name) if set_name else {}


def replay_summary() -> dict:
    """The replayed set's device (``meta['device']``) and date (the newest of its records)."""
    runs = replay_runs()
    if not runs:
        raise RuntimeError(f"no record set is replayed ({config.REPLAY_ENV} is unset)")
    return {"device": dict(set_device(runs)),
            "date": max(r.meta.get("date", "")[:10] for r in runs.values()),
            "versions": dict(next(iter(runs.values())).meta.get("versions", {}))}


def say_not_recorded(name: str):
    """Say on the page that its run has no record of ``name``: where a replayed set lacks it (the build log
    lists every such name first: ``make book-replay`` runs ``scripts/replay_coverage.py``), or where a live
    run kept none (a figure drawn far below its measurement says so where it would be)."""
    if not config.replay_set():
        text = f"*Not measured here: this run kept no `{name}`.*"
    else:
        device = replay_summary()["device"].get("name", config.replay_set())
        text = (f"*Not measured here: the {device} run replayed on this page has no record of `{name}`. "
                f"Run this chapter to measure it.*")
    try:
        from IPython.display import Markdown, display
        display(Markdown(text))
    except ImportError:   # pragma: no cover - IPython comes with every notebook
        print(text, file=sys.stderr)


def newest_gpu_set(sets: dict = None) -> str:
    """The name of the GPU record set measured last (by its newest record's date) among ``sets``
    (:func:`record_sets`; default: the shipped ones), the one the published book replays;
    '' where there is none."""
    newest = ("", "")
    for name, runs in (record_sets() if sets is None else sets).items():
        if set_device(runs).get("backend") == "cuda":
            newest = max(newest, (max(r.meta.get("date", "") for r in runs.values()), name))
    return newest[1]


def recorded_names(notebook) -> list:
    """The experiment names the notebook at path ``notebook`` passes to :func:`measure`, in order."""
    import json
    import re
    with open(notebook) as f:
        cells = json.load(f)["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return re.findall(r"""reference\.measure\(\s*["']([\w.-]+)["']""", code)


# --- the reference appendix ------------------------------------------------------------

def _devices(runs: dict) -> list:
    """Device folders of ``runs`` (from :func:`record_sets`), GPUs first, then by name."""
    def key(folder):
        return (set_device(runs[folder]).get("backend") != "cuda", folder)
    return sorted(runs, key=key)


def provenance_table(runs: dict):
    """One row per device: its name, backend, the dates, library versions and command of its runs."""
    import pandas as pd
    rows = []
    for folder in _devices(runs):
        results = list(runs[folder].values())
        meta = results[0].meta
        dates = sorted(r.meta.get("date", "")[:10] for r in results)
        rows.append({"device": meta.get("device", {}).get("name", folder),
                     "backend": meta.get("device", {}).get("backend", ""),
                     "experiments": len(results),
                     "measured (UTC)": dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}",
                     "versions": ", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items()),
                     "command": sorted({r.meta.get("command", "") for r in results})[-1]})
    return pd.DataFrame(rows)


def coverage_table(runs: dict):
    """Experiments (rows) against devices (columns): the date each was measured, or None."""
    import pandas as pd
    names = sorted({name for folder in runs for name in runs[folder]})
    table = {}
    for folder in _devices(runs):
        device = next(iter(runs[folder].values())).meta.get("device", {}).get("name", folder)
        table[device] = [runs[folder][n].meta.get("date", "")[:10] if n in runs[folder] else None
                         for n in names]
    return pd.DataFrame(table, index=pd.Index(names, name="experiment"))


def draw(runs: dict, name: str, plot):
    """Experiment ``name`` of every device in ``runs`` on one chart, drawn by ``plot`` (a
    :mod:`brrr.plot` function): the first device (a GPU where there is one) as the run, the
    others as its ``reference``. For :func:`brrr.plot.roofline`, each device's own roof."""
    from . import plot as plots
    from .roofline import Roofline
    have = [runs[f][name] for f in _devices(runs) if name in runs[f]]
    if not have:
        raise ValueError(f"no device has a run of {name!r}")
    for run in have:
        run.meta["reference"] = True
    first, rest = have[0], have[1:]
    if plot is plots.roofline:
        return plot(Roofline.of_run(first), points=first, reference=rest)
    return plot(first, reference=rest)
