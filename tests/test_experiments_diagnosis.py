"""brrr.experiments.diagnosis: the remedies' records (record schema 2) and their page tables."""
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from brrr import reference  # noqa: E402
from brrr.experiments import diagnosis  # noqa: E402
from brrr.results import Result  # noqa: E402


def test_precision_remedy_records_nbytes():
    torch.manual_seed(0)
    result = diagnosis.precision_remedy(nn.Linear(16, 16), torch.randn(4, 16), dtype="bfloat16")
    f32, low = result.records
    assert (f32["dtype"], low["dtype"]) == ("float32", "bfloat16")
    assert "bytes" not in f32 and f32["nbytes"] == 2 * low["nbytes"] > 0    # half the bytes per value
    assert f32["flops"] == low["flops"] == 2 * 4 * 16 * 16
    assert "bytes moved" in diagnosis.precision_table(result).to_html()


def test_tables_read_the_shipped_reference_records():
    precision = reference.load("profile_precision", backend=None)
    batches = reference.load("profile_batches", backend=None)
    assert precision and batches
    html = diagnosis.precision_table(precision[0], precision).to_html()
    assert "bytes moved" in html and "(reference)" in html and "nan" not in html.lower()
    assert "time per token" in diagnosis.batches_table(batches[0], batches).to_html()


def test_reference_headers_name_the_device_briefly():
    run = Result("compile_block", records=[{"variant": "eager", "seconds": 1e-3}],
                 meta={"device": {"name": "NVIDIA H100 80GB HBM3"}})
    html = diagnosis.compile_table(run, [run]).to_html()
    assert "time per call, H100 80GB HBM3 (reference)" in html


def test_a_gpu_runs_whole_run_times_from_an_older_clock_are_marked_in_the_tables():   # review 07 M7-2
    def run(clock):
        return Result("compile_block", records=[{"variant": "eager", "seconds": 1e-3, "clock": clock}],
                      meta={"device": {"name": "NVIDIA H100 80GB HBM3", "backend": "cuda"}})
    assert "time per call, this run (older clock: not compared)" in diagnosis.compile_table(run(None)).to_html()
    beside = diagnosis.compile_table(run("host"), [run(None)]).to_html()
    assert "H100 80GB HBM3 (reference, older clock: not compared)" in beside
    assert "older clock" not in diagnosis.compile_table(run("host"), [run("host")]).to_html()


def test_batch_remedy_keeps_each_profiles_rows_and_how_its_whole_run_was_timed():   # review 07_08 M7-1, M7-2
    from brrr.transformer import small_block
    result = diagnosis.batch_remedy(small_block(hidden=32, heads=2, ffn=64).eval(), batches=(1, 2), seq=4)
    for rec in result.records:
        assert len(rec["rows"]) == rec["ops"] and set(rec["rows"][0]) == set(diagnosis.ROW_FIELDS)
        assert rec["model_clock"] == "host" and rec["replay_floor_seconds"] > 0
    assert "matmul FLOP/byte" in diagnosis.batches_table(result).to_html()


def test_a_gpus_batch_rows_are_judged_by_their_device_time():   # chapter 7's rule, as for every GPU profile
    from brrr.experiments import diagnosis_records
    from brrr.prose.diagnosis import row_regime
    row = {"op": "addmm", "module": "block.ffn", "category": "matmul", "dtype": "float32", "flops": 2e9,
           "nbytes": 1e7, "seconds": 4e-5, "roofline_seconds": 3e-5}
    gpu = {"name": "NVIDIA H100 80GB HBM3", "backend": "cuda", "peak_flops_float32": 6.7e13, "peak_bandwidth": 3.35e12}
    [table] = diagnosis_records.batch_profiles(Result("profile_batches", [{"rows": [row]}], {"device": gpu}))
    assert row_regime(table, next(table.itertuples()), 1e-5).device_time
