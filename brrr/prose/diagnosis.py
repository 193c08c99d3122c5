"""Chapter 7, diagnosing a model: each function takes the live result (a :func:`brrr.profile` table or a
Result of :mod:`brrr.experiments.diagnosis`) and its reference runs, and returns :class:`~brrr.prose.Prose`.
Gathered here from :mod:`.diagnosis_regimes`, :mod:`.diagnosis_models` and :mod:`.diagnosis_remedies`."""
from __future__ import annotations

from .diagnosis_models import (backward, backward_facts, bert, bert_facts, resnet,
                               resnet_facts)
from .diagnosis_regimes import (FLOOR_FACTOR, REGIMES, SLOW_EFFICIENCY, SLOW_SHARE, floor, frame, regime_facts,
                                regimes, rows_vs_model, slow_rows)
from .diagnosis_remedies import NOISY, batch_remedy, compile_outcome, fusable, precision
from .words import ABOVE_ROOF

__all__ = ["ABOVE_ROOF", "FLOOR_FACTOR", "NOISY", "REGIMES", "backward", "backward_facts",
           "batch_remedy", "bert", "bert_facts", "compile_outcome", "floor", "frame", "fusable", "precision",
           "regime_facts", "regimes", "resnet", "resnet_facts", "rows_vs_model", "SLOW_EFFICIENCY", "SLOW_SHARE",
           "slow_rows"]
