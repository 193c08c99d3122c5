"""brrr.models: compact classic CNNs build, run at batch 1 and have the well-known parameter counts."""
import pytest

torch = pytest.importorskip("torch")

from brrr import models  # noqa: E402

# torchvision's counts for the same networks (AlexNet: the BVLC Caffe model with two groups;
# NiN: the Caffe ImageNet model).
PARAMS = {"alexnet": 60_965_224, "vgg16": 138_357_544, "nin": 7_595_176, "resnet18": 11_689_512,
          "resnet50": 25_557_032, "mobilenet_v1": 4_231_976, "mobilenet_v2": 3_504_872,
          "squeezenet1_0": 1_248_424, "squeezenet1_1": 1_235_496,
          # More rows of the DI paper's Table VIII: torchvision's counts (ResNeXt-101 32x4d, which
          # torchvision lacks: the count of the authors' released model, as timm reports it).
          "resnet101": 44_549_160, "resnet152": 60_192_808, "resnext50_32x4d": 25_028_904,
          "resnext101_32x4d": 44_177_704, "densenet121": 7_978_856, "densenet169": 14_149_480}


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_parameter_counts(name):
    with torch.device("meta"):
        net = models.get(name)
    assert sum(p.numel() for p in net.parameters()) == PARAMS[name]


@pytest.mark.parametrize("name", ["alexnet", "resnet18", "mobilenet_v1", "mobilenet_v2",
                                  "squeezenet1_0", "squeezenet1_1", "nin", "resnext50_32x4d", "densenet121"])
def test_forward_at_batch_one(name):
    torch.manual_seed(0)
    net = models.get(name, num_classes=10)
    with torch.no_grad():
        y = net(torch.randn(models.INPUT_SHAPES[name]))
    assert y.shape == (1, 10) and torch.isfinite(y).all()


def test_vgg16_and_resnet50_shapes_on_meta():
    for name in ("vgg16", "resnet50"):
        with torch.device("meta"):
            net = models.get(name)
            y = net(torch.zeros(models.INPUT_SHAPES[name]))
        assert y.shape == (1, 1000)


def test_resnet50_is_v1_with_stride_in_first_1x1():
    """The Caffe ResNet-50 of the paper strides in the 1x1 reduce: 3.86 G MACs, not v1.5's 4.09 G."""
    with torch.device("meta"):
        net = models.resnet50()
    block = net[5]      # stem, pool, 3 bottlenecks, then the first bottleneck of stage 2
    assert block.body[0][0].stride == (2, 2) and block.body[1][0].stride == (1, 1)
    from brrr.intensity import model_intensity
    macs = model_intensity(net, (1, 3, 224, 224)).macs
    assert 3.85e9 < macs < 3.87e9


def test_add_and_concat_modules():
    a, b = torch.ones(1, 2, 3, 3), torch.full((1, 3, 3, 3), 2.0)
    assert models.Concat()(a, b).shape == (1, 5, 3, 3)
    assert torch.equal(models.Add()(a, a, a), 3 * a)


def test_get_rejects_unknown_names():
    with pytest.raises(ValueError, match="name must be one of"):
        models.get("resnet9000")


def test_added_networks_on_meta_and_their_structure():
    """ResNet-101/152 and the ResNeXts stride like their sources; DenseNet concatenates growth-rate channels."""
    for name in ("resnet101", "resnet152", "resnext101_32x4d", "densenet169"):
        with torch.device("meta"):
            net = models.get(name)
            y = net(torch.zeros(models.INPUT_SHAPES[name]))
        assert y.shape == (1, 1000)
    with torch.device("meta"):
        resnet, resnext, dense = models.resnet101(), models.resnext50_32x4d(), models.densenet121()
    assert sum(isinstance(m, models.Bottleneck) for m in resnet.modules()) == 3 + 4 + 23 + 3
    block = next(m for m in resnext.modules() if isinstance(m, models.ResNeXtBlock) and
                 m.body[1][0].stride == (2, 2))            # the stride is in the grouped 3x3
    assert block.body[1][0].groups == 32 and block.body[0][0].stride == (1, 1)
    with torch.no_grad():   # a dense layer returns its input with 32 new channels concatenated
        x = torch.randn(1, 64, 8, 8)
        y = models.DenseLayer(64).eval()(x)
    assert y.shape == (1, 96, 8, 8) and torch.equal(y[:, :64], x)
    layers = [m for m in dense.modules() if isinstance(m, models.DenseLayer)]
    assert len(layers) == 6 + 12 + 24 + 16
    assert layers[0].body[1][2].out_channels == 32 and layers[0].body[0][2].out_channels == 128
