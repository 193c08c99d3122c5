from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(peak_flops, peak_bandwidth, weight_bytes, roofline_per_token_small, roofline_per_token_large, roofline_regime_small, roofline_regime_large):
    from brrr.grade.context import byte_count, peak, positive
    from brrr.grade.context import choice
    peak('peak_flops', peak_flops, 'FLOP/s')
    peak('peak_bandwidth', peak_bandwidth, 'bytes/s')
    byte_count('weight_bytes', weight_bytes)
    for name, value in (('roofline_per_token_small', roofline_per_token_small), ('roofline_per_token_large', roofline_per_token_large)):
        positive(name, value)
    assert choice('roofline_regime_small', roofline_regime_small, ('compute-bound', 'memory-bound'))
    assert choice('roofline_regime_large', roofline_regime_large, ('compute-bound', 'memory-bound'))

