from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False)
def test_timing(t_mm):
    import brrr
    assert isinstance(t_mm, brrr.Timing), 't_mm should be the Timing that brrr.bench returns'
    assert t_mm.median > 0

@test_case(points=1, hidden=False)
def test_consistent(t_mm, tflops_mm, n):
    expected = 2 * n ** 3 / t_mm.median / 1000000000000.0
    assert abs(tflops_mm - expected) <= 0.01 * expected, f'tflops_mm should be 2 n^3 / median seconds / 1e12 = {expected:.4g} from your own timing'

