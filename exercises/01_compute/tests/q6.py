from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(regime_b1, answer_fix_b1, mfu_b1):
    from brrr.grade.context import choice
    assert choice('regime_b1', regime_b1, ('compute-bound', 'memory-bound', 'overhead-bound')), 'use the string Roofline.regime returns'
    assert choice('answer_fix_b1', answer_fix_b1), 'store the letter of your answer as a string, such as "b"'
    from brrr.grade.context import RATE_SLACK, fraction
    fraction('mfu_b1', mfu_b1, RATE_SLACK)

