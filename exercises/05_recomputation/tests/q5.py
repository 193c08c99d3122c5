from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_timings(t_plain, t_ckpt):
    from brrr.grade.context import measured
    measured('t_plain', t_plain)
    measured('t_ckpt', t_ckpt)
    import brrr
    assert isinstance(t_plain, brrr.Timing) and isinstance(t_ckpt, brrr.Timing), "keep brrr.bench's Timings"

