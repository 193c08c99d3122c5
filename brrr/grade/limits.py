"""What one submission may use, and how each limit is enforced.

- **Processes and threads:** at most ``MAX_TASKS`` (``RLIMIT_NPROC``), so a fork bomb gets
  "Resource temporarily unavailable" instead of filling the machine. Bubblewrap level only:
  Linux counts this per user, and per user namespace. The kernel exempts root, so under a root
  grader this step also becomes the sandbox's own user (:func:`sandbox_id`; no capabilities
  left) before the kernel starts.
- **One file:** at most ``MAX_FILE_BYTES`` (``RLIMIT_FSIZE``; every level, root included).
- **/tmp and /dev/shm:** private tmpfs of ``TMP_BYTES`` and ``TMP_FILES`` files, ``SHM_BYTES``
  and ``SHM_FILES`` (bubblewrap level; ``brrr.grade.mounts``). The runner watches them as it
  watches the folder: when one is full, the kernel is killed.
- **Memory:** ``MEMORY_BYTES`` for a submission's whole run (its processes, the files it keeps in
  memory, memfd and shared memory, and the kernel's own memory for them), ``MAX_TASKS`` plus
  ``TRUSTED_TASKS`` processes, where the grader can make a cgroup (``brrr.grade.cgroup``; every
  level). Past it the out-of-memory killer ends the kernel's processes first (their
  ``oom_score_adj`` is ``OOM_SCORE_ADJ``).
- **User namespaces:** none can be made inside the sandbox (a seccomp filter refuses
  ``unshare``/``clone`` with ``CLONE_NEWUSER``, and ``clone3``; bubblewrap level, x86_64 and
  aarch64), so no mount of its own escapes the sizes above.
- **Its folder:** ``FOLDER_BYTES`` and ``FOLDER_FILES`` entries in all. At the bubblewrap level
  the folder is a tmpfs of that size and as many files (``brrr.grade.mounts``): the kernel refuses a
  write past it, whatever the file (deleted but open, in a folder made unreadable). At level
  ``none`` it is a host folder, and a scan (with the files its processes deleted but hold) is all
  there is. Either way the runner checks it twice a second and after every cell
  (:class:`FolderWatch`); when it is full, or past either figure, the kernel is killed and the
  answers given before count.

The limits are set inside the sandbox, just before the kernel starts::

    python -I .../brrr/grade/limits.py LEVEL IDENTITY -- KERNEL_ARGV...
"""
from __future__ import annotations

import os
import sys
import threading

NOBODY = 65534                # the user and group of a sandbox given no identity of its own
SANDBOX_IDS = (1 << 20, 1 << 30)  # a root grader runs each sandbox as a random id of this range,
                                  # which no account has: processes and keyrings are per user
MAX_TASKS = 1024              # processes and threads in one sandbox
MAX_FILE_BYTES = 1 << 30      # bytes in any one file a submission writes
TMP_BYTES = 1 << 30           # bytes of its private /tmp
SHM_BYTES = 256 << 20         # bytes of its private /dev/shm
FOLDER_BYTES = 2 << 30        # bytes on disk in its folder, all files together
FOLDER_FILES = 100_000        # files and folders in its folder
TMP_FILES = 20_000            # files and folders in its /tmp
SHM_FILES = 10_000            # files and folders in its /dev/shm
MEMORY_BYTES = 4 << 30        # bytes of memory of one submission's run, all told (memory cgroup)
TRUSTED_TASKS = 64            # processes and threads of the runner and the sandbox's launchers
OOM_SCORE_ADJ = 1000          # the kernel's processes: the first the out-of-memory killer ends
WATCH_SECONDS = 0.5           # how often the folder is measured
TRUSTED_BYTES = 2 << 30       # data memory of the grader's own runner and scorer of one submission


def limit_trusted_memory() -> None:
    """Bound this process's data memory (``RLIMIT_DATA``) to :data:`TRUSTED_BYTES`: the runner and
    the scorer read what a kernel sent, and past the bound they fail (that submission only)
    instead of growing. A ``preexec_fn`` for the grader's own subprocesses."""
    import resource
    _lower(resource.RLIMIT_DATA, TRUSTED_BYTES)


def _lower(which: int, value: int) -> None:
    import resource
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def sandbox_id() -> int:
    """A user and group id for one sandbox of a root grader: random in :data:`SANDBOX_IDS`, so
    that sandboxes, even of concurrent batches, do not share a process count or a user keyring."""
    import secrets
    return SANDBOX_IDS[0] + secrets.randbelow(SANDBOX_IDS[1] - SANDBOX_IDS[0])


def _new_session_keyring() -> None:
    """Join a new, empty session keyring (``keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)``), so no
    key of the grader's session, or of an earlier sandbox, is reachable; nothing where the
    system call is unknown."""
    import ctypes
    import platform
    number = {"x86_64": 250, "aarch64": 219}.get(platform.machine())
    if number is not None:
        ctypes.CDLL(None, use_errno=True).syscall(number, 1, None)


