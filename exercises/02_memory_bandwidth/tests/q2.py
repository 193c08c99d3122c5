from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False)
def test_format(roof_a100, answer_intensity):
    import brrr
    assert isinstance(roof_a100, brrr.Roofline), 'make roof_a100 with brrr.Roofline(...)'
    assert isinstance(answer_intensity, str) and answer_intensity.strip().lower() in ('a', 'b', 'c', 'd'), 'store the letter of your answer as a string, such as "b"'

