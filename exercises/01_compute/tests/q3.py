from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False, 
    success_message="t_mm is a plausible Timing of the n_mm product, with its FLOPs")
def test_timing(t_mm, n_mm):
    import brrr
    from brrr.grade.context import measured, whole
    measured('t_mm', t_mm, 2 * whole('n_mm', n_mm) ** 3)
    assert isinstance(t_mm, brrr.Timing), 't_mm should be the Timing that brrr.bench returns'
    assert t_mm.flops is not None, 't_mm has no FLOP count: pass flops=flops_mm to brrr.bench'
    assert abs(t_mm.flops - 2 * n_mm ** 3) <= 1e-09 * 2 * n_mm ** 3, f"t_mm.flops (your flops_mm) is {t_mm.flops / (2 * n_mm ** 3):.3g} times the product's FLOPs, 2 n_mm^3"

@test_case(points=1, hidden=False, 
    success_message="tflops_mm follows from your timing and mfu_mm is a fraction; the hidden tests grade mfu_mm and the ratio")
def test_tflops_from_your_timing(tflops_mm, mfu_mm, t_mm, n_mm):
    from brrr.grade.context import measured, positive, whole
    flops = 2 * whole('n_mm', n_mm) ** 3
    expected = flops / measured('t_mm', t_mm, flops).median / 1000000000000.0
    assert abs(positive('tflops_mm', tflops_mm) - expected) <= 0.01 * expected, f'from your own timing, 2 n^3 / median seconds / 1e12 = {expected:.4g} TFLOP/s'
    from brrr.grade.context import RATE_SLACK, fraction
    fraction('mfu_mm', mfu_mm, RATE_SLACK)

