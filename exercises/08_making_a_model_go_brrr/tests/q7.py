from otter.test_files import test_case

OK_FORMAT = False

name = "q7"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(n_matmul_weights, train_flops_per_token, train_step_flops, t_train, train_tokens_per_second, mfu_peak_name, mfu_peak_flops, train_mfu):
    from brrr.grade.context import positive
    import numbers
    import brrr
    from brrr.grade.context import measured
    measured('t_train', t_train)
    assert isinstance(t_train, brrr.Timing), 't_train is what brrr.bench returns'
    from brrr.grade.context import peak
    peak('mfu_peak_flops', mfu_peak_flops, 'FLOP/s')
    for name, value in (('n_matmul_weights', n_matmul_weights), ('train_flops_per_token', train_flops_per_token), ('train_step_flops', train_step_flops), ('train_tokens_per_second', train_tokens_per_second), ('train_mfu', train_mfu)):
        positive(name, value)
    assert isinstance(mfu_peak_name, str) and 'float32' in mfu_peak_name, 'name the peak the MFU is taken against: "float32"'
    assert train_mfu <= 1, 'an MFU above 1 is impossible: check the FLOP count and the units, or measure again'

