"""(e) on a CUDA GPU: what torch.compile's modes cost and buy on chapter 8's model.

Chapter 8 compiles its model once, in the default mode, inside a budget of 100 s for the whole chapter on an
H200. This figure measures what the other modes would add: GPT-2 small (``brrr.gpt.GPT2_SMALL``, vocabulary
padded to 50,304) with its weights in the chapter's 16-bit type and SDPA, at the chapter's large batch (its
compile step runs at the ridge batch where step 8 kept one). For each mode, the seconds of the first call
(compiling and, in the autotuning modes, timing candidate kernels) with Inductor's and Triton's caches off,
so that no mode reuses another's work, and the median wall-clock time per forward pass
(``brrr.experiments.wallclock.wall_time_per_call``) as a ratio to the default mode's, in the same run. A mode
that fails is reported with its error and skipped.

    python benchmarks/compile_modes.py [--quick]     # --quick: the default mode only

Runs only where torch has a CUDA GPU (run_all.py calls it; elsewhere it returns no figures).
:func:`measure` runs on any device, for the tests.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from unittest import mock

from common import figure, show

MODES = ("default", "max-autotune-no-cudagraphs", "reduce-overhead", "max-autotune")


def measure(cfg, batch: int, seq: int, device: str, dtype: str = "bfloat16", modes=MODES,
            budget: float = 0.5) -> dict:
    """{mode: (compile seconds, median seconds per forward pass), or why the mode failed} of ``cfg`` on
    ``batch`` × ``seq`` tokens, weights in ``dtype``, with SDPA, each mode compiled afresh with no cache."""
    import torch
    from brrr.arrays import torch_dtype
    from brrr.experiments.capstone import error_words
    from brrr.experiments.wallclock import wall_time_per_call
    from brrr.gpt import GPT, tokens
    model = GPT(cfg).eval().to(device, dtype=torch_dtype(dtype))
    model.use_sdpa(True)
    idx = tokens(cfg, batch, seq, device=device)
    backend = "cuda" if device.startswith("cuda") else "cpu"

    def sync():
        if backend == "cuda":
            torch.cuda.synchronize()
    out = {}
    for mode in modes:
        torch._dynamo.reset()
        try:
            with tempfile.TemporaryDirectory() as triton_cache, \
                    mock.patch.dict(os.environ, {"TRITON_CACHE_DIR": triton_cache}), \
                    torch._inductor.config.patch(force_disable_caches=True):
                fast = torch.compile(model, mode=mode)
                start = time.perf_counter()
                with torch.no_grad():
                    fast(idx)
                sync()
                compile_seconds = time.perf_counter() - start

            def call(fast=fast):
                with torch.no_grad():
                    fast(idx)
            for _ in range(3):      # the CUDA-graph modes record their graph on the first calls after compiling
                call()
            sync()
            out[mode] = (compile_seconds, wall_time_per_call(call, backend, budget=budget)["seconds"])
        except Exception as exc:  # noqa: BLE001 - a mode this machine cannot compile or fit: say so, go on
            out[mode] = error_words(exc)
        torch._dynamo.reset()
        if backend == "cuda":
            torch.cuda.empty_cache()
    return out


def run(quick: bool = False) -> list:
    try:
        import torch
    except ImportError:
        return []
    if not torch.cuda.is_available():
        return []
    from brrr.experiments.capstone import autocast_dtype
    from brrr.gpt import GPT2_SMALL, padded, sizes
    cfg, dtype = padded(GPT2_SMALL), autocast_dtype("cuda")
    batch, seq = sizes(quick, gpu=True)["large"]
    got = measure(cfg, batch, seq, "cuda", dtype, modes=MODES[:1] if quick else MODES, budget=0.2 if quick else 0.5)
    base = got["default"][1] if isinstance(got.get("default"), tuple) else None
    out = []
    for mode, value in got.items():
        what = f"torch.compile mode={mode!r}, GPT-2 small {dtype} {batch}x{seq}"
        if isinstance(value, str):
            out.append(figure("e", f"{what}: failed", float("nan"), unit="s", error=value))
            continue
        compile_seconds, seconds = value
        out.append(figure("e", f"{what}: compile", compile_seconds, unit="s", forward_seconds=seconds))
        if mode != "default" and base:
            out.append(figure("e", f"  default / {mode!r} time per forward pass", base / seconds, unit="x",
                              default_seconds=base, mode_seconds=seconds))
    return out


if __name__ == "__main__":
    show(run("--quick" in sys.argv))
