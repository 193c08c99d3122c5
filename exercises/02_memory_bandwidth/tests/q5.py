from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = None

@test_case(points=1, hidden=False, 
    success_message="knee_repeat_used follows from your peaks; the hidden tests grade the ratios and the letter")
def test_knee_from_your_peaks(knee_repeat_used, peak_flops_used, peak_bandwidth_used):
    from brrr.grade.context import positive
    expected = 8 * positive('peak_flops_used', peak_flops_used) / positive('peak_bandwidth_used', peak_bandwidth_used)
    assert abs(float(knee_repeat_used) - expected) <= 0.01 * expected, 'the intensity is repeat / 8 FLOP/byte: set it equal to your ridge'

