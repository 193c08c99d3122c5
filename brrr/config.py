"""Run-wide settings, read from the environment here and nowhere else.

``BRRR_QUICK=1`` shrinks sizes and repetitions so that every chapter runs in
seconds on two CPU cores (what CI does). Readers get the full mode. It is read
once, on first use, and holds for the rest of the process (a book build or a
grading run sets it before it starts); :func:`reread` reads it again.
"""
import functools
import os

QUICK_ENV = "BRRR_QUICK"


@functools.lru_cache(maxsize=1)
def quick_mode() -> bool:
    """True when ``BRRR_QUICK`` was set to anything but '', '0', 'false' or 'no' (read once)."""
    return os.environ.get(QUICK_ENV, "").strip().lower() not in ("", "0", "false", "no")


def reread():
    """Forget the settings read so far, so the next use reads the environment again
    (for a process that changes ``BRRR_QUICK`` as it runs, such as the test suite)."""
    quick_mode.cache_clear()


CACHE_DIR_ENV = "BRRR_CACHE_DIR"


def cache_dir() -> str:
    """Absolute path of the folder for cached measurements (CPU peaks): ``BRRR_CACHE_DIR``
    if set and not empty (``~`` expanded), else ``~/.cache/brrr``."""
    folder = os.environ.get(CACHE_DIR_ENV, "").strip() or os.path.join("~", ".cache", "brrr")
    return os.path.abspath(os.path.expanduser(folder))
