"""Chapter 4's claims (brrr.prose.fusion): which claims each cell makes of a record, with which numbers, and
that the numbers come from the record. The phrases belong to the claims' own tests (tests/test_claims.py)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import brrr
from brrr import claims
from brrr.experiments import fusion
from brrr.prose import fusion as prose

ROOF = brrr.Roofline(peak_flops=1e12, peak_bandwidth=1e11, name="Test GPU")   # ridge 10: mul chain caps at 40
N = 1000


def _record(fuser, variant, k, seconds, op="mul", backend="cuda"):
    nbytes, flops = fusion.chain_traffic(k, N, variant == "fused", op)
    return {"fuser": fuser, "library": f"lib-{fuser}", "variant": variant, "k": k, "op": op, "n": N,
            "backend": backend, "nbytes": nbytes, "flops": flops, "seconds": seconds, "iqr_seconds": 0.0,
            "predicted_seconds": float(ROOF.time(flops, nbytes))}


def _run(times, fusers=("brrr",), op="mul"):
    """A fusion_speedup run: ``times`` {k: (fused seconds, unfused seconds)} for each fuser."""
    records = [_record(f, v, k, t, op) for f in fusers for k, pair in times.items()
               for v, t in zip(("fused", "unfused"), pair)]
    return brrr.Result("fusion_kernels", records, {"roof": ROOF.to_dict(), "n": N, "op": op,
                                                   "device": {"name": "Test GPU", "backend": "cuda"}})


TIMES = {1: (1e-7, 1e-7), 8: (1e-7, 7e-7), 64: (2e-7, 6e-6), 128: (3e-7, 1.2e-5)}


def _checked(cs):
    cs = [c for c in cs if c is not None]
    for c in cs:
        c.check()
    return cs


def test_the_sweep_checks_worked_problem_1_then_judges_each_side_of_the_longest_chain():
    run = _run(TIMES, fusers=("brrr", "cupy_fuse"))
    check, *bounds = _checked(prose.sweep_claims(run))
    assert isinstance(check, claims.Compare) and check.value == pytest.approx(7)
    assert check.base == pytest.approx(8)              # memory-bound at k = 8: the speed-up is k
    assert [type(b) for b in bounds] == [claims.Bound] * 4
    fused = next(r for r in run.records if r["k"] == 128 and r["variant"] == "fused")
    assert bounds[0].measured == fused["seconds"]
    # its least time: the multiplications at half the peak, not the bytes and not the full peak
    assert bounds[0].allowed == pytest.approx(max(fused["nbytes"] / 1e11, fused["flops"] / 0.5e12))
    assert bounds[0].allowed == pytest.approx(128 * N / 0.5e12)
    assert bounds[1].allowed == pytest.approx(2 * 128 * N * 4 / 1e11)     # the unfused passes: their bytes


def test_a_sweep_without_the_worked_chain_length_still_judges_the_longest_chain():
    cs = _checked(prose.sweep_claims(_run({1: (1e-7, 1e-7), 16: (1e-7, 1.6e-6)})))
    assert [type(c) for c in cs] == [claims.Bound, claims.Bound]


def test_torch_compile_is_set_against_the_model_near_16_and_against_the_first_fuser_at_the_longest_common_k():
    kernels = _run(TIMES)
    compiled = _run({1: (1e-7, 1e-7), 4: (1e-7, 4e-7), 16: (1e-7, 1.5e-6), 64: (1.5e-7, 6e-6)}, ("torch_compile",))
    first, *_, last = _checked(prose.compiled_claims(kernels)(compiled))
    assert first.value == pytest.approx(15) and first.base == pytest.approx(16)
    assert last.value == 1.5e-7 and last.base == 2e-7            # k = 64: in both sweeps
    # a reference run of the hand-written kernels gets no comparison with the page's own kernels
    assert not any(isinstance(c, claims.Compare) and c.base_name.startswith("the `lib")
                   for c in prose.compiled_claims(kernels)(kernels))
    assert prose.compiled_claims(kernels)(brrr.Result("fusion_torch_compile", [], {"roof": ROOF.to_dict()})) == []


def test_the_cosine_chain_tests_hes_example_and_prices_one_more_cosine():
    run = _run({1: (1e-7, 1e-7), 2: (1.3e-7, 2e-7), 32: (1e-6, 3.2e-6), 64: (2e-6, 6.4e-6)}, op="cos")
    he, chain, extra = _checked(prose.cos_claims(run))
    assert (he.value, he.base) == (1.3e-7, 1e-7)
    assert (chain.value, chain.base) == (2e-6, 6.4e-6)
    assert extra.value == pytest.approx((2e-6 - 1e-6) / 32) and extra.base == pytest.approx(N / 1e12)
    flat = _run({1: (1e-7, 1e-7), 2: (1e-7, 2e-7)}, op="cos")        # no growth: no price to state
    assert [c for c in prose.cos_claims(flat) if c is not None][-1].value == 1e-7


def _epilogue(kernels, compiled=2e-3):
    records = [{"variant": "eager", "seconds": 4e-3}] + ([{"variant": "torch.compile", "seconds": compiled}]
                                                         if compiled else [])
    return brrr.Result("epilogue_fusion", records, {"roof": ROOF.to_dict(), "shape": [256, 256, 8],
                                                    "dtype": "float32", "compiled_kernels": kernels})


def test_the_epilogue_judges_torch_compile_by_the_kernels_it_launched():
    run = _epilogue(["extern_kernels.mm", "triton_poi_fused_add_relu_0"])
    speed, eager, compiled, predicted = _checked(prose.epilogue_claims(run))
    least = fusion.epilogue_bounds(run)
    assert least["torch.compile"] == pytest.approx(fusion.epilogue_time(ROOF, 256, 256, 8, True, launched=[
        "extern_kernels.mm", "triton_poi_fused_add_relu_0"]))
    assert fusion.epilogue_time(ROOF, 256, 256, 8, True) < least["torch.compile"] < least["eager"]
    assert (eager.allowed, compiled.allowed) == (least["eager"], least["torch.compile"])
    assert speed.value == 2e-3 and predicted.value == pytest.approx(2)
    assert predicted.base == pytest.approx(least["eager"] / least["torch.compile"])
    assert [type(c) for c in _checked(prose.epilogue_claims(_epilogue([], compiled=None)))] == [claims.Bound]
    one = fusion.epilogue_bounds(_epilogue([]))["torch.compile"]    # no kernel named: one fused kernel
    assert one == pytest.approx(fusion.epilogue_time(ROOF, 256, 256, 8, True))


class Device:
    """What the worked answers read of a device."""
    def __init__(self, peak=1e12, bandwidth=1e11, gpu=True):
        self.name, self.on_gpu, self.backend = "Test", gpu, "cuda" if gpu else "cpu"
        self.peak_bandwidth, self.l2_bytes, self._peak = bandwidth, 2 ** 20, peak

    def peak_flops(self, dtype="float32", tensor_cores=False):
        return self._peak

    def has_tensor_cores(self, dtype):
        return False


def _answer_claims(said):
    for c in said.claims:
        c.check()
        assert c.text() in said.text
    return said


@settings(max_examples=40, deadline=None)
@given(ridge=st.floats(0.5, 200), gpu=st.booleans())
def test_a_chain_twice_the_cap_is_compute_bound_and_the_cap_follows_the_instruction_rate(ridge, gpu):
    dev = Device(peak=ridge * 1e11, gpu=gpu)
    mul, fma = (_answer_claims(prose.cap(N, dev, op)) for op in ("mul", "ffma"))
    r = dev.peak_flops() / dev.peak_bandwidth
    # multiplications at half the peak: bytes and multiplications take as long at k = 8 (P / 2) / B = 4 r
    assert 4 * r - 1e-9 <= mul.facts["k_cap"] < 4 * r + 1 + 1e-9
    assert mul.facts["k"] == 2 * mul.facts["k_cap"] and mul.facts["regime"] == "compute-bound"
    # one FFMA a link on a GPU costs what a multiplication does; a CPU's multiply, then add, twice that
    per_link = 1 if gpu else 2
    assert 4 * r / per_link - 1e-9 <= fma.facts["k_cap"] < 4 * r / per_link + 1 + 1e-9
    assert fma.facts["regime"] == "compute-bound"
    assert fma.facts["versus"] == ("same" if fma.facts["k_cap"] == mul.facts["k_cap"] else "less")


def test_worked_problem_1_predicts_a_speed_up_of_k_while_the_fused_chain_is_memory_bound():
    said = _answer_claims(prose.chain(8, N, Device()))
    assert said.facts == {"regime": "memory-bound", "ref_regime": "memory-bound"}
    speedup = next(c for c in said.claims if isinstance(c, claims.Value) and c.unit == "")
    assert speedup.value == pytest.approx(8)
    # N4-M1: the multiplications at half the peak, as the sweep's bounds take them: at k = 64 the fused chain's
    # 64 FLOPs per element take 64 / 0.5e12 s, longer than its 8 bytes at 1e11 B/s (at the full peak, shorter)
    long = _answer_claims(prose.chain(64, N, Device()))
    assert long.facts["regime"] == "compute-bound"
    assert next(c for c in long.claims if isinstance(c, claims.Regime)).roof.peak_flops == pytest.approx(0.5e12)
    table = _answer_claims(prose.prediction(ROOF))
    assert [c.value for c in table.claims][3:] == [pytest.approx(80), pytest.approx(5), pytest.approx(40)]


class Timing:
    def __init__(self, seconds):
        self.median = self.min = seconds
        self.iqr = 0.01 * seconds


def test_the_worked_checks_say_which_record_they_lack_and_judge_a_timing_against_the_answer():
    dev = Device()
    assert prose.chain_check(None, None, 8, N, dev).facts == {"missing": "worked_fused_chain"}
    assert prose.chain_check(Timing(1e-7), None, 8, N, dev).facts == {"missing": "worked_unfused_chain"}
    said = prose.chain_check(Timing(1e-7), Timing(6e-7), 8, N, dev)
    speedup, fused = said.claims[:2]
    assert speedup.value == pytest.approx(6) and speedup.base == pytest.approx(8)
    assert fused.allowed == pytest.approx(8 * N / 1e11)
    long = prose.chain_check(Timing(1e-7), Timing(6e-7), 64, N, dev).claims[1]               # N4-M1: its ceiling
    assert long.allowed == pytest.approx(64 * N / 0.5e12)
    long = prose.long_check(Timing(1e-6), 80, N, dev, op="ffma", record="worked_fma_chain")
    assert long.claims[0].allowed == pytest.approx(2 * 80 * N / 1e12)     # one FFMA a link: the full peak
    assert prose.long_check(None, 80, N, dev).facts == {"missing": "worked_long_chain"}
