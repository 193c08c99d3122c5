from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = None

@test_case(points=1, hidden=False)
def test_regime(regime_big_matmul):
    assert regime_big_matmul in ('compute-bound', 'memory-bound', 'overhead-bound'), 'use the string Roofline.regime returns'

