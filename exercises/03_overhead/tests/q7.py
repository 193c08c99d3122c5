from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_shapes(t_slow, slow_regime, slow_fix):
    from brrr.grade.context import choice
    from brrr.grade.context import measured
    measured('t_slow', t_slow)
    import brrr
    assert isinstance(t_slow, brrr.Timing), 't_slow should be the Timing brrr.bench returns'
    assert choice('slow_regime', slow_regime, ('compute-bound', 'memory-bound', 'overhead-bound')), "use Roofline.regime's strings"
    assert choice('slow_fix', slow_fix), "one letter, 'a' to 'd'"

