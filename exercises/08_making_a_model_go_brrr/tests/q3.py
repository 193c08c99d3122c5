from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(t_small, t_large, seconds_per_token_small, seconds_per_token_large, mfu_small, mfu_large, roofline_fraction_small, roofline_fraction_large, batching_speedup):
    from brrr.grade.context import positive
    from brrr.grade.context import measured
    measured('t_small', t_small)
    measured('t_large', t_large)
    import numbers
    import brrr
    assert isinstance(t_small, brrr.Timing) and isinstance(t_large, brrr.Timing), 't_small and t_large are what brrr.bench returns'
    from brrr.grade.context import fraction
    for name, value in (('mfu_small', mfu_small), ('mfu_large', mfu_large), ('roofline_fraction_small', roofline_fraction_small), ('roofline_fraction_large', roofline_fraction_large)):
        fraction(name, value)
    for name, value in (('seconds_per_token_small', seconds_per_token_small), ('seconds_per_token_large', seconds_per_token_large), ('batching_speedup', batching_speedup)):
        positive(name, value)

