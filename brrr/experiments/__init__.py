"""The canonical sweeps the chapters run; each returns a :class:`brrr.Result`.

One module per topic; every function here is importable as ``brrr.experiments.NAME``.
"""
from .common import run_sweep, is_out_of_memory
