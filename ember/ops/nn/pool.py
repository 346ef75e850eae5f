"""Pooling over 1-3 spatial dims: max, average, adaptive, power-average, and max-unpooling.

Layout. Pooling works on each (n, c) plane alone, channels-first like convolution: the
input (N, C, *S) is copied once into a (N, C, *S_padded) buffer whose border holds the
pooling's neutral value (-inf for max, 0 for sums), and every window is a strided *view* of
that buffer,

    windows[n, c, *out_position, *kernel_offset]        shape (N, C, *out, *kernel)

made by `_plane_windows`. A max pool takes the argmax of each window, an average pool sums
it: no Python loop runs over output positions. The buffer is cut or extended to hold exactly
the windows that are used.

Output size, torch's rule per dim (input size n, padding p, effective kernel
e = dilation * (kernel - 1) + 1):
    out = floor((n + 2p - e) / stride) + 1      (ceil instead of floor in ceil mode)
and in ceil mode a last window that would start beyond the input and its left padding is
dropped.

Ops, and how they close under differentiation:
    max_pool, adaptive_max_pool   x -> (values, indices). indices are flat positions within each
                                  (n, c) plane, as torch returns them. Gradient: scatter_add of g
                                  to those positions (`_scatter_planes`), whose gradient gathers.
    window_sum                    x -> the sum of every window;   gradient: window_sum_backward
    window_sum_backward           g -> for each input position, the sum of g over the windows
                                  that contain it;                gradient: window_sum
    max_unpool                    (values, indices) -> values scattered to indices; gradient:
                                  gather.
avg_pool is window_sum divided by torch's divisor; adaptive_avg_pool and lp_pool are built
from these and Tensor ops.

Read next: `sampling.py` (unfold/fold reuse the window helpers of this file).
"""
import itertools
import math
import operator

import numpy as np  # window tables are small host arrays built from Python ints

from ... import _creation
from ... import _dtype as dt
from ..._functorch import batch_rules
from ..._functorch.vmap import all_samples
from ..._parallel import row_split
from ...autograd import grad_mode
from .._dispatch import autocast_args
from .._op import LINEAR, export, op
from .conv import _add_windows, _out_size, _padded

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "adaptive_avg_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d",
           "max_unpool2d", "max_unpool3d"]

_WORDS = {1: "one", 2: "two", 3: "three"}


# ----------------------------------------------------------------------------------------------
# array helpers (xp-generic; sampling.py uses them too)


def _is_floating(a):
    return dt._BY_NUMPY[a.dtype].is_floating_point


def _plane_windows(xp, buf, kernel, stride, dilation):
    """All windows of a (N, C, *S) buffer as a view (N, C, *out, *kernel): no copy."""
    n = len(kernel)
    out = _out_size(buf.shape[2:], kernel, stride, dilation)
    st = buf.strides
    shape = buf.shape[:2] + out + tuple(kernel)
    strides = (st[:2] + tuple(st[2 + i] * stride[i] for i in range(n)) +
               tuple(st[2 + i] * dilation[i] for i in range(n)))
    return xp.lib.stride_tricks.as_strided(buf, shape, strides)


def _axis_positions(xp, size, axis, ndim):
    """arange(size) laid along `axis` of an ndim-d broadcast grid."""
    shape = [1] * ndim
    shape[axis] = size
    return xp.arange(size).reshape(shape)


def _last_nan(xp, taps, arg):
    """torch's max pools keep a NaN once seen, moving on to each later NaN of the window; where
    a window has NaNs, point at its last one."""
    isnan = xp.isnan(taps)
    last = taps.shape[-1] - 1 - xp.argmax(isnan[..., ::-1], axis=-1)
    return xp.where(isnan.any(axis=-1), last, arg)


def _flat_index(coords, spatial):
    """Per-dim coordinates -> flat positions in a plane of shape `spatial` (row-major)."""
    flat = 0
    for c, s in zip(coords, spatial):
        flat = flat * s + c
    return flat


