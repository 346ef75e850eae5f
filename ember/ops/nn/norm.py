"""Normalization: layer_norm, group_norm, batch_norm (and instance_norm built on it), rms_norm,
and local_response_norm (a composite, as in torch).

One idea serves the first four: standardize x over some axes,

    xhat = (x - mean) * rstd,     rstd = 1 / sqrt(var + eps)     (var biased, two passes)

then scale and shift per feature. Each is one op. The kernel does the whole forward on raw
arrays (float16/bfloat16 in float32). Backward recomputes mean and rstd from the saved input,
so the forward keeps nothing else alive and an in-place op on the output cannot invalidate the
backward. With gh = g * weight, the input gradient of a standardization is

    dx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat))     (means over the same axes)

and the affine gradients are dweight = sum(g * xhat) and dbias = sum(g) over the other axes.
The rule has two paths (as in activation.py): a fused `<name>_backward` op on raw arrays for
a plain backward, and the same formula in ember ops under create_graph=True, so that double
backward differentiates it again.

The kernels work on 2-D or 3-D views in which the statistics run along the last axis: layer
norm's (rows, normalized elements), group norm's (N * groups, elements of a group), batch
norm's (N, C, spatial) summed over N afterwards. The mean is NumPy's pairwise sum (accurate
for data far from zero; batch norm corrects a BLAS sum instead, see _centered_moments); the
other sums along that axis, of centered values and gradients,
are matrix-vector products and the sums of products stacked dot products: BLAS runs them
several times faster than NumPy's reduction loops. Per-channel
factors are folded into one scale and one shift where the formula allows, so that the
broadcast passes over the data are as few as possible.

batch_norm updates running_mean and running_var in place inside its kernel, as torch's native
kernel does, without bumping their versions (they are buffers, outside autograd); the running
variance uses the unbiased batch variance, var * n / (n - 1).

Read next: dropout.py.
"""
import math
import operator

import numpy as np  # np.errstate only: an empty normalized shape gives nan silently, as in torch

from ... import _dtype as dt
from ..._functorch import batch_rules
from ..._parallel import SPLIT_CHEAP_ELEMENTS, blocks, by_rows, parallel_map
from ..._tensor import Size
from ...autograd import grad_mode
from ...autograd.forward_ad import rules_must_differentiate
from .._op import export, op
from ..reduce import _sum_trailing
from ..shape import cat

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm",
           "local_response_norm"]

_HALF = (dt.float16, dt.bfloat16)


# ----------------------------------------------------------------------------------------------
# kernel helpers (raw arrays)


def _floating(name, xp, a):
    """`a` ready for a floating kernel: torch's error for other dtypes, half types widened to
    float32 (each kernel rounds its result back to a's dtype)."""
    d = dt.from_numpy_dtype(a.dtype)
    if not d.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{dt.scalar_name(d)}'")
    return a.astype(xp.float32) if a.dtype.itemsize == 2 else a


def _like(xp, t, x):
    """A parameter or gradient array in the dtype the kernel computes in (x's)."""
    return t if t is None or t.dtype == x.dtype else t.astype(x.dtype)


def _sums(xp, a):
    """Sums along the last axis (a matrix-vector product)."""
    return a @ xp.ones(a.shape[-1], a.dtype)


def _dots(xp, a, b):
    """sum(a * b) along the last axis, without the product array (stacked dot products)."""
    return xp.matmul(a[..., None, :], b[..., :, None])[..., 0, 0]


def _centered(xp, x, eps):
    """(x - mean, rstd) along the last axis of x: the centered values as a new array (the
    kernels turn it into the output in place), rstd with a trailing size-1 axis. The mean is
    NumPy's pairwise sum: for data far from zero, BLAS's float32 sum would err by more than
    float32's own resolution of the mean (the centered values' sums are small and safe)."""
    n = x.shape[-1]
    with np.errstate(all="ignore"):  # n = 0: nan, as torch gives
        centered = x - (x.sum(axis=-1) / n)[..., None]
        rstd = 1 / xp.sqrt(_dots(xp, centered, centered) / n + eps)
    return centered, rstd[..., None]


def _rows(x, ndim):
    """x as (rows, prod of the last ndim dims)."""
    split = x.ndim - ndim
    return x.reshape((math.prod(x.shape[:split]), math.prod(x.shape[split:])))


def _per_channel(ndim):
    """Shape that lines a (C,) vector up with dim 1 of an ndim-d input."""
    return (-1,) + (1,) * (ndim - 2)


def _last_axes(a, ndim):
    return tuple(range(a.ndim - ndim, a.ndim))


def _outputs(grads, needs):
    """The kernel's results for the inputs that want a gradient: a backward op returns only
    those (as a tuple), and the rule puts None in the other places."""
    return tuple(grad for grad, need in zip(grads, needs) if need)


def _spread(results, needs):
    it = iter(results if isinstance(results, tuple) else (results,))
    return tuple(next(it) if need else None for need in needs)


# ----------------------------------------------------------------------------------------------
# rule helpers (ember ops, differentiable again: the create_graph path)


def _standardized(x, axes, eps):
    """(xhat, rstd) over `axes` as ember tensors (size-1 dims kept)."""
    centered = x - x.mean(axes, keepdim=True)
    rstd = ((centered * centered).mean(axes, keepdim=True) + eps).rsqrt()
    return centered * rstd, rstd


