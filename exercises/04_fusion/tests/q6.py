from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = None

@test_case(points=0, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(answer_same, answer_cap, answer_cos, answer_epilogue, answer_flash):
    from brrr.grade.context import choice
    for a in (answer_same, answer_cap, answer_cos, answer_epilogue, answer_flash):
        assert choice('each answer', a), "each answer is one letter: 'a' to 'd'"

