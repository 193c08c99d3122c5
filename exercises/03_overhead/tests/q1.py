from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False)
def test_timing(t_tiny):
    import brrr
    assert isinstance(t_tiny, brrr.Timing) and t_tiny.mode == 'hot', "use cache='hot'"

@test_case(points=1, hidden=False)
def test_consistent(tiny_us, t_tiny):
    expected = t_tiny.median * 1000000.0
    assert abs(tiny_us - expected) <= 0.01 * expected, 'microseconds: seconds times 1e6'

