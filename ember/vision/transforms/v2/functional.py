"""torchvision.transforms.v2.functional: the v1 functional ops under their v2 names, plus
`to_image`, `to_dtype` and the `*_image` kernel names.

v2's kernels dispatch on tv_tensors (Image, BoundingBoxes, Mask, Video); ember.vision has no
tv_tensors, so these functions take what v1's do: a PIL image or a (..., C, H, W) tensor.

Read next: `__init__.py` beside this file (the v2 transform classes).
"""
import numpy as np

import ember

from .. import _functional_tensor as F_t
from .. import functional as _v1
from ..functional import (
    InterpolationMode,
    adjust_brightness,
    adjust_contrast,
    adjust_gamma,
    adjust_hue,
    adjust_saturation,
    adjust_sharpness,
    affine,
    autocontrast,
    center_crop,
    crop,
    equalize,
    erase,
    five_crop,
    gaussian_blur,
    get_dimensions,
    get_image_num_channels,
    get_image_size,
    hflip,
    invert,
    normalize,
    pad,
    perspective,
    pil_to_tensor,
    posterize,
    resize,
    resized_crop,
    rgb_to_grayscale,
    rotate,
    solarize,
    ten_crop,
    to_grayscale,
    to_pil_image,
    vflip,
)

__all__ = ["InterpolationMode", "adjust_brightness", "adjust_contrast", "adjust_gamma",
           "adjust_hue", "adjust_saturation", "adjust_sharpness", "affine", "autocontrast",
           "center_crop", "crop", "equalize", "erase", "five_crop", "gaussian_blur",
           "get_dimensions", "get_image_num_channels", "get_image_size", "get_size",
           "get_num_channels", "hflip", "horizontal_flip", "invert", "normalize", "pad",
           "perspective", "pil_to_tensor", "posterize", "resize", "resized_crop",
           "rgb_to_grayscale", "rotate", "solarize", "ten_crop", "to_grayscale",
           "to_pil_image", "vflip", "vertical_flip", "to_image", "to_dtype",
           "convert_image_dtype", "to_tensor", "grayscale_to_rgb"]

horizontal_flip = hflip
vertical_flip = vflip
to_tensor = _v1.to_tensor
convert_image_dtype = _v1.convert_image_dtype


def get_size(inpt):
    """[height, width] of an image (v2's order, unlike v1's get_image_size)."""
    _, h, w = get_dimensions(inpt)
    return [h, w]


def get_num_channels(inpt):
    """The number of channels of an image."""
    return get_dimensions(inpt)[0]


def to_image(inpt):
    """A (C, H, W) tensor from a PIL image, an (H, W[, C]) ndarray or a tensor, keeping the
    values and dtype (v2's ToImage; ember returns a plain Tensor, not a tv_tensors.Image)."""
    if isinstance(inpt, np.ndarray):
        array = inpt[:, :, None] if inpt.ndim == 2 else inpt
        return ember.from_numpy(np.ascontiguousarray(array)).permute((2, 0, 1)).contiguous()
    if isinstance(inpt, ember.Tensor):
        return inpt
    return pil_to_tensor(inpt).contiguous()


def to_dtype(inpt, dtype=ember.float32, scale=False):
    """Cast to `dtype`; with scale=True, rescale values between the dtypes' ranges (integer
    to float multiplies by 1 / max, as v2 does, where v1's convert_image_dtype divides)."""
    if inpt.dtype == dtype:
        return inpt
    if not scale:
        return inpt.to(dtype)
    if not inpt.is_floating_point() and dtype.is_floating_point:
        return inpt.to(dtype).mul_(1.0 / F_t._max_value(inpt.dtype))
    if inpt.is_floating_point() and not dtype.is_floating_point and \
            ((inpt.dtype == ember.float32 and dtype in (ember.int32, ember.int64)) or
             (inpt.dtype == ember.float64 and dtype == ember.int64)):
        raise RuntimeError(f"The conversion from {inpt.dtype} to {dtype} cannot be performed "
                           "safely.")
    return F_t.convert_image_dtype(inpt, dtype)


def grayscale_to_rgb(inpt):
    """A 1-channel image as 3 identical channels (an RGB image is returned as it is)."""
    if not isinstance(inpt, ember.Tensor):
        return inpt.convert(mode="RGB")
    if inpt.shape[-3] >= 3:
        return inpt
    return inpt.expand(*inpt.shape[:-3], 3, *inpt.shape[-2:])
