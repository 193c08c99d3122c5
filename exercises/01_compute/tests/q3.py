from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False)
def test_fraction(mfu):
    assert isinstance(mfu, float) and mfu > 0, 'mfu should be a positive float'

