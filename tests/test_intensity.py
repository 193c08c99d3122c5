"""brrr.intensity: the DI paper's Table II/III exactly, its Table VIII rows, the same counts
however a network is written (modules or functional code, checked against hand counts), and clear errors."""
import math

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

from brrr import intensity as I  # noqa: E402
from brrr import models  # noqa: E402


def meta(name):
    with torch.device("meta"):
        return models.get(name)


# --- Table II / III ----------------------------------------------------------------------

def test_table_iii_exact():
    table = I.convolution_table()          # the paper's defaults: 256, 256, 28x28, 3x3, g=4
    digits = {"arithmetic_intensity": 2, "macs": 3, "weight_reuse": 0, "activation_reuse": 3}
    for kind, row in I.PAPER_TABLE_III.items():
        for col, value in row.items():
            assert round(table.loc[kind, col], digits[col]) == value, (kind, col)


def test_table_ii_standard_by_hand():
    c = I.conv_intensity("standard", M=256, N=256, S_o=28, S_k=3)
    assert c.macs == 256 * 256 * 9 * 784 == 462_422_016
    assert c.weights == 256 * 256 * 9
    assert c.activations == 512 * 784
    assert c.weight_reuse == 784                        # S_o^2
    assert c.activation_reuse == pytest.approx(256 * 256 / 512 * 9)
    assert c.arithmetic_intensity == pytest.approx(c.macs / (c.weights + c.activations))


@pytest.mark.parametrize("kind,g", [("standard", 1), ("pointwise", 1), ("group", 4), ("depthwise", 1)])
def test_table_ii_formulas(kind, g):
    M = N = 64
    S_o, S_k = 14, 3
    c = I.conv_intensity(kind, M, N, S_o, S_k, g)
    k2 = 1 if kind == "pointwise" else S_k ** 2
    groups = M if kind == "depthwise" else g
    assert c.weight_reuse == S_o ** 2                   # the same for every kind
    expected_ai = {"standard": M * N * k2 * S_o**2 / (M * N * k2 + (M + N) * S_o**2),
                   "pointwise": M * N * S_o**2 / (M * N + (M + N) * S_o**2),
                   "group": M * N * k2 * S_o**2 / (M * N * k2 + g * (M + N) * S_o**2),
                   "depthwise": M * k2 * S_o**2 / (M * k2 + 2 * M * S_o**2)}[kind]
    assert c.arithmetic_intensity == pytest.approx(expected_ai)
    assert c.activation_reuse == pytest.approx(M * N / (M + N) * k2 / groups)


