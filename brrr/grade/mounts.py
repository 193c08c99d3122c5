"""The memory file systems a submission writes to, each capped in bytes and in files.

At the bubblewrap level the runner starts in a mount namespace of its own
(``brrr.grade.sandbox.own_folder``), through this file, which mounts each tmpfs there (seen by
that runner and its kernel only, gone when they end) and then becomes the runner::

    python -I .../brrr/grade/mounts.py PATH BYTES FILES MODE OWNER [PATH ...] -- ARGV...

A tmpfs refuses a write past ``BYTES`` and a new file past ``FILES`` (its ``nr_inodes``, its own
root included) with "No space left on device": files, folders, links and sockets each take one,
and the kernel memory a file costs is bounded with them. Bubblewrap's own tmpfs has a size but
no file cap, hence this step. It runs by its path, like ``limits.py``: no package import.
"""
from __future__ import annotations

import ctypes
import os
import sys

MS_NOSUID, MS_NODEV = 2, 4
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4


def layout(workdir: str, outdir: str, owner: int = 0) -> list:
    """(path, bytes, files, mode, owner) of each tmpfs of one run: the kernel's folder
    ``workdir``, owned by the user id ``owner`` (0: the grader's), and under the runner's private
    ``outdir`` the sources of the kernel's /tmp and /dev/shm (:func:`scratch`), figures from
    ``brrr.grade.limits`` (read when called)."""
    from . import limits
    tmp, shm = scratch(outdir)
    return [(workdir, limits.FOLDER_BYTES, limits.FOLDER_FILES + 2, 0o711, owner),  # its root, and one past the watch's figure
            (tmp, limits.TMP_BYTES, limits.TMP_FILES, 0o1777, 0),
            (shm, limits.SHM_BYTES, limits.SHM_FILES, 0o1777, 0)]


def scratch(outdir: str) -> tuple:
    """The runner's paths of the tmpfs a kernel sees as /tmp and /dev/shm."""
    return os.path.join(outdir, "tmp"), os.path.join(outdir, "shm")


def command(mounts: list, argv: list) -> list:
    """``argv`` preceded by this file, which mounts ``mounts`` (:func:`layout`) first."""
    spec = [format(v, "o") if i == 3 else str(v) for m in mounts for i, v in enumerate(m)]
    return [sys.executable, "-I", os.path.abspath(__file__)] + spec + ["--"] + list(argv)


def mount(path: str, size: int, files: int, mode: int, owner: int = 0) -> None:
    """Mount a tmpfs of ``size`` bytes and ``files`` inodes at ``path`` (made if missing), its
    root of ``mode`` and, unless 0, of the user and group ``owner``."""
    os.makedirs(path, exist_ok=True)
    libc = ctypes.CDLL(None, use_errno=True)
    options = f"size={size},nr_inodes={files},mode={mode:o}" + (f",uid={owner},gid={owner}" if owner else "")
    options = options.encode()
    if libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"cannot mount a tmpfs at {path}: {os.strerror(error)}")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv or argv.index("--") % 5 or argv.index("--") == len(argv) - 1:
        print("usage: python mounts.py PATH BYTES FILES MODE OWNER [...] -- ARGV...", file=sys.stderr)
        return 2
    end = argv.index("--")
    for i in range(0, end, 5):
        mount(argv[i], int(argv[i + 1]), int(argv[i + 2]), int(argv[i + 3], 8), int(argv[i + 4]))
    # a grader that is not root mounted with a capability of its user namespace: the runner
    # and what it starts need none (bubblewrap refuses to start with one)
    ctypes.CDLL(None).prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    os.execv(argv[end + 1], argv[end + 1:])
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
