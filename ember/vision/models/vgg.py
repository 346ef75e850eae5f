"""VGG (Simonyan & Zisserman, 2014): stacks of 3x3 convolutions (optionally with batch
norm) separated by 2x2 max pools, then a 7x7 adaptive pool and three linear layers.
torchvision's configurations ("A" = 11 layers ... "E" = 19), names and initialisation.

Read next: `alexnet.py`.
"""
from functools import partial

import ember
from ember import nn

from ..transforms._presets import ImageClassification
from ._api import Weights, WeightsEnum, _ovewrite_named_param, builder
from ._meta import _IMAGENET_CATEGORIES

__all__ = ["VGG", "VGG11_Weights", "VGG11_BN_Weights", "VGG13_Weights", "VGG13_BN_Weights",
           "VGG16_Weights", "VGG16_BN_Weights", "VGG19_Weights", "VGG19_BN_Weights", "vgg11",
           "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"]


class VGG(nn.Module):
    """`features` (the conv stack), avgpool to 7x7, and a 3-layer classifier."""

    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes))
        if init_weights:
            self._init_weights()

    def _init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        """Class logits of an (N, 3, H, W) batch."""
        x = self.avgpool(self.features(x))
        return self.classifier(ember.flatten(x, 1))


def make_layers(cfg, batch_norm=False):
    """The conv stack of a configuration: numbers are 3x3 conv widths, "M" a max pool."""
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2d(in_channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2d(v))
        layers.append(nn.ReLU(inplace=True))
        in_channels = v
    return nn.Sequential(*layers)


cfgs = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512,
          "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512,
          512, 512, 512, "M"],
}


def _vgg(cfg, batch_norm, weights, progress, **kwargs):
    if weights is not None:
        kwargs["init_weights"] = False
        if weights.meta["categories"] is not None:
            _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = VGG(make_layers(cfgs[cfg], batch_norm=batch_norm), **kwargs)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


_COMMON_META = {"min_size": (32, 32), "categories": _IMAGENET_CATEGORIES,
                "recipe": "https://github.com/pytorch/vision/tree/main/references/"
                          "classification#alexnet-and-vgg",
                "_docs": "These weights were trained from scratch by using a simplified "
                         "training recipe."}


def _weights(file, num_params, acc1, acc5, ops, file_size):
    return Weights(url="https://download.pytorch.org/models/" + file,
                   transforms=partial(ImageClassification, crop_size=224),
                   meta={**_COMMON_META, "num_params": num_params,
                         "_metrics": {"ImageNet-1K": {"acc@1": acc1, "acc@5": acc5}},
                         "_ops": ops, "_file_size": file_size})


class VGG11_Weights(WeightsEnum):
    """vgg11's checkpoints."""
    IMAGENET1K_V1 = _weights("vgg11-8a719046.pth", 132863336, 69.02, 88.628, 7.609, 506.84)
    DEFAULT = IMAGENET1K_V1


class VGG11_BN_Weights(WeightsEnum):
    """vgg11_bn's checkpoints."""
    IMAGENET1K_V1 = _weights("vgg11_bn-6002323d.pth", 132868840, 70.37, 89.81, 7.609, 506.881)
    DEFAULT = IMAGENET1K_V1


class VGG13_Weights(WeightsEnum):
    """vgg13's checkpoints."""
    IMAGENET1K_V1 = _weights("vgg13-19584684.pth", 133047848, 69.928, 89.246, 11.308,
                             507.545)
    DEFAULT = IMAGENET1K_V1


class VGG13_BN_Weights(WeightsEnum):
    """vgg13_bn's checkpoints."""
    IMAGENET1K_V1 = _weights("vgg13_bn-abd245e5.pth", 133053736, 71.586, 90.374, 11.308,
                             507.59)
    DEFAULT = IMAGENET1K_V1


