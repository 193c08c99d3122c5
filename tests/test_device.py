"""Device detection, spec lookup and the measured CPU peaks (and their cache)."""
import importlib
import json
import os
import subprocess
import sys
import types

import pytest

import brrr
from brrr import specs
from brrr.device import Device, _normalise_dtype

device_module = importlib.import_module("brrr.device")   # `brrr.device` is the function
from brrr import cpu_peaks  # noqa: E402
PEAK_NAMES = tuple(device_module.PEAK_UNITS)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def detect_again_afterwards():
    """Tests here change BRRR_DEVICE and the cache folder: later tests must not get their Device."""
    yield
    device_module._detect.cache_clear()


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
    monkeypatch.setenv("BRRR_QUICK", "1")
    dev = brrr.device(refresh=True)
    if dev.backend == "cuda":
        pytest.skip("a GPU is present")
    assert dev.array_library == "numpy" and dev.spec is None
    assert dev.l2_bytes > 0
    assert dev.peak_bandwidth > 1e8 and dev.peak_flops() > 1e8
    assert dev.peak_flops("float64") > 0
    assert "measured" in dev.source
    cached = json.loads((tmp_path / "cpu_peaks.json").read_text())
    assert cached["schema"] == device_module.CPU_PEAKS_SCHEMA
    (entry,) = cached["peaks"].values()
    assert entry["bandwidth"] == dev.peak_bandwidth   # served from the cache file
    assert entry["rounds"] >= 5
    for name in PEAK_NAMES:   # the peak is the best round; the spread of the rounds is kept
        spread = entry["spread"][name]
        assert 0 < spread["min"] <= spread["median"] <= spread["max"] == entry[name]


def test_forcing_the_cpu(monkeypatch):
    monkeypatch.setenv("BRRR_DEVICE", "cpu")
    assert brrr.device(refresh=True).backend == "cpu"


# --- the CPU peaks cache: measuring replaced by a fake that counts its calls ----------

@pytest.fixture
def fake_measure(monkeypatch, tmp_path):
    """Point the cache at tmp_path and replace the measurement by a fake; returns the list
    of the rates each call produced ({name: [best rate of each round]})."""
    monkeypatch.setenv("BRRR_CACHE_DIR", str(tmp_path))
    made = []

    def fake(quick):
        n = len(made) + 1   # each call gives other rates, so a test can tell which one it got
        made.append({name: [1.0 * n, 3.0 * n, 2.0 * n] for name in PEAK_NAMES})
        return made[-1], "fake measurement"

    monkeypatch.setattr(cpu_peaks, "_measure_cpu_rates", fake)
    return made


def measured_by(rates):
    return {name: max(rates[name]) for name in PEAK_NAMES}


def peaks_of(entry):
    return {name: entry[name] for name in PEAK_NAMES}


def test_peaks_are_measured_once_and_cached_with_their_spread(fake_measure, tmp_path):
    first = device_module.measured_cpu_peaks()
    again = device_module.measured_cpu_peaks()
    assert len(fake_measure) == 1 and again == first
    assert peaks_of(first) == measured_by(fake_measure[0])   # the best round is the peak
    data = json.loads((tmp_path / "cpu_peaks.json").read_text())
    assert data["schema"] == device_module.CPU_PEAKS_SCHEMA
    (entry,) = data["peaks"].values()
    assert entry == first
    for name in PEAK_NAMES:
        rates = sorted(fake_measure[0][name])
        assert entry["spread"][name] == {"min": rates[0], "median": rates[1], "max": rates[2]}
    assert entry["rounds"] == 3 and entry["method"] == "fake measurement"


def test_refresh_measures_again(fake_measure, monkeypatch):
    device_module.measured_cpu_peaks()
    refreshed = device_module.measured_cpu_peaks(refresh=True)
    assert len(fake_measure) == 2 and peaks_of(refreshed) == measured_by(fake_measure[1])
    assert device_module.measured_cpu_peaks() == refreshed

    monkeypatch.setenv("BRRR_DEVICE", "cpu")
    dev = brrr.device(refresh=True)            # re-measures on first use of the peaks...
    assert dev.peak_bandwidth == measured_by(fake_measure[2])["bandwidth"]
    assert brrr.device().peak_flops() == dev.peak_flops() and len(fake_measure) == 3
    dev = brrr.device(refresh=True)            # ...once, also where the caller measures itself
    device_module.measured_cpu_peaks(refresh=True)
    assert dev.peak_bandwidth == measured_by(fake_measure[3])["bandwidth"] and len(fake_measure) == 4
    with pytest.raises(TypeError, match="refresh must be True or False"):
        device_module.measured_cpu_peaks(refresh="yes")
    with pytest.raises(TypeError, match="refresh must be True or False"):
        brrr.device(refresh=1)


