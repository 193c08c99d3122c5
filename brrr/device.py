"""Which device is live (a CUDA GPU via CuPy or PyTorch, else the CPU) and its peaks.

GPU peaks come from the spec table in :mod:`brrr.specs` (each with its source) or, for a
GPU the table lacks, are derived from its device properties (:func:`brrr.specs.derived_spec`);
a GPU never gets CPU peaks. CPU peaks are *measured* on first use (NumPy copy bandwidth on a
buffer far larger than the last-level cache, float32/float64 matmul FLOP/s) and cached on disk in
``<cache dir>/cpu_peaks.json`` (see :func:`measured_cpu_peaks` and :mod:`brrr.cache`).
"""
from __future__ import annotations

import datetime
import functools
import math
import os
import platform
import statistics
import time
from dataclasses import dataclass, field
from typing import Optional

from . import cache, config, specs

_DTYPES = ("float64", "float32", "float16", "bfloat16")


def _normalise_dtype(dtype) -> str:
    name = getattr(dtype, "name", None) or str(dtype)
    name = name.replace("torch.", "")
    aliases = {"fp32": "float32", "fp64": "float64", "fp16": "float16", "half": "float16",
               "bf16": "bfloat16", "float": "float32", "double": "float64", "tf32": "float32"}
    name = aliases.get(name, name)
    if name not in _DTYPES:
        raise ValueError(f"dtype must be one of {_DTYPES} (or a NumPy/PyTorch dtype), got {dtype!r}")
    return name


@dataclass
class Device:
    """The live device and its peaks: FLOP/s, bytes/s, bytes.

    ``backend`` is 'cuda' or 'cpu'; ``array_library`` names what runs arrays on it
    ('cupy', 'torch' or 'numpy'); ``source`` says where the peaks come from.
    """
    name: str
    backend: str
    array_library: str
    l2_bytes: int
    spec: Optional[specs.GpuSpec] = None
    sm_count: Optional[int] = None
    _measured: Optional[dict] = field(default=None, repr=False)
    _peaks_not_before: Optional[float] = field(default=None, repr=False)  # Unix s; set by device(refresh=True)

    # --- peaks -------------------------------------------------------------
    def _cpu_peaks(self) -> dict:
        if self._measured is None:
            self._measured = _cpu_peaks_entry(not_before=self._peaks_not_before)
        return self._measured

    def _no_gpu_peaks(self):
        raise RuntimeError(f"no peaks for the GPU {self.name}: brrr.specs has no entry for it and its clocks "
                           f"could not be read (install CuPy, or a PyTorch whose device properties have "
                           f"clock_rate, memory_clock_rate and memory_bus_width)")

    @property
    def peak_bandwidth(self) -> float:
        """DRAM bandwidth in bytes/s (spec or derived on a GPU, measured on the CPU)."""
        if self.spec is not None:
            return self.spec.bandwidth
        if self.backend == "cuda":
            self._no_gpu_peaks()
        return self._cpu_peaks()["bandwidth"]

    def peak_flops(self, dtype="float32", tensor_cores: bool = False) -> float:
        """Peak FLOP/s for ``dtype``; ``tensor_cores=True`` asks for the matrix-unit rate.

        Where a GPU has no tensor cores for that dtype (a T4 and TF32, say) the
        general-math figure is returned; :meth:`has_tensor_cores` tells which.
        FP64 without a spec figure is the FP32 figure times the FP64:FP32 lane ratio
        of the GPU's compute capability (:func:`brrr.specs.fp64_peak`).
        On the CPU both come from a measured matmul of that dtype (float16 and
        bfloat16 fall back to float32, which is how NumPy computes them).
        """
        dtype = _normalise_dtype(dtype)
        if not isinstance(tensor_cores, bool):
            raise TypeError(f"tensor_cores must be True or False, got {tensor_cores!r}")
        if self.spec is None:
            if self.backend == "cuda":
                self._no_gpu_peaks()
            peaks = self._cpu_peaks()
            return peaks["flops_float64"] if dtype == "float64" else peaks["flops_float32"]
        s = self.spec
        if dtype == "float64":
            return specs.fp64_peak(s)
        if tensor_cores and self.has_tensor_cores(dtype):
            return {"float32": s.tf32_tensor, "float16": s.fp16_tensor, "bfloat16": s.bf16_tensor}[dtype]
        return s.fp32

    def has_tensor_cores(self, dtype="float16") -> bool:
        """Whether the spec lists a tensor-core rate for ``dtype`` (float32 means TF32)."""
        dtype = _normalise_dtype(dtype)
        if self.spec is None or dtype == "float64":
            return False
        return {"float32": self.spec.tf32_tensor, "float16": self.spec.fp16_tensor,
                "bfloat16": self.spec.bf16_tensor}[dtype] is not None

    @property
    def source(self) -> str:
        """Where the peak figures come from."""
        if self.spec is not None:
            return self.spec.source
        if self.backend == "cuda":
            return "unknown GPU: no entry in brrr.specs and its clocks could not be read; no peaks"
        p = self._cpu_peaks()
        return f"measured on this machine ({p['date']}, {p['method']})"

    @property
    def xp(self):
        """The array module for this device: ``cupy`` when CuPy drives the GPU, else ``numpy``."""
        if self.array_library == "cupy":
            import cupy
            return cupy
        import numpy
        return numpy

    def synchronize(self):
        """Wait for queued GPU work to finish (nothing to do on the CPU)."""
        if self.backend != "cuda":
            return
        if self.array_library == "cupy":
            import cupy
            cupy.cuda.Device().synchronize()
        try:
            import torch
            if torch.cuda.is_available():
                torch.cuda.synchronize()
        except ImportError:
            pass

    @property
    def ridge(self) -> float:
        """FP32 general-math ridge point, FLOP/byte."""
        return self.peak_flops("float32") / self.peak_bandwidth

    def summary(self) -> dict:
        """Plain-data description (for JSON records and ``brrr info``)."""
        out = {"name": self.name, "backend": self.backend, "array_library": self.array_library,
               "l2_bytes": self.l2_bytes, "peak_bandwidth": self.peak_bandwidth,
               "peak_flops_float32": self.peak_flops("float32"),
               "peak_flops_float32_tensor": self.peak_flops("float32", True),
               "peak_flops_float16_tensor": self.peak_flops("float16", True),
               "source": self.source}
        if self.sm_count:
            out["sm_count"] = self.sm_count
        return out

    def __repr__(self):
        return (f"Device({self.name!r}, backend={self.backend!r}, "
                f"l2={self.l2_bytes / 2**20:.1f} MiB)")


