"""torchvision.transforms' classes: callables (most of them nn.Modules) over PIL images and
tensors, each a thin wrapper of one `functional` op.

The random ones draw from ember's generator with torchvision's calls in torchvision's order
(`ember.rand(1)`, `ember.randint(..., size=(1,)).item()`, `ember.empty(1).uniform_(...)`,
`ember.randperm(4)`), so `ember.manual_seed` reproduces them, and a generator that produces
torch's stream makes the same choices as torchvision. RandomOrder and RandomChoice use
Python's `random`, as torchvision does.

Read next: `v2/__init__.py` (the v2 names), or `ember/vision/models/` for what consumes them.
"""
import math
import numbers
import random
import warnings
from collections.abc import Sequence

import ember
from ember import nn

from . import functional as F
from .functional import InterpolationMode, _interpolation

__all__ = ["Compose", "ToTensor", "PILToTensor", "ConvertImageDtype", "ToPILImage",
           "Normalize", "Resize", "CenterCrop", "Pad", "Lambda", "RandomApply", "RandomChoice",
           "RandomOrder", "RandomCrop", "RandomHorizontalFlip", "RandomVerticalFlip",
           "RandomResizedCrop", "FiveCrop", "TenCrop", "LinearTransformation", "ColorJitter",
           "RandomRotation", "RandomAffine", "Grayscale", "RandomGrayscale",
           "RandomPerspective", "RandomErasing", "GaussianBlur", "InterpolationMode",
           "RandomInvert", "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness",
           "RandomAutocontrast", "RandomEqualize"]


def _listing(name, items, head=""):
    """`Name(\\n    item\\n    item\\n)`, torchvision's repr of a list of transforms."""
    return name + "(" + head + "".join(f"\n    {t}" for t in items) + "\n)"


class Compose:
    """Apply transforms one after the other."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        return _listing(type(self).__name__, self.transforms)


class ToTensor:
    """PIL image or ndarray (H, W, C) -> float tensor (C, H, W) in [0, 1] (see
    functional.to_tensor)."""

    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return f"{type(self).__name__}()"


class PILToTensor:
    """PIL image -> tensor (C, H, W) of the same dtype and values."""

    def __call__(self, pic):
        return F.pil_to_tensor(pic)

    def __repr__(self):
        return f"{type(self).__name__}()"


class ConvertImageDtype(nn.Module):
    """Convert a tensor image to `dtype`, rescaling its values."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, image):
        """The converted image."""
        return F.convert_image_dtype(image, self.dtype)


class ToPILImage:
    """Tensor (C, H, W) or ndarray (H, W, C) -> PIL image (see functional.to_pil_image)."""

    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        return f"{type(self).__name__}(" + (f"mode={self.mode}" if self.mode else "") + ")"


class Normalize(nn.Module):
    """(image - mean) / std per channel of a float tensor image."""

    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor):
        """The normalised image."""
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return f"{type(self).__name__}(mean={self.mean}, std={self.std})"


class Resize(nn.Module):
    """Resize to (h, w), or the smaller edge to `size` (see functional.resize)."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=True):
        super().__init__()
        if not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size = size
        self.max_size = max_size
        self.interpolation = _interpolation(interpolation)
        self.antialias = antialias

    def forward(self, img):
        """The resized image."""
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return (f"{type(self).__name__}(size={self.size}, interpolation="
                f"{self.interpolation.value}, max_size={self.max_size}, "
                f"antialias={self.antialias})")


def _setup_size(size, error_msg):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


_SIZE_MSG = "Please provide only two dimensions (h, w) for size."


class CenterCrop(nn.Module):
    """The central (h, w) crop (zero-padded where the image is smaller)."""

    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size, _SIZE_MSG)

    def forward(self, img):
        """The cropped image."""
        return F.center_crop(img, self.size)

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size})"


class Pad(nn.Module):
    """Pad the borders (see functional.pad)."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if not isinstance(fill, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate fill arg")
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError("Padding mode should be either constant, edge, reflect or "
                             "symmetric")
        if isinstance(padding, Sequence) and len(padding) not in (1, 2, 4):
            raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a "
                             f"{len(padding)} element tuple")
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        """The padded image."""
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self):
        return (f"{type(self).__name__}(padding={self.padding}, fill={self.fill}, "
                f"padding_mode={self.padding_mode})")


