"""Resampling: unfold/fold, pixel and channel shuffles, interpolate, grid_sample, affine_grid.

* `unfold` (im2col) and `fold` (col2im) are two ops, each the other's adjoint, so they
  differentiate any number of times. They reuse the window helpers of pool.py and conv.py:
  unfold copies the strided window view of the padded input into torch's (N, C * kh * kw, L)
  layout (channel major, then kernel offset; L output positions), fold adds one strided slice
  per offset back.
* pixel_shuffle, pixel_unshuffle and channel_shuffle are reshape -> permute -> reshape.
* interpolate is *separable*: every mode resamples one spatial dim at a time, last dim first,
  as `sum_j x.index_select(dim, index_j) * weight_j` with 1 (nearest), 2 (linear) or 4 (cubic)
  taps. The indices and weights are torch's, computed on the host in the dtype torch uses
  (float32 for float32 input), so values agree to rounding; 'area' is adaptive_avg_pool.
  `antialias=True` (bilinear/bicubic) is Pillow's resampling, as torch's: a filter widened by
  the scale when shrinking, each output's window padded to a fixed number of taps.
  Gradients come from index_select's (a scatter-add), as torch's upsample backward.
* grid_sample gathers the 2^n (bilinear), 1 (nearest) or 16 (bicubic) taps of every sampling
  point from the flattened input planes and weighs them; the weights are Tensor expressions
  of the grid, so autograd gives the gradient w.r.t. both input and grid.

Read next: `ember/nn/modules/pooling.py` and the other layer files built on these functions.
"""
import itertools
import math
import numbers
import operator
import warnings

import numpy as np  # index and weight tables are small host arrays, computed like torch's

from ... import _creation
from ... import _dtype as dt
from ..._functorch import batch_rules
from .._op import LINEAR, export, op
from ..pointwise import where
from ..shape import stack
from .conv import _add_windows, _padded
from .pool import (
    _plane_windows,
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
)

__all__ = ["unfold", "fold", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
           "native_channel_shuffle", "interpolate", "upsample", "upsample_nearest",
           "upsample_bilinear", "grid_sample", "affine_grid", "GRID_SAMPLE_INTERPOLATION_MODES",
           "GRID_SAMPLE_PADDING_MODES"]


# ----------------------------------------------------------------------------------------------
# unfold / fold


@op("none", name="im2col", node_name="Im2ColBackward0")
def _unfold(xp, x, *, kernel, stride, padding, dilation):
    n, c = x.shape[:2]
    k = len(kernel)
    windows = _plane_windows(xp, _padded(xp, x, padding, 0), kernel, stride, dilation)
    blocks = windows.shape[2:2 + k]
    taps_first = windows.transpose((0, 1) + tuple(range(2 + k, 2 + 2 * k)) +
                                   tuple(range(2, 2 + k)))     # (N, C, *kernel, *blocks)
    return taps_first.reshape(n, c * math.prod(kernel), math.prod(blocks))


@_unfold.grad
def _unfold(g, x_shape, kernel, stride, padding, dilation):
    return (_fold(g, output_size=tuple(x_shape[2:]), kernel=kernel, stride=stride,
                  padding=padding, dilation=dilation),)


@op("none", name="col2im", node_name="Col2ImBackward0")
def _fold(xp, cols, *, output_size, kernel, stride, padding, dilation):
    n = cols.shape[0]
    c = cols.shape[1] // math.prod(kernel)
    blocks = _blocks(output_size, kernel, stride, padding, dilation)
    taps = cols.reshape((n, c) + tuple(kernel) + blocks)
    return _add_windows(xp, lambda offset: taps[(slice(None), slice(None)) + offset],
                        (n, c) + tuple(output_size), blocks, kernel, stride, padding, dilation,
                        cols.dtype)


@_fold.grad
def _fold(g, kernel, stride, padding, dilation):
    return (_unfold(g, kernel=kernel, stride=stride, padding=padding, dilation=dilation),)


def _blocks(size, kernel, stride, padding, dilation):
    """Number of sliding blocks per spatial dim."""
    return tuple((s + lo + hi - d * (k - 1) - 1) // st + 1
                 for s, k, st, (lo, hi), d in zip(size, kernel, stride, padding, dilation))


def _pair(value, what):
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise RuntimeError(f"It is expected {what} equals to 2, but got size {len(value)}")
        return tuple(operator.index(v) for v in value)
    return (operator.index(value),) * 2