def test_conv_matches_a_traced_torch_layer():
    """Table II's 'layer' counts are what the model walk finds on one nn.Conv2d."""
    for kind, groups, k in (("standard", 1, 3), ("pointwise", 1, 1), ("group", 4, 3), ("depthwise", 32, 3)):
        conv = nn.Conv2d(32, 32, k, padding=k // 2, groups=groups, bias=False)
        got = I.model_intensity(conv, (1, 32, 16, 16), convention="layer")
        want = I.conv_intensity(kind, 32, 32, 16, 3, 4 if kind == "group" else 1)
        assert (got.macs, got.weights, got.activations) == (want.macs, want.weights, want.activations)
        assert got.layers.loc[0, "kind"] == kind


def test_conv_intensity_result_is_plain_data():
    c = I.conv_intensity("group", 256, 256, 28, 3, g=4)
    d = c.as_dict()
    assert d["macs"] == c.macs and d["arithmetic_intensity"] == c.arithmetic_intensity
    assert "group" in repr(c) and "M_c/A" in repr(c)
    assert I.conv_intensity("depthwise", 8, 8, 4, 3).g == 8
    assert I.conv_intensity("pointwise", 8, 8, 4, 3).S_k == 1


@pytest.mark.parametrize("args,exc,word", [
    (("dilated", 8, 8, 4, 3), ValueError, "kind"),
    (("standard", 0, 8, 4, 3), ValueError, "M"),
    (("standard", 8, 8.0, 4, 3), TypeError, "N"),
    (("standard", 8, 8, -1, 3), ValueError, "S_o"),
    (("standard", 8, 8, 4, True), TypeError, "S_k"),
    (("group", 8, 8, 4, 3, 3), ValueError, "g must divide"),
    (("group", 8, 12, 4, 3, 8), ValueError, "g must divide"),
    (("depthwise", 8, 16, 4, 3), ValueError, "N = M"),
    (("depthwise", 8, 8, 4, 3, 4), ValueError, "g = M"),
    (("standard", 8, 8, 4, 3, 2), ValueError, "kind='group'"),
])
def test_conv_intensity_rejects_bad_input(args, exc, word):
    with pytest.raises(exc, match=word):
        I.conv_intensity(*args)


# --- DI, d_f and the paper's inconsistencies ---------------------------------------------------

def test_di_and_disparity_formulas():
    assert I.data_type_aware_intensity(100, 10, 20, alpha=0.8) == pytest.approx(0.25 * (0.8 * 5 + 0.2 * 10))
    assert I.disparity(10, 12) == pytest.approx(-20)
    # Eq. 5 of the paper is the closed form with alpha = 0.75 ...
    for a_over_w in (0.03, 0.5, 1.0, 4.8, 30):
        assert I.disparity_closed_form(a_over_w, alpha=0.75) == pytest.approx(75 - 6.25 * (a_over_w + 3 / a_over_w))
    # ... and the closed form equals the definition for any alpha.
    M, W, A = 1e9, 3e6, 20e6
    ai_c = M / (W + A)
    for alpha in (0.0, 0.75, 0.8, 1.0):
        di = I.data_type_aware_intensity(M, W, A, alpha)
        assert I.disparity(ai_c, di) == pytest.approx(I.disparity_closed_form(A / W, alpha))
    with pytest.raises(ValueError, match="alpha"):
        I.data_type_aware_intensity(1, 1, 1, alpha=1.5)


def test_paper_d_f_column_uses_rounded_values():
    """Table VIII's d_f is (AI_c - DI)/AI_c of the *rounded* AI_c and DI of its row."""
    for name, (_, _, ai_c, di, _, d_f) in I.PAPER_TABLE_VIII.items():
        assert abs(I.disparity(ai_c, di) - d_f) <= 1, name
    # ... and its DI column is Eq. 4 with alpha = 0.8 (not Eq. 5's 0.75).
    wr, ar, _, di, _, _ = I.PAPER_TABLE_VIII["VGG-16"]
    assert 0.25 * (0.8 * ar + 0.2 * wr) == pytest.approx(di, abs=0.5)
    assert abs(0.25 * (0.75 * ar + 0.25 * wr) - di) > 5


# --- whole networks ------------------------------------------------------------------------------

def test_vgg16_row_of_table_viii():
    r = I.model_intensity(meta("vgg16"), (1, 3, 224, 224))
    assert r.convention == "blobs" and r.alpha == 0.8
    assert r.weights == 138_357_544
    assert r.macs == 15_470_264_320          # 15.35 G in convolutions + 0.12 G in FC layers
    paper = dict(zip(I.TABLE_VIII_COLUMNS, I.PAPER_TABLE_VIII["VGG-16"]))
    for col in ("weight_reuse", "activation_reuse", "ai_c", "di", "a_over_w"):
        assert getattr(r, col) == pytest.approx(paper[col], rel=0.01), col
    assert round(I.disparity(round(r.ai_c), round(r.di))) == pytest.approx(paper["d_f"], abs=1)


@pytest.mark.parametrize("key,rel", [("nin", 0.015), ("resnet50", 0.015), ("mobilenet_v1", 0.03),
                                     ("squeezenet1_1", 0.03), ("squeezenet1_0", 0.04)])
def test_other_rows_of_table_viii(key, rel):
    """The networks whose definitions match the paper's models come within a few per cent."""
    r = I.model_intensity(meta(key), models.INPUT_SHAPES[key])
    paper = dict(zip(I.TABLE_VIII_COLUMNS, I.PAPER_TABLE_VIII[I.PAPER_NAMES[key]]))
    for col in ("weight_reuse", "activation_reuse", "ai_c", "di"):
        # the paper prints whole numbers: allow half a unit of rounding on top
        assert abs(getattr(r, col) - paper[col]) <= rel * paper[col] + 0.5, col


def test_alexnet_and_mobilenets_keep_the_papers_story():
    """AlexNet: A << W, AI_c ~ M_c/W and d_f hugely negative. MobileNets: M_c/A tiny, d_f positive."""
    alex = I.model_intensity(meta("alexnet"), models.INPUT_SHAPES["alexnet"])
    assert alex.a_over_w < 0.05 and alex.d_f < -400
    assert alex.ai_c == pytest.approx(alex.weight_reuse, rel=0.05)
    assert alex.activation_reuse > 25 * alex.weight_reuse
    for key in ("mobilenet_v1", "mobilenet_v2"):
        r = I.model_intensity(meta(key), models.INPUT_SHAPES[key])
        assert r.activation_reuse < 30 and r.d_f > 0 and r.di < alex.di / 5


def test_blob_counting_on_a_small_model():
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
                        nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(), nn.Linear(4 * 4 * 4, 10))
    r = I.model_intensity(net, (1, 3, 8, 8))
    # input 192; conv 256; BatchNorm + Scale 2 x 256; ReLU 256; pool 64; Flatten 0; Dropout 64; FC 10
    assert r.activations == 192 + 256 + 512 + 256 + 64 + 0 + 64 + 10
    assert r.weights == (3 * 9 * 4 + 4) + 8 + (64 * 10 + 10)
    assert r.macs == 8 * 8 * 4 * 27 + 64 * 10
    layer = I.model_intensity(net, (1, 3, 8, 8), convention="layer")
    # per layer ifmap + ofmap: conv 192+256, BN 512, ReLU 512, pool 256+64, Dropout 128, FC 64+10;
    # Flatten is a view that reads and writes nothing (as nn.Identity, or x.view(...) written functionally)
    assert layer.activations == 448 + 512 + 512 + 320 + 0 + 128 + 74
    assert (layer.macs, layer.weights) == (r.macs, r.weights)
    assert list(r.layers["layer"])[0] == "input" and "input" not in list(layer.layers["layer"])
    assert r.layers["activations"].sum() == r.activations


