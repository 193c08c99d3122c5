from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(op_regime, recompute_policy):
    from brrr.grade.context import choice
    assert set(op_regime) == {'layernorm', 'up', 'gelu', 'down'}
    assert all((choice('each regime', r, ('compute-bound', 'memory-bound')) for r in op_regime.values()))
    assert choice('recompute_policy', recompute_policy), 'one letter, as a string'