# --- detection ---------------------------------------------------------------
#
# Both detectors turn the device's properties into a dict with the keys of CuPy's
# getDeviceProperties (units as CUDA gives them: kHz, bits, bytes) and hand it to gpu_spec.

_TORCH_PROPERTIES = {"name": "name", "major": "major", "minor": "minor",
                     "multiProcessorCount": "multi_processor_count", "l2CacheSize": "L2_cache_size",
                     "clockRate": "clock_rate", "memoryClockRate": "memory_clock_rate",
                     "memoryBusWidth": "memory_bus_width"}


def gpu_spec(name: str, props: dict) -> Optional[specs.GpuSpec]:
    """The spec of the GPU ``name`` with CUDA device properties ``props`` (CuPy's keys).

    Its table entry when the name is one of the entry's aliases and the SM count agrees
    (a variant sold under the same name, or a MIG slice, does not); else peaks derived
    from ``props`` (:func:`brrr.specs.derived_spec`); else, where ``props`` lack the
    clocks, the table entry or None.
    """
    spec = specs.lookup(name)
    sms = props.get("multiProcessorCount")
    if spec is not None and (not sms or sms == spec.sm_count):
        return spec
    try:
        return specs.derived_spec(name, props)
    except ValueError:
        return spec


def _gpu_device(name: str, props: dict, array_library: str) -> Device:
    spec = gpu_spec(name, props)
    l2 = props.get("l2CacheSize") or (spec.l2_bytes if spec else 0)
    return Device(name=name, backend="cuda", array_library=array_library, l2_bytes=int(l2), spec=spec,
                  sm_count=int(props.get("multiProcessorCount") or 0) or None)


