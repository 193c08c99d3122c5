"""The pointwise-repeat sweep: ``for _ in range(repeat): x = x * 2``, fused and unfused.

Horace He's "Making Deep Learning Go Brrrr" uses this loop to show the memory
wall (summarised in seeds 002 and 004): when the ``repeat`` multiplications run
in one fused kernel, each element is read once and written once whatever
``repeat`` is, so the runtime stays flat while the kernel is memory-bound and
only starts to grow once the arithmetic takes longer than the memory traffic.
The knee sits where the intensity ``repeat / (2 * itemsize)`` FLOP/byte crosses
the ridge point; He (2022) puts it at roughly 100 operations per element for
FP32 on an A100.

Run eagerly (one kernel per ``x * 2``, as plain PyTorch does), every repeat
reads and writes the whole tensor again, so the runtime grows with ``repeat``
from the start. This module records both: 'fused' through
:func:`brrr.kernels.chain` (or ``torch.compile`` on a GPU without CuPy) and
'eager' through PyTorch (NumPy where PyTorch is missing).
"""
from __future__ import annotations


from .. import config
from ..arrays import alternate
from ..device import device as live_device
from ..roofline import Roofline
from ..timing import bench
from . import _arrays
from ._arrays import default_elements
from .common import run_sweep

VARIANTS = ("fused", "eager")


def default_repeats(quick=None) -> tuple:
    """1, 2, 4, ..., 256 (quick mode: 1, 4, 16, 64)."""
    quick = config.quick_mode() if quick is None else quick
    return (1, 4, 16, 64) if quick else tuple(2 ** k for k in range(9))


def predicted_knee(roof: Roofline, dtype="float32") -> float:
    """Repeat count at which a fused chain's intensity, repeat / (2 * itemsize), reaches the ridge."""
    return roof.ridge * 2 * _arrays.itemsize(dtype)


def measured_knee(records, variant: str = "fused"):
    """Repeat count where the measured runtime leaves its flat, memory-bound floor.

    The roofline model says runtime = max(floor, repeat x s), with ``s`` the
    seconds one multiplication of the whole tensor costs at full compute speed.
    The floor is the fastest runtime of the sweep; ``s`` is the smallest
    seconds-per-repeat seen (every point satisfies seconds >= repeat x s). The
    knee is where the two lines meet: floor / s. None when the runtime never
    rose above 1.5x its floor (the sweep stayed memory-bound).
    """
    rows = sorted((r["repeat"], r["seconds"]) for r in records if r.get("variant") == variant)
    if len(rows) < 2:
        return None
    floor = min(s for _, s in rows)
    if max(s for _, s in rows) < 1.5 * floor:
        return None
    per_repeat = min(s / r for r, s in rows)
    return floor / per_repeat


def _fused_runner(dev, dtype, n):
    """(library, make_call(repeat) -> zero-argument fn) for the fused variant, or (None, why)."""
    kernels, why = _arrays.try_kernels()
    lib = dev.library
    if kernels is not None and lib in ("numpy", "cupy") and dtype in ("float32", "float64"):
        x = dev.full(n, 1.0, dtype, lib)
        out = dev.full(n, 0.0, dtype, lib)
        return "brrr.kernels", lambda r: (lambda: kernels.chain(x, r, op="mul", fused=True, out=out, c=2.0))
    if dev.on_gpu:
        try:
            import torch
            x = dev.full(n, 1.0, dtype, "torch")   # on dev.torch_device

            def make(repeat):
                torch._dynamo.reset()  # a fresh graph per repeat count

                def f(t):
                    for _ in range(repeat):
                        t = t * 2
                    return t
                compiled = torch.compile(f)
                return lambda: compiled(x)
            make(1)()   # compiles lazily: try it here, where a failure skips the variant with a note
            return "torch.compile", make
        except Exception as error:  # noqa: BLE001
            why = f"{why}; torch.compile unavailable ({error})"
    return None, why or f"no fused kernel for {dtype} on {dev.name}"


def _eager_runner(dev, dtype, n):
    """(library, make_call(repeat)) for the unfused variant: one pass per ``x * 2``.

    Each pass reads the previous result and writes a new array, as eager
    ``x = x * 2`` does (PyTorch's caching allocator hands back the same two
    blocks); the passes alternate between two preallocated arrays, so nothing is
    allocated while timing. Out of place like the fused kernel and the measured
    roof, so all three pay the same write-allocate traffic on a CPU.
    """
    try:
        import torch
        lib, mul = "torch", lambda a, out: torch.mul(a, 2, out=out)
        x = dev.full(n, 1.0, dtype, "torch")
        buffers = (torch.empty_like(x), torch.empty_like(x))
    except ImportError:
        lib = dev.library
        xp = __import__(lib)
        mul = lambda a, out: xp.multiply(a, 2, out=out)  # noqa: E731
        x = dev.full(n, 1.0, dtype, lib)
        buffers = (dev.full(n, 0.0, dtype, lib), dev.full(n, 0.0, dtype, lib))

    def make(repeat):
        return lambda: alternate(mul, x, buffers[0], buffers[1], repeat)
    return lib, make


