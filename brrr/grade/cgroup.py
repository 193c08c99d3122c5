"""A cgroup for each submission's run, bounding its memory and its processes, where this
machine lets the grader make one.

The runner and its kernel run in it (the grader puts the runner there as it starts; every
process started after inherits it). Its memory bound, :data:`brrr.grade.limits.MEMORY_BYTES`,
counts what processes hold and also what no process holds: files in its tmpfs, memfd and
shared-memory segments, and the kernel's own memory for its files. Past it the out-of-memory
killer ends a process of the group (the kernel's first: ``limits.OOM_SCORE_ADJ``), never one
outside it. Its process bound is ``MAX_TASKS + TRUSTED_TASKS``, root's processes included.

A group is a child of the grader's own cgroup (``/proc/self/cgroup``), in each controller's
folder (cgroup v1) or in the one hierarchy (v2, where the grader's cgroup must already hand the
controller to its children: ``cgroup.subtree_control``). Where a controller's group cannot be
made and joined (no permission, a read-only /sys/fs/cgroup, not delegated), that bound is not in
force: :func:`available` says which are, measured once by moving a process into a probe group.
"""
from __future__ import annotations

import functools
import os
import secrets
import subprocess
import time

from . import limits

CONTROLLERS = ("memory", "pids")
OPTIONAL = ("memory.memsw.limit_in_bytes", "memory.swap.max")   # present where swap is counted


def _mountinfo() -> list:
    """(root, mount point, type, super options) of each cgroup file system mounted here."""
    out = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields, extra = left.split(), right.split()
                if len(fields) > 4 and len(extra) > 2 and extra[0] in ("cgroup", "cgroup2"):
                    out.append((fields[3], fields[4], extra[0], set(extra[2].split(","))))
    except OSError:
        pass
    return out


def _own_cgroups() -> dict:
    """{controller or '': this process's cgroup path} ('' is the v2 hierarchy)."""
    out = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                _, names, path = line.rstrip("\n").split(":", 2)
                for name in names.split(",") if names else [""]:
                    out[name] = path
    except (OSError, ValueError):
        pass
    return out


def _parent(controller: str):
    """(folder, version) under which a group for ``controller`` is made, or None."""
    own = _own_cgroups()
    for root, point, kind, options in _mountinfo():
        if kind == "cgroup" and controller in options and controller in own:
            path = own[controller]
        elif kind == "cgroup2" and "" in own:
            path = own[""]
        else:
            continue
        if not (path + "/").startswith(root.rstrip("/") + "/"):
            continue
        folder = os.path.join(point, os.path.relpath(path, root))
        if kind == "cgroup2":
            try:
                with open(os.path.join(folder, "cgroup.subtree_control"), encoding="utf-8") as f:
                    if controller not in f.read().split():
                        continue
            except OSError:
                continue
        return os.path.normpath(folder), (1 if kind == "cgroup" else 2)
    return None


def _write(path: str, value) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(str(value))


def _settings(controller: str, version: int) -> list:
    """(file, value) pairs that bound ``controller``, figures from ``limits`` read when called."""
    if controller == "pids":
        return [("pids.max", limits.MAX_TASKS + limits.TRUSTED_TASKS)]
    if version == 1:
        return [("memory.limit_in_bytes", limits.MEMORY_BYTES),
                ("memory.memsw.limit_in_bytes", limits.MEMORY_BYTES)]   # swap too, where counted
    return [("memory.max", limits.MEMORY_BYTES), ("memory.swap.max", 0)]


class Group:
    """One run's cgroup: a folder per controller it could make (``folders``), bounded."""

    def __init__(self, controllers=CONTROLLERS):
        self.folders, self.version = {}, {}
        name = f"brrr-grade-{os.getpid()}-{secrets.token_hex(4)}"
        for controller in controllers:
            parent = _parent(controller)
            if parent is None:
                continue
            folder = os.path.join(parent[0], name)
            try:
                os.makedirs(folder, exist_ok=True)   # v2: one folder serves both controllers
                for file, value in _settings(controller, parent[1]):
                    path = os.path.join(folder, file)
                    if file not in OPTIONAL or os.path.exists(path):
                        _write(path, value)
            except OSError:
                _remove(folder)
                continue
            self.folders[controller], self.version[controller] = folder, parent[1]

    def join(self) -> None:
        """Move this process into the group (a ``preexec_fn``: the runner as it starts)."""
        for folder in dict.fromkeys(self.folders.values()):
            _write(os.path.join(folder, "cgroup.procs"), os.getpid())

    def oom_kills(self) -> int:
        """Processes of the group the out-of-memory killer ended (0 without a memory group)."""
        folder = self.folders.get("memory")
        if not folder:
            return 0
        name = "memory.oom_control" if self.version["memory"] == 1 else "memory.events"
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def remove(self) -> None:
        """Remove the group's folders (its processes have ended)."""
        for folder in dict.fromkeys(self.folders.values()):
            _remove(folder)
        self.folders = {}


def _remove(folder: str, seconds: float = 10.0) -> None:
    """rmdir ``folder``, waiting up to ``seconds`` for its last processes to be gone."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            os.rmdir(folder)
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)


@functools.lru_cache(maxsize=None)
def available() -> tuple:
    """The controllers whose bound holds here: a probe group is made and a process moved into
    it, which must then see itself in that group."""
    group = Group()
    folders = dict(group.folders)
    try:
        seen = subprocess.run(["cat", "/proc/self/cgroup"], preexec_fn=group.join, capture_output=True,
                              text=True, timeout=30).stdout if folders else ""
    except (OSError, subprocess.SubprocessError):
        seen = ""
    finally:
        group.remove()
    name = "/" + os.path.basename(next(iter(folders.values()), "-"))
    joined = {c for line in seen.splitlines() if line.endswith(name)
              for c in (line.split(":")[1].split(",") if line.split(":")[1] else CONTROLLERS)}
    return tuple(c for c in CONTROLLERS if c in folders and c in joined)
