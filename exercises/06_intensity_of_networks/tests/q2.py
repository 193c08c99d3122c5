from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False)
def test_ai_c(ai_c):
    assert abs(ai_c(100, 10, 40) - 2.0) < 1e-12

@test_case(points=1, hidden=False)
def test_di(di):
    assert abs(di(100, 10, 5) - 4.5) < 1e-12

