"""Compact definitions of the classic CNNs that chapter 6 analyses (pure ``torch.nn``).

No torchvision and no downloads: every network is built here with random weights,
which is all an intensity count needs. The layer shapes follow the Caffe models
that Jha et al. (2020) analysed for their Table VIII: AlexNet with two groups and
local response normalisation at 227x227, ResNet-50 "v1" (stride in the first 1x1
convolution of a bottleneck), SqueezeNet with ceil-mode pooling at 227x227. Where
torchvision has the same network, the parameter counts agree with it
(VGG-16 138,357,544; ResNet-50 25,557,032; MobileNet V2 3,504,872; ...).

More of Table VIII's networks follow the same sources: ResNet-101 and -152 (Caffe layer
shapes), ResNeXt-50 and -101 32x4d (Xie et al., 2017) and DenseNet-121 and -169 (Huang et
al., 2017), each with its published parameter count (the tests check them all).

Residual additions and concatenations are modules (:class:`Add`, :class:`Concat`), so
that a printed network shows them; :func:`brrr.intensity.model_intensity` counts at the
operator level and gives the same figures for ``out + identity`` and ``torch.cat``.

    from brrr import models
    net = models.vgg16()              # or models.get("vgg16")
    shape = models.INPUT_SHAPES["vgg16"]
"""
from __future__ import annotations

from collections import OrderedDict

import torch
from torch import nn

__all__ = ["Add", "Concat", "alexnet", "vgg16", "nin", "resnet18", "resnet50", "mobilenet_v1",
           "mobilenet_v2", "squeezenet1_0", "squeezenet1_1", "resnet101", "resnet152", "resnext50_32x4d",
           "resnext101_32x4d", "densenet121", "densenet169", "MODELS", "INPUT_SHAPES", "get"]


# --- building blocks -------------------------------------------------------------

class Add(nn.Module):
    """Elementwise sum of its inputs (a residual connection), as a module."""

    def forward(self, *tensors):
        out = tensors[0]
        for t in tensors[1:]:
            out = out + t
        return out


class Concat(nn.Module):
    """Concatenation along ``dim`` (channels by default), as a module."""

    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, *tensors):
        return torch.cat(tensors, dim=self.dim)


def _conv_bn(cin, cout, k, stride=1, groups=1, relu=True, relu6=False):
    layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    if relu:
        layers.append(nn.ReLU6(inplace=True) if relu6 else nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


def _init(model: nn.Module) -> nn.Module:
    """Kaiming-normal convolutions, small linear layers, BatchNorm at identity."""
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0, 0.01)
            nn.init.zeros_(m.bias)
    return model.eval()


# --- AlexNet, VGG-16, NiN: plain feed-forward stacks ---------------------------------

def alexnet(num_classes: int = 1000) -> nn.Module:
    """BVLC Caffe AlexNet (Krizhevsky et al., 2012): two groups, LRN, 60,965,224 parameters, 227x227 input."""
    lrn = dict(size=5, alpha=1e-4, beta=0.75, k=1.0)
    features = nn.Sequential(
        nn.Conv2d(3, 96, 11, 4), nn.ReLU(inplace=True), nn.LocalResponseNorm(**lrn),
        nn.MaxPool2d(3, 2, ceil_mode=True),
        nn.Conv2d(96, 256, 5, 1, 2, groups=2), nn.ReLU(inplace=True), nn.LocalResponseNorm(**lrn),
        nn.MaxPool2d(3, 2, ceil_mode=True),
        nn.Conv2d(256, 384, 3, 1, 1), nn.ReLU(inplace=True),
        nn.Conv2d(384, 384, 3, 1, 1, groups=2), nn.ReLU(inplace=True),
        nn.Conv2d(384, 256, 3, 1, 1, groups=2), nn.ReLU(inplace=True),
        nn.MaxPool2d(3, 2, ceil_mode=True))
    classifier = nn.Sequential(
        nn.Flatten(), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True), nn.Dropout(),
        nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Dropout(), nn.Linear(4096, num_classes))
    return _init(nn.Sequential(OrderedDict(features=features, classifier=classifier)))


