from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = None

@test_case(points=1, hidden=False)
def test_format(answer_alexnet, answer_batch, answer_depthwise):
    for answer in (answer_alexnet, answer_batch, answer_depthwise):
        assert answer in ('a', 'b', 'c', 'd'), 'one letter, as a string'

