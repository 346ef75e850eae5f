"""Convolutions (1-d, 2-d, 3-d, grouped, strided, dilated, padded) and their transposes.

Layout: for each kernel tap, the input positions it reads form one strided slice of the
zero-padded input (N, C, *spatial); the K tap slices are copied once into the patch matrix
(C*K, N*P) -- K kernel taps, P output positions -- so the convolution is one GEMM:
(O, C*K) @ (C*K, N*P). The weight (O, C, *k) is that left matrix
without a copy, and the result's rows are output channels, so going back to (N, O, *out) moves
whole rows of P. Backward is two more GEMMs; the input gradient is scattered back ("col2im") by
adding one strided slice per kernel offset (K adds, no np.add.at) -- for stride-1 2-d
convolutions, kernel rows first, then columns (see _col2im_rows_first). 3x3 stride-1
convolutions with 64 channels or more take Winograd's F(2x2, 3x3) instead, all three GEMMs of
them (see _winograd_conv).

Three ops close under differentiation, so double backward works:
    y = conv(x, w)                 g -> (conv_input_grad(g, w),   conv_weight_grad(x, g))
    x = conv_input_grad(dy, w)     g -> (conv(g, w),              conv_weight_grad(g, dy))
    w = conv_weight_grad(x, dy)    g -> (conv_input_grad(dy, g),  conv(x, g))
A transposed convolution is conv_input_grad with a chosen output size.

Read next: `pool.py`.
"""
import itertools
import math

from ..._functorch import batch_rules
from ..._parallel import blocks, even_slices, get_num_threads, parallel_map
from .._dispatch import autocast_args
from .._op import MULTILINEAR, export, op

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "conv_tbc"]


# ----------------------------------------------------------------------------------------------
# array helpers (xp-generic)


def _padded(xp, x, padding, fill):
    """(N, C, *S) -> (N, C, *S') with S'_d = S_d + lo_d + hi_d and the border set to `fill`.
    A negative hi drops the last input positions (no window reads them)."""
    lead = x.ndim - len(padding)
    spatial = x.shape[lead:]
    keep = tuple(slice(0, s + min(hi, 0)) for s, (_, hi) in zip(spatial, padding))
    if all(lo == 0 and hi <= 0 for lo, hi in padding):
        return x[(Ellipsis,) + keep]
    shape = x.shape[:lead] + tuple(s + lo + hi for s, (lo, hi) in zip(spatial, padding))
    buf = xp.full(shape, fill, dtype=x.dtype)
    target = tuple(slice(lo, lo + k.stop) for k, (lo, _) in zip(keep, padding))
    buf[(Ellipsis,) + target] = x[(Ellipsis,) + keep]
    return buf


def _interior(spatial, padding):
    return tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial, padding))


def _out_size(padded, kernel, stride, dilation):
    return tuple((p - d * (k - 1) - 1) // s + 1
                 for p, k, s, d in zip(padded, kernel, stride, dilation))


def _tap_region(offset, dilation, out, stride):
    """The slice of the padded input that kernel tap `offset` reads for every output position."""
    return tuple(slice(i * d, i * d + (o - 1) * s + 1, s)
                 for i, d, o, s in zip(offset, dilation, out, stride))


def _add_windows(xp, per_offset, shape, out, kernel, stride, padding, dilation, dtype):
    """The adjoint of reading windows ("col2im"; pooling and unfold use it too): for every
    kernel offset, add `per_offset(offset)` (N, C, *out) into the input positions that tap
    reads -- one strided slice per offset -- and return the (N, C, *S) interior of the padded
    buffer."""
    spatial = shape[2:]
    size = tuple(max(s + lo + hi, s + lo) for s, (lo, hi) in zip(spatial, padding))
    buf = xp.zeros(tuple(shape[:2]) + size, dtype=dtype)
    for offset in itertools.product(*(range(k) for k in kernel)):
        region = _tap_region(offset, dilation, out, stride)
        buf[(slice(None), slice(None)) + region] += per_offset(offset)
    return buf[(Ellipsis,) + _interior(spatial, padding)]


