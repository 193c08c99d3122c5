from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_shapes(t_gelu, gelu_regime, gelu_fix):
    from brrr.grade.context import choice
    from brrr.grade.context import measured
    measured('t_gelu', t_gelu)
    import brrr
    assert isinstance(t_gelu, brrr.Timing), 't_gelu should be the Timing brrr.bench returns'
    assert choice('gelu_regime', gelu_regime, ('compute-bound', 'memory-bound', 'overhead-bound')), "use Roofline.regime's strings"
    assert choice('gelu_fix', gelu_fix), "one letter, 'a' to 'd'"