class Lambda:
    """A user function as a transform."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got "
                            f"{repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return f"{type(self).__name__}()"


class RandomTransforms:
    """Base of the transforms that pick from a list at random."""

    def __init__(self, transforms):
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence")
        self.transforms = transforms

    def __call__(self, *args, **kwargs):
        raise NotImplementedError("RandomTransforms is a base class: use RandomOrder or "
                                  "RandomChoice")

    def __repr__(self):
        return _listing(type(self).__name__, self.transforms)


class RandomApply(nn.Module):
    """Apply all the transforms with probability p, else none."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, img):
        """The image, transformed or not."""
        if self.p < ember.rand(1):
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        return _listing(type(self).__name__, self.transforms, f"\n    p={self.p}")


class RandomOrder(RandomTransforms):
    """Apply the transforms in a random order (Python's `random.shuffle`)."""

    def __call__(self, img):
        order = list(range(len(self.transforms)))
        random.shuffle(order)
        for i in order:
            img = self.transforms[i](img)
        return img


class RandomChoice(RandomTransforms):
    """Apply one transform picked at random (weights p; Python's `random.choices`)."""

    def __init__(self, transforms, p=None):
        super().__init__(transforms)
        if p is not None and not isinstance(p, Sequence):
            raise TypeError("Argument p should be a sequence")
        self.p = p

    def __call__(self, *args):
        return random.choices(self.transforms, weights=self.p)[0](*args)

    def __repr__(self):
        return f"{super().__repr__()}(p={self.p})"


class RandomCrop(nn.Module):
    """A random (h, w) crop, after optional padding."""

    @staticmethod
    def get_params(img, output_size):
        """(top, left, h, w) of a random crop of `output_size`."""
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size "
                             f"{(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = ember.randint(0, h - th + 1, size=(1,)).item()
        j = ember.randint(0, w - tw + 1, size=(1,)).item()
        return i, j, th, tw

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0,
                 padding_mode="constant"):
        super().__init__()
        self.size = tuple(_setup_size(size, _SIZE_MSG))
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img):
        """The cropped image."""
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size}, padding={self.padding})"


class _RandomlyApplied(nn.Module):
    """Apply `_apply` with probability p (one `ember.rand(1)` draw)."""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        """The image, transformed or not."""
        if ember.rand(1) < self.p:
            return self._apply_to(img)
        return img

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"


class RandomHorizontalFlip(_RandomlyApplied):
    """Mirror left-right with probability p."""

    def _apply_to(self, img):
        return F.hflip(img)


class RandomVerticalFlip(_RandomlyApplied):
    """Mirror top-bottom with probability p."""

    def _apply_to(self, img):
        return F.vflip(img)


class RandomInvert(_RandomlyApplied):
    """Invert the colours with probability p."""

    def _apply_to(self, img):
        return F.invert(img)


class RandomAutocontrast(_RandomlyApplied):
    """Autocontrast with probability p."""

    def _apply_to(self, img):
        return F.autocontrast(img)


class RandomEqualize(_RandomlyApplied):
    """Equalise the histogram with probability p."""

    def _apply_to(self, img):
        return F.equalize(img)


class RandomPosterize(_RandomlyApplied):
    """Posterize to `bits` with probability p."""

    def __init__(self, bits, p=0.5):
        super().__init__(p)
        self.bits = bits

    def _apply_to(self, img):
        return F.posterize(img, self.bits)

    def __repr__(self):
        return f"{type(self).__name__}(bits={self.bits},p={self.p})"


