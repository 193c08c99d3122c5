from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_shape(by_hand, counted):
    from brrr.grade.context import byte_count
    for name, values in (('by_hand', by_hand), ('counted', counted)):
        assert len(values) == 3, 'one value per size in BLOCK_SIZES'
        for v in values:
            byte_count(f'each value of {name}', v)

