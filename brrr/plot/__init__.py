"""Figures from measurements: the roofline, sweeps, the repeat sweep, bandwidth and matmul vs size.

Every function takes data (a :class:`brrr.Result`, a DataFrame, records, or a
:class:`brrr.Roofline`) and an optional matplotlib ``ax``, draws, and returns
the Figure. Nothing here measures: load a saved result and the same figure
comes back. Units go in the axis labels; FLOP/s and bytes pick their prefix
from the data (GFLOP/s or TFLOP/s; KiB, MiB, GiB).

One idea per module, all of it re-exported here (``brrr.plot.roofline``, ``brrr.plot.bars``):

- ``_base``: the style, units and axis formatters, data in, reference runs' style and
  labels, device titles, :func:`save`;
- ``roofline_chart``: :func:`roofline`;
- ``sweeps``: :func:`sweep`, :func:`repeat_sweep`, :func:`bandwidth_vs_size`, :func:`matmul_vs_size`;
- ``barchart``: :func:`bars`;
- the chapters' own figures: ``compute`` (matmul on tensor cores), ``overhead`` (chapter 3),
  ``fusion`` (chapter 4), ``recompute`` (chapter 5);
- ``diagrams``: explanatory pictures, not measurements (``brrr.plot.diagrams.roofline_anatomy``, ...).

Plot presents measurements and never imports :mod:`brrr.experiments`.
"""
from ._base import (BYTE_COLUMNS, LABELS, MEASURED_COLOR, REFERENCE_COLOR, REFERENCE_MARKERS,
                    REFERENCE_SHADES, SPEC_COLOR, STYLE, device_title, flops_unit, format_bytes,
                    format_rate, reference_label, save)
from ._base import _style  # noqa: F401 - brrr.intensity styles its own axes with it
from .roofline_chart import roofline
from .sweeps import bandwidth_vs_size, matmul_vs_size, repeat_sweep, sweep
from .barchart import bars
from .compute import TENSOR_MATH, elementwise_vs_matmul, matmul_tensor_cores, mfu_vs_batch
from .overhead import LIBRARY_MARKERS, LIBRARY_ORDER, double_the_batch, python_ops_per_second, \
    reduce_overhead, time_vs_size
from .fusion import FUSION_OPS, fusion_speedups, fusion_times
from .recompute import checkpoint_peak_memory, checkpoint_sweep, compiled_recompute
from .dtypes import dtype_roofline
from .trace import trace_timeline  # noqa: F401 - a torch.profiler trace as a timeline (chapter 3)
from .capstone import capstone_steps  # noqa: F401 - chapter 8: a model taken step by step
from .latency import bandwidth_vs_parallelism  # noqa: F401 - chapter 2: bandwidth against threads or blocks
from .networks import network_predictions  # noqa: F401 - chapter 6: networks, predicted and measured
from .headlines import headlines  # noqa: F401 - the appendix: every record set's headline numbers
from . import diagrams


def _draws_nothing_for_a_missing_run(figure):
    """``figure`` that returns None, drawing nothing, where its data is None: a replayed set without
    that record (:func:`brrr.reference.measure` has said so on the page)."""
    import functools

    @functools.wraps(figure)
    def drawn(data=None, *args, **kwargs):
        return None if data is None else figure(data, *args, **kwargs)
    return drawn


for _name in ("sweep", "repeat_sweep", "mfu_vs_batch", "elementwise_vs_matmul", "bandwidth_vs_size", "matmul_vs_size", "bars",
              "python_ops_per_second", "time_vs_size", "reduce_overhead", "double_the_batch", "fusion_speedups",
              "fusion_times", "checkpoint_sweep", "checkpoint_peak_memory", "compiled_recompute", "dtype_roofline",
              "trace_timeline", "capstone_steps", "bandwidth_vs_parallelism", "network_predictions"):
    globals()[_name] = _draws_nothing_for_a_missing_run(globals()[_name])

__all__ = [
    # style, units and labels
    "SPEC_COLOR", "MEASURED_COLOR", "REFERENCE_COLOR", "REFERENCE_MARKERS", "REFERENCE_SHADES", "STYLE",
    "LABELS", "BYTE_COLUMNS", "flops_unit", "format_bytes", "format_rate", "reference_label",
    "device_title", "save",
    # figures
    "roofline", "sweep", "repeat_sweep", "bandwidth_vs_size", "matmul_vs_size", "bars",
    "TENSOR_MATH", "matmul_tensor_cores", "mfu_vs_batch", "elementwise_vs_matmul",
    "LIBRARY_MARKERS", "LIBRARY_ORDER", "python_ops_per_second", "time_vs_size", "reduce_overhead",
    "double_the_batch",
    "FUSION_OPS", "fusion_speedups", "fusion_times",
    "checkpoint_sweep", "checkpoint_peak_memory", "compiled_recompute",
    # explanatory diagrams (brrr.plot.diagrams.*)
    "diagrams",
]
