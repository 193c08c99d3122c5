from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False)
def test_timings(t_fused, t_unfused):
    import brrr
    assert isinstance(t_fused, brrr.Timing) and isinstance(t_unfused, brrr.Timing)

@test_case(points=1, hidden=False)
def test_consistent(speedup_cos2, t_fused, t_unfused):
    expected = t_unfused.median / t_fused.median
    assert abs(speedup_cos2 - expected) <= 0.01 * expected, 'unfused median over fused median'