def test_residual_add_and_concat_are_counted():
    r = I.model_intensity(meta("resnet18"), (1, 3, 224, 224))
    adds = r.layers[r.layers["type"] == "Add"]
    assert len(adds) == 8
    assert (adds["in_elements"] == 2 * adds["out_elements"]).all()
    sq = I.model_intensity(meta("squeezenet1_0"), (1, 3, 227, 227), convention="layer")
    assert (sq.layers["type"] == "Concat").sum() == 8


def test_layer_convention_counts_more_than_blobs_on_vgg16():
    """'layer' counts each intermediate tensor as one layer's output and the next one's input."""
    blobs = I.model_intensity(meta("vgg16"), (1, 3, 224, 224))
    layer = I.model_intensity(meta("vgg16"), (1, 3, 224, 224), convention="layer")
    assert layer.macs == blobs.macs and layer.weights == blobs.weights
    assert 1.8 * blobs.activations < layer.activations < 2.2 * blobs.activations
    assert layer.ai_c < blobs.ai_c and layer.di < blobs.di


def test_batch_scales_macs_and_activations_not_weights():
    one = I.model_intensity(meta("mobilenet_v1"), (1, 3, 224, 224))
    four = I.model_intensity(meta("mobilenet_v1"), (4, 3, 224, 224))
    assert four.macs == 4 * one.macs and four.activations == 4 * one.activations
    assert four.weights == one.weights and four.weight_reuse == pytest.approx(4 * one.weight_reuse)


def test_real_weights_give_the_same_counts_as_meta():
    net = models.squeezenet1_1()
    assert I.model_intensity(net, (1, 3, 64, 64)).as_dict() == I.model_intensity(
        meta("squeezenet1_1"), (1, 3, 64, 64)).as_dict()
    assert not net.training