def _fold_args(kernel_size, dilation, padding, stride):
    kernel = _pair(kernel_size, "kernel_size")
    dilation = _pair(dilation, "dilation")
    padding = _pair(padding, "padding")
    stride = _pair(stride, "stride")
    for what, values, positive in (("kernel", kernel, True), ("stride", stride, True),
                                   ("dilation", dilation, True), ("padding", padding, False)):
        if any(v < 0 or (positive and v == 0) for v in values):
            rule = "greater than zero" if positive else "non-negative"
            raise RuntimeError(f"{what} should be {rule}, but got {what}: {list(values)}")
    return kernel, dilation, tuple((p, p) for p in padding), stride


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks (im2col): (N, C, H, W) -> (N, C * kh * kw, L)."""
    if input.ndim not in (3, 4) or any(s == 0 for s in input.shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(input.shape)}")
    kernel, dilation, pairs, stride = _fold_args(kernel_size, dilation, padding, stride)
    blocks = _blocks(input.shape[-2:], kernel, stride, pairs, dilation)
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {tuple(input.shape[-2:])}, "
                           f"kernel_size={kernel}, dilation={dilation}, padding="
                           f"{tuple(p for p, _ in pairs)}, calculated shape of the array of "
                           f"sliding blocks as {blocks}, but its components must be at least one.")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    out = _unfold(x, kernel=kernel, stride=stride, padding=pairs, dilation=dilation)
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum sliding local blocks back into an image (col2im): (N, C * kh * kw, L) ->
    (N, C, *output_size); the adjoint of unfold."""
    if input.ndim not in (2, 3) or any(s == 0 for s in input.shape[-2:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                           "size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    output_size = _pair(output_size, "output_size")
    kernel, dilation, pairs, stride = _fold_args(kernel_size, dilation, padding, stride)
    channels, length = input.shape[-2:]
    if channels % math.prod(kernel):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={channels} and "
                           f"kernel_size={kernel}.")
    blocks = _blocks(output_size, kernel, stride, pairs, dilation)
    if any(b < 1 for b in blocks) or math.prod(blocks) != length:
        raise RuntimeError(f"Given output_size={output_size}, kernel_size={kernel}, dilation="
                           f"{dilation}, padding={tuple(p for p, _ in pairs)}, stride={stride}, "
                           f"expected size of input's dimension 2 to match the calculated number "
                           f"of sliding blocks {blocks[0]} * {blocks[1]} = {math.prod(blocks)}, "
                           f"but got input.size(2)={length}.")
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    out = _fold(x, output_size=output_size, kernel=kernel, stride=stride, padding=pairs,
                dilation=dilation)
    return out.squeeze(0) if unbatched else out


# ----------------------------------------------------------------------------------------------
# pixel and channel shuffles


@export
def pixel_shuffle(input, upscale_factor):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r)."""
    r = operator.index(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} is "
                           f"not divisible by {r * r}")
    k = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)     # (*, C, H, r, W, r)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


@export
def pixel_unshuffle(input, downscale_factor):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W); the inverse of pixel_shuffle."""
    r = operator.index(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    for what, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({d})={size} is not divisible "
                               f"by {r}")
    k = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)     # (*, C, r, r, H, W)
    return x.reshape(*lead, c * r * r, h // r, w // r)


@export
def channel_shuffle(input, groups):
    """(N, g * k, *) -> (N, k * g, *): channel i * k + j moves to j * g + i."""
    groups = operator.index(groups)
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


native_channel_shuffle = export(channel_shuffle, name="native_channel_shuffle")


# ----------------------------------------------------------------------------------------------
# interpolate: torch's source indices and weights, one dim at a time

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_CUBIC_A = -0.75


def _opmath(dtype):
    """The host dtype torch computes coordinates in: double for double, float otherwise."""
    return np.float64 if dtype is dt.float64 else np.float32


def _inverse_scale(T, size, out, scale):
    """torch's compute_scales_value: 1 / scale_factor when one was given, else size / out."""
    if scale is not None and scale > 0:
        return T(1.0 / scale)
    return T(size) / T(out)


def _nearest_index(size, out, scale, exact):
    if not exact and out == size:
        return np.arange(out)
    if not exact and out == 2 * size:
        return np.arange(out) >> 1
    s = _inverse_scale(np.float32, size, out, scale)
    if exact:  # (j + 0.5) is a double in torch; the product is rounded to float, then floored
        src = np.floor(((np.arange(out) + 0.5) * np.float64(s)).astype(np.float32))
    else:
        src = np.floor(np.arange(out, dtype=np.float32) * s)
    return np.minimum(src.astype(np.int64), size - 1)


def _source_coords(T, size, out, scale, align_corners, cubic):
    """torch's area_pixel_compute_source_index for every output position, in dtype T."""
    j = np.arange(out, dtype=T)
    if align_corners:
        s = T(size - 1) / T(out - 1) if out > 1 else T(0)
        return s * j
    src = _inverse_scale(T, size, out, scale) * (j + T(0.5)) - T(0.5)
    return src if cubic else np.maximum(src, T(0))


def _floor_and_fraction(T, src, size):
    """torch's guard_index_and_lambda: the index below (at most size - 1) and t in [0, 1]."""
    index = np.minimum(np.floor(src).astype(np.int64), size - 1)
    return index, np.clip(src - index.astype(T), T(0), T(1))


def _linear_taps(T, size, out, scale, align_corners):
    if out == size:
        return [(np.arange(out), np.ones(out, T))]
    index, t = _floor_and_fraction(T, _source_coords(T, size, out, scale, align_corners, False),
                                   size)
    upper = index + (index < size - 1)
    return [(index, T(1) - t), (upper, t)]


def _cubic_weights(T, t):
    """Keys' cubic convolution weights (a = -0.75) for taps at offsets -1, 0, 1, 2."""
    a = T(_CUBIC_A)

    def near(x):  # |x| <= 1
        return ((a + T(2)) * x - (a + T(3))) * x * x + T(1)

    def far(x):   # 1 < |x| < 2
        return ((a * x - T(5) * a) * x + T(8) * a) * x - T(4) * a

    return [far(t + T(1)), near(t), near(T(1) - t), far((T(1) - t) + T(1))]


def _cubic_taps(T, size, out, scale, align_corners):
    index, t = _floor_and_fraction(T, _source_coords(T, size, out, scale, align_corners, True),
                                   size)
    weights = _cubic_weights(T, t)
    return [(np.clip(index - 1 + k, 0, size - 1), w) for k, w in enumerate(weights)]


def _antialias_filter(T, x, cubic):
    """The triangle (bilinear) or Keys cubic (a = -0.5, as Pillow) filter at distances x."""
    x = np.abs(x)
    if not cubic:
        return np.maximum(T(1) - x, T(0))
    a = T(-0.5)
    near = ((a + T(2)) * x - (a + T(3))) * x * x + T(1)
    far = ((a * x - T(5) * a) * x + T(8) * a) * x - T(4) * a
    return np.where(x < T(1), near, np.where(x < T(2), far, T(0)))


def _antialias_taps(T, size, out, scale, align_corners, cubic):
    """Pillow-style area-aware resampling (torch's antialias=True): when shrinking, the filter
    is stretched by the scale so every input pixel under an output pixel contributes. Each
    output j reads the window [lo_j, lo_j + n_j) with normalised weights; windows are padded
    to the longest with zero weights, so every tap is one index_select."""
    s = T((size - 1) / (out - 1)) if align_corners and out > 1 else \
        T(0) if align_corners else _inverse_scale(T, size, out, scale)
    support = T(2 if cubic else 1) * (s if s >= 1 else T(1))
    inverse = T(1) / s if s >= 1 else T(1)
    center = s * (np.arange(out, dtype=T) + T(0.5))
    lo = np.maximum((center - support + T(0.5)).astype(np.int64), 0)  # truncation, as C++
    count = np.minimum((center + support + T(0.5)).astype(np.int64), size) - lo
    width = int(math.ceil(support)) * 2 + 1
    k = np.arange(width)
    weights = _antialias_filter(T, ((lo[:, None] + k - center[:, None]).astype(T) + T(0.5))
                                * inverse, cubic)
    weights = np.where(k < count[:, None], weights, T(0)).astype(T)
    total = weights.sum(axis=1, keepdims=True)
    weights = np.where(total != 0, weights / np.where(total != 0, total, T(1)), weights)
    index = np.minimum(lo[:, None] + k, size - 1)
    return [(index[:, j], weights[:, j]) for j in range(width) if weights[:, j].any()]


def _resample_along(x, axis, taps):
    """sum_j x.index_select(axis, index_j) * weight_j (weights broadcast along `axis`)."""
    device = x.device
    shape = [1] * x.ndim
    shape[axis] = -1
    out = None
    for index, weight in taps:
        picked = x.index_select(axis, _creation.tensor(index, device=device))
        if weight is not None:
            picked = picked * _creation.tensor(weight, dtype=x.dtype, device=device).reshape(shape)
        out = picked if out is None else out + picked
    return out


def _interpolate_sizes(input, size, scale_factor, dim):
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    spatial = list(input.shape[2:])
    if size is not None:
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * dim
        if len(sizes) != dim:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, "
                             f"but got input with spatial dimensions of {spatial} and output size "
                             f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                             f"format and output size in (o1, o2, ...,oK) format.")
        if not all(isinstance(s, numbers.Integral) for s in sizes):
            raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                            f"Tuple[int, int, int], but got size with types "
                            f"{[type(s) for s in sizes]}")
        return [int(s) for s in sizes], None
    scales = list(scale_factor) if isinstance(scale_factor, (list, tuple)) \
        else [scale_factor] * dim
    if len(scales) != dim:
        raise ValueError(f"Input and scale_factor must have the same number of spatial "
                         f"dimensions, but got input with spatial dimensions of {spatial} and "
                         f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                         f"(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                         f"format.")
    return None, [float(s) for s in scales]


def _check_interpolate_input(input, mode, out):
    dim = input.ndim - 2
    if any(s <= 0 for s in out) or any(s <= 0 for s in input.shape[2:]):
        names = ("D", "H", "W")[3 - dim:]
        given = ", ".join(f"{n}: {s}" for n, s in zip(names, input.shape[2:]))
        wanted = ", ".join(f"{n}: {s}" for n, s in zip(names, out))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({given}) output ({wanted})")
    if input.shape[1] == 0:
        raise RuntimeError(f"Non-empty {input.ndim}D data tensor expected but got a tensor with "
                           f"sizes {list(input.shape)}")
    floating = input.dtype.is_floating_point
    if not floating and not (mode.startswith("nearest") and input.dtype is dt.uint8):
        kernel = {"area": f"adaptive_avg_pool{dim}d"}.get(mode, f"upsample_{mode}{dim}d")
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{dt.scalar_name(input.dtype)}'")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims of a (N, C, *S) batch (S of 1 to 3 dims) like torch."""
    dim = input.ndim - 2
    if mode not in _MODES or not 1 <= dim <= 3:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  f"{input.ndim}D) for the modes: nearest | linear | bilinear | "
                                  f"bicubic | trilinear | area | nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    sizes, scales = _interpolate_sizes(input, size, scale_factor, dim)
    if recompute_scale_factor and sizes is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and sizes is None:
        recompute_scale_factor = True
    if sizes is None:
        sizes = [int(math.floor(float(s) * f)) for s, f in zip(input.shape[2:], scales)]
        if recompute_scale_factor:
            scales = None  # the kernels then use input size / output size
    if antialias and (mode not in ("bilinear", "bicubic") or input.ndim != 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    needed = _MODE_DIMS.get(mode)
    if needed is not None and needed != dim:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{needed + 2}D input")
    _check_interpolate_input(input, mode, sizes)
    if mode == "area":
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1]
        return pool(input, sizes)
    return _separable_resample(input, sizes, scales, mode, align_corners, antialias)


def _separable_resample(input, sizes, scales, mode, align_corners, antialias=False):
    T = _opmath(input.dtype)
    out = input
    for d in reversed(range(len(sizes))):  # last dim first, like torch's recursion order
        size, target = input.shape[2 + d], sizes[d]
        scale = None if scales is None else scales[d]
        if antialias:
            if target == size:
                continue  # torch skips a dim that keeps its size (the filter is the identity)
            taps = _antialias_taps(T, size, target, scale, align_corners, mode == "bicubic")
        elif mode in ("nearest", "nearest-exact"):
            taps = [(_nearest_index(size, target, scale, mode == "nearest-exact"), None)]
        elif mode == "bicubic":
            taps = _cubic_taps(T, size, target, scale, align_corners)
        else:
            taps = _linear_taps(T, size, target, scale, align_corners)
        if len(taps) == 1 and target == size and np.array_equal(taps[0][0], np.arange(size)):
            continue  # the identity: torch copies
        out = _resample_along(out, 2 + d, taps)
    return out if out is not input else input.clone()


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated (warns): `interpolate(input, size, scale_factor, mode, align_corners)`."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated (warns): `interpolate(input, size, scale_factor, mode="nearest")`."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated (warns): `interpolate(input, size, scale_factor, mode="bilinear",
    align_corners=True)`; note the corner-aligned sampling, unlike `interpolate`'s default.
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ----------------------------------------------------------------------------------------------
# grid_sample and affine_grid


def _unnormalize(coord, size, align_corners):
    """[-1, 1] -> pixel coordinates: the corner pixels' centres (align_corners) or the image's
    outer edges sit at -1 and 1."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return (coord + 1) * (size / 2) - 0.5


def _clip(coord, size):
    """Clamp into [0, size - 1]; torch's gradient treats the borders as outside (zero)."""
    inside = (coord > 0) & (coord < size - 1)
    return where(inside, coord, coord.detach().clamp(0, size - 1))


def _reflect(coord, twice_low, twice_high):
    """Mirror `coord` into [twice_low / 2, twice_high / 2] as often as needed."""
    if twice_low == twice_high:
        return coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    distance = (coord - low).abs()
    extra = distance.fmod(span)
    flips = (distance.detach() / span).floor()
    return where(flips.fmod(2) == 0, extra + low, span - extra + low)


def _apply_padding(coord, size, padding_mode, align_corners):
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


class _Planes:
    """The input as flat planes (N, C, P), read at integer coordinates (N, L) per dim; reads
    outside the input give 0 (torch's zero padding)."""

    def __init__(self, input):
        self.spatial = tuple(input.shape[2:])
        n, c = input.shape[:2]
        self.flat = input.reshape(n, c, math.prod(self.spatial))

    def read(self, coords):
        n, c = self.flat.shape[:2]
        inside = None
        position = 0
        for coord, size in zip(coords, self.spatial):
            ok = (coord >= 0) & (coord < size)
            inside = ok if inside is None else inside & ok
            position = position * size + coord.long().clamp(0, size - 1)
        index = position.unsqueeze(1).expand(n, c, position.shape[-1])
        values = self.flat.gather(2, index)
        return values.masked_fill(~inside.unsqueeze(1), 0)


def _check_grid_sample(input, grid, mode, padding_mode):
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and grid "
                           f"with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    for d in range(2, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")
    if mode == "bicubic" and input.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"grid_sampler_{input.ndim - 2}d_cpu\" not implemented for "
                                  f"'{dt.scalar_name(input.dtype)}'")
    if grid.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {dt.scalar_name(input.dtype)} but found "
                           f"{dt.scalar_name(grid.dtype)}")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample `input` (N, C, *S) at the normalised points `grid` (N, *out, n), x first."""
    _check_grid_sample(input, grid, mode, padding_mode)
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                      "old behavior is desired.", stacklevel=2)
        align_corners = False
    n, c = input.shape[:2]
    k = input.ndim - 2
    out = tuple(grid.shape[1:-1])
    points = grid.reshape(n, math.prod(out), k)
    planes = _Planes(input)
    # grid[..., 0] is x (the last dim), grid[..., 1] is y, ...
    coords = [_unnormalize(points[..., k - 1 - d], planes.spatial[d], align_corners)
              for d in range(k)]
    if mode == "bicubic":
        result = _bicubic(planes, coords, padding_mode, align_corners)
    else:
        coords = [_apply_padding(x, s, padding_mode, align_corners)
                  for x, s in zip(coords, planes.spatial)]
        if mode == "nearest":
            result = planes.read([x.detach().round() for x in coords])
        else:
            result = _multilinear(planes, coords)
    return result.reshape((n, c) + out)


def _multilinear(planes, coords):
    """Weigh the 2^n corners around each point by the products of (1 - t) and t."""
    lows = [x.detach().floor() for x in coords]
    fractions = [x - low for x, low in zip(coords, lows)]
    result = None
    for corner in itertools.product((0, 1), repeat=len(coords)):
        weight = None
        for bit, t in zip(corner, fractions):
            w = t if bit else 1 - t
            weight = w if weight is None else weight * w
        values = planes.read([low + bit for low, bit in zip(lows, corner)])
        term = values * weight.unsqueeze(1)
        result = term if result is None else result + term
    return result


def _bicubic(planes, coords, padding_mode, align_corners):
    """16 taps around each point with Keys' weights; padding acts on each tap's coordinate."""
    (y, x) = coords
    y0, x0 = y.detach().floor(), x.detach().floor()
    wy = _cubic_weights_tensor(y - y0)
    wx = _cubic_weights_tensor(x - x0)
    h, w = planes.spatial
    result = None
    for i in range(4):
        row = _apply_padding(y0 + (i - 1), h, padding_mode, align_corners)
        line = None
        for j in range(4):
            col = _apply_padding(x0 + (j - 1), w, padding_mode, align_corners)
            term = planes.read([row.detach(), col.detach()]) * wx[j].unsqueeze(1)
            line = term if line is None else line + term
        term = line * wy[i].unsqueeze(1)
        result = term if result is None else result + term
    return result


def _cubic_weights_tensor(t):
    a = _CUBIC_A

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]  # torch's grid sampler's order


def _base_coords(steps, align_corners, dtype, device):
    """torch's affine_grid coordinates along one dim: linspace(-1, 1), shrunk by
    (steps - 1) / steps to pixel centres unless align_corners; a single step is 0."""
    if steps <= 1:
        return _creation.zeros(1, dtype=dtype, device=device)
    line = _creation.linspace(-1, 1, steps, dtype=dtype, device=device)
    return line if align_corners else line * (steps - 1) / steps


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, *S, n) of the affine maps theta (N, n, n + 1) for output `size`."""
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(size)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    k = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (k, k + 1):
        raise ValueError(f"Expected a batch of {k}D affine matrices of shape Nx{k}x{k + 1} for "
                         f"size {size}. Got {theta.shape}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                      "old behavior is desired.", stacklevel=2)
        align_corners = False
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {k + 1}] but got: [{theta.shape[0]}, {k + 1}].")
    spatial = size[2:]
    axes = [_base_coords(s, align_corners, theta.dtype, theta.device) for s in spatial]
    # base[..., i] is the coordinate of dim k - 1 - i (x first), plus a column of ones
    mesh = [a.reshape([-1 if d == i else 1 for d in range(k)]).expand(*spatial)
            for i, a in enumerate(axes)]
    columns = mesh[::-1] + [_creation.ones(spatial, dtype=theta.dtype, device=theta.device)]
    base = stack(columns, -1).reshape(math.prod(spatial), k + 1)
    grid = base @ theta.transpose(1, 2)                         # (N, P, k)
    return grid.reshape((size[0],) + spatial + (k,))


