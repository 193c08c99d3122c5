from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False, 
    success_message="depthwise_activation_reuse is in range; the hidden tests grade its value")
def test_range(depthwise_activation_reuse):
    assert 0 < depthwise_activation_reuse < 1, 'depthwise reuses its activations less than standard'

