"""Chapter 6, the intensity of real networks: the paper's convolutions measured, the worked problem's matmul at the
ridge batch, the networks' predictions against their times, and the layer kinds of MobileNet-V2."""
from . import Measurement

CONV_LAYER = {"M": 256, "S_o": 28, "S_k": 3}     # Table III's layer: channels in and out, feature-map side, filter side


def ridge_width(quick=None) -> int:
    """n of worked problem 2's n x n float32 weight."""
    from ..config import quick_mode
    return 1024 if (quick_mode() if quick is None else quick) else 2048


def _convs(ctx):
    from ..intensity import measure_convs
    layer = CONV_LAYER
    return measure_convs(M=layer["M"], N=layer["M"], S_o=layer["S_o"], S_k=layer["S_k"])


def _ridge(ctx):
    from .. import bench
    from ..intensity_count import linear, ridge_rows
    from ..roofline import worked_roofs
    dev, n = ctx.dev, ridge_width()
    b = ridge_rows(n, worked_roofs(dev)[0].ridge)      # the batch the chapter's answer finds
    if b is None:
        return None
    rng = dev.xp.random.default_rng(0)
    xs, W, ys = (rng.standard_normal(shape, dtype="float32") for shape in ((b, n), (n, n), (b, n)))
    flops, nbytes = linear(b, n)
    return bench(lambda: dev.xp.matmul(xs, W, out=ys), flops=flops, nbytes=nbytes, label=f"x @ W on {b} rows")


def _predict():
    from .. import intensity_predict
    return intensity_predict


MEASUREMENTS = [
    Measurement("measure_convs", "06", _convs, fields=("iqr_seconds", "meta.call_seconds")),
    Measurement("worked_ridge_batch", "06", _ridge),
    Measurement("network_predictions", "06", lambda ctx: _predict().measure_networks(),
                fields=("operators", "meta.call_seconds")),   # brrr.bench per pass
    Measurement("layer_kinds", "06", lambda ctx: _predict().measure_layer_kinds(("mobilenet_v2",))),
]