def vgg16(num_classes: int = 1000) -> nn.Module:
    """VGG-16 (Simonyan & Zisserman, 2014): 13 3x3 convolutions and 3 FC layers, 138,357,544 parameters."""
    layers, cin = [], 3
    for v in (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"):
        if v == "M":
            layers.append(nn.MaxPool2d(2, 2))
        else:
            layers += [nn.Conv2d(cin, v, 3, padding=1), nn.ReLU(inplace=True)]
            cin = v
    classifier = nn.Sequential(
        nn.Flatten(), nn.Linear(512 * 7 * 7, 4096), nn.ReLU(inplace=True), nn.Dropout(),
        nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Dropout(), nn.Linear(4096, num_classes))
    return _init(nn.Sequential(OrderedDict(features=nn.Sequential(*layers), classifier=classifier)))


def nin(num_classes: int = 1000) -> nn.Module:
    """Network in Network (Lin et al., 2013), ImageNet Caffe model: 1x1 'cccp' layers, no FC, 227x227 input."""
    def block(cin, cout, k, s, p, cccp_out=None):
        cccp_out = cccp_out or cout
        return [nn.Conv2d(cin, cout, k, s, p), nn.ReLU(inplace=True),
                nn.Conv2d(cout, cout, 1), nn.ReLU(inplace=True),
                nn.Conv2d(cout, cccp_out, 1), nn.ReLU(inplace=True)]
    layers = (block(3, 96, 11, 4, 0) + [nn.MaxPool2d(3, 2, ceil_mode=True)]
              + block(96, 256, 5, 1, 2) + [nn.MaxPool2d(3, 2, ceil_mode=True)]
              + block(256, 384, 3, 1, 1) + [nn.MaxPool2d(3, 2, ceil_mode=True), nn.Dropout()]
              + block(384, 1024, 3, 1, 1, cccp_out=num_classes)
              + [nn.AdaptiveAvgPool2d(1), nn.Flatten()])
    return _init(nn.Sequential(*layers))


# --- ResNets ------------------------------------------------------------------------

class BasicBlock(nn.Module):
    """Two 3x3 convolutions and a residual add (ResNet-18/34)."""
    expansion = 1

    def __init__(self, cin, width, stride=1):
        super().__init__()
        cout = width * self.expansion
        self.body = nn.Sequential(_conv_bn(cin, width, 3, stride), _conv_bn(width, cout, 3, relu=False))
        self.shortcut = (_conv_bn(cin, cout, 1, stride, relu=False)
                         if stride != 1 or cin != cout else nn.Identity())
        self.add, self.relu = Add(), nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.add(self.body(x), self.shortcut(x)))


class Bottleneck(BasicBlock):
    """1x1 reduce, 3x3, 1x1 expand (x4) and a residual add. Stride in the first 1x1, as in the Caffe ResNet-50."""
    expansion = 4

    def __init__(self, cin, width, stride=1):
        nn.Module.__init__(self)
        cout = width * self.expansion
        self.body = nn.Sequential(_conv_bn(cin, width, 1, stride), _conv_bn(width, width, 3),
                                  _conv_bn(width, cout, 1, relu=False))
        self.shortcut = (_conv_bn(cin, cout, 1, stride, relu=False)
                         if stride != 1 or cin != cout else nn.Identity())
        self.add, self.relu = Add(), nn.ReLU(inplace=True)


def _resnet(block, depths, num_classes):
    layers = [_conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, padding=1)]
    cin = 64
    for i, (width, depth) in enumerate(zip((64, 128, 256, 512), depths)):
        for j in range(depth):
            layers.append(block(cin, width, stride=2 if (i > 0 and j == 0) else 1))
            cin = width * block.expansion
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, num_classes)]
    return _init(nn.Sequential(*layers))


def resnet18(num_classes: int = 1000) -> nn.Module:
    """ResNet-18 (He et al., 2016): 11,689,512 parameters."""
    return _resnet(BasicBlock, (2, 2, 2, 2), num_classes)


def resnet50(num_classes: int = 1000) -> nn.Module:
    """ResNet-50 v1 (He et al., 2016), as the Caffe model: 25,557,032 parameters, about 3.86 G MACs."""
    return _resnet(Bottleneck, (3, 4, 6, 3), num_classes)


# --- MobileNets -----------------------------------------------------------------------

def mobilenet_v1(num_classes: int = 1000) -> nn.Module:
    """MobileNet V1 1.0-224 (Howard et al., 2017): depthwise 3x3 + pointwise 1x1 pairs, 4,231,976 parameters."""
    plan = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]
    layers, cin = [_conv_bn(3, 32, 3, 2)], 32
    for cout, stride in plan:
        layers += [_conv_bn(cin, cin, 3, stride, groups=cin), _conv_bn(cin, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1024, num_classes)]
    return _init(nn.Sequential(*layers))


class InvertedResidual(nn.Module):
    """MobileNet V2 block: 1x1 expand, 3x3 depthwise, 1x1 linear projection, add when shapes allow."""

    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = [_conv_bn(cin, hidden, 1, relu6=True)] if expand != 1 else []
        layers += [_conv_bn(hidden, hidden, 3, stride, groups=hidden, relu6=True),
                   _conv_bn(hidden, cout, 1, relu=False)]
        self.body = nn.Sequential(*layers)
        self.add = Add() if stride == 1 and cin == cout else None

    def forward(self, x):
        return self.add(x, self.body(x)) if self.add is not None else self.body(x)


