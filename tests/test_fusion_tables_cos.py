"""brrr.fusion_tables.cos_cases: the cos table names the roofline's regime as the roofline's, and
shows how fast each case ran against the roofline's time."""
import pytest

from brrr.fusion_tables import cos_cases
from brrr.results import Result


def test_cos_cases_columns_and_share():
    rows = [(1, "fused", 4.0, 1.0), (2, "fused", 8.0, 1.0), (2, "unfused", 8.0, 2.0)]
    records = [{"k": k, "variant": v, "seconds": t, "predicted_seconds": p, "predicted_regime": "memory-bound",
                "fuser": "brrr", "library": "numba", "op": "cos", "n": 10} for k, v, t, p in rows]
    table = cos_cases(Result("fusion_speedup", records, {"device": {"name": "x"}})).to_frame()
    assert list(table["case"]) == ["cos", "cos().cos(), fused", "cos().cos(), unfused"]
    assert list(table.columns) == ["case", "time per call", "roofline time", "share of roofline speed",
                                   "roofline regime (cos = 1 FLOP)"]
    assert list(table["share of roofline speed"]) == pytest.approx([0.25, 0.125, 0.25])
    assert set(table["roofline regime (cos = 1 FLOP)"]) == {"memory-bound"}