def _input_grad(gh, xhat, rstd, axes):
    """dx of a standardization over `axes`, given gh = the gradient with respect to xhat."""
    return rstd * (gh - gh.mean(axes, keepdim=True) - xhat * (gh * xhat).mean(axes, keepdim=True))


# ----------------------------------------------------------------------------------------------
# layer_norm: standardize the last len(normalized_shape) dims


@op("none", name="layer_norm", node_name="NativeLayerNormBackward0")
def _layer_norm(xp, a, weight, bias, *, ndim, eps):
    """(x - mean) * rstd * weight + bias, written into one new array in place (in row blocks
    on the thread pool when large; see _parallel.by_rows for why not row_split)."""
    x = _rows(_floating("LayerNormKernelImpl", xp, a), ndim)
    out = xp.empty(x.shape, x.dtype)
    w = None if weight is None else weight.reshape(-1)
    b = None if bias is None else bias.reshape(-1)
    by_rows(_layer_norm_into, xp, (out,), x, w, b, split=ndim < a.ndim, eps=eps)
    return out.reshape(a.shape).astype(a.dtype, copy=False)


def _layer_norm_into(xp, outs, x, w, b, *, eps):
    (y,) = outs
    rstd = _centered_into(xp, x, eps, y)
    y *= rstd
    if w is not None:
        y *= w
    if b is not None:
        y += b


def _centered_into(xp, x, eps, out):
    """_centered, the centered values written into `out`; returns rstd. Short rows (layer
    norm's features) are summed by BLAS where `reduce` would sum them so (`_sum_trailing`):
    NumPy's reduction restarts for every short row ((2048, 256) float32: 0.12 -> 0.03 ms)."""
    n = x.shape[-1]
    with np.errstate(all="ignore"):  # n = 0: nan, as torch gives
        total = _sum_trailing(xp, x, (x.ndim - 1,))
        if total is None:
            total = x.sum(axis=-1)
        xp.subtract(x, total.reshape(x.shape[:-1] + (1,)) / n, out=out)
        return (1 / xp.sqrt(_dots(xp, out, out) / n + eps))[..., None]


@_layer_norm.grad
def _layer_norm(g, a, weight, ndim, eps, needs_input_grad):
    needs = needs_input_grad
    if not rules_must_differentiate():
        return _spread(_layer_norm_backward(g, a, weight, ndim=ndim, eps=eps, needs=needs),
                       needs)
    axes = _last_axes(a, ndim)
    xhat, rstd = _standardized(a, axes, eps)
    grad_a = grad_w = grad_b = None
    if needs[0]:
        grad_a = _input_grad(g if weight is None else g * weight, xhat, rstd, axes)
    if needs[1]:
        grad_w = g * xhat  # the engine sums over the leading (batch) dims
    if needs[2]:
        grad_b = g
    return grad_a, grad_w, grad_b


@op("none", name="layer_norm_backward")
def _layer_norm_backward(xp, g, a, weight, *, ndim, eps, needs):
    """(dx, dweight, dbias), those that `needs`; see the module docstring for the formula.
    Large inputs run in row blocks on the thread pool, each block adding up its own share of
    dweight and dbias. The engine casts each gradient to its parameter's dtype."""
    x = _rows(_floating("LayerNormBackwardKernelImpl", xp, a), ndim)
    g = _rows(_like(xp, g, x), ndim)
    w = None if weight is None else _like(xp, weight, x).reshape(-1)
    grad_a = xp.empty(x.shape, dtype=x.dtype) if needs[0] else None

    def block(part):
        return _layer_norm_backward_rows(xp, g[part], x[part], w, eps, needs,
                                         None if grad_a is None else grad_a[part])
    shares = parallel_map(block, blocks(x.shape[0], x))
    features = a.shape[a.ndim - ndim:]
    grad_w = sum(share[0] for share in shares).reshape(features) if needs[1] else None
    grad_b = sum(share[1] for share in shares).reshape(features) if needs[2] else None
    if grad_a is not None:
        grad_a = grad_a.reshape(a.shape).astype(a.dtype, copy=False)
    return _outputs((grad_a, grad_w, grad_b), needs)


def _layer_norm_backward_rows(xp, g, x, w, eps, needs, out):
    """A block of rows: dx written into `out` (when wanted), and this block's sums for
    (dweight, dbias). xhat is built in `out` itself and turned into dx in place, so that a
    block allocates at most g * weight."""
    xhat = xp.empty(x.shape, x.dtype) if out is None else out
    rstd = _centered_into(xp, x, eps, xhat)
    xhat *= rstd
    n = xhat.shape[1]
    grad_w = xp.einsum("rn,rn->n", g, xhat) if needs[1] else None
    grad_b = xp.ones(g.shape[0], g.dtype) @ g if needs[2] else None
    if out is not None:
        gh = g * w if w is not None else g
        xhat *= (_dots(xp, gh, xhat) / -n)[:, None]
        out += gh                 # gh - xhat * mean(gh xhat)
        out -= (_sums(xp, gh) / n)[:, None]
        out *= rstd
    return grad_w, grad_b


# ----------------------------------------------------------------------------------------------
# group_norm: (N, C, *) viewed as (N, G, C/G * prod(*)), standardized along the last axis


