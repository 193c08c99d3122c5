from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(roof_a100, answer_intensity):
    from brrr.grade.context import choice
    import brrr
    assert isinstance(roof_a100, brrr.Roofline), 'make roof_a100 with brrr.Roofline(...)'
    assert 1000000000.0 <= roof_a100.peak_bandwidth <= 100000000000000.0, "roof_a100's peak_bandwidth is in bytes/s: a memory moves between 1 GB/s (1e9) and 100 TB/s (1e14)"
    assert 1000000000.0 <= roof_a100.peak_flops <= 1e+17, "roof_a100's peak_flops is in FLOP/s (19.5 TFLOP/s is 19.5e12)"
    assert choice('answer_intensity', answer_intensity), 'store the letter of your answer as a string, such as "b"'

