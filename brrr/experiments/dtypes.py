"""Chapter 2, reduced precision on the roofline: one matmul and one pointwise op per data type.

A smaller data type moves fewer bytes for the same FLOPs, so it moves an operator to the
right on the roofline; on a GPU with tensor cores it may also raise the roof. This module
measures both operators in ``float32``, ``bfloat16``, ``float16`` and ``int8`` (with
PyTorch, on the live device) so the chapter can show what actually happened:

* the matmul, ``n x n`` by ``n x n``, is sized to be compute-bound in float32 here
  (``2 n^3`` FLOPs on ``2 n^2`` input elements and ``n^2`` outputs). ``int8`` multiplies
  with ``torch._int_mm``, which accumulates and writes in int32: its output counts 4 bytes
  per element, honestly;
* the pointwise op, ``y = 1 + 2 x`` in one pass (``torch.add(one, x, alpha=2, out=y)``, ``one``
  a CPU scalar:
  2 operations per element, one read and one write), is larger than the last-level cache.

Every output is preallocated (a fresh large CPU allocation would time page faults), and
every call is timed by :func:`brrr.bench`. A data type that cannot run here gives a record
with a ``skipped`` reason instead of a time. For int8, ``flops`` counts integer operations.
"""
from __future__ import annotations

import importlib.util
import math
from typing import Optional

from .. import config
from ..device import device as live_device
from ..hardware import last_level_cache_bytes
from ..timing import bench
from . import _arrays
from .common import free_memory, run_sweep
from .matmul import DATA, _tf32

DTYPES = ("float32", "bfloat16", "float16", "int8")
ITEMSIZE = {"float32": 4, "bfloat16": 2, "float16": 2, "int8": 1}
ACCUMULATE = {"int8": "int32"}          # what a matmul of that type writes, where it is not itself
TENSOR_NAME = {"float32": "TF32", "float16": "FP16", "bfloat16": "BF16"}


