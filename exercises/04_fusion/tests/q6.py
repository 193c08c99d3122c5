from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = None

@test_case(points=0, hidden=False)
def test_format(answer_same, answer_cap, answer_cos, answer_epilogue, answer_flash):
    for a in (answer_same, answer_cap, answer_cos, answer_epilogue, answer_flash):
        assert isinstance(a, str) and a.strip().lower() in ('a', 'b', 'c', 'd'), "each answer is one letter: 'a' to 'd'"

