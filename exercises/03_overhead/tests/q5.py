from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = None

@test_case(points=0, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(answer_fraction, answer_async, answer_sync, answer_graph, answer_batch):
    from brrr.grade.context import choice
    for a in (answer_fraction, answer_async, answer_sync, answer_graph, answer_batch):
        assert choice('each answer', a), "each answer is one letter: 'a' to 'd'"

