"""Where a submission's code runs: the isolation levels, and ending a process tree whole.

Levels, strongest first (``level()`` picks the strongest this machine offers):

``bubblewrap``
    The kernel runs under bubblewrap (Debian package ``bubblewrap``) in new user, PID,
    network, IPC and mount namespaces: it sees the system and Python read-only, brrr's own
    package read-only, a private ``/tmp`` and its one throwaway folder, and nothing else
    (no repository, no hidden tests, no autograder zip, no other submission, no output CSV,
    no network). When its first process ends, the kernel ends every process in the
    namespace, so nothing survives it. Its processes, file sizes, /tmp and folder are
    bounded (``brrr.grade.limits``), and it can make no user namespace of its own. The only
    places it can write are three tmpfs capped in bytes and files, its folder, ``/tmp`` and
    ``/dev/shm`` (mounted by :func:`own_folder` for the runner, which binds them into the
    sandbox): the rest, ``/`` and ``/dev`` included, is read-only. A grader running as
    root runs it as a user id of its own (the kernel exempts root from the process limit), in
    every namespace but the user one.
``none``
    Plain processes under the grader's own user: the throwaway folder and a fresh session,
    and every descendant is found (the grader is a child subreaper, so even a process that
    detached itself is reparented to it) and killed. The code can still read and write
    anything the grader's user can: use this only for trusted work.

At either level a run's memory and processes are bounded where the grader can make a cgroup
(``brrr.grade.cgroup``); :func:`bounds` names the bounds in force.

Otter's Docker grading is not one of the levels: it runs the tests inside the student's
kernel. Here tests never run in the student's process (see ``brrr.grade.answers``).
"""
from __future__ import annotations

import ctypes
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from . import limits, mounts

LEVELS = ("bubblewrap", "none")
PR_SET_CHILD_SUBREAPER = 36


def bwrap() -> str | None:
    return shutil.which("bwrap")


def _probe(command: list) -> bool:
    try:
        return subprocess.run(command, capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@functools.lru_cache(maxsize=None)
def bubblewrap_works() -> bool:
    """True when bwrap exists, can make the namespaces (a kernel may forbid them) and can
    start a sandbox under the submission's limits inside a folder of its own, with its capped
    tmpfs mounted (:func:`own_folder`)."""
    if not bwrap():
        return False
    with tempfile.TemporaryDirectory(prefix="brrr-probe-") as folder:
        work, out = os.path.join(folder, "work"), os.path.join(folder, "out")
        os.makedirs(work)
        os.makedirs(out)
        return _probe(sandboxed(["/bin/true"], work, out, {}))


def level(requested: str = "auto") -> str:
    """The isolation level to use: ``requested``, or the strongest available for 'auto'."""
    if requested == "auto":
        return "bubblewrap" if bubblewrap_works() else "none"
    if requested not in LEVELS:
        raise ValueError(f"isolation must be 'auto' or one of {', '.join(LEVELS)}, got {requested!r}")
    if requested == "bubblewrap" and not bubblewrap_works():
        raise ValueError("isolation: bubblewrap is not usable here (install the Debian package "
                         "'bubblewrap'; the kernel must allow user namespaces)")
    return requested


def describe(name: str) -> str:
    """One line for the grader's output."""
    if name == "bubblewrap":
        user = "each as a user id of its own, " if os.geteuid() == 0 else ""
        return ("isolation: bubblewrap (each submission in its own namespaces, " + user +
                "with a read-only system, a private folder and /tmp, no network, no view of tests or "
                "other submissions, and bounded processes, file sizes and disk use)")
    return ("isolation: none (plain processes: submissions run with your permissions and can read "
            "and change your files; grade only trusted work this way, or install bubblewrap)")


def bounds(name: str) -> str:
    """One line for the grader's output: the bounds in force at level ``name`` on this machine
    (``brrr.grade.limits``; each is named only where the code applies it here)."""
    import platform
    from ..units import format_bytes as b
    from . import cgroup
    held = cgroup.available()
    parts = [f"{b(limits.MAX_FILE_BYTES)} per file"]
    if name == "bubblewrap":
        parts += [f"{limits.MAX_TASKS:,} processes", f"folder {b(limits.FOLDER_BYTES)} and "
                  f"{limits.FOLDER_FILES:,} files, /tmp {b(limits.TMP_BYTES)} and {limits.TMP_FILES:,}, "
                  f"/dev/shm {b(limits.SHM_BYTES)} and {limits.SHM_FILES:,}"]
        if platform.machine() in limits.SECCOMP_ARCHES:
            parts.append("no user namespace of its own")
    if "memory" in held:
        parts.append(f"memory {b(limits.MEMORY_BYTES)}, files in memory and the kernel's own memory included "
                     "(a memory cgroup)")
    if "pids" in held:
        parts.append(f"{limits.MAX_TASKS + limits.TRUSTED_TASKS:,} processes, the runner's included (a pids cgroup)")
    missing = [c for c in cgroup.CONTROLLERS if c not in held]
    line = "bounds per submission: " + "; ".join(parts)
    if missing:
        line += f"; not in force (the grader can make no such cgroup here): {' and '.join(missing)} cgroup"
    return line


def readonly_paths() -> list:
    """Host paths the sandbox sees read-only: the system, Python, and brrr's package."""
    import brrr
    paths = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc",
             sys.base_prefix, sys.prefix, os.path.dirname(os.path.abspath(brrr.__file__))]
    out = []
    for p in paths:
        p = os.path.abspath(p)
        if os.path.exists(p) and p not in out:
            out.append(p)
    return out


