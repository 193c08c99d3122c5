from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False, 
    success_message="cos2_check is cos(cos(x)) in float32; the hidden tests grade the rest")
def test_float32(cos2_check, x_check):
    import numpy as np
    assert np.array_equal(np.asarray(x_check), np.linspace(-3, 3, 101, dtype=np.float32)), 'x_check is given: keep it as the cell sets it'
    assert np.allclose(np.asarray(cos2_check), np.cos(np.cos(x_check)), rtol=1e-05, atol=1e-06), 'out[i] should be cos(cos(x[i]))'

