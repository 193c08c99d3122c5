from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = None

@test_case(points=1, hidden=False)
def test_format(regime_times_two, max_fraction_times_two):
    assert regime_times_two in ('compute-bound', 'memory-bound'), 'use the strings "compute-bound" or "memory-bound"'
    assert 0 < float(max_fraction_times_two) <= 1, 'a fraction of the peak, between 0 and 1'