# the codes torch's grid_sampler kernels take for grid_sample's modes
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


# the torch.* kernels behind grid_sample and affine_grid, with the modes as their codes
_INTERPOLATION_NAMES = {code: name for name, code in GRID_SAMPLE_INTERPOLATION_MODES.items()}
_PADDING_NAMES = {code: name for name, code in GRID_SAMPLE_PADDING_MODES.items()}


def _grid_sampler(dims):
    def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
        if dims is not None and input.ndim != dims + 2:
            raise RuntimeError(f"grid_sampler(): expected {dims + 2}D input and grid with same "
                               f"number of dimensions, but got input with sizes "
                               f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
        return grid_sample(input, grid, _INTERPOLATION_NAMES[interpolation_mode],
                           _PADDING_NAMES[padding_mode], align_corners)
    suffix = "" if dims is None else f"_{dims}d"
    grid_sampler.__name__ = grid_sampler.__qualname__ = "grid_sampler" + suffix
    grid_sampler.__doc__ = ("torch.grid_sampler" + suffix + ": F.grid_sample with the "
                            "interpolation and padding modes as codes (GRID_SAMPLE_*_MODES).")
    return grid_sampler


for _dims in (None, 2, 3):
    _fn = _grid_sampler(_dims)
    export(_fn, name=_fn.__name__, function=True, method=False)


@export
def affine_grid_generator(theta, size, align_corners):
    """torch.affine_grid_generator: F.affine_grid with align_corners required."""
    return affine_grid(theta, size, align_corners)

# forward mode and vmap (see ops/_op.py): im2col and col2im are linear; both take (N, ...)
for _op in (_unfold, _fold):
    _op.jvp(LINEAR).batch(batch_rules.fold())
del _op
