"""Chapter 2, memory bandwidth: the sweeps, the roofline, and the worked problems' arrays (each timed here only where
the roofline experiment timed no call of that size: the chapter reads that one instead)."""
from . import Measurement


def worked_sizes(quick=None) -> dict:
    """The worked problems' sizes: ``elements`` of each stream array (float32), ``m`` (A is m x m) and ``k`` (B is
    k x k); smaller in quick mode."""
    from ..config import quick_mode
    quick = quick_mode() if quick is None else quick
    return {"elements": 2 ** 22 if quick else 2 ** 26, "m": 2048 if quick else 4096, "k": 512 if quick else 1024}


def _random(dev, *shapes):
    rng = dev.xp.random.default_rng(0)                  # random data, as a model's would be
    return [rng.standard_normal(shape, dtype="float32") for shape in shapes]


def _timed(ctx, op, size):
    """Whether the roofline experiment this process has timed ``op`` at ``size`` (so the chapter reads that)."""
    from ..experiments import timed_at
    library = "brrr.kernels" if op == "triad" else ctx.dev.library
    return timed_at(ctx.get("measure_roofline"), op, size, library=library) is not None


def _copy(ctx):
    n, dev = worked_sizes()["elements"], ctx.dev
    if _timed(ctx, "copy", n):
        return None
    from .. import bench
    (src,), dst = _random(dev, n), dev.xp.zeros(n, dtype="float32")
    return bench(lambda: dev.xp.copyto(dst, src), nbytes=2 * src.nbytes, label="copy")


def _triad(ctx):
    n, dev = worked_sizes()["elements"], ctx.dev
    if _timed(ctx, "triad", n):
        return None
    from .. import bench, kernels
    (src, y), dst = _random(dev, n, n), dev.xp.zeros(n, dtype="float32")
    return bench(lambda: kernels.triad(src, y, 2.0, out=dst), nbytes=12 * n, flops=2 * n, label="triad")


def _matvec(ctx):
    m, dev = worked_sizes()["m"], ctx.dev
    from .. import bench
    (A, v), Av = _random(dev, (m, m), m), dev.xp.zeros(m, dtype="float32")
    return bench(lambda: dev.xp.matmul(A, v, out=Av), nbytes=4 * m * m + 8 * m, flops=2 * m * m, label="A @ v")


def _square_matmul(ctx):
    k, dev = worked_sizes()["k"], ctx.dev
    if _timed(ctx, "matmul", k):
        return None
    from .. import bench
    (B,), BB = _random(dev, (k, k)), dev.xp.zeros((k, k), dtype="float32")
    return bench(lambda: dev.xp.matmul(B, B, out=BB), nbytes=12 * k * k, flops=2 * k ** 3, label="B @ B")


def cos_fuser(dev) -> str:
    """The fuser of the cos experiment: brrr.kernels needs NumPy or CuPy arrays; with PyTorch tensors, torch.compile."""
    return "brrr" if dev.array_library in ("numpy", "cupy") else "torch_compile"


def _repeats(ctx):
    from ..roofline import Roofline
    return _experiments().pointwise_repeat_sweep(roof=Roofline.from_device(ctx.dev))


def _experiments():
    from .. import experiments
    return experiments


MEASUREMENTS = [
    Measurement("bandwidth_vs_size", "02", lambda ctx: _experiments().bandwidth_vs_size(), fields=("meta.stores",)),
    Measurement("bandwidth_vs_parallelism", "02", lambda ctx: _experiments().bandwidth_vs_parallelism(),
                fields=("meta.stores",)),
    Measurement("measure_roofline", "02", lambda ctx: _experiments().measure_roofline(), fields=("meta.data",)),
    Measurement("worked_copy", "02", _copy),
    Measurement("worked_triad", "02", _triad),
    Measurement("worked_matvec", "02", _matvec),
    Measurement("worked_square_matmul", "02", _square_matmul),
    Measurement("dtype_roofline", "02", lambda ctx: _experiments().dtype_roofline(),
                fields=("meta.pointwise_one", "meta.int8_b")),
    Measurement("pointwise_repeat_sweep", "02", _repeats),
    Measurement("cos_fusion", "02", lambda ctx: _experiments().fusion_speedup(ks=(1, 2), op="cos",
                                                                              backends=(cos_fuser(ctx.dev),))),
]
