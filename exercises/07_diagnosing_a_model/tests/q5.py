from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(diag_rows, regime_seconds, dominant_regime, softmax_t_math, softmax_t_mem, softmax_regime, fix):
    from brrr.grade.context import positive
    from brrr.grade.context import choice
    import numbers
    names = {'compute-bound', 'memory-bound', 'overhead-bound'}
    keys = {'op', 'category', 'flops', 'nbytes', 'seconds', 'regime'}
    assert isinstance(diag_rows, dict) and keys <= set(diag_rows), 'diag_rows = diagnosis[columns].to_dict("list")'
    assert isinstance(regime_seconds, dict) and regime_seconds and (set(regime_seconds) <= names)
    assert all((isinstance(v, numbers.Real) and v >= 0 for v in regime_seconds.values()))
    assert choice('dominant_regime', dominant_regime, names) and choice('softmax_regime', softmax_regime, names)
    for name, value in (('softmax_t_math', softmax_t_math), ('softmax_t_mem', softmax_t_mem)):
        positive(name, value)
    assert choice('fix', fix)

