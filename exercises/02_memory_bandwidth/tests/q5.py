from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = None

@test_case(points=1, hidden=False)
def test_timings(t_cos1, t_cos2):
    import brrr
    assert isinstance(t_cos1, brrr.Timing) and isinstance(t_cos2, brrr.Timing)

@test_case(points=1, hidden=False)
def test_consistent(measured_ratio_cos, t_cos1, t_cos2):
    expected = t_cos2.median / t_cos1.median
    assert abs(measured_ratio_cos - expected) <= 0.01 * expected

