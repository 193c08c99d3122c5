from otter.test_files import test_case

OK_FORMAT = False

name = "q6"
points = None

@test_case(points=1, hidden=False, 
    success_message="the answers have the right form; the hidden tests grade their values")
def test_shapes(batch_records, verdicts, batches):
    from brrr.grade.context import filled
    filled('batches', batches, least=2)
    filled('batch_records', batch_records, least=2)
    assert [r['size'] for r in batch_records] == list(batches), 'batch_records should be the records of double_the_batch(..., batches)'
    assert isinstance(verdicts, dict) and sorted(verdicts) == sorted(batches[1:]), 'one verdict per batch size except the first'

