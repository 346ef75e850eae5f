"""torchvision.transforms.functional: image ops that take a PIL image or a tensor.

Each function checks its arguments as torchvision does, then hands a PIL image to
`_functional_pil` and a (..., C, H, W) tensor to `_functional_tensor`. Geometry that both
share (output sizes, the inverse affine matrix, perspective coefficients) is computed here once.

Read next: `transforms.py`, the transform classes built on these functions.
"""
import enum
import math
import numbers
import sys
import warnings

import numpy as np

import ember

from .. import _pil
from . import _functional_pil as F_pil
from . import _functional_tensor as F_t


class InterpolationMode(enum.Enum):
    """How pixels between samples are computed (the value is the tensor mode's name)."""
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


# Pillow's resampling constants for each mode, and back
pil_modes_mapping = {InterpolationMode.NEAREST: 0, InterpolationMode.BILINEAR: 2,
                     InterpolationMode.BICUBIC: 3, InterpolationMode.NEAREST_EXACT: 0,
                     InterpolationMode.BOX: 4, InterpolationMode.HAMMING: 5,
                     InterpolationMode.LANCZOS: 1}
_MODES_FROM_PIL = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR,
                   3: InterpolationMode.BICUBIC, 4: InterpolationMode.BOX,
                   5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}


def _interpolation(interpolation):
    if isinstance(interpolation, int):
        return _MODES_FROM_PIL[interpolation]
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a "
                        "corresponding Pillow integer constant")
    return interpolation


def _is_tensor(img):
    return isinstance(img, ember.Tensor)


def _check_pil_or_tensor(img):
    if not (_is_tensor(img) or _pil.is_pil_image(img)):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")


def get_dimensions(img):
    """[channels, height, width] of a PIL image or tensor."""
    if _is_tensor(img):
        return F_t.get_dimensions(img)
    _check_pil_or_tensor(img)
    return F_pil.get_dimensions(img)


def get_image_size(img):
    """[width, height] of a PIL image or tensor."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img):
    """The number of channels of a PIL image or tensor."""
    return get_dimensions(img)[0]


def to_tensor(pic):
    """PIL image or (H, W[, C]) ndarray -> (C, H, W) tensor; uint8 becomes float in [0, 1]
    (the default dtype), other dtypes keep their values."""
    if not (_pil.is_pil_image(pic) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        array = pic[:, :, None] if pic.ndim == 2 else pic
    else:
        array = _pil_array(pic)
    img = ember.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1)))
    if img.dtype == ember.uint8:
        return img.to(dtype=ember.get_default_dtype()).div(255)
    return img


def _pil_array(pic):
    """(H, W, C) array of a PIL image, in the dtype of its mode ('1' becomes 0 / 255)."""
    dtypes = {"I": np.int32, "I;16" if sys.byteorder == "little" else "I;16B": np.int16,
              "F": np.float32}
    array = np.array(pic, dtypes.get(pic.mode, np.uint8), copy=True)
    if pic.mode == "1":
        array = 255 * array
    return array.reshape(pic.size[1], pic.size[0], len(pic.getbands()))


def pil_to_tensor(pic):
    """PIL image -> (C, H, W) tensor with the image's own dtype and values (no scaling)."""
    if not _pil.is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    array = np.array(pic, copy=True)
    array = array.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
    return ember.from_numpy(array).permute((2, 0, 1))


def convert_image_dtype(image, dtype=ember.float32):
    """Convert a tensor image to `dtype`, rescaling values to that dtype's range."""
    if not _is_tensor(image):
        raise TypeError("Input img should be Tensor Image")
    return F_t.convert_image_dtype(image, dtype)


