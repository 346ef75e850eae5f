"""The preprocessing that pretrained weights expect (`weights.transforms()`).

Read next: `ember/vision/models/_api.py`, where Weights name these.
"""
import ember
from ember import nn

from . import functional as F
from .functional import InterpolationMode

__all__ = ["ImageClassification"]


class ImageClassification(nn.Module):
    """Resize the short side to resize_size, centre-crop crop_size, scale to [0, 1] floats
    and normalise with ImageNet's mean and std (PIL images and (B,) C, H, W tensors)."""

    def __init__(self, *, crop_size, resize_size=256, mean=(0.485, 0.456, 0.406),
                 std=(0.229, 0.224, 0.225), interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
        super().__init__()
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img):
        """The normalised float tensor."""
        img = F.resize(img, self.resize_size, interpolation=self.interpolation,
                       antialias=self.antialias)
        img = F.center_crop(img, self.crop_size)
        if not isinstance(img, ember.Tensor):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, ember.float32)
        return F.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self):
        return (f"{type(self).__name__}(\n    crop_size={self.crop_size}\n    resize_size="
                f"{self.resize_size}\n    mean={self.mean}\n    std={self.std}\n    "
                f"interpolation={self.interpolation}\n)")

    def describe(self):
        """What the preprocessing does, in words (torchvision's docs text)."""
        return (f"Accepts ``PIL.Image``, batched ``(B, C, H, W)`` and single ``(C, H, W)`` "
                f"image ``torch.Tensor`` objects. The images are resized to ``resize_size="
                f"{self.resize_size}`` using ``interpolation={self.interpolation}``, followed "
                f"by a central crop of ``crop_size={self.crop_size}``. Finally the values are "
                f"first rescaled to ``[0.0, 1.0]`` and then normalized using ``mean="
                f"{self.mean}`` and ``std={self.std}``.")
