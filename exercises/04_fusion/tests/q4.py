from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_timings(t_fused_cos2, t_unfused_cos2):
    from brrr.grade.context import measured
    measured('t_fused_cos2', t_fused_cos2)
    measured('t_unfused_cos2', t_unfused_cos2)
    import brrr
    assert isinstance(t_fused_cos2, brrr.Timing) and isinstance(t_unfused_cos2, brrr.Timing), 'keep the Timings brrr.bench returns'
    assert t_fused_cos2.backend == 'cpu' and t_unfused_cos2.backend == 'cpu', 'time both on the CPU'

