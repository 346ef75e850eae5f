"""Convolutions (1-d, 2-d, 3-d, grouped, strided, dilated, padded) and their transposes.

Layout: kernels work channels-last. The input (N, C, *spatial) is copied once into a
zero-padded (N, *padded, C) buffer; all patches are then a *strided view* of that buffer,

    windows[n, *out_position, *kernel_offset, c]   shape (N, *out, *kernel, C)

and the convolution is one GEMM: (N*P, K*C) @ (K*C, O), with P output positions and K kernel
taps. Backward is two more GEMMs; the input gradient is scattered back ("col2im") by adding
one strided slice per kernel offset (K adds, no np.add.at).

Three ops close under differentiation, so double backward works:
    y = conv(x, w)                 g -> (conv_input_grad(g, w),   conv_weight_grad(x, g))
    x = conv_input_grad(dy, w)     g -> (conv(g, w),              conv_weight_grad(g, dy))
    w = conv_weight_grad(x, dy)    g -> (conv_input_grad(dy, g),  conv(x, g))
A transposed convolution is conv_input_grad with a chosen output size.

Read next: `pool.py`.
"""
import itertools
import math

from ..._parallel import parallel_map
from .._op import export, op

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d"]


# ----------------------------------------------------------------------------------------------
# array helpers (xp-generic)


def _channels_last_padded(xp, x, padding):
    """(N, C, *S) -> zero-padded, contiguous (N, *S_padded, C)."""
    n = x.ndim - 2
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], padding))
    buf = xp.zeros((x.shape[0],) + padded + (x.shape[1],), dtype=x.dtype)
    interior = tuple(slice(lo, lo + s) for s, (lo, _) in zip(x.shape[2:], padding))
    buf[(slice(None),) + interior + (slice(None),)] = x.transpose((0,) + tuple(range(2, n + 2))
                                                                  + (1,))
    return buf


def _out_size(padded, kernel, stride, dilation):
    return tuple((p - d * (k - 1) - 1) // s + 1
                 for p, k, s, d in zip(padded, kernel, stride, dilation))


def _windows(xp, buf, kernel, stride, dilation):
    """All patches of a channels-last buffer as a view (N, *out, *kernel, C)."""
    n = len(kernel)
    out = _out_size(buf.shape[1:1 + n], kernel, stride, dilation)
    st = buf.strides
    shape = (buf.shape[0],) + out + tuple(kernel) + (buf.shape[-1],)
    strides = ((st[0],) + tuple(st[1 + i] * stride[i] for i in range(n)) +
               tuple(st[1 + i] * dilation[i] for i in range(n)) + (st[-1],))
    return xp.lib.stride_tricks.as_strided(buf, shape, strides)


def _im2col(xp, x, kernel, stride, padding, dilation, groups):
    """Patches as a (G, N*P, K*Cg) matrix (a copy: the one big copy of a convolution)."""
    windows = _windows(xp, _channels_last_padded(xp, x, padding), kernel, stride, dilation)
    rows = math.prod(windows.shape[:-1 - len(kernel)])
    taps = math.prod(kernel)
    cg = x.shape[1] // groups
    if groups == 1:
        return windows.reshape(1, rows, taps * cg), windows.shape[1:1 + len(kernel)]
    grouped = windows.reshape(rows, taps, groups, cg).transpose(2, 0, 1, 3)
    return grouped.reshape(groups, rows, taps * cg), windows.shape[1:1 + len(kernel)]