def to_pil_image(pic, mode=None):
    """(C, H, W) tensor or (H, W, C) ndarray -> PIL image; float data is scaled by 255.
    The mode is inferred from channels and dtype as torchvision does."""
    if _is_tensor(pic):
        if pic.ndim == 3:
            pic = pic.permute((1, 2, 0))
        pic = pic.detach().cpu().numpy()
    elif not isinstance(pic, np.ndarray):
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if pic.ndim == 2:
        pic = np.expand_dims(pic, 2)
    if pic.ndim != 3:
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if pic.shape[-1] > 4:
        raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-1]} channels.")
    if np.issubdtype(pic.dtype, np.floating) and mode != "F":
        pic = (pic * 255).astype(np.uint8)
    pic, mode = _pil_mode(pic, mode)
    return _pil.fromarray(np.ascontiguousarray(pic), mode)


def _pil_mode(pic, mode):
    channels = pic.shape[2]
    if channels == 1:
        pic = pic[:, :, 0]
        expected = {np.dtype(np.uint8): "L", np.dtype(np.int32): "I",
                    np.dtype(np.float32): "F",
                    np.dtype(np.int16): "I;16" if sys.byteorder == "little" else "I;16B"
                    }.get(pic.dtype)
        if mode is not None and mode != expected:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {np.dtype}. "
                             f"Should be {expected}")
        mode = expected
    else:
        permitted, default = {2: (["LA"], "LA"), 4: (["RGBA", "CMYK", "RGBX"], "RGBA"),
                              3: (["RGB", "YCbCr", "HSV"], "RGB")}[channels]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for {channels}D inputs")
        if mode is None and pic.dtype == np.uint8:
            mode = default
    if mode is None:
        raise TypeError(f"Input type {pic.dtype} is not supported")
    return pic, mode


