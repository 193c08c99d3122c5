"""brrr.kernels: results against NumPy, fused == unfused, out= reuse, bad input,
bytes/FLOPs, and the CUDA sources compiled with nvcc (so GPU code is checked without a GPU)."""
import os
import re
import shutil
import subprocess
import tracemalloc

import numpy as np
import pytest

from brrr import kernel_source
from brrr import kernels as K

SIZES = (1, 7, 1_000_003)
DTYPES = (np.float32, np.float64)


def numpy_reference(name, x, y, a):
    a = x.dtype.type(a)
    return {"copy": lambda: x.copy(), "scale": lambda: a * x, "add": lambda: x + y,
            "triad": lambda: x + a * y}[name]()


def call(name, x, y, a, out=None):
    if name == "copy":
        return K.copy(x, out=out)
    if name == "scale":
        return K.scale(x, a, out=out)
    if name == "add":
        return K.add(x, y, out=out)
    return K.triad(x, y, a, out=out)


def chain_reference(x, n, op, c, d):
    c, d = x.dtype.type(c), x.dtype.type(d)
    v = x.copy()
    for _ in range(n):
        v = {"mul": lambda: v * c, "add": lambda: v + c, "fma": lambda: v * c + d,
             "cos": lambda: np.cos(v)}[op]()
    return v


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(0)


# --- correctness on the CPU (Numba) ----------------------------------------------

@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["copy", "scale", "add", "triad"])
def test_stream_kernels_match_numpy_exactly(name, dtype, size, rng):
    x = rng.standard_normal(size).astype(dtype)
    y = rng.standard_normal(size).astype(dtype)
    got = call(name, x, y, 3.25)
    assert got.dtype == dtype and got.shape == x.shape
    # The same IEEE operations in the same order: bit-identical to NumPy.
    np.testing.assert_array_equal(got, numpy_reference(name, x, y, 3.25))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(K.OPS))
@pytest.mark.parametrize("n", [1, 3])
def test_chain_matches_numpy(op, n, dtype, rng):
    x = rng.uniform(-2, 2, 1001).astype(dtype)
    _, _, c, d = K.OPS[op]
    want = chain_reference(x, n, op, c, d)
    got = K.chain(x, n, op=op)
    if op == "cos":  # libm's cos and NumPy's may differ in the last bit
        np.testing.assert_allclose(got, want, rtol=8 * np.finfo(dtype).eps, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


def test_chain_custom_constants(rng):
    x = rng.standard_normal(100).astype(np.float32)
    np.testing.assert_array_equal(K.chain(x, 2, op="fma", c=3.0, d=-1.0),
                                  chain_reference(x, 2, "fma", 3.0, -1.0))


@pytest.mark.parametrize("op", ["mul", "fma", "add"])
@pytest.mark.parametrize("n", [1, 512, 4096])
def test_long_chains_match_numpy(n, op, rng):
    """Any chain length works (a loop in the kernel, not an unrolled body): n = 512 once
    overflowed Numba's compiler. Sizes straddle the CPU kernel's block of elements."""
    c, d = {"mul": (1.0001, 0.0), "fma": (0.5, 0.5), "add": (1e-4, 0.0)}[op]  # finite over 4096 ops
    for size in (1, kernel_source.NUMBA_BLOCK - 1, kernel_source.NUMBA_BLOCK + 1, 3 * kernel_source.NUMBA_BLOCK + 17):
        x = rng.uniform(0.5, 1.5, size).astype(np.float32)
        np.testing.assert_array_equal(K.chain(x, n, op=op, c=c, d=d), chain_reference(x, n, op, c, d))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(K.OPS))
@pytest.mark.parametrize("n", [1, 2, 5, 8, 9, 17, 512])
def test_fused_equals_unfused(op, n, dtype, rng):
    x = rng.uniform(-2, 2, 7919).astype(dtype)
    fused = K.chain(x, n, op=op, fused=True)
    np.testing.assert_array_equal(fused, K.chain(x, n, op=op, fused=False))
    np.testing.assert_array_equal(fused, K.chain(x, n, op=op, fused=False, scratch=np.empty_like(x)))
    out = np.empty_like(x)
    np.testing.assert_array_equal(fused, K.chain(x, n, op=op, fused=False, out=out, scratch=out))