def wrap(argv: list, workdir: str, env: dict, level: str, identity: int = limits.NOBODY,
         outdir: str = "") -> list:
    """The command that runs ``argv`` at isolation ``level`` with ``workdir`` as its folder,
    under the limits of ``brrr.grade.limits``, as the user ``identity`` under a root grader
    (give the folder away first: :func:`hand_over`). At the bubblewrap level its /tmp and
    /dev/shm are the tmpfs :func:`own_folder` mounted under ``outdir``: run it inside that."""
    argv = limits.command(level, argv, identity)
    if level == "none":
        return argv
    if not outdir:
        raise ValueError("the bubblewrap level needs the runner's outdir (its /tmp and /dev/shm)")
    return _bwrap_command(argv, workdir, env, outdir)


def own_folder(argv: list, workdir: str, outdir: str, level: str, identity: int = limits.NOBODY) -> list:
    """The command that runs ``argv`` (the runner) in a mount namespace of its own, where at the
    bubblewrap level ``workdir`` and the sources of the kernel's /tmp and /dev/shm (under
    ``outdir``) are tmpfs capped in bytes and files (``brrr.grade.mounts``; figures read when
    called). A root grader's folder belongs to ``identity`` from the start.

    The kernel's sandbox binds them, so the kernel can never put more than that on the machine:
    files it deleted but holds open and folders it made unreadable count too, and nothing
    reaches the host's disk. They vanish when the runner and its kernel end. The folder starts
    empty: the runner copies the submission's files in. At level ``none``, ``argv`` itself (a
    host folder, watched by the runner's scan only)."""
    if level == "none":
        return list(argv)
    # root keeps its capabilities (it mounts, the runner gives the folder away and starts the
    # sandbox); an ordinary user mounts in a user namespace of its own
    user = [] if os.geteuid() == 0 else ["--unshare-user", "--cap-add", "CAP_SYS_ADMIN"]
    return [bwrap()] + user + ["--dev-bind", "/", "/", "--die-with-parent", "--"] + \
        mounts.command(mounts.layout(workdir, outdir, identity if os.geteuid() == 0 else 0), argv)


def sandboxed(argv: list, workdir: str, outdir: str, env: dict, identity: int = limits.NOBODY) -> list:
    """The command that runs ``argv`` as a runner's kernel runs at the bubblewrap level
    (:func:`wrap` inside :func:`own_folder`), for a probe or a test: the folder ``workdir``
    starts empty, and it and ``outdir`` get nothing on the host."""
    return own_folder(wrap(argv, workdir, env, "bubblewrap", identity, outdir), workdir, outdir,
                      "bubblewrap", identity)


def hand_over(path: str, identity: int = limits.NOBODY) -> None:
    """Give ``path`` (a submission's folder with everything in it, or one file) to the user its
    sandbox runs as, ``identity``, when the grader is root (see ``brrr.grade.limits``); else
    nothing to do."""
    if os.geteuid() != 0:
        return
    os.chown(path, identity, identity, follow_symlinks=False)
    if not os.path.isdir(path) or os.path.islink(path):
        return
    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(folder, name), identity, identity, follow_symlinks=False)
    # bwrap enters it as root without capabilities, so as an "other" user
    os.chmod(path, os.stat(path).st_mode | 0o711)