def normalize(tensor, mean, std, inplace=False):
    """(tensor - mean[c]) / std[c] for each channel c of a float tensor image."""
    if not _is_tensor(tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    return F_t.normalize(tensor, mean=mean, std=std, inplace=inplace)


def _compute_resized_output_size(image_size, size, max_size=None, allow_size_none=False):
    """[h, w] after resizing: an explicit (h, w), or the short side to size[0] keeping the
    aspect ratio (the long side truncated), capped by max_size."""
    h, w = image_size
    short, long = (w, h) if w <= h else (h, w)
    if size is None:
        if not allow_size_none:
            raise ValueError("This should never happen!!")
        if not isinstance(max_size, int):
            raise ValueError(f"max_size must be an integer when size is None, but got "
                             f"{max_size} instead.")
        new_short, new_long = int(max_size * short / long), max_size
    elif len(size) == 1:
        requested = size if isinstance(size, int) else size[0]
        new_short, new_long = requested, int(requested * long / short)
        if max_size is not None:
            if max_size <= requested:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the "
                                 f"requested size for the smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
    else:
        return [size[0], size[1]]
    new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    return [new_h, new_w]


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
           antialias=True):
    """Resize to (h, w), or the smaller edge to `size`. PIL images are always antialiased
    (bilinear/bicubic); tensors are when `antialias` is True (the default)."""
    interpolation = _interpolation(interpolation)
    if isinstance(size, (list, tuple)):
        if len(size) not in (1, 2):
            raise ValueError(f"Size must be an int or a 1 or 2 element tuple/list, not a "
                             f"{len(size)} element tuple/list")
        if max_size is not None and len(size) != 1:
            raise ValueError("max_size should only be passed if size specifies the length of "
                             "the smaller edge, i.e. size should be an int or a sequence of "
                             "length 1 in torchscript mode.")
    _, height, width = get_dimensions(img)
    size = [size] if isinstance(size, int) else size
    output_size = _compute_resized_output_size((height, width), size, max_size)
    if [height, width] == output_size:
        return img
    if not _is_tensor(img):
        if antialias is False:
            warnings.warn("Anti-alias option is always applied for PIL Image input. Argument "
                          "antialias is ignored.")
        return F_pil.resize(img, output_size, pil_modes_mapping[interpolation])
    return F_t.resize(img, output_size, interpolation.value, antialias)


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad the borders: padding is an int, (left/right, top/bottom) or (l, t, r, b);
    padding_mode is constant, edge, reflect or symmetric."""
    if _is_tensor(img):
        return F_t.pad(img, padding=padding, fill=fill, padding_mode=padding_mode)
    return F_pil.pad(img, padding=padding, fill=fill, padding_mode=padding_mode)


def crop(img, top, left, height, width):
    """The (height, width) box at (top, left); outside the image counts as zero padding."""
    if _is_tensor(img):
        return F_t.crop(img, top, left, height, width)
    return F_pil.crop(img, top, left, height, width)


def _pair(size):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, (tuple, list)) and len(size) == 1:
        return size[0], size[0]
    return size


def center_crop(img, output_size):
    """The central crop of `output_size` (zero-padded first if the image is smaller)."""
    crop_height, crop_width = _pair(output_size)
    _, height, width = get_dimensions(img)
    if crop_width > width or crop_height > height:
        padding = [(crop_width - width) // 2 if crop_width > width else 0,
                   (crop_height - height) // 2 if crop_height > height else 0,
                   (crop_width - width + 1) // 2 if crop_width > width else 0,
                   (crop_height - height + 1) // 2 if crop_height > height else 0]
        img = pad(img, padding, fill=0)
        _, height, width = get_dimensions(img)
        if crop_width == width and crop_height == height:
            return img
    top = int(round((height - crop_height) / 2.0))
    left = int(round((width - crop_width) / 2.0))
    return crop(img, top, left, crop_height, crop_width)


def resized_crop(img, top, left, height, width, size,
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
    """crop, then resize to `size`."""
    img = crop(img, top, left, height, width)
    return resize(img, size, interpolation, antialias=antialias)


def hflip(img):
    """Mirror left-right."""
    return F_t.hflip(img) if _is_tensor(img) else F_pil.hflip(img)


def vflip(img):
    """Mirror top-bottom."""
    return F_t.vflip(img) if _is_tensor(img) else F_pil.vflip(img)


def _get_perspective_coeffs(startpoints, endpoints):
    """The 8 coefficients mapping output pixels back to input pixels (least squares in
    float64, rounded to float32 as torchvision does)."""
    if len(startpoints) != 4 or len(endpoints) != 4:
        raise ValueError(f"Please provide exactly four corners, got {len(startpoints)} "
                         f"startpoints and {len(endpoints)} endpoints.")
    a = np.zeros((8, 8))
    for i, ((x, y), (u, v)) in enumerate(zip(endpoints, startpoints)):
        a[2 * i] = [x, y, 1, 0, 0, 0, -u * x, -u * y]
        a[2 * i + 1] = [0, 0, 0, x, y, 1, -v * x, -v * y]
    b = np.asarray(startpoints, dtype=np.float64).reshape(8)
    solution = np.linalg.lstsq(a, b, rcond=None)[0]
    return solution.astype(np.float32).tolist()


def perspective(img, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR,
                fill=None):
    """The projective transform that moves `startpoints` (4 corners) to `endpoints`."""
    coeffs = _get_perspective_coeffs(startpoints, endpoints)
    interpolation = _interpolation(interpolation)
    if not _is_tensor(img):
        return F_pil.perspective(img, coeffs, pil_modes_mapping[interpolation], fill=fill)
    return F_t.perspective(img, coeffs, interpolation.value, fill=fill)


def five_crop(img, size):
    """The four corner crops and the central crop, in that order (tl, tr, bl, br, center)."""
    size = _pair(size)
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    _, height, width = get_dimensions(img)
    crop_height, crop_width = size
    if crop_width > width or crop_height > height:
        raise ValueError(f"Requested crop size {size} is bigger than input size "
                         f"{(height, width)}")
    bottom, right = height - crop_height, width - crop_width
    return (crop(img, 0, 0, crop_height, crop_width),
            crop(img, 0, right, crop_height, crop_width),
            crop(img, bottom, 0, crop_height, crop_width),
            crop(img, bottom, right, crop_height, crop_width),
            center_crop(img, [crop_height, crop_width]))


def ten_crop(img, size, vertical_flip=False):
    """five_crop of the image and of its mirror image (left-right, or top-bottom)."""
    size = _pair(size)
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    flipped = vflip(img) if vertical_flip else hflip(img)
    return five_crop(img, size) + five_crop(flipped, size)


def _colour(name, img, factor):
    backend = F_t if _is_tensor(img) else F_pil
    return getattr(backend, name)(img, factor)


def adjust_brightness(img, brightness_factor):
    """Blend with black: 0 gives black, 1 the original, 2 twice as bright."""
    return _colour("adjust_brightness", img, brightness_factor)


def adjust_contrast(img, contrast_factor):
    """Blend with the mean grey level: 0 gives solid grey, 1 the original."""
    return _colour("adjust_contrast", img, contrast_factor)


def adjust_saturation(img, saturation_factor):
    """Blend with the greyscale image: 0 gives grey, 1 the original."""
    return _colour("adjust_saturation", img, saturation_factor)


def adjust_hue(img, hue_factor):
    """Shift the hue by hue_factor (in [-0.5, 0.5]) of a full turn."""
    return _colour("adjust_hue", img, hue_factor)


def adjust_sharpness(img, sharpness_factor):
    """Blend with a smoothed image: 0 gives blurred, 1 the original, 2 sharpened."""
    return _colour("adjust_sharpness", img, sharpness_factor)


def adjust_gamma(img, gamma, gain=1):
    """Gamma correction: gain * value ** gamma on values in [0, 1]."""
    if _is_tensor(img):
        return F_t.adjust_gamma(img, gamma, gain)
    return F_pil.adjust_gamma(img, gamma, gain)


def _get_inverse_affine_matrix(center, angle, translate, scale, shear, inverted=True):
    """The 2x3 matrix (row-major, 6 numbers) of rotation by `angle` degrees, shear, scale
    and translation about `center`; inverted (output -> input) unless inverted=False."""
    rot = math.radians(angle)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    # rotation-with-shear matrix [[a, b], [c, d]], as torchvision composes it
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    if inverted:
        m = [x / scale for x in (d, -b, 0.0, -c, a, 0.0)]
        m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty) + cx
        m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty) + cy
    else:
        m = [x * scale for x in (a, b, 0.0, c, d, 0.0)]
        m[2] += m[0] * -cx + m[1] * -cy
        m[5] += m[3] * -cx + m[4] * -cy
        m[2] += cx + tx
        m[5] += cy + ty
    return m


def _tensor_center(img, center):
    """A tensor transform's centre, relative to the image centre."""
    if center is None:
        return [0.0, 0.0]
    _, height, width = get_dimensions(img)
    return [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]


