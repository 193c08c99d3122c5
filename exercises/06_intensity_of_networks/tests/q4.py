from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = None

@test_case(points=1, hidden=False)
def test_types(mi_resnet, mi_mobilenet):
    import brrr
    assert isinstance(mi_resnet, brrr.intensity.ModelIntensity)
    assert isinstance(mi_mobilenet, brrr.intensity.ModelIntensity)

