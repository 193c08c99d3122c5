from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False)
def test_strings(regime_1k, regime_16m):
    allowed = ('compute-bound', 'memory-bound', 'overhead-bound')
    assert regime_1k in allowed and regime_16m in allowed, "use Roofline.regime's strings"