def test_a_symlinked_cache_is_replaced_and_its_target_left_untouched(fake_measure, tmp_path, capsys):
    target = tmp_path / "not-the-cache" / "notes.json"
    target.parent.mkdir()
    device_module.measured_cpu_peaks()
    os.replace(tmp_path / "cpu_peaks.json", target)     # a valid cache, but behind a link
    before = target.read_bytes()
    (tmp_path / "cpu_peaks.json").symlink_to(target)
    capsys.readouterr()
    peaks = device_module.measured_cpu_peaks()
    assert target.read_bytes() == before
    assert not (tmp_path / "cpu_peaks.json").is_symlink()
    assert len(fake_measure) == 2 and peaks_of(peaks) == measured_by(fake_measure[1])
    err = capsys.readouterr().err
    assert "symbolic link" in err and str(tmp_path / "cpu_peaks.json") in err


def spoil_entry(change):
    """A spoiler that applies ``change`` to this machine's entry."""
    def spoil(data):
        (entry,) = data["peaks"].values()
        change(entry)
        return data
    return spoil


def set_key(key, value):
    return spoil_entry(lambda entry: entry.__setitem__(key, value(entry)))


SPOILERS = {   # name: (spoiler of the valid cache's data, what the warning says)
    "a list": (lambda data: list(data["peaks"].values()), "JSON array, expected an object"),
    "an older format": (lambda data: data["peaks"], "no 'schema' version"),
    "another schema": (lambda data: {**data, "schema": data["schema"] + 1}, "schema"),
    "peaks not an object": (lambda data: {**data, "peaks": "all"}, "'peaks'"),
    "a missing key": (spoil_entry(lambda entry: entry.pop("flops_float64")), "'flops_float64' is missing"),
    "a string": (set_key("bandwidth", lambda e: "fast"), "'bandwidth' is 'fast', expected a finite positive"),
    "NaN": (set_key("flops_float32", lambda e: float("nan")), "'flops_float32' is nan"),
    "infinity": (set_key("flops_float32", lambda e: float("inf")), "'flops_float32' is inf"),
    "a negative number": (set_key("bandwidth", lambda e: -e["bandwidth"]), "'bandwidth' is -"),
    "zero": (set_key("flops_float64", lambda e: 0), "'flops_float64' is 0"),
    "a boolean": (set_key("bandwidth", lambda e: True), "'bandwidth' is True"),
    "no spread": (spoil_entry(lambda entry: entry.pop("spread")), "'spread'"),
    "a spread out of order": (set_key("spread", lambda e: {**e["spread"], "bandwidth": {
        "min": e["spread"]["bandwidth"]["max"], "median": e["spread"]["bandwidth"]["median"],
        "max": e["spread"]["bandwidth"]["min"]}}), "spread of 'bandwidth'"),
    "a string for quick": (set_key("quick", lambda e: "no"), "'quick' is 'no'"),
}


@pytest.mark.parametrize("spoiler", SPOILERS, ids=list(SPOILERS))
def test_a_cache_of_the_wrong_shape_is_measured_again_with_one_warning(fake_measure, tmp_path, capsys, spoiler):
    spoil, reason = SPOILERS[spoiler]
    path = tmp_path / "cpu_peaks.json"
    device_module.measured_cpu_peaks()
    path.write_text(json.dumps(spoil(json.loads(path.read_text()))))
    capsys.readouterr()
    peaks = device_module.measured_cpu_peaks()
    assert len(fake_measure) == 2 and peaks_of(peaks) == measured_by(fake_measure[1])
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "warning" in err and reason in err and str(path) in err
    assert device_module.measured_cpu_peaks() == peaks and len(fake_measure) == 2   # and the cache is whole again


