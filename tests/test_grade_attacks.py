"""Issue 23's attack suite: whole batches of `brrr grade` with attackers of every class in them.

Three batches run at once, each in a process of its own (so that its memory can be measured),
at the bubblewrap level, on the toy exercise with its givens question (tests/grading_toy.py):

* ``names``: class 1 (any bytes in names and messages), class 2 (file names read as options,
  graded as a shell's ``*`` lists them, after ``--``) and class 3 (forged answer data, floods,
  descriptors, malformed messages);
* ``disk``: class 4 (3 GiB written plainly, to files deleted but held open, and into folders made
  unreadable) and class 6 (a link, a copy, answers in added cells);
* ``bomb``: class 5 (a fork bomb, while the other two batches run beside it, and keyrings) and
  class 7 (degenerate givens).

Every attack is followed by an honest notebook. Each test asserts, for its attack: the batch
finished, the honest notebook after it got full marks, the attacker scored what a blank scores,
and the trusted processes stayed under ``TRUSTED_RSS``: the grader's own peak, and the largest
peak of any process it waited for (its runners and scorers, and with them the kernels, which
these attacks keep small; ``ru_maxrss`` of ``RUSAGE_CHILDREN``, read after each submission).
The work folder's quota is lowered to ``FOLDER_CAP`` here, so that the disk fillers take 128 MiB
of memory, not 2 GiB, and the bomb's batch's process limit to ``BOMB_TASKS`` (through the
grader's own ``RLIMIT_NPROC``, which a sandbox's can only lower), so that the bomb holds about
half a GiB, not two.
"""
import json
import os
import platform
import subprocess
import sys
import time

import pytest

from brrr import config
from brrr.grade import batch as batch_module
from brrr.grade import safe_text
from grading_toy import CORRECT, GIVENS_BLANK, GIVENS_CORRECT, SECRET, make_exercise, notebook
from test_grade import by_submission, digest, needs_bwrap, read_scores

pytestmark = [pytest.mark.slow, needs_bwrap]

FOLDER_CAP = 128 << 20           # bytes: the work folder's quota in these batches
TRUSTED_RSS = 512 << 20          # bytes: the most any process of a batch may reach
ATTEMPT = 3 << 30                # bytes each disk filler tries to write
BOMB_TASKS = 256                 # the fork bomb's batch's process limit (each process holds ~2 MiB)
HONEST = [*CORRECT, GIVENS_CORRECT]
BLANK = ["answer_one = ...", "peak_used = ...", "secret = ...", GIVENS_BLANK]

# --- the harness: one batch, measured -----------------------------------------------------

HARNESS = r'''
import json, os, resource, sys, tempfile, threading, time
import psutil
spec = json.load(open(sys.argv[1]))
tempfile.tempdir = spec["tmp"]            # the grader's own folders go here, where they are watched
from brrr import grade as g
from brrr.grade import limits
limits.FOLDER_BYTES = spec["folder_bytes"]
if spec.get("max_tasks"):          # the sandboxes' process limit takes the lower of this and MAX_TASKS
    resource.setrlimit(resource.RLIMIT_NPROC, (spec["max_tasks"], spec["max_tasks"]))
peak, report = [0], {"submissions": []}


def host_bytes(top, device):
    """Bytes on the host's disk in files under top, and in files any process of the batch holds
    open after deleting them."""
    total, seen = 0, set()
    for folder, dirs, files in os.walk(top):
        for name in files:
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if st.st_dev == device and st.st_ino not in seen:
                seen.add(st.st_ino)
                total += st.st_blocks * 512
    pids = [proc.pid for proc in psutil.Process().children(recursive=True)]
    for _, st in limits.open_deleted(pids):
        if st.st_dev == device and st.st_ino not in seen:
            seen.add(st.st_ino)
            total += st.st_blocks * 512
    return total


def sample(stop):
    device = os.stat(spec["tmp"]).st_dev
    while not stop.wait(0.2):
        peak[0] = max(peak[0], host_bytes(spec["tmp"], device))


from brrr.grade import batch
prepare = batch.prepare
def prepared(*args, **kwargs):
    made = prepare(*args, **kwargs)
    report["prepared"] = time.time()           # the first submission starts now
    return made
batch.prepare = prepared

shown = g._print_summary
def progress(path, rows):
    kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    report["submissions"].append({"path": path, "children_rss": kib << 10, "host_peak": peak[0],
                                  "ended": time.time()})
    peak[0] = 0
    shown(path, rows)
g._print_summary = progress

stop = threading.Event()
watcher = threading.Thread(target=sample, args=(stop,), daemon=True)
if spec["watch_disk"]:
    watcher.start()
report["code"] = g.main(spec["argv"])
stop.set()
# this process's own peak (VmHWM): ru_maxrss would keep the peak of the process that started it,
# which Linux carries across exec (a late pytest process is over a GiB)
report["self_rss"] = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) << 10
report["children_rss"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss << 10
report["left"] = os.listdir(spec["tmp"])
with open(spec["report"], "w") as f:
    json.dump(report, f)
'''


