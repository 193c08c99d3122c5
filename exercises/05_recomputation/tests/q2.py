from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False)
def test_formula(saved_bytes_chain):
    assert saved_bytes_chain(100, 5) == 2000
    assert saved_bytes_chain(100, 5, checkpointed=True) == 400

