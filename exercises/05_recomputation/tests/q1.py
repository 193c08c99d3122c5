from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False, 
    success_message="the sin3 count is right; the hidden tests grade the other cases")
def test_sin3(hook_counts):
    assert hook_counts['sin3'] == 12000, 'each sin keeps its float32 input: 3 x 1000 x 4 bytes'

