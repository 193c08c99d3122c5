from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False)
def test_range(depthwise_activation_reuse):
    assert 0 < depthwise_activation_reuse < 1, 'depthwise reuses activations less than standard'