class RandomSolarize(_RandomlyApplied):
    """Solarize above `threshold` with probability p."""

    def __init__(self, threshold, p=0.5):
        super().__init__(p)
        self.threshold = threshold

    def _apply_to(self, img):
        return F.solarize(img, self.threshold)

    def __repr__(self):
        return f"{type(self).__name__}(threshold={self.threshold},p={self.p})"


class RandomAdjustSharpness(_RandomlyApplied):
    """Adjust the sharpness by `sharpness_factor` with probability p."""

    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(p)
        self.sharpness_factor = sharpness_factor

    def _apply_to(self, img):
        return F.adjust_sharpness(img, self.sharpness_factor)

    def __repr__(self):
        return f"{type(self).__name__}(sharpness_factor={self.sharpness_factor},p={self.p})"


def _tensor_fill(img, fill):
    """A tensor transform's fill: one float per channel."""
    if not isinstance(img, ember.Tensor):
        return fill
    if isinstance(fill, (int, float)):
        return [float(fill)] * F.get_dimensions(img)[0]
    return [float(f) for f in fill]


def _checked_fill(fill):
    if fill is None:
        return 0
    if not isinstance(fill, (Sequence, numbers.Number)):
        raise TypeError("Fill should be either a sequence or a number.")
    return fill


