"""Vertical fusion: k pointwise ops in one kernel against k kernels, predicted and measured.

Run unfused, each of ``k`` pointwise ops reads its input from memory and writes
its output back: ``2 k`` array passes. Fused into one kernel, the chain reads
each element once, keeps the intermediate values in registers, and writes the
result once: ``2`` passes, the same FLOPs. While both are memory-bound the
roofline (Williams et al., 2009) therefore predicts a speed-up of ``k``; once the
fused kernel's intensity passes the ridge point it becomes compute-bound and the
speed-up stops growing. Horace He's "Making Deep Learning Go Brrrr From First
Principles" (He 2022) makes the same argument for ``x.cos().cos()``.

:func:`fusion_speedup` (here) times both sides with each fuser. The rest, all
importable from here:

* :mod:`.fusion_model`: the bytes model and the roofline's prediction (:func:`chain_traffic`,
  :func:`predicted_speedup`, :func:`crossover_k`, :func:`predicted_table`, :func:`default_ks`);
* :mod:`.fusion_fusers`: the fusers, 'brrr' (:mod:`brrr.kernels`), 'cupy_fuse', 'torch_compile';
* :mod:`brrr.fusion_tables` (outside the experiments, so the plots can use it): speed-ups and plot rows from the records (:func:`speedups`, ...);
* :mod:`.fusion_epilogue`: ``relu(x @ w + b)`` fused into a matmul's epilogue
  (:func:`epilogue_fusion`), its kernels' bytes and FLOPs and roofline time (:func:`epilogue_kernels`,
  :func:`epilogue_time`) and the kernels ``torch.compile`` generates.

Times are seconds, sizes elements, traffic bytes.
"""
from __future__ import annotations

from .. import config
from ..device import device as live_device
from ..results import Result
from ..roofline import Roofline
from ..timing import bench
from . import _arrays
from ._arrays import default_elements
from .common import run_sweep
from .fusion_model import (KS, OPS, cap_length, ceiling_roof, chain_traffic, check_op, crossover_k, default_ks,
                           predicted_speedup, predicted_table)
from .fusion_fusers import FUSERS, check_fusers, make_fuser, own_fuser
from ..fusion_tables import VARIANTS, ceiling_column, cos_cases, speedup_lines, speedup_table, speedups, time_lines
from .fusion_epilogue import (epilogue_bars, epilogue_bounds, epilogue_fusion, epilogue_kernels, epilogue_time, epilogue_traffic,
                              generated_kernels, inspect_compiled, kernel_names, launched_kernels)

__all__ = ["OPS", "KS", "FUSERS", "BACKENDS", "VARIANTS", "chain_traffic", "predicted_speedup", "crossover_k",
           "ceiling_roof", "ceiling_column", "cap_length", "launched_kernels", "epilogue_bounds",
           "default_ks", "predicted_table", "fusion_speedup", "own_fuser", "cos_chain", "speedups",
           "speedup_table", "speedup_lines", "time_lines", "cos_cases", "epilogue_traffic", "epilogue_kernels",
           "epilogue_time", "epilogue_fusion",
           "epilogue_bars", "kernel_names", "generated_kernels", "inspect_compiled", "Result", "Roofline"]

BACKENDS = FUSERS   # the earlier name: fusion_speedup's ``backends=`` takes fuser names


