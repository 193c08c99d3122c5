from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False)
def test_roofline(roof_a100):
    import brrr
    assert isinstance(roof_a100, brrr.Roofline), 'make roof_a100 with brrr.Roofline(...)'

