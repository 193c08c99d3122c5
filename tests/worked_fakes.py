"""A made-up device for the worked problems' tests (test_prose_worked*.py): the peaks, name,
source of the peaks and cache size that the answers read, so each test can force one wording."""
from brrr.specs import GPU_SPECS

MiB = 2 ** 20
H100 = GPU_SPECS["H100-SXM"]
H100_RIDGE = H100.fp32 / H100.bandwidth
NOISY = ["noisy: the middle half of the samples spans 30% of the median"]


class FakeDevice:
    """What the worked problems read of a device: peaks, name, where the peaks come from, cache size."""

    def __init__(self, flops=100e9, bandwidth=20e9, on_gpu=False, spec=None, source="measured", l2=32 * MiB):
        self.flops, self.peak_bandwidth, self.on_gpu = flops, bandwidth, on_gpu
        self.spec, self.source, self.l2_bytes = spec, source, l2
        self.name = "Test GPU" if on_gpu else "Test CPU (2 threads)"

    def peak_flops(self, dtype="float32", tensor_cores=False):
        return self.flops


CPU = FakeDevice()   # ridge 5 FLOP/byte