def _groups_view(shape, groups):
    n, c = shape[:2]
    return (n, groups, c // groups * math.prod(shape[2:]))


def _channels_view(shape):
    """(N, C, prod(*)): each (sample, channel) row lies inside one group's row."""
    return (shape[0], shape[1], math.prod(shape[2:]))


def _per_channel_of_group(stat, channels):
    """A (N, G) statistic repeated for each channel of its group: (N, C)."""
    n, groups = stat.shape
    return stat.repeat(channels // groups, axis=1)


@op("none", name="group_norm", node_name="NativeGroupNormBackward0")
def _group_norm(xp, a, weight, bias, *, groups, eps):
    """y = (x - mean) * (rstd * weight) + bias, the per-(sample, channel) scale folded first."""
    x = _floating("GroupNormKernelImpl", xp, a)
    y, rstd = _centered(xp, x.reshape(_groups_view(a.shape, groups)), eps)
    n, c, _ = shape = _channels_view(a.shape)
    y = y.reshape(shape)
    scale = _per_channel_of_group(rstd[..., 0], c)
    if weight is not None:
        scale *= _like(xp, weight, x)
    y *= scale[..., None]
    if bias is not None:
        y += bias.reshape(-1, 1)
    return y.reshape(a.shape).astype(a.dtype, copy=False)


@_group_norm.grad
def _group_norm(g, a, weight, groups, eps, needs_input_grad):
    needs = needs_input_grad
    if not rules_must_differentiate():
        return _spread(_group_norm_backward(g, a, weight, groups=groups, eps=eps, needs=needs),
                       needs)
    grouped = _groups_view(a.shape, groups)
    xhat, rstd = _standardized(a.reshape(grouped), (2,), eps)
    grad_a = grad_w = grad_b = None
    if needs[0]:
        gh = g if weight is None else g * weight.reshape(_per_channel(a.ndim))
        grad_a = _input_grad(gh.reshape(grouped), xhat, rstd, (2,)).reshape(a.shape)
    others = (0,) + tuple(range(2, a.ndim))
    if needs[1]:
        grad_w = (g * xhat.reshape(a.shape)).sum(others)
    if needs[2]:
        grad_b = g.sum(others)
    return grad_a, grad_w, grad_b


@op("none", name="group_norm_backward")
def _group_norm_backward(xp, g, a, weight, *, groups, eps, needs):
    """The standardization's dx with gh = g * w[c] never formed: per (sample, channel) row,
    s1 = sum(g) and s2 = sum(g * (x - mean)) give the group means of gh and gh * xhat (weighted
    by w[c]) and the affine gradients, and dx = g * A + (x - mean) * B + D with A, B, D per row."""
    x = _floating("GroupNormBackwardKernelImpl", xp, a)
    n, c, length = shape = _channels_view(a.shape)
    centered, rstd = _centered(xp, x.reshape(_groups_view(a.shape, groups)), eps)
    centered = centered.reshape(shape)
    g = _like(xp, g, x).reshape(shape)
    rstd = rstd[..., 0]                                    # (N, G)
    s1, s2 = _sums(xp, g), _dots(xp, g, centered)          # (N, C)
    grad_a = grad_w = grad_b = None
    if needs[1]:
        grad_w = (s2 * _per_channel_of_group(rstd, c)).sum(0)
    if needs[2]:
        grad_b = s1.sum(0)
    if needs[0]:
        w = xp.ones(c, x.dtype) if weight is None else _like(xp, weight, x)
        count = c // groups * length
        mean_gh = (s1 * w).reshape(n, groups, -1).sum(2) / count            # (N, G)
        mean_ghx = (s2 * w).reshape(n, groups, -1).sum(2) * rstd / count    # of gh * xhat
        # dx = rstd w g - rstd mean_gh - (x - mean) rstd^2 mean_ghx, coefficients per row
        row_rstd, coefficient, shift = (_per_channel_of_group(stat, c)[..., None] for stat in
                                        (rstd, -mean_ghx * rstd * rstd, mean_gh * rstd))
        centered *= coefficient
        grad_a = g * (w[:, None] * row_rstd)
        grad_a += centered
        grad_a -= shift
        grad_a = grad_a.reshape(a.shape).astype(a.dtype, copy=False)
    return _outputs((grad_a, grad_w, grad_b), needs)


# ----------------------------------------------------------------------------------------------
# batch_norm: per channel (dim 1), over the batch and spatial dims


def _update_running(running_mean, running_var, mean, var, n, momentum):
    """running = (1 - momentum) * running + momentum * batch statistic, in place."""
    if running_mean is not None:
        running_mean *= 1 - momentum
        running_mean += momentum * mean
    if running_var is not None:
        running_var *= 1 - momentum
        running_var += (momentum * n / (n - 1)) * var


# Layout: x viewed as (N, C, P). Per-channel sums are matrix-vector products (x @ ones(P),
# then a sum over N). A per-channel factor is applied to the (N, C*P) view as a vector that
# repeats each channel's value P times: one long inner loop per image rather than one per
# (image, channel) row of P values -- 16 in a ResNet's last stage -- which measured 2-4x
# faster than broadcasting a (C, 1) column. Channels are independent, so a large input runs
# in channel blocks on the thread pool.


def _channel_sums(x3, ones):
    """Sums of (N, C, P) over N and P: (C,)."""
    return (x3 @ ones).sum(0)


def _centered_moments(xp, x3, out):
    """Writes x - s into `out` (N, C*P) and returns (mean, var, d) per channel of x viewed
    as (N, C, P): s is a first estimate of the mean (float32 BLAS sums), d = mean(x - s) its
    error, so the mean is s + d and var = mean((x - s)^2) - d^2 -- the corrected two-pass
    algorithm: the second pass sums small centered values, so data far from zero keeps its
    digits."""
    n, _, positions = x3.shape
    count = n * positions
    ones = xp.ones(positions, x3.dtype)
    with np.errstate(all="ignore"):  # no values (an empty batch): nan, as torch gives
        shift = _channel_sums(x3, ones) / count
        xp.subtract(x3.reshape(n, -1), xp.repeat(shift, positions), out=out)
        centered = out.reshape(x3.shape)
        d = _channel_sums(centered, ones) / count
        var = _channel_sums(centered * centered, ones) / count
        var -= d * d
        xp.maximum(var, 0, out=var)
    return shift + d, var, d


def _batch_norm_train(xp, x3, weight, bias, eps):
    """(y as (N, C*P), mean, biased var) of a training-mode batch norm."""
    n, channels, positions = x3.shape
    y = xp.empty((n, channels * positions), x3.dtype)
    mean, var = xp.empty(channels, x3.dtype), xp.empty(channels, x3.dtype)

    def block(part):
        out = y.reshape(x3.shape)[:, part].reshape(n, -1)
        mean[part], var[part], d = _centered_moments(xp, x3[:, part], out)
        scale = 1 / xp.sqrt(var[part] + eps)
        if weight is not None:
            scale *= weight[part]
        shift = -d * scale                          # y = (x - s - d) * scale + bias
        if bias is not None:
            shift += bias[part]
        out *= xp.repeat(scale, positions)
        out += xp.repeat(shift, positions)
    parallel_map(block, blocks(x3.shape[1], x3))
    return y, mean, var


def _eval_factors(xp, weight, bias, running_mean, running_var, eps, dtype):
    """Eval-mode batch_norm is y = x * scale + shift per channel: scale = w / sqrt(var + eps),
    shift = b - mean * scale (torch folds them alike)."""
    scale = 1 / xp.sqrt(running_var.astype(dtype) + eps)
    if weight is not None:
        scale *= weight
    shift = -running_mean.astype(dtype) * scale
    if bias is not None:
        shift += bias
    return scale, shift


@op("none", name="batch_norm", node_name="NativeBatchNormBackward0",
    grad_inputs=("a", "weight", "bias"))
def _batch_norm(xp, a, weight, bias, running_mean, running_var, *, training, momentum, eps):
    x = _floating("batch_norm", xp, a)
    x3 = x.reshape(_channels_view(a.shape))
    weight, bias = _like(xp, weight, x), _like(xp, bias, x)
    if training:
        y, mean, var = _batch_norm_train(xp, x3, weight, bias, eps)
        _update_running(running_mean, running_var, mean, var, x3.shape[0] * x3.shape[2],
                        momentum)
    else:
        scale, shift = _eval_factors(xp, weight, bias, running_mean, running_var, eps, x.dtype)
        positions = x3.shape[2]
        x2 = x3.reshape(x3.shape[0], -1)
        y = by_rows(_scale_shift_into, xp, (xp.empty(x2.shape, x2.dtype),), x2,
                    xp.repeat(scale, positions), xp.repeat(shift, positions),
                    split=x2.size >= SPLIT_CHEAP_ELEMENTS)[0]
    return y.reshape(a.shape).astype(a.dtype, copy=False)


def _scale_shift_into(xp, outs, x2, scale, shift):
    """Eval-mode batch norm of the (N, C*P) view, y = x * scale + shift with each channel's
    factors repeated P times, written into outs[0]. Two cheap passes: the caller splits them
    into row blocks from SPLIT_CHEAP_ELEMENTS (2 threads, ResNet's eval shapes, ms serial ->
    split: (32, 64, 32, 32) 0.84 -> 0.56, (32, 128, 16, 16) 0.31 -> 0.23; but (32, 512, 4, 4)
    0.15 -> 0.21, the hand-over dominating)."""
    (y,) = outs
    xp.multiply(x2, scale, out=y)
    y += shift


@_batch_norm.grad
def _batch_norm(g, a, weight, running_mean, running_var, training, eps, needs_input_grad):
    needs = needs_input_grad[:3]
    if not rules_must_differentiate():
        return _spread(_batch_norm_backward(g, a, weight, running_mean, running_var,
                                            training=training, eps=eps, needs=needs),
                       needs) + (None, None)
    axes = (0,) + tuple(range(2, a.ndim))
    channel = _per_channel(a.ndim)
    if training:
        xhat, rstd = _standardized(a, axes, eps)
    else:  # the statistics are constants
        rstd = (running_var + eps).rsqrt().reshape(channel)
        xhat = (a - running_mean.reshape(channel)) * rstd
    grad_a = grad_w = grad_b = None
    if needs[0]:
        gh = g if weight is None else g * weight.reshape(channel)
        grad_a = _input_grad(gh, xhat, rstd, axes) if training else gh * rstd
    if needs[1]:
        grad_w = (g * xhat).sum(axes)
    if needs[2]:
        grad_b = g.sum(axes)
    return grad_a, grad_w, grad_b, None, None


@op("none", name="batch_norm_backward")
def _batch_norm_backward(xp, g, a, weight, running_mean, running_var, *, training, eps,
                         needs):
    """Per channel, with s1 = sum(g) and s2 = sum(g * (x - mean)): dbias = s1,
    dweight = s2 * rstd and, in training, dx = w rstd (g - s1 / M - (x - mean) rstd^2 s2 / M)
    (M values per channel); in eval the statistics are constants and dx = g * w * rstd."""
    x = _floating("batch_norm_backward", xp, a)
    x3 = x.reshape(_channels_view(a.shape))
    n, channels, positions = x3.shape
    g = _like(xp, g, x).reshape(n, -1)
    weight = _like(xp, weight, x)
    grad_a = xp.empty_like(g) if needs[0] else None
    grad_w, grad_b = xp.empty(channels, x.dtype), xp.empty(channels, x.dtype)

    def block(part):
        g_part = g.reshape(x3.shape)[:, part]
        centered = xp.empty((n, g_part.shape[1] * positions), x.dtype)
        if training:
            _, var, d = _centered_moments(xp, x3[:, part], centered)
        else:
            xp.subtract(x3[:, part].reshape(n, -1),
                        xp.repeat(running_mean[part].astype(x.dtype), positions), out=centered)
            var, d = running_var[part].astype(x.dtype), 0
        ones = xp.ones(positions, x.dtype)
        rstd = 1 / xp.sqrt(var + eps)
        s1 = _channel_sums(g_part, ones)                          # sum(g)
        s2 = _channel_sums((g_part.reshape(n, -1) * centered).reshape(g_part.shape), ones)
        s2 -= d * s1                                              # sum(g * (x - mean))
        grad_w[part], grad_b[part] = s2 * rstd, s1
        if grad_a is not None:
            _batch_norm_input_grad(xp, grad_a.reshape(x3.shape)[:, part].reshape(n, -1),
                                   g_part.reshape(n, -1), centered, d, rstd, s1, s2,
                                   1 if weight is None else weight[part], training, x3.shape)
    parallel_map(block, blocks(x3.shape[1], x3))
    if grad_a is not None:
        grad_a = grad_a.reshape(a.shape).astype(a.dtype, copy=False)
    return _outputs((grad_a, grad_w, grad_b), needs)


def _batch_norm_input_grad(xp, out, g, centered, d, rstd, s1, s2, weight, training, shape):
    """dx into `out` (N, C*P) for a block of channels: g A + (x - s) B + D per channel (x - s
    are the centered values), from dx = w rstd (g - s1 / M - (x - mean) rstd^2 s2 / M) in
    training, dx = w rstd g in eval."""
    n, _, positions = shape
    scale = rstd * weight
    xp.multiply(g, xp.repeat(scale, positions), out=out)
    if training:
        count = n * positions
        b = -scale * rstd * rstd * s2 / count
        centered *= xp.repeat(b, positions)
        out += centered
        out += xp.repeat(-b * d - scale * s1 / count, positions)


# ----------------------------------------------------------------------------------------------
# rms_norm: x / sqrt(mean(x^2) + eps) over the last dims, times weight


@op("none", name="rms_norm", node_name="RmsNormBackward0")
def _rms_norm(xp, a, weight, *, ndim, eps):
    x = _floating("rms_norm", xp, a)
    rows = _rows(x, ndim)
    y = rows * (1 / xp.sqrt(_dots(xp, rows, rows) / rows.shape[1] + eps))[:, None]
    if weight is not None:
        y *= weight.reshape(-1)
    return y.reshape(a.shape).astype(a.dtype, copy=False)


@_rms_norm.grad
def _rms_norm(g, a, weight, ndim, eps, needs_input_grad):
    needs = needs_input_grad
    if not rules_must_differentiate():
        return _spread(_rms_norm_backward(g, a, weight, ndim=ndim, eps=eps, needs=needs), needs)
    axes = _last_axes(a, ndim)
    rstd = ((a * a).mean(axes, keepdim=True) + eps).rsqrt()
    xhat = a * rstd
    grad_a = grad_w = None
    if needs[0]:
        gh = g if weight is None else g * weight
        grad_a = rstd * (gh - xhat * (gh * xhat).mean(axes, keepdim=True))
    if needs[1]:
        grad_w = g * xhat
    return grad_a, grad_w


@op("none", name="rms_norm_backward")
def _rms_norm_backward(xp, g, a, weight, *, ndim, eps, needs):
    """dx = rstd (gh - xhat mean(gh xhat)), gh = g * weight; dweight = sum(g * xhat)."""
    x = _floating("rms_norm_backward", xp, a)
    rows, g = _rows(x, ndim), _rows(_like(xp, g, x), ndim)
    n = rows.shape[1]
    rstd = (1 / xp.sqrt(_dots(xp, rows, rows) / n + eps))[:, None]
    xhat = rows * rstd
    grad_a = grad_w = None
    if needs[1]:
        grad_w = xp.einsum("rn,rn->n", g, xhat).reshape(weight.shape)
    if needs[0]:
        gh = g * _like(xp, weight, x).reshape(-1) if weight is not None else g
        xhat *= (_dots(xp, gh, xhat) / n)[:, None]
        grad_a = xp.subtract(gh, xhat, out=xhat)
        grad_a *= rstd
        grad_a = grad_a.reshape(a.shape).astype(a.dtype, copy=False)
    return _outputs((grad_a, grad_w), needs)


# ----------------------------------------------------------------------------------------------
# argument checks


def _check_params(input, *params):
    """torch's CPU kernels take parameters of the input's dtype (float32 ones also serve
    float16/bfloat16 inputs)."""
    for p in params:
        if p is not None and p.dtype is not input.dtype and not (
                input.dtype in _HALF and p.dtype is dt.float32):
            raise RuntimeError(f"mixed dtype (CPU): expect parameter to have scalar type of "
                               f"{dt.scalar_name(input.dtype)}")


def _as_shape(normalized_shape):
    if isinstance(normalized_shape, (tuple, list)) or hasattr(normalized_shape, "tolist"):
        return tuple(operator.index(n) for n in normalized_shape)
    return (operator.index(normalized_shape),)


def _check_normalized(input, shape, fmt):
    k = len(shape)
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"{fmt(shape)}, but got input of size{list(input.shape)}")


def _check_vector_shape(t, name, expected, described):
    if t is not None and tuple(t.shape) != expected:
        raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                           f"{name} of shape {list(t.shape)} and normalized_shape = {described}")


