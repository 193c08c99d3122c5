from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = None

@test_case(points=1, hidden=False)
def test_format(regime_b1, answer_fix_b1):
    assert regime_b1 in ('compute-bound', 'memory-bound', 'overhead-bound'), 'use the string Roofline.regime returns'
    assert isinstance(answer_fix_b1, str) and answer_fix_b1.strip().lower() in ('a', 'b', 'c', 'd'), 'store the letter of your answer as a string, such as "b"'

