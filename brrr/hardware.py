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


def last_level_cache_bytes() -> int:
    """Size of the largest CPU data cache in bytes (Linux sysfs; 32 MiB if it can't be read)."""
    return max(cpu_caches().values(), default=0) or 32 * 1024 ** 2
