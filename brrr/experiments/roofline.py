"""This machine's measured roofline: the best bandwidth and the best matmul FLOP/s it reaches.

A spec sheet says what a device could do; :func:`measure_roofline` finds out what
it does. The bandwidth roof is the best of STREAM-style kernels (copy, scale,
add, and triad where :mod:`brrr.kernels` is available) on arrays at least 4x the
last-level cache, so the bytes come from DRAM. The compute roof is the best
float32 matmul; on a GPU, tensor-core matmuls add their own ceilings.
:func:`measured_roofline` turns the result into a :class:`brrr.Roofline`.
"""
from __future__ import annotations

from .. import config
from ..device import device as live_device
from ..roofline import Roofline
from ..timing import bench
from . import _arrays
from .common import run_sweep
from .matmul import DATA, _matmul_fn, _tf32, matmul_library, random_normal

MiB = 1024 ** 2


def _stream_elements(dev, item: int) -> int:
    """Elements per array: each array at least 4x the last-level cache (and at least 64 MiB; 256 MiB on a GPU)."""
    floor = (256 if dev.on_gpu else 64) * MiB
    return max(4 * dev.l2_bytes, floor) // item


def _plan(dev, quick: bool) -> list:
    """The measurements to make: (kind, op, library, dtype, tensor_cores, size)."""
    plan = []
    kernels, _ = _arrays.try_kernels()
    lib = dev.library
    n = _stream_elements(dev, 4)
    for op in ("copy", "scale", "add"):
        plan.append(("bandwidth", op, lib, "float32", False, n))
    if kernels is not None and lib in ("numpy", "cupy"):
        for op in ("copy", "triad"):
            plan.append(("bandwidth", op, "brrr.kernels", "float32", False, n))
    if dev.on_gpu:
        sides = (2048, 4096) if quick else (4096, 8192)
        combos = [("float32", False), ("float32", True), ("float16", True), ("bfloat16", True)]
    else:
        sides = (256, 512) if quick else (1024, 2048)
        combos = [("float32", False)]
    for dtype, tc in combos:
        if tc and not dev.has_tensor_cores(dtype):
            continue
        library = matmul_library(dev, dtype)
        if dtype == "bfloat16" and library != "torch":
            continue  # only PyTorch has bfloat16 here
        for side in sides:
            plan.append(("compute", "matmul", library, dtype, tc, side))
    return plan


def _bandwidth_call(op, lib, dtype, n, dev):
    """(fn, nbytes, flops) for one STREAM-style op (a :data:`brrr.kernels.KERNELS` name) on fresh
    arrays of n elements; bytes and FLOPs from :func:`brrr.kernel_source.traffic`."""
    from ..kernel_source import traffic
    nbytes, flops = traffic(op, n, dtype=dtype)
    arrays_from = None if lib == "brrr.kernels" else lib   # brrr.kernels takes the device's own arrays
    a, b, out = (dev.full(n, value, dtype, arrays_from) for value in (1.0, 2.0, 0.0))
    if lib == "brrr.kernels":
        from .. import kernels
        if op == "copy":
            return (lambda: kernels.copy(a, out=out)), nbytes, flops
        return (lambda: kernels.triad(a, b, 2.0, out=out)), nbytes, flops
    if op == "copy":
        copy = _arrays.copier(lib)
        return (lambda: copy(out, a)), nbytes, flops
    if op == "scale":
        scale = _arrays.scaler(lib)
        return (lambda: scale(out, a)), nbytes, flops
    add = _arrays.adder(lib)
    return (lambda: add(out, a, b)), nbytes, flops