def test_model_intensity_repr_and_dict():
    r = I.model_intensity(meta("vgg16"), (1, 3, 224, 224), name="VGG-16")
    assert "VGG-16" in repr(r) and "DI=113" in repr(r)
    d = r.as_dict()
    assert d["macs"] == r.macs and d["di"] == r.di and d["convention"] == "blobs"


def test_compare_with_paper_table():
    t = I.compare_with_paper(["vgg16", "resnet50"])
    assert list(t.index) == ["VGG-16", "ResNet-50"]
    assert t.loc["VGG-16", "ai_c (paper)"] == 93
    assert t.loc["VGG-16", "ai_c"] == pytest.approx(93, rel=0.01)


def test_roofline_points():
    pts = I.roofline_points(nn.Sequential(nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.ReLU(),
                                          nn.Flatten(), nn.Linear(16 * 10 * 10, 5)), (1, 8, 10, 10))
    assert list(pts["kind"]) == ["standard", "fc"]
    conv = pts.iloc[0]
    assert conv["flops"] == 2 * 16 * 100 * 8 * 9
    assert conv["nbytes"] == 4 * (16 * 8 * 9 + 8 * 100 + 16 * 100)
    assert conv["intensity"] == pytest.approx(conv["flops"] / conv["nbytes"])
    half = I.roofline_points(nn.Conv2d(8, 16, 3).half(), (1, 8, 10, 10))
    assert half["nbytes"].iloc[0] == 2 * (16 * 8 * 9 + 16 + 8 * 100 + 16 * 64)


# --- errors ------------------------------------------------------------------------------------

def test_errors_name_the_problem():
    net = meta("vgg16")
    with pytest.raises(TypeError, match="torch.nn.Module"):
        I.model_intensity(lambda x: x, (1, 3, 224, 224))
    with pytest.raises(ValueError, match="rank 2"):
        I.model_intensity(net, (224, 224))
    with pytest.raises(ValueError, match="channels"):
        I.model_intensity(net, (1, 1, 224, 224))
    with pytest.raises(ValueError, match="positive integers"):
        I.model_intensity(net, (1, 3, 0, 224))
    with pytest.raises(TypeError, match="input_shape"):
        I.model_intensity(net, "1,3,224,224")
    with pytest.raises(ValueError, match="convention"):
        I.model_intensity(net, (1, 3, 224, 224), convention="caffe")
    with pytest.raises(ValueError, match="alpha"):
        I.model_intensity(net, (1, 3, 224, 224), alpha=2)
    # VGG-16's classifier wants 7x7 feature maps: 64x64 input fails inside the forward pass
    with pytest.raises(RuntimeError, match=r"model failed on input_shape=\(1, 3, 64, 64\): "):
        I.model_intensity(net, (1, 3, 64, 64))
    with pytest.raises(ValueError, match="Conv or Linear"):
        I.model_intensity(nn.Sequential(nn.ReLU()), (1, 4))
    with pytest.raises(ValueError, match="names"):
        I.compare_with_paper(["googlenet"])


def test_an_input_that_cannot_fit_is_refused_before_allocating():
    net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU())
    with pytest.raises(ValueError, match=r"input_shape=\(1, 3, 100000, 100000\) needs .* GiB .*meta"):
        I.model_intensity(net, (1, 3, 100000, 100000))
    assert not net[0]._forward_hooks, "no hook is left behind"
    meta_net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU()).to("meta")
    assert I.model_intensity(meta_net, (1, 3, 100000, 100000)).macs > 0   # meta: shapes only, no memory


def test_tracing_leaves_every_module_in_its_own_mode():
    net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.Dropout(0.5)).train()
    net[2].eval()                                  # a submodule in eval mode inside a training model
    I.model_intensity(net, (1, 3, 16, 16))
    assert net.training and net[0].training and net[1].training and not net[2].training


