"""Run one submission's notebook and hand over its answers, cell by cell.

This is the grader's own process (trusted): it starts the kernel (sandboxed, see
``brrr.grade.sandbox``), runs the notebook's code cells one at a time with a per-cell time
limit, and after every cell asks the kernel for a snapshot of its answers
(``brrr.grade.answers``). The latest snapshot and a status are written atomically to a
folder the kernel cannot see, so when a cell hangs (the kernel is killed, not interrupted:
a notebook can ignore SIGINT) or the whole run is stopped, the answers given before still
count. It starts by copying the submission's files (``SEED``: the notebook, the public tests,
the device's peaks cache) into ``WORKDIR``, which at the bubblewrap level is a size-limited
tmpfs only this process and its kernel see (``brrr.grade.sandbox.own_folder``), and watches it
with the kernel's /tmp and /dev/shm (killing the kernel when one is full). The kernel's
sockets are reached through descriptors held here (:func:`pin_sockets`). A message no
honest kernel sends (a ``status`` without its state) ends the run with ``runner_error`` in the
status, and the grader fails that submission.

    python -m brrr.grade.runner NOTEBOOK WORKDIR OUTDIR CELL_TIMEOUT LEVEL [IDENTITY [SEED]]
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from . import limits, mounts, sandbox
from ..cache import write_text

EXPORT = "print(__import__('brrr.grade.answers', fromlist=['snapshot']).snapshot(globals()), end='')"
EXPORT_TIMEOUT = 60.0
MAX_ERRORS_PER_CELL = 5
MAX_ERROR_CHARS = 2_000            # of an error's message and of each traceback line kept
MAX_TRACEBACK_LINES = 20
MAX_MESSAGE_BYTES = 32 << 20       # a larger message from the kernel drops its connection
MAX_KEPT_ERRORS = 5                # errors a status keeps (all are counted)
MAX_KEPT_ERROR_CHARS = 80          # of each kept error's message
STARTUP_TIMEOUT = 120.0            # seconds a kernel may take to start


def _kernel_manager(workdir: str, outdir: str, level: str, identity: int):
    """A kernel manager whose kernel runs at ``level`` as ``identity`` and binds its sockets in
    ``workdir``; the runner reaches them through ``outdir`` only (:func:`pin_sockets`)."""
    import zmq
    from jupyter_client.manager import AsyncKernelManager

    class SandboxedKernelManager(AsyncKernelManager):
        def format_kernel_cmd(self, extra_arguments=None):
            argv = super().format_kernel_cmd(extra_arguments)
            return sandbox.wrap(argv, workdir, sandbox.kernel_env(workdir), level, identity, outdir)

        def write_connection_file(self, **kwargs):
            super().write_connection_file(**kwargs)
            sandbox.hand_over(self.connection_file, identity)  # the kernel must read it

        def client(self, **kwargs):
            kc = super().client(**kwargs)      # a context of its own: the cap is set on it too
            kc.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
            return kc

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            # no descriptor of the grader's: its log is this process's stdout and stderr
            kw.update(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            await super()._async_launch_kernel(kernel_cmd, **kw)
            # before the manager's control socket and the client connect
            self.ip = await pin_sockets(self.ip, self.ports, os.path.join(outdir, "sockets"),
                                        self.provisioner.poll, self.pinned)

    sockets = os.path.join(workdir, ".kernel")
    os.makedirs(sockets, exist_ok=True)
    sandbox.hand_over(sockets, identity)
    km = SandboxedKernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(sockets, "k"),
                                connection_file=os.path.join(sockets, "connection.json"))
    km.pinned = []     # the descriptors of the kernel's sockets, held while the runner lives
    km.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)   # the manager's sockets
    return km


async def pin_sockets(prefix: str, ports, folder: str, poll, held: list,
                      timeout: float = STARTUP_TIMEOUT) -> str:
    """Wait (at most ``timeout`` seconds, while ``poll()`` says the kernel runs) for the kernel's
    socket ``{prefix}-{port}`` of each port, and give the runner a path to each in ``folder``
    (made 0700; the kernel never sees it): a link to a descriptor of that very socket. The
    prefix of those paths is returned, for the runner's connections and reconnections.

    The kernel binds its sockets before any code of the submission runs, and can later replace
    or remove them, or put a link to another socket in their place: the runner still reaches
    the socket first bound, or nothing, never a replacement."""
    import asyncio
    import stat
    import time
    os.mkdir(folder, 0o700)
    deadline = time.monotonic() + timeout
    for port in ports:
        path = f"{prefix}-{port}"
        while True:
            try:
                fd = os.open(path, os.O_PATH | os.O_NOFOLLOW)   # a link is opened as itself
                break
            except FileNotFoundError:
                pass
            if await poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the kernel ended, or did not open its sockets in "
                                   f"{timeout:g} s")
            await asyncio.sleep(0.02)
        held.append(fd)
        if not stat.S_ISSOCK(os.fstat(fd).st_mode):
            raise RuntimeError(f"the kernel's socket path {os.path.basename(path)} holds no socket")
        os.symlink(f"/proc/{os.getpid()}/fd/{fd}", os.path.join(folder, f"k-{port}"))
    return os.path.join(folder, "k")


class MalformedMessage(Exception):
    """A message from the kernel that no honest kernel sends: the run stops, the submission fails."""


def _errors_only_client():
    from nbclient import NotebookClient

    class ErrorsOnlyClient(NotebookClient):
        """Keeps a cell's error outputs only (all the reasons need), each cut short, and drops
        comm (widget) messages: a flood of printing or messages costs nothing."""

        def output(self, outs, msg, display_id, cell_index):
            if msg["msg_type"] != "error" or len(outs) >= MAX_ERRORS_PER_CELL:
                return None
            content = msg["content"]
            content["ename"] = str(content.get("ename", ""))[:MAX_ERROR_CHARS]
            content["evalue"] = str(content.get("evalue", ""))[:MAX_ERROR_CHARS]
            traceback = content.get("traceback") if isinstance(content.get("traceback"), list) else []
            content["traceback"] = [str(line)[:MAX_ERROR_CHARS] for line in traceback[-MAX_TRACEBACK_LINES:]]
            return super().output(outs, msg, display_id, cell_index)

        def handle_comm_msg(self, outs, msg, cell_index):
            return None

        def process_message(self, msg, cell, cell_index):
            content = msg.get("content")
            if not isinstance(msg.get("msg_type"), str) or not isinstance(content, dict):
                raise MalformedMessage("the kernel sent a message without a type or content")
            if msg["msg_type"] == "status" and not isinstance(content.get("execution_state"), str):
                raise MalformedMessage("the kernel sent a malformed 'status' message (no execution_state)")
            return super().process_message(msg, cell, cell_index)

    return ErrorsOnlyClient


def run(notebook: str, workdir: str, outdir: str, cell_timeout: float, level: str,
        identity: int = limits.NOBODY, seed: str = "") -> dict:
    """Execute ``notebook`` in ``workdir`` (its kernel as ``identity`` under a root grader),
    after copying the contents of folder ``seed`` (if given) there; snapshots and status go to
    ``outdir``."""
    import nbformat
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    if seed:
        shutil.copytree(seed, workdir, symlinks=True, dirs_exist_ok=True)
    sandbox.hand_over(workdir, identity)
    nb = nbformat.read(notebook, as_version=4)
    code_cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    status = {"cells": len(code_cells), "executed": 0, "errors": [], "error_count": 0, "timed_out": None,
              "kernel_died": False, "over_limit": "", "snapshot_failures": 0, "level": level}
    snapshot_path, status_path = os.path.join(outdir, "snapshot.json"), os.path.join(outdir, "status.json")
    write_text(status_path, json.dumps(status))
    km = _kernel_manager(workdir, outdir, level, identity)
    client = _errors_only_client()(nb, km=km, timeout=cell_timeout, allow_errors=True, interrupt_on_timeout=False,
                            kernel_name="python3", resources={"metadata": {"path": workdir}},
                            startup_timeout=STARTUP_TIMEOUT)
    env = sandbox.kernel_env(workdir)
    import psutil
    own = psutil.Process()
    tmp, shm = mounts.scratch(outdir)
    watch = limits.FolderWatch(workdir, on_exceed=sandbox.kill_descendants,
                               pids=lambda: [p.pid for p in own.children(recursive=True)],
                               mounts=[("/tmp", tmp), ("/dev/shm", shm)] if level == "bubblewrap" else [])
    with client.setup_kernel(env=env, cwd=workdir):
        watch.start()
        for number, index in enumerate(code_cells, start=1):
            cell = nb.cells[index]
            try:
                client.execute_cell(cell, index)
            except CellTimeoutError:
                status["timed_out"] = {"cell": number, "seconds": cell_timeout}
                break
            except DeadKernelError:
                status["kernel_died"] = True
                break
            except Exception as error:   # noqa: BLE001 - a message the client could not read
                status["runner_error"] = (str(error) if isinstance(error, MalformedMessage) else
                                          "the kernel sent a message the runner could not read "
                                          f"({type(error).__name__})")
                break
            if watch.poll():  # full now, or killed between the cell's reply and here: no snapshot
                break              # (a dead kernel would keep it waiting EXPORT_TIMEOUT)
            status["executed"] = number
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    status["error_count"] += 1
                    if len(status["errors"]) < MAX_KEPT_ERRORS:
                        status["errors"].append(error_line(number, output))
            cell["outputs"] = []       # what the status needs is kept: no cell's errors pile up
            if not _snapshot(client, snapshot_path):
                status["snapshot_failures"] += 1
            write_text(status_path, json.dumps(status))
    watch.stop()
    status["over_limit"] = watch.reason
    write_text(status_path, json.dumps(status))
    return status


def error_line(number: int, output: dict) -> str:
    """One kept error: its cell, its exception's name (an identifier) and the start of its message,
    short, since the text is the submission's and reaches the CSV."""
    name = str(output.get("ename", ""))
    name = name if name.isidentifier() else "an error"
    return f"cell {number}: {name[:40]}: {str(output.get('evalue', ''))[:MAX_KEPT_ERROR_CHARS]}"