def rotate(img, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None,
           fill=None):
    """Rotate counter-clockwise by `angle` degrees about `center` (the image centre by
    default); expand=True grows the output to hold the whole rotated image."""
    interpolation = _interpolation(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    if not _is_tensor(img):
        return F_pil.rotate(img, angle, pil_modes_mapping[interpolation], expand, center,
                            fill)
    matrix = _get_inverse_affine_matrix(_tensor_center(img, center), -angle, [0.0, 0.0], 1.0,
                                        [0.0, 0.0])
    return F_t.rotate(img, matrix, interpolation.value, expand, fill)


def _check_affine_args(angle, translate, scale, shear, center):
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if not isinstance(translate, (list, tuple)):
        raise TypeError("Argument translate should be a sequence")
    if len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if not isinstance(shear, (numbers.Number, list, tuple)):
        raise TypeError("Shear should be either a single value or a sequence of two values")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    shear = [shear, 0.0] if isinstance(shear, numbers.Number) else list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    return float(angle), list(translate), shear


def affine(img, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST,
           fill=None, center=None):
    """Rotate by `angle`, translate, scale and shear (degrees), keeping the image size."""
    interpolation = _interpolation(interpolation)
    angle, translate, shear = _check_affine_args(angle, translate, scale, shear, center)
    _, height, width = get_dimensions(img)
    if not _is_tensor(img):
        center = [width * 0.5, height * 0.5] if center is None else center
        matrix = _get_inverse_affine_matrix(center, angle, translate, scale, shear)
        return F_pil.affine(img, matrix, pil_modes_mapping[interpolation], fill=fill)
    matrix = _get_inverse_affine_matrix(_tensor_center(img, center), angle,
                                        [1.0 * t for t in translate], scale, shear)
    return F_t.affine(img, matrix, interpolation.value, fill=fill)


def to_grayscale(img, num_output_channels=1):
    """PIL image to greyscale (1 or 3 identical channels)."""
    if _pil.is_pil_image(img):
        return F_pil.to_grayscale(img, num_output_channels)
    raise TypeError("Input should be PIL Image")


def rgb_to_grayscale(img, num_output_channels=1):
    """RGB to greyscale (1 or 3 identical channels), PIL image or tensor."""
    if _is_tensor(img):
        return F_t.rgb_to_grayscale(img, num_output_channels)
    return F_pil.to_grayscale(img, num_output_channels)


def erase(img, i, j, h, w, v, inplace=False):
    """Set the (h, w) box at (i, j) of a tensor image to `v`."""
    if not _is_tensor(img):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    return F_t.erase(img, i, j, h, w, v, inplace=inplace)


def _blur_args(kernel_size, sigma):
    if not isinstance(kernel_size, (int, list, tuple)):
        raise TypeError(f"kernel_size should be int or a sequence of integers. Got "
                        f"{type(kernel_size)}")
    kernel_size = [kernel_size, kernel_size] if isinstance(kernel_size, int) else kernel_size
    if len(kernel_size) != 2:
        raise ValueError(f"If kernel_size is a sequence its length should be 2. Got "
                         f"{len(kernel_size)}")
    if any(k % 2 == 0 or k < 0 for k in kernel_size):
        raise ValueError(f"kernel_size should have odd and positive integers. Got "
                         f"{kernel_size}")
    if sigma is None:
        sigma = [k * 0.15 + 0.35 for k in kernel_size]
    if not isinstance(sigma, (int, float, list, tuple)):
        raise TypeError(f"sigma should be either float or sequence of floats. Got "
                        f"{type(sigma)}")
    sigma = [float(sigma)] * 2 if isinstance(sigma, (int, float)) else list(sigma)
    sigma = sigma * 2 if len(sigma) == 1 else sigma
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    if any(s <= 0.0 for s in sigma):
        raise ValueError(f"sigma should have positive values. Got {sigma}")
    return list(kernel_size), sigma


def gaussian_blur(img, kernel_size, sigma=None):
    """Gaussian blur with an odd (kx, ky) kernel; sigma defaults to 0.3 ((k-1)/2 - 1) + 0.8.
    PIL images go through the tensor path (as in torchvision) and come back as PIL."""
    kernel_size, sigma = _blur_args(kernel_size, sigma)
    _check_pil_or_tensor(img)
    t_img = img if _is_tensor(img) else pil_to_tensor(img)
    out = F_t.gaussian_blur(t_img, kernel_size, sigma)
    return out if _is_tensor(img) else to_pil_image(out, mode=img.mode)


def invert(img):
    """max - value for every pixel."""
    return F_t.invert(img) if _is_tensor(img) else F_pil.invert(img)


def posterize(img, bits):
    """Keep the `bits` (0 to 8) most significant bits of each channel."""
    if not 0 <= bits <= 8:
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    return F_t.posterize(img, bits) if _is_tensor(img) else F_pil.posterize(img, bits)


def solarize(img, threshold):
    """Invert every pixel at or above `threshold`."""
    return F_t.solarize(img, threshold) if _is_tensor(img) else F_pil.solarize(img, threshold)


def autocontrast(img):
    """Stretch each channel so its darkest pixel is black and its lightest white."""
    return F_t.autocontrast(img) if _is_tensor(img) else F_pil.autocontrast(img)


def equalize(img):
    """Equalise each channel's histogram (uint8)."""
    return F_t.equalize(img) if _is_tensor(img) else F_pil.equalize(img)