def pointwise_repeat_sweep(repeats=None, n=None, dtype="float32", variants=VARIANTS,
                           max_eager_repeat=None, roof=None, progress: bool = True):
    """Runtime, FLOP/s and bandwidth of ``repeat`` multiplications by 2 of an ``n``-element tensor.

    Parameters
    ----------
    repeats : repeat counts (default :func:`default_repeats`).
    n : elements in the tensor (default :func:`default_elements`).
    dtype : 'float32' (default) or 'float64'.
    variants : any of 'fused' (all repeats in one kernel: one read and one write
        per element) and 'eager' (one pass per multiplication, outputs
        preallocated so no time goes to allocating memory).
    max_eager_repeat : skip eager points above this repeat (they take repeat
        passes over memory); default: all on a GPU, 64 on the CPU.
    roof : the :class:`brrr.Roofline` used for the predicted knee; default
        ``Roofline.from_device()`` (spec on a GPU, measured peaks on the CPU).

    Records: ``variant``, ``repeat``, ``n``, ``flops`` (repeat x n), ``nbytes``
    (fused: 2 n itemsize; eager: repeat times that), ``seconds``, ``gflops``,
    ``gbps``. ``meta`` holds ``predicted_knee`` (repeat at the ridge),
    ``measured_knee`` (from the fused runtimes), ``ridge`` and the roof used.
    """
    dtype = _arrays.dtype_name(dtype)
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype must be 'float32' or 'float64' for this sweep, got {dtype!r}")
    repeats = default_repeats() if repeats is None else _arrays.check_sizes("repeats", repeats)
    if isinstance(variants, str):
        variants = (variants,)
    bad = [v for v in variants if v not in VARIANTS]
    if bad or not variants:
        raise ValueError(f"variants must be a subset of {VARIANTS}, got {variants!r}")
    dev = live_device()
    n = default_elements(dev, dtype) if n is None else _arrays.check_sizes("n", [n])[0]
    if max_eager_repeat is None:
        max_eager_repeat = max(repeats) if dev.on_gpu else 64
    if roof is None:
        roof = Roofline.from_device(dev, dtype)
    elif not isinstance(roof, Roofline):
        raise TypeError(f"roof must be a brrr.Roofline, got {type(roof).__name__}")
    item = _arrays.itemsize(dtype)
    notes = []
    if n * item < 4 * dev.l2_bytes and not dev.on_gpu:
        notes.append(f"the tensor ({n * item / 2**20:.0f} MiB) is smaller than 4x the last-level cache "
                     f"({dev.l2_bytes / 2**20:.0f} MiB), so some traffic may be served from cache")

    runners = {}
    if "fused" in variants:
        lib, make = _fused_runner(dev, dtype, n)
        if lib is None:
            notes.append(f"fused variant skipped: {make}")
        else:
            runners["fused"] = (lib, make)
    if "eager" in variants:
        runners["eager"] = None             # made when its first point comes, after the fused arrays are freed
    points = [(v, r) for v in runners for r in repeats if v != "eager" or r <= max_eager_repeat]
    if any(v == "eager" and r > max_eager_repeat for v in runners for r in repeats):
        notes.append(f"eager points above repeat={max_eager_repeat} skipped (each is repeat passes over memory)")

    def measure(point):
        variant, repeat = point
        if runners[variant] is None:        # one variant's arrays in memory at a time
            runners.pop("fused", None)
            runners[variant] = _eager_runner(dev, dtype, n)
        lib, make = runners[variant]
        passes = 1 if variant == "fused" else repeat
        nbytes, flops = 2 * passes * n * item, repeat * n
        t = bench(make(repeat), nbytes=nbytes, flops=flops, min_samples=3,
                  label=f"{variant} x{repeat}")
        return {"device": dev.name, "backend": dev.backend, "library": lib, "variant": variant,
                "op": "mul", "dtype": dtype, "repeat": repeat, "n": n, "size": n,
                **_arrays.timing_fields(t, nbytes, flops)}

    result = run_sweep("pointwise_repeat_sweep", points, measure, progress=progress,
                       command=f"brrr.experiments.pointwise_repeat_sweep(n={n}, dtype={dtype!r})",
                       dtype=dtype, n=n, quick=config.quick_mode(), ridge=roof.ridge,
                       roof=roof.to_dict(), predicted_knee=predicted_knee(roof, dtype))
    result.meta["notes"].extend(notes)
    result.meta["measured_knee"] = measured_knee(result.records, "fused")
    return result
