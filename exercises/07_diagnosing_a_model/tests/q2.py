from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(peak_flops, peak_bandwidth, linear_flops, linear_bytes, predicted_seconds, predicted_regime):
    from brrr.grade.context import byte_count, peak, positive
    from brrr.grade.context import choice
    peak('peak_flops', peak_flops, 'FLOP/s')
    peak('peak_bandwidth', peak_bandwidth, 'bytes/s')
    byte_count('linear_bytes', linear_bytes)
    for name, value in (('linear_flops', linear_flops), ('predicted_seconds', predicted_seconds)):
        positive(name, value)
    assert choice('predicted_regime', predicted_regime, ('compute-bound', 'memory-bound'))

