"""Latency-bound: one memory-bound kernel with too little parallel work to fill the memory system.

The roofline says a copy is memory-bound and should run at the DRAM bandwidth. That holds only
when the copy keeps enough memory requests outstanding. Little's law says how many: the bytes in
flight at any moment equal the bandwidth times the latency of one request. One CPU thread, or one
GPU block, has a limited number of loads it can have outstanding, so below some amount of
parallelism the kernel is *latency-bound*: it waits for each request's round trip, not for the
bandwidth, and reaches only a fraction of the roof while it runs (Minnaar, 2020).

:func:`bandwidth_vs_parallelism` runs one copy on arrays larger than the last-level cache with
more and more parallel workers: on the CPU the parallel Numba copy of :mod:`brrr.kernels` with
``numba.set_num_threads(k)`` for k = 1 up to ``numba.config.NUMBA_NUM_THREADS`` (the thread
count is put back afterwards, also after an error); on a GPU the CUDA copy of
:mod:`brrr.kernel_source` (one 16-byte vector per thread, striding when the grid is smaller
than the array; blocks of :data:`~brrr.kernel_source.CUDA_BLOCK` threads) launched with 1, 2,
4, ... blocks, up to 32 per SM. :func:`load_latency` measures the
latency itself with a pointer chase, a chain of loads in which each address is the value the
previous load returned, so exactly one request is in flight; with it every point of the sweep gets
Little's estimate of its bytes in flight.
"""
from __future__ import annotations

import functools
import math
import os

import numpy as np

from .. import config
from ..cpu_peaks import store_facts
from ..device import device as live_device
from ..kernel_source import CUDA_BLOCK, cuda_source, traffic
from ..timing import bench
from . import _arrays
from .common import run_sweep

LINE_BYTES = 64        # one pointer per 64-byte stretch: every load of the chase touches a new cache line
ARRAY_FACTOR = 4       # each array is at least 4x the last-level cache (STREAM's rule); quick mode: 1x
BLOCKS_PER_SM = 32     # the GPU sweep goes up to 32 blocks per SM, more than an SM holds at once
CHASE_STEPS = {("cpu", False): 2 ** 20, ("cpu", True): 2 ** 16,
               ("cuda", False): 2 ** 16, ("cuda", True): 2 ** 13}

CHASE_CUDA = r'''extern "C" __global__ void brrr_chase(const long long* next, const long long steps,
                                   long long* where)
{
    // One thread follows the chain: each load's address is the previous load's value,
    // so the loads cannot overlap and each one costs a full trip to memory. It starts
    // where the last call stopped (where[0]) and leaves its end there for the next call.
    long long i = where[0];
    for (long long s = 0; s < steps; ++s) {
        i = next[i];
    }
    where[0] = i;
}
'''


# --- what to sweep --------------------------------------------------------------------

def default_elements(dev=None, dtype="float32", quick=None) -> int:
    """Elements per array: the smallest power of 2 whose array is at least ARRAY_FACTOR times the
    last-level cache (the GPU's L2, the CPU's L3); quick mode: at least the cache itself."""
    dev = dev or live_device()
    quick = config.quick_mode() if quick is None else quick
    need = (1 if quick else ARRAY_FACTOR) * max(dev.l2_bytes, 2 ** 20) // _arrays.itemsize(dtype)
    return 2 ** math.ceil(math.log2(need))


def max_threads() -> int:
    """The most threads Numba's parallel kernels may use here (``numba.config.NUMBA_NUM_THREADS``)."""
    import numba
    return int(numba.config.NUMBA_NUM_THREADS)


def default_threads(most=None) -> list:
    """1, 2, ... up to ``most`` (default :func:`max_threads`); above 8: powers of 2 and ``most``."""
    most = max_threads() if most is None else int(most)
    if most <= 8:
        return list(range(1, most + 1))
    return sorted({2 ** k for k in range(int(math.log2(most)) + 1)} | {most})


def default_blocks(sm_count: int) -> list:
    """1, 2, 4, ... blocks up to BLOCKS_PER_SM per SM, plus one, eight and BLOCKS_PER_SM per SM."""
    top = BLOCKS_PER_SM * sm_count
    return sorted({2 ** k for k in range(int(math.log2(top)) + 1)} | {sm_count, 8 * sm_count, top})


# --- the latency of one load: a pointer chase ------------------------------------------

