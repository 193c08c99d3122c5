from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_types(peak_flops_used, peak_bandwidth_used, t_forward_pred, t_step_pred, t_step_ckpt_pred, matmul_regime):
    from brrr.grade.context import peak, positive
    from brrr.grade.context import choice
    peak('peak_flops_used', peak_flops_used, 'FLOP/s')
    peak('peak_bandwidth_used', peak_bandwidth_used, 'bytes/s')
    for name, v in (('t_forward_pred', t_forward_pred), ('t_step_pred', t_step_pred), ('t_step_ckpt_pred', t_step_ckpt_pred)):
        positive(name, v)
    assert choice('matmul_regime', matmul_regime, ('compute-bound', 'memory-bound'))

