"""The PIL half of transforms.functional: the same image ops on PIL images.

Each op is the Pillow call torchvision makes (ImageEnhance for colour, ImageOps for padding
and tone curves, Image.transform for geometry), so results are Pillow's pixels exactly.

Read next: `functional.py`, which picks this module or `_functional_tensor.py` per input.
"""
import numbers

import numpy as np

from .. import _pil


def _check_pil(img):
    if not _pil.is_pil_image(img):
        raise TypeError(f"img should be PIL Image. Got {type(img)}")


def get_dimensions(img):
    """The PIL image version of functional.get_dimensions."""
    _check_pil(img)
    width, height = img.size
    return [len(img.getbands()), height, width]


def hflip(img):
    """The PIL image version of functional.hflip."""
    _check_pil(img)
    return img.transpose(_pil.module().Transpose.FLIP_LEFT_RIGHT)


def vflip(img):
    """The PIL image version of functional.vflip."""
    _check_pil(img)
    return img.transpose(_pil.module().Transpose.FLIP_TOP_BOTTOM)


def _enhance(img, kind, factor):
    _check_pil(img)
    return getattr(_pil.module("PIL.ImageEnhance"), kind)(img).enhance(factor)


def adjust_brightness(img, brightness_factor):
    """The PIL image version of functional.adjust_brightness."""
    return _enhance(img, "Brightness", brightness_factor)


def adjust_contrast(img, contrast_factor):
    """The PIL image version of functional.adjust_contrast."""
    return _enhance(img, "Contrast", contrast_factor)


def adjust_saturation(img, saturation_factor):
    """The PIL image version of functional.adjust_saturation."""
    return _enhance(img, "Color", saturation_factor)


def adjust_sharpness(img, sharpness_factor):
    """The PIL image version of functional.adjust_sharpness."""
    return _enhance(img, "Sharpness", sharpness_factor)


def adjust_hue(img, hue_factor):
    """Shift the H plane of PIL's HSV by hue_factor * 255 (uint8 arithmetic wraps around)."""
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    _check_pil(img)
    if img.mode in {"L", "1", "I", "F"}:
        return img
    Image = _pil.module()
    h, s, v = img.convert("HSV").split()
    hue = np.array(h, dtype=np.uint8)
    hue += np.int32(hue_factor * 255).astype(np.uint8)
    h = _pil.fromarray(hue, "L")
    return Image.merge("HSV", (h, s, v)).convert(img.mode)


def adjust_gamma(img, gamma, gain=1.0):
    """The PIL image version of functional.adjust_gamma."""
    _check_pil(img)
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    mode = img.mode
    table = [int((255 + 1 - 1e-3) * gain * pow(v / 255.0, gamma)) for v in range(256)] * 3
    return img.convert("RGB").point(table).convert(mode)


def _fill_option(fill, img, name="fillcolor"):
    """Pillow's fill argument: one value per band, integers unless the image is float."""
    bands = len(img.getbands())
    fill = 0 if fill is None else fill
    if isinstance(fill, (int, float)) and bands > 1:
        fill = tuple([fill] * bands)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = fill * bands
        elif len(fill) != bands:
            raise ValueError(f"The number of elements in 'fill' does not match the number of "
                             f"channels of the image ({len(fill)} != {bands})")
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(x) for x in fill) if isinstance(fill, tuple) else int(fill)
    return {name: fill}


def pad(img, padding, fill=0, padding_mode="constant"):
    """The PIL image version of functional.pad."""
    _check_pil(img)
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if fill is not None and not isinstance(fill, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    padding = tuple(padding) if isinstance(padding, list) else padding
    if isinstance(padding, tuple) and len(padding) not in (1, 2, 4):
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple")
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    if isinstance(padding, tuple) and len(padding) == 1:
        padding = padding[0]
    if padding_mode == "constant":
        ImageOps = _pil.module("PIL.ImageOps")
        palette = img.getpalette() if img.mode == "P" else None
        out = ImageOps.expand(img, border=padding, **_fill_option(fill, img, "fill"))
        if palette is not None:
            out.putpalette(palette)
        return out
    return _pad_numpy(img, padding, padding_mode)


def _pad_numpy(img, padding, mode):
    """Edge / reflect / symmetric padding through np.pad (negative padding crops)."""
    if isinstance(padding, int):
        left = right = top = bottom = padding
    elif len(padding) == 2:
        left = right = padding[0]
        top = bottom = padding[1]
    else:
        left, top, right, bottom = padding
    p = [left, top, right, bottom]
    cut = -np.minimum(p, 0)
    if cut.any():
        img = img.crop((cut[0], cut[1], img.width - cut[2], img.height - cut[3]))
    left, top, right, bottom = np.maximum(p, 0)
    palette = img.getpalette() if img.mode == "P" else None
    array = np.asarray(img)
    widths = ((top, bottom), (left, right)) + (((0, 0),) if array.ndim == 3 else ())
    out = _pil.module().fromarray(np.pad(array, widths, mode))
    if palette is not None:
        out.putpalette(palette)
    return out


def crop(img, top, left, height, width):
    """The PIL image version of functional.crop."""
    _check_pil(img)
    return img.crop((left, top, left + width, top + height))


def resize(img, size, interpolation):
    """The PIL image version of functional.resize."""
    _check_pil(img)
    if not (isinstance(size, list) and len(size) == 2):
        raise TypeError(f"Got inappropriate size arg: {size}")
    return img.resize(tuple(size[::-1]), interpolation)


def affine(img, matrix, interpolation, fill=None):
    """The PIL image version of functional.affine."""
    _check_pil(img)
    Image = _pil.module()
    return img.transform(img.size, Image.Transform.AFFINE, matrix, interpolation,
                         **_fill_option(fill, img))


def rotate(img, angle, interpolation, expand=False, center=None, fill=None):
    """The PIL image version of functional.rotate."""
    _check_pil(img)
    return img.rotate(angle, interpolation, expand, center, **_fill_option(fill, img))


def perspective(img, coeffs, interpolation, fill=None):
    """The PIL image version of functional.perspective."""
    _check_pil(img)
    Image = _pil.module()
    return img.transform(img.size, Image.Transform.PERSPECTIVE, coeffs, interpolation,
                         **_fill_option(fill, img))


def to_grayscale(img, num_output_channels):
    """The PIL image version of functional.to_grayscale."""
    _check_pil(img)
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    gray = img.convert("L")
    if num_output_channels == 1:
        return gray
    plane = np.array(gray, dtype=np.uint8)
    return _pil.fromarray(np.dstack([plane, plane, plane]), "RGB")


def _image_ops(name, img, *args):
    _check_pil(img)
    return getattr(_pil.module("PIL.ImageOps"), name)(img, *args)


def invert(img):
    """The PIL image version of functional.invert."""
    return _image_ops("invert", img)


def posterize(img, bits):
    """The PIL image version of functional.posterize."""
    return _image_ops("posterize", img, bits)


def solarize(img, threshold):
    """The PIL image version of functional.solarize."""
    return _image_ops("solarize", img, threshold)


def autocontrast(img):
    """The PIL image version of functional.autocontrast."""
    return _image_ops("autocontrast", img)


def equalize(img):
    """The PIL image version of functional.equalize."""
    return _image_ops("equalize", img)