def test_a_cache_that_is_not_json_is_measured_again(fake_measure, tmp_path, capsys):
    (tmp_path / "cpu_peaks.json").write_text('{"half": ')
    device_module.measured_cpu_peaks()
    err = capsys.readouterr().err
    assert len(fake_measure) == 1 and "not valid JSON" in err and str(tmp_path / "cpu_peaks.json") in err


def test_a_failed_save_keeps_the_old_cache(fake_measure, tmp_path, monkeypatch, capsys):
    path = tmp_path / "cpu_peaks.json"
    device_module.measured_cpu_peaks()
    before = path.read_bytes()

    def disk_full(fd):   # the new cache is written to a temporary file but cannot reach the disk
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    peaks = device_module.measured_cpu_peaks(refresh=True)     # still answers...
    assert peaks_of(peaks) == measured_by(fake_measure[1])
    assert path.read_bytes() == before                         # ...and the old cache is whole
    assert sorted(os.listdir(tmp_path)) == ["cpu_peaks.json", "cpu_peaks.json.lock"]
    err = capsys.readouterr().err
    assert "could not save" in err and str(path) in err


@pytest.mark.parametrize("bad", ["zero", "negative", "nan"])
def test_a_bad_measurement_is_repeated_once_then_named(monkeypatch, tmp_path, bad):
    monkeypatch.setenv("BRRR_CACHE_DIR", str(tmp_path))
    calls = []

    def fake(quick):
        calls.append(quick)
        rates = {name: [float(len(calls))] * 3 for name in PEAK_NAMES}
        rates["bandwidth"] = [{"zero": 0.0, "negative": -1.0, "nan": float("nan")}[bad]] * 3
        return rates, "fake"

    monkeypatch.setattr(cpu_peaks, "_measure_cpu_rates", fake)
    with pytest.raises(RuntimeError, match=r"copy bandwidth \(np.copyto\) came out as"):
        device_module.measured_cpu_peaks()
    assert len(calls) == 2 and not (tmp_path / "cpu_peaks.json").exists()


def test_a_bad_measurement_once_is_replaced_by_the_second(monkeypatch, tmp_path):
    monkeypatch.setenv("BRRR_CACHE_DIR", str(tmp_path))
    made = []

    def fake(quick):
        made.append({name: [float(len(made) + 1)] * 3 for name in PEAK_NAMES})
        if len(made) == 1:
            made[0]["bandwidth"] = [0.0] * 3
        return made[-1], "fake"

    monkeypatch.setattr(cpu_peaks, "_measure_cpu_rates", fake)
    dev = Device(name="cpu", backend="cpu", array_library="numpy", l2_bytes=1)
    assert dev.ridge == made[1]["flops_float32"][0] / made[1]["bandwidth"][0]   # no ZeroDivisionError
    assert len(made) == 2


RACER = """
import importlib, json, os, sys, time
device = importlib.import_module("brrr.cpu_peaks")
marker, ready = sys.argv[1], sys.argv[2]

def fake(quick):
    with open(marker, "a") as f:
        f.write(f"{os.getpid()}\\n")
    time.sleep(0.5)                                   # long enough for the other run to try too
    return {name: [float(os.getpid())] * 3 for name in device.PEAK_UNITS}, "fake"

device._measure_cpu_rates = fake
open(os.path.join(ready, str(os.getpid())), "w").close()
deadline = time.time() + 60
while len(os.listdir(ready)) < 2 and time.time() < deadline:   # start both at once
    time.sleep(0.01)
print(json.dumps(device.measured_cpu_peaks()))
"""