def _tap_coords(xp, arg, kernel, stride, padding, dilation, spatial):
    """Input coordinates (one int64 array per spatial dim) of tap `arg` of every window.

    A window whose maximum is the padding value itself (all -inf, say) may have chosen a padding
    tap; torch reports the window's first tap inside the input instead."""
    n = len(kernel)
    coords, first, outside = [None] * n, [None] * n, False
    step = 1  # tap number = sum over dims of k_d * prod(kernel[d + 1:])
    for d in reversed(range(n)):
        k = (arg // step) % kernel[d]
        step *= kernel[d]
        start = _axis_positions(xp, arg.shape[2 + d], 2 + d, arg.ndim) * stride[d] \
            - padding[d][0]
        coords[d] = start + k * dilation[d]
        first[d] = start + xp.maximum(-start + dilation[d] - 1, 0) // dilation[d] * dilation[d]
        outside = outside | (coords[d] < 0) | (coords[d] >= spatial[d])
    if xp.any(outside):
        coords = [xp.where(outside, f, c) for f, c in zip(first, coords)]
    return coords


def _adaptive_windows(size, out):
    """torch's adaptive windows [floor(i * size / out), ceil((i + 1) * size / out)), i < out,
    as an (out, longest) table of positions (a short window repeats its last position) and
    the window lengths."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    longest = int((end - start).max()) if out else 1
    index = np.minimum(start[:, None] + np.arange(longest), end[:, None] - 1)
    return index, end - start


# ----------------------------------------------------------------------------------------------
# ops


@op("none", name="max_pool", node_name="MaxPoolWithIndicesBackward0")
def _max_pool(xp, x, *, kernel, stride, padding, dilation):
    n = len(kernel)
    floating = _is_floating(x)
    lowest = -xp.inf if floating else xp.iinfo(x.dtype).min
    windows = _plane_windows(xp, _padded(xp, x, padding, lowest), kernel, stride, dilation)
    taps = windows.reshape(windows.shape[:2 + n] + (math.prod(kernel),))  # copy: (N, C, *out, K)
    arg = xp.argmax(taps, axis=-1)                          # the first maximum, as torch
    values = xp.take_along_axis(taps, arg[..., None], axis=-1)[..., 0]
    if floating and xp.isnan(values).any():
        arg = _last_nan(xp, taps, arg)
    coords = _tap_coords(xp, arg, kernel, stride, padding, dilation, x.shape[2:])
    return values, _flat_index(coords, x.shape[2:]).astype(xp.int64, copy=False)


@_max_pool.grad
def _max_pool(g, x_shape, out):
    return (_scatter_planes(g[0], out[1], x_shape),)


@op("none", name="adaptive_max_pool", node_name="AdaptiveMaxPoolBackward0")
def _adaptive_max_pool(xp, x, *, output_size):
    """Separable: reduce the last spatial dim over its windows, then the one before, ...,
    carrying along the coordinates already chosen. Reducing rows after columns picks the first
    maximum in row-major order (or the last NaN), the element torch picks."""
    floating = _is_floating(x)
    values, coords = x, []
    for d in reversed(range(len(output_size))):
        axis = 2 + d
        index = xp.asarray(_adaptive_windows(x.shape[axis], output_size[d])[0])
        taps = xp.moveaxis(xp.take(values, index, axis=axis), axis + 1, -1)
        arg = xp.argmax(taps, axis=-1)
        values = xp.take_along_axis(taps, arg[..., None], axis=-1)[..., 0]
        if floating and xp.isnan(values).any():
            arg = _last_nan(xp, taps, arg)
        coords = [_pick(xp, c, index, axis, arg) for c in coords]
        coords.insert(0, index[_axis_positions(xp, output_size[d], axis, arg.ndim), arg])
    return values, _flat_index(coords, x.shape[2:]).astype(xp.int64, copy=False)


def _pick(xp, a, index, axis, arg):
    """Reduce `a` along `axis` over the windows of `index`, taking entry `arg` of each."""
    taps = xp.moveaxis(xp.take(a, index, axis=axis), axis + 1, -1)
    return xp.take_along_axis(taps, arg[..., None], axis=-1)[..., 0]


@_adaptive_max_pool.grad
def _adaptive_max_pool(g, x_shape, out):
    return (_scatter_planes(g[0], out[1], x_shape),)


def _scatter_planes(g, indices, shape):
    """Add g (N, C, *out) into zeros of `shape` at the flat plane positions `indices`."""
    n, c = shape[0], shape[1]
    planes = g.new_zeros((n, c, math.prod(shape[2:])))
    flat = (n, c, math.prod(g.shape[2:]))
    return planes.scatter_add(2, indices.reshape(flat), g.reshape(flat)).reshape(shape)


def _sum_taps(xp, windows, n):
    """Sum each window over its last n (kernel) axes by adding one strided slice of the view
    per kernel offset: in window order, as torch adds, and faster than reducing the 2n-d view.
    Half precision adds up in float32, torch's accumulate type."""
    acc = xp.float32 if _is_floating(windows) and windows.dtype.itemsize < 4 else windows.dtype
    total = windows[(Ellipsis,) + (0,) * n].astype(acc)  # a copy: the running sum
    for offset in itertools.product(*(range(k) for k in windows.shape[-n:])):
        if any(offset):
            total += windows[(Ellipsis,) + offset]
    return total.astype(windows.dtype, copy=False)


@op("none", name="window_sum", node_name="AvgPoolBackward0")
def _window_sum(xp, x, *, kernel, stride, padding):
    ones = (1,) * len(kernel)
    windows = _plane_windows(xp, _padded(xp, x, padding, 0), kernel, stride, ones)
    return _sum_taps(xp, windows, len(kernel))


@_window_sum.grad
def _window_sum(g, x_shape, kernel, stride, padding):
    return (_window_sum_backward(g, input_shape=x_shape, kernel=kernel, stride=stride,
                                 padding=padding),)


@op("none", name="window_sum_backward", node_name="AvgPoolBackwardBackward0")
def _window_sum_backward(xp, g, *, input_shape, kernel, stride, padding):
    ones = (1,) * len(kernel)
    return _add_windows(xp, lambda offset: g, input_shape, g.shape[2:], kernel, stride, padding,
                        ones, g.dtype)


@_window_sum_backward.grad
def _window_sum_backward(g, kernel, stride, padding):
    return (_window_sum(g, kernel=kernel, stride=stride, padding=padding),)


@op("none", name="max_unpool", node_name="MaxUnpoolBackward0")
def _max_unpool(xp, x, indices, *, output_size):
    n, c = x.shape[:2]
    planes = xp.zeros((n, c, math.prod(output_size)), dtype=x.dtype)
    batch = xp.arange(n).reshape(n, 1, 1)
    channel = xp.arange(c).reshape(1, c, 1)
    flat = (n, c, math.prod(x.shape[2:]))
    planes[batch, channel, indices.reshape(flat)] = x.reshape(flat)
    return planes.reshape((n, c) + tuple(output_size))


@_max_unpool.grad
def _max_unpool(g, x_shape, indices):
    n, c = x_shape[:2]
    taken = g.reshape(n, c, math.prod(g.shape[2:])).gather(
        2, indices.reshape(n, c, math.prod(x_shape[2:])))
    return taken.reshape(x_shape), None


# ----------------------------------------------------------------------------------------------
# argument parsing and torch's checks


def _tuple(value, n, what, name):
    if isinstance(value, (list, tuple)):
        value = tuple(value)
        if len(value) == 1:
            value = value * n
        if len(value) != n:
            lead = "either be omitted, a single int," if what == "stride" else \
                "either be a single int,"
            raise RuntimeError(f"{name}: {what} must {lead} or a tuple of {_WORDS[n]} ints")
        return tuple(operator.index(v) for v in value)
    return (operator.index(value),) * n


def _batched(input, n, name):
    """torch accepts (C, *S) or (N, C, *S), with every dim but N non-empty."""
    if input.ndim not in (n + 1, n + 2) or any(s == 0 for s in input.shape[-n - 1:]):
        raise RuntimeError(f"{name}: Expected {n + 1}D or {n + 2}D (batch mode) tensor with "
                           f"optional 0 dim batch size for input, but got:{list(input.shape)}")
    if input.ndim == n + 1:
        return input.unsqueeze(0), True
    return input, False


def _pool_size(size, k, s, p, d, ceil_mode):
    """torch's pooling output size along one dim."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1  # the last window would start in the right padding
    return out


def _geometry(name, n, input, kernel_size, stride, padding, dilation, ceil_mode):
    """Parse and check a pooling's arguments; returns (kernel, stride, pairs, dilation, out),
    where pairs gives the (lo, hi) buffer padding that holds exactly the windows used."""
    kernel = _tuple(kernel_size, n, "kernel_size", name)
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else _tuple(stride, n, "stride", name)
    padding = _tuple(padding, n, "padding", name)
    dilation = _tuple(dilation, n, "dilation", name)
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    for what, values in (("kernel size", kernel), ("stride", stride), ("dilation", dilation)):
        if any(v <= 0 for v in values):
            raise RuntimeError(f"{what} should be greater than zero, but got {what} "
                               f"{list(values)}")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"pad must be non-negative, but got pad: {list(padding)}")
    for p, k, d in zip(padding, kernel, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    spatial = input.shape[2:]
    out = tuple(_pool_size(*a, ceil_mode) for a in zip(spatial, kernel, stride, padding,
                                                        dilation))
    if any(o < 1 for o in out):
        given = "x".join(map(str, input.shape[1:]))
        calculated = "x".join(map(str, (input.shape[1],) + out))
        raise RuntimeError(f"Given input size: ({given}). Calculated output size: "
                           f"({calculated}). Output size is too small")
    pairs = tuple((p, (o - 1) * s + d * (k - 1) + 1 - size - p)
                  for size, k, s, p, d, o in zip(spatial, kernel, stride, padding, dilation, out))
    return kernel, stride, pairs, dilation, out


def _refuse_dtype(name, input, allowed):
    if not allowed(input.dtype):
        raise NotImplementedError(f"\"{name}\" not implemented for "
                                  f"'{dt.scalar_name(input.dtype)}'")


# ----------------------------------------------------------------------------------------------
# max pooling


def _max_poolnd(n, input, kernel_size, stride, padding, dilation, ceil_mode,
                return_indices=True):
    name = f"max_pool{n}d"
    input, = autocast_args(name, input)  # the CPU runs the 3-d pools in float32
    _refuse_dtype(name, input, lambda d: d is not dt.bool and not d.is_complex)
    input, unbatched = _batched(input, n, name)
    kernel, stride, pairs, dilation, _ = _geometry(name, n, input, kernel_size, stride, padding,
                                                   dilation, ceil_mode)
    tiled = (not return_indices and input.is_floating_point() and stride == kernel and
             all(d == 1 for d in dilation) and all(lo == 0 and hi <= 0 for lo, hi in pairs))
    if tiled:
        values = _tiled_max_pool(input, kernel=kernel)[0]
        # NaNs: the general path picks torch's last NaN (under vmap: NaNs in any sample)
        if not bool(all_samples(values).isnan().any()):
            return (values.squeeze(0) if unbatched else values), None
    values, indices = _max_pool(input, kernel=kernel, stride=stride, padding=pairs,
                                dilation=dilation)
    if unbatched:
        return values.squeeze(0), indices.squeeze(0)
    return values, indices


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """Max pooling over the last dim of (N, C, L) or (C, L), returning (values, indices).

    indices are positions within each length-L row. `return_indices` is accepted for torch's
    signature and ignored: both are always returned.
    """
    return _max_poolnd(1, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """Max pooling over the last two dims of (N, C, H, W) or (C, H, W), returning (values, indices).

    indices are flat positions within each H x W plane (row-major). `return_indices` is accepted
    for torch's signature and ignored: both are always returned.
    """
    return _max_poolnd(2, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """Max pooling over the last three dims of (N, C, D, H, W) or (C, D, H, W): (values, indices).

    indices are flat positions within each D x H x W volume (row-major). `return_indices` is
    accepted for torch's signature and ignored: both are always returned.
    """
    return _max_poolnd(3, input, kernel_size, stride, padding, dilation, ceil_mode)


# The common case -- windows that tile the input (stride == kernel, no padding or dilation) and
# no indices asked for -- has a faster, separable path. Reduce the last spatial dim over its
# window first, then the one before, ...: per dim, k strided slices compared in turn, and a
# small array `choice` of which slice won (first maximum on ties). Taking the first maximum of
# each row, then the first row holding the overall maximum, picks the first maximum in window
# order -- the element torch picks. Backward expands dim by dim: g * (choice == j) into the j-th
# slice. Three ops close under differentiation:
#     tiled_max_pool(x)                     -> (values, choice per dim)
#     tiled_max_pool_backward(g, choices)   g -> zeros of x's shape with g at the chosen taps
#     tiled_window_pick(h, choices)         h -> the chosen tap of every window of h


def _slices(a, axis, k, out):
    """The k strided slices of `a` along `axis` that hold tap j of every window."""
    lead = (slice(None),) * axis
    return [a[lead + (slice(j, out * k, k),)] for j in range(k)]


def _select(xp, taps, choice):
    """taps[choice] elementwise (the first tap where choice is out of range never happens)."""
    if len(taps) == 2:
        return xp.where(choice, taps[1], taps[0])
    picked = taps[0].copy()
    for j in range(1, len(taps)):
        xp.copyto(picked, taps[j], where=choice == j)
    return picked


def _cropped(a, kernel):
    """The part of `a` (N, C, *S) that the windows tile: S_d cut to a multiple of kernel_d."""
    return a[(Ellipsis,) + tuple(slice(0, s - s % k) for s, k in zip(a.shape[2:], kernel))]


@op("none", name="tiled_max_pool", node_name="MaxPool2DWithIndicesBackward0")
@row_split()
def _tiled_max_pool(xp, x, *, kernel):
    values = _cropped(x, kernel)
    choices = []
    for d in reversed(range(len(kernel))):
        k, out = kernel[d], x.shape[2 + d] // kernel[d]
        taps = _slices(values, 2 + d, k, out)
        if k == 2:
            choice = taps[1] > taps[0]                          # ties keep the first tap
            best = xp.maximum(taps[0], taps[1])
        else:
            best = taps[0].copy()
            choice = xp.zeros(best.shape, dtype=xp.uint8)
            for j in range(1, k):
                xp.copyto(choice, j, where=taps[j] > best)
                xp.maximum(best, taps[j], out=best)
        values = best
        choices.insert(0, choice)
    return (values,) + tuple(choices)


@_tiled_max_pool.grad
def _tiled_max_pool(g, x_shape, out, kernel):
    return (_tiled_backward(g[0], *out[1:], kernel=kernel, input_shape=x_shape),)


@op("none", name="tiled_max_pool_backward", node_name="MaxPool2DWithIndicesBackwardBackward0")
@row_split()
def _tiled_backward(xp, dy, *choices, kernel, input_shape):
    grad = dy
    for d, choice in enumerate(choices):  # undo the reductions, first spatial dim first
        k = kernel[d]
        shape = list(grad.shape)
        shape[2 + d] *= k
        expanded = xp.empty(shape, dtype=dy.dtype)
        targets = _slices(expanded, 2 + d, k, grad.shape[2 + d])
        if k == 2:
            xp.multiply(grad, choice, out=targets[1])
            xp.multiply(grad, ~choice, out=targets[0])
        else:
            for j in range(k):
                xp.multiply(grad, choice == j, out=targets[j])
        grad = expanded
    # spatial sizes only: row_split may run this on part of the batch
    if grad.shape[2:] == tuple(input_shape[2:]):
        return grad
    full = xp.zeros(grad.shape[:2] + tuple(input_shape[2:]), dtype=dy.dtype)  # the border
    full[(Ellipsis,) + tuple(slice(0, s) for s in grad.shape[2:])] = grad  # (no window's)
    return full


@_tiled_backward.grad
def _tiled_backward(g, inputs, kernel):
    choices = inputs[1:]
    return (_tiled_pick(g, *choices, kernel=kernel),) + (None,) * len(choices)


@op("none", name="tiled_window_pick", node_name="MaxPool2DWithIndicesBackward0")
def _tiled_pick(xp, h, *choices, kernel):
    values = _cropped(h, kernel)
    for d in reversed(range(len(kernel))):
        k, out = kernel[d], h.shape[2 + d] // kernel[d]
        values = _select(xp, _slices(values, 2 + d, k, out), choices[d])
    return values


@_tiled_pick.grad
def _tiled_pick(g, inputs, shapes, kernel):
    choices = inputs[1:]
    return (_tiled_backward(g, *choices, kernel=kernel, input_shape=shapes[0]),) + \
        (None,) * len(choices)


@export
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Maximum of every window of `kernel_size` along the last dim of (N, C, L) or (C, L).

    `stride` defaults to `kernel_size`; `padding` (at most half the effective kernel) pads with
    -inf; `dilation` spaces the taps; `ceil_mode` rounds the output length up. With
    `return_indices`, also returns each maximum's position in its row (a NaN counts as the
    maximum, as in torch). bool and complex inputs are refused.
    """
    result = _max_poolnd(1, input, kernel_size, stride, padding, dilation, ceil_mode,
                         return_indices)
    return result if return_indices else result[0]


@export
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Maximum of every `kernel_size` window over the last two dims of (N, C, H, W) or (C, H, W).

    Arguments as in `max_pool1d`, each an int or a pair (height, width). With `return_indices`,
    also returns each maximum's flat position within its H x W plane, the form `max_unpool2d`
    takes.
    """
    result = _max_poolnd(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                         return_indices)
    return result if return_indices else result[0]


@export
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Maximum of every `kernel_size` window over the last three dims of (N, C, D, H, W) or
    (C, D, H, W).

    Arguments as in `max_pool1d`, each an int or a triple. With `return_indices`, also returns
    each maximum's flat position within its D x H x W volume.
    """
    result = _max_poolnd(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                         return_indices)
    return result if return_indices else result[0]


export(max_pool1d_with_indices)


# ----------------------------------------------------------------------------------------------
# average pooling


def _divisor(spatial, out, kernel, stride, padding, count_include_pad):
    """torch's divisor per output position: the window's size clipped to the padded input
    (count_include_pad) or to the input itself."""
    total = np.ones((), dtype=np.int64)
    for size, o, k, s, p in zip(spatial, out, kernel, stride, padding):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, size + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, size)
        total = np.multiply.outer(total, end - start)
    return total


