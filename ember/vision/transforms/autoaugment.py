"""Learned and random augmentation policies: AutoAugment (Cubuk et al., 2018), RandAugment
(Cubuk et al., 2019) and TrivialAugmentWide (Mueller & Hutter, 2021).

Each policy picks image operations (shear, translate, rotate, colour, posterize, ...) and a
magnitude from a table of `num_bins` levels, drawing ember's generator with torchvision's
calls in torchvision's order; the operations are the `functional` ones, so PIL images and
tensors both work.

Read next: `v2/__init__.py`.
"""
import enum
import math

import ember
from ember import nn

from . import functional as F
from .functional import InterpolationMode

__all__ = ["AutoAugmentPolicy", "AutoAugment", "RandAugment", "TrivialAugmentWide"]


def _apply_op(img, op_name, magnitude, interpolation, fill):
    """One named operation at one magnitude."""
    if op_name in ("ShearX", "ShearY"):
        shear = math.degrees(math.atan(magnitude))
        return F.affine(img, angle=0.0, translate=[0, 0], scale=1.0,
                        shear=[shear, 0.0] if op_name == "ShearX" else [0.0, shear],
                        interpolation=interpolation, fill=fill, center=[0, 0])
    if op_name in ("TranslateX", "TranslateY"):
        shift = [int(magnitude), 0] if op_name == "TranslateX" else [0, int(magnitude)]
        return F.affine(img, angle=0.0, translate=shift, scale=1.0, interpolation=interpolation,
                        shear=[0.0, 0.0], fill=fill)
    if op_name == "Rotate":
        return F.rotate(img, magnitude, interpolation=interpolation, fill=fill)
    factors = {"Brightness": F.adjust_brightness, "Color": F.adjust_saturation,
               "Contrast": F.adjust_contrast, "Sharpness": F.adjust_sharpness}
    if op_name in factors:
        return factors[op_name](img, 1.0 + magnitude)
    if op_name == "Posterize":
        return F.posterize(img, int(magnitude))
    if op_name == "Solarize":
        return F.solarize(img, magnitude)
    plain = {"AutoContrast": F.autocontrast, "Equalize": F.equalize, "Invert": F.invert,
             "Identity": lambda x: x}
    if op_name in plain:
        return plain[op_name](img)
    raise ValueError(f"The provided operator {op_name} is not recognized.")


def _tensor_fill(img, fill):
    if not isinstance(img, ember.Tensor) or fill is None:
        return fill
    if isinstance(fill, (int, float)):
        return [float(fill)] * F.get_dimensions(img)[0]
    return [float(f) for f in fill]


def _none():
    return ember.tensor(0.0), False


def _space(num_bins, shear, translate, rotate, enhance, posterize_range):
    """name -> (magnitude levels, whether the sign is random), in torchvision's order."""
    return {
        "ShearX": (ember.linspace(0.0, shear, num_bins), True),
        "ShearY": (ember.linspace(0.0, shear, num_bins), True),
        "TranslateX": (ember.linspace(0.0, translate[1], num_bins), True),
        "TranslateY": (ember.linspace(0.0, translate[0], num_bins), True),
        "Rotate": (ember.linspace(0.0, rotate, num_bins), True),
        "Brightness": (ember.linspace(0.0, enhance, num_bins), True),
        "Color": (ember.linspace(0.0, enhance, num_bins), True),
        "Contrast": (ember.linspace(0.0, enhance, num_bins), True),
        "Sharpness": (ember.linspace(0.0, enhance, num_bins), True),
        "Posterize": (8 - (ember.arange(num_bins) / ((num_bins - 1) / posterize_range))
                      .round().int(), False),
        "Solarize": (ember.linspace(255.0, 0.0, num_bins), False),
        "AutoContrast": _none(),
        "Equalize": _none(),
    }


