from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False, 
    success_message="bytes_fused_3 is right; the hidden tests grade the other counts")
def test_fused(bytes_fused_3):
    import numbers

    def exact(v, expected):
        return isinstance(v, numbers.Real) and (not isinstance(v, bool)) and (float(v) == float(expected))
    assert exact(bytes_fused_3, 8000), '1000 float32 elements read once and written once'

