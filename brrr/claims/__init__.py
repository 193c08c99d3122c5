"""Claims: the only way a measurement becomes a sentence.

A claim holds the numbers it is about, renders one sentence, and has one invariant
(:meth:`Claim.check`): what must hold of those numbers for the sentence to be true. The tests call
it on every claim each chapter makes, replayed from every record set, real and synthetic.
:class:`Value`, :class:`Compare` and :class:`Share` state numbers; :class:`Bound` how near a roof a
measurement came (above it, always with why); :class:`Regime` the roofline's one rule, or that no
bound explains a time; :class:`Shape` a curve; :class:`Missing`, :class:`Noisy` and :class:`Cause`
(said only where its evidence holds) what a page knows of its own evidence. A cell says them with
:func:`say`, a worked answer fills its template with :func:`fill`. One threshold per meaning:
``SAME``, ``NOISE_LIMIT``, ``ABOVE_ROOF``, ``UNEXPLAINED``.
"""
from .base import ABOVE_ROOF, MOST_SENTENCES, NOISE_LIMIT, SAME, UNEXPLAINED, Claim
from .bounds import UNEXPLAINED_REGIME, Bound, Regime
from .compare import Compare, Share, Value
from .notes import Cause, Missing, Noisy
from .page import KINDS, Said, check_all, fill, from_dict, say
from .quantity import UNITS, ClaimError, agrees, quantity, read_back
from .shape import Shape

__all__ = ["SAME", "NOISE_LIMIT", "ABOVE_ROOF", "UNEXPLAINED", "MOST_SENTENCES", "UNEXPLAINED_REGIME", "UNITS", "Claim",
           "Value", "Compare", "Share", "Bound", "Regime", "Shape", "Missing", "Noisy", "Cause", "Said", "say", "fill",
           "from_dict", "check_all", "KINDS", "ClaimError", "quantity", "read_back", "agrees"]
