from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(rows, linear_seconds, linear_efficiency, matmul_flop_share, matmul_time_share, small_ops_answer):
    from brrr.grade.context import positive
    from brrr.grade.context import choice
    import numbers
    keys = {'op', 'category', 'flops', 'nbytes', 'seconds', 'roofline_seconds', 'regime'}
    assert isinstance(rows, dict) and keys <= set(rows), 'rows = table[columns].to_dict("list"): a dict of lists'
    assert len(rows['op']) >= 4 and all((len(rows[k]) == len(rows['op']) for k in keys))
    from brrr.grade.context import fraction
    fraction('linear_efficiency', linear_efficiency)
    for name, value in (('linear_seconds', linear_seconds), ('matmul_flop_share', matmul_flop_share), ('matmul_time_share', matmul_time_share)):
        positive(name, value)
    assert matmul_flop_share <= 1 and matmul_time_share <= 1, 'shares are fractions of 1'
    assert choice('small_ops_answer', small_ops_answer)

