"""Chapter 8, making one model go brrr: the fixed cost of an operator call, the ten steps (whose first, one eager call
on the small batch, worked problem 1 reads) and the profiles of three of them, worked problem 2's forward pass at
the ridge, decoding and training."""
from . import Measurement


def _sizes():
    from ..gpt import sizes
    return sizes()


def model(ctx=None):
    """The chapter's GPT (float32, random weights, eval), built once in the process (``ctx``: default
    :func:`brrr.registry.context`)."""
    from . import context
    ctx = ctx or context()

    def build():
        from ..gpt import GPT
        return GPT(_sizes()["config"]).eval().to(ctx.dev.torch_device)
    return ctx.shared("gpt", build)


def forward_seconds(ctx, batch: int, seq: int) -> float:
    """Median wall-clock seconds of one eager forward call of :func:`model` on ``batch`` x ``seq`` tokens, calls back
    to back (:func:`brrr.experiments.wallclock.wall_time_per_call`)."""
    import torch
    from ..config import quick_mode
    from ..experiments.wallclock import wall_time_per_call
    from ..gpt import tokens
    net = model(ctx)
    idx = tokens(net.cfg, batch, seq, device=ctx.dev.torch_device)
    with torch.no_grad():
        return wall_time_per_call(lambda: net(idx), ctx.dev.backend, budget=0.2 if quick_mode() else 0.5)["seconds"]


def _call_cost(ctx):
    from ..profiler import dispatch_overhead
    return dispatch_overhead(ctx.dev)


def _ridge(ctx):
    from ..experiments.capstone_worked import fixed_cost, ridge_call
    seq = _sizes()["small"][1]
    batch = ridge_call(_sizes()["config"], seq, ctx.dev, fixed_cost(ctx.get("capstone_call_cost"))[0])["batch"]
    return forward_seconds(ctx, batch, seq)     # at the sequences per call the chapter's answer found


def _steps(ctx):
    from ..experiments.capstone import run_steps
    return run_steps(profiles=ctx.shared("capstone_profiles", dict))


def _profile_of(step):
    def run(ctx):                   # one of the profiles the steps' run kept
        ctx.get("capstone_steps")
        return ctx.shared("capstone_profiles", dict).get(step)
    return run


def _experiments():
    from .. import experiments
    return experiments


MEASUREMENTS = [
    Measurement("capstone_call_cost", "08", _call_cost),
    Measurement("capstone_steps", "08", _steps, fields=("builds_on", "meta.mfu_peak", "rows")),
    Measurement("capstone_profile_eager", "08", _profile_of("eager"), fields=("meta.attrs.model_clock",)),
    Measurement("capstone_profile_batch", "08", _profile_of("batch"), fields=("meta.attrs.model_clock",)),
    Measurement("capstone_profile_sdpa", "08", _profile_of("sdpa"), fields=("meta.attrs.model_clock",)),
    Measurement("worked_forward_ridge", "08", _ridge),
    Measurement("capstone_decode", "08", lambda ctx: _experiments().capstone_decode.decode_sweep()),
    Measurement("capstone_train", "08", lambda ctx: _experiments().capstone_train.train_steps()),
]
