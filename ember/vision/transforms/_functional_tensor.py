"""The tensor half of transforms.functional: image ops on (..., C, H, W) ember Tensors.

Every op is written with ember's tensor ops (interpolate, grid_sample, conv2d, pad, ...), so
it runs on either device, float images keep their gradients, and uint8 images follow
torchvision's recipe: cast to float32, compute, round, cast back. The arithmetic mirrors
torchvision's step by step (same constants, same order), which is what makes the results
pixel-exact rather than merely close.

Read next: `_functional_pil.py` (the same ops on PIL images), then `functional.py`.
"""
import warnings

import ember
from ember.nn import functional as F

_INTEGER_MAX = {"uint8": 255, "int8": 127, "int16": 32767, "uint16": 65535,
                "int32": 2147483647, "int64": 9223372036854775807}


def _check_image(img):
    if not isinstance(img, ember.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    if img.ndim < 2:
        raise TypeError("Tensor is not a torch image.")


def get_dimensions(img):
    """The tensor version of functional.get_dimensions."""
    _check_image(img)
    channels = 1 if img.ndim == 2 else img.shape[-3]
    return [channels, img.shape[-2], img.shape[-1]]


def _max_value(dtype):
    """The value of "white": 1 for floats, the largest integer otherwise."""
    return _INTEGER_MAX.get(str(dtype).split(".")[-1], 1)


def _check_channels(img, permitted):
    c = get_dimensions(img)[0]
    if c not in permitted:
        raise TypeError(f"Input image tensor permitted channel values are {permitted}, but "
                        f"found {c}")


def _check_3d(img):
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found "
                        f"{img.ndim}")


