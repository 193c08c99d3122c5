"""Replay: a build with BRRR_REPLAY=<set> shows that recorded run and measures nothing here."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import brrr
import importlib

from brrr import book, config, reference

device_module = importlib.import_module("brrr.device")

ROOT = Path(__file__).resolve().parents[1]
GPU_SET = reference.newest_gpu_set()


@pytest.fixture
def replaying(monkeypatch):
    """This process in a replayed build of the newest GPU set."""
    if not GPU_SET:
        pytest.skip("no GPU record set ships")
    monkeypatch.setenv(config.REPLAY_ENV, GPU_SET)
    config.reread()
    device_module._detect.cache_clear()
    yield reference.record_sets()[GPU_SET]
    monkeypatch.delenv(config.REPLAY_ENV)
    config.reread()
    device_module._detect.cache_clear()


def test_the_newest_gpu_set_is_the_latest_dated_gpu_run():
    sets = reference.record_sets()
    gpu = {name: max(r.meta["date"] for r in runs.values()) for name, runs in sets.items()
           if next(iter(runs.values())).meta["device"]["backend"] == "cuda"}
    assert GPU_SET == max(gpu, key=gpu.get)


def test_a_folder_of_records_replays_like_a_shipped_set_and_a_cpu_set_replays_its_peaks(monkeypatch, tmp_path):
    import shutil
    cpu = reference.REFERENCE_DIR / "amd-epyc-2-threads"
    shutil.copy(cpu / "bandwidth_vs_size.json", tmp_path / "bandwidth_vs_size.json")
    monkeypatch.setenv(config.REPLAY_ENV, str(tmp_path))
    config.reread()
    device_module._detect.cache_clear()
    try:
        recorded = reference.record_sets()["amd-epyc-2-threads"]["bandwidth_vs_size"].meta["device"]
        dev = brrr.device()
        assert dev.replayed and not dev.on_gpu and dev.name == recorded["name"]
        assert dev.peak_bandwidth == recorded["peak_bandwidth"] and dev.source == recorded["source"]
        assert reference.measure("bandwidth_vs_size", lambda: 1 / 0).records
        assert reference.is_replayed(tmp_path) and not reference.is_replayed("amd-epyc-2-threads")
    finally:
        monkeypatch.delenv(config.REPLAY_ENV)
        config.reread()
        device_module._detect.cache_clear()


def test_replay_returns_records_and_never_runs_the_measurement(replaying):
    def boom():
        raise AssertionError("a replayed build ran a measurement")
    run = reference.measure("bandwidth_vs_size", boom)
    assert run.records == replaying["bandwidth_vs_size"].records
    assert not run.is_reference and replaying["bandwidth_vs_size"].is_reference   # the page's own run
    from brrr.plot import device_title
    assert device_title("Bandwidth", run) == f"Bandwidth: {run.meta['device']['name']}"
    profile = reference.measure("profile_block", boom)     # a profiler table comes back as a DataFrame
    assert list(profile.columns) and profile.attrs == replaying["profile_block"].meta["attrs"]


def test_a_missing_record_says_so_and_returns_none(replaying, monkeypatch):
    import IPython.display
    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    assert reference.measure("no_such_experiment", lambda: 1 / 0) is None
    [note] = [obj.data for obj in shown]
    device = next(iter(replaying.values())).meta["device"]["name"]
    assert f"the {device} run replayed on this page has no record of `no_such_experiment`" in note


def test_replay_refuses_to_measure_this_machine(replaying):
    with pytest.raises(RuntimeError, match="replayed build"):
        brrr.bench(lambda: None)
    from brrr.experiments.wallclock import wall_time_per_call
    with pytest.raises(RuntimeError, match="replayed build"):
        wall_time_per_call(lambda: None)


def test_the_replayed_device_is_the_recorded_one(replaying):
    dev = brrr.device()
    recorded = next(iter(replaying.values())).meta["device"]
    assert dev.replayed and dev.name == recorded["name"] and dev.on_gpu
    assert dev.peak_bandwidth == recorded["peak_bandwidth"]
    assert dev.peak_flops("float32") == recorded["peak_flops_float32"]
    assert dev.xp.__name__ == "numpy" and dev.torch_device == "cpu"   # arrays made here are never timed


def test_a_replayed_page_opens_with_the_run_it_shows_and_draws_other_devices_beside(replaying):
    text = str(book.intro(chapter=2))
    date = max(r.meta["date"][:10] for r in replaying.values())
    dev = next(iter(replaying.values())).meta["device"]["name"]
    assert text.startswith(f"**Measured on an {dev} on {date} and replayed from that run**")
    assert "Colab" in text and "this machine" not in text
    assert all(r.meta["device"]["name"] != dev for r in reference.beside(None, "bandwidth_vs_size"))


def test_a_bad_replay_set_is_refused(monkeypatch, tmp_path):
    for bad in (".", ".."):
        monkeypatch.setenv(config.REPLAY_ENV, bad)
        config.reread()
        with pytest.raises(ValueError, match="BRRR_REPLAY"):
            config.replay_set()
    for bad in ("../etc", str(tmp_path)):      # a path, but no folder of records
        monkeypatch.setenv(config.REPLAY_ENV, bad)
        config.reread()
        assert config.replay_set() == os.path.abspath(bad)
        with pytest.raises(ValueError, match="is no folder of brrr records"):
            reference.replay_runs()
    monkeypatch.setenv(config.REPLAY_ENV, "no-such-set")
    config.reread()
    with pytest.raises(ValueError, match="names no record set"):
        reference.replay_runs()
    monkeypatch.delenv(config.REPLAY_ENV)
    config.reread()


def test_every_chapter_measurement_goes_through_measure():
    """No chapter calls the timer or the profiler at the top level of a cell (they, or functions
    that call them, are handed to brrr.reference.measure, which replays them); the replayed build
    also refuses any other timing at run time."""
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        top_level = [line for line in code.splitlines() if line and not line[0].isspace()]
        for call in ("brrr.bench(", "brrr.profile(", "profiler.trace(", "wall_time_per_call("):
            assert not [line for line in top_level if call in line], \
                f"{path.name} calls {call} outside brrr.reference.measure (a function that does is passed to it)"
        names = reference.recorded_names(path)
        assert names and len(names) == len(set(names)), f"{path.name} measures one name twice"


def test_the_readme_states_the_published_runs_coverage():
    """The README says how much of the book the published run holds, and it is true of the newest GPU set."""
    from brrr import registry
    newest = reference.record_sets()[reference.newest_gpu_set()]
    declared = registry.registry()
    held = sum(1 for name in declared if name in newest)
    text = " ".join((ROOT / "README.md").read_text().split())
    assert f"it holds {held} of the {len(declared)} measurements the chapters make today" in text or \
        (held == len(declared) and "every page is the H200's measurements replayed" in text)


def test_the_coverage_script_lists_what_a_set_lacks():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "replay_coverage.py"), GPU_SET or "amd-epyc-2-threads"],
                         capture_output=True, text=True, check=True).stdout
    assert "measurements recorded" in out
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        assert path.stem in out


REPLAY_HTML = ROOT / "_build" / "replay" / "_build" / "html"


def _fallbacks(notebook) -> set:
    """Names measured only where an earlier experiment has no timing (``if t is None: t = measure(...)``)."""
    code = "\n".join("".join(c["source"]) for c in json.loads(Path(notebook).read_text())["cells"])
    return set(re.findall(r"""if \w+ is None:[^\n]*\n\s*\w+ = brrr\.reference\.measure\(\s*["']([\w.-]+)""", code))