def test_two_runs_at_once_measure_once(tmp_path):
    marker, ready = tmp_path / "measured", tmp_path / "ready"
    ready.mkdir()
    env = dict(os.environ, BRRR_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.Popen([sys.executable, "-c", RACER, str(marker), str(ready)], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], results
    assert len(marker.read_text().splitlines()) == 1
    first, second = (json.loads(out.splitlines()[-1]) for out, _ in results)
    assert first == second


# --- GPU detection, with CuPy or PyTorch replaced by fakes (no GPU needed) --------------------

def fake_cupy(props, attributes=None):
    """A stand-in for the ``cupy`` module on a machine with one GPU whose properties are ``props``
    (and device attributes ``attributes``)."""
    gpu = types.SimpleNamespace(id=0, attributes=dict(attributes or {}))
    cuda = types.SimpleNamespace(is_available=lambda: True, Device=lambda: gpu,
                                 runtime=types.SimpleNamespace(getDeviceProperties=lambda i: dict(props)))
    return types.SimpleNamespace(cuda=cuda)


def detect_gpu(monkeypatch, name, library="cupy", **props):
    """brrr.device() on a machine whose one GPU, seen through ``library``, has these CuPy-style
    properties; measuring the CPU fails the test."""
    monkeypatch.delenv("BRRR_DEVICE", raising=False)

    def no_cpu_peaks(*args, **kwargs):
        raise AssertionError("a GPU got the CPU's peaks")

    monkeypatch.setattr(cpu_peaks, "cached_entry", no_cpu_peaks)
    if library == "cupy":
        monkeypatch.setitem(sys.modules, "cupy", fake_cupy({"name": name.encode(), **props}))
    else:
        import torch
        names = {"multiProcessorCount": "multi_processor_count", "l2CacheSize": "L2_cache_size",
                 "clockRate": "clock_rate", "memoryClockRate": "memory_clock_rate",
                 "memoryBusWidth": "memory_bus_width"}
        fake = types.SimpleNamespace(name=name, **{names.get(k, k): v for k, v in props.items()})
        monkeypatch.setitem(sys.modules, "cupy", None)   # `import cupy` fails
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
        monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: fake)
    return brrr.device(refresh=True)


B200_LIKE = dict(major=10, minor=0, multiProcessorCount=148, clockRate=1965000, memoryClockRate=3996000,
                 memoryBusWidth=8192, l2CacheSize=126 * 2**20)


def test_an_unknown_gpu_gets_peaks_derived_from_its_properties_not_the_cpus(monkeypatch):
    dev = detect_gpu(monkeypatch, "NVIDIA B200", **B200_LIKE)
    p = B200_LIKE
    assert (dev.backend, dev.array_library, dev.sm_count, dev.l2_bytes) == ("cuda", "cupy", 148, 126 * 2**20)
    assert dev.peak_bandwidth == pytest.approx(p["memoryClockRate"] * 1e3 * 2 * p["memoryBusWidth"] / 8)
    assert dev.peak_flops() == pytest.approx(p["multiProcessorCount"] * p["clockRate"] * 1e3 * 128 * 2)
    assert not dev.has_tensor_cores("float16") and dev.peak_flops("float16", True) == dev.peak_flops()
    assert "derived from the device's properties, not a datasheet figure" in dev.source
    from brrr import cli
    from brrr.roofline import has_spec_sheet
    info = cli.device_info(dev)                     # what `brrr info` shows
    assert "derived" in info["peaks_source"] and set(info["peak_flops_per_s"]) == {"float64", "float32"}
    assert not has_spec_sheet(dev.summary())        # the book does not call derived peaks a spec sheet


def test_an_unknown_gpu_seen_through_pytorch_gets_derived_peaks(monkeypatch):
    a10g = dict(major=8, minor=6, multiProcessorCount=80, clockRate=1710000, memoryClockRate=6251000,
                memoryBusWidth=384, l2CacheSize=6 * 2**20)
    dev = detect_gpu(monkeypatch, "NVIDIA A10G", library="torch", **a10g)
    assert (dev.backend, dev.array_library) == ("cuda", "torch")
    assert dev.peak_flops() == pytest.approx(80 * 1710e6 * 128 * 2)   # 128 FP32 lanes per SM on 8.6
    assert dev.peak_bandwidth == pytest.approx(6251e6 * 2 * 384 / 8)
    assert "derived" in dev.source and dev.spec is not specs.GPU_SPECS["A10"]   # not the A10's datasheet


def test_clocks_missing_from_the_properties_are_read_from_the_device_attributes(monkeypatch):
    # A CUDA 13 build of CuPy: cudaDeviceProp has no clockRate, memoryClockRate or memoryBusWidth.
    props = {k: v for k, v in B200_LIKE.items() if k not in ("clockRate", "memoryClockRate", "memoryBusWidth")}
    attributes = {"ClockRate": B200_LIKE["clockRate"], "MemoryClockRate": B200_LIKE["memoryClockRate"],
                  "GlobalMemoryBusWidth": B200_LIKE["memoryBusWidth"]}
    monkeypatch.delenv("BRRR_DEVICE", raising=False)
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy({"name": b"NVIDIA B200", **props}, attributes))
    dev = brrr.device(refresh=True)
    p = B200_LIKE
    assert dev.peak_bandwidth == pytest.approx(p["memoryClockRate"] * 1e3 * 2 * p["memoryBusWidth"] / 8)
    assert dev.peak_flops() == pytest.approx(p["multiProcessorCount"] * p["clockRate"] * 1e3 * 128 * 2)


