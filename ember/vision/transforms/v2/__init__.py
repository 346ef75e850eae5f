"""torchvision.transforms.v2: the v2 transform names, over PIL images and tensors.

A v2 transform may be called with a whole sample -- `t(image, label)`, `t((image, target))`,
`t({"image": image, "label": 3})` -- and transforms only its image, passing the rest through:
the PIL image if there is one, else the first tensor met depth-first (torchvision's rule for
plain tensors). Each transform here is its v1 counterpart applied to that image, so it draws
the same random numbers as v1 in the same order.

What differs from torchvision: there are no tv_tensors (BoundingBoxes, Mask, Video), so a
sample holding more than one image to transform together raises NotImplementedError; and
uint8 tensors are resized through float32 as in v1 (torchvision's v2 has a uint8 kernel for
bilinear resizing, whose results can differ from these by 1 in rare pixels).

Read next: `functional.py` beside this file.
"""
import numpy as np

import ember
from ember import nn

from ... import _pil
from .. import transforms as _v1
from ..transforms import InterpolationMode
from . import functional

__all__ = ["Transform", "Compose", "RandomApply", "RandomChoice", "RandomOrder", "ToImage",
           "ToDtype", "ToPureTensor", "PILToTensor", "ToPILImage", "ConvertImageDtype",
           "Identity", "Lambda", "Normalize", "Resize", "CenterCrop", "RandomCrop",
           "RandomResizedCrop", "RandomHorizontalFlip", "RandomVerticalFlip", "Pad",
           "RandomRotation", "RandomAffine", "RandomPerspective", "FiveCrop", "TenCrop",
           "ColorJitter", "Grayscale", "RandomGrayscale", "RGB", "RandomErasing",
           "GaussianBlur", "RandomInvert", "RandomPosterize", "RandomSolarize",
           "RandomAdjustSharpness", "RandomAutocontrast", "RandomEqualize",
           "LinearTransformation", "InterpolationMode", "functional"]


def _flatten(tree):
    """Leaves of nested tuples / lists / dicts, depth first, and a function to rebuild."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(x) for x in tree]
        leaves = [leaf for p in parts for leaf in p[0]]

        def rebuild(values):
            out, k = [], 0
            for (part_leaves, part_rebuild) in parts:
                out.append(part_rebuild(values[k:k + len(part_leaves)]))
                k += len(part_leaves)
            return type(tree)(out)
        return leaves, rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        leaves, rebuild_values = _flatten([tree[k] for k in keys])
        return leaves, lambda values: dict(zip(keys, rebuild_values(values)))
    return [tree], lambda values: values[0]


def _image_positions(leaves, arrays_too):
    pil = [k for k, x in enumerate(leaves) if _pil.is_pil_image(x)]
    if pil:
        return pil
    kinds = (ember.Tensor, np.ndarray) if arrays_too else ember.Tensor
    return [k for k, x in enumerate(leaves) if isinstance(x, kinds)][:1]


class Transform(nn.Module):
    """Base of the v2 transforms: finds the sample's image and applies `transform` to it."""

    _accepts_ndarray = False  # ToImage also takes an (H, W, C) ndarray as the image

    def forward(self, *inputs):
        """The sample with its image transformed (a single input comes back alone)."""
        leaves, rebuild = _flatten(inputs if len(inputs) > 1 else inputs[0])
        positions = _image_positions(leaves, self._accepts_ndarray)
        if len(positions) > 1:
            raise NotImplementedError(f"{type(self).__name__}: ember.vision has no tv_tensors, "
                                      f"so a sample with {len(positions)} PIL images cannot "
                                      "be transformed together; pass one image per call")
        for k in positions:
            leaves[k] = self.transform(leaves[k], {})
        return rebuild(leaves)

    def transform(self, inpt, params):
        """Transform one image (subclasses override this)."""
        raise NotImplementedError(f"{type(self).__name__} must define transform()")


def _from_v1(v1_class, doc):
    """The v2 transform that applies `v1_class` to the sample's image."""
    call = v1_class.forward if issubclass(v1_class, nn.Module) else v1_class.__call__

    def transform(self, inpt, params):
        """The v1 transform applied to the image."""
        return call(self, inpt)

    def __init__(self, *args, **kwargs):
        Transform.__init__(self)
        v1_init = v1_class.__init__
        if v1_init is not object.__init__:
            # v1's nn.Module subclasses call Module.__init__ again: harmless before any field
            v1_init(self, *args, **kwargs)

    return type(v1_class.__name__, (Transform, v1_class),
                {"__init__": __init__, "transform": transform, "forward": Transform.forward,
                 "__doc__": doc, "__module__": __name__, "__qualname__": v1_class.__name__})


