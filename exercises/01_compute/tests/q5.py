from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(regime_times_two, max_fraction_times_two):
    from brrr.grade.context import choice
    assert choice('regime_times_two', regime_times_two, ('compute-bound', 'memory-bound')), 'use the strings "compute-bound" or "memory-bound"'
    assert 0 < float(max_fraction_times_two) <= 1, 'a fraction of the peak, between 0 and 1'

