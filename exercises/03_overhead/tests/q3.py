from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_shapes(peak_bw, t_pred_us, sizes):
    from brrr.grade.context import filled, positive
    positive('peak_bw', peak_bw)
    filled('sizes', sizes)
    assert isinstance(t_pred_us, dict) and sorted(t_pred_us) == sorted(sizes), 't_pred_us should map every size in sizes to a time in µs'

