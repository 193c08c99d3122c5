"""The device table's reading of its ridge columns (brrr.prose.devices, review B:M8): every wording
on small made-up tables, and the sentences against the shipped spec table."""
import pandas as pd
import pytest

from brrr.prose import devices
from brrr.specs import spec_table


def _table(rows):
    """rows: (GPU, FP32 ridge, FP16 tensor-core ridge)."""
    return pd.DataFrame(rows, columns=["GPU", devices.FP32, devices.FP16_TC])


V100, A100, H100, H200 = (*devices.GENERATIONS, devices.FASTER_MEMORY[1])


def test_rising_generations_and_faster_memory_moving_the_ridge_back():
    p = devices.ridges(_table([(V100, 10, 100), (A100, 10, 200), (H100, 20, 300), (H200, 14, 210),
                               ("NVIDIA GeForce RTX 9090", 50, 80)]))
    text = str(p)
    assert "FP32 math reaches its ridge at 10 to 50 FLOP per byte" in text
    assert "FP16 tensor-core math at 80 (NVIDIA GeForce RTX 9090) to 300 (NVIDIA H100 SXM)" in text
    assert "100 to 300 on the data-centre and workstation parts, 80 to 80 on the GeForce cards" in text
    assert "is 1.6 to 20 times its FP32 one" in text
    assert p.facts["generations"] == "rising" and "has moved to the right (Tesla V100 SXM2 100 to" in text
    assert "moves it back by 30%, from 300 to 210." in text and p.facts["faster_memory"] == pytest.approx(-0.3)


def test_generations_not_rising_and_faster_memory_not_lowering_it():
    p = devices.ridges(_table([(V100, 10, 200), (A100, 10, 150), (H100, 20, 300), (H200, 20, 300)]))
    text = str(p)
    assert p.facts["generations"] == "not rising" and "has not moved steadily to the right" in text
    assert "leaves it at 300, against 300." in text and "moves it back" not in text
    assert "GeForce" not in text          # no consumer card in the table


def test_a_table_without_the_named_gpus_says_only_the_ranges():
    p = devices.ridges(_table([("GPU A", 10, 5), ("GPU B", 20, None)]))
    text = str(p)
    assert "generations" not in text and "H200" not in text
    assert "times its FP32 one" not in text        # GPU A's tensor-core ridge is below its FP32 one
    assert "tensor-core math at 5 (GPU A) to 5 (GPU A)" in text


def test_the_shipped_table_reads_as_the_review_checked():
    table = spec_table()
    p = devices.ridges(table)
    lo, hi = p.facts["fp16_tensor"]
    assert lo == table[devices.FP16_TC].min() and hi == table[devices.FP16_TC].max()
    h100, h200 = (table.loc[table["GPU"] == g, devices.FP16_TC].iloc[0] for g in devices.FASTER_MEMORY)
    assert p.facts["faster_memory"] == pytest.approx(h200 / h100 - 1)
    assert set(devices.GENERATIONS) <= set(table["GPU"]) and p.facts["generations"] == "rising"
