from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False)
def test_format(batch_answer, ridge_tokens):
    import numbers
    assert batch_answer in ('a', 'b', 'c', 'd'), "one letter, 'a' to 'd'"
    assert isinstance(ridge_tokens, numbers.Real) and (not isinstance(ridge_tokens, bool)) and (ridge_tokens > 0)

