"""SqueezeNet (Iandola et al., 2016): "Fire" modules -- a 1x1 squeeze convolution feeding
parallel 1x1 and 3x3 expand convolutions, concatenated -- and a convolutional classifier.

Read next: `mobilenetv2.py`.
"""
from functools import partial

import ember
from ember import nn

from ..transforms._presets import ImageClassification
from ._api import Weights, WeightsEnum, _ovewrite_named_param, builder
from ._meta import _IMAGENET_CATEGORIES

__all__ = ["SqueezeNet", "SqueezeNet1_0_Weights", "SqueezeNet1_1_Weights", "squeezenet1_0",
           "squeezenet1_1"]


class Fire(nn.Module):
    """squeeze (1x1) -> [expand1x1 (1x1) | expand3x3 (3x3)] concatenated on channels."""

    def __init__(self, inplanes, squeeze_planes, expand1x1_planes, expand3x3_planes):
        super().__init__()
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        """The concatenated expand outputs."""
        x = self.squeeze_activation(self.squeeze(x))
        return ember.cat([self.expand1x1_activation(self.expand1x1(x)),
                          self.expand3x3_activation(self.expand3x3(x))], 1)


def _pool():
    return nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True)


def _features(version):
    if version == "1_0":
        return nn.Sequential(
            nn.Conv2d(3, 96, kernel_size=7, stride=2), nn.ReLU(inplace=True), _pool(),
            Fire(96, 16, 64, 64), Fire(128, 16, 64, 64), Fire(128, 32, 128, 128), _pool(),
            Fire(256, 32, 128, 128), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192),
            Fire(384, 64, 256, 256), _pool(), Fire(512, 64, 256, 256))
    if version == "1_1":
        return nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=3, stride=2), nn.ReLU(inplace=True), _pool(),
            Fire(64, 16, 64, 64), Fire(128, 16, 64, 64), _pool(),
            Fire(128, 32, 128, 128), Fire(256, 32, 128, 128), _pool(),
            Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256),
            Fire(512, 64, 256, 256))
    raise ValueError(f"Unsupported SqueezeNet version {version}: 1_0 or 1_1 expected")


class SqueezeNet(nn.Module):
    """SqueezeNet 1.0 or 1.1: `features`, then dropout -> 1x1 conv to the classes -> relu ->
    global average pool."""

    def __init__(self, version="1_0", num_classes=1000, dropout=0.5):
        super().__init__()
        self.num_classes = num_classes
        self.features = _features(version)
        final_conv = nn.Conv2d(512, self.num_classes, kernel_size=1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), final_conv, nn.ReLU(inplace=True),
                                        nn.AdaptiveAvgPool2d((1, 1)))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if m is final_conv:
                    nn.init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    nn.init.kaiming_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        """Class logits of an (N, 3, H, W) batch."""
        return ember.flatten(self.classifier(self.features(x)), 1)


def _squeezenet(version, weights, progress, **kwargs):
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = SqueezeNet(version, **kwargs)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


def _weights(file, min_size, num_params, acc1, acc5, ops, file_size):
    return Weights(
        url="https://download.pytorch.org/models/" + file,
        transforms=partial(ImageClassification, crop_size=224),
        meta={"categories": _IMAGENET_CATEGORIES,
              "recipe": "https://github.com/pytorch/vision/pull/49#issuecomment-277560717",
              "_docs": "These weights reproduce closely the results of the paper using a "
                       "simple training recipe.",
              "min_size": min_size, "num_params": num_params,
              "_metrics": {"ImageNet-1K": {"acc@1": acc1, "acc@5": acc5}}, "_ops": ops,
              "_file_size": file_size})


class SqueezeNet1_0_Weights(WeightsEnum):
    """squeezenet1_0's checkpoints."""
    IMAGENET1K_V1 = _weights("squeezenet1_0-b66bff10.pth", (21, 21), 1248424, 58.092, 80.42,
                             0.819, 4.778)
    DEFAULT = IMAGENET1K_V1


class SqueezeNet1_1_Weights(WeightsEnum):
    """squeezenet1_1's checkpoints."""
    IMAGENET1K_V1 = _weights("squeezenet1_1-b8a52dc0.pth", (17, 17), 1235496, 58.178, 80.624,
                             0.349, 4.729)
    DEFAULT = IMAGENET1K_V1


@builder(SqueezeNet1_0_Weights, SqueezeNet1_0_Weights.IMAGENET1K_V1)
def squeezenet1_0(*, weights=None, progress=True, **kwargs):
    """SqueezeNet 1.0; weights: SqueezeNet1_0_Weights or None."""
    return _squeezenet("1_0", SqueezeNet1_0_Weights.verify(weights), progress, **kwargs)


@builder(SqueezeNet1_1_Weights, SqueezeNet1_1_Weights.IMAGENET1K_V1)
def squeezenet1_1(*, weights=None, progress=True, **kwargs):
    """SqueezeNet 1.1 (2.4x less computation than 1.0); weights: SqueezeNet1_1_Weights."""
    return _squeezenet("1_1", SqueezeNet1_1_Weights.verify(weights), progress, **kwargs)
