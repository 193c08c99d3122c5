"""What each chapter says of its measurements, one module a chapter (:mod:`.compute` ... :mod:`.capstone`):
functions that turn a run's records into :mod:`brrr.claims` for :func:`brrr.claims.say`, and the templates
of the chapter's worked answers for :func:`brrr.claims.fill`. What holds on every device is the notebook's own text."""


def __getattr__(name):
    # brrr.prose.bandwidth etc. load on first use.
    import importlib
    try:
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError:
        raise AttributeError(f"module 'brrr.prose' has no attribute {name!r}") from None
