"""The fusers that run a chain of k pointwise ops fused into one kernel, and unfused as k kernels.

============== =========================================== ==============================
fuser          fused                                        unfused
============== =========================================== ==============================
'brrr'         :func:`brrr.kernels.chain` (Numba on the     the same kernels, one op per
               CPU, a CuPy kernel on a GPU)                 pass (``fused=False``)
'cupy_fuse'    ``cupy.fuse`` (GPU with CuPy only)           one CuPy ufunc call per op
'torch_compile' ``torch.compile`` (Inductor: C++ on the     PyTorch eager, one op per
               CPU, Triton on a GPU)                        kernel, outputs preallocated
============== =========================================== ==============================

:func:`make_fuser` builds one on the live device's arrays (``n`` elements); its
``call(k, fused)`` returns the no-argument callable to time. The unfused passes write into
preallocated outputs, so no time goes to the allocator.
"""
from __future__ import annotations

import time

from ..arrays import alternate
from ..device import device as live_device
from .fusion_model import OPS

FUSERS = ("brrr", "cupy_fuse", "torch_compile")


def _torch_op(torch, op, c, d):
    if op == "mul":
        return lambda t: t * c
    if op == "add":
        return lambda t: t + c
    if op == "fma":
        return lambda t: t * c + d
    return torch.cos


def _torch_unfused_op(torch, op, c, d):
    """``fn(src, dst)``: one op as one eager kernel writing into ``dst`` (fma: two kernels, as eager runs it)."""
    if op == "mul":
        return lambda src, dst: torch.mul(src, c, out=dst)
    if op == "add":
        return lambda src, dst: torch.add(src, c, out=dst)
    if op == "cos":
        return lambda src, dst: torch.cos(src, out=dst)
    return lambda src, dst: torch.add(torch.mul(src, c, out=dst), d, out=dst)


class _Brrr:
    """brrr.kernels.chain: Numba on the CPU, a CuPy kernel on a GPU."""
    library = "brrr.kernels"

    def __init__(self, dev, n, dtype, op):
        from .. import kernels
        lib = dev.library
        if lib not in ("numpy", "cupy"):
            raise RuntimeError("brrr.kernels needs NumPy (CPU) or CuPy (GPU) arrays; "
                               "this GPU is driven by PyTorch only")
        self.library = "brrr.kernels (Numba)" if lib == "numpy" else "brrr.kernels (CuPy)"
        self.kernels, self.op = kernels, op
        self.x = dev.full(n, 0.5, dtype, lib)
        self.out = dev.full(n, 0.0, dtype, lib)
        self.scratch = dev.full(n, 0.0, dtype, lib)

    def call(self, k, fused):
        ks, x, out, scratch, op = self.kernels, self.x, self.out, self.scratch, self.op
        return lambda: ks.chain(x, k, op=op, fused=fused, out=out, scratch=scratch)


class _CupyFuse:
    """cupy.fuse (one generated kernel) against one CuPy ufunc call per op."""
    library = "cupy.fuse"

    def __init__(self, dev, n, dtype, op):
        if dev.library != "cupy":
            raise RuntimeError("cupy.fuse needs a CUDA GPU with CuPy installed")
        import cupy
        self.cp, self.op = cupy, op
        self.c, self.d = (cupy.dtype(dtype).type(v) for v in OPS[op][2:])
        self.x = dev.full(n, 0.5, dtype, "cupy")
        self.out = cupy.empty_like(self.x)
        self.scratch = cupy.empty_like(self.x)

    def call(self, k, fused):
        cp, op, c, d = self.cp, self.op, self.c, self.d
        if fused:
            def chain(t):
                for _ in range(k):
                    t = t * c if op == "mul" else t + c if op == "add" else t * c + d if op == "fma" else cp.cos(t)
                return t
            fn, x = cp.fuse(chain), self.x
            fn(x)  # cupy.fuse compiles on the first call: here, where a failure is noted and skipped
            return lambda: fn(x)
        ufunc = {"mul": lambda s, o: cp.multiply(s, c, out=o), "add": lambda s, o: cp.add(s, c, out=o),
                 "cos": lambda s, o: cp.cos(s, out=o),
                 "fma": lambda s, o: cp.add(cp.multiply(s, c, out=o), d, out=o)}[op]
        x, out, scratch = self.x, self.out, self.scratch
        return lambda: alternate(ufunc, x, out, scratch, k)


class _TorchCompile:
    """torch.compile (Inductor) against eager PyTorch with preallocated outputs."""
    library = "torch.compile"

    def __init__(self, dev, n, dtype, op):
        import torch
        self.torch, self.op = torch, op
        self.c, self.d = OPS[op][2:]
        self.x = dev.full(n, 0.5, dtype, "torch")
        self.out = torch.empty_like(self.x)
        self.scratch = torch.empty_like(self.x)
        self.compile_seconds = {}

    def call(self, k, fused):
        torch, x, out = self.torch, self.x, self.out
        if not fused:
            one, scratch = _torch_unfused_op(torch, self.op, self.c, self.d), self.scratch
            return lambda: alternate(one, x, out, scratch, k)
        op = _torch_op(torch, self.op, self.c, self.d)

        def chain(t, result):
            for _ in range(k):
                t = op(t)
            result.copy_(t)  # Inductor writes the fused kernel's output straight into `result`
            return result
        torch._dynamo.reset()  # a fresh graph for this k, compiled now so bench's warm-up doesn't count it
        compiled = torch.compile(chain)
        start = time.perf_counter()
        compiled(x, out)
        self.compile_seconds[k] = time.perf_counter() - start
        return lambda: compiled(x, out)


_CLASSES = {"brrr": _Brrr, "cupy_fuse": _CupyFuse, "torch_compile": _TorchCompile}


def check_fusers(fusers) -> tuple:
    """``fusers`` (one name or several, from :data:`FUSERS`) as a non-empty tuple, else a ValueError."""
    if isinstance(fusers, str):
        fusers = (fusers,)
    fusers = tuple(fusers)
    bad = [f for f in fusers if f not in FUSERS]
    if bad or not fusers:
        raise ValueError(f"backends must be a non-empty subset of {FUSERS}, got {fusers!r}")
    return fusers


def make_fuser(name: str, dev, n: int, dtype: str, op: str):
    """The fuser ``name`` with its arrays of ``n`` elements on ``dev``; raises where it cannot run here."""
    return _CLASSES[name](dev, n, dtype, op)


def own_fuser(dev=None) -> str:
    """The fuser that runs ``brrr``'s own kernels here: 'brrr' where arrays are NumPy (CPU) or
    CuPy (GPU); 'torch_compile' on a GPU driven by PyTorch only."""
    dev = dev or live_device()
    return "brrr" if dev.library in ("numpy", "cupy") else "torch_compile"