class RandomPerspective(nn.Module):
    """A random perspective distortion (corners moved by up to distortion_scale / 2 of the
    size) with probability p."""

    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR,
                 fill=0):
        super().__init__()
        self.p = p
        self.interpolation = _interpolation(interpolation)
        self.distortion_scale = distortion_scale
        self.fill = _checked_fill(fill)

    def forward(self, img):
        """The image, distorted or not."""
        fill = _tensor_fill(img, self.fill)
        _, height, width = F.get_dimensions(img)
        if ember.rand(1) < self.p:
            start, end = self.get_params(width, height, self.distortion_scale)
            return F.perspective(img, start, end, self.interpolation, fill)
        return img

    @staticmethod
    def get_params(width, height, distortion_scale):
        """(startpoints, endpoints): the image corners and where each one moves."""
        dx = int(distortion_scale * (width // 2))
        dy = int(distortion_scale * (height // 2))

        def draw(low, high):
            return int(ember.randint(low, high, size=(1,)).item())

        top_left = [draw(0, dx + 1), draw(0, dy + 1)]
        top_right = [draw(width - dx - 1, width), draw(0, dy + 1)]
        bottom_right = [draw(width - dx - 1, width), draw(height - dy - 1, height)]
        bottom_left = [draw(0, dx + 1), draw(height - dy - 1, height)]
        start = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return start, [top_left, top_right, bottom_right, bottom_left]

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"


def _random_boxes(area, scale, ratio):
    """torchvision's 10 tries at a box: (target area, aspect ratio) with the area fraction
    uniform in `scale` and the log of the aspect ratio uniform in log(`ratio`) (float32)."""
    log_ratio = ember.log(ember.tensor(ratio))
    for _ in range(10):
        target = area * ember.empty(1).uniform_(scale[0], scale[1]).item()
        aspect = ember.exp(ember.empty(1).uniform_(log_ratio[0].item(),
                                                   log_ratio[1].item())).item()
        yield target, aspect


class RandomResizedCrop(nn.Module):
    """A crop of random area (scale) and aspect ratio (ratio), resized to `size`."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.size = _setup_size(size, _SIZE_MSG)
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)")
        self.interpolation = _interpolation(interpolation)
        self.antialias = antialias
        self.scale = scale
        self.ratio = ratio

    @staticmethod
    def get_params(img, scale, ratio):
        """(top, left, h, w) of the random crop; after 10 misses, a central crop clamped
        to the ratio range."""
        _, height, width = F.get_dimensions(img)
        for target, aspect in _random_boxes(height * width, scale, ratio):
            w = int(round(math.sqrt(target * aspect)))
            h = int(round(math.sqrt(target / aspect)))
            if 0 < w <= width and 0 < h <= height:
                i = ember.randint(0, height - h + 1, size=(1,)).item()
                j = ember.randint(0, width - w + 1, size=(1,)).item()
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            w, h = int(round(height * max(ratio))), height
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        """The cropped and resized image."""
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation,
                              antialias=self.antialias)

    def __repr__(self):
        return (f"{type(self).__name__}(size={self.size}, "
                f"scale={tuple(round(s, 4) for s in self.scale)}, "
                f"ratio={tuple(round(r, 4) for r in self.ratio)}, "
                f"interpolation={self.interpolation.value}, antialias={self.antialias})")


class FiveCrop(nn.Module):
    """The four corner crops and the central crop (a tuple of 5 images)."""

    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size, _SIZE_MSG)

    def forward(self, img):
        """(tl, tr, bl, br, center)."""
        return F.five_crop(img, self.size)

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size})"


class TenCrop(nn.Module):
    """FiveCrop of the image and of its mirror image (a tuple of 10 images)."""

    def __init__(self, size, vertical_flip=False):
        super().__init__()
        self.size = _setup_size(size, _SIZE_MSG)
        self.vertical_flip = vertical_flip

    def forward(self, img):
        """Five crops of the image, then five of the flipped image."""
        return F.ten_crop(img, self.size, self.vertical_flip)

    def __repr__(self):
        return f"{type(self).__name__}(size={self.size}, vertical_flip={self.vertical_flip})"


class LinearTransformation(nn.Module):
    """Flatten the (C, H, W) image, subtract mean_vector, multiply by the square
    transformation_matrix (whitening), reshape back."""

    def __init__(self, transformation_matrix, mean_vector):
        super().__init__()
        n = transformation_matrix.shape
        if n[0] != n[1]:
            raise ValueError(f"transformation_matrix should be square. Got {tuple(n)} "
                             "rectangular matrix.")
        if mean_vector.shape[0] != n[0]:
            raise ValueError(f"mean_vector should have the same length {mean_vector.shape[0]} "
                             f"as any one of the dimensions of the transformation_matrix "
                             f"[{tuple(n)}]")
        if transformation_matrix.device != mean_vector.device:
            raise ValueError(f"Input tensors should be on the same device. Got "
                             f"{transformation_matrix.device} and {mean_vector.device}")
        if transformation_matrix.dtype != mean_vector.dtype:
            raise ValueError(f"Input tensors should have the same dtype. Got "
                             f"{transformation_matrix.dtype} and {mean_vector.dtype}")
        self.transformation_matrix = transformation_matrix
        self.mean_vector = mean_vector

    def forward(self, tensor):
        """The transformed image, same shape as the input."""
        shape = tensor.shape
        n = shape[-3] * shape[-2] * shape[-1]
        if n != self.transformation_matrix.shape[0]:
            raise ValueError(f"Input tensor and transformation matrix have incompatible shape."
                             f"[{shape[-3]} x {shape[-2]} x {shape[-1]}] != "
                             f"{self.transformation_matrix.shape[0]}")
        flat = tensor.reshape(-1, n) - self.mean_vector
        return ember.mm(flat, self.transformation_matrix.to(flat.dtype)).view(shape)

    def __repr__(self):
        return (f"{type(self).__name__}(transformation_matrix="
                f"{self.transformation_matrix.tolist()}, mean_vector="
                f"{self.mean_vector.tolist()})")


class ColorJitter(nn.Module):
    """Random brightness, contrast, saturation and hue changes, in a random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5),
                                     clip_first_on_zero=False)

    @staticmethod
    def _check_input(value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {value}.")
        return None if value[0] == value[1] == center else tuple(value)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        """(order of the 4 adjustments, and each factor or None)."""
        order = ember.randperm(4)
        factors = [None if r is None else float(ember.empty(1).uniform_(r[0], r[1]))
                   for r in (brightness, contrast, saturation, hue)]
        return (order, *factors)

    def forward(self, img):
        """The jittered image."""
        order, *factors = self.get_params(self.brightness, self.contrast, self.saturation,
                                          self.hue)
        adjust = (F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue)
        for k in order.tolist():
            if factors[k] is not None:
                img = adjust[k](img, factors[k])
        return img

    def __repr__(self):
        return (f"{type(self).__name__}(brightness={self.brightness}, contrast="
                f"{self.contrast}, saturation={self.saturation}, hue={self.hue})")


def _check_sequence_input(x, name, req_sizes):
    msg = req_sizes[0] if len(req_sizes) < 2 else " or ".join(str(s) for s in req_sizes)
    if not isinstance(x, Sequence):
        raise TypeError(f"{name} should be a sequence of length {msg}.")
    if len(x) not in req_sizes:
        raise ValueError(f"{name} should be a sequence of length {msg}.")


def _setup_angle(x, name, req_sizes=(2,)):
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        x = [-x, x]
    else:
        _check_sequence_input(x, name, req_sizes)
    return [float(d) for d in x]


def _uniform(low, high):
    return float(ember.empty(1).uniform_(float(low), float(high)).item())


class RandomRotation(nn.Module):
    """Rotate by an angle drawn uniformly from `degrees`."""

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False,
                 center=None, fill=0):
        super().__init__()
        self.interpolation = _interpolation(interpolation)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center
        self.expand = expand
        self.fill = _checked_fill(fill)

    @staticmethod
    def get_params(degrees):
        """The random angle, in degrees."""
        return _uniform(degrees[0], degrees[1])

    def forward(self, img):
        """The rotated image."""
        fill = _tensor_fill(img, self.fill)
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, fill)

    def __repr__(self):
        s = (f"{type(self).__name__}(degrees={self.degrees}, interpolation="
             f"{self.interpolation.value}, expand={self.expand}")
        s += f", center={self.center}" if self.center is not None else ""
        s += f", fill={self.fill}" if self.fill is not None else ""
        return s + ")"


class RandomAffine(nn.Module):
    """A random affine map: rotation from `degrees`, translation up to `translate` of the
    size, scale from `scale`, shear from `shear` (degrees)."""

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 interpolation=InterpolationMode.NEAREST, fill=0, center=None):
        super().__init__()
        self.interpolation = _interpolation(interpolation)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if translate is not None:
            _check_sequence_input(translate, "translate", req_sizes=(2,))
            if not all(0.0 <= t <= 1.0 for t in translate):
                raise ValueError("translation values should be between 0 and 1")
        self.translate = translate
        if scale is not None:
            _check_sequence_input(scale, "scale", req_sizes=(2,))
            if any(s <= 0 for s in scale):
                raise ValueError("scale values should be positive")
        self.scale = scale
        self.shear = None if shear is None else _setup_angle(shear, name="shear",
                                                              req_sizes=(2, 4))
        self.fill = _checked_fill(fill)
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center

    @staticmethod
    def get_params(degrees, translate, scale_ranges, shears, img_size):
        """(angle, (tx, ty), scale, (shear_x, shear_y)) drawn in torchvision's order."""
        angle = _uniform(degrees[0], degrees[1])
        translations = (0, 0)
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            translations = (int(round(_uniform(-max_dx, max_dx))),
                            int(round(_uniform(-max_dy, max_dy))))
        scale = 1.0 if scale_ranges is None else _uniform(scale_ranges[0], scale_ranges[1])
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = _uniform(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = _uniform(shears[2], shears[3])
        return angle, translations, scale, (shear_x, shear_y)

    def forward(self, img):
        """The transformed image."""
        fill = _tensor_fill(img, self.fill)
        _, height, width = F.get_dimensions(img)
        params = self.get_params(self.degrees, self.translate, self.scale, self.shear,
                                 [width, height])
        return F.affine(img, *params, interpolation=self.interpolation, fill=fill,
                        center=self.center)

    def __repr__(self):
        s = f"{type(self).__name__}(degrees={self.degrees}"
        s += f", translate={self.translate}" if self.translate is not None else ""
        s += f", scale={self.scale}" if self.scale is not None else ""
        s += f", shear={self.shear}" if self.shear is not None else ""
        if self.interpolation != InterpolationMode.NEAREST:
            s += f", interpolation={self.interpolation.value}"
        s += f", fill={self.fill}" if self.fill != 0 else ""
        s += f", center={self.center}" if self.center is not None else ""
        return s + ")"


class Grayscale(nn.Module):
    """Convert to greyscale with 1 or 3 output channels."""

    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img):
        """The greyscale image."""
        return F.rgb_to_grayscale(img, num_output_channels=self.num_output_channels)

    def __repr__(self):
        return f"{type(self).__name__}(num_output_channels={self.num_output_channels})"