def _verify_batch_size(shape):
    if math.prod(shape[:1] + shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {shape}")


# ----------------------------------------------------------------------------------------------
# public functions


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Standardize over the last dims (of shape `normalized_shape`), then weight and bias
    (each of that shape, elementwise)."""
    shape = _as_shape(normalized_shape)
    _check_normalized(input, shape, lambda s: "[*, " + ", ".join(map(str, s)) + "]")
    _check_vector_shape(weight, "weight", shape, list(shape))
    _check_vector_shape(bias, "bias", shape, list(shape))
    _check_params(input, weight, bias)
    return _layer_norm(input, weight, bias, ndim=len(shape), eps=eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Split the channels (dim 1) into `num_groups` groups and standardize each group of each
    sample; weight and bias are per channel."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    channels = input.shape[1]
    if num_groups <= 0 or channels % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != channels):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(t.shape)} "
                               f"and input of shape {list(input.shape)}")
    _verify_batch_size(Size([input.shape[0] * channels // num_groups, num_groups]
                            + list(input.shape[2:])))
    _check_params(input, weight, bias)
    return _group_norm(input, weight, bias, groups=num_groups, eps=eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Standardize each channel (dim 1) over the batch and spatial dims. In training the batch
    statistics are used and running_mean/running_var (when given) move towards them by
    `momentum`; in eval the running statistics are used."""
    if momentum is None:
        raise TypeError("batch_norm(): argument 'momentum' (position 7) must be float, not "
                        "NoneType")
    channels = input.shape[1] if input.ndim > 1 else 0
    if training:
        _verify_batch_size(input.shape)
    elif running_mean is None or running_var is None:
        name = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(f"{name} must be defined in evaluation mode")
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm: expected an input of at least 2 dims (N, C, ...), got "
                           f"{input.ndim}")
    _check_params(input, weight, bias, running_mean, running_var)
    return _batch_norm(input, weight, bias, running_mean, running_var, training=bool(training),
                       momentum=float(momentum), eps=eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Standardize each channel of each sample over its spatial dims. Computed as torch does:
    batch_norm on the input viewed as one sample with N*C channels; the running statistics
    (when given) move towards the batch average of the per-sample statistics."""
    if input.ndim < 2:
        raise RuntimeError(f"instance_norm: expected an input of at least 2 dims (N, C, ...), "
                           f"got {input.ndim}")
    if use_input_stats:
        if math.prod(input.shape[2:]) == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {input.shape}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    n, c = input.shape[:2]
    folded = input.reshape((1, n * c) + tuple(input.shape[2:]))
    stats = [None if t is None else t.repeat(n) for t in (running_mean, running_var)]
    out = batch_norm(folded, stats[0], stats[1], None if weight is None else weight.repeat(n),
                     None if bias is None else bias.repeat(n), use_input_stats, momentum, eps)
    if use_input_stats:
        with grad_mode.no_grad():
            for running, folded_stat in zip((running_mean, running_var), stats):
                if running is not None:
                    running.copy_(folded_stat.view(n, c).mean(0))
    return out.view(input.shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) over the last dims, times weight; eps=None means the machine
    epsilon of the input's dtype."""
    shape = _as_shape(normalized_shape)
    _check_normalized(input, shape, lambda s: "[*" + ", ".join(map(str, s)) + "]")
    _check_vector_shape(weight, "weight", shape, list(shape))
    _check_params(input, weight)
    if eps is None:
        eps = dt.finfo(input.dtype).eps if input.is_floating_point() else 0.0
    return _rms_norm(input, weight, ndim=len(shape), eps=eps)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over a window of `size` neighbouring channels) ^ beta.
    The window around channel c spans [c - size//2, c + (size-1)//2], zero-padded."""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    squares = input * input
    channels = input.shape[1]
    before, after = size // 2, (size - 1) // 2

    def zeros(count):
        return squares.new_zeros((squares.shape[0], count) + tuple(squares.shape[2:]))

    padded = cat([zeros(before), squares, zeros(after)], 1)
    total = padded.narrow(1, 0, channels)
    for offset in range(1, size):  # one add per window tap, not per element
        total = total + padded.narrow(1, offset, channels)
    return input / ((total / size) * alpha + k) ** beta


# ----------------------------------------------------------------------------------------------
# cross-map LRN (nn.CrossMapLRN2d, from Lua torch): like local_response_norm, but with that
# implementation's windows, which torch keeps. With p = (size - 1) // 2 + 1, channel c sums the
# squares of channels up to min(c + p - 1, C - 1), starting at 0 -- and, once c > p, leaving out
# channels 1 .. c - p (channel 0 is never dropped). Its backward, also kept, uses the window
# [c - q, c + size - 1 - q], q = size - (size - 1) / 2 truncated: not the forward's derivative,
# but torch's gradient, which this reproduces.


def _cross_map_lrn2d_kernel(xp, a, *, size, alpha, beta, k):
    channels = a.shape[1]
    pre = int((size - 1) / 2 + 1)
    running = xp.cumsum(a * a, axis=1)
    c = np.arange(channels)
    total = running[:, np.minimum(c + pre - 1, channels - 1)]
    later = c > pre
    total[:, later] -= running[:, c[later] - pre] - running[:, :1]
    scale = total * (alpha / size) + k
    return a * scale ** -beta, scale


def _cross_map_lrn2d_rule(g, a, out, workspace, size, alpha, beta, k):
    (scale,) = workspace
    g = g[0]
    channels = a.shape[1]
    lead = int(size - (size - 1) / 2)
    if size - 1 - lead < 0:  # size 1: torch's backward cannot place its window either
        raise RuntimeError(f"start ({lead}) + length ({channels}) exceeds dimension size "
                           f"({channels}).")
    ratio = g * out[0] / scale
    zeros = ratio.new_zeros((ratio.shape[0], 1) + tuple(ratio.shape[2:]))
    padded = cat([zeros.expand(-1, lead, -1, -1), ratio,
                  zeros.expand(-1, size - 1 - lead, -1, -1), zeros], 1)
    running = cat([zeros, padded.cumsum(1)], 1)
    window = running.narrow(1, size, channels) - running.narrow(1, 0, channels)
    return (scale ** -beta * g - (2 * alpha * beta / size) * a * window,)


_cross_map_lrn2d = op("none", "cross_map_lrn2d", node_name="CrossMapLRN2dBackward")(
    _cross_map_lrn2d_kernel).grad(_cross_map_lrn2d_rule)


def cross_map_lrn2d(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """nn.CrossMapLRN2d's computation on a 4-d input (see above)."""
    if input.ndim != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
    return _cross_map_lrn2d(input, size=size, alpha=alpha, beta=beta, k=k)[0]


# ----------------------------------------------------------------------------------------------
# torch-level functions (their native argument orders)


@export(name="layer_norm")
def _torch_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5,
                      cudnn_enable=True):
    """torch.layer_norm: `F.layer_norm` (standardize over the last dims of shape
    `normalized_shape`, then weight and bias). `cudnn_enable` is accepted and has no effect.
    """
    return layer_norm(input, normalized_shape, weight, bias, eps)


@export(name="group_norm")
def _torch_group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """torch.group_norm: `F.group_norm` (standardize each of `num_groups` channel groups of each
    sample). `cudnn_enabled` is accepted and has no effect.
    """
    return group_norm(input, num_groups, weight, bias, eps)


@export(name="batch_norm")
def _torch_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                      cudnn_enabled):
    """torch.batch_norm: `F.batch_norm` with torch's native argument order (weight and bias before
    the running statistics) and every argument required; `cudnn_enabled` has no effect.
    """
    return batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


