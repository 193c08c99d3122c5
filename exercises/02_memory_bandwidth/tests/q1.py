from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False, 
    success_message="traffic_scale is right; the hidden tests grade the triad and the chains")
def test_scale(traffic_scale):
    assert tuple((float(v) for v in traffic_scale)) == (8000000.0, 1000000.0), '(bytes, flops): 4 bytes read and 4 written per element, one multiply'

