from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_shapes(my_roof, predicted_regimes, measured_regimes, sizes):
    from brrr.grade.context import choice
    import brrr
    from brrr.grade.context import filled
    filled('sizes', sizes)
    assert isinstance(my_roof, brrr.Roofline), 'my_roof should be a brrr.Roofline'
    allowed = ('compute-bound', 'memory-bound', 'overhead-bound')
    for regimes in (predicted_regimes, measured_regimes):
        assert isinstance(regimes, dict) and sorted(regimes) == sorted(sizes), 'one verdict per size in sizes'
        assert all((choice('each verdict', v, allowed) for v in regimes.values())), f'verdicts are among {allowed}'