@pytest.mark.skipif(not (ROOT / "_build" / "replay.log").exists(), reason="the replayed book is not built (make book-replay)")
def test_the_replayed_book_built_and_each_chapter_shows_the_recorded_gpu():
    log = (ROOT / "_build" / "replay.log").read_text()
    assert "exit status: 0" in log, "make book-replay failed: see _build/replay.log"
    set_name = log.split("record set ", 1)[1].split(":", 1)[0]
    runs = reference.record_sets()[set_name]
    gpu = next(iter(runs.values())).meta["device"]["name"]
    from brrr.hardware import cpu_name
    pages = sorted((REPLAY_HTML / "chapters").glob("0*.html"))
    assert len(pages) == len(list((ROOT / "chapters").glob("0*.ipynb")))
    for page in pages:
        text = page.read_text()
        assert f"Measured on an {gpu} on" in text and "replayed from that run" in text, page.name
        assert cpu_name() not in text, f"{page.name} shows the build machine ({cpu_name()})"
        notebook = ROOT / "chapters" / f"{page.stem}.ipynb"
        for name in set(reference.recorded_names(notebook)) - _fallbacks(notebook):
            if name not in runs:    # a measurement the set lacks says so on the page
                assert re.search(rf"has no record of (<[^>]*>)*{name}<", text), (page.name, name)
