from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_types(peak_flops_used, peak_bandwidth_used, t_pred, regime_pred):
    from brrr.grade.context import peak
    from brrr.grade.context import choice
    import numbers
    peak('peak_flops_used', peak_flops_used, 'FLOP/s')
    peak('peak_bandwidth_used', peak_bandwidth_used, 'bytes/s')
    assert set(t_pred) == set(regime_pred) == {'standard', 'pointwise', 'group', 'depthwise'}
    assert all((isinstance(t, numbers.Real) and t > 0 for t in t_pred.values())), 'seconds'
    assert all((choice('each regime', r, ('compute-bound', 'memory-bound')) for r in regime_pred.values()))

