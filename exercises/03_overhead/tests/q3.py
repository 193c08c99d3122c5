from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_shapes(peak_bw, t_pred_us, sizes):
    from brrr.grade.context import filled, peak, positive
    peak('peak_bw', peak_bw, 'bytes/s')
    filled('sizes', sizes)
    assert isinstance(t_pred_us, dict) and sorted(t_pred_us) == sorted(sizes), 't_pred_us should map every size in sizes to a time in µs'
    for n, t in t_pred_us.items():
        assert positive(f't_pred_us[{n!r}]', t) >= 0.01, f't_pred_us is in µs (seconds times 1e6): no call takes under 0.01 µs, not {t:.3g}'

