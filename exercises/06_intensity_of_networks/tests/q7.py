from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(alex_time_by_kind, alex_slowest_kind, alex_regime, alex_weight_share, alex_fix):
    from brrr.grade.context import choice
    import numbers
    assert set(alex_time_by_kind) == {'standard', 'group', 'fc'}, 'one entry per kind of layer'
    assert all((isinstance(t, numbers.Real) and t > 0 for t in alex_time_by_kind.values())), 'seconds'
    assert alex_slowest_kind in ('standard', 'group', 'fc')
    assert choice('alex_regime', alex_regime, ('compute-bound', 'memory-bound'))
    assert isinstance(alex_weight_share, numbers.Real) and 0 < alex_weight_share <= 1, 'a fraction'
    assert choice('alex_fix', alex_fix), 'one letter, as a string'