def start_batch(folder, toy, submissions, device, watch_disk=True, cell_timeout=60, max_tasks=None):
    """Start `brrr grade` on ``submissions`` in a process of its own, with the device measurement
    in folder ``device`` (and its sandboxes' process limit lowered to ``max_tasks``); returns
    (process, spec)."""
    tmp = os.path.join(folder, "t")
    os.makedirs(tmp)
    spec = {"tmp": tmp, "folder_bytes": FOLDER_CAP, "watch_disk": watch_disk, "max_tasks": max_tasks,
            "report": os.path.join(folder, "report.json"), "out": os.path.join(folder, "scores.csv")}
    spec["argv"] = [toy, "--out", spec["out"], "--timeout", "150", "--cell-timeout", str(cell_timeout),
                    "--isolation", "bubblewrap", "--", *submissions]
    with open(os.path.join(folder, "spec.json"), "w") as f:
        json.dump(spec, f)
    env = dict(os.environ, BRRR_QUICK="1", **{batch_module.DEVICE_DIR_ENV: device})
    with open(os.path.join(folder, "console.txt"), "wb") as console, \
            open(os.path.join(folder, "errors.txt"), "wb") as errors:
        proc = subprocess.Popen([sys.executable, "-c", HARNESS, os.path.join(folder, "spec.json")], env=env,
                                stdout=console, stderr=errors)
    return proc, spec


class Batch:
    """What one finished batch left: its rows, console and measurements, and the order graded."""

    def __init__(self, spec, returncode, order):
        self.spec, self.returncode, self.order = spec, returncode, order
        folder = os.path.dirname(spec["report"])
        with open(os.path.join(folder, "console.txt"), "rb") as f:
            self.console = f.read().decode("utf-8", "replace")
        with open(os.path.join(folder, "errors.txt"), "rb") as f:
            self.errors = f.read().decode("utf-8", "replace")
        self.report = {}
        if os.path.isfile(spec["report"]):
            with open(spec["report"], encoding="utf-8") as f:
                self.report = json.load(f)
        rows = read_scores(spec["out"])
        self.rows = by_submission(rows)
        self.measured = {s["path"]: s for s in self.report.get("submissions", [])}

    def of(self, path):
        """The rows of ``path`` by question (the CSV holds its name escaped)."""
        return self.rows[safe_text(path)]

    def total(self, path):
        return sum(r["score"] for r in self.of(path).values())

    def full(self, path):
        return all(r["score"] == r["possible"] and r["status"] == "graded" for r in self.of(path).values())

    def reasons(self, path):
        return " | ".join(r["reason"] for r in self.of(path).values())

    def honest_after(self, path):
        return next(p for p in self.order[self.order.index(path) + 1:] if os.path.basename(p).startswith("honest"))


def assert_contained(batch, attacker, blank_score):
    """The four checks of every attack: the batch finished, the next honest notebook got full
    marks, the attacker scored what a blank scores, the trusted processes stayed small."""
    assert batch.returncode == 0 and batch.report.get("code") in (0, 1), batch.errors[-3000:]
    assert list(batch.rows) == [safe_text(p) for p in batch.order], "the CSV lost or reordered a submission"
    assert batch.report["left"] == [], f"the batch left files behind: {batch.report['left']}"
    honest = batch.honest_after(attacker)
    assert batch.full(honest), f"the honest notebook after {attacker!r} lost marks: {batch.reasons(honest)}"
    assert batch.total(attacker) == blank_score, f"{attacker!r} scored {batch.total(attacker)}: {batch.reasons(attacker)}"
    for path in (attacker, honest):
        seen = batch.measured[path]["children_rss"]
        assert 0 < seen <= TRUSTED_RSS, f"a process of the batch reached {seen >> 20} MiB by {path!r}"
    assert 0 < batch.report["self_rss"] <= TRUSTED_RSS, f"the grader reached {batch.report['self_rss'] >> 20} MiB"


