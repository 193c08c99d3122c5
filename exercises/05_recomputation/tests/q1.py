from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False)
def test_sin_chain(count_saved_bytes):
    import torch
    x = torch.ones(1000, requires_grad=True)
    assert count_saved_bytes(lambda v: v.sin().sin().sin(), x) == 12000, 'each sin keeps its float32 input: 3 x 1000 x 4 bytes'

