"""AlexNet (Krizhevsky et al., 2012), in torchvision's one-GPU variant: five convolutions
with three max pools, a 6x6 adaptive pool and three linear layers with dropout.

Read next: `squeezenet.py`.
"""
from functools import partial

import ember
from ember import nn

from ..transforms._presets import ImageClassification
from ._api import Weights, WeightsEnum, _ovewrite_named_param, builder
from ._meta import _IMAGENET_CATEGORIES

__all__ = ["AlexNet", "AlexNet_Weights", "alexnet"]


class AlexNet(nn.Module):
    """`features` (convolutions), avgpool to 6x6, `classifier` (dropout + linear layers);
    parameters keep PyTorch's default initialisation, as in torchvision."""

    def __init__(self, num_classes=1000, dropout=0.5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(p=dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes))

    def forward(self, x):
        """Class logits of an (N, 3, H, W) batch (H, W at least 63)."""
        x = self.avgpool(self.features(x))
        return self.classifier(ember.flatten(x, 1))


class AlexNet_Weights(WeightsEnum):
    """alexnet's checkpoints."""
    IMAGENET1K_V1 = Weights(
        url="https://download.pytorch.org/models/alexnet-owt-7be5be79.pth",
        transforms=partial(ImageClassification, crop_size=224),
        meta={"num_params": 61100840, "min_size": (63, 63), "categories": _IMAGENET_CATEGORIES,
              "recipe": "https://github.com/pytorch/vision/tree/main/references/"
                        "classification#alexnet-and-vgg",
              "_metrics": {"ImageNet-1K": {"acc@1": 56.522, "acc@5": 79.066}},
              "_ops": 0.714, "_file_size": 233.087,
              "_docs": "\n                These weights reproduce closely the results of the paper "
                       "using a simplified training recipe.\n            "})
    DEFAULT = IMAGENET1K_V1


@builder(AlexNet_Weights, AlexNet_Weights.IMAGENET1K_V1)
def alexnet(*, weights=None, progress=True, **kwargs):
    """AlexNet; weights: AlexNet_Weights or None."""
    weights = AlexNet_Weights.verify(weights)
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = AlexNet(**kwargs)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model
