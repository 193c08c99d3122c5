"""This CPU's peaks, measured once and cached: copy bandwidth (bytes/s) and float32/float64
matmul FLOP/s, each the best of several rounds, stored with the spread of the rounds.

:class:`brrr.Device` asks :func:`cached_entry` for them the first time a CPU peak is needed;
:func:`measured_cpu_peaks` is the public entry. The cache file is written by :mod:`brrr.cache`.
"""
from __future__ import annotations

import datetime
import functools
import os
import platform
import re
import statistics
import subprocess
import time
from typing import Optional

from . import cache, config
from .checks import positive
from .hardware import cpu_name, last_level_cache_bytes

## cpu_peaks.json holds {"schema": CPU_PEAKS_SCHEMA, "peaks": {machine key: entry}}, where an
# entry is what measured_cpu_peaks returns. Anything else (another schema, a wrong shape,
# a symlink) is ignored with a warning and measured again; see brrr.cache for the writing rules.

CPU_PEAKS_FILE = "cpu_peaks.json"
CPU_PEAKS_SCHEMA = 3  # bump when the measurement or the format changes: older caches are measured again
PEAK_UNITS = {"bandwidth": "bytes/s", "flops_float32": "FLOP/s", "flops_float64": "FLOP/s"}
_PEAK_LABELS = {"bandwidth": "the copy bandwidth (np.copyto)", "flops_float32": "the float32 matmul rate",
                "flops_float64": "the float64 matmul rate"}
_MIN_ROUNDS = 5
_AGREE = 0.10  # the two best rounds must agree this closely (relative) for a peak to count as reproduced


def roof_copy_bytes() -> int:
    """Bytes per array of the copy that measures the bandwidth peak: 8x the last-level cache brrr
    sizes against (:func:`brrr.hardware.last_level_cache_bytes`, capped), at least 64 MiB."""
    return max(8 * last_level_cache_bytes(), 64 * 2 ** 20) // 4 * 4


