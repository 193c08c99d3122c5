from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(peak_flops, peak_bandwidth, linear_flops, linear_bytes, predicted_seconds, predicted_regime):
    from brrr.grade.context import choice
    import numbers
    for value in (peak_flops, peak_bandwidth, linear_flops, linear_bytes, predicted_seconds):
        assert isinstance(value, numbers.Real) and (not isinstance(value, bool)) and (value > 0), 'peaks, counts and the prediction are positive numbers'
    assert choice('predicted_regime', predicted_regime, ('compute-bound', 'memory-bound'))

