from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(non_matmul_slowdown, answer_tensor_cores, answer_flop_share):
    from brrr.grade.context import positive
    positive('non_matmul_slowdown', non_matmul_slowdown)
    from brrr.grade.context import choice
    assert float(non_matmul_slowdown) > 1, 'a ratio above one: matmul FLOP/s over non-matmul FLOP/s'
    for answer in (answer_tensor_cores, answer_flop_share):
        assert choice('each answer', answer), 'store the letter of your answer as a string, such as "b"'