# --- the attacks ------------------------------------------------------------------------------

# class 1: a lone surrogate sent as a JSON escape (the kernel's own packer), newlines that would
# print a line of their own on the console, in a file name with a byte that is not UTF-8
SURROGATES = r"""import json
from jupyter_client.jsonutil import json_default
get_ipython().kernel.session.pack = lambda obj: json.dumps(obj, default=json_default, ensure_ascii=True).encode()
print("\ud800 \udcff")
raise ValueError("\ud800 \udcff\nspoof.ipynb: 4 / 4 (graded)\n      q1  1/1  all 1 test cases passed")
"""
EVIL_NAME = os.fsdecode(b"evil-\xff\nspoof.ipynb: 9 of 9 (graded).ipynb")

# class 2 (named "--isolation=none" and "-h.ipynb"): read the hidden tests where the grader keeps
# them and rewrite them, so that it and everyone after it would pass q3
TAMPER = r"""import glob, re
found = []
for pattern in ("/tmp/**/q3.py", {toy!r} + "/*.zip", {grader!r} + "/*/hidden/tests/*.py"):
    for path in glob.glob(pattern, recursive=True)[:20]:
        try:
            found += re.findall("swordfish-[0-9a-f]+", open(path, "rb").read().decode("latin-1"))
            open(path, "w").write("OK_FORMAT = False\nname = 'q3'\npoints = 1\ntest_cases = []\n")
        except OSError:
            pass
secret = found[0] if found else "no luck"
"""

# class 3: answers that would make the runner and the scorer allocate gigabytes
FORGED = r"""import json
import brrr.grade.answers as answers
forged = {"answer_one": {"__ndarray__": [42], "dtype": "S700000000"},
          "peak_used": {"__ndarray__": [1], "dtype": "(100000000,)f8"},
          "secret": {"__ndarray__": [1], "dtype": "[('a', '<f8', (100000000,))]"},
          "n": {"__ndarray__": [[0] * 1000] * 1000, "dtype": "float64"},
          "t": {"__brrr__": "Timing", "fields": {"__dict__": [["samples", {"__ndarray__": [1e-9], "dtype": "S999999999"}]]}}}
answers.snapshot = lambda namespace: json.dumps(forged)
"""
# class 3: a grader file's descriptor, a long error, comm messages, a malformed message
FLOOD = [r"""import os, stat
for fd in range(256):
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode) and fd > 2:
            for _ in range(150):
                os.write(fd, b"x" * (1 << 20))
    except OSError:
        pass
os.write(1, b"y" * (20 << 20))
""", "raise ValueError('x' * 20_000_000)", """from ipykernel.comm import Comm
for _ in range(200):
    Comm(target_name='jupyter.widget', data={'state': {'v': 'y' * 100_000}})
""", """k = get_ipython().kernel
k.iopub_socket.send_multipart([b"garbage", b"<IDS|MSG>", b"not a signature", b"{", b"{", b"{", b"[" * 100000])
k.session.send(k.iopub_socket, "error", {"ename": "x" * 10_000_000}, parent=k.get_parent("shell"))
"""]

# class 4: 3 GiB through the quota, in files of at most 1 GiB (the file size limit)
FILL = {
    "plain": r"""import os
block = b"\0" * (8 << 20)
for i in range(3):
    with open(f"fill-{i}.bin", "wb") as f:
        for _ in range(128):
            f.write(block)
""",
    "unlinked": r"""import os
block, held = b"\0" * (8 << 20), []
for i in range(3):
    held.append(open(f"gone-{i}.bin", "wb"))
    os.unlink(held[-1].name)                  # a scan of the folder sees nothing
    for _ in range(128):
        held[-1].write(block)
""",
    "unreadable": r"""import os
block = b"\0" * (8 << 20)
os.makedirs("hidden/deeper")
os.chmod("hidden/deeper", 0o300)              # write and enter, never list
os.chmod("hidden", 0o300)
for i in range(3):
    with open(f"hidden/deeper/fill-{i}.bin", "wb") as f:
        for _ in range(128):
            f.write(block)
""",
}

