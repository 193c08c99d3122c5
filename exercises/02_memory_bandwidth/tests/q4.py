from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False)
def test_regime(regime_scale):
    assert regime_scale == 'memory-bound', "1/8 FLOP/byte is left of every device's ridge"

