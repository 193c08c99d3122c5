"""A roofline profiler for PyTorch models: one row per operator, PyProf-style.

``profile(model, *inputs)`` runs the model once, recording every ATen operator it
reaches with its arguments, then replays each recorded call on its own with
:func:`brrr.bench`, so every row has a measured time, on the CPU and on a GPU alike.
Beside the time go the operator's FLOPs and bytes moved (``nbytes``), its arithmetic
intensity, the roofline time ``max(t_math, t_mem)`` on the live device, the efficiency
(roofline time / measured time) and the regime: whichever of ``t_math``, ``t_mem`` and
chapter 3's fixed cost per call is the largest (He, 2022). ``table.attrs['model_seconds']``
holds the whole model's measured time, for comparison with ``table.seconds.sum()``.

The modules, one idea each:

* :mod:`.counting`: an operator's FLOPs, bytes and category (the counting conventions);
* :mod:`.capture`: recording the operators of a run, and replaying one on its own;
* :mod:`.regimes`: the three lower bounds on an op's time and the fixed cost per call;
* :mod:`.table`: :func:`profile`, the table itself;
* :mod:`.reports`: totals, page tables and roofline points of a table;
* :mod:`.ivanov`: the published figures of Ivanov et al. (2021) beside a profile;
* :mod:`.trace`: a ``torch.profiler`` trace of a model as data (its timeline), read from the
  Chrome trace by :mod:`.chrome`.
"""
from .counting import CATEGORIES, PER_ELEMENT_FLOPS, categorise, count_bytes, count_flops, tensor_bytes
from .regimes import chapter3_call, dispatch_overhead, regime_of, replay_floor
from .table import COLUMNS, profile
from .reports import (DEFAULT_PAGE_COLUMNS, PAGE_COLUMNS, category_totals, op_totals, page_table,
                      phase_table, phase_totals, plot_roofline, reference_points, regime_totals,
                      roofline_points)
from .ivanov import PUBLISHED, ivanov_comparison, ivanov_table
from .trace import Trace, trace  # noqa: F401 - a torch.profiler trace as data (brrr.profiler.trace)

__all__ = ["profile", "COLUMNS", "CATEGORIES", "PER_ELEMENT_FLOPS", "tensor_bytes", "count_bytes", "count_flops",
           "categorise", "dispatch_overhead", "chapter3_call", "replay_floor", "regime_of", "category_totals",
           "regime_totals", "op_totals", "phase_totals", "PAGE_COLUMNS", "DEFAULT_PAGE_COLUMNS",
           "page_table", "phase_table", "roofline_points", "reference_points", "plot_roofline",
           "PUBLISHED", "ivanov_comparison", "ivanov_table"]