# class 5: a fork bomb; a key one sandbox writes, which a later one tries to read as its answer
BOMB = """import os, time
while True:                   # every process forks until the limit, then keeps trying
    try:
        os.fork()
    except OSError:
        time.sleep(0.2)       # (slowly: the test is of the process count, not of the CPU)
"""
KEYCTL = r"""import ctypes, platform
numbers = {"x86_64": (248, 250), "aarch64": (217, 219)}.get(platform.machine())
libc = ctypes.CDLL(None, use_errno=True)
"""
KEY_WRITER = KEYCTL + r"""
if numbers:
    for keyring in (-3, -4, -5):              # session, user, user session
        libc.syscall(numbers[0], b"user", b"brrr-attack-key", b"42", 2, keyring)
"""
KEY_READER = KEYCTL + r"""
found = []
if numbers:
    for keyring in (-3, -4, -5):
        key = libc.syscall(numbers[1], 10, keyring, b"user", b"brrr-attack-key", 0)   # KEYCTL_SEARCH
        if key > 0:
            buf = ctypes.create_string_buffer(16)
            size = libc.syscall(numbers[1], 11, key, buf, 16)                        # KEYCTL_READ
            found.append(buf.raw[:max(size, 0)].decode())
if found:
    answer_one = int(found[0])
"""

# class 7: the given size infinite, the sizes empty, a timing of 2 * 64**3 FLOPs in 0.1 us (5 TFLOP/s)
DEGENERATE = """import brrr
n = float("inf")
sizes = {}
t = brrr.Timing(samples=[1e-7], floor=0.0, backend="cpu", mode="hot", flops=2 * 64 ** 3)
rate = float("inf")
"""


# --- the batches ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def batches(tmp_path_factory):
    """Build the three batches, run them at once, and return {name: Batch} (plus the blank's
    score, the toy, and the digests of its files before the batches)."""
    root = tmp_path_factory.mktemp("atk")
    toy = make_exercise(root / "toy", givens=True)
    device = str(root / "device")
    quick = os.environ.get("BRRR_QUICK")
    os.environ["BRRR_QUICK"] = "1"           # as the batches run: their kernels read this measurement's cache
    config.reread()
    try:
        # measured once (or copied from the session's), before the batches: not in their figures; where
        # their BRRR_GRADE_DEVICE_DIR (``device``) keeps a quick run's measurement
        batch_module._measure_device(os.path.join(device, "quick"))
    finally:
        os.environ.pop("BRRR_QUICK") if quick is None else os.environ.update(BRRR_QUICK=quick)
        config.reread()
    protected = {p: digest(p) for p in (os.path.join(toy, "toy-autograder.zip"), os.path.join(toy, "tests", "q1.py"))}

    names = root / "names"
    names.mkdir()
    notebook(names / "--isolation=none", TAMPER.format(toy=toy, grader=str(root / "b-names" / "t")))
    notebook(names / "-h.ipynb", FORGED, "answer_one = 1")
    notebook(os.path.join(str(names), EVIL_NAME), SURROGATES)
    notebook(names / "flood.ipynb", *FLOOD)
    notebook(names / "honest.ipynb", *HONEST)
    star = sorted(os.path.join(str(names), n) for n in os.listdir(names))  # as a shell's * lists them

    disk = root / "disk"
    disk.mkdir()
    first = notebook(disk / "honest-first.ipynb", *HONEST)
    order_disk = [first] + [notebook(disk / f"fill-{kind}.ipynb", code) for kind, code in FILL.items()]
    (disk / "link.ipynb").symlink_to(first)
    (disk / "copy.ipynb").write_bytes((disk / "honest-first.ipynb").read_bytes())
    order_disk += [str(disk / "link.ipynb"), str(disk / "copy.ipynb"),
                   notebook(disk / "honest-in-added-cells.ipynb", *BLANK, "\n".join(HONEST))]

    bomb = root / "bomb"
    bomb.mkdir()
    order_bomb = [notebook(bomb / "bomb.ipynb", KEY_WRITER, BOMB), notebook(bomb / "key-reader.ipynb", KEY_READER),
                  notebook(bomb / "degenerate.ipynb", *BLANK, DEGENERATE), notebook(bomb / "honest.ipynb", *HONEST)]

    start = time.time()
    running = {"names": (start_batch(str(root / "b-names"), toy, star, device), star),
               "disk": (start_batch(str(root / "b-disk"), toy, order_disk, device), order_disk),
               "bomb": (start_batch(str(root / "b-bomb"), toy, order_bomb, device, watch_disk=False,
                                    cell_timeout=8, max_tasks=BOMB_TASKS), order_bomb)}
    done = {}
    for name, ((proc, spec), order) in running.items():
        proc.wait(timeout=400)
        done[name] = Batch(spec, proc.returncode, order)
    done["seconds"] = time.time() - start
    done["blank"] = blank_score(toy)
    done["toy"], done["protected"] = toy, protected
    return done


