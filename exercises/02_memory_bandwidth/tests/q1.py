from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False)
def test_pair(scale_traffic):
    assert scale_traffic(1000, 4) == (8000, 1000), 'read 4 bytes and write 4 bytes per element'