@export(name="instance_norm")
def _torch_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                         momentum, eps, cudnn_enabled):
    """torch.instance_norm: `F.instance_norm` with torch's native argument order (weight and bias
    before the running statistics) and every argument required; `cudnn_enabled` has no effect.
    """
    return instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                         momentum, eps)


@export(name="rms_norm")
def _torch_rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch.rms_norm: x / sqrt(mean(x^2) + eps) over the last dims (of shape `normalized_shape`),
    times `weight`; eps=None means the machine epsilon of the input's dtype.
    """
    return rms_norm(input, normalized_shape, weight, eps)


# the native forms, which also return the statistics their backward uses


def _mean_rstd(input, dims, eps):
    """(mean, 1 / sqrt(biased variance + eps)) over `dims`, kept as size-1 dims."""
    x = input.float() if input.dtype in (dt.float16, dt.bfloat16) else input
    mean = x.mean(dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dims, keepdim=True)
    return mean, (var + eps).rsqrt()


@export
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(layer_norm(input), mean, rstd): the statistics over the normalized dims, shaped
    input.shape[:-len(normalized_shape)] + (1,) * len(normalized_shape)."""
    shape = _as_shape(normalized_shape)
    out = layer_norm(input, shape, weight, bias, eps)
    mean, rstd = _mean_rstd(input, tuple(range(input.ndim - len(shape), input.ndim)), eps)
    return out, mean, rstd