class VGG16_Weights(WeightsEnum):
    """vgg16's checkpoints (IMAGENET1K_FEATURES: only `features` is trained)."""
    IMAGENET1K_V1 = _weights("vgg16-397923af.pth", 138357544, 71.592, 90.382, 15.47, 527.796)
    IMAGENET1K_FEATURES = Weights(
        url="https://download.pytorch.org/models/vgg16_features-amdegroot-88682ab5.pth",
        transforms=partial(ImageClassification, crop_size=224, mean=(0.48235, 0.45882, 0.40784),
                           std=(1.0 / 255.0, 1.0 / 255.0, 1.0 / 255.0)),
        meta={**_COMMON_META, "num_params": 138357544, "categories": None,
              "recipe": "https://github.com/amdegroot/ssd.pytorch#training-ssd",
              "_metrics": {"ImageNet-1K": {"acc@1": float("nan"), "acc@5": float("nan")}},
              "_ops": 15.47, "_file_size": 527.802,
              "_docs": """
                These weights can't be used for classification because they are missing values in the `classifier`
                module. Only the `features` module has valid values and can be used for feature extraction. The weights
                were trained using the original input standardization method as described in the paper.
            """})  # noqa: E501  (torchvision's text, kept as it is)
    DEFAULT = IMAGENET1K_V1


class VGG16_BN_Weights(WeightsEnum):
    """vgg16_bn's checkpoints."""
    IMAGENET1K_V1 = _weights("vgg16_bn-6c64b313.pth", 138365992, 73.36, 91.516, 15.47,
                             527.866)
    DEFAULT = IMAGENET1K_V1


class VGG19_Weights(WeightsEnum):
    """vgg19's checkpoints."""
    IMAGENET1K_V1 = _weights("vgg19-dcbb9e9d.pth", 143667240, 72.376, 90.876, 19.632,
                             548.051)
    DEFAULT = IMAGENET1K_V1


class VGG19_BN_Weights(WeightsEnum):
    """vgg19_bn's checkpoints."""
    IMAGENET1K_V1 = _weights("vgg19_bn-c79401a0.pth", 143678248, 74.218, 91.842, 19.632,
                             548.143)
    DEFAULT = IMAGENET1K_V1


@builder(VGG11_Weights, VGG11_Weights.IMAGENET1K_V1)
def vgg11(*, weights=None, progress=True, **kwargs):
    """VGG-11 (configuration "A"); weights: VGG11_Weights or None."""
    return _vgg("A", False, VGG11_Weights.verify(weights), progress, **kwargs)


@builder(VGG11_BN_Weights, VGG11_BN_Weights.IMAGENET1K_V1)
def vgg11_bn(*, weights=None, progress=True, **kwargs):
    """VGG-11 (configuration "A") with batch norm; weights: VGG11_BN_Weights or None."""
    return _vgg("A", True, VGG11_BN_Weights.verify(weights), progress, **kwargs)


@builder(VGG13_Weights, VGG13_Weights.IMAGENET1K_V1)
def vgg13(*, weights=None, progress=True, **kwargs):
    """VGG-13 (configuration "B"); weights: VGG13_Weights or None."""
    return _vgg("B", False, VGG13_Weights.verify(weights), progress, **kwargs)


@builder(VGG13_BN_Weights, VGG13_BN_Weights.IMAGENET1K_V1)
def vgg13_bn(*, weights=None, progress=True, **kwargs):
    """VGG-13 (configuration "B") with batch norm; weights: VGG13_BN_Weights or None."""
    return _vgg("B", True, VGG13_BN_Weights.verify(weights), progress, **kwargs)


@builder(VGG16_Weights, VGG16_Weights.IMAGENET1K_V1)
def vgg16(*, weights=None, progress=True, **kwargs):
    """VGG-16 (configuration "D"); weights: VGG16_Weights or None."""
    return _vgg("D", False, VGG16_Weights.verify(weights), progress, **kwargs)


@builder(VGG16_BN_Weights, VGG16_BN_Weights.IMAGENET1K_V1)
def vgg16_bn(*, weights=None, progress=True, **kwargs):
    """VGG-16 (configuration "D") with batch norm; weights: VGG16_BN_Weights or None."""
    return _vgg("D", True, VGG16_BN_Weights.verify(weights), progress, **kwargs)


@builder(VGG19_Weights, VGG19_Weights.IMAGENET1K_V1)
def vgg19(*, weights=None, progress=True, **kwargs):
    """VGG-19 (configuration "E"); weights: VGG19_Weights or None."""
    return _vgg("E", False, VGG19_Weights.verify(weights), progress, **kwargs)


@builder(VGG19_BN_Weights, VGG19_BN_Weights.IMAGENET1K_V1)
def vgg19_bn(*, weights=None, progress=True, **kwargs):
    """VGG-19 (configuration "E") with batch norm; weights: VGG19_BN_Weights or None."""
    return _vgg("E", True, VGG19_BN_Weights.verify(weights), progress, **kwargs)
