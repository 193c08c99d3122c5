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
    from brrr.grade.context import peak
    peak("roof_a100's peak_bandwidth", roof_a100.peak_bandwidth, 'bytes/s')
    peak("roof_a100's peak_flops", roof_a100.peak_flops, 'FLOP/s')
    assert choice('answer_intensity', answer_intensity), 'store the letter of your answer as a string, such as "b"'

