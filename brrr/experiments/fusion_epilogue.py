"""Epilogue fusion, ``relu(x @ w + b)``, and what ``torch.compile`` generates for it.

The smallest case of fusing pointwise work into the epilogue of a matmul: eager PyTorch
runs three kernels (matmul, bias add, ReLU), each a trip of the (m, n) result through
memory; a compiler can apply the add and the ReLU as the matmul's result is written.
:func:`epilogue_kernels` gives the bytes and FLOPs of each kernel of both, :func:`epilogue_time`
the roofline's least time (the sum of each kernel's own bound), :func:`epilogue_fusion`
times them, and :func:`generated_kernels` lists the kernels Inductor launches.
Times are seconds.
"""
from __future__ import annotations

import re

from .. import config
from ..device import device as live_device
from ..results import frame as _frame
from ..results import Result
from ..roofline import Roofline
from ..timing import bench
from . import _arrays
from .common import run_sweep


def epilogue_kernels(m: int, n: int, k: int, fused: bool, dtype="float32") -> list:
    """The kernels of ``relu(x @ w + b)`` with x (m, k), w (k, n), b (n,), each as
    ``(name, bytes, FLOPs)``, in the order they run.

    Unfused (eager mode), three kernels: the matmul reads x and w and writes the (m, n)
    result (2 m n k FLOPs); the bias add reads the result and b and writes it again
    (m n FLOPs); the ReLU reads and writes it once more (m n FLOPs, a comparison counted
    as one). Fused into the matmul's epilogue, one kernel: the matmul's traffic plus b,
    all the FLOPs.
    """
    for name, v in (("m", m), ("n", n), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    item = _arrays.itemsize(dtype)
    if fused:
        return [("fused matmul, bias add and ReLU", float((m * k + k * n + m * n + n) * item),
                 float(2 * m * n * k + 2 * m * n))]
    return [("matmul", float((m * k + k * n + m * n) * item), float(2 * m * n * k)),
            ("bias add", float((2 * m * n + n) * item), float(m * n)),
            ("ReLU", float(2 * m * n * item), float(m * n))]


def launched_kernels(m: int, n: int, k: int, names, dtype="float32") -> list:
    """The kernels of ``relu(x @ w + b)`` as a compiler launched them (``names``, in order, as
    :func:`kernel_names` lists them), each as ``(name, bytes, FLOPs)``. One kernel is the whole
    layer fused. Otherwise the first is the matmul (``addmm``: with the bias), reading x and w and
    writing the (m, n) result, and each kernel after it is one pass over that result, a read and a
    write (and b, where the matmul left the bias out), the first of them doing the FLOPs left."""
    names = list(names)
    if len(names) <= 1:
        return [(name, b, f) for name, (_, b, f) in zip(names, epilogue_kernels(m, n, k, True, dtype))]
    item, bias = _arrays.itemsize(dtype), names[0].endswith("addmm")
    kernels = [(names[0], float((m * k + k * n + m * n + bias * n) * item), float(2 * m * n * k + bias * m * n))]
    for i, name in enumerate(names[1:]):
        kernels.append((name, float((2 * m * n + (not bias) * n) * item), float((2 - bias) * m * n if i == 0 else 0)))
    return kernels


def epilogue_traffic(m: int, n: int, k: int, fused: bool, dtype="float32") -> tuple:
    """``(bytes, FLOPs)`` of ``relu(x @ w + b)``: the totals over :func:`epilogue_kernels`.

    Unfused, the bias add and the ReLU each add two passes over the (m, n) result to
    the matmul's traffic; fused into the matmul's epilogue, only the matmul's traffic
    (plus b) remains. FLOPs: 2 m n k for the matmul, m n each for the add and the ReLU.
    """
    kernels = epilogue_kernels(m, n, k, fused, dtype)
    return float(sum(b for _, b, _ in kernels)), float(sum(f for _, _, f in kernels))


def epilogue_time(roof: Roofline, m: int, n: int, k: int, fused: bool, dtype="float32", launched=None) -> float:
    """The roofline's least time (seconds) for ``relu(x @ w + b)``: kernels that run one after
    another take at least the sum of their own bounds, ``max(FLOPs / P, bytes / B)`` each, so
    eager mode's bound is that of the matmul plus the bias add's plus the ReLU's, not one bound
    of their summed bytes and FLOPs (which would let one kernel's spare bandwidth pay for
    another's arithmetic). ``launched``: the names of the kernels a compiler ran instead
    (:func:`launched_kernels`; ``fused`` is then ignored)."""
    if not isinstance(roof, Roofline):
        raise TypeError(f"roof must be a brrr.Roofline, got {type(roof).__name__}")
    kernels = epilogue_kernels(m, n, k, fused, dtype) if launched is None else launched_kernels(m, n, k, launched, dtype)
    return float(sum(float(roof.time(f, b)) for _, b, f in kernels))


def epilogue_bounds(result) -> dict:
    """``{variant: least seconds}`` of an :func:`epilogue_fusion` run (:func:`epilogue_time`): eager mode's
    three kernels, and the kernels ``torch.compile`` launched (one fully fused kernel where it names none)."""
    (m, n, k), dtype = (int(v) for v in result.meta["shape"]), result.meta.get("dtype", "float32")
    roof, launched = Roofline.from_dict(result.meta["roof"]), list(result.meta.get("compiled_kernels") or []) or None
    return {"eager": epilogue_time(roof, m, n, k, False, dtype),
            "torch.compile": epilogue_time(roof, m, n, k, True, dtype, launched)}


def kernel_names(source: str) -> list:
    """The kernels an Inductor output file launches, in order: its own fused kernels
    (``cpp_fused_*`` on the CPU, ``triton_*`` on a GPU) and library calls (``extern_kernels.addmm``)."""
    names = []
    for line in source.splitlines():
        line = line.strip()
        match = (re.match(r"(extern_kernels\.\w+)\(", line) or re.match(r"(cpp_fused_\w+)\(", line)
                 or re.match(r"(triton_\w+)\.run\(", line))
        if match and "=" not in line.split("(")[0]:
            names.append(match.group(1))
    return names


def _compile_and_run(fn, *args):
    """``(compiled fn, kernels it launched)``: ``torch.compile(fn)`` (fresh), run once on ``args``."""
    import torch
    from torch._inductor.utils import run_and_get_code
    torch._dynamo.reset()
    compiled = torch.compile(fn)
    _, sources = run_and_get_code(compiled, *args)
    return compiled, [name for source in sources for name in kernel_names(source)]


def generated_kernels(fn, *args) -> list:
    """Compile ``fn`` with ``torch.compile`` (fresh), run it on ``args``, and list the kernels it launches."""
    return _compile_and_run(fn, *args)[1]


def inspect_compiled(fn, *args) -> dict:
    """What ``torch.compile`` makes of ``fn(*args)``: ``{'kernels': [names launched], 'error': None}``,
    or ``{'kernels': [], 'error': 'what went wrong'}`` where it cannot compile here (no C++
    compiler, an unsupported platform)."""
    try:
        return {"kernels": generated_kernels(fn, *args), "error": None}
    except Exception as error:  # noqa: BLE001 - a missing compiler is an outcome, not a crash
        return {"kernels": [], "error": f"{type(error).__name__}: {str(error)[:200]}"}


def epilogue_bars(result):
    """The bars of an :func:`epilogue_fusion` run: a Result (same meta) with one record per
    case, 'case' and 'time per call' (seconds): each variant as measured, then the roofline's
    time (:func:`epilogue_time`) for the three kernels run one after another, for the kernels
    ``torch.compile`` launched (``meta['compiled_kernels']``, where it names them) and for one
    fully fused kernel. None for None (a replayed set without the record)."""
    if result is None:
        return None
    frame = _frame(result)
    rows = [{"case": f"{r.variant} (measured)", "time per call": r.seconds} for r in frame.itertuples()]
    meta = getattr(result, "meta", {}) or {}
    shape, dtype = meta.get("shape"), meta.get("dtype", "float32")
    if shape and meta.get("roof"):
        roof, (m, n, k) = Roofline.from_dict(meta["roof"]), (int(v) for v in shape)
        launched = meta.get("compiled_kernels") or []
        cases = [("3 kernels (roofline)", False, None), (f"{len(launched)} kernels as compiled (roofline)", True,
                                                          launched), ("1 fused kernel (roofline)", True, None)]
        for case, fused, names in cases if len(launched) > 1 else cases[::2]:
            rows.append({"case": case, "time per call": epilogue_time(roof, m, n, k, fused, dtype, names)})
    return Result("epilogue_bars", rows, dict(meta))


def epilogue_fusion(m=None, n=None, k=None, dtype="float32", roof=None, progress: bool = True):
    """``relu(x @ w + b)`` in eager PyTorch (three kernels) and under ``torch.compile``.

    Default shape (m, n, k): (4096, 4096, 16) on the CPU, (8192, 8192, 64) on a GPU
    (quick mode: (1024, 1024, 16)): a short inner dimension, so the matmul is
    quick and the epilogue's extra trips through memory show. Tensors go to
    :attr:`brrr.Device.torch_device`. Records: ``variant`` ('eager' or 'torch.compile'),
    ``backend``, shape, ``nbytes``/``flops`` (eager: :func:`epilogue_traffic` unfused; compiled: of the
    kernels it launched, :func:`launched_kernels`), ``seconds`` (median; ``min_seconds``, ``iqr_seconds``,
    ``floor_seconds``), ``predicted_seconds`` (:func:`epilogue_time` of those kernels). A failing compiler is
    noted, not raised.
    """
    import torch
    dev = live_device()
    quick = config.quick_mode()
    default = (1024, 1024, 16) if quick else ((8192, 8192, 64) if dev.on_gpu else (4096, 4096, 16))
    m, n, k = (default[i] if v is None else v for i, v in enumerate((m, n, k)))
    dtype = _arrays.dtype_name(dtype)
    roof = Roofline.from_device(dev, dtype) if roof is None else roof
    if not isinstance(roof, Roofline):
        raise TypeError(f"roof must be a brrr.Roofline, got {type(roof).__name__}")
    where, tdtype = dev.torch_device, _arrays.torch_dtype(dtype)
    gen = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(m, k, generator=gen, dtype=tdtype).to(where)
    w = torch.randn(k, n, generator=gen, dtype=tdtype).to(where)
    b = torch.randn(n, generator=gen, dtype=tdtype).to(where)

    def layer(x, w, b):
        return torch.relu(x @ w + b)

    notes, launched = [], []
    variants = {"eager": layer}
    try:
        variants["torch.compile"], launched = _compile_and_run(layer, x, w, b)
    except Exception as error:  # noqa: BLE001
        notes.append(f"torch.compile skipped: {type(error).__name__}: {str(error)[:200]}")

    def measure(variant):
        names = None if variant == "eager" else launched
        kernels = epilogue_kernels(m, n, k, False, dtype) if names is None else launched_kernels(m, n, k, names, dtype)
        nbytes, flops = sum(b for _, b, _ in kernels), sum(f for _, _, f in kernels)
        t = bench(variants[variant], x, w, b, nbytes=nbytes, flops=flops, min_samples=3, label=variant)
        return {"device": dev.name, "backend": where, "variant": variant, "m": m, "n": n, "k": k,
                "dtype": dtype, **_arrays.timing_fields(t, nbytes, flops),
                "predicted_seconds": epilogue_time(roof, m, n, k, False, dtype, names)}

    result = run_sweep("epilogue_fusion", list(variants), measure, progress=progress,
                       command=f"brrr.experiments.epilogue_fusion(m={m}, n={n}, k={k}, dtype={dtype!r})",
                       dtype=dtype, roof=roof.to_dict(), shape=(m, n, k))
    result.meta["notes"].extend(notes)
    if "torch.compile" in variants:
        same = torch.allclose(variants["torch.compile"](x, w, b), layer(x, w, b), rtol=1e-4, atol=1e-4)
        result.meta["compiled_matches_eager"] = bool(same)
        result.meta["compiled_kernels"] = launched
    return result
