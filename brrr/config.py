"""Run-wide settings read from the environment.

``BRRR_QUICK=1`` shrinks sizes and repetitions so that every chapter runs in
seconds on two CPU cores (what CI does). Readers get the full mode.
"""
import os

QUICK_ENV = "BRRR_QUICK"


def quick_mode() -> bool:
    """True when ``BRRR_QUICK`` is set to anything but '', '0', 'false' or 'no'."""
    return os.environ.get(QUICK_ENV, "").strip().lower() not in ("", "0", "false", "no")


CACHE_DIR_ENV = "BRRR_CACHE_DIR"


def cache_dir() -> str:
    """Absolute path of the folder for cached measurements (CPU peaks): ``BRRR_CACHE_DIR``
    if set and not empty (``~`` expanded), else ``~/.cache/brrr``."""
    folder = os.environ.get(CACHE_DIR_ENV, "").strip() or os.path.join("~", ".cache", "brrr")
    return os.path.abspath(os.path.expanduser(folder))
