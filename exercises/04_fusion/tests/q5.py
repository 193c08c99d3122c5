from otter.test_files import test_case

OK_FORMAT = False

name = "q5"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_shapes(chain_records, measured_speedup, ks):
    from brrr.grade.context import filled
    filled('ks', ks)
    filled('chain_records', chain_records, least=2)
    assert isinstance(chain_records, list) and {(r['variant'], r['k']) for r in chain_records} >= {(v, k) for v in ('fused', 'unfused') for k in ks}, 'chain_records: the records of fusion_speedup(ks=ks, ...)'
    assert isinstance(measured_speedup, dict) and sorted(measured_speedup) == sorted(ks), 'one speed-up per k in ks'

