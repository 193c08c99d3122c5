"""The 'ffma' chain: an explicit fused multiply-add per link (one FFMA on a GPU), unlike the 'fma'
chain, which is built uncontracted (a multiply, then an add) so that it rounds as NumPy does."""
import shutil
import subprocess

import numpy as np
import pytest

from brrr import kernel_source as K
from brrr import kernels
from test_kernels_emulated import SHIM, launch


def test_ffma_asks_for_the_instruction_and_fma_does_not():
    assert "fmaf(x, c, d)" in K.cuda_source("chain", "float32", "ffma")
    assert "fma(x, c, d)" in K.cuda_source("chain", "float64", "ffma")
    assert "fma" not in K.cuda_source("chain", "float32", "fma").replace("brrr_chain_fma", "")
    assert K.traffic("chain", 10, 3, op="ffma", dtype="float32") == K.traffic("chain", 10, 3, op="fma", dtype="float32")


@pytest.mark.parametrize("dtype", K.DTYPES)
def test_ffma_chain_on_the_cpu_matches_numpy_with_its_default_constants(dtype):
    x = np.linspace(-3, 3, 1037, dtype=dtype)
    want = x.copy()
    for _ in range(7):
        want = want * dtype_type(dtype)(0.5) + dtype_type(dtype)(0.5)
    np.testing.assert_array_equal(kernels.chain(x, 7, op="ffma"), want)
    np.testing.assert_array_equal(kernels.chain(x, 7, op="ffma", fused=False), want)


def dtype_type(dtype):
    return np.dtype(dtype).type


def test_ffma_cuda_source_runs_emulated(tmp_path):
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    (tmp_path / "k.cpp").write_text(SHIM + "\n".join(K.cuda_source("chain", d, "ffma") for d in K.DTYPES))
    done = subprocess.run([compiler, "-O1", "-shared", "-fPIC", "-Wall", "-Werror", "-o", str(tmp_path / "k.so"),
                           str(tmp_path / "k.cpp")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    import ctypes
    library = ctypes.CDLL(str(tmp_path / "k.so"))
    for dtype in K.DTYPES:
        x = np.random.default_rng(0).standard_normal(1037).astype(dtype)
        out = np.full_like(x, np.nan)
        launch(library, f"brrr_chain_ffma_{K._C_TYPES[dtype]}", (x,), (0.5, 0.5), 5, out)
        want = x.copy()
        for _ in range(5):
            want = want * dtype_type(dtype)(0.5) + dtype_type(dtype)(0.5)   # exact product: one rounding either way
        np.testing.assert_array_equal(out, want)


def test_unknown_op_still_refused():
    with pytest.raises(ValueError, match="op must be one of"):
        kernels.chain(np.ones(4, np.float32), 2, op="fmaa")