# seccomp: (audit architecture, clone, unshare, clone3) system call numbers
SECCOMP_ARCHES = {"x86_64": (0xC000003E, 56, 272, 435), "aarch64": (0xC00000B7, 220, 97, 435)}
CLONE_NEWUSER = 0x10000000


def _user_namespace_filter(arch: int, clone: int, unshare: int, clone3: int) -> bytes:
    """A classic BPF program for seccomp: ``unshare`` and ``clone`` with ``CLONE_NEWUSER`` fail with
    EPERM; ``clone3`` (whose flags it cannot read) with ENOSYS, so the C library falls back to
    ``clone``; a system call of another ABI (32-bit, x32) with EPERM; all else is allowed."""
    import struct
    load, equal, has_bits, at_least, ret = 0x20, 0x15, 0x45, 0x35, 0x06
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    program = [
        (load, 0, 0, 4), (equal, 1, 0, arch), (ret, 0, 0, eperm),       # seccomp_data.arch
        (load, 0, 0, 0), (at_least, 0, 1, 0x40000000), (ret, 0, 0, eperm),  # .nr; x32 numbers
        (equal, 0, 1, clone3), (ret, 0, 0, enosys),
        (equal, 1, 0, clone), (equal, 0, 3, unshare),
        (load, 0, 0, 16), (has_bits, 0, 1, CLONE_NEWUSER), (ret, 0, 0, eperm),  # .args[0]
        (ret, 0, 0, allow)]
    return b"".join(struct.pack("HBBI", *step) for step in program)


