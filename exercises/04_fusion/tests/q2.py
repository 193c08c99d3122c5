from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_shapes(speedup_pred, t_fused_pred_ms, ks, n):
    from brrr.grade.context import RATE_SLACK, grader_device, positive, whole
    assert list(ks) == [1, 2, 4, 16, 64], 'ks is given: keep it as the cell sets it'
    assert isinstance(speedup_pred, dict) and sorted(speedup_pred) == sorted(ks), 'one prediction per k in ks'
    assert isinstance(t_fused_pred_ms, dict) and sorted(t_fused_pred_ms) == sorted(ks), 'one time per k in ks'
    least = 4 * whole('n', n) / (RATE_SLACK * grader_device()['peak_bandwidth']) * 1000.0
    for k, t in t_fused_pred_ms.items():
        assert positive(f't_fused_pred_ms[{k!r}]', t) >= least, f't_fused_pred_ms is in milliseconds (seconds times 1e3): even reading the input once takes {least:.2g} ms here, not {t:.3g}'