def _paper_space(num_bins, image_size):
    """AutoAugment's and RandAugment's ranges (translation: 150/331 of the size)."""
    return _space(num_bins, 0.3, [150.0 / 331.0 * image_size[0], 150.0 / 331.0 * image_size[1]],
                  30.0, 0.9, 4)


class AutoAugmentPolicy(enum.Enum):
    """The policies learnt on ImageNet, CIFAR-10 and SVHN."""
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


# (op, probability, magnitude level) pairs of the published policies
_POLICIES = {
    AutoAugmentPolicy.IMAGENET: [
        (("Posterize", 0.4, 8), ("Rotate", 0.6, 9)),
        (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
        (("Posterize", 0.6, 7), ("Posterize", 0.6, 6)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)),
        (("Equalize", 0.4, None), ("Rotate", 0.8, 8)),
        (("Solarize", 0.6, 3), ("Equalize", 0.6, None)),
        (("Posterize", 0.8, 5), ("Equalize", 1.0, None)),
        (("Rotate", 0.2, 3), ("Solarize", 0.6, 8)),
        (("Equalize", 0.6, None), ("Posterize", 0.4, 6)),
        (("Rotate", 0.8, 8), ("Color", 0.4, 0)),
        (("Rotate", 0.4, 9), ("Equalize", 0.6, None)),
        (("Equalize", 0.0, None), ("Equalize", 0.8, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Rotate", 0.8, 8), ("Color", 1.0, 2)),
        (("Color", 0.8, 8), ("Solarize", 0.8, 7)),
        (("Sharpness", 0.4, 7), ("Invert", 0.6, None)),
        (("ShearX", 0.6, 5), ("Equalize", 1.0, None)),
        (("Color", 0.4, 0), ("Equalize", 0.6, None)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)),
        (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
    ],
    AutoAugmentPolicy.CIFAR10: [
        (("Invert", 0.1, None), ("Contrast", 0.2, 6)),
        (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
        (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)),
        (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.5, None), ("Equalize", 0.9, None)),
        (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
        (("Color", 0.4, 3), ("Brightness", 0.6, 7)),
        (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
        (("Equalize", 0.6, None), ("Equalize", 0.5, None)),
        (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
        (("Color", 0.7, 7), ("TranslateX", 0.5, 8)),
        (("Equalize", 0.3, None), ("AutoContrast", 0.4, None)),
        (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)),
        (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
        (("Solarize", 0.5, 2), ("Invert", 0.0, None)),
        (("Equalize", 0.2, None), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.2, None), ("Equalize", 0.6, None)),
        (("Color", 0.9, 9), ("Equalize", 0.6, None)),
        (("AutoContrast", 0.8, None), ("Solarize", 0.2, 8)),
        (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
        (("Solarize", 0.4, 5), ("AutoContrast", 0.9, None)),
        (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.9, None), ("Solarize", 0.8, 3)),
        (("Equalize", 0.8, None), ("Invert", 0.1, None)),
        (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, None)),
    ],
    AutoAugmentPolicy.SVHN: [
        (("ShearX", 0.9, 4), ("Invert", 0.2, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.6, None), ("Solarize", 0.6, 6)),
        (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("AutoContrast", 0.8, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.4, None)),
        (("ShearY", 0.9, 5), ("Solarize", 0.2, 6)),
        (("Invert", 0.9, None), ("AutoContrast", 0.8, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("Solarize", 0.3, 3)),
        (("ShearY", 0.8, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.9, None), ("TranslateY", 0.6, 6)),
        (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Contrast", 0.3, 3), ("Rotate", 0.8, 4)),
        (("Invert", 0.8, None), ("TranslateY", 0.0, 2)),
        (("ShearY", 0.7, 6), ("Solarize", 0.4, 8)),
        (("Invert", 0.6, None), ("Rotate", 0.8, 4)),
        (("ShearY", 0.3, 7), ("TranslateX", 0.9, 3)),
        (("ShearX", 0.1, 6), ("Invert", 0.6, None)),
        (("Solarize", 0.7, 2), ("TranslateY", 0.6, 7)),
        (("ShearY", 0.8, 4), ("Invert", 0.8, None)),
        (("ShearX", 0.7, 9), ("TranslateY", 0.8, 3)),
        (("ShearY", 0.8, 5), ("AutoContrast", 0.7, None)),
        (("ShearX", 0.7, 2), ("Invert", 0.1, None)),
    ],
}


class AutoAugment(nn.Module):
    """One of the policy's 25 sub-policies, each of its two operations applied with its
    probability (signed operations get a random sign)."""

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.policy = policy
        self.interpolation = interpolation
        self.fill = fill
        self.policies = self._get_policies(policy)

    @staticmethod
    def _get_policies(policy):
        if policy not in _POLICIES:
            raise ValueError(f"The provided policy {policy} is not recognized.")
        return _POLICIES[policy]

    def _augmentation_space(self, num_bins, image_size):
        space = _paper_space(num_bins, image_size)
        space["Invert"] = _none()
        return space

    @staticmethod
    def get_params(transform_num):
        """(sub-policy index, two probabilities, two signs)."""
        policy_id = int(ember.randint(transform_num, (1,)).item())
        return policy_id, ember.rand((2,)), ember.randint(2, (2,))

    def forward(self, img):
        """The augmented image."""
        fill = _tensor_fill(img, self.fill)
        _, height, width = F.get_dimensions(img)
        transform_id, probs, signs = self.get_params(len(self.policies))
        space = self._augmentation_space(10, (height, width))
        for i, (op_name, p, level) in enumerate(self.policies[transform_id]):
            if probs[i] <= p:
                magnitudes, signed = space[op_name]
                magnitude = float(magnitudes[level].item()) if level is not None else 0.0
                if signed and signs[i] == 0:
                    magnitude *= -1.0
                img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self):
        return f"{type(self).__name__}(policy={self.policy}, fill={self.fill})"


class RandAugment(nn.Module):
    """num_ops operations chosen uniformly, all at the same magnitude level."""

    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31,
                 interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins, image_size):
        return {"Identity": _none(), **_paper_space(num_bins, image_size)}

    def forward(self, img):
        """The augmented image."""
        fill = _tensor_fill(img, self.fill)
        _, height, width = F.get_dimensions(img)
        space = self._augmentation_space(self.num_magnitude_bins, (height, width))
        for _ in range(self.num_ops):
            op_name = list(space)[int(ember.randint(len(space), (1,)).item())]
            magnitudes, signed = space[op_name]
            magnitude = float(magnitudes[self.magnitude].item()) if magnitudes.ndim > 0 else 0.0
            if signed and ember.randint(2, (1,)):
                magnitude *= -1.0
            img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self):
        return (f"{type(self).__name__}(num_ops={self.num_ops}, magnitude={self.magnitude}, "
                f"num_magnitude_bins={self.num_magnitude_bins}, interpolation="
                f"{self.interpolation}, fill={self.fill})")


class TrivialAugmentWide(nn.Module):
    """One operation chosen uniformly, at a magnitude level chosen uniformly (wide ranges)."""

    def __init__(self, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST,
                 fill=None):
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins):
        return {"Identity": _none(), **_space(num_bins, 0.99, [32.0, 32.0], 135.0, 0.99, 6)}

    def forward(self, img):
        """The augmented image."""
        fill = _tensor_fill(img, self.fill)
        space = self._augmentation_space(self.num_magnitude_bins)
        op_name = list(space)[int(ember.randint(len(space), (1,)).item())]
        magnitudes, signed = space[op_name]
        magnitude = float(magnitudes[ember.randint(len(magnitudes), (1,), dtype=ember.long)]
                          .item()) if magnitudes.ndim > 0 else 0.0
        if signed and ember.randint(2, (1,)):
            magnitude *= -1.0
        return _apply_op(img, op_name, magnitude, self.interpolation, fill)

    def __repr__(self):
        return (f"{type(self).__name__}(num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")
