from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = None

@test_case(points=1, hidden=False)
def test_knee_from_your_peaks(knee_repeat_used, peak_flops_used, peak_bandwidth_used):
    expected = 8 * float(peak_flops_used) / float(peak_bandwidth_used)
    assert abs(float(knee_repeat_used) - expected) <= 0.01 * expected, 'the intensity is repeat / 8 FLOP/byte: set it equal to your ridge'

