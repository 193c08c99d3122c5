from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_timings(t_conv):
    import brrr
    from brrr.grade.context import measured
    assert set(t_conv) == {'standard', 'pointwise', 'group', 'depthwise'}
    for kind, t in t_conv.items():
        measured(f't_conv[{kind!r}]', t)
    assert all((isinstance(t, brrr.Timing) for t in t_conv.values())), "keep brrr.bench's Timings"

