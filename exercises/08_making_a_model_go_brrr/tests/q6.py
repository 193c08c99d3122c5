from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(decode_weight_bytes, decode_floor, t_decode, decode_floor_multiple, decode_calls, fixed_cost, decode_issue_seconds, decode_regime, decode_issue_share):
    from brrr.grade.context import positive
    import numbers
    import brrr
    from brrr.grade.context import measured, whole
    measured('t_decode', t_decode)
    assert isinstance(t_decode, brrr.Timing), 't_decode is what brrr.bench returns'
    whole('decode_calls', decode_calls)
    from brrr.grade.context import byte_count, fraction
    byte_count('decode_weight_bytes', decode_weight_bytes)
    fraction('decode_issue_share', decode_issue_share)
    assert 1e-07 <= positive('fixed_cost', fixed_cost) <= 0.001, f'fixed_cost is in seconds: one operator call costs between 0.1 µs and 1 ms (1e-7 to 1e-3 s), not {fixed_cost:.3g}'
    for name, value in (('decode_floor', decode_floor), ('decode_floor_multiple', decode_floor_multiple), ('decode_issue_seconds', decode_issue_seconds)):
        positive(name, value)
    from brrr.grade.context import choice
    assert choice('decode_regime', decode_regime, ('overhead-bound', 'memory-bound')), '"overhead-bound" or "memory-bound" (a decode step at batch 1 is never compute-bound)'

