from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False)
def test_table(table):
    import pandas as pd
    assert isinstance(table, pd.DataFrame) and {'op', 'category', 'flops', 'seconds'} <= set(table.columns)

@test_case(points=1, hidden=False)
def test_consistent(table, matmul_flop_share, matmul_time_share):
    mm = table[table['category'] == 'matmul']
    assert abs(matmul_flop_share - mm['flops'].sum() / table['flops'].sum()) < 1e-06
    assert abs(matmul_time_share - mm['seconds'].sum() / table['seconds'].sum()) < 1e-06

