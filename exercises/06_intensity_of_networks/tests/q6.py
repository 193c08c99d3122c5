from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(answer_alexnet, answer_batch, answer_depthwise):
    from brrr.grade.context import choice
    for answer in (answer_alexnet, answer_batch, answer_depthwise):
        assert choice('each answer', answer), 'one letter, as a string'