def test_multidimensional_arrays_keep_their_shape(rng):
    x = rng.standard_normal((3, 5, 7)).astype(np.float32)
    y = rng.standard_normal((3, 5, 7)).astype(np.float32)
    got = K.triad(x, y, 0.5)
    assert got.shape == (3, 5, 7)
    np.testing.assert_array_equal(got, x + np.float32(0.5) * y)


def test_empty_array():
    x = np.empty(0, np.float64)
    assert K.copy(x).shape == (0,)
    assert K.chain(x, 3, fused=False).shape == (0,)


# --- outputs -----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["copy", "scale", "add", "triad"])
def test_out_is_reused_and_returned(name, rng):
    x = rng.standard_normal(1_000_003).astype(np.float32)
    y = rng.standard_normal(1_000_003).astype(np.float32)
    x_before = x.copy()
    out = np.empty_like(x)
    call(name, x, y, 2.0, out=out)  # compile outside the traced region
    tracemalloc.start()
    try:
        got = call(name, x, y, 2.0, out=out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got is out
    assert peak < x.nbytes // 10, f"{name} allocated {peak} bytes despite out="
    np.testing.assert_array_equal(out, numpy_reference(name, x, y, 2.0))
    np.testing.assert_array_equal(x, x_before)  # inputs untouched


@pytest.mark.parametrize("fused", [True, False])
def test_chain_reuses_out_and_scratch(fused, rng):
    x = rng.standard_normal(1_000_003).astype(np.float32)
    out, scratch = np.empty_like(x), np.empty_like(x)
    K.chain(x, 4, fused=fused, out=out, scratch=scratch)
    tracemalloc.start()
    try:
        got = K.chain(x, 4, fused=fused, out=out, scratch=scratch)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got is out
    assert peak < x.nbytes // 10          # the caller's buffers, nothing new
    np.testing.assert_array_equal(out, chain_reference(x, 4, "mul", 0.999, 0.0))


def test_unfused_chain_without_scratch_allocates_its_own_and_keeps_nothing(rng):
    x = rng.standard_normal(100_000).astype(np.float32)
    out = np.empty_like(x)
    tracemalloc.start()
    try:
        K.chain(x, 4, fused=False, out=out)
        during, _ = tracemalloc.get_traced_memory()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak >= x.nbytes               # a scratch buffer of its own, for this call
    assert during < x.nbytes // 10        # ...which is gone afterwards: no hidden module state
    assert not hasattr(K, "_SCRATCH") and not hasattr(K, "free_scratch")
    np.testing.assert_array_equal(out, chain_reference(x, 4, "mul", 0.999, 0.0))


def test_out_none_allocates_a_new_array(rng):
    x = rng.standard_normal(10).astype(np.float64)
    got = K.copy(x)
    assert got is not x and not np.shares_memory(got, x)
    np.testing.assert_array_equal(got, x)


def test_in_place(rng):
    x = rng.standard_normal(1000).astype(np.float32)
    want = np.float32(2.0) * x
    assert K.scale(x, 2.0, out=x) is x
    np.testing.assert_array_equal(x, want)
    y = rng.standard_normal(1000).astype(np.float32)
    want = chain_reference(y, 3, "add", 1.0, 0.0)
    K.chain(y, 3, op="add", fused=False, out=y)
    np.testing.assert_array_equal(y, want)


# --- bad input ---------------------------------------------------------------------

def test_bad_inputs():
    x = np.ones(8, np.float32)
    with pytest.raises(TypeError, match="x must be a NumPy array"):
        K.copy([1.0, 2.0])
    with pytest.raises(TypeError, match="y must be a numpy array"):
        K.add(x, [1.0] * 8)
    with pytest.raises(ValueError, match="float32 or float64"):
        K.copy(np.ones(8, np.int32))
    with pytest.raises(ValueError, match="float32 or float64"):
        K.copy(np.ones(8, np.float16))
    with pytest.raises(ValueError, match="shape"):
        K.add(x, np.ones(9, np.float32))
    with pytest.raises(ValueError, match="dtype"):
        K.triad(x, np.ones(8, np.float64))
    with pytest.raises(ValueError, match="out must have shape"):
        K.copy(x, out=np.empty(9, np.float32))
    with pytest.raises(ValueError, match="out must have shape"):
        K.copy(x, out=np.empty(8, np.float64))
    with pytest.raises(TypeError, match="out must be a numpy array"):
        K.copy(x, out=[0.0] * 8)
    with pytest.raises(ValueError, match="C-contiguous"):
        K.copy(np.ones(16, np.float32)[::2])
    with pytest.raises(ValueError, match="C-contiguous"):
        K.copy(x, out=np.empty(16, np.float32)[::2])
    readonly = np.empty(8, np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        K.copy(x, out=readonly)
    with pytest.raises(TypeError, match="a must be a real number"):
        K.scale(x, "2")
    with pytest.raises(TypeError, match="a must be a real number"):
        K.triad(x, x, True)


def test_bad_chain_arguments():
    x = np.ones(8, np.float32)
    with pytest.raises(ValueError, match="n .* >= 1"):
        K.chain(x, 0)
    with pytest.raises(TypeError, match="n .* integer"):
        K.chain(x, 2.0)
    with pytest.raises(TypeError, match="n .* integer"):
        K.chain(x, True)
    with pytest.raises(ValueError, match="op must be one of"):
        K.chain(x, 2, op="sqrt")
    with pytest.raises(TypeError, match="fused"):
        K.chain(x, 2, fused="yes")
    with pytest.raises(ValueError, match="scratch must have shape"):
        K.chain(x, 2, fused=False, scratch=np.empty(9, np.float32))
    with pytest.raises(TypeError, match="c must be a real number"):
        K.chain(x, 2, c="1")


def overlapping_calls():
    """(call, argument named in the error) where out is another view of an input's buffer."""
    b = np.arange(16, dtype=np.float32)
    y = np.ones(8, np.float32)
    return [
        (lambda: K.copy(b[:8], out=b[1:9]), "out partly overlaps x"),
        (lambda: K.copy(b[1:9], out=b[:8]), "out partly overlaps x"),
        (lambda: K.scale(b[:8], out=b[4:12]), "out partly overlaps x"),
        (lambda: K.add(y, b[:8], out=b[2:10]), "out partly overlaps y"),
        (lambda: K.triad(b[:8].reshape(2, 4), b[8:].reshape(2, 4), out=b[6:14].reshape(2, 4)),
         "out partly overlaps x"),
        (lambda: K.chain(b[:8], 3, out=b[1:9]), "out partly overlaps x"),
        (lambda: K.chain(b[:8], 3, fused=False, out=b[1:9]), "out partly overlaps x"),
        (lambda: K.chain(y, 3, fused=False, out=b[:8], scratch=b[4:12]), "scratch partly overlaps out"),
        (lambda: K.chain(b[:8], 3, fused=False, out=y, scratch=b[2:10]), "scratch partly overlaps x"),
    ], b


@pytest.mark.parametrize("case", range(9))
def test_out_overlapping_an_input_is_refused(case):
    calls, buffer = overlapping_calls()
    fn, message = calls[case]
    before = buffer.copy()
    with pytest.raises(ValueError, match=message):
        fn()
    np.testing.assert_array_equal(buffer, before)   # refused before anything was written


def test_in_place_and_disjoint_views_still_work(rng):
    """out may BE an input (in place), and views of one buffer that do not overlap are fine."""
    x0 = rng.standard_normal(1000).astype(np.float32)
    y0 = rng.standard_normal(1000).astype(np.float32)
    for name in ("copy", "scale", "add", "triad"):
        for target in ("x", "y") if name in ("add", "triad") else ("x",):
            x, y = x0.copy(), y0.copy()
            out = x if target == "x" else y
            assert call(name, x, y, 1.5, out=out) is out
            np.testing.assert_array_equal(out, numpy_reference(name, x0, y0, 1.5))
    for fused in (True, False):
        x = x0.copy()
        assert K.chain(x, 5, op="fma", fused=fused, out=x, scratch=x) is x
        np.testing.assert_array_equal(x, chain_reference(x0, 5, "fma", 0.5, 0.5))
    b = np.zeros(16, np.float32)
    b[:8] = x0[:8]
    K.scale(b[:8], 2.0, out=b[8:])
    np.testing.assert_array_equal(b[8:], np.float32(2.0) * x0[:8])


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")   # np.matrix
@pytest.mark.parametrize("fn, error, message", [
    (lambda x: K.copy(np.matrix(x)), TypeError, "x must be a plain numpy.ndarray, got matrix"),
    (lambda x: K.add(x[None], np.matrix(x)), TypeError, "y must be a plain numpy.ndarray, got matrix"),
    (lambda x: K.copy(x, out=np.ma.array(x)), TypeError, "out must be a plain numpy.ndarray, got MaskedArray"),
    (lambda x: K.copy(x.astype(">f4")), ValueError, "x must be in the machine's byte order"),
    (lambda x: K.chain(x.astype(">f4"), 2), ValueError, "x must be in the machine's byte order"),
    (lambda x: K.add(x, x.astype(">f4")), ValueError, "y must have .*dtype float32.*got .*dtype >f4"),
    (lambda x: K.copy(x, out=x.astype(">f4")), ValueError, "out must have .*dtype float32.*got .*dtype >f4"),
    (lambda x: K.scale(x.astype(np.int64)), ValueError, "x's dtype must be float32 or float64, got int64"),
    (lambda x: K.add(x, x.astype(np.complex64)), ValueError, "y's dtype must be float32 or float64"),
    (lambda x: K.triad(x, x, out=x.astype(object)), ValueError, "out's dtype must be float32 or float64"),
    (lambda x: K.copy(x, out=np.empty((2, 4), np.float32)), ValueError, r"out must have shape \(8,\)"),
    (lambda x: K.add(x, x[:1].reshape(())), ValueError, r"y must have shape \(8,\).*got shape \(\)"),
    (lambda x: K.copy(np.ones((4, 4), np.float32)[:, :2]), ValueError, "x must be C-contiguous"),
])
def test_unsupported_arrays_name_the_argument(fn, error, message):
    with pytest.raises(error, match=message):
        fn(np.arange(8, dtype=np.float32))


def test_zero_d_and_empty_arrays(rng):
    for shape in ((), (0,), (3, 0)):
        x = rng.standard_normal(shape).astype(np.float64)
        y = rng.standard_normal(shape).astype(np.float64)
        for name in ("copy", "scale", "add", "triad"):
            got = call(name, x, y, 1.5)
            assert got.shape == shape
            np.testing.assert_array_equal(got, numpy_reference(name, x, y, 1.5))
        np.testing.assert_array_equal(K.chain(x, 3, op="fma"), chain_reference(x, 3, "fma", 0.5, 0.5))


def test_chain_length_is_checked():
    x = np.ones(8, np.float32)
    for n in (0, -1, K.MAX_OPS + 1, 2 ** 63):
        with pytest.raises(ValueError, match=f"n .*>= 1 and <= MAX_OPS = {K.MAX_OPS:,}, got {n}"):
            K.chain(x, n)
    for n in (True, np.bool_(True), 2.0, np.float64(3), "3", None):
        with pytest.raises(TypeError, match="n .* must be an integer"):
            K.chain(x, n)
    # Counting runs nothing, so any length counts (the fusion model takes the limit of long chains).
    assert K.traffic("chain", x, n=10 ** 9) == (2 * x.nbytes, 10 ** 9 * x.size)
    with pytest.raises(ValueError, match="n .*>= 1, got 0"):
        K.traffic("chain", x, n=0)
    np.testing.assert_array_equal(K.chain(x, np.int64(3)), chain_reference(x, 3, "mul", 0.999, 0.0))


def test_longest_chain_is_a_loop_and_returns_quickly(rng):
    """n = MAX_OPS runs as a run-time loop (no new compile per n) and finishes in well under a second
    of work on a small array; x * -1 applied an even / odd number of times gives x / -x exactly."""
    import time
    x = rng.standard_normal(2 * kernel_source.NUMBA_BLOCK + 3).astype(np.float32)
    K.chain(x, 1, c=-1.0)   # compile outside the timed region
    start = time.perf_counter()
    np.testing.assert_array_equal(K.chain(x, K.MAX_OPS, c=-1.0), x)
    np.testing.assert_array_equal(K.chain(x, K.MAX_OPS - 1, c=-1.0), -x)
    assert time.perf_counter() - start < 20


def test_torch_tensors_are_refused_clearly():
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="got Tensor"):
        K.copy(torch.ones(4))


# --- bytes and FLOPs ---------------------------------------------------------------

def test_traffic_exact():
    x = np.empty(10, np.float32)
    assert K.traffic("copy", x) == (80, 0)
    assert K.traffic("scale", x) == (80, 10)
    assert K.traffic("add", x) == (120, 10)
    assert K.traffic("triad", x) == (120, 20)
    assert K.traffic("chain", x, n=4) == (80, 40)
    assert K.traffic("chain", x, n=4, fused=False) == (320, 40)
    assert K.traffic("chain", x, n=3, op="fma") == (80, 60)
    assert K.traffic("triad", 10, dtype="float64") == (240, 20)
    assert K.traffic("chain", np.empty((2, 5), np.float64), n=2, fused=False) == (320, 20)


def test_traffic_bad_input():
    with pytest.raises(ValueError, match="dtype is needed"):
        K.traffic("copy", 10)
    with pytest.raises(ValueError, match="name must be one of"):
        K.traffic("memset", np.empty(4, np.float32))
    with pytest.raises(TypeError, match="array or an element count"):
        K.traffic("copy", [1.0, 2.0])
    with pytest.raises(ValueError, match="float32 or float64"):
        K.traffic("copy", 4, dtype="int8")
    with pytest.raises(ValueError, match=">= 1"):
        K.traffic("chain", np.empty(4, np.float32), n=0)


# --- the one description behind both back ends -----------------------------------

def all_sources():
    """Every CUDA source the CuPy path can ship (one chain kernel per op serves every n)."""
    out = [K.cuda_source(name, dtype) for name in K.KERNELS for dtype in K.DTYPES]
    out += [K.cuda_source("chain", dtype, op=op) for op in K.OPS for dtype in K.DTYPES]
    return out


def test_chain_sources_loop_instead_of_repeating_the_op():
    """The chain length is a run-time argument: the source does not grow with n."""
    cuda = K.cuda_source("chain", "float32", op="mul")
    assert "const long long reps" in cuda and "r < reps" in cuda
    assert cuda.count("x = x * c;") == 4 + 1   # once per lane of a float4, once for the tail
    numba = K.numba_source("chain", op="mul")
    assert "reps" in numba.splitlines()[0]
    u = kernel_source.NUMBA_UNROLL
    # first pass, unrolled passes, then one pass for the rest, whatever it is (1 to u - 1 applications):
    # a pass per application cost a load and a store each (the fused chain of 8 took 1.4 times a chain of 1)
    assert numba.count("x = x * c\n") == 1 + u + sum(range(1, u))
    assert numba.count("for i in range(o.shape[0]):") == 1 + 1 + (u - 1)
    assert "cosf(x)" in K.cuda_source("chain", "float32", op="cos")
    assert "cos(x)" in K.cuda_source("chain", "float64", op="cos")
    assert "math.cos(x)" in K.numba_source("chain", op="cos")
    assert "out_[i] = x + a * y;" in K.cuda_source("triad", "float64")
    assert "out_[i] = x + a * y" in K.numba_source("triad")
    assert "prange" in K.numba_source("copy")


def test_source_names_are_unique_and_typed():
    names = [re.search(r"void (\w+)\(", s).group(1) for s in all_sources()]
    assert len(names) == len(set(names))
    assert "brrr_triad_float" in names and "brrr_chain_fma_double" in names
    assert "double" not in K.cuda_source("triad", np.float32)


def find_nvcc():
    for candidate in (shutil.which("nvcc"), "/usr/local/bin/nvcc",
                      os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def compile_with_nvrtc(source, arch):
    """Fallback where there is no nvcc: CuPy's NVRTC bindings (raises if unavailable)."""
    from cupy_backends.cuda.libs import nvrtc
    prog = nvrtc.createProgram(source, "brrr_kernels.cu", [], [])
    try:
        nvrtc.compileProgram(prog, [f"--gpu-architecture=sm_{arch}"])
    finally:
        nvrtc.destroyProgram(prog)


@pytest.mark.parametrize("arch", ["75", "90"])   # T4 and H100
def test_cuda_sources_compile(arch, tmp_path):
    source = "\n".join(all_sources())
    nvcc = find_nvcc()
    if nvcc is None:
        try:
            compile_with_nvrtc(source, arch)
        except ImportError:
            pytest.skip("neither nvcc nor NVRTC is available")
        return
    path = tmp_path / "brrr_kernels.cu"
    path.write_text(source)
    cubin = tmp_path / f"brrr_kernels_sm{arch}.cubin"
    done = subprocess.run([nvcc, f"-arch=sm_{arch}", "--cubin", "-Werror", "all-warnings",
                           "-o", str(cubin), str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    binary = cubin.read_bytes()
    for s in all_sources():
        name = re.search(r"void (\w+)\(", s).group(1)
        assert name.encode() in binary, f"{name} missing from the sm_{arch} cubin"


# --- on a GPU (CuPy) ---------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", SIZES)
def test_gpu_kernels_match_numpy(size, dtype, rng):
    cp = pytest.importorskip("cupy")
    xh = rng.standard_normal(size).astype(dtype)
    yh = rng.standard_normal(size).astype(dtype)
    x, y = cp.asarray(xh), cp.asarray(yh)
    tol = dict(rtol=0, atol=0)  # built with --fmad=false: rounded exactly as NumPy does
    for name in ("copy", "scale", "add", "triad"):
        out = cp.empty_like(x)
        assert call(name, x, y, 1.5, out=out) is out
        np.testing.assert_allclose(cp.asnumpy(out), numpy_reference(name, xh, yh, 1.5), **tol)
    for op in K.OPS:
        _, _, c, d = K.OPS[op]
        for n in (1, 4, 512, 4096):
            want = chain_reference(xh, n, op, c, d)
            fused = K.chain(x, n, op=op)
            unfused = K.chain(x, n, op=op, fused=False)
            if op == "cos":  # CUDA's cos and libm's may differ in the last bit
                np.testing.assert_allclose(cp.asnumpy(fused), want, rtol=64 * np.finfo(dtype).eps, atol=1e-6)
            else:
                np.testing.assert_array_equal(cp.asnumpy(fused), want)
            np.testing.assert_array_equal(cp.asnumpy(fused), cp.asnumpy(unfused))


@pytest.mark.gpu
def test_gpu_refuses_mixed_arrays():
    cp = pytest.importorskip("cupy")
    with pytest.raises(TypeError, match="y must be a cupy array"):
        K.add(cp.ones(4, cp.float32), np.ones(4, np.float32))
    with pytest.raises(TypeError, match="out must be a cupy array"):
        K.copy(cp.ones(4, cp.float32), out=np.empty(4, np.float32))
