"""Chapter 1, compute: the matmul sweep, the tensor cores (a GPU's), MFU against the batch, elementwise against matmul."""
from . import Measurement


def _experiments():
    from .. import experiments
    return experiments


MEASUREMENTS = [
    Measurement("matmul_vs_size", "01", lambda ctx: _experiments().matmul_vs_size(dtype="float32"),
                fields=("meta.data",)),
    Measurement("matmul_tensor_cores", "01", lambda ctx: _experiments().matmul_tensor_cores(),
                when=lambda dev: dev.on_gpu),
    Measurement("mfu_vs_batch", "01", lambda ctx: _experiments().mfu_vs_batch(width=1024)),
    Measurement("elementwise_vs_matmul", "01", lambda ctx: _experiments().elementwise_vs_matmul(),
                fields=("fma", "meta.data")),
]
