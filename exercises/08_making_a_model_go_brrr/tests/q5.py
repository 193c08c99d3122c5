from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(rows_small, rows_large, regime_seconds_small, regime_seconds_large, dominant_small, dominant_large, next_step):
    from brrr.grade.context import choice
    import numbers
    names = {'compute-bound', 'memory-bound', 'overhead-bound'}
    keys = {'op', 'category', 'flops', 'nbytes', 'seconds', 'regime'}
    for rows in (rows_small, rows_large):
        assert isinstance(rows, dict) and keys <= set(rows), 'rows = table[columns].to_dict("list")'
        assert len(rows['op']) >= 10 and all((len(rows[k]) == len(rows['op']) for k in keys))
    for totals in (regime_seconds_small, regime_seconds_large):
        assert isinstance(totals, dict) and totals and (set(totals) <= names)
        assert all((isinstance(v, numbers.Real) and v >= 0 for v in totals.values()))
    assert choice('dominant_small', dominant_small, names) and choice('dominant_large', dominant_large, names)
    assert choice('next_step', next_step), "one letter, 'a' to 'd'"

