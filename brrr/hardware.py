"""What this machine's CPU is: its model name and its cache sizes (Linux /proc and sysfs)."""
from __future__ import annotations

import os
import platform


def cpu_name() -> str:
    """The CPU's model name (from /proc/cpuinfo where there is one)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def cpu_caches() -> dict:
    """CPU data/unified cache sizes by level name ('L1d', 'L2', 'L3'), bytes (Linux sysfs)."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    out = {}
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return out
    for entry in entries:
        try:
            def read(name):
                with open(os.path.join(base, entry, name)) as f:
                    return f.read().strip()
            level, kind, size = read("level"), read("type"), read("size").upper()
        except OSError:
            continue
        if kind == "Instruction":
            continue
        mult = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(size[-1:], 1)
        digits = size.rstrip("KMG")
        if digits.isdigit():
            out[f"L{level}" + ("d" if kind == "Data" else "")] = int(digits) * mult
    return out


# The most last-level cache brrr sizes against. The OS reports a cache per instance, and one
# instance may be a whole socket's (300 MiB on a large Xeon) while this process has two of its
# cores. Flushes write twice this, DRAM-bound arrays take several times it, and the bandwidth sweep
# runs to 16 times it: capped, those stay under about 2 GB of memory on any machine.
CACHE_CAP_BYTES = 64 * 1024 ** 2
UNKNOWN_CACHE_BYTES = 32 * 1024 ** 2   # assumed where the OS reports no cache at all


def reported_cache_bytes() -> int:
    """The largest CPU data cache the OS reports, in bytes (0 where it reports none)."""
    return max(cpu_caches().values(), default=0)


def last_level_cache_bytes() -> int:
    """The last-level cache brrr sizes flushes and sweeps against, in bytes: what the OS reports
    (:func:`reported_cache_bytes`), at most :data:`CACHE_CAP_BYTES`; 32 MiB where it reports none."""
    return min(reported_cache_bytes() or UNKNOWN_CACHE_BYTES, CACHE_CAP_BYTES)


def cache_note() -> str:
    """A sentence for the page where the cache brrr sizes against is not the one the OS reports
    (capped, or unknown); empty where they agree."""
    from .units import format_bytes
    reported, used = reported_cache_bytes(), last_level_cache_bytes()
    if not reported:
        return (f"The OS reports no CPU cache sizes here, so brrr assumes a {format_bytes(used)} "
                "last-level cache when it sizes cache flushes and DRAM-bound arrays.")
    if reported > used:
        return (f"The OS reports a {format_bytes(reported)} last-level cache, which may be shared with "
                f"cores this process does not have; brrr sizes its cache flushes and DRAM-bound arrays "
                f"for at most {format_bytes(used)}, so on this machine part of a 'DRAM' measurement "
                "may still be served from cache.")
    return ""
