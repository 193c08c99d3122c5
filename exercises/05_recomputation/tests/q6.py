from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = None

@test_case(points=1, hidden=False)
def test_format(answer_free, answer_agreement, answer_sqrt):
    for answer in (answer_free, answer_agreement, answer_sqrt):
        assert answer in ('a', 'b', 'c', 'd'), 'one letter, as a string'