def _weight_matrix(w, groups):
    """(O, Cg, *k) -> (G, Og, K*Cg), with taps before channels to match _im2col's columns."""
    o, cg = w.shape[:2]
    n = w.ndim - 2
    taps_last = w.transpose((0,) + tuple(range(2, n + 2)) + (1,))
    return taps_last.reshape(groups, o // groups, math.prod(w.shape[2:]) * cg)


def _rows_to_channels_first(xp, rows, n, out):
    """(G, N*P, Og) GEMM result -> (N, O, *out), a transposed view (the caller copies it into
    its contiguous output)."""
    g, _, og = rows.shape
    batch = rows.shape[1] // math.prod(out) if math.prod(out) else 0
    if g > 1:
        rows = rows.transpose(1, 0, 2)
    grid = rows.reshape((batch,) + tuple(out) + (g * og,))
    return grid.transpose((0, n + 1) + tuple(range(1, n + 1)))


def _channels_last_rows(xp, y, groups):
    """(N, O, *out) -> (G, N*P, Og): the output gradient as GEMM rows."""
    n = y.ndim - 2
    cl = y.transpose((0,) + tuple(range(2, n + 2)) + (1,))
    rows = cl.reshape(-1, groups, y.shape[1] // groups)
    return rows.transpose(1, 0, 2)


# ----------------------------------------------------------------------------------------------
# the three ops


# The patch matrix of a whole batch is large (ResNet's 64-channel 32x32 layers: 75 MB for 32
# images); built and multiplied for a few images at a time it stays in cache, which measured
# ~1.4x faster. Each kernel below therefore runs on batch chunks of about this many elements
# of patch matrix -- and runs the chunks on several cores (see _parallel.py).
_CHUNK_ELEMENTS = 1 << 21


def _chunks(batch, per_image):
    """Slices of the batch whose patch matrices hold about _CHUNK_ELEMENTS elements."""
    step = max(1, _CHUNK_ELEMENTS // max(per_image, 1))
    return [slice(i, min(i + step, batch)) for i in range(0, batch, step)]


def _patch_elements(spatial_out, w):
    return math.prod(spatial_out) * math.prod(w.shape[1:])


@op("none", name="convolution", node_name="ConvolutionBackward0")
def _conv(xp, x, w, *, stride, padding, dilation, groups):
    n = w.ndim - 2
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], padding))
    out_size = _out_size(padded, w.shape[2:], stride, dilation)
    out = xp.empty((x.shape[0], w.shape[0]) + out_size, dtype=x.dtype)
    weights = _weight_matrix(w, groups).transpose(0, 2, 1)

    def run(part):
        cols, _ = _im2col(xp, x[part], w.shape[2:], stride, padding, dilation, groups)
        out[part] = _rows_to_channels_first(xp, xp.matmul(cols, weights), n, out_size)
    parallel_map(run, _chunks(x.shape[0], _patch_elements(out_size, w)))
    return out


@_conv.grad
def _conv(g, x, w, stride, padding, dilation, groups, needs_input_grad):
    attrs = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    gx = _conv_input_grad(g, w, input_shape=tuple(x.shape), **attrs) if needs_input_grad[0] \
        else None
    gw = _conv_weight_grad(x, g, weight_shape=tuple(w.shape), **attrs) if needs_input_grad[1] \
        else None
    return gx, gw


@op("none", name="conv_input_grad", node_name="ConvolutionBackwardBackward0")
def _conv_input_grad(xp, dy, w, *, input_shape, stride, padding, dilation, groups):
    """The adjoint of convolution w.r.t. its input (also: a transposed convolution)."""
    dx = xp.empty(input_shape, dtype=dy.dtype)
    weights = _weight_matrix(w, groups)

    def run(part):
        chunk_shape = (len(range(*part.indices(input_shape[0]))),) + tuple(input_shape[1:])
        dx[part] = _input_grad_chunk(xp, dy[part], weights, w.shape[2:], chunk_shape, stride,
                                     padding, dilation, groups)
    parallel_map(run, _chunks(input_shape[0], _patch_elements(dy.shape[2:], w)))
    return dx


