from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(regime_cos, answer_fix_cos):
    from brrr.grade.context import choice
    assert choice('regime_cos', regime_cos, ('compute-bound', 'memory-bound')), 'use the strings "compute-bound" or "memory-bound"'
    assert choice('answer_fix_cos', answer_fix_cos), 'store the letter of your answer as a string, such as "b"'

