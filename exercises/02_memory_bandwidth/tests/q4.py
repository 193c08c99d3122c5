from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False, 
    success_message="t_triad is a plausible Timing of triad_call(n), with its bytes")
def test_timing(t_triad, n):
    from brrr.grade.context import measured
    measured('t_triad', t_triad)
    import brrr
    assert isinstance(t_triad, brrr.Timing), 't_triad should be the Timing that brrr.bench returns'
    assert t_triad.nbytes is not None, 't_triad has no byte count: pass nbytes=nbytes_triad to brrr.bench'
    assert float(t_triad.nbytes) == 12 * n, f't_triad.nbytes (your nbytes_triad) is {float(t_triad.nbytes) / (12 * n):.3g} times the bytes triad moves'

@test_case(points=1, hidden=False, 
    success_message="gbps_triad follows from your timing and the fraction is in range; the hidden tests grade the fraction and the ratio")
def test_gbps_from_your_timing(gbps_triad, bandwidth_fraction_triad, t_triad, n):
    from brrr.grade.context import RATE_SLACK, fraction, measured, whole
    measured('t_triad', t_triad, nbytes=12 * whole('n', n))
    expected = 12 * n / t_triad.median / 1000000000.0
    assert abs(float(gbps_triad) - expected) <= 0.01 * expected, f'from your own timing, bytes / median seconds / 1e9 = {expected:.4g} GB/s'
    fraction('bandwidth_fraction_triad', bandwidth_fraction_triad, RATE_SLACK)

