from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False)
def test_format(forward_matmul_flops, backward_matmul_flops, backward_ratio, ratio_answer):
    import math, numbers
    for value in (forward_matmul_flops, backward_matmul_flops, backward_ratio):
        assert isinstance(value, numbers.Real) and (not isinstance(value, bool)) and (value > 0)
    assert math.isclose(float(backward_ratio), float(backward_matmul_flops) / float(forward_matmul_flops), rel_tol=1e-09)
    assert ratio_answer in ('a', 'b', 'c', 'd')

