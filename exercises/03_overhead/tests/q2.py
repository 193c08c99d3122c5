from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_records(sweep_records, sizes, fit):
    assert sorted((r['size'] for r in sweep_records)) == sorted(sizes), "sweep_records should be the records of time_vs_size(('torch',), sizes=sizes)"
    assert all((r['library'] == 'torch' for r in sweep_records))
    assert {'overhead', 'per_element', 'crossover'} <= set(fit), "fit should be fit_overhead's dict"

