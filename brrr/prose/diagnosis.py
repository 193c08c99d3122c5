"""Chapter 7, diagnosing a model: sentences chosen by the profiles and the remedies.

Each function takes the chapter's live result (a :func:`brrr.profile` table, or a
Result of :mod:`brrr.experiments.diagnosis`) and the reference runs of the same
experiment (Results from :func:`brrr.reference.beside`; a profile table saved as a
Result comes back through :func:`brrr.reference.as_frame`), and returns
:class:`~brrr.prose.Prose`.

One module per part of the chapter, gathered here so that the chapter and the tests
name one place: :mod:`.diagnosis_regimes` (a profile's regimes, its replay floor, the
rows against the whole model), :mod:`.diagnosis_models` (BERT, the backward pass,
ResNet-18) and :mod:`.diagnosis_remedies` (``torch.compile``, a larger batch, low
precision).
"""
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
