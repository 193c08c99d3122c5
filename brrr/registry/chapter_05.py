"""Chapter 5, recomputation: the checkpoint sweep of the chapter's stack of MLP blocks (which worked problem 2 reads),
what torch.compile saves, and worked problem 3's GELU chain, plain and checkpointed."""
from . import Measurement

CHECKPOINT_EVERY = 4     # worked problem 2: blocks per checkpointed segment (a point of the sweep)
GELU_CHAIN = 4           # worked problem 3: GELUs in the chain


def gelu_elements(quick=None) -> int:
    """Elements of worked problem 3's input: 4 MiB of float32, or 32 MiB in full mode."""
    from ..config import quick_mode
    return 2 ** 20 if (quick_mode() if quick is None else quick) else 2 ** 23


def step_budget(dev) -> float:
    """Seconds of timing per training step (a GPU's steps are far shorter)."""
    return 1 if dev.on_gpu else 3


def _recompute():
    from ..experiments import recompute
    return recompute


def stack(ctx=None):
    """(shape, model, x): the chapter's stack (:func:`brrr.experiments.recompute.default_stack`) and a batch for it,
    built once in the process (``ctx``: default :func:`brrr.registry.context`)."""
    from . import context
    ctx = ctx or context()
    def build():
        import torch
        shape = _recompute().default_stack()
        model = _recompute().mlp_stack(shape["layers"], shape["width"])
        return shape, model, torch.randn(shape["batch"], shape["width"], device=next(model.parameters()).device)
    return ctx.shared("recompute_stack", build)


def gelu_chain(ctx=None):
    """(chain, x): worked problem 3's GELUs and their input (gradient required), built once in the process."""
    from . import context
    ctx = ctx or context()

    def build():
        import torch
        chain = torch.nn.Sequential(*(torch.nn.GELU() for _ in range(GELU_CHAIN)))
        return chain, torch.randn(gelu_elements(), device=ctx.dev.torch_device, requires_grad=True)
    return ctx.shared("gelu_chain", build)


def _gelu_step(checkpointed: bool):
    def run(ctx):
        from .. import bench
        r = _recompute()
        chain, x = gelu_chain(ctx)
        fn = r.Checkpointed(chain, GELU_CHAIN) if checkpointed else chain    # one segment: the whole chain
        return bench(r.training_step(fn, x, [x]), cache="hot", budget=step_budget(ctx.dev),
                     label=f"{'checkpointed' if checkpointed else 'plain'} GELU chain")
    return run


MEASUREMENTS = [
    Measurement("checkpoint_sweep", "05", lambda ctx: _recompute().checkpoint_sweep(), fields=("counted_flops",)),
    Measurement("compiled_recompute", "05", lambda ctx: _recompute().compiled_recompute(op="gelu", k=4),
                fields=("nbytes",)),
    Measurement("worked_plain_gelus", "05", _gelu_step(False)),
    Measurement("worked_checkpointed_gelus", "05", _gelu_step(True)),
]
