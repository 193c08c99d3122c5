from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(proj_intensity_one, proj_intensity_eight, proj_seconds_per_token_one, proj_seconds_per_token_eight, t_one, t_eight, seconds_per_token_one, seconds_per_token_eight, batching_speedup):
    from brrr.grade.context import positive
    from brrr.grade.context import measured
    measured('t_one', t_one)
    measured('t_eight', t_eight)
    import numbers
    import brrr
    for name, value in (('proj_intensity_one', proj_intensity_one), ('proj_intensity_eight', proj_intensity_eight), ('proj_seconds_per_token_one', proj_seconds_per_token_one), ('proj_seconds_per_token_eight', proj_seconds_per_token_eight), ('seconds_per_token_one', seconds_per_token_one), ('seconds_per_token_eight', seconds_per_token_eight), ('batching_speedup', batching_speedup)):
        positive(name, value)
    assert isinstance(t_one, brrr.Timing) and isinstance(t_eight, brrr.Timing), 't_one and t_eight are what brrr.bench returns'