def fusion_speedup(ks=None, n=None, op: str = "mul", dtype="float32", backends=("brrr", "torch_compile"),
                   roof=None, max_unfused_k=None, progress: bool = True):
    """Time ``k`` pointwise ops fused into one kernel and run as ``k`` kernels, for each fuser.

    Parameters
    ----------
    ks : chain lengths (default :func:`default_ks`).
    n : elements per array (default :func:`brrr.experiments._arrays.default_elements`).
    op : 'mul' (x * 0.999), 'add' (x + 1), 'fma' (x * 0.5 + 0.5) or 'cos'.
    dtype : 'float32' (default) or 'float64'.
    backends : the fusers, any of 'brrr', 'cupy_fuse', 'torch_compile'. A fuser that
        cannot run here (no GPU for 'cupy_fuse', a broken compiler for 'torch_compile')
        is skipped, and ``meta['notes']`` says why.
    roof : the :class:`brrr.Roofline` for the predictions (default: the device's).
    max_unfused_k : skip unfused points above this k (each is k passes over
        memory); default: all of them.

    Records (one per fuser, variant, k): ``fuser``, ``library``, ``backend`` ('cpu' or
    'cuda'), ``variant`` ('fused' or 'unfused'), ``k``, ``op``, ``n``, ``dtype``, ``nbytes``,
    ``flops``, ``seconds`` (median; ``min_seconds``, ``iqr_seconds``, ``floor_seconds``),
    ``predicted_seconds`` (the roofline's max(t_mem, t_math)), ``predicted_regime``, and the
    usual ``gbps``/``gflops``. :func:`speedups` pairs them up into measured and predicted
    speed-ups.
    """
    check_op(op)
    dtype = _arrays.dtype_name(dtype)
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    ks = default_ks() if ks is None else _arrays.check_sizes("ks", ks)
    names = check_fusers(backends)
    dev = live_device()
    n = default_elements(dev, dtype) if n is None else _arrays.check_sizes("n", [n])[0]
    if roof is None:
        roof = Roofline.from_device(dev, dtype)
    elif not isinstance(roof, Roofline):
        raise TypeError(f"roof must be a brrr.Roofline, got {type(roof).__name__}")
    max_unfused_k = max(ks) if max_unfused_k is None else max_unfused_k

    notes, fusers = [], {}
    for name in names:
        try:
            fusers[name] = make_fuser(name, dev, n, dtype, op)
        except Exception as error:  # noqa: BLE001 - a missing library or GPU: skip, and say so
            notes.append(f"{name} skipped: {type(error).__name__}: {error}")
    if not dev.on_gpu and n * _arrays.itemsize(dtype) < 4 * dev.l2_bytes:
        notes.append(f"each array ({n * _arrays.itemsize(dtype) / 2**20:.0f} MiB) is smaller than 4x the "
                     f"last-level cache ({dev.l2_bytes / 2**20:.0f} MiB): some traffic may hit the cache")
    points = [(f, v, k) for f in fusers for k in ks for v in VARIANTS
              if v == "fused" or k <= max_unfused_k]

    def measure(point):
        name, variant, k = point
        fuser = fusers[name]
        fused = variant == "fused"
        nbytes, flops = chain_traffic(k, n, fused, op, dtype)
        try:
            fn = fuser.call(k, fused)
        except Exception as error:  # noqa: BLE001 - torch.compile can fail (no compiler): note, skip
            notes.append(f"{name} {variant} k={k} skipped: {type(error).__name__}: {str(error)[:200]}")
            return []
        t = bench(fn, nbytes=nbytes, flops=flops, min_samples=3, label=f"{name} {variant} k={k}")
        return {"device": dev.name, "backend": dev.backend, "fuser": name, "library": fuser.library,
                "variant": variant, "k": k, "op": op, "n": n, "dtype": dtype,
                **_arrays.timing_fields(t, nbytes, flops),
                "predicted_seconds": float(roof.time(flops, nbytes)),
                "predicted_regime": roof.regime(flops, nbytes)}

    result = run_sweep("fusion_speedup", points, measure, progress=progress,
                       command=f"brrr.experiments.fusion_speedup(ks={list(ks)}, n={n}, op={op!r}, "
                               f"dtype={dtype!r}, backends={list(names)})",
                       op=op, dtype=dtype, n=n, quick=config.quick_mode(), roof=roof.to_dict(),
                       ridge=roof.ridge, crossover_k=crossover_k(roof, op, dtype))
    result.meta["notes"].extend(notes)
    compile_seconds = {k: s for f in fusers.values() for k, s in getattr(f, "compile_seconds", {}).items()}
    if compile_seconds:
        result.meta["compile_seconds"] = compile_seconds
    return result


def cos_chain(ks=None, n=None, backends=None, dtype="float32", progress: bool = True):
    """:func:`fusion_speedup` for a chain of cosines, with sizes that fit a chapter.

    ``ks`` defaults to ``default_ks(sweep='cos')``; ``n`` to 2**20 elements on the CPU
    (a cosine is a math-library call of tens of cycles there, so a DRAM-sized array
    would take minutes) and the usual DRAM-sized array on a GPU; ``backends`` to
    ``(own_fuser(),)``.
    """
    dev = live_device()
    ks = default_ks(sweep="cos") if ks is None else ks
    n = (2 ** 20 if not dev.on_gpu else None) if n is None else n
    backends = (own_fuser(dev),) if backends is None else backends
    return fusion_speedup(ks=ks, n=n, op="cos", dtype=dtype, backends=backends, progress=progress)