def check_dtype(dtype) -> str:
    """One of :data:`DTYPES`, or a ValueError naming them."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    return dtype


def out_dtype(op: str, dtype: str) -> str:
    """The type the op writes: the matmul of int8 accumulates and writes int32."""
    return ACCUMULATE.get(dtype, dtype) if op == "matmul" else dtype


def matmul_counts(n: int, dtype: str) -> tuple:
    """(FLOPs, bytes) of an n x n by n x n matmul in ``dtype``: read A and B, write C
    (in the output type, int32 for int8)."""
    check_dtype(dtype)
    out_item = ITEMSIZE.get(out_dtype("matmul", dtype), 4)
    return 2.0 * n ** 3, float(2 * n * n * ITEMSIZE[dtype] + n * n * out_item)


def pointwise_counts(elements: int, dtype: str) -> tuple:
    """(FLOPs, bytes) of ``y = 1 + 2 x`` on ``elements`` values: 2 operations, one read
    and one write per element."""
    check_dtype(dtype)
    return 2.0 * elements, float(2 * elements * ITEMSIZE[dtype])


def sizes(dev=None, quick: Optional[bool] = None) -> dict:
    """The matmul side ``n`` and the pointwise ``elements``.

    The matmul is far right of the float32 ridge: n = 512 on the CPU (256 in quick
    mode), 8192 on a GPU (4096). The pointwise op has a power of 2 elements, at least
    twice the last-level cache (the GPU's L2) in count, so that even int8's input and
    output together are four times the cache; quick mode: 2^22 elements.
    """
    dev = dev or live_device()
    quick = config.quick_mode() if quick is None else quick
    n = (4096 if quick else 8192) if dev.on_gpu else (256 if quick else 512)
    if quick:
        return {"n": n, "elements": 2 ** 22}
    cache = dev.l2_bytes if dev.on_gpu else last_level_cache_bytes()
    return {"n": n, "elements": max(2 ** 24, 2 ** math.ceil(math.log2(max(2 * cache, 1))))}


def roof_for(dev, dtype: str, op: str = "matmul") -> tuple:
    """(peak FLOP/s or None, where it comes from) for ``dtype``'s roof on ``dev`` for ``op``.

    GPU: the spec sheet, float32 on general math (TF32 stays off), float16/bfloat16
    matmuls on tensor cores where the GPU has them (a pointwise op cannot use tensor
    cores: general math in every type); brrr.specs lists no int8 rate, so None. CPU:
    float32 is this machine's measured matmul rate; for the other types no spec sheet
    exists, and a measured "peak" would be the very matmul being judged, so None.
    """
    check_dtype(dtype)
    if dtype == "int8":
        return None, ("no int8 roof: brrr.specs holds no int8 figures" if dev.on_gpu else
                      "no int8 roof: no spec sheet exists for this CPU's int8 rate")
    if dev.on_gpu:
        tc = op == "matmul" and dtype != "float32" and dev.has_tensor_cores(dtype)
        kind = f"{TENSOR_NAME[dtype]} tensor cores" if tc else "general math"
        return dev.peak_flops(dtype, tc), f"{dev.source} ({kind})"
    if dtype == "float32":
        return dev.peak_flops("float32"), dev.source
    return None, f"no spec sheet exists for this CPU's {dtype} rate; only float32's is measured"


def native_low_precision() -> dict:
    """What oneDNN says this CPU has for bfloat16 and float16 arithmetic (None: PyTorch can't tell),
    and PyTorch's CPU vector capability ('AVX2', 'AVX512', ...)."""
    import torch
    out = {}
    for dtype, check in (("bfloat16", "_is_mkldnn_bf16_supported"), ("float16", "_is_mkldnn_fp16_supported")):
        try:
            out[dtype] = bool(getattr(torch.ops.mkldnn, check)())
        except Exception:  # noqa: BLE001 - an older PyTorch, or a build without oneDNN
            out[dtype] = None
    try:
        out["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    except Exception:  # noqa: BLE001
        out["cpu_capability"] = None
    return out


def _matmul_call(torch, dtype, where, n):
    """(fn, args) for the matmul in ``dtype``: ``torch.matmul(a, b, out=c)``, or
    ``torch._int_mm(a, b, out=c)`` into int32 for int8, whose ``b`` is stored column-major
    (the transpose of a contiguous tensor), the layout int8 tensor-core GEMMs take directly.
    The inputs are random normal (times 16, rounded, for int8), not constants: see
    :func:`brrr.experiments.matmul.random_normal`."""
    t = getattr(torch, dtype)
    gen = torch.Generator(device=where).manual_seed(1)

    def random():
        x = torch.randn((n, n), generator=gen, device=where)
        return (x.mul_(16).round_().clamp_(-127, 127) if dtype == "int8" else x).to(t)
    a, b = random(), random()
    if dtype == "int8":
        if not hasattr(torch, "_int_mm"):
            raise NotImplementedError("this PyTorch has no torch._int_mm (int8 x int8 -> int32 matmul)")
        b = b.t()
        c = torch.empty((n, n), dtype=torch.int32, device=where)
        return (lambda a, b, c: torch._int_mm(a, b, out=c)), (a, b, c)
    c = torch.empty((n, n), dtype=t, device=where)
    return (lambda a, b, c: torch.matmul(a, b, out=c)), (a, b, c)


def _pointwise_call(torch, dtype, where, elements):
    """(fn, args) for ``y = 1 + 2 x`` in one pass, into a preallocated ``y``. ``one`` is a 0-d
    tensor on the CPU, which PyTorch passes to the kernel as a scalar (a 0-d GPU tensor would be
    a broadcast input, which keeps the kernel off its vectorized path)."""
    t = getattr(torch, dtype)
    x = torch.ones(elements, dtype=t, device=where)
    y = torch.empty(elements, dtype=t, device=where)
    one = torch.ones((), dtype=t)
    return (lambda one, x, y: torch.add(one, x, alpha=2, out=y)), (one, x, y)


def _record(dev, op, dtype, size, flops, nbytes, peak, source) -> dict:
    return {"device": dev.name, "backend": dev.backend, "library": "torch", "op": op, "dtype": dtype,
            "out_dtype": out_dtype(op, dtype), "itemsize": ITEMSIZE[dtype], "size": size,
            "label": f"{op} {dtype}", "flops": flops, "nbytes": nbytes, "intensity": flops / nbytes,
            "peak_flops": peak, "peak_source": source, "skipped": ""}


def _measure(dev, where, op, dtype, size, budget):
    import torch
    counts = matmul_counts if op == "matmul" else pointwise_counts
    flops, nbytes = counts(size, dtype)
    peak, source = roof_for(dev, dtype, op)
    record = _record(dev, op, dtype, size, flops, nbytes, peak, source)
    if where is None:
        record["skipped"] = "PyTorch cannot reach this GPU (it was found through CuPy): no torch CUDA"
        return record
    make = _matmul_call if op == "matmul" else _pointwise_call
    try:
        fn, args = make(torch, dtype, where, size)
        fn(*args)                                   # does this type run here at all?
    except (RuntimeError, NotImplementedError, TypeError) as error:
        if "out of memory" in str(error).lower():
            raise
        first = (str(error).strip().splitlines() or [""])[0][:200]
        record["skipped"] = f"{type(error).__name__}: {first}"
        return record
    with _tf32("torch" if dev.on_gpu else None, False):   # float32 matmuls on general math, as their roof assumes
        # int8 operations are not FLOPs: bench's check against the best floating-point peak would
        # call a good int8 matmul (twice the fp16 tensor rate) faster than the spec allows.
        t = bench(fn, *args, budget=budget, nbytes=nbytes, flops=None if dtype == "int8" else flops,
                  min_samples=3, label=f"{op} {dtype}", backend=dev.backend)
    del fn, args
    free_memory()
    record.update(_arrays.timing_fields(t, nbytes, flops))
    return record


def dtype_roofline(dtypes=DTYPES, n: Optional[int] = None, elements: Optional[int] = None,
                   budget: Optional[float] = None, progress: bool = True):
    """The matmul and the pointwise op in each of ``dtypes``, timed on the live device.

    ``n`` (matmul side) and ``elements`` (pointwise size) default to :func:`sizes`.
    ``budget``: seconds of measuring per operator and type (None: :func:`brrr.bench`'s default).

    Records, one per (op, dtype): op ('matmul' or 'pointwise'), dtype, out_dtype
    (int32 for the int8 matmul), itemsize (bytes), size (n or elements), flops, nbytes,
    intensity, the timing fields of the schema (seconds, ...; absent where skipped),
    peak_flops (this type's roof, None where none is known; see :func:`roof_for`),
    peak_source, and skipped ('' where it ran, else why not). Meta: n, elements,
    peak_bandwidth (bytes/s), bandwidth_source, native (what the CPU has for 16-bit math,
    see :func:`native_low_precision`), quick, and how the record was made: data (the matmuls'
    inputs), int8_b (the int8 matmul's second matrix) and pointwise_one (the pointwise op's
    constant, a CPU scalar; records without these were made by earlier code).
    """
    dtypes = [check_dtype(d) for d in dtypes]
    if not dtypes:
        raise ValueError("dtypes must not be empty")
    if importlib.util.find_spec("torch") is None:
        raise RuntimeError("brrr.experiments.dtype_roofline needs PyTorch")
    dev = live_device()
    s = sizes(dev)
    n = _arrays.check_sizes("n", [n])[0] if n is not None else s["n"]
    elements = _arrays.check_sizes("elements", [elements])[0] if elements is not None else s["elements"]
    where = dev.torch_device
    if dev.on_gpu and where != "cuda":
        where = None
    points = [(op, d) for op in ("matmul", "pointwise") for d in dtypes]
    result = run_sweep(
        "dtype_roofline", points,
        lambda p: _measure(dev, where, p[0], p[1], n if p[0] == "matmul" else elements, budget),
        progress=progress, command=f"brrr.experiments.dtype_roofline(dtypes={tuple(dtypes)})",
        n=n, elements=elements, peak_bandwidth=dev.peak_bandwidth,
        bandwidth_source=dev.source, native=native_low_precision() if not dev.on_gpu else {},
        quick=config.quick_mode(), data=DATA, int8_b="column-major", pointwise_one="a CPU scalar")
    return result
