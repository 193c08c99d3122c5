from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False)
def test_timings(t_chain_fused, t_chain_unfused):
    import brrr
    assert isinstance(t_chain_fused, brrr.Timing) and isinstance(t_chain_unfused, brrr.Timing)

