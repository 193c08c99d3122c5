"""Sizes derived from the CPU's cache stay bounded on any machine, and the page says when a cap applied
(issue 25): a socket-wide 300 MiB L3 on a two-core slice, a 1.1 GiB one, a small 2 MiB one, none."""
import importlib

import pytest

from brrr import book, clocks, cpu_peaks, hardware
from brrr.experiments import _arrays, bandwidth, dtypes

MiB, GiB = 2 ** 20, 2 ** 30
device = importlib.import_module("brrr.device")   # the module (brrr.device is the function)
LIMIT = 2 * 10 ** 9          # bytes of memory any one measurement may hold


@pytest.fixture(params=[{"L1d": 48 * 2 ** 10, "L2": 2 * MiB, "L3": 300 * MiB},
                        {"L1d": 32 * 2 ** 10, "L2": MiB, "L3": 1152 * MiB},
                        {"L1d": 32 * 2 ** 10, "L2": 512 * 2 ** 10, "L3": 2 * MiB},
                        {}], ids=["300MiB", "1.1GiB", "2MiB", "none"])
def caches(request, monkeypatch):
    monkeypatch.setattr(hardware, "cpu_caches", lambda: dict(request.param))
    monkeypatch.delenv("BRRR_QUICK", raising=False)
    return request.param


def test_sizes_derived_from_the_cache_are_capped_and_still_reach_dram(caches):
    used = hardware.last_level_cache_bytes()
    reported = max(caches.values(), default=0)
    assert used <= hardware.CACHE_CAP_BYTES and (used == reported or not reported or reported > used)
    dev = device._cpu_device()
    assert dev.l2_bytes == used
    sets = bandwidth.default_working_sets(dev, quick=False)
    assert sets[-1] <= LIMIT and sets[-1] >= 4 * used            # past the cache brrr sizes for
    if reported and reported <= hardware.CACHE_CAP_BYTES:
        assert sets[-1] >= 4 * reported                          # a small cache: the sweep reaches DRAM
    assert 2 * cpu_peaks.roof_copy_bytes() <= LIMIT and cpu_peaks.roof_copy_bytes() >= 4 * used
    elements = _arrays.default_elements(dev, "float32", quick=False)
    assert 3 * 4 * elements <= LIMIT and 4 * elements >= 4 * used
    assert 2 * 4 * dtypes.sizes(dev, quick=False)["elements"] <= LIMIT


def test_the_flush_writes_a_bounded_buffer(caches):
    clock = clocks.CpuClock(hardware.last_level_cache_bytes())
    clock.flush()
    assert clock._buffer.nbytes <= 2 * hardware.CACHE_CAP_BYTES


def test_the_page_says_when_the_cache_was_capped_or_unknown(caches, monkeypatch):
    note = hardware.cache_note()
    reported = max(caches.values(), default=0)
    if reported > hardware.CACHE_CAP_BYTES:
        assert "300 MiB" in note or "1.12 GiB" in note or "1.1 GiB" in note, note
        assert "at most 64 MiB" in note
    elif not reported:
        assert "no CPU cache sizes" in note
    else:
        assert note == ""
    dev = device._cpu_device()
    text = str(book.intro(chapter=2, dev=dev))
    assert (note in text) if note else "last-level cache" not in text
