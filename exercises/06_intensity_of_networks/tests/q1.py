from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False)
def test_standard(conv_macs):
    assert conv_macs('standard', 256, 256, 28, 3) == 256 * 256 * 9 * 28 * 28