def measure_roofline(quick=None, progress: bool = True):
    """Measure this machine's bandwidth roof (bytes/s) and compute roof (FLOP/s).

    ``quick`` (default: :func:`brrr.quick_mode`) uses smaller matmuls and fewer
    samples; the bandwidth arrays stay at least 4x the last-level cache either way.
    Returns a :class:`brrr.Result`: one record per measurement (``kind`` is
    'bandwidth' or 'compute'; ``op``, ``library``, ``dtype``, ``size``, ``nbytes``,
    ``flops``, ``seconds``, ``gbps``, ``gflops``), and in ``meta`` the roofs:
    ``peak_bandwidth``, ``peak_flops`` (float32 general math), ``memory_ceilings``
    and ``compute_ceilings`` (label -> measured rate). Use
    :func:`measured_roofline` to get a :class:`brrr.Roofline` from it.
    """
    quick = config.quick_mode() if quick is None else bool(quick)
    dev = live_device()
    kernels, why = _arrays.try_kernels()

    def measure(step):
        kind, op, lib, dtype, tc, size = step
        if kind == "bandwidth":
            fn, nbytes, flops = _bandwidth_call(op, lib, dtype, size, dev)
            t = bench(fn, nbytes=nbytes, flops=flops or None, min_samples=5,
                      budget=0.2 if quick else None, label=f"{op} ({lib})")
        else:
            item = _arrays.itemsize(dtype)
            a = random_normal(dev, (size, size), dtype, lib, seed=1)
            b = random_normal(dev, (size, size), dtype, lib, seed=2)
            c = dev.full((size, size), 0.0, dtype, lib)
            mm = _matmul_fn(lib)
            nbytes, flops = 3 * size * size * item, 2 * size ** 3
            with _tf32(lib, tc and dtype == "float32"):
                t = bench(lambda: mm(a, b, c), nbytes=nbytes, flops=flops, min_samples=3,
                          budget=0.2 if quick else None, label=f"matmul n={size}")
        return {"device": dev.name, "backend": dev.backend, "kind": kind, "op": op,
                "library": lib, "dtype": dtype, "tensor_cores": tc, "size": size,
                **_arrays.timing_fields(t, nbytes, flops)}

    result = run_sweep("measure_roofline", _plan(dev, quick), measure, progress=progress,
                       command=f"brrr.experiments.measure_roofline(quick={quick})", quick=quick,
                       llc_bytes=dev.l2_bytes, data=DATA)
    if kernels is None:
        result.meta["notes"].append(f"{why}; bandwidth measured with {dev.library} only")
    result.meta.update(_roofs(result.records))
    return result


def _ceiling_label(rec) -> str:
    if rec["kind"] == "bandwidth":
        return f"{rec['op']} ({rec['library']})"
    name = {"float32": "FP32", "float16": "FP16", "bfloat16": "BF16", "float64": "FP64"}[rec["dtype"]]
    if rec["tensor_cores"]:
        name = ("TF32" if rec["dtype"] == "float32" else name) + " tensor"
    return f"{name} matmul"


def _roofs(records) -> dict:
    """The best rate per ceiling, and the two roofs (bytes/s, FLOP/s)."""
    memory, compute = {}, {}
    for rec in records:
        label = _ceiling_label(rec)
        if rec["kind"] == "bandwidth":
            memory[label] = max(memory.get(label, 0.0), rec["nbytes"] / rec["seconds"])
        else:
            compute[label] = max(compute.get(label, 0.0), rec["flops"] / rec["seconds"])
    out = {"memory_ceilings": memory, "compute_ceilings": compute}
    if memory:
        out["peak_bandwidth"] = max(memory.values())
    general = [v for k, v in compute.items() if "tensor" not in k]
    if general or compute:
        out["peak_flops"] = max(general or compute.values())
    return out


def timed_at(result, op: str, size: int, library: str):
    """The record of ``op`` on ``size`` elements (a matmul: n) by ``library`` in float32 on general
    math in a :func:`measure_roofline` result, so a worked problem of that size need not time it
    again; None where the result has none, or is None (a replayed set without it)."""
    records = result.records if result is not None else []
    return next((r for r in records if r["op"] == op and r["size"] == size and r["library"] == library
                 and r["dtype"] == "float32" and not r.get("tensor_cores")), None)


def measured_roofline(result) -> Roofline:
    """The :class:`brrr.Roofline` of a :func:`measure_roofline` result (measured, not spec):
    :meth:`brrr.Roofline.from_measurements`."""
    return Roofline.from_measurements(result)
