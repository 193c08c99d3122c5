from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False, 
    success_message="the counts of the standard convolution are right; the hidden tests grade the other kinds")
def test_standard(table2):
    assert tuple(table2['standard']) == (256 * 256 * 9 * 28 * 28, 256 * 256 * 9, 2 * 256 * 28 * 28)

