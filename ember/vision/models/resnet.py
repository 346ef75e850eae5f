"""ResNet (He et al., 2015): torchvision's module tree, names and initialisation, so a
torchvision state_dict loads with strict=True.

    stem: conv 7x7/2 -> bn -> relu -> maxpool 3x3/2
    layer1..4: residual blocks (BasicBlock: two 3x3 convs; Bottleneck: 1x1 -> 3x3 -> 1x1 with
    4x expansion), each stage after the first halving the resolution in its first block,
    whose shortcut is `downsample` (conv 1x1 + bn) when the shape changes
    head: adaptive average pool -> fc

Read next: `vgg.py` (a plainer network built the same way).
"""
from functools import partial

import ember
from ember import nn

from ..transforms._presets import ImageClassification
from ._api import Weights, WeightsEnum, _ovewrite_named_param, builder
from ._meta import _IMAGENET_CATEGORIES

__all__ = ["ResNet", "ResNet18_Weights", "ResNet34_Weights", "ResNet50_Weights",
           "ResNet101_Weights", "ResNet152_Weights", "ResNeXt50_32X4D_Weights",
           "Wide_ResNet50_2_Weights", "resnet18", "resnet34", "resnet50", "resnet101",
           "resnet152", "resnext50_32x4d", "wide_resnet50_2"]


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    """3x3 convolution, padding = dilation, no bias (a batch norm follows)."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation,
                     groups=groups, bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    """1x1 convolution without bias."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 conv-bn pairs and a shortcut: relu(bn2(conv2(relu(bn1(conv1(x))))) + x)."""
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        """The block's output."""
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class Bottleneck(nn.Module):
    """1x1 (reduce) -> 3x3 (stride, groups) -> 1x1 (expand 4x), each with bn, and a
    shortcut; the stride sits on the 3x3 conv (ResNet v1.5, as torchvision)."""
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        """The block's output."""
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    """The ResNet family for a block type and the number of blocks per stage."""

    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1,
                 width_per_group=64, replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.inplanes = 64
        self.dilation = 1
        dilate = replace_stride_with_dilation or [False, False, False]
        if len(dilate) != 3:
            raise ValueError(f"replace_stride_with_dilation should be None or a 3-element "
                             f"tuple, got {replace_stride_with_dilation}")
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3,
                               bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=dilate[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=dilate[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=dilate[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        self._init_weights(zero_init_residual)

    def _init_weights(self, zero_init_residual):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:  # each residual branch starts as zero: blocks begin as identity
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width,
                        previous_dilation, norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups,
                                base_width=self.base_width, dilation=self.dilation,
                                norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def _forward_impl(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(ember.flatten(self.avgpool(x), 1))

    def forward(self, x):
        """Class logits (N, num_classes) of an (N, 3, H, W) batch."""
        return self._forward_impl(x)


def _resnet(block, layers, weights, progress, **kwargs):
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = ResNet(block, layers, **kwargs)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


_COMMON_META = {"min_size": (1, 1), "categories": _IMAGENET_CATEGORIES}
_URL = "https://download.pytorch.org/models/"
_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#"
_V1_DOCS = "These weights reproduce closely the results of the paper using a simple training " \
           "recipe."
_V2_DOCS = """
                These weights improve upon the results of the original paper by using TorchVision's `new training recipe
                <https://pytorch.org/blog/how-to-train-state-of-the-art-models-using-torchvision-latest-primitives/>`_.
            """  # noqa: E501  (torchvision's text, kept as it is so meta compares equal)


def _weights(file, num_params, recipe, acc1, acc5, ops, file_size, docs, resize_size=256):
    """One ImageNet-1K checkpoint's Weights (ImageClassification preprocessing, 224 crop)."""
    transforms = partial(ImageClassification, crop_size=224) if resize_size == 256 else \
        partial(ImageClassification, crop_size=224, resize_size=resize_size)
    return Weights(url=_URL + file, transforms=transforms, meta={
        **_COMMON_META, "num_params": num_params, "recipe": recipe,
        "_metrics": {"ImageNet-1K": {"acc@1": acc1, "acc@5": acc5}}, "_ops": ops,
        "_file_size": file_size, "_docs": docs})


_NEW_RECIPE = "https://github.com/pytorch/vision/issues/3995#new-recipe"


class ResNet18_Weights(WeightsEnum):
    """resnet18's checkpoints."""
    IMAGENET1K_V1 = _weights("resnet18-f37072fd.pth", 11689512, _RECIPE + "resnet", 69.758,
                             89.078, 1.814, 44.661, _V1_DOCS)
    DEFAULT = IMAGENET1K_V1


class ResNet34_Weights(WeightsEnum):
    """resnet34's checkpoints."""
    IMAGENET1K_V1 = _weights("resnet34-b627a593.pth", 21797672, _RECIPE + "resnet", 73.314,
                             91.42, 3.664, 83.275, _V1_DOCS)
    DEFAULT = IMAGENET1K_V1


class ResNet50_Weights(WeightsEnum):
    """resnet50's checkpoints."""
    IMAGENET1K_V1 = _weights("resnet50-0676ba61.pth", 25557032, _RECIPE + "resnet", 76.13,
                             92.862, 4.089, 97.781, _V1_DOCS)
    IMAGENET1K_V2 = _weights("resnet50-11ad3fa6.pth", 25557032,
                             "https://github.com/pytorch/vision/issues/3995#issuecomment-"
                             "1013906621", 80.858, 95.434, 4.089, 97.79, _V2_DOCS, 232)
    DEFAULT = IMAGENET1K_V2


class ResNet101_Weights(WeightsEnum):
    """resnet101's checkpoints."""
    IMAGENET1K_V1 = _weights("resnet101-63fe2227.pth", 44549160, _RECIPE + "resnet", 77.374,
                             93.546, 7.801, 170.511, _V1_DOCS)
    IMAGENET1K_V2 = _weights("resnet101-cd907fc2.pth", 44549160, _NEW_RECIPE, 81.886, 95.78,
                             7.801, 170.53, _V2_DOCS, 232)
    DEFAULT = IMAGENET1K_V2


class ResNet152_Weights(WeightsEnum):
    """resnet152's checkpoints."""
    IMAGENET1K_V1 = _weights("resnet152-394f9c45.pth", 60192808, _RECIPE + "resnet", 78.312,
                             94.046, 11.514, 230.434, _V1_DOCS)
    IMAGENET1K_V2 = _weights("resnet152-f82ba261.pth", 60192808, _NEW_RECIPE, 82.284, 96.002,
                             11.514, 230.474, _V2_DOCS, 232)
    DEFAULT = IMAGENET1K_V2


class ResNeXt50_32X4D_Weights(WeightsEnum):
    """resnext50_32x4d's checkpoints."""
    IMAGENET1K_V1 = _weights("resnext50_32x4d-7cdf4587.pth", 25028904, _RECIPE + "resnext",
                             77.618, 93.698, 4.23, 95.789, _V1_DOCS)
    IMAGENET1K_V2 = _weights("resnext50_32x4d-1a0047aa.pth", 25028904, _NEW_RECIPE, 81.198,
                             95.34, 4.23, 95.833, _V2_DOCS, 232)
    DEFAULT = IMAGENET1K_V2


class Wide_ResNet50_2_Weights(WeightsEnum):
    """wide_resnet50_2's checkpoints."""
    IMAGENET1K_V1 = _weights("wide_resnet50_2-95faca4d.pth", 68883240,
                             "https://github.com/pytorch/vision/pull/912#issue-445437439",
                             78.468, 94.086, 11.398, 131.82, _V1_DOCS)
    IMAGENET1K_V2 = _weights("wide_resnet50_2-9ba9bcbe.pth", 68883240,
                             "https://github.com/pytorch/vision/issues/3995#new-recipe-with-"
                             "fixres", 81.602, 95.758, 11.398, 263.124, _V2_DOCS, 232)
    DEFAULT = IMAGENET1K_V2


@builder(ResNet18_Weights, ResNet18_Weights.IMAGENET1K_V1)
def resnet18(*, weights=None, progress=True, **kwargs):
    """ResNet-18 (BasicBlock x [2, 2, 2, 2]); weights: ResNet18_Weights or None."""
    weights = ResNet18_Weights.verify(weights)
    return _resnet(BasicBlock, [2, 2, 2, 2], weights, progress, **kwargs)


@builder(ResNet34_Weights, ResNet34_Weights.IMAGENET1K_V1)
def resnet34(*, weights=None, progress=True, **kwargs):
    """ResNet-34 (BasicBlock x [3, 4, 6, 3]); weights: ResNet34_Weights or None."""
    weights = ResNet34_Weights.verify(weights)
    return _resnet(BasicBlock, [3, 4, 6, 3], weights, progress, **kwargs)


@builder(ResNet50_Weights, ResNet50_Weights.IMAGENET1K_V1)
def resnet50(*, weights=None, progress=True, **kwargs):
    """ResNet-50 (Bottleneck x [3, 4, 6, 3]); weights: ResNet50_Weights or None."""
    weights = ResNet50_Weights.verify(weights)
    return _resnet(Bottleneck, [3, 4, 6, 3], weights, progress, **kwargs)


@builder(ResNet101_Weights, ResNet101_Weights.IMAGENET1K_V1)
def resnet101(*, weights=None, progress=True, **kwargs):
    """ResNet-101 (Bottleneck x [3, 4, 23, 3]); weights: ResNet101_Weights or None."""
    weights = ResNet101_Weights.verify(weights)
    return _resnet(Bottleneck, [3, 4, 23, 3], weights, progress, **kwargs)


@builder(ResNet152_Weights, ResNet152_Weights.IMAGENET1K_V1)
def resnet152(*, weights=None, progress=True, **kwargs):
    """ResNet-152 (Bottleneck x [3, 8, 36, 3]); weights: ResNet152_Weights or None."""
    weights = ResNet152_Weights.verify(weights)
    return _resnet(Bottleneck, [3, 8, 36, 3], weights, progress, **kwargs)


@builder(ResNeXt50_32X4D_Weights, ResNeXt50_32X4D_Weights.IMAGENET1K_V1)
def resnext50_32x4d(*, weights=None, progress=True, **kwargs):
    """ResNeXt-50 32x4d (grouped 3x3 convs: 32 groups of width 4)."""
    weights = ResNeXt50_32X4D_Weights.verify(weights)
    _ovewrite_named_param(kwargs, "groups", 32)
    _ovewrite_named_param(kwargs, "width_per_group", 4)
    return _resnet(Bottleneck, [3, 4, 6, 3], weights, progress, **kwargs)


@builder(Wide_ResNet50_2_Weights, Wide_ResNet50_2_Weights.IMAGENET1K_V1)
def wide_resnet50_2(*, weights=None, progress=True, **kwargs):
    """Wide ResNet-50-2 (bottleneck 3x3 convs twice as wide)."""
    weights = Wide_ResNet50_2_Weights.verify(weights)
    _ovewrite_named_param(kwargs, "width_per_group", 64 * 2)
    return _resnet(Bottleneck, [3, 4, 6, 3], weights, progress, **kwargs)
