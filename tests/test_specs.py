"""The GPU spec table: exact lookup by the name CUDA reports, and peaks derived from properties."""
import pytest

from brrr import specs

# The names CUDA reports, and the table entry each must find (None: not in the table, so the
# detection derives its peaks from the device's properties).
CUDA_NAMES = [
    ("Tesla T4", "T4"), ("NVIDIA L4", "L4"), ("NVIDIA A10", "A10"), ("NVIDIA A10G", None),
    ("NVIDIA L40S", "L40S"),
    ("Tesla V100-SXM2-16GB", "V100"), ("Tesla V100-SXM2-32GB", "V100"), ("Tesla V100-PCIE-16GB", "V100-PCIe"),
    ("Tesla V100-PCIE-32GB", "V100-PCIe"),
    ("NVIDIA A100-SXM4-40GB", "A100-40GB"), ("NVIDIA A100-PCIE-40GB", "A100-40GB"),
    ("NVIDIA A100-SXM4-80GB", "A100-80GB-SXM"), ("NVIDIA A100 80GB PCIe", "A100-80GB-PCIe"),
    ("NVIDIA H100 80GB HBM3", "H100-SXM"), ("NVIDIA H100 PCIe", "H100-PCIe"), ("NVIDIA H100 NVL", "H100-NVL"),
    ("NVIDIA H200", "H200"), ("NVIDIA H200 NVL", "H200-NVL"),
    ("NVIDIA GH200 480GB", "GH200-96GB"), ("NVIDIA GH200 144G HBM3e", "GH200-144GB"),
    ("NVIDIA B200", None), ("NVIDIA RTX PRO 6000 Blackwell Server Edition", None),
    ("NVIDIA RTX A6000", "RTX-A6000"),
    ("NVIDIA GeForce RTX 3060", None), ("NVIDIA GeForce RTX 3070", "RTX-3070"),
    ("NVIDIA GeForce RTX 3080", "RTX-3080"), ("NVIDIA GeForce RTX 3090", "RTX-3090"),
    ("NVIDIA GeForce RTX 4060", None), ("NVIDIA GeForce RTX 4070", None),
    ("NVIDIA GeForce RTX 4080", "RTX-4080"), ("NVIDIA GeForce RTX 4090", "RTX-4090"),
    ("NVIDIA GeForce RTX 5070", "RTX-5070"), ("NVIDIA GeForce RTX 5080", "RTX-5080"),
    ("NVIDIA GeForce RTX 5090", "RTX-5090"),
    ("NVIDIA GeForce RTX 3080 Laptop GPU", None), ("NVIDIA GeForce RTX 4080 Laptop GPU", None),
    ("NVIDIA GeForce RTX 4090 Laptop GPU", None),
]


@pytest.mark.parametrize("name, key", CUDA_NAMES)
def test_each_cuda_name_finds_its_own_entry(name, key):
    assert specs.lookup(name) is (specs.GPU_SPECS[key] if key else None)


@pytest.mark.parametrize("name, other", [
    ("NVIDIA L40S", "NVIDIA L4"), ("NVIDIA GH200 480GB", "NVIDIA H200"),
    ("NVIDIA GeForce RTX 4090 Laptop GPU", "NVIDIA GeForce RTX 4090"),
    ("NVIDIA H100 NVL", "NVIDIA H100 PCIe"), ("NVIDIA H100 NVL", "NVIDIA H100 80GB HBM3"),
    ("NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB"), ("NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe"),
    ("NVIDIA A10G", "NVIDIA A10"), ("NVIDIA H200 NVL", "NVIDIA H200"),
])
def test_a_name_containing_another_models_name_is_not_that_model(name, other):
    assert specs.lookup(other) is not None
    assert specs.lookup(name) is not specs.lookup(other)


def test_case_spaces_hyphens_and_vendor_words_do_not_matter():
    a100 = specs.GPU_SPECS["A100-40GB"]
    for name in ("nvidia a100-sxm4-40gb", "NVIDIA  A100 SXM4 40GB ", "NVIDIA_A100_SXM4_40GB", "A100-SXM4-40GB"):
        assert specs.lookup(name) is a100, name
    assert specs.normalise_name("NVIDIA GeForce RTX 4090") == "rtx 4090"
    assert specs.lookup("NVIDIA T4") is specs.GPU_SPECS["T4"]


@pytest.mark.parametrize("name", ["Some Future Accelerator 9000", "", "NVIDIA", "H100", "A100", "RTX 40",
                                  "NVIDIA A100-SXM4-40GB MIG 1g.5gb", "NVIDIA GeForce RTX 4090 D"])
def test_unknown_names_find_nothing(name):
    assert specs.lookup(name) is None


def test_lookup_wants_a_string():
    with pytest.raises(TypeError, match="device_name"):
        specs.lookup(None)


def test_an_alias_given_to_two_entries_is_an_error():
    t4 = specs.GPU_SPECS["T4"]
    with pytest.raises(ValueError, match="alias"):
        specs._alias_index({"T4": t4, "copy": specs.GpuSpec(**{**t4.as_dict(), "match": ("NVIDIA T4",)})})


