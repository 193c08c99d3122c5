from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False, 
    success_message="flops_small is right; the hidden tests grade the other counts")
def test_small(flops_small):
    assert flops_small == 48, 'a (2 x 3) @ (3 x 4) product has 8 outputs, each 3 multiplications and 3 additions'

