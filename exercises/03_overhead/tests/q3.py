from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False)
def test_timings(timings, sizes):
    import brrr
    assert isinstance(timings, dict) and all((isinstance(timings.get(n), brrr.Timing) for n in sizes)), 'timings should map every size in sizes to a Timing'

@test_case(points=2, hidden=False)
def test_consistent(timings, small, large, double_small, double_large):
    for got, n in ((double_small, small), (double_large, large)):
        expected = timings[2 * n].median / timings[n].median
        assert abs(got - expected) <= 0.01 * expected, 'a ratio of medians from your own timings'

