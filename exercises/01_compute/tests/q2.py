from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False, 
    success_message="both peaks are within 4x of this device, in FLOP/s and bytes/s")
def test_peaks_are_this_devices(peak_flops_used, peak_bandwidth_used):
    from brrr.grade.context import grader_device, within
    ref = grader_device()
    assert within(peak_flops_used, ref['peak_flops'], 4), f"peak_flops_used should be this device's float32 peak in FLOP/s (near {ref['peak_flops']:.3g})"
    assert within(peak_bandwidth_used, ref['peak_bandwidth'], 4), f"peak_bandwidth_used should be this device's peak bandwidth in bytes/s (near {ref['peak_bandwidth']:.3g})"

@test_case(points=1, hidden=False, 
    success_message="predicted_mm_seconds follows from your counts and peaks; the hidden tests grade the counts and the regime")
def test_prediction_follows_from_your_peaks(predicted_mm_seconds, flops_mm, nbytes_mm, peak_flops_used, peak_bandwidth_used):
    from brrr.grade.context import positive
    expected = max(positive('flops_mm', flops_mm) / positive('peak_flops_used', peak_flops_used), positive('nbytes_mm', nbytes_mm) / positive('peak_bandwidth_used', peak_bandwidth_used))
    assert expected > 0, 'flops_mm and nbytes_mm should be positive counts'
    assert abs(float(predicted_mm_seconds) - expected) <= 0.01 * expected, f'max(FLOPs / peak FLOP/s, bytes / peak bandwidth) from your own numbers is {expected:.4g} s'