def test_every_entry_states_its_figures_and_where_they_come_from():
    for key, s in specs.GPU_SPECS.items():
        assert s.match and all(specs.lookup(alias) is s for alias in s.match), key
        major, minor = s.compute_capability
        assert 7 <= major <= 12 and minor >= 0, key
        assert s.fp16_tensor > s.fp32 > 0 and s.bandwidth > 1e11 and s.l2_bytes >= 2 ** 20, key
        assert ("datasheet" in s.source or "whitepaper" in s.source) and "NVIDIA" in s.source, key
        if s.compute_capability >= (8, 0):   # Ampere on: datasheets quote sparse tensor peaks
            assert "sparsity figures halved" in s.source or "dense" in s.source, key
        else:                                # Volta and Turing have neither TF32 nor BF16 tensor cores
            assert s.tf32_tensor is None and s.bf16_tensor is None, key


def test_names_are_distinct_for_the_book_table():
    names = [s.name for s in specs.GPU_SPECS.values()]
    assert len(set(names)) == len(names)
    assert len(specs.spec_table()) == len(specs.GPU_SPECS)


@pytest.mark.parametrize("cc, lanes", [((7, 0), 64), ((7, 5), 64), ((8, 0), 64), ((8, 6), 128), ((8, 9), 128),
                                       ((9, 0), 128), ((10, 0), 128), ((12, 0), 128)])
def test_fp32_lanes_per_sm_follow_the_cuda_throughput_table(cc, lanes):
    assert specs.fp32_lanes(cc) == lanes


def test_fp64_falls_back_to_the_lane_ratio_of_the_compute_capability():
    assert specs.fp64_peak(specs.GPU_SPECS["H100-SXM"]) == 34e12          # the datasheet figure
    l4 = specs.GPU_SPECS["L4"]                                             # no FP64 on its datasheet
    assert l4.fp64 is None and specs.fp64_peak(l4) == pytest.approx(l4.fp32 * 2 / 128)


A100_LIKE = {"name": "NVIDIA A100-SXM4-40GB", "memoryClockRate": 1215000, "memoryBusWidth": 5120,
             "clockRate": 1410000, "multiProcessorCount": 108, "major": 8, "minor": 0, "l2CacheSize": 40 * 2**20}


def test_derived_spec_applies_the_formulas_to_the_properties():
    p = A100_LIKE
    s = specs.derived_spec("Some GPU", p)
    assert s.bandwidth == pytest.approx(p["memoryClockRate"] * 1e3 * 2 * p["memoryBusWidth"] / 8)
    fp32_lanes = 64   # compute capability 8.0
    assert s.fp32 == pytest.approx(p["multiProcessorCount"] * p["clockRate"] * 1e3 * fp32_lanes * 2)
    assert s.fp64 == pytest.approx(p["multiProcessorCount"] * p["clockRate"] * 1e3 * 32 * 2)
    assert (s.name, s.sm_count, s.l2_bytes, s.compute_capability) == ("Some GPU", 108, 40 * 2**20, (8, 0))
    assert s.tf32_tensor is s.fp16_tensor is s.bf16_tensor is None
    assert "derived from the device's properties, not a datasheet figure" in s.source
    assert s.source.startswith("unknown GPU")


# Properties these GPUs report (clocks in kHz): the formulas must give their datasheet figures.
TYPICAL_PROPERTIES = {
    "A100-40GB": A100_LIKE,
    "H100-SXM": {"memoryClockRate": 2619000, "memoryBusWidth": 5120, "clockRate": 1980000,
                 "multiProcessorCount": 132, "major": 9, "minor": 0},
    "T4": {"memoryClockRate": 5001000, "memoryBusWidth": 256, "clockRate": 1590000,
           "multiProcessorCount": 40, "major": 7, "minor": 5},
    "RTX-4090": {"memoryClockRate": 10501000, "memoryBusWidth": 384, "clockRate": 2520000,
                 "multiProcessorCount": 128, "major": 8, "minor": 9},
}


@pytest.mark.parametrize("key", TYPICAL_PROPERTIES)
def test_derived_peaks_agree_with_the_datasheet(key):
    derived, sheet = specs.derived_spec(key, TYPICAL_PROPERTIES[key]), specs.GPU_SPECS[key]
    assert derived.bandwidth == pytest.approx(sheet.bandwidth, rel=0.015)
    assert derived.fp32 == pytest.approx(sheet.fp32, rel=0.015)


@pytest.mark.parametrize("change", [{"clockRate": 0}, {"memoryBusWidth": None}, {"multiProcessorCount": True},
                                    {"major": "8"}])
def test_derived_spec_names_the_missing_property(change):
    props = {**A100_LIKE, **change}
    (key,) = change
    with pytest.raises(ValueError, match=key):
        specs.derived_spec("Some GPU", props)
