"""MobileNetV2 (Sandler et al., 2018): inverted residual blocks -- a 1x1 expansion, a 3x3
depthwise convolution and a linear 1x1 projection, with a shortcut when shapes allow -- in
torchvision's layout (`features.<i>.conv.<j>` keys).

Read next: `vision_transformer.py`.
"""
from functools import partial

import ember
from ember import nn

from ..ops.misc import Conv2dNormActivation
from ..transforms._presets import ImageClassification
from ._api import Weights, WeightsEnum, _ovewrite_named_param, builder
from ._meta import _IMAGENET_CATEGORIES
from ._utils import _make_divisible

__all__ = ["MobileNetV2", "MobileNet_V2_Weights", "mobilenet_v2"]


class InvertedResidual(nn.Module):
    """[1x1 expand (ReLU6)] -> 3x3 depthwise (stride, ReLU6) -> 1x1 project (linear) -> bn,
    plus the input when stride is 1 and the width is unchanged."""

    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=None):
        super().__init__()
        self.stride = stride
        if stride not in (1, 2):
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        norm_layer = norm_layer or nn.BatchNorm2d
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = self.stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1,
                                               norm_layer=norm_layer,
                                               activation_layer=nn.ReLU6))
        layers += [Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim,
                                        norm_layer=norm_layer, activation_layer=nn.ReLU6),
                   nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False), norm_layer(oup)]
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup
        self._is_cn = stride > 1

    def forward(self, x):
        """The block's output."""
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


_SETTING = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1],
            [6, 160, 3, 2], [6, 320, 1, 1]]  # expansion t, channels c, repeats n, stride s


class MobileNetV2(nn.Module):
    """The network: a strided 3x3 stem, the inverted residual stages, a 1x1 conv to 1280
    channels, global average pooling and dropout + linear."""

    def __init__(self, num_classes=1000, width_mult=1.0, inverted_residual_setting=None,
                 round_nearest=8, block=None, norm_layer=None, dropout=0.2):
        super().__init__()
        block = block or InvertedResidual
        norm_layer = norm_layer or nn.BatchNorm2d
        setting = inverted_residual_setting or _SETTING
        if len(setting) == 0 or len(setting[0]) != 4:
            raise ValueError(f"inverted_residual_setting should be non-empty or a 4-element "
                             f"list, got {inverted_residual_setting}")
        channels = _make_divisible(32 * width_mult, round_nearest)
        self.last_channel = _make_divisible(1280 * max(1.0, width_mult), round_nearest)
        features = [Conv2dNormActivation(3, channels, stride=2, norm_layer=norm_layer,
                                         activation_layer=nn.ReLU6)]
        for t, c, n, s in setting:
            out = _make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(block(channels, out, s if i == 0 else 1, expand_ratio=t,
                                      norm_layer=norm_layer))
                channels = out
        features.append(Conv2dNormActivation(channels, self.last_channel, kernel_size=1,
                                             norm_layer=norm_layer, activation_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout),
                                        nn.Linear(self.last_channel, num_classes))
        self._init_weights()

    def _init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def _forward_impl(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(ember.flatten(x, 1))

    def forward(self, x):
        """Class logits of an (N, 3, H, W) batch."""
        return self._forward_impl(x)


_COMMON_META = {"num_params": 3504872, "min_size": (1, 1), "categories": _IMAGENET_CATEGORIES}


class MobileNet_V2_Weights(WeightsEnum):
    """mobilenet_v2's checkpoints."""
    IMAGENET1K_V1 = Weights(
        url="https://download.pytorch.org/models/mobilenet_v2-b0353104.pth",
        transforms=partial(ImageClassification, crop_size=224),
        meta={**_COMMON_META,
              "recipe": "https://github.com/pytorch/vision/tree/main/references/"
                        "classification#mobilenetv2",
              "_metrics": {"ImageNet-1K": {"acc@1": 71.878, "acc@5": 90.286}},
              "_ops": 0.301, "_file_size": 13.555,
              "_docs": "These weights reproduce closely the results of the paper using a "
                       "simple training recipe."})
    IMAGENET1K_V2 = Weights(
        url="https://download.pytorch.org/models/mobilenet_v2-7ebf99e0.pth",
        transforms=partial(ImageClassification, crop_size=224, resize_size=232),
        meta={**_COMMON_META,
              "recipe": "https://github.com/pytorch/vision/issues/3995#new-recipe-with-reg-"
                        "tuning",
              "_metrics": {"ImageNet-1K": {"acc@1": 72.154, "acc@5": 90.822}},
              "_ops": 0.301, "_file_size": 13.598,
              "_docs": """
                These weights improve upon the results of the original paper by using a modified version of TorchVision's
                `new training recipe
                <https://pytorch.org/blog/how-to-train-state-of-the-art-models-using-torchvision-latest-primitives/>`_.
            """})  # noqa: E501  (torchvision's text, kept as it is)
    DEFAULT = IMAGENET1K_V2


@builder(MobileNet_V2_Weights, MobileNet_V2_Weights.IMAGENET1K_V1)
def mobilenet_v2(*, weights=None, progress=True, **kwargs):
    """MobileNetV2; weights: MobileNet_V2_Weights or None."""
    weights = MobileNet_V2_Weights.verify(weights)
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = MobileNetV2(**kwargs)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model
