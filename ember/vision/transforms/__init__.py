"""torchvision.transforms: image transforms for PIL images and (..., C, H, W) tensors.

`transforms.py` holds the classes, `functional.py` the functions they call (with a PIL and a
tensor backend each), `v2/` the v2 names. Read `functional.py` first.
"""
from . import functional, v2  # noqa: F401
from .autoaugment import AutoAugment, AutoAugmentPolicy, RandAugment, TrivialAugmentWide
from .transforms import *  # noqa: F401, F403
from .transforms import __all__ as _classes

__all__ = _classes + ["AutoAugment", "AutoAugmentPolicy", "RandAugment", "TrivialAugmentWide"]