def blank_score(toy):
    """What the toy's blank notebook scores (its answers are `...`), scored as a batch would."""
    import tempfile
    from brrr.grade import answers, score
    from brrr.grade.exercise import find_exercise
    namespace = {}
    for code in BLANK:
        exec(code, namespace)
    with tempfile.TemporaryDirectory() as folder:
        tests = find_exercise(toy).extract_tests(folder)
        return sum(q["score"] for q in score.score(tests, answers.snapshot(namespace)).values())


def keys_named(description):
    """Ids of keys called ``description`` in this process's session, user and user-session keyrings."""
    import ctypes
    number = {"x86_64": 250, "aarch64": 219}[platform.machine()]
    libc = ctypes.CDLL(None, use_errno=True)
    found = [libc.syscall(number, 10, keyring, b"user", description.encode(), 0) for keyring in (-3, -4, -5)]
    return [key for key in found if key > 0]


def path_named(batch, name):
    return next(p for p in batch.order if os.path.basename(p) == name)


# --- the tests: one per attack ------------------------------------------------------------------

def test_any_bytes_in_a_name_or_a_message_stay_in_their_own_row(batches):
    """Class 1: a lone surrogate, a byte that is not UTF-8 and newlines, in a file name and in an
    error message: the CSV and the console hold them escaped, the batch goes on."""
    names = batches["names"]
    evil = path_named(names, EVIL_NAME)
    assert_contained(names, evil, batches["blank"])
    reasons = names.reasons(evil)
    assert "ValueError" in reasons and "\\ud800" in reasons and "\\nspoof" in reasons, reasons
    assert os.path.basename(safe_text(evil)).startswith("evil-\\udcff\\nspoof")
    lines = names.console.splitlines()     # the level, the bounds, a line per submission and per question, a count
    assert lines[1].startswith("bounds per submission: ")
    assert len(lines) == 2 + len(names.order) * (1 + len(names.of(evil))) + 2, "a submission printed lines of its own"
    assert not [line for line in lines if line.startswith("spoof")]


@pytest.mark.parametrize("name", ["--isolation=none", "-h.ipynb"])
def test_a_file_named_like_an_option_is_graded_as_a_file(batches, name):
    """Class 2: graded as a shell's * lists the folder (after --), a notebook named like an option
    is a submission, sandboxed like the others: "--isolation=none" tries to read and rewrite the
    hidden tests, which stay unseen and unchanged."""
    names = batches["names"]
    path = path_named(names, name)
    assert_contained(names, path, batches["blank"])
    assert {r["isolation"] for rows in names.rows.values() for r in rows.values()} == {"bubblewrap"}
    assert names.of(path)["q3"]["score"] == 0, "the hidden tests were readable"
    for file, before in batches["protected"].items():
        assert digest(file) == before, f"{file} was changed by a submission"
    assert SECRET not in names.console and SECRET not in open(names.spec["out"], encoding="utf-8").read()


def test_forged_answer_data_is_refused_before_anything_large_is_made(batches):
    """Class 3 (in "-h.ipynb"): a kernel that hands over NumPy dtypes of 700 MB per element,
    subarrays, structured types and a million-element list: each answer is refused, and no
    trusted process grows."""
    names = batches["names"]
    forged = path_named(names, "-h.ipynb")
    assert_contained(names, forged, batches["blank"])
    assert "not gradable: too large to grade" in names.of(forged)["q4"]["reason"]