def _input_grad_chunk(xp, dy, weights, kernel, input_shape, stride, padding, dilation, groups):
    n = len(kernel)
    rows = _channels_last_rows(xp, dy, groups)                      # (G, N*P, Og)
    dcols = xp.matmul(rows, weights)                                # (G, N*P, K*Cg)
    batch, channels = input_shape[0], input_shape[1]
    out = dy.shape[2:]
    cg = channels // groups
    dcols = dcols.reshape((groups, batch) + tuple(out) + tuple(kernel) + (cg,))
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(input_shape[2:], padding))
    buf = xp.zeros((batch,) + padded + (groups, cg), dtype=dy.dtype)
    # col2im: each kernel offset contributes one strided slice of the padded input
    for offset in itertools.product(*(range(k) for k in kernel)):
        region = tuple(slice(i * d, i * d + (o - 1) * s + 1, s)
                       for i, d, o, s in zip(offset, dilation, out, stride))
        contribution = dcols[(slice(None), slice(None)) + tuple(slice(None) for _ in out)
                             + offset]                              # (G, N, *out, Cg)
        buf[(slice(None),) + region] += xp.moveaxis(contribution, 0, -2)
    interior = tuple(slice(lo, lo + s) for s, (lo, _) in zip(input_shape[2:], padding))
    cl = buf[(slice(None),) + interior].reshape((batch,) + tuple(input_shape[2:]) + (channels,))
    return cl.transpose((0, n + 1) + tuple(range(1, n + 1)))


@_conv_input_grad.grad
def _conv_input_grad(g, dy, w, stride, padding, dilation, groups, needs_input_grad):
    attrs = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    d_dy = _conv(g, w, **attrs) if needs_input_grad[0] else None
    dw = _conv_weight_grad(g, dy, weight_shape=tuple(w.shape), **attrs) \
        if needs_input_grad[1] else None
    return d_dy, dw


@op("none", name="conv_weight_grad", node_name="ConvolutionBackwardBackward0")
def _conv_weight_grad(xp, x, dy, *, weight_shape, stride, padding, dilation, groups):
    """The adjoint of convolution w.r.t. its weight: summed over batch chunks."""
    kernel = weight_shape[2:]
    o, cg = weight_shape[:2]
    per_image = math.prod(dy.shape[2:]) * math.prod(weight_shape[1:])

    def run(part):
        cols, _ = _im2col(xp, x[part], kernel, stride, padding, dilation, groups)
        rows = _channels_last_rows(xp, dy[part], groups)                  # (G, rows, Og)
        return xp.matmul(rows.transpose(0, 2, 1), cols)                   # (G, Og, K*Cg)
    partial = parallel_map(run, _chunks(x.shape[0], per_image))
    dw = xp.zeros((groups, o // groups, math.prod(kernel) * cg), dtype=dy.dtype)
    for chunk in partial:
        dw += chunk
    n = len(kernel)
    dw = dw.reshape((o,) + tuple(kernel) + (cg,))
    return xp.ascontiguousarray(dw.transpose((0, n + 1) + tuple(range(1, n + 1))))


@_conv_weight_grad.grad
def _conv_weight_grad(g, x, dy, stride, padding, dilation, groups, needs_input_grad):
    attrs = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    dx = _conv_input_grad(dy, g, input_shape=tuple(x.shape), **attrs) if needs_input_grad[0] \
        else None
    d_dy = _conv(x, g, **attrs) if needs_input_grad[1] else None
    return dx, d_dy


# ----------------------------------------------------------------------------------------------
# public functions


def _tuple(value, n, name):
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got {name}="
                           f"{list(value)}")
    return value


def _padding_pairs(padding, n, kernel, stride, dilation):
    """Padding as ((lo, hi), ...) per spatial dim; 'same' puts the odd extra pixel at the end,
    as torch does."""
    if padding == "valid":
        return ((0, 0),) * n
    if padding == "same":
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pairs = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            pairs.append((total // 2, total - total // 2))
        return tuple(pairs)
    if isinstance(padding, str):
        raise ValueError(f"Invalid padding string '{padding}', should be one of "
                         "{'valid', 'same'}")
    return tuple((p, p) for p in _tuple(padding, n, "padding"))


def _check_conv(x, w, groups, n, transposed=False):
    if w.ndim != n + 2:
        raise RuntimeError(f"Expected {n + 2}-dimensional weight for {n + 2}-dimensional "
                           f"input, but got weight of size {list(w.shape)} instead")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    channels = x.shape[1]
    expected = w.shape[0] if transposed else w.shape[1] * groups
    if channels != expected:
        if transposed:
            raise RuntimeError(f"Given transposed=1, weight of size {list(w.shape)}, expected "
                               f"input{list(x.shape)} to have {w.shape[0]} channels, but got "
                               f"{channels} channels instead")
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, expected "
                           f"input{list(x.shape)} to have {expected} channels, but got "
                           f"{channels} channels instead")
    if not transposed and w.shape[0] % groups:
        raise RuntimeError("Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size {list(w.shape)} "
                           "instead")
    if x.dtype is not w.dtype:
        raise RuntimeError(f"Input type ({x.type()}) and weight type ({w.type()}) should be the "
                           "same")


def _batched(input, n, name):
    """Accept unbatched (C, *S) input like torch; returns (input, was_unbatched)."""
    if input.ndim == n + 1:
        return input.unsqueeze(0), True
    if input.ndim != n + 2:
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    return input, False


def _add_bias(out, bias, n):
    if bias is None:
        return out
    return out + bias.reshape((-1,) + (1,) * n)


def _convnd(n, name, input, weight, bias, stride, padding, dilation, groups):
    input, unbatched = _batched(input, n, name)
    _check_conv(input, weight, groups, n)
    stride = _tuple(stride, n, "stride")
    dilation = _tuple(dilation, n, "dilation")
    kernel = weight.shape[2:]
    pairs = _padding_pairs(padding, n, kernel, stride, dilation)
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(input.shape[2:], pairs))
    effective = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if any(p < e for p, e in zip(padded, effective)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, effective))}). Kernel size can't be greater "
                           "than actual input size")
    out = _conv(input, weight, stride=stride, padding=pairs, dilation=dilation, groups=groups)
    out = _add_bias(out, bias, n)
    return out.squeeze(0) if unbatched else out