def _forbid_user_namespaces() -> None:
    """Install :func:`_user_namespace_filter` on this process and all it starts (after
    ``PR_SET_NO_NEW_PRIVS``); nothing on an architecture not in ``SECCOMP_ARCHES``."""
    import ctypes
    import platform
    numbers = SECCOMP_ARCHES.get(platform.machine())
    if numbers is None:
        return
    raw = _user_namespace_filter(*numbers)
    code = ctypes.create_string_buffer(raw, len(raw))

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    program = Program(len(raw) // 8, ctypes.addressof(code))
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(program), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp: " + os.strerror(ctypes.get_errno()))


def _first_for_the_oom_killer() -> None:
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write(str(OOM_SCORE_ADJ))
    except OSError:
        pass


def apply(level: str, identity: int = NOBODY) -> None:
    """Set this process's limits (inherited by everything it starts) for isolation ``level``;
    a root grader's sandbox becomes the user and group ``identity``."""
    import resource
    _lower(resource.RLIMIT_FSIZE, MAX_FILE_BYTES)
    _new_session_keyring()
    _first_for_the_oom_killer()
    if level == "bubblewrap":
        _lower(resource.RLIMIT_NPROC, MAX_TASKS)
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(identity)
            os.setuid(identity)  # from root to another user: every capability is dropped
        _forbid_user_namespaces()


def command(level: str, argv: list, identity: int = NOBODY) -> list:
    """``argv`` preceded by what sets the limits of ``level`` and then becomes ``argv`` (as the
    user ``identity`` under a root grader): this file, run by its path (no package import, so it
    starts in milliseconds)."""
    return [sys.executable, "-I", os.path.abspath(__file__), level, str(identity), "--"] + list(argv)


def _open_folder(path: str):
    """``os.scandir(path)``; a folder of this grader's own that it may not read (a submission can
    take its own read permission away, as an ordinary user) is given back to it first."""
    try:
        return os.scandir(path)
    except PermissionError:
        st = os.lstat(path)
        if st.st_uid != os.geteuid() or not os.path.isdir(path) or os.path.islink(path):
            raise
        os.chmod(path, 0o700)
        return os.scandir(path)


def quota(path: str) -> int:
    """Bytes the file system mounted at ``path`` can hold (the bubblewrap level's tmpfs folder),
    or 0 when ``path`` is not a mount of its own (a plain host folder)."""
    if not os.path.ismount(path):
        return 0
    st = os.statvfs(path)
    return st.f_blocks * st.f_frsize


def folder_usage(path: str, max_entries: int = FOLDER_FILES) -> tuple:
    """(bytes on disk, entries) under ``path``. A mount of its own (:func:`quota`) is measured by
    its file system's own count, which includes everything; else a scan, symlinks not followed,
    folders the submission made unreadable included (:func:`_open_folder`), that stops counting
    entries at ``max_entries + 1``. Sparse files count what they occupy, not their length."""
    if quota(path):
        st = os.statvfs(path)
        return (st.f_blocks - st.f_bfree) * st.f_frsize, max(st.f_files - st.f_ffree - 1, 0)  # not its root
    total, entries, stack = 0, 0, [path]
    while stack and entries <= max_entries:
        try:
            with _open_folder(stack.pop()) as it:
                for entry in it:
                    entries += 1
                    if entries > max_entries:
                        break
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    blocks = getattr(st, "st_blocks", None)
                    total += st.st_size if blocks is None else blocks * 512
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        except OSError:
            continue
    return total, entries


def open_deleted(pids):
    """``(path, os.stat_result)`` of each file that processes ``pids`` hold open after deleting
    it, each file once: invisible to a scan of its folder, yet on its disk until closed."""
    seen = set()
    for pid in pids:
        fds = f"/proc/{pid}/fd"
        try:
            names = os.listdir(fds)
        except OSError:
            continue
        for fd in names:
            try:
                target = os.readlink(os.path.join(fds, fd))
                if not target.endswith(" (deleted)"):
                    continue
                st = os.stat(os.path.join(fds, fd))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                yield target[:-len(" (deleted)")], st


def deleted_but_open(path: str, pids) -> int:
    """Bytes on disk of files under ``path`` that processes ``pids`` hold open after deleting
    them (:func:`open_deleted`)."""
    prefix = path.rstrip(os.sep) + os.sep
    return sum(st.st_blocks * 512 for target, st in open_deleted(pids) if target.startswith(prefix))


def remove_tree(path: str) -> None:
    """Delete ``path`` and everything in it, folders a submission made unreadable or
    unwritable included: each folder is given back to this user (read, write, enter) before
    it is read. Nothing if ``path`` is gone."""
    import shutil
    stack = [path]
    while stack:
        folder = stack.pop()
        try:
            if os.path.islink(folder) or not os.path.isdir(folder):
                continue
            os.chmod(folder, 0o700)
            with os.scandir(folder) as it:
                stack.extend(e.path for e in it if e.is_dir(follow_symlinks=False))
        except OSError:
            continue
    shutil.rmtree(path, ignore_errors=True)


def mount_full(name: str, path: str) -> str:
    """Why the tmpfs at ``path`` (the kernel's ``name``, as /tmp) is full, or '' while it is not:
    no file left to make, or no byte left to write."""
    from ..units import format_bytes
    st = os.statvfs(path)
    if st.f_files and not st.f_ffree:
        return f"it made {st.f_files - 1:,} files in its {name}, all a submission may make there"
    if st.f_blocks and not st.f_bavail:
        return f"it filled its {name} ({format_bytes(st.f_blocks * st.f_frsize)}, all a submission may write there)"
    return ""


class FolderWatch(threading.Thread):
    """Measures ``path`` every ``WATCH_SECONDS``, and each (name, path) of ``mounts`` (tmpfs of the
    kernel's, :func:`mount_full`); when one is full or past a limit, sets ``reason`` and calls
    ``on_exceed()`` once (the runner kills the kernel there). A folder with a :func:`quota` is
    full at the quota (or ``max_bytes``, the smaller)."""

    def __init__(self, path: str, on_exceed, max_bytes: int = FOLDER_BYTES,
                 max_entries: int = FOLDER_FILES, pids=None, mounts=()):
        super().__init__(daemon=True, name="brrr-folder-watch")
        self.path, self.on_exceed, self.mounts = path, on_exceed, list(mounts)
        self.pids = pids or (lambda: ())    # the submission's processes: files they deleted but hold
        self.max_bytes, self.max_entries = max_bytes, max_entries
        self.reason = ""
        self._done = threading.Event()
        self._firing = threading.Lock()

    def check(self) -> str:
        """The limit the folder is at or past now, as a reason, or ''."""
        from ..units import format_bytes
        used, entries = folder_usage(self.path, self.max_entries)
        if entries > self.max_entries:
            return f"it made more than {self.max_entries:,} files in its folder"
        size = quota(self.path)
        limit = min(size, self.max_bytes) if size else self.max_bytes
        if used < limit and not size:         # a scan does not see these; a quota counts them
            used += deleted_but_open(self.path, self.pids())
        if used >= limit:
            return f"it filled its folder ({format_bytes(limit)}, all a submission may write there)"
        return next(filter(None, (mount_full(name, p) for name, p in self.mounts)), "")

    def poll(self) -> str:
        """Check now, as the thread does every ``WATCH_SECONDS``; past a limit, fire (once, whoever
        sees it first). The reason it fired for, or ''."""
        reason = self.reason or self.check()
        with self._firing:
            if reason and not self.reason:
                self.reason = reason
                self.on_exceed()
        return self.reason

    def run(self) -> None:
        while not self._done.wait(WATCH_SECONDS):
            if self.poll():
                return

    def stop(self) -> None:
        self._done.set()


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 4 or argv[2] != "--" or not argv[1].isdigit():
        print("usage: python limits.py LEVEL IDENTITY -- ARGV...", file=sys.stderr)
        return 2
    apply(argv[0], int(argv[1]))
    os.execv(argv[3], argv[3:])
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
