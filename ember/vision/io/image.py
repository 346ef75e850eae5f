"""torchvision.io's image functions on Pillow: files <-> uint8 tensors (C, H, W).

torchvision decodes with libpng / libjpeg in C++; ember uses Pillow (which wraps the same
libraries), so PNG and lossless round trips are exact and JPEG decoding may differ from
torchvision's by the decoder's rounding. Encoded images are 1-d uint8 tensors of the file's
bytes, as in torchvision.

Read next: `ember/vision/ops/boxes.py`.
"""
import enum
import io

import numpy as np

import ember

from .. import _pil

__all__ = ["ImageReadMode", "read_file", "write_file", "decode_image", "decode_png",
           "decode_jpeg", "encode_png", "encode_jpeg", "read_image", "write_png", "write_jpeg"]


class ImageReadMode(enum.Enum):
    """The channels to decode to: UNCHANGED, GRAY, GRAY_ALPHA, RGB, RGB_ALPHA (alias RGBA).
    A string such as "RGB" works wherever a mode is asked for."""
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA


_PIL_MODES = {ImageReadMode.GRAY: "L", ImageReadMode.GRAY_ALPHA: "LA",
              ImageReadMode.RGB: "RGB", ImageReadMode.RGB_ALPHA: "RGBA"}


def read_file(path):
    """The file's bytes as a 1-d uint8 tensor."""
    with open(str(path), "rb") as f:
        data = f.read()
    return ember.from_numpy(np.frombuffer(data, dtype=np.uint8).copy())


def write_file(filename, data):
    """Write a 1-d uint8 tensor's bytes to a file."""
    _check_bytes(data)
    with open(str(filename), "wb") as f:
        f.write(data.numpy().tobytes())


def _check_bytes(data):
    if not isinstance(data, ember.Tensor) or data.dtype != ember.uint8 or data.ndim != 1:
        raise RuntimeError(f"Expected a 1-d uint8 tensor of encoded bytes, got "
                           f"{getattr(data, 'dtype', type(data))} of shape "
                           f"{tuple(getattr(data, 'shape', ()))}")


def _mode(mode):
    return ImageReadMode[mode.upper()] if isinstance(mode, str) else mode


def _decode(data, mode, apply_exif_orientation, expected_format=None):
    _check_bytes(data)
    image = _pil.module().open(io.BytesIO(data.numpy().tobytes()))
    if expected_format is not None and image.format != expected_format:
        raise RuntimeError(f"Expected a {expected_format} image, got {image.format}")
    if apply_exif_orientation:
        image = _pil.module("PIL.ImageOps").exif_transpose(image)
    mode = _mode(mode)
    if mode is not ImageReadMode.UNCHANGED:
        image = image.convert(_PIL_MODES[mode])
    elif image.mode not in ("L", "LA", "RGB", "RGBA", "I;16"):
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    array = np.asarray(image)
    if image.mode == "I;16":  # 16-bit PNG: torchvision returns uint16
        array = array.astype(np.uint16)
    array = array[:, :, None] if array.ndim == 2 else array
    return ember.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1)))


def decode_image(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Decode encoded bytes (a uint8 tensor, or a path) into a (C, H, W) tensor."""
    if not isinstance(input, ember.Tensor):
        input = read_file(str(input))
    return _decode(input, mode, apply_exif_orientation)


def decode_png(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Decode PNG bytes into a (C, H, W) uint8 (uint16 for 16-bit files) tensor."""
    return _decode(input, mode, apply_exif_orientation, "PNG")


def decode_jpeg(input, mode=ImageReadMode.UNCHANGED, device="cpu",
                apply_exif_orientation=False):
    """Decode JPEG bytes (or a list of them) into (C, H, W) uint8 tensors; the CPU only."""
    if str(device) != "cpu":
        raise NotImplementedError("decode_jpeg on a GPU (nvjpeg) is not supported by ember")
    if isinstance(input, list):
        if not input:
            raise ValueError("Input list must contain at least one element")
        return [_decode(x, mode, apply_exif_orientation, "JPEG") for x in input]
    return _decode(input, mode, apply_exif_orientation, "JPEG")


def read_image(path, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Read a PNG, JPEG, GIF, WEBP, ... file into a (C, H, W) uint8 tensor."""
    return decode_image(read_file(path), mode, apply_exif_orientation=apply_exif_orientation)


def _to_pil(input):
    if not isinstance(input, ember.Tensor) or input.dtype != ember.uint8 or input.ndim != 3:
        raise RuntimeError(f"Input tensor dtype should be uint8 with shape (C, H, W), got "
                           f"{getattr(input, 'dtype', type(input))} of shape "
                           f"{tuple(getattr(input, 'shape', ()))}")
    if input.shape[0] not in (1, 3):
        raise RuntimeError(f"The number of channels should be 1 or 3, got: {input.shape[0]}")
    array = input.permute(1, 2, 0).contiguous().cpu().numpy()
    return _pil.module().fromarray(array[:, :, 0] if array.shape[2] == 1 else array)


def _encode(image, **options):
    buffer = io.BytesIO()
    image.save(buffer, **options)
    return ember.from_numpy(np.frombuffer(buffer.getvalue(), dtype=np.uint8).copy())


def encode_png(input, compression_level=6):
    """A (C, H, W) uint8 image (1 or 3 channels) as PNG bytes."""
    if not 0 <= compression_level <= 9:
        raise RuntimeError("Compression level should be between 0 and 9")
    return _encode(_to_pil(input), format="PNG", compress_level=compression_level)


def write_png(input, filename, compression_level=6):
    """Write a (C, H, W) uint8 image as a PNG file."""
    write_file(filename, encode_png(input, compression_level))


def encode_jpeg(input, quality=75):
    """A (C, H, W) uint8 image (or a list of them) as JPEG bytes."""
    if quality < 1 or quality > 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    if isinstance(input, list):
        if not input:
            raise ValueError("encode_jpeg requires at least one input tensor when a list is "
                             "passed")
        return [encode_jpeg(x, quality) for x in input]
    return _encode(_to_pil(input), format="JPEG", quality=quality)


def write_jpeg(input, filename, quality=75):
    """Write a (C, H, W) uint8 image as a JPEG file."""
    write_file(filename, encode_jpeg(input, quality))
