"""Whether PyTorch lets float32 matmuls and convolutions use TF32 tensor cores, read and set
through whichever of PyTorch's two switches is in use.

PyTorch 2.9 added ``fp32_precision`` ('tf32', 'ieee', or 'none': inherit) beside the older
``allow_tf32`` flags, and reading an old flag raises once a program has set the new one. These
helpers read the new switch first, set and restore through it where it exists, and fall back
to the old flags on older PyTorch. Matmuls: cuBLAS (off by default); convolutions: cuDNN (on
by default).
"""
from __future__ import annotations

import contextlib

_SETTINGS = {"matmul": ("cuda", "matmul"), "conv": ("cudnn", "conv")}


def _backend(torch, kind: str):
    if kind not in _SETTINGS:
        raise ValueError(f"kind must be one of {tuple(_SETTINGS)}, got {kind!r}")
    library, _ = _SETTINGS[kind]
    return getattr(torch.backends, library)


def _switch(torch, kind: str):
    """The object holding the new ``fp32_precision`` for ``kind``, or None on an older PyTorch."""
    backend = _backend(torch, kind)
    holder = getattr(backend, _SETTINGS[kind][1], None)
    return holder if holder is not None and hasattr(holder, "fp32_precision") else None


def enabled(torch, kind: str = "matmul") -> bool:
    """True where float32 ``kind`` ('matmul' or 'conv') operations may use TF32."""
    switch = _switch(torch, kind)
    if switch is not None:
        for value in (switch.fp32_precision, getattr(torch.backends, "fp32_precision", "none")):
            if value in ("tf32", "ieee"):
                return value == "tf32"
    legacy = torch.backends.cuda.matmul if kind == "matmul" else torch.backends.cudnn
    try:
        return bool(legacy.allow_tf32)
    except RuntimeError:  # the two APIs mixed: PyTorch refuses to say; the new switch said nothing
        return False


@contextlib.contextmanager
def setting(torch, kind: str, on: bool):
    """Inside the block, float32 ``kind`` operations may (``on``) or may not use TF32; restored after."""
    switch = _switch(torch, kind)
    if switch is not None:
        before = switch.fp32_precision
        switch.fp32_precision = "tf32" if on else "ieee"
        try:
            yield
        finally:
            switch.fp32_precision = before
        return
    legacy = torch.backends.cuda.matmul if kind == "matmul" else torch.backends.cudnn
    before = legacy.allow_tf32
    legacy.allow_tf32 = on
    try:
        yield
    finally:
        legacy.allow_tf32 = before
