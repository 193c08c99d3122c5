"""Memory outside every quota (issue 34): memfd and shared memory, a million empty files, a user
namespace of the sandbox's own with its tmpfs, and the kernel's sockets.

Each tmpfs a kernel writes has a file cap as well as a size, no user namespace can be made
inside the sandbox, a run's memory is bounded by a cgroup where the machine allows one (the
out-of-memory killer then ends the kernel, and the reason says so), and the runner never
connects to a socket the kernel put in place of its own.
"""
import asyncio
import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from brrr import grade as g
from brrr.grade import cgroup, limits, runner, sandbox
from grading_toy import CORRECT, make_exercise, notebook
from test_grade import by_submission, full, needs_bwrap, read_scores

INSIDE = """
import json, os, subprocess
out = {"nested": subprocess.run(["unshare", "-U", "true"], capture_output=True).returncode,
       "oom_score_adj": int(open("/proc/self/oom_score_adj").read())}
for name, path in (("folder", "."), ("tmp", "/tmp"), ("shm", "/dev/shm")):
    out[name] = os.statvfs(path).f_files
made = 0
try:
    while made < 100_000:
        open(f"/tmp/f{made}", "w").close()
        made += 1
except OSError as error:
    out["tmp_error"] = error.errno
out["made"] = made
print(json.dumps(out))
"""


