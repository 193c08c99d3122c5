from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = None

@test_case(points=1, hidden=False)
def test_format(regime_cos, answer_fix_cos):
    assert regime_cos in ('compute-bound', 'memory-bound'), 'use the strings "compute-bound" or "memory-bound"'
    assert isinstance(answer_fix_cos, str) and answer_fix_cos.strip().lower() in ('a', 'b', 'c', 'd'), 'store the letter of your answer as a string, such as "b"'

