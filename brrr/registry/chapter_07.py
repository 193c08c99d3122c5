"""Chapter 7, diagnosing a model: the small block's profiles (in training, backward, then in eval), BERT's layer,
ResNet-18, the worked problems' Linear, and the three remedies on the block in eval."""
from . import Measurement


def _sizes():
    from ..experiments.diagnosis import sizes
    return sizes()


def block(ctx=None):
    """(block, x): the chapter's small transformer block (train mode: dropout on) and its input, built once in the
    process (``ctx``: default :func:`brrr.registry.context`); the eval profiles and the remedies switch it to eval."""
    from . import context
    ctx = ctx or context()

    def build():
        from ..transformer import encoder_input, small_block
        layer = small_block().to(ctx.dev.torch_device)
        return layer, encoder_input(layer, batch=_sizes()["batch"], seq=_sizes()["seq"], device=ctx.dev.torch_device)
    return ctx.shared("small_block", build)


def linear(ctx=None) -> dict:
    """The worked problems' ``Linear(768, 3072)`` (its transposed weight and bias, no autograd) with preallocated
    inputs and outputs for the chapter's tokens and for one token, built once in the process."""
    from . import context
    ctx = ctx or context()

    def build():
        import torch
        where, tokens = ctx.dev.torch_device, _sizes()["batch"] * _sizes()["seq"]
        lin = torch.nn.Linear(768, 3072).to(where)
        return {"tokens": tokens, "weight_t": lin.weight.detach().t(), "bias": lin.bias.detach(),
                "x": torch.randn(tokens, 768, device=where), "y": torch.empty(tokens, 3072, device=where),
                "x_one": torch.randn(1, 768, device=where), "y_one": torch.empty(1, 3072, device=where)}
    return ctx.shared("linear", build)


def _profile(backward=False, train=True):
    def run(ctx):
        from ..profiler import profile
        layer, x = block(ctx)
        layer.train(train)
        return profile(layer, x, backward=backward)
    return run


def _linear(one: bool):
    def run(ctx):
        import torch
        from .. import bench
        from ..experiments.diagnosis_records import linear_counts
        lin = linear(ctx)
        x, y, tokens = (lin["x_one"], lin["y_one"], 1) if one else (lin["x"], lin["y"], lin["tokens"])
        flops, nbytes = linear_counts(tokens)
        return bench(lambda: torch.addmm(lin["bias"], x, lin["weight_t"], out=y), flops=flops, nbytes=nbytes,
                     label="Linear(768, 3072) on 1 token" if one else f"Linear(768, 3072) on {tokens:,} tokens")
    return run


def _bert(ctx):
    from ..profiler import profile
    from ..transformer import EncoderLayer, bert_sizes, encoder_input
    bert = EncoderLayer().to(ctx.dev.torch_device)                      # BERT-base sizes, train mode
    return profile(bert, encoder_input(bert, **bert_sizes(), device=ctx.dev.torch_device))


def _resnet(ctx):
    import torch
    from .. import models
    from ..profiler import profile
    side, where = _sizes()["image"], ctx.dev.torch_device
    return profile(models.resnet18().eval().to(where), torch.randn(1, 3, side, side, device=where))


def _remedy(which):
    def run(ctx):
        from .. import experiments
        layer, x = block(ctx)
        layer.eval()
        if which == "compile":
            return experiments.compile_remedy(layer, x)
        if which == "batches":
            return experiments.batch_remedy(layer, _sizes()["batches"], _sizes()["batch_seq"],
                                            device=ctx.dev.torch_device)
        return experiments.precision_remedy(layer, x, base=ctx.get("profile_eval"))
    return run


MEASUREMENTS = [
    Measurement("profile_block", "07", _profile(), fields=("meta.attrs.model_clock",)),
    Measurement("worked_linear", "07", _linear(one=False)),
    Measurement("worked_linear_one_token", "07", _linear(one=True)),
    Measurement("profile_bert", "07", _bert, fields=("meta.attrs.model_clock",)),
    Measurement("profile_train", "07", _profile(backward=True), fields=("meta.attrs.model_clock",)),
    Measurement("profile_resnet18", "07", _resnet, fields=("meta.attrs.model_clock",)),
    Measurement("profile_eval", "07", _profile(train=False), fields=("meta.attrs.model_clock",)),
    Measurement("compile_block", "07", _remedy("compile"), fields=("meta.clock",)),
    Measurement("profile_batches", "07", _remedy("batches"), fields=("rows", "model_clock")),
    Measurement("profile_precision", "07", _remedy("precision"), fields=("model_clock",)),
]
