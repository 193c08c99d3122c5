"""Copy bandwidth against working-set size: the steps where each cache level runs out."""
from __future__ import annotations

from .. import config
from ..cpu_peaks import store_facts
from ..device import device as live_device
from ..timing import bench
from . import _arrays
from ..kernel_source import traffic
from .common import run_sweep

KiB, MiB = 1024, 1024 ** 2


def default_working_sets(dev=None, quick=None) -> list:
    """Working-set sizes in bytes: powers of 2 from 4 KiB to 16x the last-level cache (quick: 4x, every 4th)."""
    dev = dev or live_device()
    quick = config.quick_mode() if quick is None else quick
    llc = max(dev.l2_bytes, MiB)
    top = (4 if quick else 16) * llc
    sizes, s = [], (16 * KiB if quick else 4 * KiB)
    while s <= top:
        sizes.append(s)
        s *= 4 if quick else 2
    if sizes[-1] < top:
        sizes.append(top)  # always reach past the last-level cache, where DRAM answers
    return sizes


def bandwidth_vs_size(sizes=None, dtype="float32", progress: bool = True):
    """Copy bandwidth (GB/s) for working sets from a few KiB to far beyond the last-level cache.

    Each point copies one preallocated array into another (NumPy ``copyto`` on the
    CPU, CuPy or PyTorch on a GPU); the working set is both arrays, which is also
    the number of bytes one copy moves (read ``size`` elements, write them).

    Timed with ``cache='hot'``: the cache is *not* flushed between samples, so a
    working set that fits in L1, L2 or L3 is served from there. That is the point
    of this experiment: the steps in the curve are the cache levels, and only
    the sizes well past the last-level cache show DRAM bandwidth. (On a GPU,
    CUDA graphs hide the launch cost of the small copies.)

    Parameters
    ----------
    sizes : working-set sizes in bytes (source + destination); default
        :func:`default_working_sets` (fewer, smaller in quick mode).
    dtype : element type, e.g. 'float32'.

    Returns a :class:`brrr.Result` with one record per size: ``working_set``
    and ``nbytes`` (bytes), ``size`` (elements per array), ``seconds`` (median),
    ``min``, ``iqr``, ``gbps``. ``meta['caches']`` holds the cache sizes (bytes); on a CPU,
    ``meta['stores']`` says which copies the C library writes with streaming stores
    (:func:`brrr.cpu_peaks.store_facts`), since that changes the bytes a copy really moves.
    """
    dtype = _arrays.dtype_name(dtype)
    dev = live_device()
    sizes = default_working_sets(dev) if sizes is None else _arrays.check_sizes("sizes", sizes)
    item = _arrays.itemsize(dtype)
    lib = dev.library
    copy = _arrays.copier(lib)

    def measure(working_set):
        n = max(1, working_set // (2 * item))
        src = dev.full(n, 1.0, dtype, lib)
        dst = dev.full(n, 0.0, dtype, lib)
        nbytes = traffic("copy", n, dtype=dtype)[0]
        kwargs = dict(cache="hot", nbytes=nbytes, label=f"copy {nbytes} B")
        if dev.on_gpu:
            try:
                t = bench(copy, dst, src, cuda_graph=True, **kwargs)
            except Exception as error:  # noqa: BLE001 - graphs are an optimisation
                if _is_oom(error):
                    raise
                t = bench(copy, dst, src, **kwargs)
        else:
            t = bench(copy, dst, src, **kwargs)
        del src, dst
        return {"device": dev.name, "backend": dev.backend, "library": lib, "op": "copy",
                "dtype": dtype, "size": n, "working_set": nbytes, "cache": "hot",
                **_arrays.timing_fields(t, nbytes, 0)}

    result = run_sweep("bandwidth_vs_size", sizes, measure,
                       command=f"brrr.experiments.bandwidth_vs_size(dtype={dtype!r})",
                       progress=progress, caches=_arrays.caches(dev), llc_bytes=dev.l2_bytes,
                       quick=config.quick_mode(), dtype=dtype)
    if not dev.on_gpu:
        result.meta["stores"] = store_facts()
    return result


def _is_oom(error) -> bool:
    from .common import is_out_of_memory
    return is_out_of_memory(error)