def convert_image_dtype(image, dtype=ember.float32):
    """Rescale pixel values to `dtype`'s range (floats in [0, 1], integers in [0, max])."""
    if image.dtype == dtype:
        return image
    to_float = dtype.is_floating_point
    if image.is_floating_point():
        if to_float:
            return image.to(dtype)
        if (image.dtype == ember.float32 and dtype in (ember.int32, ember.int64)) or \
                (image.dtype == ember.float64 and dtype == ember.int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed "
                               "safely.")
        # just under max + 1, so that 1.0 maps to max and [0, 1) splits into equal bins
        return image.mul(float(_max_value(dtype)) + 1.0 - 1e-3).to(dtype)
    input_max = float(_max_value(image.dtype))
    if to_float:
        return image.to(dtype) / input_max
    output_max = float(_max_value(dtype))
    if input_max > output_max:
        factor = int((input_max + 1) // (output_max + 1))
        return ember.div(image, factor, rounding_mode="floor").to(dtype)
    factor = int((output_max + 1) // (input_max + 1))
    return image.to(dtype) * factor


def vflip(img):
    """The tensor version of functional.vflip."""
    _check_image(img)
    return img.flip(-2)


def hflip(img):
    """The tensor version of functional.hflip."""
    _check_image(img)
    return img.flip(-1)


def crop(img, top, left, height, width):
    """img[..., top:top+height, left:left+width]; parts outside the image are zero-padded."""
    _check_image(img)
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        padding = [max(-left + min(0, right), 0), max(-top + min(0, bottom), 0),
                   max(right - max(w, left), 0), max(bottom - max(h, top), 0)]
        return pad(img[..., max(top, 0):bottom, max(left, 0):right], padding, fill=0)
    return img[..., top:bottom, left:right]


def rgb_to_grayscale(img, num_output_channels=1):
    """ITU-R 601-2 luma (0.2989 R + 0.587 G + 0.114 B), in the input's dtype."""
    _check_3d(img)
    _check_channels(img, [1, 3])
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if img.shape[-3] == 3:
        r, g, b = img.unbind(dim=-3)
        luma = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(dim=-3)
    else:
        luma = img.clone()
    return luma.expand(img.shape) if num_output_channels == 3 else luma


def _blend(img1, img2, ratio):
    ratio = float(ratio)
    bound = _max_value(img1.dtype)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def adjust_brightness(img, brightness_factor):
    """The tensor version of functional.adjust_brightness."""
    if brightness_factor < 0:
        raise ValueError(f"brightness_factor ({brightness_factor}) is not non-negative.")
    _check_image(img)
    _check_channels(img, [1, 3])
    return _blend(img, ember.zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor):
    """The tensor version of functional.adjust_contrast."""
    if contrast_factor < 0:
        raise ValueError(f"contrast_factor ({contrast_factor}) is not non-negative.")
    _check_image(img)
    _check_channels(img, [3, 1])
    dtype = img.dtype if img.is_floating_point() else ember.float32
    gray = rgb_to_grayscale(img) if get_dimensions(img)[0] == 3 else img
    mean = ember.mean(gray.to(dtype), dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor):
    """The tensor version of functional.adjust_saturation."""
    if saturation_factor < 0:
        raise ValueError(f"saturation_factor ({saturation_factor}) is not non-negative.")
    _check_image(img)
    _check_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def adjust_hue(img, hue_factor):
    """Rotate the hue by hue_factor turns (in [-0.5, 0.5]) through HSV."""
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    _check_image(img)
    _check_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:
        return img
    dtype = img.dtype
    h, s, v = _rgb_to_hsv(convert_image_dtype(img, ember.float32)).unbind(dim=-3)
    h = (h + hue_factor) % 1.0
    return convert_image_dtype(_hsv_to_rgb(ember.stack((h, s, v), dim=-3)), dtype)


def adjust_gamma(img, gamma, gain=1):
    """gain * img ** gamma on [0, 1] values, clamped."""
    _check_image(img)
    _check_channels(img, [1, 3])
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    dtype = img.dtype
    result = img if img.is_floating_point() else convert_image_dtype(img, ember.float32)
    return convert_image_dtype((gain * result.pow(gamma)).clamp(0, 1), dtype)


def _rgb_to_hsv(img):
    r, g, b = img.unbind(dim=-3)
    maxc = img.max(dim=-3).values
    minc = img.min(dim=-3).values
    equal = maxc == minc
    chroma = maxc - minc
    ones = ember.ones_like(maxc)
    s = chroma / ember.where(equal, ones, maxc)
    divisor = ember.where(equal, ones, chroma)
    rc, gc, bc = (maxc - r) / divisor, (maxc - g) / divisor, (maxc - b) / divisor
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = ember.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return ember.stack((h, s, maxc), dim=-3)


def _hsv_to_rgb(img):
    h, s, v = img.unbind(dim=-3)
    i = ember.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.to(ember.int32) % 6
    p = ember.clamp(v * (1.0 - s), 0.0, 1.0)
    q = ember.clamp(v * (1.0 - s * f), 0.0, 1.0)
    t = ember.clamp(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    # one-hot over the six hue sectors picks each channel's value
    sector = (i.unsqueeze(dim=-3) == ember.arange(6, device=i.device).view(-1, 1, 1))
    choices = ember.stack((ember.stack((v, q, p, p, t, v), dim=-3),
                           ember.stack((t, v, v, q, p, p), dim=-3),
                           ember.stack((p, p, t, v, v, q), dim=-3)), dim=-4)
    return ember.einsum("...ijk, ...xijk -> ...xjk", sector.to(img.dtype), choices)


def _parse_padding(padding):
    """[left, right, top, bottom] from an int or a 1-, 2- or 4-element sequence."""
    if isinstance(padding, int):
        return [padding] * 4
    if len(padding) == 1:
        return [padding[0]] * 4
    if len(padding) == 2:
        return [padding[0], padding[0], padding[1], padding[1]]
    return [padding[0], padding[2], padding[1], padding[3]]


def _pad_symmetric(img, padding):
    """Mirror padding that repeats the edge pixel (NumPy's 'symmetric'), by index gathering."""
    left, right, top, bottom = [-min(p, 0) for p in padding]
    img = img[..., top:img.shape[-2] - bottom, left:img.shape[-1] - right]
    left, right, top, bottom = [max(p, 0) for p in padding]

    def indices(size, before, after):
        order = list(range(before - 1, -1, -1)) + list(range(size)) + \
            [-(k + 1) for k in range(after)]
        return ember.tensor(order, device=img.device)

    rows = indices(img.shape[-2], top, bottom)
    cols = indices(img.shape[-1], left, right)
    if img.ndim not in (3, 4):
        raise RuntimeError("Symmetric padding of N-D tensors are not supported yet")
    return img[..., rows[:, None], cols[None, :]]


def pad(img, padding, fill=0, padding_mode="constant"):
    """The tensor version of functional.pad."""
    _check_image(img)
    fill = 0 if fill is None else fill
    if not isinstance(padding, (int, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if not isinstance(fill, (int, float)):
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, (tuple, list)) and len(padding) not in (1, 2, 4):
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple")
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    p = _parse_padding(list(padding) if isinstance(padding, tuple) else padding)
    if padding_mode == "symmetric":
        return _pad_symmetric(img, p)
    mode = "replicate" if padding_mode == "edge" else padding_mode
    batch, squeeze = (img, False) if img.ndim >= 4 else (img.unsqueeze(0), True)
    dtype = batch.dtype
    cast = mode != "constant" and dtype not in (ember.float32, ember.float64)
    if cast:  # torch's reflect/replicate kernels are floating-point only
        batch = batch.to(ember.float32)
    if mode == "constant":
        batch = F.pad(batch, p, mode=mode, value=float(fill))
    else:
        batch = F.pad(batch, p, mode=mode)
    batch = batch.squeeze(0) if squeeze else batch
    return batch.to(dtype) if cast else batch


def _to_batch(img, dtypes):
    """(N, C, H, W) in one of `dtypes`, and what to undo afterwards (torchvision's recipe)."""
    squeeze = img.ndim < 4
    batch = img.unsqueeze(0) if squeeze else img
    dtype = batch.dtype
    cast = dtype not in dtypes
    return (batch.to(dtypes[0]) if cast else batch), cast, squeeze, dtype


def _from_batch(batch, cast, squeeze, dtype):
    batch = batch.squeeze(0) if squeeze else batch
    if cast:
        if not dtype.is_floating_point:
            batch = ember.round(batch)
        batch = batch.to(dtype)
    return batch


def resize(img, size, interpolation="bilinear", antialias=True):
    """F.interpolate on a float copy; align_corners=False for the (bi)linear/cubic modes."""
    _check_image(img)
    antialias = bool(antialias) and interpolation in ("bilinear", "bicubic")
    batch, cast, squeeze, dtype = _to_batch(img, [ember.float32, ember.float64])
    align_corners = False if interpolation in ("bilinear", "bicubic") else None
    batch = F.interpolate(batch, size=list(size), mode=interpolation,
                          align_corners=align_corners, antialias=antialias)
    if interpolation == "bicubic" and dtype == ember.uint8:
        batch = batch.clamp(min=0, max=255)  # cubic overshoots; uint8 must not wrap
    return _from_batch(batch, cast, squeeze, dtype)


def _check_grid_inputs(img, matrix, interpolation, fill, coeffs=None):
    _check_image(img)
    if matrix is not None and not isinstance(matrix, list):
        raise TypeError("Argument matrix should be a list")
    if matrix is not None and len(matrix) != 6:
        raise ValueError("Argument matrix should have 6 float values")
    if coeffs is not None and len(coeffs) != 8:
        raise ValueError("Argument coeffs should have 8 float values")
    if fill is not None and not isinstance(fill, (int, float, tuple, list)):
        warnings.warn("Argument fill should be either int, float, tuple or list")
    channels = get_dimensions(img)[0]
    if isinstance(fill, (tuple, list)) and len(fill) > 1 and len(fill) != channels:
        raise ValueError(f"The number of elements in 'fill' cannot broadcast to match the "
                         f"number of channels of the image ({len(fill)} != {channels})")
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError(f"Interpolation mode '{interpolation}' is unsupported with Tensor "
                         "input")


def _sample_grid(img, grid, mode, fill):
    """grid_sample with zeros outside; with `fill`, an extra all-ones channel marks the
    pixels that came from inside the image and the rest is blended towards `fill`."""
    batch, cast, squeeze, dtype = _to_batch(img, [grid.dtype])
    n, c, h, w = batch.shape
    if n > 1:
        grid = grid.expand(n, grid.shape[1], grid.shape[2], grid.shape[3])
    if fill is not None:
        batch = ember.cat((batch, ember.ones((n, 1, h, w), dtype=batch.dtype,
                                              device=batch.device)), dim=1)
    batch = F.grid_sample(batch, grid, mode=mode, padding_mode="zeros", align_corners=False)
    if fill is not None:
        batch, mask = batch[:, :-1], batch[:, -1:].expand(n, c, *batch.shape[2:])
        values = list(fill) if isinstance(fill, (tuple, list)) else [float(fill)]
        fill_img = ember.tensor(values, dtype=batch.dtype, device=batch.device).view(
            1, len(values), 1, 1).expand_as(batch)
        if mode == "nearest":
            batch = ember.where(mask < 0.5, fill_img, batch)
        else:
            batch = batch * mask + (1.0 - mask) * fill_img
    return _from_batch(batch, cast, squeeze, dtype)


def _homogeneous_product(base, matrix):
    """base (..., 3) @ matrix (3, k) as three broadcast multiply-adds summed left to right:
    how torch's CPU bmm sums a length-3 dot product, so that sampling points falling on a
    pixel boundary round to the same neighbour under nearest interpolation."""
    return base[..., 0:1] * matrix[0] + base[..., 1:2] * matrix[1] + base[..., 2:3] * matrix[2]


def _pixel_grid(xs, ys, dtype, device):
    """(1, oh * ow, 3) homogeneous pixel coordinates (x, y, 1), x fastest."""
    oh, ow = ys.shape[0], xs.shape[0]
    base = ember.stack((xs.expand(oh, ow), ys.unsqueeze(-1).expand(oh, ow),
                        ember.ones((oh, ow), dtype=dtype, device=device)), dim=-1)
    return base.view(1, oh * ow, 3)


def _affine_grid(theta, w, h, ow, oh):
    """Sampling points of an (oh, ow) output under the inverse affine map `theta` (1, 2, 3),
    in grid_sample's [-1, 1] units of the (h, w) input; pixel centres sit at +0.5."""
    x = ember.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, steps=ow, dtype=theta.dtype,
                       device=theta.device)
    y = ember.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, steps=oh, dtype=theta.dtype,
                       device=theta.device)
    scale = ember.tensor([0.5 * w, 0.5 * h], dtype=theta.dtype, device=theta.device)
    base = _pixel_grid(x, y, theta.dtype, theta.device)
    return _homogeneous_product(base, theta[0].T / scale).view(1, oh, ow, 2)


def affine(img, matrix, interpolation="nearest", fill=None):
    """Apply an inverse affine `matrix` (6 numbers, centred coordinates) to a tensor image."""
    _check_grid_inputs(img, matrix, interpolation, fill)
    dtype = img.dtype if img.is_floating_point() else ember.float32
    theta = ember.tensor(matrix, dtype=dtype, device=img.device).reshape(1, 2, 3)
    h, w = img.shape[-2:]
    return _sample_grid(img, _affine_grid(theta, w, h, w, h), interpolation, fill)


def _expanded_size(matrix, w, h):
    """The (width, height) that holds the whole image after the affine map."""
    corners = ember.tensor([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0],
                            [0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]])
    theta = ember.tensor(matrix, dtype=ember.float32).view(2, 3)
    moved = ember.matmul(corners, theta.T)
    offset = ember.tensor((w * 0.5, h * 0.5))
    low, high = moved.min(dim=0).values + offset, moved.max(dim=0).values + offset
    tol = 1e-4  # drop float noise below 1e-4 so that a 90 degree turn keeps its size
    size = ember.ceil((high / tol).trunc() * tol) - ember.floor((low / tol).trunc() * tol)
    return int(size[0]), int(size[1])


def rotate(img, matrix, interpolation="nearest", expand=False, fill=None):
    """The tensor version of functional.rotate."""
    _check_grid_inputs(img, matrix, interpolation, fill)
    h, w = img.shape[-2:]
    ow, oh = _expanded_size(matrix, w, h) if expand else (w, h)
    dtype = img.dtype if img.is_floating_point() else ember.float32
    theta = ember.tensor(matrix, dtype=dtype, device=img.device).reshape(1, 2, 3)
    return _sample_grid(img, _affine_grid(theta, w, h, ow, oh), interpolation, fill)


def perspective(img, coeffs, interpolation="bilinear", fill=None):
    """The projective map x' = (a x + b y + c) / (g x + h y + 1), ... of 8 coefficients."""
    _check_grid_inputs(img, None, interpolation, fill, coeffs)
    oh, ow = img.shape[-2:]
    dtype = img.dtype if img.is_floating_point() else ember.float32
    device = img.device
    x = ember.linspace(0.5, ow - 0.5, steps=ow, dtype=dtype, device=device)
    y = ember.linspace(0.5, oh - 0.5, steps=oh, dtype=dtype, device=device)
    base = _pixel_grid(x, y, dtype, device)
    top = ember.tensor([[coeffs[0], coeffs[1], coeffs[2]], [coeffs[3], coeffs[4], coeffs[5]]],
                       dtype=dtype, device=device)
    bottom = ember.tensor([[coeffs[6], coeffs[7], 1.0]] * 2, dtype=dtype, device=device)
    scale = ember.tensor([0.5 * ow, 0.5 * oh], dtype=dtype, device=device)
    grid = _homogeneous_product(base, top.T / scale) / _homogeneous_product(base, bottom.T) \
        - 1.0
    return _sample_grid(img, grid.view(1, oh, ow, 2), interpolation, fill)


def _gaussian_kernel1d(size, sigma, dtype, device):
    half = (size - 1) * 0.5
    x = ember.linspace(-half, half, steps=size, dtype=dtype, device=device)
    pdf = ember.exp(-0.5 * (x / sigma).pow(2))
    return pdf / pdf.sum()


def gaussian_blur(img, kernel_size, sigma):
    """Depthwise conv2d with the outer product of two 1-d Gaussians, reflect-padded."""
    _check_image(img)
    dtype = img.dtype if img.is_floating_point() else ember.float32
    kx = _gaussian_kernel1d(kernel_size[0], sigma[0], dtype, img.device)
    ky = _gaussian_kernel1d(kernel_size[1], sigma[1], dtype, img.device)
    kernel = ember.mm(ky[:, None], kx[None, :])
    kernel = kernel.expand(img.shape[-3], 1, kernel.shape[0], kernel.shape[1])
    batch, cast, squeeze, out_dtype = _to_batch(img, [kernel.dtype])
    padding = [kernel_size[0] // 2, kernel_size[0] // 2, kernel_size[1] // 2,
               kernel_size[1] // 2]
    batch = F.conv2d(F.pad(batch, padding, mode="reflect"), kernel, groups=batch.shape[-3])
    return _from_batch(batch, cast, squeeze, out_dtype)


def invert(img):
    """The tensor version of functional.invert."""
    _check_image(img)
    _check_3d(img)
    _check_channels(img, [1, 3])
    return _max_value(img.dtype) - img


def posterize(img, bits):
    """Keep the `bits` highest bits of each uint8 value."""
    _check_image(img)
    _check_3d(img)
    if img.dtype != ember.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    _check_channels(img, [1, 3])
    return img & (256 - 2 ** (8 - bits))


def solarize(img, threshold):
    """The tensor version of functional.solarize."""
    _check_image(img)
    _check_3d(img)
    _check_channels(img, [1, 3])
    if threshold > _max_value(img.dtype):
        raise TypeError("Threshold should be less than bound of img.")
    return ember.where(img >= threshold, invert(img), img)


def _smoothed(img):
    """PIL's SMOOTH filter (3x3, centre weight 5) on the interior; the border is kept."""
    dtype = img.dtype if img.is_floating_point() else ember.float32
    kernel = ember.ones((3, 3), dtype=dtype, device=img.device)
    kernel[1, 1] = 5.0
    kernel = (kernel / kernel.sum()).expand(img.shape[-3], 1, 3, 3)
    batch, cast, squeeze, out_dtype = _to_batch(img, [kernel.dtype])
    inner = _from_batch(F.conv2d(batch, kernel, groups=batch.shape[-3]), cast, squeeze,
                        out_dtype)
    result = img.clone()
    result[..., 1:-1, 1:-1] = inner
    return result


def adjust_sharpness(img, sharpness_factor):
    """The tensor version of functional.adjust_sharpness."""
    if sharpness_factor < 0:
        raise ValueError(f"sharpness_factor ({sharpness_factor}) is not non-negative.")
    _check_image(img)
    _check_channels(img, [1, 3])
    if img.shape[-1] <= 2 or img.shape[-2] <= 2:
        return img
    return _blend(img, _smoothed(img), sharpness_factor)


def autocontrast(img):
    """Stretch each channel to the full range (a constant channel is left as it is)."""
    _check_image(img)
    _check_3d(img)
    _check_channels(img, [1, 3])
    bound = _max_value(img.dtype)
    dtype = img.dtype if img.is_floating_point() else ember.float32
    low = img.amin(dim=(-2, -1), keepdim=True).to(dtype)
    high = img.amax(dim=(-2, -1), keepdim=True).to(dtype)
    scale = bound / (high - low)
    flat = ember.isfinite(scale).logical_not()
    low = ember.where(flat, 0.0, low)
    scale = ember.where(flat, 1.0, scale)
    return ((img - low) * scale).clamp(0, bound).to(img.dtype)


def _equalize_channel(channel):
    """PIL's histogram equalisation of one uint8 plane, as a lookup table."""
    hist = ember.bincount(channel.reshape(-1), minlength=256)
    nonzero = hist[hist != 0]
    step = ember.div(nonzero[:-1].sum(), 255, rounding_mode="floor")
    if step == 0:
        return channel
    lut = ember.div(ember.cumsum(hist, 0) + ember.div(step, 2, rounding_mode="floor"), step,
                    rounding_mode="floor")
    lut = F.pad(lut, [1, 0])[:-1].clamp(0, 255)
    return lut[channel.to(ember.int64)].to(ember.uint8)


def equalize(img):
    """The tensor version of functional.equalize."""
    _check_image(img)
    if not 3 <= img.ndim <= 4:
        raise TypeError(f"Input image tensor should have 3 or 4 dimensions, but found "
                        f"{img.ndim}")
    if img.dtype != ember.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    _check_channels(img, [1, 3])
    planes = img.reshape(-1, *img.shape[-2:])
    return ember.stack([_equalize_channel(p) for p in planes]).reshape(img.shape)


def normalize(tensor, mean, std, inplace=False):
    """(tensor - mean) / std per channel."""
    _check_image(tensor)
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got "
                         f"tensor.size() = {tensor.size()}")
    if not inplace:
        tensor = tensor.clone()
    mean = ember.as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
    std = ember.as_tensor(std, dtype=tensor.dtype, device=tensor.device)
    if (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading "
                         "to division by zero.")
    mean = mean.view(-1, 1, 1) if mean.ndim == 1 else mean
    std = std.view(-1, 1, 1) if std.ndim == 1 else std
    return tensor.sub_(mean).div_(std)


def erase(img, i, j, h, w, v, inplace=False):
    """img[..., i:i+h, j:j+w] = v."""
    _check_image(img)
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img