def test_measure_conv_record(monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")
    rec = I.measure_conv("depthwise", M=16, N=16, S_o=8, S_k=3)
    assert rec["flops"] == 2 * 16 * 9 * 64
    assert rec["nbytes"] == 4 * (16 * 9 + 2 * 16 * 64)
    assert rec["seconds"] > 0 and rec["achieved_flops"] == pytest.approx(rec["flops"] / rec["seconds"])
    assert rec["roofline_seconds"] == pytest.approx(rec["flops"] / rec["attainable_flops"])
    assert math.isfinite(rec["efficiency"])


# --- tables and helpers for the chapter page ------------------------------------------------------

def test_table_iii_beside_paper_rounds_to_the_papers_digits():
    t = I.table_iii_beside_paper()
    assert list(t["convolution"]) == list(I.KINDS)
    assert (t["intensity (brrr)"] == t["intensity (paper)"]).all()
    assert t.loc[t["convolution"] == "pointwise", "intensity (brrr)"].item() == 0.24   # 0.2359 to 2 digits


def test_page_tables_write_no_raw_subscripts():
    """B2:C1: the page's table headers and metric names read 'Mc/W' and 'AIc', never TeX's 'M_c' or 'AI_c'."""
    from brrr import intensity_energy, intensity_predict
    names = list(I.table_iii_beside_paper().columns) + list(intensity_energy.table_ix_recomputed()["metric"])
    names += list(intensity_predict.PREDICTIONS.values())
    assert not [n for n in names if "_" in n]
    assert "Mc/W (brrr)" in names and "AIc" in names and "one kernel at AIc" in names


def test_largest_differences_are_beyond_rounding():
    t = I.compare_with_paper(["vgg16", "alexnet"])
    d = I.largest_differences(t)
    assert d.loc["VGG-16", "largest difference (%)"] == 0           # every column rounds to the paper's
    alex = t.loc["AlexNet"]
    # A/W 0.034 rounds to the paper's 0.03, so AlexNet's largest difference is in M_c/A
    assert d.loc["AlexNet", "column"] == "activation_reuse"
    expected = (abs(alex["activation_reuse"] - 362) - 0.5) / 362 * 100
    assert d.loc["AlexNet", "largest difference (%)"] == pytest.approx(expected)
    view = I.table_viii_view(t)
    assert ("AIc", "paper") in view.columns and ("df (%)", "brrr") in view.columns
    # review B:C1: plain headers, and no "brrr, rounded" column (the prose says what it showed)
    assert not any("_" in a or "rounded" in b for a, b in view.columns[1:])
    assert ("off by", "beyond rounding, %") in view.columns
    assert t.loc["VGG-16", "macs"] == 15_470_264_320 and t.loc["AlexNet", "input_size"] == 227


def test_readable_and_totals_tables():
    kinds = I.readable(I.convolution_table(normalize=False))
    assert kinds.columns[0] == "convolution" and "Mc/A (MACs per activation)" in kinds.columns
    r = I.model_intensity(meta("nin"), (1, 3, 227, 227), name="NiN")
    t = I.totals_table([r])
    assert t.loc[0, "network"] == "NiN" and t.loc[0, "DI (MACs per element)"] == pytest.approx(r.di)


def test_network_layers_and_device_roof():
    layers = I.network_layers(("vgg16",))
    assert list(layers) == ["VGG-16"] and (layers["VGG-16"]["kind"] == "fc").sum() == 3
    roof = I.device_roof()
    assert roof.name.endswith(("spec sheet", "measured roof"))


def test_measure_convs_keeps_its_roof(monkeypatch):
    monkeypatch.setenv("BRRR_QUICK", "1")
    r = I.measure_convs(kinds=("depthwise",), M=16, N=16, S_o=8, progress=False)
    assert r.meta["roof"]["peak_flops"] > 0 and r.meta["cache_bytes"] > 0
    t = I.conv_table(r)
    rec = r.records[0]
    assert t.loc[0, "share of the roof"] == pytest.approx(rec["achieved_flops"] / rec["attainable_flops"])


# --- counting by operator: a network counts the same however it is written ---------------------

def totals(net, shape, convention="blobs"):
    r = I.model_intensity(net, shape, convention)
    return r.macs, r.weights, r.activations


class ResidualModules(nn.Module):
    """conv-BN-ReLU-conv-BN, add the input, ReLU, every step a module (ReLU modules, an Add module)."""

    def __init__(self, c=4):
        super().__init__()
        self.conv1, self.conv2 = (nn.Conv2d(c, c, 3, padding=1, bias=False) for _ in range(2))
        self.bn1, self.bn2 = nn.BatchNorm2d(c), nn.BatchNorm2d(c)
        self.relu1, self.relu2, self.add = nn.ReLU(), nn.ReLU(), models.Add()

    def forward(self, x):
        out = self.bn2(self.conv2(self.relu1(self.bn1(self.conv1(x)))))
        return self.relu2(self.add(out, x))


class ResidualFunctional(ResidualModules):
    """The same block as torchvision writes it: F.relu and ``out += identity``."""

    def forward(self, x):
        identity = x
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return F.relu(out)


class ResidualBare(ResidualModules):
    """The same block calling no module at all: F.conv2d, F.batch_norm, torch.relu_, ``out + x``."""

    def forward(self, x):
        def bn(t, m):
            return F.batch_norm(t, m.running_mean, m.running_var, m.weight, m.bias, False)
        out = torch.relu_(bn(F.conv2d(x, self.conv1.weight, padding=1), self.bn1))
        out = bn(F.conv2d(out, self.conv2.weight, padding=1), self.bn2)
        return torch.relu(out + x)


def test_residual_block_by_hand_however_written():
    c, s = 4, 8
    n = c * s * s                          # 256 elements in every feature map of the block
    macs = 2 * n * c * 9                   # two 3x3 convolutions, c input channels: 18,432
    weights = 2 * (c * c * 9) + 2 * (2 * c)  # two filters banks, two BatchNorms (scale, shift): 304
    # input n; conv1 n; BN + Scale 2n; ReLU n; conv2 n; BN + Scale 2n; add n; ReLU n
    blobs = n + n + 2 * n + n + n + 2 * n + n + n
    # ifmap + ofmap: conv, BN and ReLU 2n each, twice; add 3n (two inputs, one output)
    layer = 2 * (2 * n) + 2 * (2 * n) + 2 * (2 * n) + 3 * n
    assert (blobs, layer) == (10 * n, 15 * n) == (2560, 3840)
    for block in (ResidualModules, ResidualFunctional, ResidualBare):
        assert totals(block(c), (1, c, s, s)) == (macs, weights, blobs), block.__name__
        assert totals(block(c), (1, c, s, s), "layer") == (macs, weights, layer), block.__name__
        with torch.device("meta"):
            assert totals(block(c), (1, c, s, s)) == (macs, weights, blobs), block.__name__


class FireModules(models.Fire):
    """SqueezeNet's fire module as brrr.models writes it: ReLU modules and a Concat module."""


class FireFunctional(models.Fire):
    """The same fire module with F.relu and torch.cat (as torchvision writes it)."""

    def forward(self, x):
        x = F.relu(self.squeeze[0](x))
        return torch.cat([F.relu(self.expand1[0](x)), F.relu(self.expand3[0](x))], 1)


def test_concat_block_by_hand_however_written():
    cin, sq, e1, e3, s = 8, 4, 8, 8, 6
    p = s * s                                            # 36 positions
    macs = p * sq * cin + p * e1 * sq + p * e3 * sq * 9  # squeeze 1x1, expand 1x1, expand 3x3: 12,672
    weights = (cin * sq + sq) + (sq * e1 + e1) + (sq * e3 * 9 + e3)   # with biases: 372
    # input; squeeze conv + ReLU; expand1 conv + ReLU; expand3 conv + ReLU; the concatenation
    blobs = cin * p + 2 * sq * p + 2 * e1 * p + 2 * e3 * p + (e1 + e3) * p
    assert (macs, weights, blobs) == (12_672, 372, 2304)
    for block in (FireModules, FireFunctional):
        assert totals(block(cin, sq, e1, e3), (1, cin, s, s)) == (macs, weights, blobs), block.__name__
    layer = [totals(block(cin, sq, e1, e3), (1, cin, s, s), "layer") for block in (FireModules, FireFunctional)]
    assert layer[0] == layer[1]


class Attention(nn.Module):
    """Multi-head self-attention with nn.Linear projections, ``q @ k.transpose(-2, -1)``, a
    Softmax module and ``@ v``; ``how='functional'`` writes F.linear, torch.matmul and F.softmax,
    ``how='sdpa'`` F.scaled_dot_product_attention."""

    def __init__(self, d_model=8, heads=2, how="operators"):
        super().__init__()
        self.heads, self.how = heads, how
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model) for _ in range(4))
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        b, n, d = x.shape
        e = d // self.heads

        def split(t):
            return t.view(b, n, self.heads, e).transpose(1, 2)
        if self.how == "functional":
            q, k, v = (split(F.linear(x, m.weight, m.bias)) for m in (self.q, self.k, self.v))
            y = torch.matmul(F.softmax(torch.matmul(q, k.transpose(-2, -1)) * e ** -0.5, dim=-1), v)
        else:
            q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
            if self.how == "sdpa":
                y = F.scaled_dot_product_attention(q, k, v)
            else:
                y = self.softmax((q @ k.transpose(-2, -1)) * e ** -0.5) @ v
        return self.o(y.transpose(1, 2).reshape(b, n, d))


