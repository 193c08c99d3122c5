"""What one submission may use (brrr.grade.limits): processes, file sizes, /tmp, its folder.

A fork bomb and a disk filler must not take the grading machine down: the limits hold inside
the sandbox, the watch on a submission's folder fires, and a batch with a fork bomb in it
still grades the honest notebook beside it, leaving no process behind.
"""
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import pytest

from brrr import grade as g
from brrr.grade import limits, sandbox
from grading_toy import CORRECT, make_exercise, notebook
from test_grade import by_submission, full, needs_bwrap, read_scores


def test_folder_usage_counts_blocks_not_lengths(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "data.bin").write_bytes(os.urandom(256 * 1024))
    with open(tmp_path / "sparse.bin", "wb") as f:  # a large length that occupies nothing
        f.seek(64 << 20)
        f.write(b"x")
    used, entries = limits.folder_usage(str(tmp_path))
    assert entries == 3
    assert 256 * 1024 <= used < 8 << 20, "the sparse file's length was counted"


def test_folder_usage_stops_counting_past_the_entry_limit(tmp_path):
    for i in range(30):
        (tmp_path / f"f{i}").write_text("x")
    used, entries = limits.folder_usage(str(tmp_path), max_entries=10)
    assert entries == 11


def test_the_watch_fires_once_with_a_reason(tmp_path):
    fired = []
    watch = limits.FolderWatch(str(tmp_path), on_exceed=lambda: fired.append(time.time()),
                               max_bytes=1 << 20, max_entries=50)
    assert watch.check() == ""
    watch.start()
    (tmp_path / "big.bin").write_bytes(os.urandom(2 << 20))
    watch.join(timeout=10 * limits.WATCH_SECONDS)
    assert not watch.is_alive() and len(fired) == 1
    assert watch.reason.startswith("it filled its folder (1 MiB")
    assert watch.poll() == watch.reason and len(fired) == 1        # a later check never fires again
    (tmp_path / "big.bin").unlink()
    for i in range(60):
        (tmp_path / f"f{i}").write_text("x")
    assert "more than 50 files" in watch.check()


def test_the_runner_can_check_at_once_between_cells(tmp_path):
    """A cell that filled the folder and returned is caught before the next snapshot (which a
    killed kernel would keep waiting), not up to WATCH_SECONDS later."""
    fired = []
    watch = limits.FolderWatch(str(tmp_path), on_exceed=lambda: fired.append(1), max_bytes=1 << 20)
    assert watch.poll() == "" and fired == []
    (tmp_path / "big.bin").write_bytes(os.urandom(2 << 20))
    assert watch.poll().startswith("it filled its folder") and fired == [1]
    assert watch.poll() and fired == [1]


def test_a_stopped_watch_never_fires(tmp_path):
    fired = []
    watch = limits.FolderWatch(str(tmp_path), on_exceed=lambda: fired.append(1), max_bytes=10)
    watch.start()
    watch.stop()
    watch.join(timeout=5)
    (tmp_path / "late.bin").write_bytes(b"x" * 4096)
    time.sleep(2 * limits.WATCH_SECONDS)
    assert not watch.is_alive() and fired == []


def test_the_limits_step_refuses_a_malformed_command(capsys):
    assert limits.main(["bubblewrap", "/bin/true"]) == 2
    assert limits.main(["bubblewrap", "--", "/bin/true"]) == 2     # no identity
    assert "usage" in capsys.readouterr().err


def test_plain_processes_get_the_file_size_limit_only(tmp_path):
    probe = ("import resource, os; print(resource.getrlimit(resource.RLIMIT_FSIZE)[0], "
             "resource.getrlimit(resource.RLIMIT_NPROC)[0], os.getuid())")
    proc = subprocess.run(sandbox.wrap([sys.executable, "-c", probe], str(tmp_path), {}, "none"),
                          capture_output=True, text=True, timeout=60)
    fsize, nproc, uid = (int(v) for v in proc.stdout.split())
    assert fsize == limits.MAX_FILE_BYTES
    assert nproc != limits.MAX_TASKS and uid == os.getuid()


