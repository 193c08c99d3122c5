from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = None

@test_case(points=1, hidden=False)
def test_format(op_regime, recompute_policy):
    assert set(op_regime) == {'layernorm', 'up', 'gelu', 'down'}
    assert all((r in ('compute-bound', 'memory-bound') for r in op_regime.values()))
    assert recompute_policy in ('a', 'b', 'c', 'd'), 'one letter, as a string'

