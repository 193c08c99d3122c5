"""Every measurement of the book, declared once: its name, its chapter and how to make it from nothing but the
live device (:class:`Measurement`). A chapter measures one by name, ``brrr.reference.measure(NAME)``, and
``brrr record`` makes them all in one process, with no notebook (:mod:`brrr.registry.record`).

A recipe builds its own inputs (arrays, models) from the chapter's sizes, and takes what it needs of an earlier
measurement from the :class:`Context`: the one this process measured or recorded under that name, or a new one.
One module per chapter (``chapter_01`` ... ``chapter_08``) holds its list, in the order the chapter runs them.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable, Optional

CHAPTERS = tuple(f"{n:02d}" for n in range(1, 9))


@dataclass(frozen=True)
class Measurement:
    """``run(context)`` makes measurement ``name`` of chapter ``chapter`` ('01'...'08') on the live device; ``when``
    (the device -> bool) says whether it is made there at all (a GPU-only experiment). A recipe may return None: the
    chapter reads another measurement in its place here (a worked problem's size that a sweep already timed).
    ``fields``: what the chapter's text reads that older records lack (:meth:`lacks`)."""
    name: str
    chapter: str
    run: Callable
    when: Optional[Callable] = None
    fields: tuple = ()

    def applies(self, dev) -> bool:
        return self.when is None or bool(self.when(dev))

    def lacks(self, result) -> list:
        """The ``fields`` today's recipe writes that a record (a Result) of it lacks: a field of its records ('rows',
        in at least one), or of its meta ('meta.clock', 'meta.attrs.model_clock'). A record that lacks one was made
        before the experiment took its present form."""
        def has(field):
            if not field.startswith("meta."):
                return any(isinstance(r, dict) and field in r for r in result.records)
            value = result.meta
            for part in field.split(".")[1:]:
                if not isinstance(value, dict) or part not in value:
                    return False
                value = value[part]
            return True
        return [f for f in self.fields if not has(f)]


class Context:
    """What the recipes share in one process: the live device, and ``{name: data}`` of the measurements made (or
    read back from a record) so far, which a recipe that needs an earlier one takes with :meth:`get`."""

    def __init__(self, dev=None):
        from ..device import device
        self.dev = dev or device()
        self.done: dict = {}
        self.inputs: dict = {}

    def shared(self, key: str, build: Callable):
        """The object ``build()`` made the first time a recipe asked for ``key`` (a chapter's model or arrays, which its
        measurements share, as its cells do)."""
        if key not in self.inputs:
            self.inputs[key] = build()
        return self.inputs[key]

    def get(self, name: str):
        """Measurement ``name``'s data: the one this process has, else made now."""
        if name not in self.done:
            self.done[name] = lookup(name).run(self)
        return self.done[name]


def registry() -> dict:
    """``{name: Measurement}`` of every chapter, in the book's order."""
    out = {}
    for chapter in CHAPTERS:
        for m in importlib.import_module(f".chapter_{chapter}", __name__).MEASUREMENTS:
            if m.name in out:
                raise ValueError(f"measurement {m.name!r} is declared twice (chapters {out[m.name].chapter}, {chapter})")
            out[m.name] = m
    return out


def lookup(name: str) -> Measurement:
    """The :class:`Measurement` named ``name``; ValueError naming the chapters' measurements where none is."""
    found = registry().get(name)
    if found is None:
        raise ValueError(f"no measurement named {name!r} is declared in brrr.registry (chapter modules "
                         f"chapter_01 ... chapter_08)")
    return found


_CONTEXT: dict = {}


def context() -> Context:
    """This process's one :class:`Context` (a chapter's kernel, or ``brrr record``)."""
    if "context" not in _CONTEXT:
        _CONTEXT["context"] = Context()
    return _CONTEXT["context"]


from . import chapter_01, chapter_02, chapter_03, chapter_04, chapter_05, chapter_06, chapter_07, chapter_08  # noqa: E402,F401
