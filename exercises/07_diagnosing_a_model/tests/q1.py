from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False)
def test_format(regimes, remedy):
    names = {'compute-bound', 'memory-bound', 'overhead-bound'}
    assert isinstance(regimes, dict) and set(regimes) == {'matmul', 'layer_norm', 'tiny_add'}
    assert all((isinstance(r, str) and r in names for r in regimes.values())), "each regime is one of 'compute-bound', 'memory-bound', 'overhead-bound'"
    assert isinstance(remedy, dict) and set(remedy) == names, 'remedy maps each regime to a letter'
    assert all((isinstance(v, str) and v in ('a', 'b', 'c') for v in remedy.values()))