Normalize = _from_v1(_v1.Normalize, "(image - mean) / std per channel.")
Resize = _from_v1(_v1.Resize, "Resize to (h, w), or the smaller edge to `size`.")
CenterCrop = _from_v1(_v1.CenterCrop, "The central crop.")
RandomCrop = _from_v1(_v1.RandomCrop, "A random crop, after optional padding.")
RandomResizedCrop = _from_v1(_v1.RandomResizedCrop, "A random crop resized to `size`.")
RandomHorizontalFlip = _from_v1(_v1.RandomHorizontalFlip, "Mirror left-right with prob. p.")
RandomVerticalFlip = _from_v1(_v1.RandomVerticalFlip, "Mirror top-bottom with prob. p.")
Pad = _from_v1(_v1.Pad, "Pad the borders.")
RandomRotation = _from_v1(_v1.RandomRotation, "Rotate by a random angle.")
RandomAffine = _from_v1(_v1.RandomAffine, "A random affine transformation.")
RandomPerspective = _from_v1(_v1.RandomPerspective, "A random perspective distortion.")
FiveCrop = _from_v1(_v1.FiveCrop, "The four corner crops and the central crop.")
TenCrop = _from_v1(_v1.TenCrop, "FiveCrop of the image and of its mirror image.")
ColorJitter = _from_v1(_v1.ColorJitter, "Random brightness, contrast, saturation and hue.")
Grayscale = _from_v1(_v1.Grayscale, "Convert to greyscale.")
RandomGrayscale = _from_v1(_v1.RandomGrayscale, "Convert to greyscale with probability p.")
RandomErasing = _from_v1(_v1.RandomErasing, "Erase a random box with probability p.")
GaussianBlur = _from_v1(_v1.GaussianBlur, "Gaussian blur with a random sigma.")
RandomInvert = _from_v1(_v1.RandomInvert, "Invert with probability p.")
RandomPosterize = _from_v1(_v1.RandomPosterize, "Posterize with probability p.")
RandomSolarize = _from_v1(_v1.RandomSolarize, "Solarize with probability p.")
RandomAdjustSharpness = _from_v1(_v1.RandomAdjustSharpness, "Sharpen with probability p.")
RandomAutocontrast = _from_v1(_v1.RandomAutocontrast, "Autocontrast with probability p.")
RandomEqualize = _from_v1(_v1.RandomEqualize, "Equalise with probability p.")
LinearTransformation = _from_v1(_v1.LinearTransformation, "Whitening by a square matrix.")
ConvertImageDtype = _from_v1(_v1.ConvertImageDtype, "Convert dtype, rescaling values.")
PILToTensor = _from_v1(_v1.PILToTensor, "PIL image -> uint8 tensor (C, H, W).")
ToPILImage = _from_v1(_v1.ToPILImage, "Tensor or ndarray -> PIL image.")
Lambda = _from_v1(_v1.Lambda, "A user function as a transform.")


class Compose(Transform):
    """Apply transforms one after the other to the whole sample."""

    def __init__(self, transforms):
        super().__init__()
        if not isinstance(transforms, (list, tuple)):
            raise TypeError("Argument transforms should be a sequence of callables")
        if not transforms:
            raise ValueError("Pass at least one transform")
        self.transforms = transforms

    def forward(self, *inputs):
        """The sample after every transform."""
        unpack = len(inputs) > 1
        for t in self.transforms:
            outputs = t(*inputs)
            inputs = outputs if unpack else (outputs,)
        return outputs

    def extra_repr(self):
        """One line per transform."""
        return "\n".join(f"    {t}" for t in self.transforms)


class RandomApply(Compose):
    """Apply all the transforms with probability p, else none."""

    def __init__(self, transforms, p=0.5):
        super().__init__(transforms)
        if not 0.0 <= p <= 1.0:
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        self.p = p

    def forward(self, *inputs):
        """The sample, transformed or not."""
        if ember.rand(1) >= self.p:
            return inputs if len(inputs) > 1 else inputs[0]
        return super().forward(*inputs)


class RandomChoice(Transform):
    """Apply one transform, picked with probabilities p (uniform by default)."""

    def __init__(self, transforms, p=None):
        super().__init__()
        if p is None:
            p = [1] * len(transforms)
        elif len(p) != len(transforms):
            raise ValueError(f"Length of p doesn't match the number of transforms: {len(p)} != "
                             f"{len(transforms)}")
        total = sum(p)
        self.transforms = transforms
        self.p = [w / total for w in p]

    def forward(self, *inputs):
        """The sample after the chosen transform."""
        k = int(ember.multinomial(ember.tensor(self.p), 1))
        return self.transforms[k](*inputs)


class RandomOrder(Transform):
    """Apply the transforms in a random order (one ember.randperm draw)."""

    def __init__(self, transforms):
        super().__init__()
        self.transforms = transforms

    def forward(self, *inputs):
        """The sample after every transform, in the drawn order."""
        sample = inputs if len(inputs) > 1 else inputs[0]
        for k in ember.randperm(len(self.transforms)).tolist():
            sample = self.transforms[k](sample)
        return sample


class ToImage(Transform):
    """PIL image, ndarray or tensor -> (C, H, W) tensor with the same values and dtype."""

    _accepts_ndarray = True

    def transform(self, inpt, params):
        """The image as a tensor."""
        return functional.to_image(inpt)


class ToPureTensor(Transform):
    """The identity on ember (whose images are already plain tensors)."""

    def transform(self, inpt, params):
        """The image unchanged."""
        return inpt


class Identity(Transform):
    """Return the sample unchanged."""

    def transform(self, inpt, params):
        """The image unchanged."""
        return inpt


class RGB(Transform):
    """Greyscale images to 3 identical channels; RGB images unchanged."""

    def transform(self, inpt, params):
        """The image with 3 channels."""
        return functional.grayscale_to_rgb(inpt)


class ToDtype(Transform):
    """Cast the image to `dtype`; scale=True rescales the value range (see to_dtype). A dict
    of dtypes per tv_tensor type is not supported (ember has no tv_tensors)."""

    def __init__(self, dtype, scale=False):
        super().__init__()
        if isinstance(dtype, dict):
            raise NotImplementedError("ToDtype with a dict of dtypes needs tv_tensors, which "
                                      "ember.vision does not have; pass one dtype")
        self.dtype = dtype
        self.scale = scale

    def transform(self, inpt, params):
        """The converted image."""
        return functional.to_dtype(inpt, self.dtype, scale=self.scale)