def mobilenet_v2(num_classes: int = 1000) -> nn.Module:
    """MobileNet V2 1.0-224 (Sandler et al., 2018): inverted residuals, 3,504,872 parameters."""
    plan = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
            (6, 160, 3, 2), (6, 320, 1, 1)]  # expand t, channels c, repeats n, first stride s
    layers, cin = [_conv_bn(3, 32, 3, 2, relu6=True)], 32
    for t, c, n, s in plan:
        for i in range(n):
            layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
            cin = c
    layers += [_conv_bn(cin, 1280, 1, relu6=True), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
               nn.Dropout(0.2), nn.Linear(1280, num_classes)]
    return _init(nn.Sequential(*layers))


# --- SqueezeNets ------------------------------------------------------------------------

class Fire(nn.Module):
    """SqueezeNet fire module: 1x1 squeeze, then 1x1 and 3x3 expand, concatenated."""

    def __init__(self, cin, squeeze, expand1, expand3):
        super().__init__()
        self.squeeze = nn.Sequential(nn.Conv2d(cin, squeeze, 1), nn.ReLU(inplace=True))
        self.expand1 = nn.Sequential(nn.Conv2d(squeeze, expand1, 1), nn.ReLU(inplace=True))
        self.expand3 = nn.Sequential(nn.Conv2d(squeeze, expand3, 3, padding=1), nn.ReLU(inplace=True))
        self.concat = Concat(1)

    def forward(self, x):
        x = self.squeeze(x)
        return self.concat(self.expand1(x), self.expand3(x))


