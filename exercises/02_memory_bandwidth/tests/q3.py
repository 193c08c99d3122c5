from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False)
def test_timing(t_scale):
    import brrr
    assert isinstance(t_scale, brrr.Timing), 't_scale should be what brrr.bench returns'

@test_case(points=2, hidden=False)
def test_consistent(gbps_scale, t_scale, x):
    expected = 2 * x.nbytes / t_scale.median / 1000000000.0
    assert abs(gbps_scale - expected) <= 0.01 * expected, f'from your own timing, 2 * x.nbytes / median / 1e9 = {expected:.4g} GB/s'

