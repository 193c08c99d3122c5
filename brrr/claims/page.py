"""Claims on the page: a cell's sentences for the page's run and each reference run (:func:`say`),
a worked answer's template filled (:func:`fill`), and claims read back from a notebook."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Optional

from ..results import plain
from .base import Claim
from .bounds import Bound, Regime
from .compare import Compare, Share, Value
from .notes import Cause, Missing, Noisy
from .quantity import ClaimError
from .shape import Shape


KINDS = {k.__name__: k for k in (Value, Compare, Share, Bound, Regime, Shape, Missing, Noisy, Cause)}


@dataclass
class Said:
    """A cell's generated Markdown and the claims it renders. Displayed, it keeps the claims and
    their outcomes (``facts``) in the output's metadata, where the tests check them."""
    text: str
    claims: list = field(default_factory=list)
    facts: dict = field(default_factory=dict)

    def _repr_markdown_(self):
        return self.text, {"brrr": {"facts": plain(self.facts), "claims": [plain(c.to_dict()) for c in self.claims]}}

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


def _rendered(claims) -> tuple:
    """(the claims that are not None, their sentences joined)."""
    claims = [c for c in claims if c is not None]
    return claims, " ".join(t for t in (c.text() for c in claims) if t)


def _facts(claims, prefix: str = "") -> dict:
    return {f"{prefix}{c.name}": (c.outcome if c.outcome is not None else getattr(c, "value", None))
            for c in claims if getattr(c, "name", "")}


def say(claims_of, run, references=(), record: str = None, headline: int = 1) -> Optional[Said]:
    """The claims ``claims_of(run)`` makes of the page's run; then, for each reference run, the first
    ``headline`` claims ``claims_of`` makes of it, after its device and date. Where ``run`` is None (a
    replayed set without it), the sentence that the page has no record of ``record`` (nothing
    without a ``record``)."""
    if run is None:
        return Said(Missing(record).text(), [Missing(record)], {"missing": record}) if record else None
    claims, text = _rendered(claims_of(run))
    facts, paragraphs = _facts(claims), [text] if text else []
    for ref in references or ():
        device = (ref.meta.get("device") or {}).get("name", "another device")
        shown, words = _rendered([c for c in claims_of(ref) if c is not None][:headline])
        if words:
            paragraphs.append(f"On the {device} (measured {ref.meta.get('date', '')[:10]}, drawn in grey): {words}")
            claims += shown
            facts.update(_facts(shown, f"{device}: "))
    return Said("\n\n".join(paragraphs), claims, facts)


def fill(template: str, **slots) -> Said:
    """``template`` with its ``{slots}`` filled: a claim by its sentence (a :class:`Value` with no
    subject by its quantity alone), a string as it is; the claims come along."""
    claims = [v for v in slots.values() if isinstance(v, Claim)]
    text = template.format(**{k: (v.text() if isinstance(v, Claim) else v) for k, v in slots.items()})
    return Said(text, claims, {k: v.outcome for k, v in slots.items() if isinstance(v, Claim) and v.outcome})


def from_dict(data: dict) -> Claim:
    """The claim :meth:`Claim.to_dict` wrote (its outcome and text are computed again, not read)."""
    data = dict(data)
    kind = KINDS[data.pop("kind")]
    return kind(**{k: v for k, v in data.items() if k in {f.name for f in fields(kind)}})


def check_all(data: dict, page_text: str = None) -> Claim:
    """The claim in ``data`` rebuilt and checked: its invariant holds, it renders the text it did,
    and, given the page's text, the page shows it."""
    claim = from_dict(data)
    claim.check()
    if claim.text() != data.get("text"):
        raise ClaimError(f"{data.get('text')!r} now renders as {claim.text()!r}")
    if page_text is not None and claim.text() and claim.text() not in page_text:
        raise ClaimError(f"{claim.text()!r} is not on the page")
    return claim
