from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = None

@test_case(points=1, hidden=False)
def test_shapes(t_slow, slow_regime, slow_fix):
    from brrr.grade.context import measured
    measured('t_slow', t_slow)
    import brrr
    assert isinstance(t_slow, brrr.Timing), 't_slow should be the Timing brrr.bench returns'
    assert slow_regime in ('compute-bound', 'memory-bound', 'overhead-bound'), "use Roofline.regime's strings"
    assert isinstance(slow_fix, str) and slow_fix.strip().lower() in ('a', 'b', 'c', 'd'), "one letter, 'a' to 'd'"

