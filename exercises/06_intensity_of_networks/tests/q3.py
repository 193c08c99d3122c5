from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False)
def test_ai_c(net_ai_c, net_counts):
    for key, (macs, W, A) in net_counts.items():
        assert abs(float(net_ai_c[key]) - macs / (W + A)) <= 1e-09 * macs / (W + A), key