def _loader() -> str:
    """The path of this process's dynamic loader (ld.so), read from /proc/self/maps."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if re.search(r"/ld-linux[^/]*\.so[.\d]*$", path):
                    return path
    except OSError:
        pass
    return "/lib64/ld-linux-x86-64.so.2"


@functools.lru_cache(maxsize=None)
def streaming_store_threshold() -> Optional[int]:
    """Bytes above which the C library's ``memcpy`` (what ``np.copyto`` calls for a contiguous
    copy) writes with streaming (non-temporal) stores, or None where that cannot be read.

    glibc on x86-64 copies anything larger than its ``x86_non_temporal_threshold`` tunable with
    stores that go straight to memory; a smaller copy uses ordinary stores, each of which first
    reads its destination's cache line (write-allocate), so memory moves 3 bytes for every 2 a
    copy counts. ``ld.so --list-tunables`` prints the threshold this machine uses.
    """
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64") \
            or platform.libc_ver()[0] != "glibc":
        return None
    try:
        out = subprocess.run([_loader(), "--list-tunables"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"glibc\.cpu\.x86_non_temporal_threshold:\s*(0x[0-9a-fA-F]+|\d+)", out)
    return int(found.group(1), 0) if found else None


def store_facts() -> dict:
    """How this CPU's copies store, for a result's meta: ``arch`` (``platform.machine()``),
    ``streaming_store_threshold`` (see :func:`streaming_store_threshold`; None if unknown) and
    ``roof_copy_bytes`` (bytes per array of the copy behind the cached bandwidth peak)."""
    return {"arch": platform.machine(), "streaming_store_threshold": streaming_store_threshold(),
            "roof_copy_bytes": roof_copy_bytes()}


def _round_best(fn, work: float, seconds: float, min_calls: int = 2) -> float:
    """Best rate (``work`` per second) of ``fn`` over at least ``min_calls`` calls and ``seconds`` s.

    NaN where a call took no measurable time.
    """
    best = float("inf")
    calls, start = 0, time.perf_counter()
    while calls < min_calls or time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        calls += 1
    return work / best if best > 0 else float("nan")


def _reproduced(rates: list) -> bool:
    """True when the two best rounds agree within ``_AGREE`` (the best is no one-off)."""
    top = sorted(rates)[-2:]
    return len(top) == 2 and top[0] >= (1 - _AGREE) * top[1]


def _measure_cpu_rates(quick: bool) -> tuple:
    """Measure this CPU in interleaved rounds: ``({name: [best rate of each round]}, method)``.

    Names are those of ``PEAK_UNITS``: copy bandwidth in bytes/s (a buffer 8x the
    last-level cache, at least 64 MiB; one read and one write per element) and
    float32/float64 matmul FLOP/s. Each round times every quantity in turn, so the
    rounds spread over the whole time: on a busy machine some land in a quiet
    moment. Rounds go on for at least ``window`` seconds and 5 rounds, then until,
    for every quantity, the two best rounds agree within 10%, or the ``budget`` is
    spent (quick mode: 1.5 and 3 s; else 3 and 10 s).
    """
    import numpy as np
    n = roof_copy_bytes() // 4
    src = np.ones(n, dtype=np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # fault the pages in before timing
    size = 512 if quick else 2048
    tasks = {"bandwidth": (functools.partial(np.copyto, dst, src), 2 * src.nbytes)}
    for dtype in ("float32", "float64"):
        a = np.ones((size, size), dtype=dtype)
        b = np.ones((size, size), dtype=dtype)
        c = np.empty((size, size), dtype=dtype)
        np.matmul(a, b, out=c)
        tasks[f"flops_{dtype}"] = (functools.partial(np.matmul, a, b, out=c), 2 * size ** 3)
    round_seconds, window, budget = (0.03, 1.5, 3.0) if quick else (0.1, 3.0, 10.0)
    rates = {name: [] for name in tasks}
    start = time.perf_counter()
    while True:
        for name, (fn, work) in tasks.items():
            rates[name].append(_round_best(fn, work, round_seconds))
        elapsed = time.perf_counter() - start
        if len(rates["bandwidth"]) >= _MIN_ROUNDS and elapsed >= window and (
                elapsed >= budget or all(_reproduced(r) for r in rates.values())):
            break
    method = (f"best of {len(rates['bandwidth'])} rounds of np.copyto on {src.nbytes // 2**20} MiB "
              f"and {size}x{size} np.matmul")
    return rates, method


def _is_positive_number(x) -> bool:
    try:
        positive("value", x)
    except (TypeError, ValueError):
        return False
    return True


def _rates_problem(rates: dict) -> Optional[str]:
    """What is wrong with measured ``rates`` (zero, negative, NaN...), or None."""
    for name, unit in PEAK_UNITS.items():
        values = rates.get(name)
        if not values:
            return f"{_PEAK_LABELS[name]} was not measured"
        for x in values:
            if not _is_positive_number(x):
                return f"{_PEAK_LABELS[name]} came out as {x!r} {unit}"
    return None


def _peaks_entry(rates: dict, method: str, quick: bool, started: float) -> dict:
    """A cache entry from measured rates: the best round as the peak, and the spread of the rounds."""
    entry = {name: float(max(rates[name])) for name in PEAK_UNITS}
    entry["spread"] = {name: {"min": float(min(rates[name])), "median": float(statistics.median(rates[name])),
                              "max": float(max(rates[name]))} for name in PEAK_UNITS}
    entry.update(rounds=len(rates["bandwidth"]), method=method, date=datetime.date.today().isoformat(),
                 measured_at=started, quick=quick)
    return entry


def _measure_checked(quick: bool) -> dict:
    """Measure this CPU's peaks (a cache entry). A zero, negative or NaN rate is measured
    once more; if it comes out wrong again, RuntimeError."""
    print("brrr: measuring this CPU's peak bandwidth and FLOP/s once (cached for next time)...")
    for attempt in (1, 2):
        started = time.time()
        rates, method = _measure_cpu_rates(quick)
        problem = _rates_problem(rates)
        if problem is None:
            entry = _peaks_entry(rates, method, quick, started)
            for name, spread in entry["spread"].items():
                if not _reproduced(rates[name]):
                    print(f"brrr: note: {_PEAK_LABELS[name]} was noisy (rounds from {spread['min']:.3g} to "
                          f"{spread['max']:.3g} {PEAK_UNITS[name]}); was another program busy? "
                          f"brrr.device(refresh=True) measures again.")
            return entry
        if attempt == 1:
            print(f"brrr: {problem}; measuring again...")
    raise RuntimeError(f"measuring this CPU's peaks failed twice: {problem}, expected a finite positive "
                       f"rate; nothing was cached")


def _json_type(x) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number",
             type(None): "null"}
    return names.get(type(x), type(x).__name__)


def _entry_problem(entry) -> Optional[str]:
    """Why a cached entry is unusable (missing key, wrong type, not finite positive...), or None."""
    if not isinstance(entry, dict):
        return f"the entry is a JSON {_json_type(entry)}, expected an object"
    for name, unit in PEAK_UNITS.items():
        if name not in entry:
            return f"{name!r} is missing"
        if not _is_positive_number(entry[name]):
            return f"{name!r} is {entry[name]!r}, expected a finite positive number ({unit})"
    spread = entry.get("spread")
    if not isinstance(spread, dict):
        return f"'spread' is {spread!r}, expected an object"
    for name in PEAK_UNITS:
        s = spread.get(name)
        if not (isinstance(s, dict) and all(_is_positive_number(s.get(k)) for k in ("min", "median", "max"))
                and s["min"] <= s["median"] <= s["max"]):
            return (f"the spread of {name!r} is {s!r}, expected min <= median <= max, "
                    f"each a finite positive number")
    rounds = entry.get("rounds")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        return f"'rounds' is {rounds!r}, expected a positive whole number"
    if not _is_positive_number(entry.get("measured_at")):
        return f"'measured_at' is {entry.get('measured_at')!r}, expected a time in Unix seconds"
    for key, kind in (("method", str), ("date", str), ("quick", bool)):
        if not isinstance(entry.get(key), kind):
            return f"{key!r} is {entry.get(key)!r}, expected a {_json_type(kind())}"
    return None


def _read_peaks(path: str, key: str) -> tuple:
    """``(valid entries of the cache file, this machine's entry or None)``.

    A file or an entry that cannot be used gets one warning line saying why.
    """
    try:
        data = cache.read_json(path)
    except ValueError as e:
        cache.warn(f"ignoring the CPU peaks cache: {e}; measuring again")
        return {}, None
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        problem = f"it holds a JSON {_json_type(data)}, expected an object"
    elif "schema" not in data:
        problem = "it has no 'schema' version (written by an older brrr)"
    elif data["schema"] != CPU_PEAKS_SCHEMA or isinstance(data["schema"], bool):
        problem = f"its schema is {data['schema']!r}, expected {CPU_PEAKS_SCHEMA} (written by another brrr)"
    elif not isinstance(data.get("peaks"), dict):
        problem = f"'peaks' is {data.get('peaks')!r}, expected an object"
    else:
        problem = None
    if problem:
        cache.warn(f"ignoring the CPU peaks cache {path}: {problem}; measuring again")
        return {}, None
    entries = {k: v for k, v in data["peaks"].items() if _entry_problem(v) is None}
    if key in data["peaks"] and key not in entries:
        cache.warn(f"ignoring the cached CPU peaks in {path}: {_entry_problem(data['peaks'][key])}; "
                   f"measuring again")
    return entries, entries.get(key)


def cached_entry(not_before: Optional[float] = None) -> dict:
    """This machine's cached CPU peaks, measured (and cached) if there is no valid entry
    or it was measured before ``not_before`` (Unix seconds).

    Concurrent runs take turns under the cache's lock: a run that waited reads what
    the run before it measured instead of measuring at the same time.
    """
    import numpy as np
    quick = config.quick_mode()
    key = f"{cpu_name()}|{os.cpu_count()}|numpy {np.__version__}|quick={quick}"
    path = os.path.join(config.cache_dir(), CPU_PEAKS_FILE)
    with cache.locked(path):
        entries, entry = _read_peaks(path, key)
        if entry is not None and (not_before is None or entry["measured_at"] >= not_before):
            return entry
        entry = _measure_checked(quick)
        entries[key] = entry
        try:
            cache.write_json(path, {"schema": CPU_PEAKS_SCHEMA, "peaks": entries})
        except OSError as e:
            cache.warn(f"could not save the CPU peaks to {path} ({e.strerror or e}); "
                       f"they will be measured again next time")
    return entry


def measured_cpu_peaks(refresh: bool = False) -> dict:
    """This CPU's peaks, measured once and cached in ``<cache dir>/cpu_peaks.json``.

    Returns ``bandwidth`` (bytes/s), ``flops_float32`` and ``flops_float64`` (FLOP/s),
    each the best of several rounds, with ``spread`` ({name: {min, median, max}} of the
    rounds' best rates, same units), ``rounds``, ``method``, ``date``, ``measured_at``
    (Unix seconds) and ``quick``. The cache is keyed by CPU model, thread count, NumPy
    version and quick mode, so a different machine or library measures again.
    ``refresh=True`` measures again (unless another run measured after this call began).
    """
    if not isinstance(refresh, bool):
        raise TypeError(f"refresh must be True or False, got {refresh!r}")
    return cached_entry(not_before=time.time() if refresh else None)
