"""Compute: how many FLOP/s this device reaches with matmuls and with everything else.

A GPU has two kinds of arithmetic units: tensor cores, which only multiply
small matrices, and general (CUDA-core) units for everything else. Horace He's
article (He 2022) puts an A100 at 312 TFLOP/s on the first and 19.5 TFLOP/s
on the second, about 16x apart. :func:`elementwise_vs_matmul` measures the
same gap live, on four operations:

* ``x * 2``: one elementwise multiply per element, memory-bound;
* a fused chain of ``repeat`` multiply-adds per element (``brrr.kernels.chain``
  with ``op='ffma'``): elementwise, but with enough arithmetic per byte to be
  compute-bound. On a GPU each link is one fused multiply-add instruction, as the
  FP32 peak counts them; on the CPU (Numba) a multiply, then an add. The record's
  ``fma`` says which;
* an FP32 matmul on general math;
* on a GPU with tensor cores, the same matmul in FP16 on tensor cores.

FLOPs are counted, never estimated from time: a matmul of an (M, K) by a
(K, N) matrix does 2 M N K of them (see :func:`matmul_flops`).
"""
from __future__ import annotations

from .. import config
from ..device import device as live_device, provenance
from ..results import Result
from ..timing import bench
from . import _arrays
from ..kernel_source import traffic
from .matmul import DATA, matmul_library, _matmul_fn, _tf32, random_normal

KINDS = ("elementwise x * 2", "elementwise fused FMA chain", "matmul FP32", "matmul FP16 tensor cores")


