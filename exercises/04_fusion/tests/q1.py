from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False)
def test_bytes(chain_bytes):
    assert chain_bytes(1000, 3, fused=True) == 8000
    assert chain_bytes(1000, 3, fused=False) == 24000

