"""A record set is data from a stranger: :func:`check_set` reads one only after checking it, and refuses it with
an error naming the file and the field (:class:`RecordSetError`) where anything is off.

It checks, in order:

* the folder holds plain files only (no symbolic link, no folder; a file not named ``*.json`` is never read), each
  ``<experiment>.json`` at most MAX_FILE_BYTES and all of them at most MAX_SET_BYTES;
* each is JSON a :class:`~brrr.results.Result` reads, named as its file, with its provenance (device, date,
  versions, command);
* every time (a field ``seconds`` or ``*_seconds``, a Timing's ``samples`` and ``floor``: one, a list or a dict of
  them) is a finite number of seconds of at least zero, or null;
* every rate is within RATE_MARGIN of the device's spec: FLOP/s (``gflops``, ``flops_per_second``, a Timing's
  fastest call) against its highest FLOP peak, B/s against its DRAM bandwidth where the bytes outgrow its
  last-level cache; a GPU's summary claims no peak above its datasheet's;
* every record is of one device.
"""
from __future__ import annotations

import json
import math
import os
import re
from datetime import datetime
from pathlib import Path

from .results import BACKENDS, Result
from .specs import lookup

MAX_FILE_BYTES = 16 * 2 ** 20     # the largest shipped record is about 0.1 MiB
MAX_SET_BYTES = 256 * 2 ** 20
RATE_MARGIN = 2.0                 # a rate over twice the spec is no measurement
NAME = re.compile(r"[A-Za-z0-9_.-]+\.json")
PROVENANCE = ("device", "date", "versions", "command")


class RecordSetError(ValueError):
    """A record set refused: ``path`` (the file or folder), ``field`` (where in it) and why."""

    def __init__(self, path, field: str, why: str):
        self.path, self.field = str(path), field
        super().__init__(f"{path}: {field}: {why}")


def check_set(folder) -> dict:
    """``{experiment: Result}`` of the record set in ``folder``, every file checked (module docstring)."""
    folder = Path(folder)
    if folder.is_symlink() or not folder.is_dir():
        raise RecordSetError(folder, "folder", "is not a folder (a record set is a folder of *.json files)")
    out, total, device = {}, 0, None
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        path = folder / entry.name
        if entry.is_symlink():
            raise RecordSetError(path, "file", "is a symbolic link; a record set holds plain files only")
        if not entry.is_file(follow_symlinks=False):
            raise RecordSetError(path, "file", "is not a plain file; a record set holds plain files only")
        if not entry.name.endswith(".json"):
            continue                # a note beside the records (README, SOURCE): never read
        if not NAME.fullmatch(entry.name):
            raise RecordSetError(path, "file name", "is not <experiment>.json (letters, digits, '_', '.', '-')")
        size = entry.stat(follow_symlinks=False).st_size
        total += size
        if size > MAX_FILE_BYTES or total > MAX_SET_BYTES:
            raise RecordSetError(path, "size", f"{size:,} bytes ({total:,} in the set so far): a record is at most "
                                 f"{MAX_FILE_BYTES:,} bytes, a set at most {MAX_SET_BYTES:,}")
        result = check_record(path)
        summary = (result.meta["device"]["name"], result.meta["device"]["backend"])
        if device is not None and summary != device:
            raise RecordSetError(path, "meta.device", f"is {summary[0]} ({summary[1]}), where the set's other "
                                 f"records are of {device[0]} ({device[1]}): a set is one device's")
        device, out[path.stem] = summary, result
    if not out:
        raise RecordSetError(folder, "folder", "holds no records (*.json)")
    return out


