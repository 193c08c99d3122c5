from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False)
def test_timing(t_triad, n):
    from brrr.grade.context import measured
    measured('t_triad', t_triad)
    import brrr
    assert isinstance(t_triad, brrr.Timing), 't_triad should be the Timing that brrr.bench returns'
    assert t_triad.nbytes is not None and float(t_triad.nbytes) == 12 * n, 'time triad_call(n) and pass nbytes=nbytes_triad to brrr.bench'

@test_case(points=1, hidden=False)
def test_gbps_from_your_timing(gbps_triad, t_triad, n):
    from brrr.grade.context import measured, whole
    whole('n', n)
    measured('t_triad', t_triad)
    expected = 12 * n / t_triad.median / 1000000000.0
    assert abs(float(gbps_triad) - expected) <= 0.01 * expected, f'from your own timing, bytes / median seconds / 1e9 = {expected:.4g} GB/s'

