from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_timing(t_tiny):
    from brrr.grade.context import measured
    measured('t_tiny', t_tiny)
    import brrr
    assert isinstance(t_tiny, brrr.Timing), 't_tiny should be the Timing brrr.bench returns'
    assert t_tiny.mode == 'hot' and t_tiny.backend == 'cpu', "use cache='hot' and backend='cpu'"

@test_case(points=1, hidden=False, 
    success_message="tiny_us follows from your timing; the hidden tests grade the rest")
def test_microseconds(tiny_us, t_tiny):
    from brrr.grade.context import measured
    measured('t_tiny', t_tiny)

    def close(a, b, rel=0.01):
        a, b = (float(a), float(b))
        return a == b or abs(a - b) <= rel * abs(b)
    assert close(tiny_us, t_tiny.median * 1000000.0), 'microseconds: the median in seconds times 1e6'

