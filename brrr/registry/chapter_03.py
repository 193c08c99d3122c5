"""Chapter 3, overhead: Python's own speed, time against size, the fixed cost of a call, asynchrony, a profiler trace,
CUDA graphs, doubling the batch, and the worked problems' calls (each at the size its answer found)."""
from . import Measurement

TINY_ELEMENTS = 16                  # worked problem 1: one add this small
MLP_WIDTH, MLP_DEPTH = 128, 4       # the MLP whose batch the chapter doubles


def doubling_batches(dev, quick=None) -> list:
    """The batches the doubling sweep runs: 1 to 2**11 in quick mode, to 2**18 on a GPU, to 2**14 on a CPU."""
    from ..config import quick_mode
    quick = quick_mode() if quick is None else quick
    return [2 ** k for k in range(12 if quick else 19 if dev.on_gpu else 15)]


def mlp():
    """The chapter's MLP (:func:`brrr.experiments.mlp_factory`)."""
    return _experiments().mlp_factory(width=MLP_WIDTH, depth=MLP_DEPTH)


def _experiments():
    from .. import experiments
    return experiments


def _crossover(ctx):
    """The add at the size worked problem 2's answer finds: the sweep's fixed cost at this device's bandwidth."""
    experiments, lib = _experiments(), ctx.dev.library
    fits = experiments.fit_overheads(ctx.get("time_vs_size"))
    if lib not in fits:
        return None
    return experiments.overhead.add_seconds(lib, experiments.overhead.crossover_elements(fits[lib]["overhead"],
                                                                                        ctx.dev.peak_bandwidth))


def _trace(ctx):
    from .. import profiler, transformer
    block = transformer.small_block().to(ctx.dev.torch_device).eval()
    tokens = transformer.encoder_input(block, batch=1, seq=8, device=ctx.dev.torch_device)
    return profiler.trace(block, tokens, steps=3)


def _batch_check(ctx):
    """Batch 1 and the batch worked problem 3's answer finds, timed again."""
    doubling = ctx.get("double_the_batch")
    if doubling is None:
        return None
    b_star = _experiments().overhead.worked_batch(doubling, MLP_WIDTH, MLP_DEPTH)
    return _experiments().double_the_batch(mlp(), [1, b_star], progress=False)


def _graphs(ctx):
    from ..config import quick_mode
    return _experiments().reduce_overhead_demo(size=1024, n_ops=20, compile=not quick_mode())


MEASUREMENTS = [
    Measurement("python_ops_per_second", "03", lambda ctx: _experiments().python_ops_per_second(),
                fields=("meta.host_cpu",)),
    Measurement("time_vs_size", "03", lambda ctx: _experiments().time_vs_size(("numpy", "torch", "cupy"), op="add")),
    Measurement("call_overhead", "03", lambda ctx: _experiments().call_overhead()),
    Measurement("worked_tiny_add", "03", lambda ctx: _experiments().overhead.add_seconds(ctx.dev.library,
                                                                                         TINY_ELEMENTS)),
    Measurement("worked_crossover_add", "03", _crossover),
    Measurement("async_demo", "03", lambda ctx: _experiments().async_demo()),
    Measurement("profiler_trace", "03", _trace),
    Measurement("reduce_overhead_demo", "03", _graphs),
    Measurement("double_the_batch", "03", lambda ctx: _experiments().double_the_batch(mlp(),
                                                                                       doubling_batches(ctx.dev)),
                fields=("meta.cpu_threads",)),
    Measurement("worked_batch_check", "03", _batch_check),
]