def matmul_flops(m: int, n: int, k: int) -> int:
    """FLOPs of an (m, k) @ (k, n) matmul: m*n outputs, each k multiplies and k adds."""
    for name, value in (("m", m), ("n", n), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return 2 * m * n * k


def _defaults(dev, quick):
    if dev.on_gpu:
        return (2 ** 24, 4096, 512) if quick else (2 ** 26, 8192, 1024)
    return (2 ** 20, 512, 128) if quick else (2 ** 22, 1024, 512)


def default_sizes(dev=None, quick=None) -> dict:
    """The sizes :func:`elementwise_vs_matmul` takes by default: ``{'n_elements', 'matmul_n', 'repeat'}``."""
    dev = dev or live_device()
    return dict(zip(("n_elements", "matmul_n", "repeat"), _defaults(dev, config.quick_mode() if quick is None else quick)))


def elementwise_vs_matmul(n_elements: int = None, matmul_n: int = None, repeat: int = None,
                          tensor_cores: bool = True) -> Result:
    """FLOP/s of elementwise work and of matmuls on the live device (float32; FP16 on tensor cores).

    Parameters
    ----------
    n_elements : elements of the elementwise tensors (default 2^26 on a GPU, 2^22 on the
        CPU; quick mode: 2^24 / 2^20).
    matmul_n : side of the square matmuls (default 8192 GPU, 1024 CPU; quick: 4096 / 512).
    repeat : multiply-adds per element in the fused chain (default 1024 GPU, 512 CPU;
        quick: 512 / 128); large enough to make the chain compute-bound.
        The matmuls multiply random normal matrices (``meta['data']``).
    tensor_cores : also time an FP16 matmul on tensor cores where the GPU has them.

    Records: kind (one of :data:`KINDS`), library, dtype, tensor_cores, flops,
    nbytes, seconds, gflops, gbps, intensity (FLOP/byte) and ``peak_flops``, the
    spec (GPU) or measured (CPU) peak for that kind of math. ``meta['gap']`` is
    the best matmul FLOP/s divided by the best elementwise FLOP/s; ``meta['spec_gap']``
    the spec sheet's FP16-tensor over FP32-general ratio (None on a CPU); ``meta`` also
    holds the sizes used (n_elements, matmul_n, repeat).
    """
    if not isinstance(tensor_cores, bool):
        raise TypeError(f"tensor_cores must be True or False, got {tensor_cores!r}")
    dev = live_device()
    d_elems, d_side, d_repeat = _defaults(dev, config.quick_mode())
    n_elements = d_elems if n_elements is None else _arrays.check_sizes("n_elements", [n_elements])[0]
    matmul_n = d_side if matmul_n is None else _arrays.check_sizes("matmul_n", [matmul_n])[0]
    repeat = d_repeat if repeat is None else _arrays.check_sizes("repeat", [repeat])[0]
    result = Result("elementwise_vs_matmul", meta=provenance(
        f"brrr.experiments.elementwise_vs_matmul(n_elements={n_elements}, matmul_n={matmul_n}, "
        f"repeat={repeat})", notes=[], quick=config.quick_mode(), n_elements=n_elements,
        matmul_n=matmul_n, repeat=repeat, data=DATA))
    notes = result.meta["notes"]

    def record(kind, lib, dtype, tc, t, flops, nbytes, peak):
        fields = _arrays.timing_fields(t, nbytes, flops)
        result.records.append({"device": dev.name, "backend": dev.backend, "kind": kind, "library": lib,
                               "dtype": dtype, "tensor_cores": tc, **fields, "peak_flops": peak,
                               "fraction_of_peak": fields["gflops"] * 1e9 / peak})

    # Elementwise: brrr.kernels (Numba on the CPU, CUDA via CuPy) where it runs, else the array library.
    lib = dev.library
    general = dev.peak_flops("float32", False)
    x = dev.full(n_elements, 1.0, "float32", lib)
    out = dev.full(n_elements, 0.0, "float32", lib)
    kernels, why = _arrays.try_kernels()
    if kernels is not None and lib in ("numpy", "cupy"):
        nbytes, flops = traffic("chain", n_elements, 1, op="mul", dtype="float32")
        t = bench(lambda: kernels.chain(x, 1, op="mul", fused=True, out=out, c=2.0), min_samples=3,
                  nbytes=nbytes, flops=flops)
        record(KINDS[0], "brrr.kernels", "float32", False, t, flops, nbytes, general)
        nbytes, flops = traffic("chain", n_elements, repeat, op="ffma", dtype="float32")
        t = bench(lambda: kernels.chain(x, repeat, op="ffma", fused=True, out=out), min_samples=3,
                  nbytes=nbytes, flops=flops)
        record(KINDS[1], "brrr.kernels", "float32", False, t, flops, nbytes, general)
        result.records[-1]["fma"] = lib == "cupy"   # one FFMA per link on a GPU; Numba: multiply, then add
    else:
        scale = _arrays.scaler(lib)
        nbytes, flops = traffic("scale", n_elements, dtype="float32")
        t = bench(scale, out, x, min_samples=3, nbytes=nbytes, flops=flops)
        record(KINDS[0], lib, "float32", False, t, flops, nbytes, general)
        notes.append(f"fused FMA chain skipped: it needs brrr.kernels on NumPy or CuPy arrays ({why or lib})")
    del x, out

    # Matmuls: general FP32, then FP16 on tensor cores where the GPU has them.
    plans = [("float32", False)]
    if tensor_cores and dev.on_gpu and dev.has_tensor_cores("float16"):
        plans.append(("float16", True))
    elif tensor_cores:
        notes.append(f"no tensor cores on {dev.name}: only general-math matmuls were timed")
    for dtype, tc in plans:
        mlib = matmul_library(dev, dtype)
        a = random_normal(dev, (matmul_n, matmul_n), dtype, mlib, seed=1)
        b = random_normal(dev, (matmul_n, matmul_n), dtype, mlib, seed=2)
        c = dev.full((matmul_n, matmul_n), 0.0, dtype, mlib)
        flops = matmul_flops(matmul_n, matmul_n, matmul_n)
        nbytes = 3 * matmul_n ** 2 * _arrays.itemsize(dtype)
        with _tf32(mlib, False):
            t = bench(_matmul_fn(mlib), a, b, c, min_samples=3, nbytes=nbytes, flops=flops)
        record(KINDS[2] if not tc else KINDS[3], mlib, dtype, tc, t, flops, nbytes,
               dev.peak_flops(dtype, tc))
        del a, b, c

    best = {"matmul": 0.0, "elementwise": 0.0}
    for rec in result.records:
        group = "matmul" if rec["kind"].startswith("matmul") else "elementwise"
        best[group] = max(best[group], rec["gflops"])
    result.meta["gap"] = best["matmul"] / best["elementwise"] if best["elementwise"] else None
    result.meta["spec_gap"] = (dev.peak_flops("float16", True) / general
                               if dev.on_gpu and dev.spec is not None else None)
    return result


# --- tensor cores against size ----------------------------------------------------------

def matmul_tensor_cores(sizes=None, dtypes=("float32", "float16", "bfloat16"),
                        progress: bool = True) -> Result:
    """Square-matmul FLOP/s against n on tensor cores, one sweep per dtype (float32 means TF32).

    Each sweep is :func:`brrr.experiments.matmul_vs_size` with ``tensor_cores=True``;
    the records of all of them go into one Result, ``'matmul_tensor_cores'``, each
    with its dtype, ``tensor_cores`` (False where the device has none for that dtype
    and ran general math) and its own ``peak_flops``. ``meta['peaks']`` maps dtype to
    that peak. On a device without tensor cores (any CPU) the sweeps run general
    math and ``meta['notes']`` says so.
    """
    from .matmul import matmul_vs_size
    if isinstance(dtypes, str) or not dtypes:
        raise ValueError(f"dtypes must be a non-empty sequence such as ('float16',), got {dtypes!r}")
    dev = live_device()
    skipped = [d for d in dtypes if d == "bfloat16" and matmul_library(dev, d) != "torch"]
    runs = [matmul_vs_size(sizes=sizes, dtype=d, tensor_cores=True, progress=progress)
            for d in dtypes if d not in skipped]
    result = Result("matmul_tensor_cores", meta=provenance(
        f"brrr.experiments.matmul_tensor_cores(dtypes={tuple(dtypes)!r})", quick=config.quick_mode(),
        dtypes=[run.meta["dtype"] for run in runs],
        peaks={run.meta["dtype"]: run.meta["peak_flops"] for run in runs}, data=DATA,
        notes=[note for run in runs for note in run.meta["notes"]]
        + [f"{d} skipped: only PyTorch multiplies it here, and this GPU's PyTorch has no CUDA" for d in skipped]))
    for run in runs:
        result.records.extend(run.records)
    return result


# --- MFU of one layer against the batch -------------------------------------------------

def default_batches(dev=None, quick=None) -> list:
    """Batch sizes for :func:`mfu_vs_batch`: powers of 4 from 1, fewer in quick mode."""
    dev = dev or live_device()
    quick = config.quick_mode() if quick is None else quick
    if quick:
        return [1, 8, 64, 512]
    return [1, 4, 16, 64, 256, 1024, 4096] + ([16384] if dev.on_gpu else [])


def mfu_vs_batch(width: int = 1024, batches=None, progress: bool = True) -> Result:
    """Model FLOPs utilisation of one ``Linear(width, width)`` layer (and its ReLU) against the batch.

    The layer is :func:`brrr.experiments.mlp_factory` with ``depth=1``, run forward
    in PyTorch (float32, TF32 off), on the GPU where PyTorch has one. Its model
    FLOPs are the matmul's, ``2 * batch * width * width`` (the bias add and the
    ReLU, ``2 * batch * width`` more, are left out, as MFU counts usually do).

    Records: batch, width, seconds (median per forward pass), flops, gflops,
    ``mfu`` (achieved FLOP/s over ``peak_flops``, the FP32 general-math peak: the
    spec on a GPU, the measured matmul roof on a CPU), nbytes (the least traffic:
    weights and bias read, input read, output written), intensity (FLOP/byte),
    and ``roofline_seconds``, the least time the roofline allows for those FLOPs and
    bytes. ``meta``: width, peak_flops, peak_bandwidth.
    """
    from .matmul import _tf32
    from .overhead import mlp_factory
    width = _arrays.check_sizes("width", [width])[0]
    dev = live_device()
    batches = default_batches(dev) if batches is None else _arrays.check_sizes("batches", batches)
    factory = mlp_factory(width=width, depth=1)
    peak = dev.peak_flops("float32")
    peak_bw = dev.peak_bandwidth

    def measure(batch):
        forward = factory(batch)
        flops = matmul_flops(batch, width, width)
        nbytes = 4 * (width * width + width + 2 * batch * width)
        with _tf32("torch", False):
            t = bench(forward, cache="hot", min_samples=3, label=f"Linear({width}, {width}) batch={batch}")
        seconds = t.median
        return {"device": dev.name, "backend": dev.backend, "batch": batch, "width": width,
                **t.record_fields(), "flops": float(flops),
                "gflops": flops / seconds / 1e9, "mfu": flops / seconds / peak, "peak_flops": peak,
                "nbytes": float(nbytes), "intensity": flops / nbytes,
                "roofline_seconds": max(flops / peak, nbytes / peak_bw)}

    from .common import run_sweep
    return run_sweep("mfu_vs_batch", batches, measure, progress=progress,
                     command=f"brrr.experiments.mfu_vs_batch(width={width}, batches={list(batches)})",
                     width=width, peak_flops=peak, peak_bandwidth=peak_bw, quick=config.quick_mode())


def gap_table(result):
    """The records of :func:`elementwise_vs_matmul` as a table for the page: what ran, with
    units in the headers (time per call in seconds, GFLOP/s, GB/s, share of the peak for
    that kind of math); None for None (a replayed set without the record)."""
    import math
    if result is None:
        return None
    frame = result.to_frame()
    # The chain's row says what its links ran as: records before the chain asked for FMA (and any CPU
    # run) did a multiply, then an add.
    fma = frame["fma"] if "fma" in frame else [False] * len(frame)
    frame["kind"] = [KINDS[1] if k == KINDS[1] and f is True else
                     "elementwise multiply-then-add chain (no FMA)" if k == KINDS[1] else k
                     for k, f in zip(frame["kind"], fma)]
    frame = frame[["kind", "library", "dtype", "seconds", "gflops", "gbps", "intensity", "fraction_of_peak"]].copy()
    # Rates in T units where any reaches a thousand G; every rate and intensity to three significant
    # digits, so the page prints 28.4 or 1,370, never 2.84e+04.
    names = {"seconds": "time per call", "intensity": "FLOP/byte", "fraction_of_peak": "share of its peak"}
    for col, unit in (("gflops", "FLOP/s"), ("gbps", "B/s")):
        big = frame[col].max() >= 1e3
        frame[col] = frame[col] / 1e3 if big else frame[col]
        names[col] = ("T" if big else "G") + unit
    three = lambda v: float(f"{v:.3g}") if isinstance(v, float) and math.isfinite(v) else v  # noqa: E731
    for col in ("gflops", "gbps", "intensity"):
        frame[col] = frame[col].map(three)
    return frame.rename(columns=names)
