"""brrr: deep-learning performance from first principles.

    import brrr
    dev = brrr.device()                      # the live device and its peaks
    t = brrr.bench(fn, *args)                # an honest timer -> Timing (seconds)
    roof = brrr.Roofline(peak_flops=19.5e12, peak_bandwidth=1.5e12)
"""
from ._release import VERSION as __version__

from .config import quick_mode
from .device import device, Device
from .timing import bench, Timing
from .roofline import Roofline, arithmetic_intensity
from .results import Result
from . import specs

_LAZY = {"kernels", "experiments", "plot", "widgets", "intensity", "models", "profiler", "transformer", "cli",
         "grade", "book", "prose", "claims", "reference", "progress", "results", "anchors", "registry",
         "headlines"}


def __getattr__(name):
    # Submodules that pull in Numba, matplotlib or torch load on first use.
    if name in _LAZY:
        import importlib
        return importlib.import_module(f".{name}", __name__)
    if name == "profile":
        from .profiler import profile
        return profile
    raise AttributeError(f"module 'brrr' has no attribute {name!r}")


__all__ = ["device", "Device", "bench", "Timing", "Roofline", "arithmetic_intensity", "Result",
           "specs", "quick_mode", "profile", "__version__"]
