from otter.test_files import test_case

OK_FORMAT = False

name = "q3"
points = None

@test_case(points=1, hidden=False, 
    success_message="net_ai_c follows from your net_counts; the hidden tests grade the counts")
def test_ai_c(net_ai_c, net_counts):
    from brrr.grade.context import filled, positive
    filled('net_counts', net_counts, keys=['alexnet', 'vgg16', 'mobilenet_v1'])
    for key, counts in net_counts.items():
        for count in counts:
            positive(f'net_counts[{key!r}]', count)
    for key, (macs, W, A) in net_counts.items():
        assert abs(float(net_ai_c[key]) - macs / (W + A)) <= 1e-09 * macs / (W + A), key