def _snapshot(client, path: str) -> bool:
    """Ask the kernel for its answers and save them; False when it gave no readable answer."""
    from .answers import MAX_SNAPSHOT_CHARS, restore
    chunks, received = [], [0]

    def hook(msg):
        if msg["msg_type"] == "stream" and msg["content"].get("name") == "stdout":
            text = str(msg["content"].get("text", ""))
            received[0] += len(text)
            if received[0] <= 2 * MAX_SNAPSHOT_CHARS:  # more than a snapshot can be is refused
                chunks.append(text)

    from jupyter_core.utils import run_sync
    try:
        reply = run_sync(client.kc.execute_interactive)(EXPORT, silent=False, store_history=False,
                                              timeout=EXPORT_TIMEOUT, output_hook=hook, allow_stdin=False)
        if reply["content"].get("status") != "ok":
            return False
        if received[0] > 2 * MAX_SNAPSHOT_CHARS:
            return False
        text = "".join(chunks)
        restore(text)  # refuse what would not read back
    except Exception:
        return False
    write_text(path, text)
    return True


def main(argv=None) -> int:
    args = list(argv if argv is not None else sys.argv[1:])
    notebook, workdir, outdir, cell_timeout, level = args[:5]
    identity = int(args[5]) if len(args) > 5 else limits.NOBODY
    seed = args[6] if len(args) > 6 else ""
    sandbox.become_subreaper()
    try:
        run(notebook, workdir, outdir, float(cell_timeout), level, identity, seed)
    finally:
        sandbox.kill_descendants()
    return 0


if __name__ == "__main__":
    sys.exit(main())
