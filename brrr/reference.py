"""Reference runs: the chapters' experiments measured on real GPUs, shipped with brrr.

A reader without a GPU (or reading the published HTML, built on a CPU) still
sees what a chapter teaches: every measured figure draws, beside the live run,
the same experiment from the reference devices, in grey and labelled with the
device and the date. The runs are brrr :class:`~brrr.Result` files in
``brrr/data/reference/<device>/<experiment>.json``, made by executing the
chapters themselves on that device::

    python scripts/make_reference.py        # every chapter, full size; see its docstring

That script sets ``BRRR_RECORD`` to the device's folder, and every
:func:`beside` call in a chapter then saves the live result it is handed under
its experiment's name, with the provenance the Result carries (device, date,
library versions) and the command. So a reference is, by construction, the same
call with the same arguments as the chapter's live run.
"""
from __future__ import annotations

import os
from pathlib import Path

from .results import Result

REFERENCE_DIR = Path(__file__).resolve().parent / "data" / "reference"
RECORD_ENV = "BRRR_RECORD"            # folder to save live results into (the reference script sets it)
COMMAND_ENV = "BRRR_RECORD_COMMAND"   # the command that made them, for the provenance


def as_result(data, name: str) -> Result:
    """``data`` as a :class:`Result` named ``name``: a Result as it is; a pandas DataFrame
    (a profiler table) as its rows, with its ``attrs`` kept in ``meta['attrs']``."""
    if isinstance(data, Result):
        return data
    if hasattr(data, "to_dict") and hasattr(data, "attrs"):
        from .results import provenance
        meta = provenance(f"brrr.profile(...) -> {name}", attrs=dict(data.attrs))
        return Result(name=name, records=data.reset_index().to_dict("records"), meta=meta)
    raise TypeError(f"data must be a brrr.Result or a pandas DataFrame, got {type(data).__name__}")


def as_frame(result: Result):
    """A Result made by :func:`as_result` from a DataFrame, as that DataFrame again (attrs too)."""
    frame = result.to_frame()
    frame.attrs.update(result.meta.get("attrs", {}))
    return frame


def load(name: str, backend: str = "cuda", folder=None) -> list:
    """The shipped reference runs of experiment ``name``, one per device, sorted by device.

    ``backend='cuda'`` (default) keeps the GPU runs, ``'cpu'`` the CPU runs, ``None``
    all. ``folder`` reads another set of runs (default: the ones shipped with brrr).
    Returns ``[]`` where no device has a run of that experiment yet.
    """
    if not isinstance(name, str) or not name or os.sep in name:
        raise ValueError(f"name must be an experiment name such as 'bandwidth_vs_size', got {name!r}")
    if backend not in ("cuda", "cpu", None):
        raise ValueError(f"backend must be 'cuda', 'cpu' or None, got {backend!r}")
    base = Path(folder) if folder is not None else REFERENCE_DIR
    runs = []
    for path in sorted(base.glob(f"*/{name}.json")):
        result = Result.load(str(path))
        result.meta["reference"] = True
        if backend is None or result.meta.get("device", {}).get("backend") == backend:
            runs.append(result)
    return runs


def record_sets(folder=None) -> dict:
    """Every set of runs under ``folder`` (default: the shipped references):
    ``{device folder: {experiment name: Result}}``."""
    base = Path(folder) if folder is not None else REFERENCE_DIR
    sets = {}
    for path in sorted(base.glob("*/*.json")):
        sets.setdefault(path.parent.name, {})[path.stem] = Result.load(str(path))
    return sets


def beside(data, name: str = None) -> list:
    """The reference runs to draw beside a live result ``data`` (a Result or a profiler
    DataFrame, or None where nothing was measured) of experiment ``name`` (default: the
    Result's own name).

    When the environment variable ``BRRR_RECORD`` names a folder (the reference
    script sets it), ``data`` is also saved there as ``<name>.json``, marked as a
    reference run with the command that made it.
    """
    if name is None:
        if not isinstance(data, Result):
            raise ValueError("name is needed for a DataFrame, e.g. beside(table, 'profile_block')")
        name = data.name
    folder = os.environ.get(RECORD_ENV, "").strip()
    if folder and data is not None:    # None: nothing was measured here (e.g. a profile out of memory)
        result = as_result(data, name)
        saved = Result(name=name, records=result.records, meta=dict(result.meta))
        saved.meta.update(reference=True, command=os.environ.get(COMMAND_ENV, "python scripts/make_reference.py"))
        os.makedirs(folder, exist_ok=True)
        saved.to_json(os.path.join(folder, f"{name}.json"))
    return load(name)


# --- the reference appendix ------------------------------------------------------------

def _devices(runs: dict) -> list:
    """Device folders of ``runs`` (from :func:`record_sets`), GPUs first, then by name."""
    def key(folder):
        first = next(iter(runs[folder].values()))
        return (first.meta.get("device", {}).get("backend") != "cuda", folder)
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
