from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(batch_answer, ridge_tokens):
    from brrr.grade.context import positive
    from brrr.grade.context import choice
    import numbers
    assert choice('batch_answer', batch_answer), "one letter, 'a' to 'd'"
    positive('ridge_tokens', ridge_tokens)

