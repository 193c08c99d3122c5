from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(forward_matmul_flops, backward_matmul_flops, backward_ratio, ratio_answer):
    from brrr.grade.context import positive
    from brrr.grade.context import choice
    import math, numbers
    for name, value in (('forward_matmul_flops', forward_matmul_flops), ('backward_matmul_flops', backward_matmul_flops), ('backward_ratio', backward_ratio)):
        positive(name, value)
    assert math.isclose(float(backward_ratio), float(backward_matmul_flops) / float(forward_matmul_flops), rel_tol=1e-09)
    assert choice('ratio_answer', ratio_answer)

