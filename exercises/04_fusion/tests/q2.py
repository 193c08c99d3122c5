from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_shapes(speedup_pred, t_fused_pred_ms, ks):
    assert list(ks) == [1, 2, 4, 16, 64], 'ks is given: keep it as the cell sets it'
    assert isinstance(speedup_pred, dict) and sorted(speedup_pred) == sorted(ks), 'one prediction per k in ks'
    assert isinstance(t_fused_pred_ms, dict) and sorted(t_fused_pred_ms) == sorted(ks), 'one time per k in ks'

