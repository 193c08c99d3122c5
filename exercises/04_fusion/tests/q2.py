from otter.test_files import test_case

OK_FORMAT = False

name = "q2"
points = None

@test_case(points=1, hidden=False)
def test_values(fused_cos2):
    import numpy as np
    x = np.linspace(-3, 3, 101, dtype=np.float32)
    out = np.empty_like(x)
    assert np.allclose(fused_cos2(x, out), np.cos(np.cos(x)), rtol=1e-05, atol=1e-06)

