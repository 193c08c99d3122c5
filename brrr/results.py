"""Measurements as plain data: tidy records plus where they came from.

A :class:`Result` is a list of records (one dict per measurement) and a ``meta``
dict (device, library versions, date, the command that made it). It saves to JSON
and loads back, so figures can be re-drawn without measuring again.

The record schema (version :data:`SCHEMA`, written into every JSON file) names each
measured quantity once, whatever made it:

=================  ==========================================================
``seconds``        median seconds per call
``min_seconds``    fastest sample, seconds per call
``iqr_seconds``    inter-quartile range of the samples, seconds
``floor_seconds``  what the timer reports for an empty call, seconds
``nbytes``         bytes one call moves (reads + writes)
``flops``          floating-point operations one call performs
``backend``        where it ran: 'cuda' or 'cpu' (never anything else)
``fuser``          what fused a chain of operators ('brrr', 'torch_compile', ...)
=================  ==========================================================

Files written before the schema had a version (version 1) used ``min``, ``iqr``,
``floor``, ``bytes``, and ``backend`` for the fuser; :meth:`Result.from_dict` renames
them on reading, so old files and shipped reference records keep working.
"""
from __future__ import annotations

import datetime
import functools
import glob
import json
import math
import os
from pathlib import Path
import platform
import sys
from dataclasses import dataclass, field


def versions() -> dict:
    """Versions of Python and of the libraries that may have done the measuring."""
    out = {"python": platform.python_version()}
    for name in ("brrr", "numpy", "numba", "torch", "cupy"):
        module = sys.modules.get(name)
        if module is None:
            try:
                module = __import__(name)
            except Exception:
                continue
        out[name] = getattr(module, "__version__", "unknown")
    return out


def provenance(device_summary: dict, command: str = "", **extra) -> dict:
    """Meta data for a result: the device summary it is handed (:func:`brrr.device.provenance` hands this
    device's), versions, UTC date and the command."""
    meta = {"device": device_summary, "versions": versions(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": command}
    meta.update(extra)
    return meta


def needs_measurements(verdict):
    """Decorate a function of measurements (a worked problem's verdict, a table): where one it
    is handed as a positional argument is None, because a replayed build has no record of it
    and :func:`brrr.reference.measure` has said so on the page, it returns None."""
    @functools.wraps(verdict)
    def judged(*args, **kwargs):
        if any(arg is None for arg in args):
            return None
        return verdict(*args, **kwargs)
    return judged


REFERENCE_DIR = Path(__file__).resolve().parent / "data" / "reference"
"""Where the record sets brrr ships live: one folder per device (:mod:`brrr.reference`)."""


def record_set_folder(set_name: str) -> Path:
    """The folder of the record set ``set_name``: a shipped set's name, or a path to a folder of
    records (any name with a '/'); ValueError naming the shipped sets where it is missing or empty."""
    folder = Path(set_name) if "/" in set_name or os.sep in set_name else REFERENCE_DIR / set_name
    if not folder.is_dir() or not any(folder.glob("*.json")):
        if folder.parent != REFERENCE_DIR:
            raise ValueError(f"BRRR_REPLAY={set_name!r} is no folder of brrr records (*.json)")
        have = ", ".join(sorted(p.name for p in REFERENCE_DIR.iterdir() if p.is_dir()))
        raise ValueError(f"BRRR_REPLAY={set_name!r} names no record set in {REFERENCE_DIR} (have: {have})")
    return folder


SCHEMA = 2
_RENAMED = {"min": "min_seconds", "iqr": "iqr_seconds", "floor": "floor_seconds", "bytes": "nbytes"}
BACKENDS = ("cuda", "cpu")


def upgrade_record(record: dict) -> dict:
    """A schema-1 record with today's field names (a new dict; values unchanged)."""
    out = {_RENAMED.get(key, key): value for key, value in record.items()}
    if "backend" in out and out["backend"] not in BACKENDS and "fuser" not in out:
        out["fuser"] = out.pop("backend")
    return out


def ran_on_cpu(device_summary) -> bool:
    """Whether a record set's device summary (``meta["device"]``, or a :class:`brrr.Device`)
    describes a CPU run."""
    backend = getattr(device_summary, "backend", None) or (device_summary or {}).get("backend")
    return backend == "cpu"


def frame(data):
    """A DataFrame from a Result, a DataFrame, a list of records or one record."""
    import pandas as pd
    if hasattr(data, "records") and hasattr(data, "meta"):
        return pd.DataFrame(data.records)
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, dict):
        return pd.DataFrame([data])
    if isinstance(data, (list, tuple)):
        return pd.DataFrame(list(data))
    raise TypeError(f"expected a brrr.Result, a DataFrame or a list of records, got {type(data).__name__}")


@dataclass
class Result:
    """Tidy records and their provenance. ``reference=True`` marks shipped reference runs."""
    name: str
    records: list = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    def to_frame(self):
        """The records as a pandas DataFrame."""
        import pandas as pd
        return pd.DataFrame(self.records)

    def to_dict(self) -> dict:
        return {"schema": SCHEMA, "name": self.name, "meta": self.meta, "records": self.records}

    def to_json(self, path: str) -> str:
        """Write to ``path`` as JSON, atomically (never half a file); returns the path."""
        from .cache import write_text
        write_text(path, json.dumps(self.to_dict(), indent=1, default=_plain))
        return path

    @classmethod
    def from_dict(cls, data: dict) -> "Result":
        if not isinstance(data, dict):
            raise ValueError(f"not a brrr result: expected a JSON object, got {type(data).__name__}")
        for key in ("name", "records", "meta"):
            if key not in data:
                raise ValueError(f"not a brrr result: the JSON has no {key!r} field")
        schema = data.get("schema", 1)
        if schema not in range(1, SCHEMA + 1):
            raise ValueError(f"result schema {schema!r} is not one this brrr reads (1 to {SCHEMA}): "
                             f"it was written by a newer brrr, or it is not a brrr result")
        records = list(data["records"])
        if schema < SCHEMA:
            records = [upgrade_record(r) for r in records]
        return cls(name=data["name"], records=records, meta=dict(data["meta"]))

    @classmethod
    def load(cls, path: str) -> "Result":
        """Read a result written by :meth:`to_json`."""
        with open(path) as f:
            return cls.from_dict(json.load(f))

    @property
    def is_reference(self) -> bool:
        return bool(self.meta.get("reference"))

    def __len__(self):
        return len(self.records)

    def __repr__(self):
        dev = self.meta.get("device", {}).get("name", "unknown device")
        when = self.meta.get("date", "")[:10]
        ref = ", reference" if self.is_reference else ""
        notes = "".join(f"\n  note: {n}" for n in self.meta.get("notes", []))
        return f"Result({self.name!r}: {len(self.records)} records on {dev}, {when}{ref}){notes}"


def load_all(folder: str) -> list:
    """Every :class:`Result` saved as JSON in ``folder`` and its subfolders, sorted by path."""
    if not os.path.isdir(folder):
        raise ValueError(f"folder must be a directory of brrr results, got {folder!r}")
    paths = sorted(glob.glob(os.path.join(folder, "**", "*.json"), recursive=True))
    return [Result.load(p) for p in paths]


def plain(value):
    """``value`` as JSON data (a notebook output's metadata): NumPy numbers as Python ones, tuples as lists, keys as strings,
    NaN and infinities as strings ('nan', 'inf')."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [plain(v) for v in value]
    if hasattr(value, "item") and not hasattr(value, "__len__"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _plain(value):
    """JSON fallback for NumPy scalars and arrays."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    return str(value)