def _bwrap_command(argv: list, workdir: str, env: dict, outdir: str) -> list:
    if os.geteuid() == 0:
        # root: no user namespace (it would map the sandbox to root, whom the kernel exempts
        # from the process limit); the limits step turns into nobody, then has no capabilities
        namespaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                      "--unshare-cgroup-try"]
        capabilities = ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        namespaces, capabilities = ["--unshare-all"], ["--cap-drop", "ALL"]
    command = [bwrap()] + namespaces + ["--die-with-parent", "--new-session"] + capabilities + [
        "--hostname", "brrr-grade", "--clearenv"]
    # /tmp first: Python or brrr may live under /tmp (a fresh clone), and a later mount
    # would hide them
    tmp, shm = mounts.scratch(outdir)
    command += ["--bind", tmp, "/tmp"]
    for folder in _ancestors(readonly_paths() + [workdir]):  # bwrap would make them 0700, closed to nobody
        command += ["--perms", "0755", "--dir", folder]
    for path in readonly_paths():
        command += ["--ro-bind", path, path]
    command += ["--ro-bind-try", "/sys", "/sys",  # CPU caches and GPU enumeration are read from /sys
                "--proc", "/proc", "--dev", "/dev",
                # shared memory (multiprocessing's locks and queues), bounded like /tmp
                "--bind", shm, "/dev/shm"]
    for device in ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia0",
                   "/dev/dri"):
        command += ["--dev-bind-try", device, device]
    command += ["--bind", workdir, workdir, "--chdir", workdir,
                # nothing else is writable: the sandbox's own / and /dev are tmpfs without a size
                "--remount-ro", "/dev", "--remount-ro", "/"]
    for key, value in env.items():
        command += ["--setenv", key, value]
    return command + ["--"] + list(argv)


def _ancestors(paths: list) -> list:
    """Every folder above ``paths`` (parents first), but the root and /tmp."""
    out = []
    for path in paths:
        parts = os.path.abspath(path).split(os.sep)[1:-1]
        for i in range(1, len(parts) + 1):
            folder = os.sep + os.path.join(*parts[:i])
            if folder != "/tmp" and folder not in out:
                out.append(folder)
    return out


def kernel_env(workdir: str) -> dict:
    """The environment a submission's kernel gets: a home of its own, nothing of the grader's."""
    keep = ("BRRR_QUICK", "BRRR_DEVICE", "CUDA_VISIBLE_DEVICES", "LANG", "TZ")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    cache = os.path.join(workdir, ".cache")
    env.update({
        "HOME": workdir, "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"]),
        "TMPDIR": "/tmp", "MPLBACKEND": "agg", "PYTHONNOUSERSITE": "1", "BRRR_CACHE_DIR": cache,
        "NUMBA_CACHE_DIR": os.path.join(cache, "numba"), "IPYTHONDIR": os.path.join(workdir, ".ipython"),
        "MPLCONFIGDIR": os.path.join(cache, "matplotlib"), "JUPYTER_PLATFORM_DIRS": "1",
        "PYTHONPATH": _package_root(),   # the brrr the grader runs (an editable install may point elsewhere)
    })
    env.setdefault("LANG", "C.UTF-8")
    return env


def _package_root() -> str:
    """The folder that holds the brrr package this grader imported (the sandbox sees its
    ``brrr`` folder only: :func:`readonly_paths`)."""
    import brrr
    return os.path.dirname(os.path.dirname(os.path.abspath(brrr.__file__)))


def become_subreaper() -> bool:
    """Make this process adopt orphaned descendants (Linux), so none can slip away."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def kill_descendants(spare=(), timeout: float = 5.0) -> int:
    """SIGKILL every descendant of this process (orphans included, when a subreaper) except
    the children whose PIDs are in ``spare`` and their trees; returns how many were killed."""
    import psutil
    me = psutil.Process()
    killed = 0
    for _ in range(5):  # a dying tree can still fork: sweep until nothing is left
        children = []
        for child in me.children():
            if child.pid not in spare:
                try:
                    children += [child] + child.children(recursive=True)
                except psutil.NoSuchProcess:
                    pass
        if not children:
            break
        for child in children:
            try:
                child.send_signal(signal.SIGKILL)
                killed += 1
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(children, timeout=timeout)
    _reap_orphans(me, spare)
    return killed


def _reap_orphans(me, spare) -> None:
    """Collect the exit status of dead children this process adopted as a subreaper (nobody
    else will), so a batch leaves no zombies behind."""
    import psutil
    for child in me.children():
        try:
            if child.pid not in spare and child.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(child.pid, os.WNOHANG)
        except (psutil.Error, ChildProcessError):
            pass
