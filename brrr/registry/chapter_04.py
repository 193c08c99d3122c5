"""Chapter 4, fusion: the worked problems' chains (on one set of arrays), the fusers against each other, what Inductor
makes of four multiplications, the cos chain and the epilogue."""
from . import Measurement

CHAIN_K = 8      # worked problem 1: multiplications in the chain


def chain_elements(quick=None) -> int:
    """Elements of the worked problems' float32 arrays: 16 MiB, or 128 MiB each in full mode."""
    from ..config import quick_mode
    return 2 ** 22 if (quick_mode() if quick is None else quick) else 2 ** 25


def four_multiplications(x):
    """The chain Inductor compiles in the chapter: four multiplications by a constant."""
    for _ in range(4):
        x = x * 0.999
    return x


def chain_arrays(ctx=None):
    """(x, out, scratch): random float32 arrays of :func:`chain_elements`, allocated once for every chain of the
    process (``ctx``: default :func:`brrr.registry.context`)."""
    from . import context
    ctx = ctx or context()
    def build():
        n = chain_elements()
        rng = ctx.dev.xp.random.default_rng(0)
        return rng.standard_normal(n, dtype="float32"), ctx.dev.xp.empty(n, "float32"), ctx.dev.xp.empty(n, "float32")
    return ctx.shared("chain_arrays", build)


def _chain(k_of, op="mul", fused=True):
    def run(ctx):
        from .. import bench, kernels
        x, out, scratch = chain_arrays(ctx)
        k, n = k_of(ctx), x.size
        per_link = 2 if op == "ffma" else 1
        extra = {} if fused else {"scratch": scratch}
        what = f"{k} multiply-adds" if op == "ffma" else str(k)
        return bench(lambda: kernels.chain(x, k, op=op, fused=fused, out=out, **extra),
                     nbytes=8 * n * (1 if fused else k), flops=per_link * k * n,
                     label=f"{'fused' if fused else 'unfused'} chain of {what}")
    return run


def _cap(op):
    def k_of(ctx):                  # twice the cap, as the chapter's answer finds it
        from ..experiments.fusion_model import past_cap
        from ..roofline import Roofline
        return past_cap(Roofline.from_device(ctx.dev), op, ctx.dev.backend)
    return k_of


def _fusion():
    from ..experiments import fusion
    return fusion


def _inspect(ctx):
    import torch
    return _fusion().inspect_compiled(four_multiplications, torch.ones(1024, device=ctx.dev.torch_device))


MEASUREMENTS = [
    Measurement("worked_fused_chain", "04", _chain(lambda ctx: CHAIN_K)),
    Measurement("worked_unfused_chain", "04", _chain(lambda ctx: CHAIN_K, fused=False)),
    Measurement("fusion_kernels", "04", lambda ctx: _fusion().fusion_speedup(backends=("brrr", "cupy_fuse"))),
    Measurement("inspect_compiled", "04", _inspect),
    Measurement("fusion_torch_compile", "04", lambda ctx: _fusion().fusion_speedup(
        ks=_fusion().default_ks(sweep="torch_compile"), backends=("torch_compile",))),
    Measurement("worked_long_chain", "04", _chain(_cap("mul"))),
    Measurement("worked_fma_chain", "04", _chain(_cap("ffma"), op="ffma")),
    Measurement("fusion_cos_chain", "04", lambda ctx: _fusion().cos_chain()),
    Measurement("epilogue_fusion", "04", lambda ctx: _fusion().epilogue_fusion()),
]
