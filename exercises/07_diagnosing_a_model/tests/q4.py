from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False)
def test_strings(slowest_op, slowest_regime):
    assert isinstance(slowest_op, str)
    assert slowest_regime in ('compute-bound', 'memory-bound', 'overhead-bound')

