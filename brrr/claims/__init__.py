"""Claims: the only way a measurement becomes a sentence.

A claim holds the numbers it is about, renders one sentence and has one invariant: what must
hold of those numbers for that sentence to be true (:meth:`Claim.check`). The tests call it on
every claim each chapter makes, replayed from every record set, real and synthetic.

- :class:`Value`: a number ('took 12.3 µs'), printed to the digits it has;
- :class:`Compare`: one value against another; "about the same" exactly within ``SAME``;
- :class:`Share`: the parts of a whole, adding up to at most the whole;
- :class:`Bound`: how near a roof a measurement came; above it, always with why;
- :class:`Regime`: the roofline's rule (:meth:`brrr.Roofline.regime`), or that no bound explains the time;
- :class:`Shape`: how a curve rose, flattened or fell;
- :class:`Missing`, :class:`Noisy`: one sentence each;
- :class:`Cause`: a cause, said only where the claim that measured it holds.

A cell says them with :func:`say` (the page's run, then each reference run); a worked answer
fills a template's slots with :func:`fill`. One threshold per meaning: ``SAME`` (about the same),
``NOISE_LIMIT`` (noisy samples), ``ABOVE_ROOF`` (what timing noise explains above a roof),
``UNEXPLAINED`` (above it, times the largest bound, no bound explains a time).
"""
from .base import ABOVE_ROOF, MOST_SENTENCES, NOISE_LIMIT, SAME, UNEXPLAINED, Claim
from .bounds import UNEXPLAINED_REGIME, Bound, Regime
from .compare import Compare, Share, Value
from .notes import Cause, Missing, Noisy
from .page import KINDS, Said, check_all, fill, from_dict, say
from .quantity import UNITS, ClaimError, agrees, quantity, read_back
from .shape import Shape

__all__ = ["SAME", "NOISE_LIMIT", "ABOVE_ROOF", "UNEXPLAINED", "MOST_SENTENCES", "UNEXPLAINED_REGIME", "UNITS",
           "Claim", "Value", "Compare", "Share", "Bound", "Regime", "Shape", "Missing", "Noisy", "Cause",
           "Said", "say", "fill", "from_dict", "check_all", "KINDS", "ClaimError", "quantity", "read_back",
           "agrees"]