PROBE = f"""
import json, os, resource, time
out = {{"uid": os.getuid(), "caps": open("/proc/self/status").read().split("CapEff:")[1].split()[0]}}
try:
    with open("too-big.bin", "wb") as f:
        f.seek({limits.MAX_FILE_BYTES})
        f.write(b"x")
    out["big_file"] = True
except OSError:
    out["big_file"] = False
os.remove("too-big.bin") if os.path.exists("too-big.bin") else None
st = os.statvfs("/tmp")
out["tmp_bytes"] = st.f_blocks * st.f_frsize
out["read_only"] = [p for p in ("/", "/dev", "/usr") if os.statvfs(p).f_flag & os.ST_RDONLY]
st = os.statvfs("/dev/shm")
out["shm_bytes"] = st.f_blocks * st.f_frsize
import multiprocessing
multiprocessing.Lock()          # a semaphore in /dev/shm
children = 0
try:
    while children < 4 * {limits.MAX_TASKS}:
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        children += 1
except OSError:
    pass
out["children"] = children
print(json.dumps(out), flush=True)
os._exit(0)
"""


@pytest.mark.slow
@needs_bwrap
def test_the_sandbox_bounds_processes_file_sizes_and_tmp():
    work = tempfile.mkdtemp(prefix="brrr-limits-")
    try:
        os.makedirs(os.path.join(work, "work"))
        os.makedirs(os.path.join(work, "out"))
        env = sandbox.kernel_env(os.path.join(work, "work"))
        proc = subprocess.run(sandbox.sandboxed([sys.executable, "-c", PROBE], os.path.join(work, "work"),
                                                os.path.join(work, "out"), env),
                              capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stderr
        seen = json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        subprocess.run(["rm", "-rf", work])
    assert seen["big_file"] is False, "a file past MAX_FILE_BYTES was written"
    assert seen["tmp_bytes"] <= limits.TMP_BYTES
    assert 0 < seen["shm_bytes"] <= limits.SHM_BYTES
    assert seen["read_only"] == ["/", "/dev", "/usr"], "the sandbox's own / or /dev is writable, without a size"
    assert 0 < seen["children"] < limits.MAX_TASKS, "the process limit did not hold"
    if os.geteuid() == 0:
        assert seen["uid"] == limits.NOBODY and int(seen["caps"], 16) == 0   # wrap without an identity


FILLER = """
import json, os, sys
sys.path.insert(0, {package!r})
from brrr.grade import limits
work = {work!r}
os.chdir(work)
block, held, written = b"\\0" * (1 << 20), [], {{}}
os.makedirs("hidden/deeper")
for kind, path in (("plain", "plain.bin"), ("unlinked", "gone.bin"), ("unreadable", "hidden/deeper/x.bin")):
    if kind == "unreadable":
        os.chmod("hidden/deeper", 0o300)
        os.chmod("hidden", 0o300)
    f = open(path, "wb")
    held.append(f)
    if kind == "unlinked":
        os.unlink(path)
    written[kind] = 0
    try:
        for _ in range(1024):        # 1 GiB each, 3 GiB in all
            f.write(block)
            f.flush()
            written[kind] += len(block)
    except OSError:
        pass
    watch = limits.FolderWatch(work, on_exceed=lambda: None)
    written[kind + " reason"] = watch.check()
    os.truncate(f.fileno(), 0)       # room for the next way, the file still open
print(json.dumps({{"written": written, "quota": limits.quota(work), "usage": limits.folder_usage(work)}}))
"""


@pytest.mark.slow
@needs_bwrap
def test_the_folder_is_a_quota_the_kernel_enforces(tmp_path, monkeypatch):
    """3 GiB written to the folder a runner gets (plainly, to a file deleted but open, in folders
    made unreadable) stops at FOLDER_BYTES, which the watch reports; the host's folder stays empty."""
    import brrr
    monkeypatch.setattr(limits, "FOLDER_BYTES", 8 << 20)   # read when the command is made
    work = tmp_path / "work"
    work.mkdir()
    code = FILLER.format(package=os.path.dirname(os.path.dirname(brrr.__file__)), work=str(work))
    assert sandbox.own_folder(["x"], str(work), str(tmp_path), "none") == ["x"]
    proc = subprocess.run(sandbox.own_folder([sys.executable, "-c", code], str(work), str(tmp_path), "bubblewrap"),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    for kind in ("plain", "unlinked", "unreadable"):
        assert 4 << 20 < seen["written"][kind] <= 8 << 20, f"{kind}: {seen['written'][kind]:,} bytes written"
        assert seen["written"][kind + " reason"].startswith("it filled its folder (8 MiB"), kind
    assert seen["quota"] == 8 << 20 and seen["usage"][0] < 1 << 20
    assert seen["usage"][1] == 5, "the deleted file held open, and the unreadable folders, are counted"
    assert os.listdir(work) == [], "the folder's files reached the host"


BOMB = '''import os
while True:
    try:
        os.fork()
    except OSError:
        pass
'''


@pytest.mark.slow
@needs_bwrap
def test_a_fork_bomb_in_a_batch_harms_nobody_else(tmp_path, monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")
    toy = make_exercise(tmp_path / "toy")
    bomb = notebook(tmp_path / "bomb.ipynb", CORRECT[0], BOMB, *CORRECT[1:])
    good = notebook(tmp_path / "good.ipynb", *CORRECT)
    out = tmp_path / "scores.csv"
    import psutil
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    start = time.time()
    code = g.main([toy, bomb, good, "--out", str(out), "--timeout", "120", "--cell-timeout", "10",
                   "--isolation", "bubblewrap"])
    assert time.time() - start < 240
    assert code == 0
    rows = read_scores(out)
    by = by_submission(rows)
    assert full(by[good]), "the notebook after the bomb was not graded in full"
    assert by[bomb]["q1"]["score"] == 1 and by[bomb]["q1"]["status"] == "timed out"
    assert not full(by[bomb])
    time.sleep(0.5)
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]  # zombies too
    assert left == [], f"processes of the batch survived: {left}"
    if os.geteuid() == 0:
        assert not [p for p in psutil.process_iter(["username"]) if p.info["username"] == "nobody"]


def test_the_instructor_guide_states_the_limits_the_code_sets():
    from brrr.units import format_bytes
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    guide = open(os.path.join(root, "book", "instructor_guide.md"), encoding="utf-8").read()
    table = guide[guide.index("**Resource limits.**"):guide.index("**The risk that remains.**")]
    assert f"| {limits.MAX_TASKS} per sandbox" in table
    assert f"| {format_bytes(limits.MAX_FILE_BYTES)} (every level)" in table
    assert f"a private {format_bytes(limits.TMP_BYTES)} and {limits.TMP_FILES:,} files in memory" in table
    assert f"a private {format_bytes(limits.SHM_BYTES)} and {limits.SHM_FILES:,} files in memory" in table
    assert f"| {format_bytes(limits.MEMORY_BYTES)} per submission's run" in table
    assert f"used more than {format_bytes(limits.MEMORY_BYTES)}" in table
    assert f"also {limits.MAX_TASKS + limits.TRUSTED_TASKS} per submission's run" in table
    held = limits.FOLDER_BYTES + limits.TMP_BYTES + limits.SHM_BYTES
    assert f"up to {format_bytes(held)} there" in table
    assert f"{format_bytes(limits.FOLDER_BYTES)} and {limits.FOLDER_FILES:,} files" in table
    assert f"a private {format_bytes(limits.FOLDER_BYTES)} in memory" in table


KEYRINGS = """
import ctypes, json, os, platform
number = {"x86_64": 250, "aarch64": 219}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
session = libc.syscall(number, 0, -3, 0)      # KEYCTL_GET_KEYRING_ID of the session keyring
print(json.dumps({"uid": os.getuid(), "session": session}), flush=True)
"""


@pytest.mark.slow
@needs_bwrap
@pytest.mark.skipif(platform.machine() not in ("x86_64", "aarch64"), reason="keyctl's number is unknown here")
def test_each_sandbox_has_its_own_identity_and_session_keyring():
    """A fork bomb in one batch once failed an honest submission of another (one `nobody` for all),
    and a key one submission wrote was read by a later one."""
    import ctypes
    grader_session = ctypes.CDLL(None).syscall({"x86_64": 250, "aarch64": 219}[platform.machine()], 0, -3, 0)
    seen = []
    for _ in range(2):
        work = tempfile.mkdtemp(prefix="brrr-identity-")
        try:
            identity = limits.sandbox_id()
            folder, out = os.path.join(work, "work"), os.path.join(work, "out")
            os.makedirs(folder)
            os.makedirs(out)
            proc = subprocess.run(sandbox.sandboxed([sys.executable, "-c", KEYRINGS], folder, out,
                                                    sandbox.kernel_env(folder), identity),
                                  capture_output=True, text=True, timeout=120)
            assert proc.returncode == 0, proc.stderr
            seen.append((identity, json.loads(proc.stdout.strip().splitlines()[-1])))
        finally:
            subprocess.run(["rm", "-rf", work])
    (first_id, first), (second_id, second) = seen
    assert first["session"] != grader_session and second["session"] != first["session"]
    if os.geteuid() == 0:
        assert (first["uid"], second["uid"]) == (first_id, second_id) and first_id != second_id


def test_a_file_deleted_while_open_still_counts(tmp_path):
    """Files unlinked but held open once put 3 GiB on the disk, unseen by the folder watch."""
    fired = []
    watch = limits.FolderWatch(str(tmp_path), on_exceed=lambda: fired.append(1), max_bytes=2 << 20,
                               pids=lambda: [os.getpid()])
    path = tmp_path / "hidden.bin"
    with open(path, "wb") as held:
        held.write(os.urandom(3 << 20))
        held.flush()
        os.fsync(held.fileno())
        path.unlink()
        assert limits.folder_usage(str(tmp_path))[0] < 2 << 20       # a scan sees nothing
        assert limits.deleted_but_open(str(tmp_path), [os.getpid()]) >= 3 << 20
        assert "filled its folder" in watch.check()
    assert watch.check() == ""                                       # closed: the space is freed


@pytest.mark.skipif(os.geteuid() != 0, reason="drops to another user to act as an ordinary grader")
def test_an_ordinary_grader_sees_and_removes_folders_made_unreadable(tmp_path):
    """Run by an ordinary user, a write-only folder once hid 3 GiB from the watch and the cleanup."""
    import pathlib
    top = pathlib.Path(tempfile.mkdtemp(prefix="brrr-unreadable-"))    # /tmp: a path nobody can walk
    os.chmod(top, 0o755)
    os.chown(top, limits.NOBODY, limits.NOBODY)       # the grader's own folder, as run_dir's parent is
    work = top / "work"
    work.mkdir()
    os.chown(work, limits.NOBODY, limits.NOBODY)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                  # the child: an ordinary user, then the attack
        try:
            os.setgroups([])
            os.setgid(limits.NOBODY)
            os.setuid(limits.NOBODY)
            hidden = work / "hidden"
            (hidden / "deeper").mkdir(parents=True)
            (hidden / "deeper" / "big.bin").write_bytes(os.urandom(3 << 20))
            os.chmod(hidden / "deeper", 0o300)    # write and enter, but not read
            os.chmod(hidden, 0o300)
            used, _ = limits.folder_usage(str(work))
            limits.remove_tree(str(work))
            os.write(write, json.dumps({"used": used, "left": os.path.exists(work)}).encode())
        except BaseException as error:  # noqa: BLE001 - reported to the parent
            os.write(write, json.dumps({"error": repr(error)}).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    seen = json.loads(os.read(read, 4096).decode())
    subprocess.run(["rm", "-rf", str(top)])
    assert "error" not in seen, seen["error"]
    assert seen["used"] >= 3 << 20 and seen["left"] is False
