from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False)
def test_number(non_matmul_slowdown):
    assert isinstance(non_matmul_slowdown, (int, float)) and non_matmul_slowdown > 1, 'a ratio greater than one: matmul FLOP/s over non-matmul FLOP/s'

