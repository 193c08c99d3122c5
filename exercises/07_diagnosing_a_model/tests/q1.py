from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_format(regimes, remedy):
    from brrr.grade.context import REGIMES, choice
    assert isinstance(regimes, dict) and set(regimes) == {'matmul', 'layer_norm', 'tiny_add'}
    for op, r in regimes.items():
        choice(f'regimes[{op!r}]', r, REGIMES)
    assert isinstance(remedy, dict), 'remedy maps each regime to a letter'
    assert {choice('each key of remedy', k, REGIMES) for k in remedy} == set(REGIMES), 'remedy maps each regime to a letter'
    for k, v in remedy.items():
        choice(f'remedy[{k!r}]', v, ('a', 'b', 'c'))