def _cuda_with_cupy() -> Optional[Device]:
    try:
        import cupy
        if not cupy.cuda.is_available():
            return None
        props = dict(cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id))
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        return _gpu_device(name, props, "cupy")
    except Exception:  # CuPy installed but no driver, no GPU, or a broken install
        return None


def _cuda_with_torch() -> Optional[Device]:
    try:
        import torch
        if not torch.cuda.is_available():
            return None
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        props = {key: getattr(p, attr) for key, attr in _TORCH_PROPERTIES.items() if hasattr(p, attr)}
        return _gpu_device(str(props["name"]), props, "torch")
    except Exception:
        return None


def cpu_name() -> str:
    """The CPU's model name (from /proc/cpuinfo where there is one)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def cpu_caches() -> dict:
    """CPU data/unified cache sizes by level name ('L1d', 'L2', 'L3'), bytes (Linux sysfs)."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    out = {}
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return out
    for entry in entries:
        try:
            def read(name):
                with open(os.path.join(base, entry, name)) as f:
                    return f.read().strip()
            level, kind, size = read("level"), read("type"), read("size").upper()
        except OSError:
            continue
        if kind == "Instruction":
            continue
        mult = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(size[-1:], 1)
        digits = size.rstrip("KMG")
        if digits.isdigit():
            out[f"L{level}" + ("d" if kind == "Data" else "")] = int(digits) * mult
    return out


def last_level_cache_bytes() -> int:
    """Size of the largest CPU data cache in bytes (Linux sysfs; 32 MiB if it can't be read)."""
    return max(cpu_caches().values(), default=0) or 32 * 1024 ** 2


def _cpu_device() -> Device:
    return Device(name=f"{cpu_name()} ({os.cpu_count()} threads)", backend="cpu",
                  array_library="numpy", l2_bytes=last_level_cache_bytes())


@functools.lru_cache(maxsize=None)
def _detect(force: str) -> Device:
    if force != "cpu":
        dev = _cuda_with_cupy() or _cuda_with_torch()
        if dev is not None:
            return dev
    if force != "cpu":
        print(f"brrr: no CUDA GPU found, so every measurement runs on the CPU ({cpu_name()}).")
    return _cpu_device()


def device(refresh: bool = False) -> Device:
    """The live device: a CUDA GPU if CuPy or PyTorch can use one, else the CPU.

    ``BRRR_DEVICE=cpu`` forces the CPU. The answer is cached; ``refresh=True`` looks
    again, and peaks measured on this machine are measured again on their first use
    (a cached measurement older than this call is not used).
    """
    if not isinstance(refresh, bool):
        raise TypeError(f"refresh must be True or False, got {refresh!r}")
    if refresh:
        _detect.cache_clear()
    dev = _detect(os.environ.get("BRRR_DEVICE", "").strip().lower())
    if refresh:
        dev._peaks_not_before = time.time()
    return dev


# --- measured CPU peaks --------------------------------------------------------
#
# cpu_peaks.json holds {"schema": CPU_PEAKS_SCHEMA, "peaks": {machine key: entry}}, where an
# entry is what measured_cpu_peaks returns. Anything else (another schema, a wrong shape,
# a symlink) is ignored with a warning and measured again; see brrr.cache for the writing rules.

CPU_PEAKS_FILE = "cpu_peaks.json"
CPU_PEAKS_SCHEMA = 2  # bump when the measurement or the format changes: older caches are measured again
PEAK_UNITS = {"bandwidth": "bytes/s", "flops_float32": "FLOP/s", "flops_float64": "FLOP/s"}
_PEAK_LABELS = {"bandwidth": "the copy bandwidth (np.copyto)", "flops_float32": "the float32 matmul rate",
                "flops_float64": "the float64 matmul rate"}
_MIN_ROUNDS = 5
_AGREE = 0.10  # the two best rounds must agree this closely (relative) for a peak to count as reproduced


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
    n = max(8 * last_level_cache_bytes(), 64 * 2 ** 20) // 4
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
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


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


def _cpu_peaks_entry(not_before: Optional[float] = None) -> dict:
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
    return _cpu_peaks_entry(not_before=time.time() if refresh else None)
