"""brrr.cache: atomic JSON writes that never follow a symlink, reads that name what is wrong,
and the lock that makes concurrent runs take turns."""
import errno
import fcntl
import json
import os
import threading
import time

import pytest

from brrr import cache, config


def test_write_replaces_a_symlink_and_leaves_its_target_untouched(tmp_path):
    target = tmp_path / "elsewhere" / "precious.txt"
    target.parent.mkdir()
    target.write_text("precious data\n")
    link = tmp_path / "cache" / "data.json"
    link.parent.mkdir()
    link.symlink_to(target)
    with pytest.raises(ValueError, match="symbolic link") as info:
        cache.read_json(str(link))      # a link is never read through...
    assert str(link) in str(info.value)
    cache.write_json(str(link), {"new": [1, 2]})
    assert target.read_text() == "precious data\n"    # ...nor written through
    assert not link.is_symlink() and json.loads(link.read_text()) == {"new": [1, 2]}


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "data.json"
    cache.write_json(str(path), {"old": True})
    before = path.read_bytes()

    def disk_full(fd):   # the temporary file holds the new text, which cannot reach the disk
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space"):
        cache.write_json(str(path), {"new": True})
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["data.json"]


def test_write_refuses_nan_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "data.json"
    cache.write_json(str(path), {"x": 1.5})
    with pytest.raises(ValueError):
        cache.write_json(str(path), {"x": float("nan")})
    assert json.loads(path.read_text()) == {"x": 1.5} and os.listdir(tmp_path) == ["data.json"]


def test_read_names_the_file_and_the_problem(tmp_path):
    assert cache.read_json(str(tmp_path / "absent.json")) is None
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON") as info:
        cache.read_json(str(bad))
    assert str(bad) in str(info.value)
    folder = tmp_path / "a-folder.json"
    folder.mkdir()
    fifo = tmp_path / "a-fifo.json"
    os.mkfifo(fifo)
    for odd in (folder, fifo):      # and a FIFO does not hang the run
        with pytest.raises(ValueError, match="not a regular file"):
            cache.read_json(str(odd))


def hold_lock(path):
    """Take the lock as another run would (a separate open file), return its descriptor."""
    fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_lock_waits_for_the_run_holding_it(tmp_path, capsys):
    path = str(tmp_path / "data.json")
    fd = hold_lock(path)
    released = []

    def release_soon():
        time.sleep(0.3)
        released.append(time.monotonic())
        os.close(fd)

    thread = threading.Thread(target=release_soon)
    thread.start()
    with cache.locked(path, timeout=30):
        entered = time.monotonic()
    thread.join()
    assert released and entered >= released[0]
    out, err = capsys.readouterr()
    assert "waiting" in out and err == ""


def test_lock_gives_up_after_its_timeout_with_a_warning(tmp_path, capsys, monkeypatch):
    path = str(tmp_path / "data.json")
    fd = hold_lock(path)
    monkeypatch.setattr(cache, "LOCK_TIMEOUT", 0.2)
    start = time.monotonic()
    try:
        with cache.locked(path):
            ran = True
    finally:
        os.close(fd)
    assert ran and time.monotonic() - start < 10
    err = capsys.readouterr().err
    assert "warning" in err and path + ".lock" in err and "0.2 s" in err


def test_lock_in_a_read_only_place_runs_unlocked(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with cache.locked(str(blocker / "data.json")):   # its folder can't exist: no lock file, no hang
        pass


@pytest.mark.parametrize("timeout", [0, -1, "5", True, float("nan")])
def test_lock_timeout_is_checked(tmp_path, timeout):
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
        with cache.locked(str(tmp_path / "data.json"), timeout=timeout):
            pass


def test_cache_dir_is_absolute_and_ignores_an_empty_setting(monkeypatch, tmp_path):
    monkeypatch.setenv("BRRR_CACHE_DIR", "")
    assert config.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "brrr")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BRRR_CACHE_DIR", "relative")
    assert config.cache_dir() == str(tmp_path / "relative")
