from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False)
def test_format(peak_flops, peak_bandwidth, weight_bytes, roofline_per_token_small, roofline_per_token_large, roofline_regime_small, roofline_regime_large):
    import numbers
    for value in (peak_flops, peak_bandwidth, weight_bytes, roofline_per_token_small, roofline_per_token_large):
        assert isinstance(value, numbers.Real) and (not isinstance(value, bool)) and (value > 0), 'peaks, bytes and times are positive numbers'
    assert roofline_regime_small in ('compute-bound', 'memory-bound')
    assert roofline_regime_large in ('compute-bound', 'memory-bound')