def test_attention_by_hand_however_written():
    b, n, d, h = 1, 6, 8, 2
    e = d // h                                   # 4 per head
    tokens, scores = b * n * d, b * h * n * n    # 48 elements per token tensor, 72 per score matrix
    macs = 4 * (b * n * d * d) + 2 * (b * h * n * n * e)   # q, k, v, o projections; Q K^T and P V: 2,112
    weights = 4 * (d * d + d)                                # 288
    # input; q, k, v; Q K^T, scaled, softmax; P V; output projection (views and reshapes: nothing)
    blobs = tokens + 3 * tokens + 3 * scores + tokens + tokens
    # ifmap + ofmap: projections 2 x tokens each (4 of them); Q K^T reads q and k, writes scores;
    # the scaling and the softmax read and write scores; P V reads P and v, writes tokens
    layer = 4 * 2 * tokens + (2 * tokens + scores) + 2 * scores + 2 * scores + (scores + 2 * tokens)
    assert (macs, blobs, layer) == (2112, 504, 1008)
    for how in ("operators", "functional"):
        for device in ("cpu", "meta"):
            with torch.device(device):
                net = Attention(d, h, how)
            assert totals(net, (b, n, d)) == (macs, weights, blobs), (how, device)
            assert totals(net, (b, n, d), "layer") == (macs, weights, layer), (how, device)
    # The fused kernel does the same MACs but writes only its output: the three score
    # matrices are never activations (on 'meta' too, where ATen runs the unfused maths).
    fused_blobs = tokens + 3 * tokens + tokens + tokens          # input, q, k, v, attention, projection
    fused_layer = 4 * 2 * tokens + (3 * tokens + tokens)         # projections; attention reads q, k, v
    assert (fused_blobs, fused_layer) == (blobs - 3 * scores, 576)
    for device in ("cpu", "meta"):
        with torch.device(device):
            fused = Attention(d, h, "sdpa")
        assert totals(fused, (b, n, d)) == (macs, weights, fused_blobs), device
        assert totals(fused, (b, n, d), "layer") == (macs, weights, fused_layer), device


