"""The CUDA kernels' own source, run on the CPU: compiled as C++ (a few lines stand in for CUDA's
thread indices and vector types) and called once per thread, one thread at a time. Elementwise
kernels need nothing from the GPU but their indices, so this checks the generated indexing
(16-byte vectors, the tail, misaligned views, grids smaller than the array, in place) and the
arithmetic (bit for bit against NumPy: --fmad=false on the GPU, -ffp-contract=off here)."""
import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from brrr import kernel_source as K

SHIM = r"""
#include <math.h>
#define __global__
struct brrr_dim3 { unsigned int x, y, z; };
static brrr_dim3 blockIdx, threadIdx, blockDim, gridDim;
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) double2 { double x, y; };
extern "C" void brrr_set_thread(unsigned int block, unsigned int thread, unsigned int threads, unsigned int blocks)
{
    blockIdx.x = block; threadIdx.x = thread; blockDim.x = threads; gridDim.x = blocks;
}
"""
OPS = tuple(K.OPS)
SIZES = (1, 3, 4, 1037)   # one element, a tail alone, one vector, many vectors and a tail


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    sources = [K.cuda_source(name, dtype) for name in K.KERNELS for dtype in K.DTYPES]
    sources += [K.cuda_source("chain", dtype, op) for op in OPS for dtype in K.DTYPES]
    folder = tmp_path_factory.mktemp("emulated")
    (folder / "kernels.cpp").write_text(SHIM + "\n".join(sources))
    done = subprocess.run([compiler, "-O1", "-shared", "-fPIC", "-ffp-contract=off", "-Wall", "-Werror",
                           "-o", str(folder / "kernels.so"), str(folder / "kernels.cpp")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return ctypes.CDLL(str(folder / "kernels.so"))


def launch(library, symbol, arrays, scalars, reps, out, grid=None, block=64):
    """Run kernel ``symbol`` over a grid of ``block``-thread blocks, one thread at a time."""
    dtype = out.dtype
    scalar = ctypes.c_float if dtype == np.float32 else ctypes.c_double
    args = ([a.ctypes.data_as(ctypes.c_void_p) for a in arrays] + [scalar(s) for s in scalars]
            + ([ctypes.c_longlong(reps)] if reps is not None else [])
            + [out.ctypes.data_as(ctypes.c_void_p), ctypes.c_longlong(out.size)])
    if grid is None:  # what brrr.kernels launches: one thread per vector
        grid = -(-K.cuda_threads(out.size, dtype) // block)
    kernel = getattr(library, symbol)
    for b in range(grid):
        for t in range(block):
            library.brrr_set_thread(b, t, block, grid)
            kernel(*args)


def expected(name, op, x, y, scalars, reps):
    """NumPy's result, the ops in the kernel's order and rounded in the array's dtype."""
    a = x.dtype.type(scalars[0]) if scalars else None
    if name == "copy":
        return x.copy()
    if name == "scale":
        return a * x
    if name == "add":
        return x + y
    if name == "triad":
        return x + a * y
    c, d = (x.dtype.type(s) for s in scalars)
    z = x.copy()
    for _ in range(reps):
        z = {"mul": lambda v: v * c, "add": lambda v: v + c, "fma": lambda v: v * c + d, "cos": np.cos}[op](z)
    return z


def cases():
    for name in K.KERNELS:
        yield name, None
    for op in OPS:
        yield "chain", op


@pytest.mark.parametrize("name, op", list(cases()))
@pytest.mark.parametrize("dtype", K.DTYPES)
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("offset", [0, 1])   # 1: views one element in, not 16-byte aligned
@pytest.mark.parametrize("grid", [None, 2])  # 2 blocks: a grid smaller than the array strides
def test_generated_cuda_matches_numpy(library, name, op, dtype, size, offset, grid):
    rng = np.random.default_rng(size)
    k = K.kernel(name, op or "mul")
    x, y = (rng.standard_normal(size + offset).astype(dtype)[offset:] for _ in range(2))
    out = np.full(size + offset, np.nan, dtype=dtype)[offset:]
    scalars = (1.5, 0.25) if k.repeated else (1.5,) * len(k.scalars)
    reps = 5 if k.repeated else None
    launch(library, f"{k.symbol}_{K._C_TYPES[dtype]}", (x, y)[:len(k.inputs)], scalars, reps, out, grid)
    want = expected(name, op, x, y, scalars, reps)
    if op == "cos":  # libm's cos and NumPy's may differ in the last bit
        np.testing.assert_allclose(out, want, rtol=4 * np.finfo(dtype).eps)
    else:
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", K.DTYPES)
def test_in_place_chain(library, dtype):
    x = np.linspace(-2, 2, 1037, dtype=dtype)
    want = expected("chain", "fma", x, None, (0.5, 0.5), 3)
    launch(library, f"brrr_chain_fma_{K._C_TYPES[dtype]}", (x,), (0.5, 0.5), 3, x)  # out is x
    np.testing.assert_array_equal(x, want)


def test_cuda_threads_cover_vectors_and_tail():
    assert K.cuda_threads(1037, "float32") == 260   # 259 vectors of 4, and 1 thread for the tail
    assert K.cuda_threads(1036, "float32") == 259
    assert K.cuda_threads(1037, "float64") == 519   # vectors of 2
    assert K.cuda_threads(0, "float32") == 0
