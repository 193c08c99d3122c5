"""brrr.cpu_peaks: where the C library switches a copy to streaming stores, read from ld.so."""
import subprocess

import pytest

from brrr import cpu_peaks

TUNABLES = """glibc.cpu.x86_data_cache_size: 0x8000 (min: 0x0, max: 0xffffffffffffffff)
glibc.cpu.x86_non_temporal_threshold: 0xc000000 (min: 0x4040, max: 0xfffffffffffffff)
glibc.cpu.x86_rep_movsb_threshold: 0x840 (min: 0x100, max: 0xffffffffffffffff)
"""


@pytest.fixture
def linux_glibc(monkeypatch):
    monkeypatch.setattr(cpu_peaks.platform, "system", lambda: "Linux")
    monkeypatch.setattr(cpu_peaks.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(cpu_peaks.platform, "libc_ver", lambda: ("glibc", "2.36"))
    cpu_peaks.streaming_store_threshold.cache_clear()
    yield monkeypatch
    cpu_peaks.streaming_store_threshold.cache_clear()


def fake_run(stdout="", error=None):
    def run(args, **kwargs):
        assert args[1] == "--list-tunables"
        if error:
            raise error
        return subprocess.CompletedProcess(args, 0, stdout=stdout, stderr="")
    return run


def test_the_threshold_is_read_from_the_tunables(linux_glibc):
    linux_glibc.setattr(cpu_peaks.subprocess, "run", fake_run(TUNABLES))
    assert cpu_peaks.streaming_store_threshold() == 192 * 2 ** 20


@pytest.mark.parametrize("stdout, error", [("", None), ("nothing useful\n", None),
                                           ("", OSError("no such loader")),
                                           ("", subprocess.TimeoutExpired("ld.so", 10))])
def test_no_threshold_where_the_loader_says_nothing(linux_glibc, stdout, error):
    linux_glibc.setattr(cpu_peaks.subprocess, "run", fake_run(stdout, error))
    assert cpu_peaks.streaming_store_threshold() is None


def test_no_threshold_off_x86_glibc(linux_glibc):
    linux_glibc.setattr(cpu_peaks.subprocess, "run", fake_run(TUNABLES))
    linux_glibc.setattr(cpu_peaks.platform, "machine", lambda: "aarch64")
    assert cpu_peaks.streaming_store_threshold() is None
    cpu_peaks.streaming_store_threshold.cache_clear()
    linux_glibc.setattr(cpu_peaks.platform, "machine", lambda: "x86_64")
    linux_glibc.setattr(cpu_peaks.platform, "libc_ver", lambda: ("", ""))      # musl, say
    assert cpu_peaks.streaming_store_threshold() is None


def test_store_facts_name_the_roof_copy(linux_glibc):
    linux_glibc.setattr(cpu_peaks.subprocess, "run", fake_run(TUNABLES))
    linux_glibc.setattr(cpu_peaks, "last_level_cache_bytes", lambda: 32 * 2 ** 20)
    facts = cpu_peaks.store_facts()
    assert facts == {"arch": "x86_64", "streaming_store_threshold": 192 * 2 ** 20, "roof_copy_bytes": 256 * 2 ** 20}
    linux_glibc.setattr(cpu_peaks, "last_level_cache_bytes", lambda: 2 ** 20)   # at least 64 MiB
    assert cpu_peaks.roof_copy_bytes() == 64 * 2 ** 20