@export
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(group_norm(input, group), mean, rstd): the statistics per (sample, group), (N, group)."""
    out = group_norm(input, group, weight, bias, eps)
    grouped = input.reshape(N, group, -1)
    mean, rstd = _mean_rstd(grouped, (2,), eps)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


@export
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(batch_norm(input), save_mean, save_invstd): in training the batch's per-channel mean
    and 1 / sqrt(biased variance + eps); in eval both are empty."""
    out = batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = input.new_empty((0,))
        return out, empty, empty
    dims = (0,) + tuple(range(2, input.ndim))
    mean, rstd = _mean_rstd(input, dims, eps)
    return out, mean.reshape(-1), rstd.reshape(-1)


@export
def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm of v over every dim but `dim`, kept as size-1 dims (weight_norm's g);
    dim=-1 means the norm of the whole tensor, a 0-d result."""
    if dim == -1:
        return v.norm(pow)
    others = tuple(d for d in range(v.ndim) if d != dim)
    return v.norm(pow, others, keepdim=True)

# ----------------------------------------------------------------------------------------------
# vmap (see ops/_op.py); the tangents come from the backward rules. Layer and RMS norm treat
# leading dims as independent: the batch is one more (per-sample affine parameters are applied
# after); group norm folds the batch into N. Batch norm standardizes each channel over N and
# the spatial dims of one sample: the samples' channels go side by side, (N, B * C, ...), and
# the per-channel parameters and statistics are repeated (or stacked, when batched). Their
# backward ops give per-sample weight and bias gradients (the batch is not summed over).


def _per_sample(op, values, batched, attrs):
    from ..._functorch.vmap import per_sample

    return per_sample(op, values, batched, attrs)


def _last_norm_batch(op, values, batched, attrs):
    """layer_norm / rms_norm: the batch is a leading dim; batched parameters apply after."""
    a, params = values[0], values[1:]
    if not any(batched[1:]):
        return op(*values, **attrs)
    out = op(a, *(None for _ in params), **attrs)
    weight = params[0]
    if weight is not None:
        out = out * (batch_rules.pad(weight, out.ndim - 1) if batched[1] else weight)
    if len(params) > 1 and params[1] is not None:
        out = out + (batch_rules.pad(params[1], out.ndim - 1) if batched[2] else params[1])
    return out


def _last_norm_backward_batch(op, values, batched, attrs):
    """dx from the op on the whole batch; dweight and dbias summed within each sample."""
    g, a, weight = values
    if batched[2]:
        return _per_sample(op, values, batched, attrs)
    size = batch_rules.size_of(values, batched)
    g, a = (batch_rules.as_batched(v, b, size) for v, b in zip((g, a), batched))
    needs, ndim = attrs["needs"], attrs["ndim"]
    found = []
    if needs[0]:
        only_x = tuple(k == 0 for k in range(len(needs)))
        found.append(op(g, a, weight, **dict(attrs, needs=only_x))[0])
    axes = _last_axes(a, ndim)
    within = tuple(range(1, a.ndim - ndim))  # a sample's own leading dims
    if needs[1]:
        if op is _rms_norm_backward:
            xhat = a * ((a * a).mean(axes, keepdim=True) + attrs["eps"]).rsqrt()
        else:
            xhat = _standardized(a, axes, attrs["eps"])[0]
        found.append(_sum_within(g * xhat, within))
    if len(needs) > 2 and needs[2]:
        found.append(_sum_within(g, within))
    return tuple(found)


def _sum_within(t, dims):
    return t.sum(dims) if dims else t


def _side_by_side(t, size):
    """(B, N, C, ...) -> (N, B * C, ...)."""
    return t.movedim(0, 1).reshape((t.shape[1], size * t.shape[2]) + tuple(t.shape[3:]))


def _apart(t, size):
    """(N, B * C, ...) -> (B, N, C, ...)."""
    return t.reshape((t.shape[0], size, t.shape[1] // size) + tuple(t.shape[2:])).movedim(1, 0)


def _per_channel_of_samples(t, is_batched, size):
    """A per-channel tensor for (N, B * C, ...): stacked when batched, else repeated."""
    if t is None:
        return None
    return t.reshape(-1) if is_batched else t.repeat(size)


def _batch_norm_batch(op, values, batched, attrs):
    a, weight, bias, running_mean, running_var = values
    if attrs["training"] and running_mean is not None:
        raise RuntimeError("vmap: batch_norm in training mode would update running_mean and "
                           "running_var, which are shared by the samples, in place. Use "
                           "torch.func.replace_all_batch_norm_modules_ (or modules without "
                           "track_running_stats), or call batch_norm outside vmap.")
    size = batch_rules.size_of(values, batched)
    params = [_per_channel_of_samples(t, b, size)
              for t, b in zip(values[1:], batched[1:])]
    out = op(_side_by_side(batch_rules.as_batched(a, batched[0], size), size), *params,
             **attrs)
    return _apart(out, size)


def _batch_norm_backward_batch(op, values, batched, attrs):
    g, a = (batch_rules.as_batched(v, b, batch_rules.size_of(values, batched))
            for v, b in zip(values[:2], batched[:2]))
    size = g.shape[0]
    params = [_per_channel_of_samples(t, b, size) for t, b in zip(values[2:], batched[2:])]
    found = op(_side_by_side(g, size), _side_by_side(a, size), *params, **attrs)
    found = found if type(found) is tuple else (found,)
    kinds = [k for k, need in enumerate(attrs["needs"]) if need]
    return tuple(_apart(r, size) if k == 0 else r.reshape(size, -1)
                 for k, r in zip(kinds, found))


def _group_norm_batch(op, values, batched, attrs):
    if any(batched[1:]):
        return _per_sample(op, values, batched, attrs)
    return batch_rules.fold()(op, values, batched, attrs)


def _group_norm_backward_batch(op, values, batched, attrs):
    if batched[2] or any(attrs["needs"][1:]):
        return _per_sample(op, values, batched, attrs)
    return batch_rules.fold(inputs=(0, 1))(op, values, batched, attrs)


for _op in (_layer_norm, _rms_norm):
    _op.batch(_last_norm_batch)
for _op in (_layer_norm_backward, _rms_norm_backward):
    _op.batch(_last_norm_backward_batch)
_batch_norm.batch(_batch_norm_batch)
_batch_norm_backward.batch(_batch_norm_backward_batch)
_group_norm.batch(_group_norm_batch)
_group_norm_backward.batch(_group_norm_backward_batch)
_cross_map_lrn2d.batch(batch_rules.fold())
del _op