def _avg_poolnd(n, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
    name = f"avg_pool{n}d"
    input, = autocast_args(name, input)  # the CPU runs the 3-d pools in float32
    _refuse_dtype("avg_pool2d" if n < 3 else name, input,
                  lambda d: d.is_floating_point or d is dt.int64)
    input, unbatched = _batched(input, n, name)
    kernel, stride, pairs, _, out = _geometry(name, n, input, kernel_size, stride, padding, 1,
                                              ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    sums = _window_sum(input, kernel=kernel, stride=stride, padding=pairs)
    if divisor_override is not None:
        divisor = divisor_override
    else:
        padding = tuple(lo for lo, _ in pairs)
        divisor = _creation.tensor(_divisor(input.shape[2:], out, kernel, stride, padding,
                                            count_include_pad),
                                   dtype=input.dtype, device=input.device)
    if input.dtype.is_floating_point:
        result = sums / divisor
    else:
        result = sums.div(divisor, rounding_mode="trunc")  # C++ integer division
    return result.squeeze(0) if unbatched else result


@export
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """Mean of every window of `kernel_size` along the last dim of (N, C, L) or (C, L).

    `stride` defaults to `kernel_size`; `padding` adds zeros at both ends, counted in the divisor
    when `count_include_pad` (windows that `ceil_mode` lets run past the padding are divided by
    their clipped size). Floating dtypes and int64 are accepted; int64 divides with truncation.
    """
    return _avg_poolnd(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Mean of every `kernel_size` window over the last two dims of (N, C, H, W) or (C, H, W).

    Arguments as in `avg_pool1d`, each an int or a pair; `divisor_override`, if given, replaces
    every window's divisor.
    """
    return _avg_poolnd(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Mean of every `kernel_size` window over the last three dims of (N, C, D, H, W) or
    (C, D, H, W).

    Arguments as in `avg_pool2d`, each an int or a triple.
    """
    return _avg_poolnd(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override)


# ----------------------------------------------------------------------------------------------
# adaptive pooling


def _adaptive_setup(name, n, input, output_size):
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got "
                           f"{list(input.shape)}")
    for d in range(input.ndim - n, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")
    _refuse_dtype(name, input, lambda d: d.is_floating_point)
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != n:
            raise RuntimeError(f"{name}: output_size must be {n}")
    else:
        output_size = (output_size,) * n
    spatial = input.shape[-n:]
    size = tuple(s if o is None else operator.index(o) for s, o in zip(spatial, output_size))
    if any(o < 0 for o in size):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {list(size)}")
    if input.ndim == n + 1:
        return input.unsqueeze(0), True, size
    return input, False, size


def _adaptive_max(n, input, output_size):
    name = f"adaptive_max_pool{n}d"
    input, = autocast_args(name, input)  # the CPU runs the 3-d pools in float32
    input, unbatched, size = _adaptive_setup(name, n, input, output_size)
    values, indices = _adaptive_max_pool(input, output_size=size)
    if unbatched:
        return values.squeeze(0), indices.squeeze(0)
    return values, indices


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """Adaptive max pooling over the last dim, returning (values, indices); see
    `adaptive_max_pool1d`. `return_indices` is accepted and ignored.
    """
    return _adaptive_max(1, input, output_size)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """Adaptive max pooling over the last two dims, returning (values, indices); see
    `adaptive_max_pool2d`. `return_indices` is accepted and ignored.
    """
    return _adaptive_max(2, input, output_size)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """Adaptive max pooling over the last three dims, returning (values, indices); see
    `adaptive_max_pool3d`. `return_indices` is accepted and ignored.
    """
    return _adaptive_max(3, input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of (N, C, L) or (C, L) to length `output_size`, whatever L is.

    Output position i takes the maximum over [floor(i * L / out), ceil((i + 1) * L / out)), so
    windows may overlap and differ in length by one. With `return_indices`, also returns each
    maximum's position in its row. Floating inputs only.
    """
    result = _adaptive_max(1, input, output_size)
    return result if return_indices else result[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling of (N, C, H, W) or (C, H, W) to spatial size `output_size` (an int or a pair).

    Windows per dim as in `adaptive_max_pool1d`; a None entry keeps that input size. With
    `return_indices`, also returns flat positions within each H x W plane.
    """
    result = _adaptive_max(2, input, output_size)
    return result if return_indices else result[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to spatial size `output_size` (an int or a
    triple; None keeps that size). With `return_indices`, also returns flat positions within
    each D x H x W volume.
    """
    result = _adaptive_max(3, input, output_size)
    return result if return_indices else result[0]


def _adaptive_mean_along(x, axis, out):
    """Average `x` over torch's adaptive windows along one axis: gather the windows as an
    (out, longest) table, zero the repeated positions of short windows, sum, divide."""
    size = x.shape[axis]
    moved = x.movedim(axis, -1)
    if size % out == 0:  # equal, disjoint windows: a free reshape
        means = moved.unflatten(-1, (out, size // out)).mean(-1)
        return means.movedim(-1, axis)
    index, lengths = _adaptive_windows(size, out)
    taps = moved[..., _creation.tensor(index, device=x.device)]
    repeated = np.arange(index.shape[1]) >= lengths[:, None]
    taps = taps.masked_fill(_creation.tensor(repeated, device=x.device), 0)
    means = taps.sum(-1) / _creation.tensor(lengths, dtype=x.dtype, device=x.device)
    return means.movedim(-1, axis)


def _adaptive_avg(n, input, output_size):
    input, = autocast_args(f"adaptive_avg_pool{n}d", input)
    input, unbatched, size = _adaptive_setup(f"adaptive_avg_pool{n}d", n, input, output_size)
    if all(o == 1 for o in size):  # global pooling (every classifier head): one mean over
        # the trailing spatial dims, not one strided mean per dim (ResNet's (32, 512, 4, 4):
        # 1.67 -> ~0.05 ms)
        out = input.mean(tuple(range(2, 2 + n)), keepdim=True)
        return out.squeeze(0) if unbatched else out
    out = input
    for d, o in enumerate(size):
        if o == 0:
            shape = list(out.shape)
            shape[2 + d] = 0
            out = out.new_zeros(shape)
        else:
            out = _adaptive_mean_along(out, 2 + d, o)
    return out.squeeze(0) if unbatched else out


@export
def adaptive_avg_pool1d(input, output_size):
    """Average pooling of (N, C, L) or (C, L) to length `output_size`, whatever L is.

    Output position i averages [floor(i * L / out), ceil((i + 1) * L / out)). Floating inputs
    only.
    """
    if isinstance(output_size, (list, tuple)) and len(output_size) != 1:
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'output_size' should contain one "
                           f"int (got {len(output_size)})")
    return _adaptive_avg(1, input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling of (N, C, H, W) or (C, H, W) to spatial size `output_size` (an int or a
    pair; a None entry keeps that input size). Windows per dim as in `adaptive_avg_pool1d`.
    """
    return _adaptive_avg(2, input, output_size)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) to spatial size `output_size` (an int or
    a triple; None keeps that size). Windows per dim as in `adaptive_avg_pool1d`.
    """
    return _adaptive_avg(3, input, output_size)


# ----------------------------------------------------------------------------------------------
# power-average pooling


def _lp_poolnd(n, input, norm_type, kernel_size, stride, ceil_mode):
    """(sum over each window of x^p)^(1/p), computed as torch does: an average pool of x^p
    scaled back by the kernel area (with the same divisor, so partial ceil-mode windows match).
    """
    kernel = _tuple(kernel_size, n, "kernel_size", f"lp_pool{n}d")
    means = _avg_poolnd(n, input.pow(norm_type), kernel_size, stride, 0, ceil_mode, True, None)
    return (means.sign() * means.abs().relu()).mul(math.prod(kernel)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling along the last dim: (sum of x^p over each window)^(1/p), p =
    `norm_type`.

    `stride` defaults to `kernel_size`; there is no padding. p = 1 gives window sums; for large
    even p it approaches a max pool of |x|.
    """
    return _lp_poolnd(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over the last two dims: (sum of x^p over each window)^(1/p); arguments
    as in `lp_pool1d`, `kernel_size` and `stride` ints or pairs.
    """
    return _lp_poolnd(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over the last three dims: (sum of x^p over each window)^(1/p);
    arguments as in `lp_pool1d`, `kernel_size` and `stride` ints or triples.
    """
    return _lp_poolnd(3, input, norm_type, kernel_size, stride, ceil_mode)


# ----------------------------------------------------------------------------------------------
# max unpooling


def _unpool_size(n, input, kernel, stride, padding, output_size):
    default = tuple((i - 1) * s + k - 2 * p
                    for i, k, s, p in zip(input.shape[-n:], kernel, stride, padding))
    if output_size is None:
        return default
    output_size = tuple(output_size)
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    elif len(output_size) == n + 1 and input.ndim == n + 1:
        output_size = output_size[1:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, "
                         f"but it has a length of '{len(output_size)}'")
    for d, (want, base, s) in enumerate(zip(output_size, default, stride)):
        if not base - s < want < base + s:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f"{base - s} and {base + s})")
    return tuple(int(o) for o in output_size)


def _max_unpoolnd(n, input, indices, kernel_size, stride, padding, output_size):
    name = f"max_unpool{n}d"
    input, = autocast_args(name, input)  # 2-d and 3-d run in float32 on the CPU
    kernel = _tuple(kernel_size, n, "kernel_size", name)
    stride = kernel if stride is None else _tuple(stride, n, "stride", name)
    padding = _tuple(padding, n, "padding", name)
    if indices.dtype is not dt.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{dt.scalar_name(indices.dtype)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    size = _unpool_size(n, input, kernel, stride, padding, output_size)
    unbatched = input.ndim == n + 1
    if unbatched:
        input, indices = input.unsqueeze(0), indices.unsqueeze(0)
    elif input.ndim != n + 2:
        raise RuntimeError(f"{name}: Expected {n + 1}D or {n + 2}D tensor, but got "
                           f"{list(input.shape)}")
    if indices.numel():
        low, high = int(indices.min()), int(indices.max())
        bad = low if low < 0 else high
        if low < 0 or high >= math.prod(size):
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                               f"{'x'.join(map(str, size))})")
    out = _max_unpool(input, indices, output_size=size)
    return out.squeeze(0) if unbatched else out


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of `max_pool1d`: zeros with each value of `input` put back at its index.

    `indices` are the int64 positions `max_pool1d(..., return_indices=True)` returned, same shape
    as `input`. The output length is (L - 1) * stride + kernel_size - 2 * padding unless
    `output_size` asks for one within a stride of it.
    """
    return _max_unpoolnd(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of `max_pool2d`: zeros with each value of `input` put back at its flat index.

    Arguments as in `max_unpool1d`; `output_size` may give (H, W) or the full (N, C, H, W).
    """
    return _max_unpoolnd(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of `max_pool3d`: zeros with each value of `input` put back at its flat index.

    Arguments as in `max_unpool1d`; `output_size` may give (D, H, W) or the full shape.
    """
    return _max_unpoolnd(3, input, indices, kernel_size, stride, padding, output_size)


# ----------------------------------------------------------------------------------------------
# fractional max pooling (Graham, 2014): pseudo-random window starts, one sample in [0, 1) per
# (n, c, spatial dim). With alpha = (size - kernel) / (out - 1), window i starts at
# int((i + u) alpha) - int(u alpha) and the last one at size - kernel, computed in float64 as
# torch's CPU kernel does. The windows' argmax positions are found without a graph; the values
# are then gathered from the input, so the gradient is a scatter to those positions.


def _fractional_starts(xp, samples, size, out, kernel):
    """(N, C, out) window starts along one dim from samples (N, C)."""
    u = samples.astype(np.float64)[..., None]
    starts = xp.full(samples.shape + (out,), size - kernel, dtype=np.int64)
    if out > 1:
        alpha = (size - kernel) / (out - 1)
        i = xp.arange(out - 1, dtype=np.float64)
        starts[..., :-1] = ((i + u) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)
    return starts


def _fractional_indices_kernel(xp, a, samples, *, kernel, output_size):
    """Flat (per plane) index of the maximum of every window: (N, C, *out)."""
    n = len(kernel)
    out = output_size
    spatial = a.shape[-n:]
    # torch's sample order: (W, H) in 2-d, (T, H, W) in 3-d
    order = (1, 0) if n == 2 else (0, 1, 2)
    coords = []
    for d in range(n):
        starts = _fractional_starts(xp, samples[..., order[d]], spatial[d], out[d], kernel[d])
        coords.append(starts[..., :, None] + xp.arange(kernel[d]))  # (N, C, out_d, k_d)
    flat = xp.zeros(a.shape[:2] + tuple(out) + tuple(kernel), dtype=np.int64)
    for d in range(n):
        shape = a.shape[:2] + tuple(out[e] if e == d else 1 for e in range(n)) + \
            tuple(kernel[e] if e == d else 1 for e in range(n))
        flat = flat * spatial[d] + coords[d].reshape(shape)
    planes = a.reshape(a.shape[:2] + (-1,))
    windows = xp.take_along_axis(planes, flat.reshape(a.shape[:2] + (-1,)), axis=-1)
    windows = windows.reshape(flat.shape[:2 + n] + (-1,))
    best = xp.argmax(windows, axis=-1)  # the first maximum; a NaN wins, as in torch
    return xp.take_along_axis(flat.reshape(windows.shape), best[..., None], axis=-1)[..., 0]


_fractional_indices = op("none", "fractional_max_pool_indices", differentiable=False)(
    _fractional_indices_kernel)


def _fractional_max_pool(n, name, input, kernel_size, output_size, output_ratio,
                         return_indices, _random_samples):
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for "
                                  f"'{dt.scalar_name(input.dtype)}'")
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got "
                           f"{list(input.shape)}")
    unbatched = input.ndim == n + 1
    x = input.unsqueeze(0) if unbatched else input
    kernel = _fractional_tuple(kernel_size, n)
    spatial = x.shape[2:]
    if output_size is None:
        ratio = _fractional_tuple(output_ratio, n)
        output_size = tuple(int(s * r) for s, r in zip(spatial, ratio))
    out = _fractional_tuple(output_size, n)
    words = ("time", "height", "width")[3 - n:]
    for k, o, s, word in zip(kernel, out, spatial, words):
        if o + k - 1 > s:
            raise RuntimeError(f"{name}(): pool {word} {k} too large relative to input "
                               f"{word} {s}")
    samples = _random_samples
    if samples is None:
        from ... import _random

        samples = _random.rand(x.shape[0], x.shape[1], n, dtype=x.dtype, device=x.device)
    elif samples.dtype is not x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    elif samples.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to "
                           "argument 'random_samples'. This input cannot have requires_grad "
                           "True.")
    elif samples.shape[0] < x.shape[0]:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    samples = samples[:x.shape[0]]
    indices = _fractional_indices(x, samples, kernel=kernel, output_size=out)
    values = x.flatten(2).gather(2, indices.flatten(2)).reshape(indices.shape)
    if unbatched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values


def _fractional_tuple(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """(values, indices) of fractional max pooling over (N, C, H, W) (or (C, H, W)): windows
    of kernel_size at pseudo-random starts giving output_size (or input size * output_ratio);
    indices are flat positions in each H x W plane."""
    return _fractional_max_pool(2, "fractional_max_pool2d", input, kernel_size, output_size,
                                output_ratio, True, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling over 2 spatial dims (see fractional_max_pool2d_with_indices)."""
    return _fractional_max_pool(2, "fractional_max_pool2d", input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """(values, indices) of fractional max pooling over 3 spatial dims."""
    return _fractional_max_pool(3, "fractional_max_pool3d", input, kernel_size, output_size,
                                output_ratio, True, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling over 3 spatial dims (see fractional_max_pool3d_with_indices)."""
    return _fractional_max_pool(3, "fractional_max_pool3d", input, kernel_size, output_size,
                                output_ratio, return_indices, _random_samples)


__all__ += ["fractional_max_pool2d", "fractional_max_pool2d_with_indices",
            "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]


@export(name="adaptive_max_pool1d")
def _adaptive_max_pool1d_values_and_indices(input, output_size):
    """torch.adaptive_max_pool1d: (values, indices) always (F.adaptive_max_pool1d returns
    the values unless return_indices)."""
    return adaptive_max_pool1d(input, output_size, return_indices=True)

# forward mode and vmap (see ops/_op.py). Window sums and their adjoint are linear; max pools
# take their tangents from their rules (the tangent at the picked element). Every op here works
# on (N, C, *spatial): a batch folds into N.

for _op in (_window_sum, _window_sum_backward):
    _op.jvp(LINEAR)
for _op in (_max_pool, _adaptive_max_pool, _window_sum, _tiled_max_pool):
    _op.batch(batch_rules.fold())
_window_sum_backward.batch(batch_rules.fold(shapes=("input_shape",)))
_max_unpool.batch(batch_rules.fold(inputs=(0, 1)))
_tiled_backward.batch(batch_rules.fold(inputs=None, shapes=("input_shape",)))
_tiled_pick.batch(batch_rules.fold(inputs=None))
_fractional_indices.batch(batch_rules.fold(inputs=(0, 1)))
del _op
