from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False)
def test_small(matmul_flops):
    assert matmul_flops(2, 3, 4) == 48, 'a (2 x 3) @ (3 x 4) product does 24 multiply-adds'

