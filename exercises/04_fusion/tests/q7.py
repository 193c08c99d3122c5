from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = None

@test_case(points=1, hidden=False)
def test_shapes(t_gelu, gelu_regime, gelu_fix):
    from brrr.grade.context import measured
    measured('t_gelu', t_gelu)
    import brrr
    assert isinstance(t_gelu, brrr.Timing), 't_gelu should be the Timing brrr.bench returns'
    assert gelu_regime in ('compute-bound', 'memory-bound', 'overhead-bound'), "use Roofline.regime's strings"
    assert isinstance(gelu_fix, str) and gelu_fix.strip().lower() in ('a', 'b', 'c', 'd'), "one letter, 'a' to 'd'"

