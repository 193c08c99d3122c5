from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False)
def test_format(peak_flops, peak_bandwidth, linear_flops, linear_bytes, predicted_seconds, predicted_regime):
    import numbers
    for value in (peak_flops, peak_bandwidth, linear_flops, linear_bytes, predicted_seconds):
        assert isinstance(value, numbers.Real) and (not isinstance(value, bool)) and (value > 0), 'peaks, counts and the prediction are positive numbers'
    assert predicted_regime in ('compute-bound', 'memory-bound')