def _written_functionally(net):
    """``net`` (of brrr.models) with its residual blocks and fire modules swapped for the same
    blocks written as torchvision writes them: ``out += identity``, F.relu, torch.cat."""
    class Residual(models.BasicBlock):
        def forward(self, x):
            out = self.body(x)
            out += self.shortcut(x)
            return F.relu(out)

    class Inverted(models.InvertedResidual):
        def forward(self, x):
            return x + self.body(x) if self.add is not None else self.body(x)

    swaps = {models.BasicBlock: Residual, models.Bottleneck: Residual, models.InvertedResidual: Inverted,
             models.Fire: FireFunctional}
    for m in net.modules():
        m.__class__ = swaps.get(type(m), type(m))
    return net


@pytest.mark.parametrize("key", ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_0"])
def test_paper_networks_written_functionally_count_the_same(key):
    for convention in ("blobs", "layer"):
        modules = I.model_intensity(meta(key), models.INPUT_SHAPES[key], convention)
        functional = I.model_intensity(_written_functionally(meta(key)), models.INPUT_SHAPES[key], convention)
        assert (functional.macs, functional.weights, functional.activations) == \
            (modules.macs, modules.weights, modules.activations), convention


def test_lrn_and_dropout_count_as_one_layer_however_written():
    class Functional(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)

        def forward(self, x):
            return F.dropout(F.local_response_norm(self.conv(x), 5), 0.5, training=self.training)

    modules = nn.Sequential(nn.Conv2d(3, 8, 3), nn.LocalResponseNorm(5), nn.Dropout())
    n = 8 * 6 * 6
    for convention in ("blobs", "layer"):
        assert totals(modules, (1, 3, 8, 8), convention) == totals(Functional(), (1, 3, 8, 8), convention)
    # input; conv; LRN one blob (PyTorch runs it as 7 operators); Dropout one blob (none at inference)
    assert totals(modules, (1, 3, 8, 8))[2] == 3 * 64 + n + n + n


def test_layer_names_come_from_the_innermost_module():
    net = nn.Sequential(nn.Conv2d(4, 4, 1), ResidualFunctional(4))
    t = I.model_intensity(net, (1, 4, 8, 8)).layers
    add = t[t["op"] == "add_"].iloc[0]
    assert (add["layer"], add["type"], add["category"], add["activations"]) == ("1", "ResidualFunctional", "blob", 256)
    assert list(t.loc[t["op"] == "convolution", "layer"]) == ["0", "1.conv1", "1.conv2"]
    assert list(t.loc[t["op"] == "relu", "type"]) == ["ResidualFunctional"] * 2


def test_every_operator_is_classified_in_one_table():
    aten = torch.ops.aten
    assert I.classify(aten.addmm.default) == I.classify(aten.convolution.default) == "product"
    assert I.classify(aten.relu_.default) == I.classify(aten.add.Tensor) == I.classify(aten.cat.default) == "blob"
    assert I.classify(aten.native_batch_norm.default) == "batchnorm" and I.BLOBS["batchnorm"] == 2
    for op in (aten.view.default, aten.transpose.int, aten.expand.default, aten.permute.default,
               aten._unsafe_view.default):
        assert I.classify(op) == "view", op
    assert I.classify(aten.clone.default) == I.classify(aten._to_copy.default) == "copy"
    assert I.classify(aten.empty.memory_format) == "constant"
    assert I.classify(aten.cumsum.default) == "uncounted"
    assert set(I.OPS.values()) | {"product", "layer", "uncounted"} == set(I.BLOBS)
    # reshapes, transposes and copies add nothing, in either convention
    mover = nn.Sequential(nn.Linear(6, 6), nn.Unflatten(1, (2, 3)))
    plain = nn.Sequential(nn.Linear(6, 6))
    for convention in ("blobs", "layer"):
        assert totals(mover, (4, 6), convention) == totals(plain, (4, 6), convention)


def test_an_operator_that_cannot_be_counted_is_reported():
    class Scan(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(5, 5)

        def forward(self, x):
            return self.fc(x).cumsum(-1).cumsum(-1)

    r = I.model_intensity(Scan(), (2, 5))
    assert r.uncounted == {"cumsum": 2}
    assert "NOT COUNTED: cumsum x2" in repr(r) and r.as_dict()["uncounted"] == {"cumsum": 2}
    rows = r.layers[r.layers["category"] == "uncounted"]
    assert list(rows["op"]) == ["cumsum", "cumsum"] and (rows["activations"] == 0).all()
    assert r.activations == 10 + 10      # the input and the linear layer's output only
    assert I.model_intensity(meta("vgg16"), (1, 3, 224, 224)).uncounted == {}


def test_trace_layers_keeps_the_exercise_fields():
    rows = [r for r in I.trace_layers(meta("alexnet"), models.INPUT_SHAPES["alexnet"]) if r["macs"] > 0]
    assert [r["kind"] for r in rows] == ["standard", "group", "standard", "group", "group", "fc", "fc", "fc"]
    fc6 = rows[5]
    assert (fc6["weights"], fc6["in_elements"], fc6["out_elements"]) == (9216 * 4096 + 4096, 9216, 4096)
