"""What every experiment shares: a progress-bar sweep that survives running out of memory."""
from __future__ import annotations

import gc
from typing import Callable, Iterable

from ..device import provenance
from ..results import Result


def is_out_of_memory(error: BaseException) -> bool:
    """True for NumPy/CuPy/PyTorch out-of-memory errors (CPU or GPU)."""
    if isinstance(error, MemoryError) or type(error).__name__ == "OutOfMemoryError":
        return True
    return "out of memory" in str(error).lower()


def free_memory():
    """Return cached device memory to the allocator after a failed or large step."""
    gc.collect()
    try:
        import cupy
        cupy.get_default_memory_pool().free_all_blocks()
    except Exception:
        pass
    try:
        import torch
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except Exception:
        pass


def run_sweep(name: str, points: Iterable, measure: Callable, command: str = "",
              progress: bool = True, **meta) -> Result:
    """Call ``measure(point)`` for each point; collect the dict(s) it returns.

    ``measure`` returns one record (a dict) or a list of them. A progress bar
    shows how far the sweep is. If a point runs out of memory, the sweep stops
    there, keeps every record so far, and says so in ``meta['notes']``.
    """
    from ..progress import progress as progress_bar
    points = list(points)
    result = Result(name=name, meta=provenance(command, **meta))
    result.meta.setdefault("notes", [])
    bar = progress_bar(points, desc=name, enabled=progress)
    for point in bar:
        try:
            out = measure(point)
        except Exception as error:  # noqa: BLE001 - only out-of-memory is swallowed
            if not is_out_of_memory(error):
                raise
            free_memory()
            note = (f"out of memory at {point!r}: stopped there and kept the "
                    f"{len(result.records)} records measured so far")
            result.meta["notes"].append(note)
            print(f"brrr: {note}.")
            break
        result.records.extend(out if isinstance(out, list) else [out])
    bar.close()
    return result