class RandomGrayscale(nn.Module):
    """Convert to greyscale (keeping the channel count) with probability p."""

    def __init__(self, p=0.1):
        super().__init__()
        self.p = p

    def forward(self, img):
        """The image, greyscale or not."""
        channels, _, _ = F.get_dimensions(img)
        if ember.rand(1) < self.p:
            return F.rgb_to_grayscale(img, num_output_channels=channels)
        return img

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"


class RandomErasing(nn.Module):
    """With probability p, erase a random box (area fraction `scale`, aspect `ratio`) of a
    tensor image with `value` (a number, per-channel numbers, or 'random' normal noise)."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        super().__init__()
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p = p
        self.scale = scale
        self.ratio = ratio
        self.value = value
        self.inplace = inplace

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        """(i, j, h, w, v) of the box and its content; the whole image (unchanged) after
        10 misses."""
        c, height, width = img.shape[-3], img.shape[-2], img.shape[-1]
        for target, aspect in _random_boxes(height * width, scale, ratio):
            h = int(round(math.sqrt(target * aspect)))
            w = int(round(math.sqrt(target / aspect)))
            if not (h < height and w < width):
                continue
            if value is None:
                v = ember.empty([c, h, w], dtype=ember.float32).normal_()
            else:
                v = ember.tensor(value)[:, None, None]
            i = ember.randint(0, height - h + 1, size=(1,)).item()
            j = ember.randint(0, width - w + 1, size=(1,)).item()
            return i, j, h, w, v
        return 0, 0, height, width, img

    def forward(self, img):
        """The image, with a box erased or not."""
        if ember.rand(1) < self.p:
            if isinstance(self.value, (int, float)):
                value = [float(self.value)]
            elif isinstance(self.value, str):
                value = None
            else:
                value = [float(v) for v in self.value]
            if value is not None and len(value) not in (1, img.shape[-3]):
                raise ValueError(f"If value is a sequence, it should have either a single "
                                 f"value or {img.shape[-3]} (number of input channels)")
            i, j, h, w, v = self.get_params(img, scale=self.scale, ratio=self.ratio,
                                            value=value)
            return F.erase(img, i, j, h, w, v, self.inplace)
        return img

    def __repr__(self):
        return (f"{type(self).__name__}(p={self.p}, scale={self.scale}, ratio={self.ratio}, "
                f"value={self.value}, inplace={self.inplace})")


class GaussianBlur(nn.Module):
    """Gaussian blur with sigma drawn uniformly from the `sigma` range."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        super().__init__()
        self.kernel_size = _setup_size(kernel_size, "Kernel size should be a tuple/list of "
                                                    "two integers")
        if any(k <= 0 or k % 2 == 0 for k in self.kernel_size):
            raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, Sequence) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min, sigma_max):
        """The random sigma."""
        return ember.empty(1).uniform_(sigma_min, sigma_max).item()

    def forward(self, img):
        """The blurred image."""
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])

    def __repr__(self):
        return f"{type(self).__name__}(kernel_size={self.kernel_size}, sigma={self.sigma})"