@needs_bwrap
def test_no_user_namespace_and_a_file_cap_on_every_tmpfs(tmp_path):
    """A nested `unshare -U` once gave a sandbox a tmpfs past every quota, and a million empty
    files in /tmp took 1.2 GB of kernel memory."""
    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    out.mkdir()
    proc = subprocess.run(sandbox.sandboxed([sys.executable, "-c", INSIDE], str(work), str(out),
                                            sandbox.kernel_env(str(work)), limits.sandbox_id()),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    import platform
    if platform.machine() in limits.SECCOMP_ARCHES:
        assert seen["nested"] != 0, "a user namespace was made inside the sandbox"
    assert seen["oom_score_adj"] == limits.OOM_SCORE_ADJ
    assert (seen["folder"], seen["tmp"], seen["shm"]) == (limits.FOLDER_FILES + 2, limits.TMP_FILES, limits.SHM_FILES)
    assert seen["made"] < limits.TMP_FILES and seen["tmp_error"] == 28, "/tmp took files past its cap"
    assert os.listdir(work) == [] and os.listdir(out / "tmp") == [], "the tmpfs reached the host"


def test_the_bounds_line_names_only_the_bounds_in_force(monkeypatch):
    monkeypatch.setattr(cgroup, "available", lambda: ())
    line = sandbox.bounds("bubblewrap")
    assert "memory cgroup" not in line and "not in force" in line and "memory and pids cgroup" in line
    assert f"/tmp 1 GiB and {limits.TMP_FILES:,}" in line
    monkeypatch.setattr(cgroup, "available", lambda: ("memory", "pids"))
    line = sandbox.bounds("none")
    assert "memory 4 GiB" in line and "pids cgroup" in line and "not in force" not in line
    assert "/tmp" not in line and "user namespace" not in line, "a bound of the bubblewrap level named at none"


@pytest.mark.skipif(not cgroup.available(), reason="the grader can make no cgroup here")
def test_a_runs_cgroup_holds_the_figures_and_is_removed():
    group = cgroup.Group(cgroup.available())
    try:
        for controller, folder in group.folders.items():
            names = {"memory": ("memory.limit_in_bytes", "memory.max"), "pids": ("pids.max",)}[controller]
            file = next(os.path.join(folder, n) for n in names if os.path.exists(os.path.join(folder, n)))
            want = limits.MEMORY_BYTES if controller == "memory" else limits.MAX_TASKS + limits.TRUSTED_TASKS
            assert int(open(file).read()) == want, file
        assert group.oom_kills() == 0
    finally:
        folders = list(group.folders.values())
        group.remove()
    assert not any(os.path.exists(f) for f in folders)


class HostSocket(threading.Thread):
    """A listening socket of the host's, counting the connections it gets."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.accepted = str(path), 0
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(self.path)
        self.server.listen(16)
        self.server.settimeout(0.2)
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            try:
                conn, _ = self.server.accept()
                self.accepted += 1
                conn.close()
            except socket.timeout:
                pass

    def stop(self):
        self.done.set()
        self.join()
        self.server.close()


def test_the_runner_never_reaches_a_socket_put_in_place_of_the_kernels(tmp_path):
    """The runner reconnected to whatever the kernel put at its socket path: seven times to a
    host socket. Through its pinned path it reaches the kernel's first socket or nothing; the
    kernel's own path, the control, reaches the host socket."""
    import zmq
    kernel_dir = tmp_path / "kernel"
    kernel_dir.mkdir()
    prefix = str(kernel_dir / "k")
    ctx = zmq.Context()
    served = ctx.socket(zmq.REP)
    served.bind(f"ipc://{prefix}-1")
    held = []

    async def no_exit():
        return None

    pinned = asyncio.run(runner.pin_sockets(prefix, [1], str(tmp_path / "sockets"), no_exit, held, timeout=5))
    assert oct(os.stat(tmp_path / "sockets").st_mode & 0o777) == "0o700"
    client = ctx.socket(zmq.REQ)
    client.connect(f"ipc://{pinned}-1")
    client.send(b"ping")
    assert served.recv() == b"ping"
    served.close(linger=0)
    host = HostSocket(tmp_path / "host.sock")
    host.start()
    try:
        if os.path.lexists(f"{prefix}-1"):
            os.unlink(f"{prefix}-1")
        os.symlink(host.path, f"{prefix}-1")      # what the kernel may do: unlink, link elsewhere
        client.close(linger=0)                     # a fresh connection, as after a drop
        again = ctx.socket(zmq.DEALER)
        again.connect(f"ipc://{pinned}-1")
        again.send(b"ping")
        control = ctx.socket(zmq.DEALER)
        control.connect(f"ipc://{prefix}-1")
        control.send(b"ping")
        for _ in range(30):
            if host.accepted:
                break
            threading.Event().wait(0.05)
        threading.Event().wait(0.5)                # time for more (re)connections from the pinned path
        assert host.accepted >= 1, "the control never reached the host socket: this test sees nothing"
        control.close(linger=0)
        threading.Event().wait(0.3)
        before = host.accepted
        threading.Event().wait(0.5)
        assert host.accepted == before, "the pinned path reached the host socket"
        again.close(linger=0)
    finally:
        host.stop()
        for fd in held:
            os.close(fd)
        ctx.term()


def test_a_socket_path_that_holds_no_socket_is_refused(tmp_path):
    os.symlink("/etc/passwd", tmp_path / "k-1")

    async def no_exit():
        return None

    with pytest.raises(RuntimeError, match="holds no socket"):
        asyncio.run(runner.pin_sockets(str(tmp_path / "k"), [1], str(tmp_path / "sockets"), no_exit, [], timeout=5))


def _graded(toy, tmp_path, *notebooks):
    out = tmp_path / "scores.csv"
    code = g.main([toy, *notebooks, "--out", str(out), "--timeout", "120", "--cell-timeout", "30",
                   "--isolation", "bubblewrap"])
    rows = read_scores(out)
    return code, by_submission(rows)


def _killed_beside_good(tmp_path, code: str) -> str:
    """Grade a notebook that runs ``code`` after question 1, then an honest one, in one batch; the
    honest one gets full marks, the other question 1's point only. Returns its question 2's reason."""
    toy = make_exercise(tmp_path / "toy")
    bad = notebook(tmp_path / "bad.ipynb", CORRECT[0], code, *CORRECT[1:])
    good = notebook(tmp_path / "good.ipynb", *CORRECT)
    status, by = _graded(toy, tmp_path, bad, good)
    assert status == 0 and full(by[good]), by[good]
    assert by[bad]["q1"]["score"] == 1 and not full(by[bad]), by[bad]
    return by[bad]["q2"]["reason"]


FILES = """import os
made = 0
try:
    for i in range(100_000):
        open(f"/tmp/f{i}", "w").close()
        made += 1
except OSError:
    pass
import time
time.sleep(5)"""


@pytest.mark.slow
@needs_bwrap
def test_a_notebook_making_100k_files_in_tmp_stops_at_its_cap(tmp_path, monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")
    reason = _killed_beside_good(tmp_path, FILES)
    assert f"it made {limits.TMP_FILES - 1:,} files in its /tmp" in reason and "kernel was killed" in reason, reason


MEMFD = """import os
fd = os.memfd_create("held")
block = b"x" * (1 << 20)
for _ in range(3 << 10):          # 3 GiB, held by no process's own memory
    os.write(fd, block)"""


@pytest.mark.slow
@needs_bwrap
@pytest.mark.skipif("memory" not in cgroup.available(),
                    reason="the grader can make no memory cgroup here, so memory is not bounded")
def test_memory_held_in_a_memfd_past_the_bound_ends_the_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")
    monkeypatch.setattr(limits, "MEMORY_BYTES", 1 << 30)       # read as each run's cgroup is made
    reason = _killed_beside_good(tmp_path, MEMFD)
    assert "it used more than 1 GiB of memory" in reason and "kernel was killed" in reason, reason
    parent = cgroup._parent("memory")[0]
    left = [f for f in os.listdir(parent) if f.startswith(f"brrr-grade-{os.getpid()}-")]
    assert left == [], f"cgroups of the batch were left behind: {left}"


SWAP = """import glob, os, socket
host = {host!r}
for path in glob.glob(".kernel/k-*"):
    os.unlink(path)
    os.symlink(host, path)
os._exit(1)"""


@pytest.mark.slow
@needs_bwrap
def test_a_kernel_that_swaps_its_sockets_for_a_host_socket_is_never_reached(tmp_path, monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")
    toy = make_exercise(tmp_path / "toy")
    host = HostSocket(tmp_path / "host.sock")
    host.start()
    try:
        swap = notebook(tmp_path / "swap.ipynb", CORRECT[0], SWAP.format(host=host.path), *CORRECT[1:])
        good = notebook(tmp_path / "good.ipynb", *CORRECT)
        code, by = _graded(toy, tmp_path, swap, good)
    finally:
        host.stop()
    assert host.accepted == 0, f"the runner connected {host.accepted} time(s) to a host socket"
    assert full(by[good]) and by[swap]["q1"]["score"] == 1 and "kernel died" in by[swap]["q2"]["reason"]