def _squeezenet(version, num_classes):
    pool = lambda: nn.MaxPool2d(3, 2, ceil_mode=True)  # noqa: E731
    if version == "1_0":
        features = [nn.Conv2d(3, 96, 7, 2), nn.ReLU(inplace=True), pool(),
                    Fire(96, 16, 64, 64), Fire(128, 16, 64, 64), Fire(128, 32, 128, 128), pool(),
                    Fire(256, 32, 128, 128), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192),
                    Fire(384, 64, 256, 256), pool(), Fire(512, 64, 256, 256)]
    else:
        features = [nn.Conv2d(3, 64, 3, 2), nn.ReLU(inplace=True), pool(),
                    Fire(64, 16, 64, 64), Fire(128, 16, 64, 64), pool(),
                    Fire(128, 32, 128, 128), Fire(256, 32, 128, 128), pool(),
                    Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256),
                    Fire(512, 64, 256, 256)]
    head = [nn.Dropout(0.5), nn.Conv2d(512, num_classes, 1), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    return _init(nn.Sequential(*features, *head))


def squeezenet1_0(num_classes: int = 1000) -> nn.Module:
    """SqueezeNet 1.0 (Iandola et al., 2016): 1,248,424 parameters, 227x227 input."""
    return _squeezenet("1_0", num_classes)


def squeezenet1_1(num_classes: int = 1000) -> nn.Module:
    """SqueezeNet 1.1: 3x3 first convolution, earlier pooling, 1,235,496 parameters (Table VIII matches at 224x224)."""
    return _squeezenet("1_1", num_classes)


# --- more of Table VIII: deeper ResNets, ResNeXt, DenseNet ----------------------------------

def resnet101(num_classes: int = 1000) -> nn.Module:
    """ResNet-101 v1 (He et al., 2016), stride in the first 1x1 as in the Caffe model: 44,549,160 parameters."""
    return _resnet(Bottleneck, (3, 4, 23, 3), num_classes)


def resnet152(num_classes: int = 1000) -> nn.Module:
    """ResNet-152 v1 (He et al., 2016), stride in the first 1x1 as in the Caffe model: 60,192,808 parameters."""
    return _resnet(Bottleneck, (3, 8, 36, 3), num_classes)


class ResNeXtBlock(BasicBlock):
    """ResNeXt 32x4d block (Xie et al., 2017): 1x1 reduce to 32 groups of 4 x (width/64) channels,
    a grouped 3x3 (which carries the stride, as in the authors' code), 1x1 expand (x4), residual add."""
    expansion, groups, group_width = 4, 32, 4

    def __init__(self, cin, width, stride=1):
        nn.Module.__init__(self)
        inner = self.groups * self.group_width * width // 64
        cout = width * self.expansion
        self.body = nn.Sequential(_conv_bn(cin, inner, 1), _conv_bn(inner, inner, 3, stride, groups=self.groups),
                                  _conv_bn(inner, cout, 1, relu=False))
        self.shortcut = (_conv_bn(cin, cout, 1, stride, relu=False)
                         if stride != 1 or cin != cout else nn.Identity())
        self.add, self.relu = Add(), nn.ReLU(inplace=True)


def resnext50_32x4d(num_classes: int = 1000) -> nn.Module:
    """ResNeXt-50 32x4d (Xie et al., 2017): 25,028,904 parameters."""
    return _resnet(ResNeXtBlock, (3, 4, 6, 3), num_classes)


def resnext101_32x4d(num_classes: int = 1000) -> nn.Module:
    """ResNeXt-101 32x4d (Xie et al., 2017): 44,177,704 parameters."""
    return _resnet(ResNeXtBlock, (3, 4, 23, 3), num_classes)


def _bn_relu_conv(cin, cout, k):
    """DenseNet's pre-activation order: BatchNorm, ReLU, then a convolution without bias."""
    return nn.Sequential(nn.BatchNorm2d(cin), nn.ReLU(inplace=True),
                         nn.Conv2d(cin, cout, k, padding=(k - 1) // 2, bias=False))


class DenseLayer(nn.Module):
    """One DenseNet-BC layer (Huang et al., 2017): a 1x1 bottleneck to 4k channels, a 3x3 to k new
    ones, and the input concatenated with them (k = growth rate), as the Caffe models write it."""

    def __init__(self, cin, growth=32, bottleneck=4):
        super().__init__()
        self.body = nn.Sequential(_bn_relu_conv(cin, bottleneck * growth, 1),
                                  _bn_relu_conv(bottleneck * growth, growth, 3))
        self.concat = Concat(1)

    def forward(self, x):
        return self.concat(x, self.body(x))


def _densenet(blocks, num_classes, growth=32, stem=64):
    layers, c = [_conv_bn(3, stem, 7, 2), nn.MaxPool2d(3, 2, padding=1)], stem
    for i, n in enumerate(blocks):
        for _ in range(n):
            layers.append(DenseLayer(c, growth))
            c += growth
        if i < len(blocks) - 1:   # transition: halve the channels and the map
            layers += [_bn_relu_conv(c, c // 2, 1), nn.AvgPool2d(2, 2)]
            c //= 2
    layers += [nn.BatchNorm2d(c), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
               nn.Linear(c, num_classes)]
    return _init(nn.Sequential(*layers))


def densenet121(num_classes: int = 1000) -> nn.Module:
    """DenseNet-121 (Huang et al., 2017), growth rate 32: 7,978,856 parameters."""
    return _densenet((6, 12, 24, 16), num_classes)


def densenet169(num_classes: int = 1000) -> nn.Module:
    """DenseNet-169 (Huang et al., 2017), growth rate 32: 14,149,480 parameters."""
    return _densenet((6, 12, 32, 32), num_classes)


# --- registry -------------------------------------------------------------------------

MODELS = {"alexnet": alexnet, "vgg16": vgg16, "nin": nin, "resnet18": resnet18, "resnet50": resnet50,
          "mobilenet_v1": mobilenet_v1, "mobilenet_v2": mobilenet_v2,
          "squeezenet1_0": squeezenet1_0, "squeezenet1_1": squeezenet1_1,
          "resnet101": resnet101, "resnet152": resnet152, "resnext50_32x4d": resnext50_32x4d,
          "resnext101_32x4d": resnext101_32x4d, "densenet121": densenet121, "densenet169": densenet169}

#: Input shape (batch 1) at which each network's counts come closest to the paper's Table VIII
#: (227x227 for the Caffe AlexNet, NiN and SqueezeNet 1.0; 224x224 otherwise, SqueezeNet 1.1 included).
INPUT_SHAPES = {"alexnet": (1, 3, 227, 227), "vgg16": (1, 3, 224, 224), "nin": (1, 3, 227, 227),
                "resnet18": (1, 3, 224, 224), "resnet50": (1, 3, 224, 224),
                "mobilenet_v1": (1, 3, 224, 224), "mobilenet_v2": (1, 3, 224, 224),
                "squeezenet1_0": (1, 3, 227, 227), "squeezenet1_1": (1, 3, 224, 224),
                **dict.fromkeys(("resnet101", "resnet152", "resnext50_32x4d", "resnext101_32x4d",
                                 "densenet121", "densenet169"), (1, 3, 224, 224))}


def get(name: str, **kwargs) -> nn.Module:
    """Build a network by name (see :data:`MODELS`), e.g. ``get("vgg16")``."""
    if not isinstance(name, str) or name not in MODELS:
        raise ValueError(f"name must be one of {sorted(MODELS)}, got {name!r}")
    return MODELS[name](**kwargs)
