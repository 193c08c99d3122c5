"""(e) on a CUDA GPU: what torch.compile's modes cost and buy on chapter 8's model.

Chapter 8 compiles its model once, in the default mode, inside a budget of 100 s for the whole chapter on an
H200. This figure measures what the other modes would add: GPT-2 small (``brrr.gpt.GPT2_SMALL``, vocabulary
padded to 50,304) in bfloat16 with SDPA at the chapter's large batch, as its compile step runs it. For each
mode, the seconds of the first call (compiling and, in the autotuning modes, timing candidate kernels), and
the median wall-clock time per forward pass (``brrr.experiments.wallclock.wall_time_per_call``) as a ratio to
the default mode's, measured in the same run.

    python benchmarks/compile_modes.py [--quick]

Runs only where torch has a CUDA GPU (run_all.py calls it; elsewhere it returns no figures).
:func:`measure` runs on any device, for the tests.
"""
from __future__ import annotations

import sys
import time

from common import figure, show

MODES = ("default", "max-autotune-no-cudagraphs", "reduce-overhead", "max-autotune")


def measure(cfg, batch: int, seq: int, device: str, dtype: str = "bfloat16", modes=MODES,
            budget: float = 0.5) -> dict:
    """{mode: (compile seconds, median seconds per forward pass)} of ``cfg`` on ``batch`` × ``seq`` tokens,
    weights in ``dtype``, with SDPA, each mode compiled afresh (``torch._dynamo.reset()``)."""
    import torch
    from brrr.arrays import torch_dtype
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
    torch._dynamo.reset()
    return out


def run(quick: bool = False) -> list:
    try:
        import torch
    except ImportError:
        return []
    if not torch.cuda.is_available():
        return []
    from brrr.gpt import GPT2_SMALL, padded, sizes
    cfg = padded(GPT2_SMALL)
    batch, seq = sizes(quick, gpu=True)["large"]
    modes = MODES[:2] if quick else MODES
    got = measure(cfg, batch, seq, "cuda", modes=modes, budget=0.2 if quick else 0.5)
    base = got["default"][1]
    out = []
    for mode, (compile_seconds, seconds) in got.items():
        out.append(figure("e", f"torch.compile mode={mode!r}: compile, GPT-2 small bf16 {batch}x{seq}",
                          compile_seconds, unit="s", forward_seconds=seconds))
        if mode != "default":
            out.append(figure("e", f"  default / {mode!r} time per forward pass", base / seconds, unit="x",
                              default_seconds=base, mode_seconds=seconds))
    return out


if __name__ == "__main__":
    show(run("--quick" in sys.argv))
