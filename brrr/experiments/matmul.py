"""Square matmul throughput against size: how big a matmul must be to reach the compute roof."""
from __future__ import annotations

import contextlib

from .. import config, tf32
from ..device import device as live_device
from ..timing import bench
from . import _arrays
from .common import run_sweep


def default_matmul_sizes(dev=None, quick=None) -> list:
    """Matrix sides n: powers of 2, smaller and fewer in quick mode and on the CPU."""
    dev = dev or live_device()
    quick = config.quick_mode() if quick is None else quick
    if dev.on_gpu:
        top = 4096 if quick else 16384
        start = 256 if quick else 64
    else:
        top = 512 if quick else 2048
        start = 32
    sizes, n = [], start
    while n <= top:
        sizes.append(n)
        n *= 2
    return sizes


DATA = "random normal"   # what every matmul benchmark multiplies (meta['data'])


def random_normal(dev, shape, dtype, lib, seed: int = 0):
    """An array of ``shape`` on ``dev`` (made by ``lib``) holding standard normal values in ``dtype``.

    Matmul benchmarks multiply these, not constant matrices: on a GPU, constant data switches
    fewer bits, draws less power and lets the clock stay higher, so it runs faster than real
    data would (He, "Strangely, Matrix Multiplications on GPUs Run Faster When Given
    'Predictable' Data", 2024). An n-long dot product of these has a standard deviation of
    sqrt(n), well inside float16's range for every n the book uses."""
    array = dev.full(shape, 0.0, dtype, lib)
    if lib == "torch":
        import torch
        gen = torch.Generator(device=array.device).manual_seed(seed)
        return array.normal_(0.0, 1.0, generator=gen)
    if lib == "cupy":
        import cupy
        array[...] = cupy.random.default_rng(seed).standard_normal(shape, dtype="float32")
        return array
    import numpy as np
    array[...] = np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)
    return array


def matmul_library(dev, dtype) -> str:
    """Which library multiplies: NumPy on the CPU (PyTorch CPU for 16-bit types); PyTorch, else CuPy, on a GPU."""
    if not dev.on_gpu:
        if dtype in ("float32", "float64"):
            return "numpy"
        try:
            import torch  # noqa: F401
            return "torch"
        except ImportError:
            raise ValueError(f"dtype {dtype!r} on the CPU needs PyTorch (NumPy has no fast "
                             "16-bit matmul); use 'float32' or 'float64'") from None
    try:
        import torch
        if torch.cuda.is_available():
            return "torch"
    except ImportError:
        pass
    return "cupy"


@contextlib.contextmanager
def _tf32(lib, enabled: bool):
    """Let PyTorch use TF32 tensor cores for float32 matmuls inside the block (restored after)."""
    if lib != "torch":
        yield
        return
    import torch
    with tf32.setting(torch, "matmul", enabled):
        yield


def matmul_vs_size(sizes=None, dtype="float32", tensor_cores: bool = False, cache: str = "flush",
                   progress: bool = True):
    """FLOP/s of an n x n by n x n matmul (2 n^3 FLOPs) for each n in ``sizes``.

    NumPy (BLAS) on the CPU; PyTorch (else CuPy) on a GPU, where ``tensor_cores``
    selects TF32 for float32 (``torch.backends.cuda.matmul.allow_tf32``) and the
    tensor-core peak for float16/bfloat16. Outputs are preallocated. Each record
    carries the device's peak FLOP/s for that dtype (``peak_flops``, with
    ``peak_source``) and ``fraction_of_peak``, so plots can show % of peak.
    ``nbytes`` is the least traffic a matmul needs: read A and B, write C. A and B hold
    random normal values (:func:`random_normal`), not constants, and ``meta['data']`` says so.

    On the CPU there are no tensor cores: ``tensor_cores=True`` runs general
    math and says so in ``meta['notes']``.
    """
    dtype = _arrays.dtype_name(dtype)
    if not isinstance(tensor_cores, bool):
        raise TypeError(f"tensor_cores must be True or False, got {tensor_cores!r}")
    if cache not in ("flush", "hot"):
        raise ValueError(f"cache must be 'flush' or 'hot', got {cache!r}")
    dev = live_device()
    sizes = default_matmul_sizes(dev) if sizes is None else _arrays.check_sizes("sizes", sizes)
    lib = matmul_library(dev, dtype)
    notes = []
    use_tc = tensor_cores
    if tensor_cores and (not dev.on_gpu or not dev.has_tensor_cores(dtype)):
        notes.append(f"no tensor cores for {dtype} on {dev.name}: ran general math")
        use_tc = False
    elif not tensor_cores and dev.on_gpu and dtype in ("float16", "bfloat16") and dev.has_tensor_cores(dtype):
        # cuBLAS runs 16-bit matmuls on tensor cores whatever is asked: judge them by that peak
        notes.append(f"cuBLAS runs {dtype} matmuls on tensor cores whatever tensor_cores says: "
                     "judged against the tensor-core peak")
        use_tc = True
    if use_tc and dtype == "float32" and lib == "cupy":
        notes.append("CuPy decides TF32 by the CUPY_TF32 environment variable, read at import")
    peak = dev.peak_flops(dtype, use_tc)
    item = _arrays.itemsize(dtype)

    def measure(n):
        a = random_normal(dev, (n, n), dtype, lib, seed=1)
        b = random_normal(dev, (n, n), dtype, lib, seed=2)
        c = dev.full((n, n), 0.0, dtype, lib)
        fn = _matmul_fn(lib)
        flops, nbytes = 2.0 * n ** 3, 3.0 * n * n * item
        with _tf32(lib, use_tc and dtype == "float32"):
            t = bench(fn, a, b, c, cache=cache, nbytes=nbytes, flops=flops, min_samples=3,
                      label=f"matmul n={n}", backend=dev.backend)
        del a, b, c
        fields = _arrays.timing_fields(t, nbytes, flops)
        return {"device": dev.name, "backend": dev.backend, "library": lib, "op": "matmul",
                "dtype": dtype, "tensor_cores": use_tc, "n": n, "size": n, **fields,
                "peak_flops": peak, "peak_source": dev.source,
                "fraction_of_peak": flops / fields["seconds"] / peak}

    result = run_sweep("matmul_vs_size", sizes, measure, progress=progress,
                       command=(f"brrr.experiments.matmul_vs_size(dtype={dtype!r}, "
                                f"tensor_cores={tensor_cores})"),
                       dtype=dtype, tensor_cores=use_tc, peak_flops=peak, quick=config.quick_mode(),
                       data=DATA)
    result.meta["notes"].extend(notes)
    return result


def _matmul_fn(lib):
    if lib == "torch":
        import torch
        return lambda a, b, c: torch.matmul(a, b, out=c)
    xp = __import__(lib)
    return lambda a, b, c: xp.matmul(a, b, out=c)
