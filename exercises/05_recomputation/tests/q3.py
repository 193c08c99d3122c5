from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False)
def test_timings(t_plain, t_ckpt):
    import brrr
    assert isinstance(t_plain, brrr.Timing) and isinstance(t_ckpt, brrr.Timing)

@test_case(points=1, hidden=False)
def test_consistent(recompute_cost, t_plain, t_ckpt):
    expected = t_ckpt.median / t_plain.median
    assert abs(recompute_cost - expected) <= 0.01 * expected