@export
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


@export
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


@export
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def _conv_transposend(n, name, input, weight, bias, stride, padding, output_padding, groups,
                      dilation):
    """Transposed convolution: the input-gradient of a convolution whose output is `input`.
    weight is (C_in, C_out / groups, *kernel)."""
    input, unbatched = _batched(input, n, name)
    _check_conv(input, weight, groups, n, transposed=True)
    stride = _tuple(stride, n, "stride")
    dilation = _tuple(dilation, n, "dilation")
    if isinstance(padding, str):
        raise RuntimeError(f"{name}: padding must be an int or a tuple, not '{padding}'")
    padding = _tuple(padding, n, "padding")
    output_padding = _tuple(output_padding, n, "output_padding")
    for op_, s, d in zip(output_padding, stride, dilation):
        if op_ >= s and op_ >= d:
            raise RuntimeError("output padding must be smaller than either stride or dilation, "
                               f"but got output_padding={list(output_padding)}, "
                               f"stride={list(stride)}, dilation={list(dilation)}")
    kernel = weight.shape[2:]
    size = tuple((i - 1) * s - 2 * p + d * (k - 1) + o + 1 for i, s, p, d, k, o in
                 zip(input.shape[2:], stride, padding, dilation, kernel, output_padding))
    if any(s <= 0 for s in size):
        raise RuntimeError(f"Given input size per channel: {list(input.shape[2:])}. Calculated "
                           f"output size per channel: {list(size)}. Output size is too small")
    channels = weight.shape[1] * groups
    out = _conv_input_grad(input, weight, input_shape=(input.shape[0], channels) + size,
                           stride=stride, padding=tuple((p, p) for p in padding),
                           dilation=dilation, groups=groups)
    out = _add_bias(out, bias, n)
    return out.squeeze(0) if unbatched else out


@export
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transposend(1, "conv_transpose1d", input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


@export
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transposend(2, "conv_transpose2d", input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


@export
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transposend(3, "conv_transpose3d", input, weight, bias, stride, padding,
                             output_padding, groups, dilation)