def check_record(path) -> Result:
    """The Result in the file at ``path``, checked as one record of a set."""
    path = Path(path)
    with open(path, "rb") as f:
        raw = f.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise RecordSetError(path, "size", f"over {MAX_FILE_BYTES:,} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
        for key, kind in (("records", list), ("meta", dict)):
            if isinstance(data, dict) and key in data and not isinstance(data[key], kind):
                raise RecordSetError(path, key, f"must be a JSON {'list' if kind is list else 'object'}")
        result = Result.from_dict(data)
    except RecordSetError:
        raise
    except RecursionError:
        raise RecordSetError(path, "JSON", "is nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as exc:   # JSONDecodeError is a ValueError, and so is from_dict's
        raise RecordSetError(path, "JSON", f"is not a brrr record ({exc})") from None
    if not isinstance(result.name, str) or result.name != path.stem:
        raise RecordSetError(path, "name", f"is {result.name!r}, not the file's name {path.stem!r}")
    _check_provenance(path, result.meta)
    if not all(isinstance(r, dict) for r in result.records):
        raise RecordSetError(path, "records", "must be a list of JSON objects")
    peaks = _peaks(path, result.meta["device"])
    for where, key, value, parent in _fields(result.records, "records"):
        _check_value(path, where, key, value, parent, peaks)
    for where, key, value, parent in _fields(result.meta, "meta"):
        if _is_time(key):
            _check_value(path, where, key, value, parent, peaks)
    return result


def _check_provenance(path, meta):
    missing = [k for k in PROVENANCE if k not in meta]
    if missing:
        raise RecordSetError(path, f"meta.{missing[0]}", "is missing: a record says where, when, with which "
                             "versions and by which command it was measured")
    device = meta["device"]
    if not isinstance(device, dict) or not isinstance(device.get("name"), str) or device.get("backend") not in BACKENDS:
        raise RecordSetError(path, "meta.device", f"must name the device and its backend ({' or '.join(BACKENDS)})")
    for key in ("peak_bandwidth", "peak_flops_float32"):
        if not _number(device.get(key)) or not math.isfinite(device[key]) or device[key] <= 0:
            raise RecordSetError(path, f"meta.device.{key}", f"must be a positive number, got {device.get(key)!r}")
    try:
        datetime.fromisoformat(str(meta["date"]))
    except ValueError:
        raise RecordSetError(path, "meta.date", f"is no ISO date: {meta['date']!r}") from None
    if not isinstance(meta["versions"], dict) or not all(isinstance(v, str) for v in meta["versions"].values()):
        raise RecordSetError(path, "meta.versions", "must map each library to its version")
    if not isinstance(meta["command"], str) or not meta["command"]:
        raise RecordSetError(path, "meta.command", "must be the command that made the record")


def _peaks(path, device) -> dict:
    """{'flops': highest FLOP/s, 'bandwidth': B/s, 'cache': bytes} to bound the rates by: a known GPU's datasheet
    (and its summary may claim no more), else the summary's own."""
    claimed = {"flops": max(v for k, v in device.items() if k.startswith("peak_flops") and _number(v) and v > 0),
               "bandwidth": device["peak_bandwidth"], "cache": device.get("l2_bytes") or 0}
    spec = lookup(device["name"]) if device["backend"] == "cuda" else None
    if spec is None:
        return claimed
    sheet = {"flops": max(p for p in (spec.fp32, spec.tf32_tensor, spec.fp16_tensor, spec.bf16_tensor) if p),
             "bandwidth": spec.bandwidth, "cache": spec.l2_bytes}
    for key in ("flops", "bandwidth"):
        if claimed[key] > 1.01 * sheet[key]:
            raise RecordSetError(path, "meta.device", f"claims a peak {key} of {claimed[key]:.4g}, above the "
                                 f"{spec.name} datasheet's {sheet[key]:.4g}")
    return {**sheet, "cache": max(sheet["cache"], claimed["cache"])}


def _fields(value, where):
    """(where, key, value, the object holding it) of every field in ``value``'s objects, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{where}.{key}"
            yield here, key, item, value
            yield from _fields(item, here)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _fields(item, f"{where}[{i}]")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_time(key) -> bool:
    return key in ("seconds", "samples", "floor") or key.endswith("_seconds")     # "samples", "floor": a Timing's


def _check_value(path, where, key, value, parent, peaks):
    if key == "samples" and isinstance(value, list) and value and all(_number(t) and t > 0 for t in value):
        least = min(value)       # a brrr.Timing: its fastest call's rates, as the FLOP/s and B/s fields below
        if _number(parent.get("flops")):
            _check_value(path, where, "gflops", parent["flops"] / least / 1e9, parent, peaks)
        if _number(parent.get("nbytes")):
            _check_value(path, where, "gbps", parent["nbytes"] / least / 1e9, parent, peaks)
    if _is_time(key):     # one time, [times] or {part: time}
        for t in value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]:
            if t is not None and (not _number(t) or not math.isfinite(t) or t < 0):
                raise RecordSetError(path, where, f"is {t!r}: a time is a finite number of seconds, at least 0")
    elif key in ("gflops", "flops_per_second") and _number(value):
        rate = value * (1e9 if key == "gflops" else 1)
        if not math.isfinite(rate) or rate > RATE_MARGIN * peaks["flops"]:
            raise RecordSetError(path, where, f"is {rate:.4g} FLOP/s, over {RATE_MARGIN:g} times the device's highest "
                                 f"peak ({peaks['flops']:.4g} FLOP/s): faster than the hardware allows")
    elif key == "gbps" and _number(value) and _number(parent.get("nbytes")) and parent["nbytes"] > peaks["cache"]:
        rate = value * 1e9
        if not math.isfinite(rate) or rate > RATE_MARGIN * peaks["bandwidth"]:
            raise RecordSetError(path, where, f"is {rate:.4g} B/s for {parent['nbytes']:,.0f} bytes, more than its "
                                 f"cache holds, over {RATE_MARGIN:g} times its DRAM bandwidth ({peaks['bandwidth']:.4g} B/s)")