def test_a_gpu_whose_clocks_cannot_be_read_has_no_peaks_rather_than_the_cpus(monkeypatch):
    dev = detect_gpu(monkeypatch, "NVIDIA B200", library="torch", major=10, minor=0, multiProcessorCount=148)
    assert dev.backend == "cuda" and dev.spec is None and dev.source.startswith("unknown GPU")
    with pytest.raises(RuntimeError, match="NVIDIA B200"):
        dev.peak_bandwidth
    with pytest.raises(RuntimeError, match="clocks"):
        dev.peak_flops()


def test_a_known_gpu_is_found_by_its_exact_name(monkeypatch):
    dev = detect_gpu(monkeypatch, "NVIDIA L40S", major=8, minor=9, multiProcessorCount=142, clockRate=2520000,
                     memoryClockRate=9001000, memoryBusWidth=384, l2CacheSize=96 * 2**20)
    assert dev.spec is specs.GPU_SPECS["L40S"] and dev.peak_bandwidth == 864e9
    assert dev.source.startswith("NVIDIA L40S GPU datasheet")


def test_a_variant_with_another_sm_count_gets_derived_peaks(monkeypatch):
    # The RTX 3080 12GB reports the 10GB card's name but has 70 SMs and a 384-bit bus.
    dev = detect_gpu(monkeypatch, "NVIDIA GeForce RTX 3080", major=8, minor=6, multiProcessorCount=70,
                     clockRate=1710000, memoryClockRate=9501000, memoryBusWidth=384)
    assert dev.spec is not specs.GPU_SPECS["RTX-3080"] and "derived" in dev.source
    assert dev.peak_bandwidth == pytest.approx(9501e6 * 2 * 384 / 8)


def test_t4_has_no_bf16_or_tf32_tensor_cores(monkeypatch):
    dev = detect_gpu(monkeypatch, "Tesla T4", major=7, minor=5, multiProcessorCount=40, clockRate=1590000,
                     memoryClockRate=5001000, memoryBusWidth=256, l2CacheSize=4 * 2**20)
    assert dev.spec is specs.GPU_SPECS["T4"]
    assert not dev.has_tensor_cores("bfloat16") and not dev.has_tensor_cores("float32")
    assert dev.has_tensor_cores("float16")
    assert dev.peak_flops("bfloat16", tensor_cores=True) == dev.peak_flops("float32") == 8.1e12
    assert dev.peak_flops("float16", tensor_cores=True) == 65e12


def test_fp64_without_a_datasheet_figure_uses_the_fp64_lane_ratio():
    l4 = gpu_device("L4")          # compute capability 8.9: 2 FP64 lanes per 128 FP32 lanes
    assert l4.peak_flops("float64") == pytest.approx(30.3e12 / 64)
    assert gpu_device("H100-SXM").peak_flops("float64") == 34e12


# --- the backend, decided once --------------------------------------------------------------------

def test_the_cpu_device_decides_library_torch_device_and_allocation():
    dev = Device(name="cpu", backend="cpu", array_library="numpy", l2_bytes=1 << 20)
    assert not dev.on_gpu and dev.library == "numpy" and dev.torch_device == "cpu"
    a = dev.full(5, 2.0, "float32")
    assert type(a).__module__ == "numpy" and a.dtype.name == "float32" and a.tolist() == [2.0] * 5
    t = dev.full((2, 3), 1.0, "bfloat16", library="torch")
    assert str(t.dtype) == "torch.bfloat16" and tuple(t.shape) == (2, 3) and t.device.type == "cpu"
    dev.synchronize()     # nothing to wait for, and no error


def test_a_gpu_device_without_a_usable_torch_keeps_torch_on_the_cpu(monkeypatch):
    dev = Device(name="GPU", backend="cuda", array_library="cupy", l2_bytes=1 << 20)
    assert dev.on_gpu and dev.library == "cupy"
    import torch
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert dev.torch_device == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert dev.torch_device == "cuda"
