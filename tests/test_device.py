"""Device detection, spec lookup and the measured CPU peaks."""
import json

import pytest

import brrr
from brrr import specs
from brrr.device import Device, _normalise_dtype


@pytest.mark.parametrize("name, key", [
    ("Tesla T4", "T4"), ("NVIDIA L4", "L4"), ("Tesla V100-SXM2-16GB", "V100"),
    ("NVIDIA A100-SXM4-40GB", "A100-40GB"), ("NVIDIA A100-SXM4-80GB", "A100-80GB-SXM"),
    ("NVIDIA A100 80GB PCIe", "A100-80GB-PCIe"), ("NVIDIA H100 80GB HBM3", "H100-SXM"),
    ("NVIDIA H100 PCIe", "H100-PCIe"), ("NVIDIA H200", "H200"),
    ("NVIDIA GeForce RTX 4090", "RTX-4090"),
])
def test_cuda_names_find_their_spec(name, key):
    assert specs.lookup(name) is specs.GPU_SPECS[key]


def test_unknown_gpu_has_no_spec():
    assert specs.lookup("Some Future Accelerator 9000") is None
    with pytest.raises(TypeError, match="device_name"):
        specs.lookup(None)


def test_every_spec_is_complete_and_sourced():
    for key, s in specs.GPU_SPECS.items():
        assert s.fp32 > 0 and s.fp16_tensor > s.fp32, key
        assert s.bandwidth > 1e11 and s.l2_bytes >= 2 ** 20 and s.sm_count > 0, key
        assert "NVIDIA" in s.source, key
        if s.tf32_tensor is not None:
            assert s.tf32_tensor >= s.fp32, key


def test_spec_table_has_a_row_per_gpu_and_ridges():
    table = specs.spec_table()
    assert len(table) == len(specs.GPU_SPECS)
    a100 = table[table["GPU"] == "NVIDIA A100 40GB"].iloc[0]
    assert a100["ridge FP32 (FLOP/B)"] == pytest.approx(19.5e12 / 1555e9)


def gpu_device(key):
    s = specs.GPU_SPECS[key]
    return Device(name=s.name, backend="cuda", array_library="torch", l2_bytes=s.l2_bytes, spec=s)


def test_gpu_peaks_come_from_the_spec():
    dev = gpu_device("A100-40GB")
    assert dev.peak_flops() == 19.5e12
    assert dev.peak_flops("float32", tensor_cores=True) == 156e12
    assert dev.peak_flops("float16", tensor_cores=True) == 312e12
    assert dev.peak_flops("bf16", tensor_cores=True) == 312e12
    assert dev.peak_bandwidth == 1555e9
    assert dev.source.startswith("NVIDIA A100")


def test_t4_has_no_tf32_so_falls_back_to_fp32():
    dev = gpu_device("T4")
    assert not dev.has_tensor_cores("float32")
    assert dev.has_tensor_cores("float16")
    assert dev.peak_flops("float32", tensor_cores=True) == dev.peak_flops("float32")


def test_bad_dtype_and_flag_are_named():
    dev = gpu_device("H100-SXM")
    with pytest.raises(ValueError, match="dtype"):
        dev.peak_flops("int4")
    with pytest.raises(TypeError, match="tensor_cores"):
        dev.peak_flops("float16", tensor_cores="yes")
    assert _normalise_dtype("fp16") == "float16"


def test_live_device_is_cpu_here_with_measured_peaks(monkeypatch, tmp_path):
    monkeypatch.setenv("BRRR_CACHE_DIR", str(tmp_path))
    dev = brrr.device(refresh=True)
    if dev.backend == "cuda":
        pytest.skip("a GPU is present")
    assert dev.array_library == "numpy" and dev.spec is None
    assert dev.l2_bytes > 0
    assert dev.peak_bandwidth > 1e8 and dev.peak_flops() > 1e8
    assert dev.peak_flops("float64") > 0
    assert "measured" in dev.source
    cached = json.loads((tmp_path / "cpu_peaks.json").read_text())
    (entry,) = cached.values()
    assert entry["bandwidth"] == dev.peak_bandwidth   # served from the cache file


def test_forcing_the_cpu(monkeypatch):
    monkeypatch.setenv("BRRR_DEVICE", "cpu")
    assert brrr.device(refresh=True).backend == "cpu"
    brrr.device(refresh=True)