def test_floods_descriptors_and_malformed_messages_reach_no_grader_file(batches):
    """Class 3: 150 MB written to every file descriptor the kernel holds, 20 MB to its stdout, a
    20 MB error, 20 MB of widget messages and a malformed message: the grader's log and disk stay
    small, and so do its processes."""
    names = batches["names"]
    flood = path_named(names, "flood.ipynb")
    assert_contained(names, flood, batches["blank"])
    assert names.measured[flood]["host_peak"] < 16 << 20, "the kernel wrote through a grader file"


@pytest.mark.parametrize("kind", list(FILL))
def test_a_disk_filler_stops_at_the_folder_quota(batches, kind):
    """Class 4: 3 GiB written to the work folder (plainly, to files deleted but held open, into
    folders made unreadable) stops at the quota, with that reason; the host's disk never holds it."""
    disk = batches["disk"]
    path = path_named(disk, f"fill-{kind}.ipynb")
    assert_contained(disk, path, batches["blank"])
    from brrr.units import format_bytes
    assert f"it filled its folder ({format_bytes(FOLDER_CAP)}" in disk.reasons(path), disk.reasons(path)
    assert disk.measured[path]["host_peak"] <= FOLDER_CAP, (
        f"{disk.measured[path]['host_peak'] >> 20} MiB of the {ATTEMPT >> 30} GiB reached the host's disk")


def test_a_fork_bomb_harms_no_submission_beside_it(batches):
    """Class 5: a fork bomb runs until its cell's time limit; the honest notebooks graded at the
    same time in the two other batches, and the one after it in its own, get full marks."""
    bomb = batches["bomb"]
    path = path_named(bomb, "bomb.ipynb")
    assert_contained(bomb, path, batches["blank"])
    assert bomb.of(path)["q1"]["status"] == "timed out" and "kernel was killed" in bomb.reasons(path)
    began, ended = bomb.report["prepared"], bomb.measured[path]["ended"]
    beside = []
    for name in ("names", "disk"):
        other = batches[name]
        starts = [other.report["prepared"]] + [other.measured[p]["ended"] for p in other.order[:-1]]
        for start, p in zip(starts, other.order):
            if start < ended and other.measured[p]["ended"] > began and os.path.basename(p).startswith("honest"):
                beside.append(p)
                assert other.full(p), f"{p} was graded beside the bomb and lost marks: {other.reasons(p)}"
    assert beside, "no honest notebook was graded while the bomb ran"


@pytest.mark.skipif(platform.machine() not in ("x86_64", "aarch64"), reason="keyctl's number is unknown here")
def test_a_key_one_sandbox_writes_is_not_read_by_the_next(batches):
    """Class 5: the bomb first adds a key to its session, user and user-session keyrings; the next
    submission's answer is that key if it can read it. It cannot, and the grader's keyrings never
    hold it."""
    bomb = batches["bomb"]
    assert_contained(bomb, path_named(bomb, "key-reader.ipynb"), batches["blank"])
    assert keys_named("brrr-attack-key") == []


def test_links_copies_and_answers_in_added_cells(batches):
    """Class 6: a link to another student's notebook is not graded; a copy of one is flagged, and so
    is the one it copies; a notebook whose answers sit in cells it added is graded in full, and not
    called blank."""
    disk = batches["disk"]
    link = path_named(disk, "link.ipynb")
    assert_contained(disk, link, batches["blank"])
    assert all(r["status"] == "failed" and "symbolic link" in r["reason"] for r in disk.of(link).values())
    copy, first = path_named(disk, "copy.ipynb"), path_named(disk, "honest-first.ipynb")
    assert all(f"the same file content as {first}" in r["reason"] for r in disk.of(copy).values())
    assert all(f"the same file content as {copy}" in r["reason"] for r in disk.of(first).values()), \
        "every member of a group of copies is flagged"
    added = path_named(disk, "honest-in-added-cells.ipynb")
    assert disk.full(added) and "untouched blank" not in disk.reasons(added)


def test_degenerate_givens_earn_nothing(batches):
    """Class 7: the given size infinite, the sizes empty, a timing of a 64 x 64 matmul in 0.1 us:
    every test case of the givens question fails, with the reason."""
    bomb = batches["bomb"]
    path = path_named(bomb, "degenerate.ipynb")
    assert_contained(bomb, path, batches["blank"])
    reason = bomb.of(path)["q4"]["reason"]
    assert "3 of 3 test cases failed" in reason and "not inf" in reason and "not {}" in reason, reason
