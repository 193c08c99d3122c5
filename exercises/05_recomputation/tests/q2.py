from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_shape(by_hand, counted):
    import numbers
    for values in (by_hand, counted):
        assert len(values) == 3, 'one value per size in BLOCK_SIZES'
        assert all((isinstance(v, numbers.Real) and v > 0 for v in values)), 'sizes in bytes, > 0'

