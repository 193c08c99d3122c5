from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_shape(model_bytes):
    from brrr.grade.context import byte_count
    assert set(model_bytes) == {0, 1, 2, 4, 8, 16, 32}, 'one entry per segment length in EVERY'
    for every, v in model_bytes.items():
        byte_count(f'model_bytes[{every!r}]', v)

