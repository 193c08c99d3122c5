"""Run-wide settings, read from the environment here and nowhere else.

``BRRR_QUICK=1`` shrinks sizes and repetitions so that every chapter runs in
seconds on two CPU cores (what CI does). Readers get the full mode.
``BRRR_REPLAY=<record set>`` builds replayed pages: every measurement comes from that
recorded run (:func:`brrr.reference.measure`), none from this machine. Each is read
once, on first use, and holds for the rest of the process (a book build or a
grading run sets it before it starts); :func:`reread` reads them again.
"""
import functools
import os

QUICK_ENV = "BRRR_QUICK"


@functools.lru_cache(maxsize=1)
def quick_mode() -> bool:
    """True when ``BRRR_QUICK`` was set to anything but '', '0', 'false' or 'no' (read once)."""
    return os.environ.get(QUICK_ENV, "").strip().lower() not in ("", "0", "false", "no")


REPLAY_ENV = "BRRR_REPLAY"


@functools.lru_cache(maxsize=1)
def replay_set() -> str:
    """The record set a replayed build shows (``BRRR_REPLAY``): a set's name such as 'nvidia-h200'
    (a folder of ``brrr/data/reference``), or a path to a folder of records, which comes back
    absolute (any value with a '/' is a path: ``./my-gpu``); '' for a live build that measures
    this machine (read once)."""
    name = os.environ.get(REPLAY_ENV, "").strip()
    if name in (".", ".."):
        raise ValueError(f"{REPLAY_ENV} must name a record set such as 'nvidia-h200' or a folder such as "
                         f"./my-gpu, got {name!r}")
    if "/" in name or os.sep in name:
        return os.path.abspath(os.path.expanduser(name))
    return name


def reread():
    """Forget the settings read so far, so the next use reads the environment again
    (for a process that changes ``BRRR_QUICK`` or ``BRRR_REPLAY`` as it runs, such as the test suite)."""
    quick_mode.cache_clear()
    replay_set.cache_clear()


CACHE_DIR_ENV = "BRRR_CACHE_DIR"


def cache_dir() -> str:
    """Absolute path of the folder for cached measurements (CPU peaks): ``BRRR_CACHE_DIR``
    if set and not empty (``~`` expanded), else ``~/.cache/brrr``."""
    folder = os.environ.get(CACHE_DIR_ENV, "").strip() or os.path.join("~", ".cache", "brrr")
    return os.path.abspath(os.path.expanduser(folder))
