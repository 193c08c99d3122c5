from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = None

@test_case(points=0, hidden=False)
def test_format(answer_fraction, answer_async, answer_sync, answer_graph, answer_batch):
    for a in (answer_fraction, answer_async, answer_sync, answer_graph, answer_batch):
        assert isinstance(a, str) and a.strip().lower() in ('a', 'b', 'c', 'd'), "each answer is one letter: 'a' to 'd'"

