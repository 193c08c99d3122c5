"""Small on-disk JSON caches that never lose, poison or hang a run.

* :func:`write_json` writes atomically: a temporary file in the same folder, then
  ``os.replace``, so a reader sees the old file or the new one, never half of one.
* Symbolic links are never followed. A symlink at the cache path is *replaced by
  a regular file* on write, and on read it counts as no cache at all (with a
  warning): the link's target is never read or modified.
* :func:`read_json` raises :class:`ValueError` naming the file and what is wrong;
  callers :func:`warn` (one line on stderr) and measure again.
* :func:`locked` holds an ``fcntl.flock`` on ``<path>.lock`` so that concurrent
  runs take turns (the second waits for the first's measurement, then reads it).
  It waits at most ``timeout`` seconds and then goes on unlocked, with a warning.
"""
from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import tempfile
import time
from typing import Optional

try:
    import fcntl
except ImportError:  # Windows: no flock, so concurrent runs just don't wait for each other
    fcntl = None

LOCK_TIMEOUT = 120.0  # seconds a run waits for another run's measurement


def warn(message: str) -> None:
    """Print one warning line about a cache on stderr.

    Not :func:`warnings.warn`: a filter such as ``-W error`` would turn a stale cache
    (which is only re-measured) into a crash.
    """
    print(f"brrr: warning: {message}", file=sys.stderr)


def read_json(path: str):
    """The JSON stored in ``path``, or None when there is no such file.

    Raises ValueError (naming ``path``) when it is a symbolic link, not a regular
    file, unreadable or not valid JSON. Checking the shape of what was read is the
    caller's job.
    """
    if os.path.islink(path):
        raise ValueError(f"{path} is a symbolic link (brrr never follows links in its cache; "
                         f"it will be replaced by a regular file)")
    try:
        # O_NONBLOCK: a FIFO put there must not hang the run (no effect on regular files)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ValueError(f"{path} could not be opened ({e.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ValueError(f"{path} is not a regular file")
    try:
        with os.fdopen(fd, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise ValueError(f"{path} could not be read ({e.strerror})") from None
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError
        raise ValueError(f"{path} is not valid JSON ({e})") from None


def write_json(path: str, data) -> None:
    """Replace ``path`` with ``data`` as JSON, atomically and without following a symlink.

    Raises OSError (the folder is read-only, the disk full...) or ValueError (NaN or
    infinity in ``data``); ``path`` is then left as it was and no temporary file remains.
    """
    write_text(path, json.dumps(data, indent=1, allow_nan=False))


def write_text(path: str, text: str) -> None:
    """Replace ``path`` with ``text`` atomically: a temporary file in the same folder,
    flushed to disk, then ``os.replace`` (which replaces a symlink itself, never its
    target). A reader sees the old file or the new one, never half of one; on an error
    ``path`` is left as it was and no temporary file remains."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)    # mkstemp makes it private; these files are not secrets
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def locked(path: str, timeout: Optional[float] = None, poll: float = 0.05):
    """Hold an exclusive lock on ``path + '.lock'`` while the ``with`` block runs.

    Waits at most ``timeout`` seconds for another run to let go, then warns and runs
    the block unlocked: a cache may cost a second measurement, never a hang. Where
    no lock file can be made (a read-only folder, no ``fcntl``) the block runs
    unlocked without a word: no run can write a cache there either.
    ``timeout=None`` means ``LOCK_TIMEOUT``.
    """
    timeout = LOCK_TIMEOUT if timeout is None else timeout
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    lock_path = path + ".lock"
    fd = None
    if fcntl is not None:
        try:
            os.makedirs(os.path.dirname(os.path.abspath(lock_path)), exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError:  # a read-only cache folder: nothing can be written there, so nothing to guard
            pass
    try:
        if fd is not None and not _acquire(fd, lock_path, timeout, poll):
            os.close(fd)
            fd = None
        yield
    finally:
        if fd is not None:
            os.close(fd)  # closing the file releases the lock


def _acquire(fd: int, lock_path: str, timeout: float, poll: float) -> bool:
    """Take the flock on ``fd``, waiting at most ``timeout`` s; False (with a warning) if not."""
    deadline = time.monotonic() + timeout
    waiting = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        except OSError as e:  # e.g. a file system without locks
            warn(f"cannot lock {lock_path} ({e.strerror}); runs at the same time may each measure")
            return False
        if time.monotonic() >= deadline:
            warn(f"{lock_path} is still held by another run after {timeout:g} s; going on without it")
            return False
        if not waiting:
            print(f"brrr: another run holds {lock_path}; waiting for it (at most {timeout:g} s)...")
            waiting = True
        time.sleep(poll)
