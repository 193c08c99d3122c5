from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False)
def test_shape(remedy):
    assert isinstance(remedy, dict)
    assert set(remedy) == {'compute-bound', 'memory-bound', 'overhead-bound'}
    assert set(remedy.values()) <= {'A', 'B', 'C'}