def chase_chain(nbytes: int, seed: int = 0) -> np.ndarray:
    """An int64 array of ``nbytes`` bytes holding one random cycle through all its cache lines.

    Element ``8 * j`` (the first of line ``j``) holds the index of the next line's first element;
    following the values from index 0 visits every line once, in random order, so no cache line
    is used twice before the whole buffer has been read and the prefetchers cannot guess the next.
    """
    per_line = LINE_BYTES // 8
    lines = max(2, int(nbytes) // LINE_BYTES)
    chain = np.zeros(lines * per_line, dtype=np.int64)
    order = np.random.default_rng(seed).permutation(lines).astype(np.int64) * per_line
    chain[order] = np.roll(order, -1)
    return chain


@functools.lru_cache(maxsize=None)
def _numba_chase():
    import numba

    @numba.njit(boundscheck=False, nogil=True)
    def chase(chain, start, steps):
        i = start
        for _ in range(steps):
            i = chain[i]
        return i
    return chase


@functools.lru_cache(maxsize=None)
def _cupy_chase():
    import cupy
    return cupy.RawKernel(CHASE_CUDA, "brrr_chase", options=("--fmad=false",))


def load_latency(nbytes=None, steps=None, dev=None) -> dict:
    """Seconds per load of a pointer chase through ``nbytes`` (default: ARRAY_FACTOR times the
    last-level cache, at least 64 MiB), ``steps`` loads per call: DRAM's latency as one thread
    sees it, with nothing else in flight. Numba on the CPU, one CUDA thread on a GPU.

    Each call goes on from where the last one stopped, so the calls together walk the whole
    cycle before any line comes round again: however few ``steps`` a call takes, the lines it
    loads were not left in a cache by the call before.

    Returns ``{'seconds_per_load', 'buffer_bytes', 'steps', 'backend', 'method', **timing fields}``
    (the timing fields are of one call of ``steps`` loads).
    """
    dev = dev or live_device()
    quick = config.quick_mode()
    nbytes = int(nbytes or max(ARRAY_FACTOR * dev.l2_bytes, 64 * 2 ** 20))
    steps = int(steps or CHASE_STEPS[(dev.backend, quick)])
    if nbytes < 2 * LINE_BYTES or steps < 1:
        raise ValueError(f"nbytes must be at least {2 * LINE_BYTES} and steps at least 1, got {nbytes}, {steps}")
    chain = chase_chain(nbytes)
    if dev.on_gpu:
        import cupy
        chain = cupy.asarray(chain)
        where = cupy.zeros(1, dtype=cupy.int64)
        kernel = _cupy_chase()
        fn = lambda: kernel((1,), (1,), (chain, np.int64(steps), where))  # noqa: E731
        method = "one CUDA thread follows a random cycle of 64-byte lines"
    else:
        chase, where = _numba_chase(), [0]

        def fn():
            where[0] = chase(chain, where[0], steps)
        method = "one Numba loop follows a random cycle of 64-byte lines"
    t = bench(fn, cache="hot", label=f"pointer chase, {steps} loads")
    return {"seconds_per_load": t.median / steps, "buffer_bytes": int(chain.nbytes), "steps": steps,
            "backend": dev.backend, "method": method, **t.record_fields()}


# --- the sweep ----------------------------------------------------------------------

def _gpu_copy(dtype: str):
    """The CUDA copy of :mod:`brrr.kernel_source`, compiled by CuPy (``--fmad=false`` like the rest)."""
    import cupy
    ctype = {"float32": "float", "float64": "double"}[dtype]
    return cupy.RawKernel(cuda_source("copy", dtype), f"brrr_copy_{ctype}", options=("--fmad=false",))


def _check_copied(src, dst, where: str):
    """RuntimeError unless the copy did its work (first, middle and last elements)."""
    n = int(src.size)
    for i in (0, n // 2, n - 1):
        if float(dst[i]) != float(src[i]):
            raise RuntimeError(f"the copy with {where} left element {i} unwritten: the timing would be of "
                               "a kernel that did not run")


NO_CUPY = ("the GPU sweep launches a CuPy kernel with a chosen number of blocks, and CuPy is not installed "
           "(pip install cupy-cuda12x; or set BRRR_DEVICE=cpu to sweep the CPU's threads)")


def bandwidth_vs_parallelism(parallelism=None, elements=None, dtype="float32", latency: bool = True,
                             chase_bytes=None, progress: bool = True):
    """Achieved copy bandwidth against parallelism: CPU threads, or GPU blocks.

    Parameters
    ----------
    parallelism : thread counts (CPU, each at most ``numba.config.NUMBA_NUM_THREADS``) or block
        counts (GPU); default :func:`default_threads` or :func:`default_blocks`.
    elements : elements per array (default :func:`default_elements`, beyond the last-level cache).
    dtype : 'float32' or 'float64'.
    latency : also measure one load's latency (:func:`load_latency`) and estimate each point's
        bytes in flight by Little's law (bandwidth x latency).
    chase_bytes : the pointer chase's buffer in bytes (default: see :func:`load_latency`).

    Returns a :class:`brrr.Result` named 'bandwidth_vs_parallelism', one record per point:
    ``parallelism`` and ``unit`` ('threads' or 'blocks'), ``threads`` (GPU: blocks x threads per
    block), ``size`` (elements), ``nbytes`` (one read and one write per element), the timing
    fields, ``gbps``, ``fraction_of_roof`` (of the device's peak bandwidth) and, with
    ``latency``, ``bytes_in_flight``. ``meta['latency']`` holds the chase's result, and
    ``meta['load_average']`` and ``meta['cpus']`` how busy the machine was (:func:`load_average`);
    on a CPU ``meta['stores']`` how copies store there (:func:`brrr.cpu_peaks.store_facts`).
    On a GPU without CuPy it has no records and ``meta['unavailable']`` says why.
    """
    dtype = _arrays.dtype_name(dtype)
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    dev = live_device()
    if dev.on_gpu and dev.array_library != "cupy":    # a chapter goes on: the result says why it is empty
        from ..device import provenance
        from ..results import Result
        return Result("bandwidth_vs_parallelism", meta=provenance(
            f"brrr.experiments.bandwidth_vs_parallelism(dtype={dtype!r})", unavailable=NO_CUPY))
    n = int(elements) if elements is not None else default_elements(dev, dtype)
    if n < 1:
        raise ValueError(f"elements must be at least 1, got {elements!r}")
    nbytes = traffic("copy", n, dtype=dtype)[0]
    if dev.on_gpu:
        sm_count = dev.sm_count or _gpu_sm_count()
        points = default_blocks(sm_count) if parallelism is None else _arrays.check_sizes("parallelism", parallelism)
    else:
        sm_count = None
        most = max_threads()
        points = default_threads(most) if parallelism is None else _arrays.check_sizes("parallelism", parallelism)
        if max(points) > most:
            raise ValueError(f"parallelism must be at most numba.config.NUMBA_NUM_THREADS = {most} threads, "
                             f"got {max(points)}")
    chase = load_latency(chase_bytes, dev=dev) if latency else None
    roof = dev.peak_bandwidth
    src = dev.full(n, 1.0, dtype, dev.library)
    dst = dev.full(n, 0.0, dtype, dev.library)
    unit = "blocks" if dev.on_gpu else "threads"
    run_one = _gpu_runner(src, dst, dtype) if dev.on_gpu else _cpu_runner(src, dst)

    def measure(p):
        dst.fill(0)
        t = run_one(p, nbytes)
        _check_copied(src, dst, f"{p} {unit}")
        record = {"device": dev.name, "backend": dev.backend, "library": "cupy" if dev.on_gpu else "numba",
                  "op": "copy", "dtype": dtype, "size": n, "parallelism": p, "unit": unit,
                  "threads": p * CUDA_BLOCK if dev.on_gpu else p, **_arrays.timing_fields(t, nbytes, 0)}
        record["fraction_of_roof"] = record["gbps"] * 1e9 / roof
        if chase:
            record["bytes_in_flight"] = record["gbps"] * 1e9 * chase["seconds_per_load"]
        return record

    result = run_sweep("bandwidth_vs_parallelism", points, measure,
                       command=f"brrr.experiments.bandwidth_vs_parallelism(dtype={dtype!r})", progress=progress,
                       unit=unit, dtype=dtype, n=n, kernel="copy", sm_count=sm_count,
                       block=CUDA_BLOCK if dev.on_gpu else None, max_threads=None if dev.on_gpu else max_threads(),
                       latency=chase, line_bytes=LINE_BYTES, roof_bandwidth=roof, quick=config.quick_mode())
    # How busy the machine was: on a CPU, other programs' threads compete with the sweep's.
    result.meta.update(load_average=load_average(), cpus=os.cpu_count())
    if not dev.on_gpu:
        result.meta["stores"] = store_facts()
    return result


def load_average():
    """The system's load average over the last minute (processes running or waiting for a CPU, this
    one included), or None where the system does not report it."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


def _cpu_runner(src, dst):
    """``run(threads, nbytes) -> Timing``: the Numba copy on ``threads`` threads, the count put back after."""
    import numba
    from .. import kernels

    def run(threads, nbytes):
        before = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            return bench(kernels.copy, src, dst, cache="hot", nbytes=nbytes, label=f"copy, {threads} threads")
        finally:
            numba.set_num_threads(before)
    return run


def _gpu_runner(src, dst, dtype):
    """``run(blocks, nbytes) -> Timing``: the CUDA copy on ``blocks`` blocks of CUDA_BLOCK threads."""
    kernel = _gpu_copy(dtype)
    size = np.int64(src.size)

    def run(blocks, nbytes):
        launch = lambda: kernel((blocks,), (CUDA_BLOCK,), (src, dst, size))  # noqa: E731
        return bench(launch, cache="hot", nbytes=nbytes, label=f"copy, {blocks} blocks")
    return run


def _gpu_sm_count() -> int:
    import cupy
    return int(cupy.cuda.Device().attributes["MultiProcessorCount"])