def _im2col(xp, x, kernel, stride, padding, dilation, groups):
    """The patch matrix (G, Cg*K, N*P) of a batch: row (c, tap), column (image, position).
    It is the one big copy of a convolution; laid out this way a whole batch chunk is one GEMM
    per group, and that GEMM's result is already channels-first."""
    if len(kernel) == 2 and stride == (1, 1) and min(min(pair) for pair in padding) >= 0:
        cols = _im2col_rows_first(xp, x, kernel, padding, dilation)
    else:
        cols = _im2col_by_tap(xp, x, kernel, stride, padding, dilation)
    return cols.reshape(groups, x.shape[1] // groups * math.prod(kernel), -1)


def _im2col_by_tap(xp, x, kernel, stride, padding, dilation):
    """(C, *k, N, *out) patches with one strided slice copy per kernel tap (measured up to
    1.7x faster than copying the 2n+2-dim window view)."""
    buf = _padded(xp, x, padding, 0)
    out = _out_size(buf.shape[2:], kernel, stride, dilation)
    batch, channels = x.shape[:2]
    cols = xp.empty((channels,) + tuple(kernel) + (batch,) + out, dtype=x.dtype)
    per_channel = buf.swapaxes(0, 1)                                 # (C, N, *padded)
    for offset in itertools.product(*(range(k) for k in kernel)):
        cols[(slice(None),) + offset] = \
            per_channel[(slice(None), slice(None)) + _tap_region(offset, dilation, out, stride)]
    return cols


def _im2col_rows_first(xp, x, kernel, padding, dilation):
    """Stride-1 2-d patches, the mirror of _col2im_rows_first: for each kernel column, the
    input shifted sideways is copied once into a buffer of whole zero-padded rows; each
    kernel row's tap is then a row shift of that buffer, a copy of contiguous runs of the
    (H, W) plane. No padded copy of the input either. Measured 1.4-2x faster than
    _im2col_by_tap on the 3x3 layers of the ResNet and LeNet benchmarks."""
    batch, channels, height, width = x.shape
    (kh, kw), ((top, bottom), (left, right)) = kernel, padding
    out_h = height + top + bottom - dilation[0] * (kh - 1)
    out_w = width + left + right - dilation[1] * (kw - 1)
    cols = xp.empty((channels, kh, kw, batch, out_h, out_w), dtype=x.dtype)
    rows = xp.empty((channels, batch, top + height + bottom, out_w), dtype=x.dtype)
    rows[:, :, :top] = 0
    rows[:, :, top + height:] = 0
    inside = rows[:, :, top:top + height]
    per_channel = x.swapaxes(0, 1)                                   # (C, N, H, W)
    for j in range(kw):
        read, written = _overlap(j * dilation[1] - left, out_w, width)
        inside[..., written] = per_channel[..., read]
        inside[..., :written.start] = 0
        inside[..., written.stop:] = 0
        for i in range(kh):
            cols[:, i, j] = rows[:, :, i * dilation[0]:i * dilation[0] + out_h]
    return cols


def _weight_matrix(w, groups):
    """(O, Cg, *k) -> (G, Og, Cg*K): a view, rows and columns as _im2col's."""
    return w.reshape(groups, w.shape[0] // groups, -1)


def _as_columns(xp, y, groups):
    """(N, O, *out) -> (G, Og, N*P): an output (gradient) as GEMM columns (a copy)."""
    batch, channels = y.shape[:2]
    per_channel = y.reshape(batch, channels, -1).transpose(1, 0, 2)
    return per_channel.reshape(groups, channels // groups, -1)


def _columns_to_batch(cols, batch):
    """(G, Og, N*P) -> a (N, O, P) view of a GEMM result."""
    return cols.reshape(-1, batch, cols.shape[-1] // batch).transpose(1, 0, 2)


# ----------------------------------------------------------------------------------------------
# the three ops


# The patch matrix of a whole batch is large (ResNet's 64-channel 32x32 layers: 75 MB for 32
# images); built and multiplied for a few images at a time it stays in cache, which measured
# ~1.4x faster. Each kernel below therefore runs on batch chunks of about this many elements
# of patch matrix -- and runs the chunks on several cores (see _parallel.py). 2 MiB of
# float32 measured best among 0.5-8 MiB on whole ResNet and LeNet training steps...
_CHUNK_ELEMENTS = 1 << 19
# ...but not fewer GEMM columns (images x output positions) than this: ResNet's 512-channel
# 4x4 layers, in chunks of 7 images (112 columns), ran ~20% slower than in chunks of 16.
_MIN_COLUMNS = 256


def _chunks(xp, batch, spatial_out, weight_shape):
    """Slices of the batch (see _CHUNK_ELEMENTS), as many as a multiple of the thread count
    and of equal size (+-1 image): 5 chunks on 2 threads would take as long as 6. On a GPU
    the whole batch is one chunk: there, chunks only multiply kernel launches."""
    if xp.__name__ != "numpy":
        return [slice(0, batch)]
    positions = math.prod(spatial_out)
    per_image = positions * math.prod(weight_shape[1:])
    step = max(1, _CHUNK_ELEMENTS // max(per_image, 1), -(-_MIN_COLUMNS // max(positions, 1)))
    return _batch_slices(batch, step)


# Winograd F(2x2, 3x3) (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks",
# 2015) for 3x3, stride-1 convolutions: every 2x2 block of outputs ("tile") is computed from
# the 4x4 block of input around it as
#     y = A^T [(G g G^T) * (B^T d B)] A          (* elementwise, over 16 "frequencies")
# so the convolution is 16 GEMMs (O, C) @ (C, tiles) -- 16 multiplies per 4 outputs where the
# patch-matrix GEMM has 36: 2.25x fewer GEMM flops. The transforms are small matrix products
# too: B^T d B of every tile is one (16, 16) @ (16, C * tiles) product over the gathered tiles,
# A^T m A one (4, 16) @ (16, O * tiles). On this CPU, forward and backward of ResNet's 3x3
# layers (batch 32, one thread) measured 1.2x (64 channels, 32x32) to 1.45x (128-256
# channels, 16x16-8x8) faster than im2col + GEMM, and the GEMMs still take ~60% of the time.
# Its rounding error is a little larger (~1e-6 of the output's scale in float32). Padding
# taps cost as much as any.
_BT = ((1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1))
_G = ((1, 0, 0), (0.5, 0.5, 0.5), (0.5, -0.5, 0.5), (0, 0, 1))
# G applied to a reversed kernel row (G J, J the reversal): G with its first and last rows
# swapped
_G_FLIPPED = ((0, 0, 1), (0.5, 0.5, 0.5), (0.5, -0.5, 0.5), (1, 0, 0))
_AT = ((1, 1, 1, 0), (0, 1, -1, -1))
# Fewer channels make the 16 GEMMs too thin to pay for the transforms: LeNet's 32->64 layer
# (14x14) ran 0.9x as fast as im2col + GEMM, ResNet's 64->64 (32x32) 1.2x as fast.
_WINOGRAD_MIN_CHANNELS = 64
# Tiles per batch chunk, at least: fewer made the 16 GEMMs too narrow (ResNet's 4x4 maps, 4
# tiles per image: chunks of 8 images ran 1.25x slower than chunks of 32).
_WINOGRAD_MIN_TILES = 256


def _winograd_fits(xp, x, weight_shape, stride, padding, dilation, groups):
    """Whether a convolution of x with weights of `weight_shape` (or one of its adjoints) takes
    the Winograd path: 2-d, 3x3, stride 1, undilated, ungrouped, real floating, on the CPU,
    with enough channels and padding of 0-2 on each side."""
    return xp.__name__ == "numpy" and tuple(weight_shape[2:]) == (3, 3) and \
        stride == (1, 1) and dilation == (1, 1) and groups == 1 and x.dtype.kind == "f" and \
        x.dtype.itemsize >= 4 and min(weight_shape[:2]) >= _WINOGRAD_MIN_CHANNELS and \
        x.shape[0] > 0 and all(0 <= side <= 2 for pair in padding for side in pair)


def _transform(xp, rows, cols, dtype):
    """The Kronecker product rows (x) cols as an array: the 2-d transform of a flattened tile
    (cached: np.kron costs ~20 us, a ResNet forward asks ~190 times)."""
    key = (rows, cols, dtype)
    if key not in _TRANSFORMS:
        matrix = xp.kron(xp.asarray(rows, dtype=dtype), xp.asarray(cols, dtype=dtype))
        matrix.flags.writeable = False
        _TRANSFORMS[key] = matrix
    return _TRANSFORMS[key]


_TRANSFORMS = {}


def _winograd_weights(xp, w, transform=_G):
    """G g G^T of every (o, c) kernel: (O, C, 3, 3) -> (16, O, C). With `_G_FLIPPED` for G,
    the transforms of the kernels turned by 180 degrees, which the input gradient convolves
    with: read from w as it lies, where flipping w first was a strided copy of all of it
    (3.5 ms for a 512x512 layer, on the calling thread alone)."""
    out_channels, in_channels = w.shape[:2]
    kernels = w.reshape(out_channels * in_channels, 9)  # a copy only if w is a view
    return _shared_matmul(xp, _transform(xp, transform, transform, w.dtype), kernels.T).reshape(
        16, out_channels, in_channels)


def _shared_matmul(xp, left, right):
    """left @ right, the columns of a large right shared out among ember's threads. Outside
    ember's parallel regions OpenBLAS would run it on its own threads, which wait for one
    another; ember's keep to one core each, as in the chunk loops."""
    out = xp.empty((left.shape[0], right.shape[1]), dtype=right.dtype)

    def run(part):  # written in place: a product per part, then a copy, took 1.6x as long
        xp.matmul(left, right[:, part], out=out[:, part])
    parallel_map(run, blocks(right.shape[1], right))
    return out


def _winograd_conv(xp, x, weights, bias, padding, out):
    """out[...] = the 3x3 stride-1 convolution of x (N, C, H, W) whose kernels' transforms
    are `weights` (16, O, C), plus bias; out is (N, O, H', W')."""
    tiles = tuple(-(-size // 2) for size in out.shape[2:])
    per_image = tiles[0] * tiles[1]
    inverse = _transform(xp, _AT, _AT, x.dtype)                     # (4, 16)
    out_channels = weights.shape[1]

    def run(part):
        batch = len(range(*part.indices(x.shape[0])))
        products = xp.matmul(weights, _winograd_tiles(xp, x[part], padding, tiles))
        values = xp.matmul(inverse, products.reshape(16, -1))      # (4, O * n * tiles)
        values = values.reshape((2, 2, out_channels, batch) + tiles)
        if bias is not None:
            values += bias.reshape(-1, 1, 1, 1)
        _untile(values, out[part])
    parallel_map(run, _winograd_chunks(x.shape[0], per_image))


def _winograd_tiles(xp, x, padding, tiles):
    """B^T d B of every 4x4 input tile d (the tiles overlap by 2): (16, C, n * tiles), from
    (n, C, H, W) zero-padded by `padding` (and on the bottom and right up to whole tiles)."""
    batch, channels, height, width = x.shape
    (top, _), (left, _) = padding
    th, tw = tiles
    buf = xp.empty((channels, batch, 2 * th + 2, 2 * tw + 2), dtype=x.dtype)
    buf[:, :, :top] = 0  # the border only: zeroing all of it was ~1.5% of a ResNet step
    buf[:, :, top + height:] = 0
    inside = buf[:, :, top:top + height]
    inside[..., :left] = 0
    inside[..., left + width:] = 0
    inside[..., left:left + width] = x.swapaxes(0, 1)
    gathered = xp.empty((4, 4, channels, batch, th, tw), dtype=x.dtype)
    for a in range(4):
        for b in range(4):
            gathered[a, b] = buf[:, :, a:a + 2 * th:2, b:b + 2 * tw:2]
    forward = _transform(xp, _BT, _BT, x.dtype)                     # (16, 16)
    return xp.matmul(forward, gathered.reshape(16, -1)).reshape(16, channels, -1)


def _winograd_weight_grad(xp, x, dy, padding):
    """The weight gradient of _winograd_conv: the adjoint of each step in turn,
    dW = G^T [sum over tiles (A dy A^T) * (B^T d B)] G -- 16 GEMMs (O, tiles) @ (tiles, C),
    2.25x fewer flops than (O, N*P) @ (N*P, C*9)."""
    tiles = tuple(-(-size // 2) for size in dy.shape[2:])
    adjoint = _transform(xp, _AT, _AT, x.dtype).T                   # (16, 4)
    out_channels, in_channels = dy.shape[1], x.shape[1]

    def run(part):
        inputs = _winograd_tiles(xp, x[part], padding, tiles)        # (16, C, T)
        grads = xp.matmul(adjoint, _tile_values(xp, dy[part], tiles).reshape(4, -1))
        return xp.matmul(grads.reshape(16, out_channels, -1), inputs.transpose(0, 2, 1))
    parts = parallel_map(run, _winograd_chunks(x.shape[0], tiles[0] * tiles[1]))
    total = parts[0]
    for part in parts[1:]:
        total += part
    # G^T [.] G of every (o, c), as rows of (O * C, 9) -- the layout of the weight itself,
    # where the (9, O * C) product needed a transposing copy (2.5 ms at 512 channels). The
    # result is the array allocated, not a view of one, so that the engine may hand it to
    # the weight as its .grad without copying it (37 MB a ResNet step).
    flat = total.reshape(16, -1)
    transform = _transform(xp, _G, _G, x.dtype)                     # (16, 9)
    dw = xp.empty((out_channels, in_channels, 3, 3), dtype=x.dtype)
    rows = dw.reshape(-1, 9)

    def to_kernels(part):
        rows[part] = xp.matmul(flat[:, part].T, transform)
    parallel_map(to_kernels, blocks(flat.shape[1], flat))
    return dw


def _tile_values(xp, y, tiles):
    """The adjoint of _untile: y (n, O, H, W) as (2, 2, O, n, th, tw), zero past its edge."""
    batch, channels = y.shape[:2]
    shape = (2, 2, channels, batch) + tiles
    ragged = any(size % 2 for size in y.shape[2:])
    values = xp.zeros(shape, dtype=y.dtype) if ragged else xp.empty(shape, dtype=y.dtype)
    for i in range(2):
        for j in range(2):
            source = y[:, :, i::2, j::2]
            rows, cols = source.shape[2:]
            values[i, j, :, :, :rows, :cols] = source.swapaxes(0, 1)
    return values


def _untile(values, dest):
    """values (2, 2, O, n, th, tw) -- output (i, j) of every tile -- into dest (n, O, H, W):
    four strided copies (measured 3.5x faster than one copy of the 6-d transpose); odd sizes
    drop the tiles' last row or column."""
    for i in range(2):
        for j in range(2):
            target = dest[:, :, i::2, j::2]
            rows, cols = target.shape[2:]
            target[...] = values[i, j, :, :, :rows, :cols].swapaxes(0, 1)


def _winograd_chunks(batch, per_image):
    """Batch slices of _WINOGRAD_MIN_TILES tiles or more, but one per thread at least, so that
    ember's threads share the batch as in _chunks: on two threads, ResNet's 512-channel 4x4
    layers in one chunk, left to OpenBLAS's threads, trained 1.6x slower than in two."""
    step = max(1, -(-_WINOGRAD_MIN_TILES // per_image))
    return _batch_slices(batch, min(step, -(-batch // get_num_threads())))


def _batch_slices(batch, step):
    """range(batch) in slices of about `step`, as many as a multiple of the thread count where
    there are more than one (5 chunks on 2 threads would take as long as 6)."""
    count = -(-batch // step)
    if count > 1:
        threads = get_num_threads()
        count = min(batch, -(-count // threads) * threads)
    return even_slices(batch, count) if count else []


@op("none", name="convolution", node_name="ConvolutionBackward0")
def _conv(xp, x, w, bias, *, stride, padding, dilation, groups):
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], padding))
    out_size = _out_size(padded, w.shape[2:], stride, dilation)
    out = xp.empty((x.shape[0], w.shape[0]) + out_size, dtype=x.dtype)
    if _winograd_fits(xp, x, w.shape, stride, padding, dilation, groups):
        _winograd_conv(xp, x, _winograd_weights(xp, w), bias, padding, out)
        return out
    flat_out = out.reshape(out.shape[:2] + (math.prod(out_size),))
    weights = _weight_matrix(w, groups)
    bias_column = None if bias is None else bias.reshape(groups, -1, 1)

    def run(part):
        cols = _im2col(xp, x[part], w.shape[2:], stride, padding, dilation, groups)
        rows = xp.matmul(weights, cols)                             # (G, Og, n*P)
        if bias_column is not None:
            rows += bias_column
        flat_out[part] = _columns_to_batch(rows, len(range(*part.indices(x.shape[0]))))
    parallel_map(run, _chunks(xp, x.shape[0], out_size, w.shape))
    return out


@_conv.grad
def _conv(g, x, w, stride, padding, dilation, groups, needs_input_grad):
    attrs = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    # the saved operand is conjugated for complex tensors (a no-op on real ones)
    gx = _conv_input_grad(g, w.conj(), input_shape=tuple(x.shape), **attrs) \
        if needs_input_grad[0] else None
    gw = _conv_weight_grad(x.conj(), g, weight_shape=tuple(w.shape), **attrs) \
        if needs_input_grad[1] else None
    gb = g.sum((0,) + tuple(range(2, g.ndim))) if needs_input_grad[2] else None
    return gx, gw, gb


@op("none", name="conv_input_grad", node_name="ConvolutionBackwardBackward0")
def _conv_input_grad(xp, dy, w, *, input_shape, stride, padding, dilation, groups):
    """The adjoint of convolution w.r.t. its input (also: a transposed convolution)."""
    dx = xp.empty(input_shape, dtype=dy.dtype)
    if _winograd_fits(xp, dy, w.shape, stride, padding, dilation, groups) and \
            all(size == out + 2 - lo - hi for size, out, (lo, hi)
                in zip(input_shape[2:], dy.shape[2:], padding)):
        # for stride 1, the input gradient is the convolution of dy with the kernel flipped
        # and its channel axes swapped, padded by 2 - padding on each side (the swap is a
        # transposed view of each frequency's matrix, which BLAS reads as it lies)
        flipped = _winograd_weights(xp, w, _G_FLIPPED).transpose(0, 2, 1)
        _winograd_conv(xp, dy, flipped, None, tuple((2 - lo, 2 - hi) for lo, hi in padding),
                       dx)
        return dx
    weights_t = _weight_matrix(w, groups).transpose(0, 2, 1)       # (G, Cg*K, Og)

    def run(part):
        dcols = xp.matmul(weights_t, _as_columns(xp, dy[part], groups))
        _col2im(xp, dcols, w.shape[2:], dx[part], dy.shape[2:], stride, padding, dilation)
    parallel_map(run, _chunks(xp, input_shape[0], dy.shape[2:], w.shape))
    return dx


def _col2im(xp, dcols, kernel, dest, out, stride, padding, dilation):
    """The adjoint of _im2col, written into `dest` (N, C, *S): see _add_windows."""
    batch, channels = dest.shape[:2]
    per_tap = dcols.reshape((channels,) + tuple(kernel) + (batch,) + tuple(out))
    if len(kernel) == 2 and stride == (1, 1):
        _col2im_rows_first(xp, per_tap, dest, padding, dilation)
        return
    dest[...] = _add_windows(xp, lambda offset: per_tap[(slice(None),) + offset].swapaxes(0, 1),
                             dest.shape, out, kernel, stride, padding, dilation, dcols.dtype)


def _col2im_rows_first(xp, per_tap, dest, padding, dilation):
    """Stride-1 2-d col2im. For each kernel column, the taps of the kernel rows are first
    summed into a buffer of whole rows -- shifting by whole rows moves contiguous runs of
    the (H, W) plane -- and only that sum is shifted sideways into dest: kw adds of short
    rows instead of kh * kw, and no padded buffer to copy out of. Measured 1.8-2.9x faster
    than adding each tap's window on the 3x3 layers of the ResNet and LeNet benchmarks; most
    on 4x4 and 8x8 maps, whose rows are 4 or 8 values long."""
    batch, channels, height, width = dest.shape
    _, kh, kw, _, out_h, out_w = per_tap.shape
    (top, _), (left, _) = padding
    rows = xp.empty((batch, channels, height, out_w), dtype=dest.dtype)
    for j in range(kw):
        for i in range(kh):
            to, source = _overlap(i * dilation[0] - top, out_h, height)
            _accumulate(rows[:, :, to], per_tap[:, i, j, :, source].swapaxes(0, 1), i == 0,
                        rows, 2, to)
        to, source = _overlap(j * dilation[1] - left, out_w, width)
        _accumulate(dest[..., to], rows[..., source], j == 0, dest, 3, to)


def _accumulate(target, values, first, whole, axis, covered):
    """target += values; the first time, target = values and the rest of `whole` (outside
    the `covered` slice of `axis`) is zeroed -- one pass fewer than zeroing it all."""
    if not first:
        target += values
        return
    target[...] = values
    index = [slice(None)] * whole.ndim
    for part in (slice(0, covered.start), slice(covered.stop, whole.shape[axis])):
        index[axis] = part
        whole[tuple(index)] = 0


def _overlap(offset, size, bound):
    """(destination, source) slices where `size` values shifted by `offset` land in
    range(bound)."""
    lo = max(0, offset)
    hi = max(lo, min(bound, offset + size))
    return slice(lo, hi), slice(lo - offset, hi - offset)


@_conv_input_grad.grad
def _conv_input_grad(g, dy, w, stride, padding, dilation, groups, needs_input_grad):
    attrs = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    d_dy = _conv(g, w.conj(), None, **attrs) if needs_input_grad[0] else None
    dw = _conv_weight_grad(g, dy.conj(), weight_shape=tuple(w.shape), **attrs) \
        if needs_input_grad[1] else None
    return d_dy, dw


@op("none", name="conv_weight_grad", node_name="ConvolutionBackwardBackward0")
def _conv_weight_grad(xp, x, dy, *, weight_shape, stride, padding, dilation, groups):
    """The adjoint of convolution w.r.t. its weight: summed over batch chunks."""
    if _winograd_fits(xp, x, weight_shape, stride, padding, dilation, groups):
        return _winograd_weight_grad(xp, x, dy, padding)

    def run(part):
        cols = _im2col(xp, x[part], weight_shape[2:], stride, padding, dilation, groups)
        return xp.matmul(_as_columns(xp, dy[part], groups), cols.transpose(0, 2, 1))
    dw = xp.zeros(weight_shape, dtype=dy.dtype)
    flat = dw.reshape(groups, weight_shape[0] // groups, -1)        # (O, Cg, *k) as (G, Og, Cg*K)
    for chunk in parallel_map(run, _chunks(xp, x.shape[0], dy.shape[2:], weight_shape)):
        flat += chunk
    return dw


@_conv_weight_grad.grad
def _conv_weight_grad(g, x, dy, stride, padding, dilation, groups, needs_input_grad):
    attrs = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    dx = _conv_input_grad(dy.conj(), g, input_shape=tuple(x.shape), **attrs) \
        if needs_input_grad[0] else None
    d_dy = _conv(x.conj(), g, None, **attrs) if needs_input_grad[1] else None
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


def _check_bias(x, w, bias):
    if bias is None:
        return
    if tuple(bias.shape) != (w.shape[0],):
        raise RuntimeError(f"Given weight of size {list(w.shape)}, expected bias to be "
                           f"1-dimensional with {w.shape[0]} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    if bias.dtype is not x.dtype:
        raise RuntimeError(f"Input type ({x.type()}) and bias type ({bias.type()}) should be the "
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
    input, weight, bias = autocast_args("convolution", input, weight, bias)
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
    _check_bias(input, weight, bias)
    out = _conv(input, weight, bias, stride=stride, padding=pairs, dilation=dilation,
                groups=groups)
    return out.squeeze(0) if unbatched else out


@export
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d cross-correlation of (N, C_in, L) or (C_in, L) `input` with (C_out, C_in / groups, k)
    `weight`, plus `bias` (C_out,) if given.

    `padding` is an int (zeros on both ends), 'valid' (none) or 'same' (output length L; only
    with stride 1; an odd total pads one more on the right). `groups` splits the channels into
    that many independent convolutions. Output length floor((L + 2 padding - dilation (k - 1) -
    1) / stride) + 1.
    """
    return _convnd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


@export
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d cross-correlation of (N, C_in, H, W) or (C_in, H, W) `input` with (C_out, C_in / groups,
    kH, kW) `weight`, plus `bias` (C_out,) if given.

    `stride`, `padding` and `dilation` are ints or pairs (height, width); `padding` may also be
    'valid' or 'same', as in `conv1d`.
    """
    return _convnd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


@export
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d cross-correlation of (N, C_in, D, H, W) or (C_in, D, H, W) `input` with (C_out,
    C_in / groups, kD, kH, kW) `weight`, plus `bias` (C_out,) if given.

    `stride`, `padding` and `dilation` are ints or triples; `padding` may also be 'valid' or
    'same', as in `conv1d`.
    """
    return _convnd(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def _conv_transposend(n, name, input, weight, bias, stride, padding, output_padding, groups,
                      dilation):
    """Transposed convolution: the input-gradient of a convolution whose output is `input`.
    weight is (C_in, C_out / groups, *kernel)."""
    input, weight, bias = autocast_args("convolution", input, weight, bias)
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
    """Transposed 1-d convolution (the gradient of `conv1d` with respect to its input) of
    (N, C_in, L) or (C_in, L) `input` with (C_in, C_out / groups, k) `weight`, plus `bias`
    (C_out,).

    Output length (L - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1;
    `output_padding` (smaller than stride or dilation) picks among the input lengths a strided
    convolution maps to L. `padding` must be an int or a tuple: 'same' and 'valid' are refused
    (with RuntimeError; torch raises TypeError).
    """
    return _conv_transposend(1, "conv_transpose1d", input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


@export
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 2-d convolution of (N, C_in, H, W) or (C_in, H, W) `input` with (C_in,
    C_out / groups, kH, kW) `weight`, plus `bias` (C_out,); arguments as in `conv_transpose1d`,
    each an int or a pair.
    """
    return _conv_transposend(2, "conv_transpose2d", input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


@export
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 3-d convolution of (N, C_in, D, H, W) or (C_in, D, H, W) `input` with (C_in,
    C_out / groups, kD, kH, kW) `weight`, plus `bias` (C_out,); arguments as in
    `conv_transpose1d`, each an int or a triple.
    """
    return _conv_transposend(3, "conv_transpose3d", input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


# ----------------------------------------------------------------------------------------------
# torch.convolution (the one entry point behind all of the above) and conv_tbc


@export
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """torch.convolution: conv{1,2,3}d or conv_transpose{1,2,3}d by the weight's rank, with
    every argument given."""
    n = weight.ndim - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"Expected 3D, 4D or 5D weight for convolution, but got weight of "
                           f"size {list(weight.shape)}")
    if transposed:
        return _conv_transposend(n, f"conv_transpose{n}d", input, weight, bias, stride,
                                 padding, output_padding, groups, dilation)
    return _convnd(n, f"conv{n}d", input, weight, bias, stride, padding, dilation, groups)


@export
def conv_tbc(input, weight, bias, pad=0):
    """A 1-d convolution in (time, batch, channel) layout: input (T, B, C_in), weight
    (k, C_in, C_out), bias (C_out,); the output is (T + 2 pad - k + 1, B, C_out)."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
# forward mode and vmap (see ops/_op.py). A convolution is linear in its input and its weight
# (plus the bias); its two adjoints are products too. Batching: with shared weights the batch
# folds into N (one convolution); per-sample weights (the per-sample weight gradient of
# vmap(grad(...)), or a vmap over models) become B groups of one grouped convolution -- the
# samples' channels side by side, (N, B * C, ...), and the weights stacked, (B * O, ...).


def _conv_jvp(x_t, w_t, bias_t, x, w, stride, padding, dilation, groups):
    attrs = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    total = _conv(x_t, w, None, **attrs) if x_t is not None else None
    if w_t is not None:
        part = _conv(x, w_t, None, **attrs)
        total = part if total is None else total + part
    if bias_t is not None:
        part = bias_t.reshape((-1,) + (1,) * (x.ndim - 2))
        total = part if total is None else total + part
    return total


def _side_by_side(t, size):
    """(B, N, C, *S) -> (N, B * C, *S): the samples' channels side by side."""
    n = t.shape[1]
    return t.movedim(0, 1).reshape((n, size * t.shape[2]) + tuple(t.shape[3:]))


def _apart(t, size):
    """(N, B * C, *S) -> (B, N, C, *S)."""
    n = t.shape[0]
    return t.reshape((n, size, t.shape[1] // size) + tuple(t.shape[2:])).movedim(1, 0)


def _stacked(w, size):
    """(B, O, ...) -> (B * O, ...)."""
    return w.reshape((size * w.shape[1],) + tuple(w.shape[2:]))


def _grouped(attrs, size):
    return dict(attrs, groups=attrs["groups"] * size)


def _conv_batch(op, values, batched, attrs):
    x, w, bias = values
    if not batched[1] and not batched[2]:
        return batch_rules.fold()(op, values, batched, attrs)
    size = batch_rules.size_of(values, batched)
    x = batch_rules.as_batched(x, batched[0], size)
    w = batch_rules.as_batched(w, batched[1], size)
    if bias is not None:
        bias = batch_rules.as_batched(bias, batched[2], size).reshape(-1)
    out = _conv(_side_by_side(x, size), _stacked(w, size), bias, **_grouped(attrs, size))
    return _apart(out, size)


def _conv_input_grad_batch(op, values, batched, attrs):
    dy, w = values
    if not batched[1]:
        return batch_rules.fold(shapes=("input_shape",))(op, values, batched, attrs)
    size = batch_rules.size_of(values, batched)
    dy = batch_rules.as_batched(dy, batched[0], size)
    n, c = attrs["input_shape"][:2]
    shape = (n, size * c) + tuple(attrs["input_shape"][2:])
    dx = _conv_input_grad(_side_by_side(dy, size), _stacked(w, size),
                          **dict(_grouped(attrs, size), input_shape=shape))
    return _apart(dx, size)


def _conv_weight_grad_batch(op, values, batched, attrs):
    """One weight gradient per sample: B groups, so no sum runs across the samples."""
    size = batch_rules.size_of(values, batched)
    x, dy = (_side_by_side(batch_rules.as_batched(v, b, size), size)
             for v, b in zip(values, batched))
    shape = (size * attrs["weight_shape"][0],) + tuple(attrs["weight_shape"][1:])
    dw = _conv_weight_grad(x, dy, **dict(_grouped(attrs, size), weight_shape=shape))
    return dw.reshape((size,) + tuple(attrs["weight_shape"]))


_conv.jvp(_conv_jvp).batch(_conv_batch)
_conv_input_grad.jvp(MULTILINEAR).batch(_conv_input_grad_batch)
_conv_weight_grad.jvp(MULTILINEAR).batch(_conv_weight_grad_batch)
