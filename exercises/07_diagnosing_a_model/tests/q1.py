from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False)
def test_keys(regimes):
    assert isinstance(regimes, dict) and set(regimes) == {'matmul', 'layer_norm', 'tiny_add'}

