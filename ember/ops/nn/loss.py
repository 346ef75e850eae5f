"""Loss functions: `F.mse_loss` ... `F.cross_entropy`, `F.ctc_loss` (torch.nn.functional's losses).

Most losses are a few ember ops, so their gradients (and double backward) come from those ops'
rules, and they match torch's because torch composes the same ops (kl_div, poisson_nll_loss,
hinge_embedding_loss, ...). These are primitives, where fusing pays or where torch's gradient
is not the composition's:

    mse_loss, smooth_l1_loss, huber_loss
                           one temporary forward, two passes backward, one node each (as
                           torch's MseLossBackward0, ...); their rules are ember ops
    cross_entropy          log-softmax + NLL in one pass over the logits, for class-index
                           targets; saves the per-row log-sum-exp for backward
    cross_entropy_backward (softmax - smoothed one-hot) * weights * g -- its own op, so that the
                           forward pass saves nothing large; its rule gives double backward
    nll_loss               -w[t] * x[t]; backward scatters into zeros
    binary_cross_entropy   logs clamped at -100; d/dx = (x - y) / max(x (1 - x), 1e-12)
    binary_cross_entropy_with_logits
                           (1 - y) x + (1 + (pw - 1) y) log(1 + e^-x), overflow-free; both BCE
                           ops weigh and reduce inside, so the loss is their node, as in torch
    ctc_loss               alpha recursion in log space; `ctc_loss_backward` runs the beta
                           recursion and returns torch's gradient (see its docstring)

Class-index targets (`cross_entropy`, `nll_loss`) are handled without a one-hot matrix: the
target logit is picked with take_along_axis, the backward subtracts at (row, target) by index
arithmetic. With class weights w and ignore_index, the mean divides by sum(w[t]) over the
targets that are not ignored (0/0 = nan when all are). Label smoothing eps, over C classes:

    loss_i = (1 - eps) w[t_i] (-log p_i[t_i]) + eps/C sum_c w[c] (-log p_i[c])

Reductions: `reduction` is 'none' | 'mean' | 'sum'; the deprecated `size_average`/`reduce`
flags override it with torch's mapping and warning (`_reduction`).

Read next: distance.py (cosine_similarity, pairwise_distance, pdist, cdist, normalize, one_hot).
"""
import contextlib
import math
import numbers
import warnings

import numpy as np  # np.errstate (torch gives inf/nan silently) and the float32 type only

from ... import _creation
from ... import _dtype as dt
from ..._functorch import batch_rules
from ...autograd import grad_mode
from .._dispatch import autocast_args
from .._op import export, op
from ..pointwise import where
from ..shape import broadcast_shapes, broadcast_tensors, cat, stack
from .distance import pairwise_distance
from .linear import linear as _linear

__all__ = ["l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "soft_margin_loss",
           "multilabel_soft_margin_loss", "kl_div", "poisson_nll_loss", "gaussian_nll_loss",
           "hinge_embedding_loss", "margin_ranking_loss", "cosine_embedding_loss",
           "multi_margin_loss", "multilabel_margin_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "ctc_loss", "linear_cross_entropy"]

_HALF = (dt.float16.np, dt.bfloat16.np)

# ----------------------------------------------------------------------------------------------
# helpers


def _quiet(xp):
    errstate = getattr(xp, "errstate", None)  # CuPy never warns and has no errstate
    return errstate(all="ignore") if errstate is not None else contextlib.nullcontext()


def _working(x):
    """float16/bfloat16 are computed in float32 and rounded once at the end, as torch does."""
    return x.astype(np.float32) if x.dtype in _HALF else x


def _legacy_reduction(size_average, reduce):
    """torch's mapping of the deprecated flags (each defaults to True), with its warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    result = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{result}' instead.", stacklevel=4)
    return result


def _valid_reduction(reduction):
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=4)
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduction(size_average, reduce, reduction):
    """The reduction to apply: the deprecated flags win when either is given."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _valid_reduction(reduction)


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _refuse_grad(function, argument, tensor):
    """torch's native losses do not differentiate their weights (and some their targets)."""
    if tensor is not None and tensor.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError(f"The function '{function}' is not differentiable with respect to "
                           f"argument '{argument}'. This input cannot have requires_grad True.")


def _require_float(kernel, *tensors):
    """torch has no integer kernel for these losses (it names the kernel)."""
    if not any(t.dtype.is_floating_point for t in tensors):
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{dt.scalar_name(tensors[0].dtype)}'")


def _log_sigmoid(x):
    """log(sigmoid(x)) from ember ops, exact and overflow-free for both signs, with the right
    derivative (sigmoid(-x)) everywhere -- including x = 0, where min(x, 0) - log1p(e^-|x|)
    would have the kinks of min and abs."""
    negative = x < 0
    return where(negative, x, 0.0) - where(negative, x, -x).exp().log1p()


# ----------------------------------------------------------------------------------------------
# regression: l1, mse, smooth l1, huber


def _pair(input, target):
    """torch warns when the shapes differ (broadcasting is then usually a bug), then
    broadcasts."""
    if target.shape == input.shape:
        return input, target
    warnings.warn(f"Using a target size ({target.size()}) that is different to the input "
                  f"size ({input.size()}). This will likely lead to incorrect results due "
                  f"to broadcasting. Please ensure they have the same size.", stacklevel=3)
    return broadcast_tensors(input, target)


def _weighted(loss, weight, input, reduction, mean_by_weight=True):
    """The `weight=` path of l1/mse (mean = sum(w l) / sum(w)) and huber (mean of w l)."""
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target|, reduced."""
    input, target = autocast_args("l1_loss", input, target)
    input, target = _pair(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if weight is not None:
        return _weighted((input - target).abs(), weight, input, reduction)
    return _reduce((input - target).abs(), _valid_reduction(reduction))


# mse, smooth l1 and huber are one op each, as in torch (MseLossBackward0, ...): the forward
# makes one temporary and the backward two passes, where the same loss composed of ember ops
# would record and run four or five. Their rules are ember ops, so double backward holds.


def _reduce_raw(xp, loss, reduction):
    """A kernel's elementwise loss reduced (the mean of nothing is nan, as in torch)."""
    if reduction == "none":
        return loss
    total = xp.sum(loss)
    with _quiet(xp):
        return xp.asarray(total / loss.size if reduction == "mean" else total)


def _difference(a, b):
    """a - b in the working precision (float16/bfloat16 in float32)."""
    return _working(a) - b


def _per_element(g, a, reduction, weight=None):
    """The gradient reaching each element of `a` from a loss reduced with `reduction` (and
    weighed by `weight`)."""
    if reduction == "mean":
        g = g / max(a.numel(), 1)
    return g if weight is None else g * weight


def _loss_grads(slope, g, a, reduction, needs_input_grad):
    """(d/da, d/db) from the loss's slope d loss_i / d a_i (d/db is its negative)."""
    grad = slope * _per_element(g, a, reduction)
    return (grad if needs_input_grad[0] else None, -grad if needs_input_grad[1] else None)


@op("none", name="mse_loss", node_name="MseLossBackward0")
def _mse_loss(xp, a, b, *, reduction):
    d = _difference(a, b)
    d *= d
    return _reduce_raw(xp, d, reduction).astype(a.dtype, copy=False)


@_mse_loss.grad
def _mse_loss(g, a, b, reduction, needs_input_grad):
    return _loss_grads((a - b) * 2, g, a, reduction, needs_input_grad)


@op("none", name="smooth_l1_loss", node_name="SmoothL1LossBackward0")
def _smooth_l1_loss(xp, a, b, *, reduction, beta):
    d = _difference(a, b)
    size = xp.abs(d)
    d *= d
    d *= 0.5 / beta
    with _quiet(xp):  # nan differences compare False and take the linear branch, as in torch
        loss = xp.where(size < beta, d, size - 0.5 * beta)
    return _reduce_raw(xp, loss, reduction).astype(a.dtype, copy=False)


@_smooth_l1_loss.grad
def _smooth_l1_loss(g, a, b, reduction, beta, needs_input_grad):
    # d/dd: d / beta inside |d| < beta, sign(d) outside -- the clamp of d / beta to [-1, 1]
    return _loss_grads(((a - b) / beta).clamp(-1, 1), g, a, reduction, needs_input_grad)


@op("none", name="huber_loss", node_name="HuberLossBackward0")
def _huber_loss(xp, a, b, *, reduction, delta):
    d = _difference(a, b)
    size = xp.abs(d)
    d *= d
    d *= 0.5
    with _quiet(xp):
        loss = xp.where(size < delta, d, delta * (size - 0.5 * delta))
    return _reduce_raw(xp, loss, reduction).astype(a.dtype, copy=False)


@_huber_loss.grad
def _huber_loss(g, a, b, reduction, delta, needs_input_grad):
    # d/dd: d inside |d| < delta, delta * sign(d) outside
    return _loss_grads((a - b).clamp(-delta, delta), g, a, reduction, needs_input_grad)


def _promoted(input, target):
    """Both operands in their common dtype (the fused losses' kernels take one dtype)."""
    common = dt.result_type(input, target)
    return input.to(common), target.to(common)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """(input - target)^2, reduced."""
    input, target = _pair(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    _require_float("mse_cpu", input, target)
    if weight is not None:
        diff = input - target
        return _weighted(diff * diff, weight, input, reduction)
    return _mse_loss(*_promoted(input, target), reduction=_valid_reduction(reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target); beta = 0 is
    the L1 loss."""
    input, target = autocast_args("smooth_l1_loss", input, target)
    input, target = _pair(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:
        return _reduce((input - target).abs(), reduction)
    _require_float("smooth_l1_cpu", input, target)
    return _smooth_l1_loss(*_promoted(input, target), reduction=reduction, beta=float(beta))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta): smooth_l1 times delta."""
    input, target = _pair(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _require_float("huber_cpu", input, target)
    if target.dtype is not input.dtype:  # torch's huber result has the input's dtype
        target = target.to(input.dtype)
    if weight is not None:
        diff = input - target
        size = diff.abs()
        loss = where(size < delta, 0.5 * diff * diff, delta * (size - 0.5 * delta))
        return _weighted(loss, weight, input, reduction, mean_by_weight=False)
    return _huber_loss(input, target, reduction=_valid_reduction(reduction), delta=float(delta))


# ----------------------------------------------------------------------------------------------
# class-index targets: shared checks and per-position weights


def _check_class_target(kernel, input, target, weight):
    """torch's checks for (N, C, d1, ...) or (C,) input with class-index target, in its order."""
    n = input.ndim
    if n < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {n})")
    if n != 1:
        if target.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        if input.shape[0] != target.shape[0]:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                             f"batch_size ({target.shape[0]}).")
    expected = tuple(input.shape[:1]) + tuple(input.shape[2:])
    if n == 1:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if target.ndim == 1 and target.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                             f"{target.shape[0]}")
    elif n == 2:
        if target.ndim != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif n == 4:
        if target.ndim != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {target.ndim}")
        if tuple(target.shape) != expected:
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                               f"{list(target.shape)}")
    elif tuple(target.shape) != expected:
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")
    if target.dtype is not dt.int64 and target.dtype is not dt.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{dt.scalar_name(target.dtype)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{dt.scalar_name(input.dtype)}'")
    _check_class_weight("", input.shape[0 if n == 1 else 1], weight, input.dtype)


def _check_class_weight(prefix, classes, weight, dtype=None):
    """One weight per class; of the input's dtype too for the class-index kernels (`dtype`)."""
    if weight is None:
        return
    if weight.ndim != 1 or weight.shape[0] != classes:
        raise RuntimeError(f"{prefix}weight tensor should be defined either for all {classes} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    if dtype is not None and weight.dtype is not dtype:
        raise RuntimeError(f"expected scalar type {dt.scalar_name(dtype)} but found "
                           f"{dt.scalar_name(weight.dtype)}")


def _batched(input, target):
    """(C,) input with a 0-d or 1-element target runs as a batch of one."""
    if input.ndim == 1:
        return input.unsqueeze(0), target.reshape(1)
    return input, target


def _unbatched(loss, input, reduction):
    return loss.reshape(()) if input.ndim == 1 and reduction == "none" else loss


# raw-array helpers (inside kernels)

def _target_weights(xp, target, weight, ignore_index, dtype):
    """(safe target, valid mask, w[t]) per position: the ignored positions get target 0 (a
    harmless index) and weight 0."""
    valid = target != ignore_index
    safe = xp.where(valid, target, 0)
    if weight is None:
        w = valid.astype(dtype)
    else:
        w = xp.where(valid, weight.astype(dtype, copy=False)[safe], 0).astype(dtype, copy=False)
    return safe, valid, w


def _check_bounds(xp, target, valid, classes):
    bad = valid & ((target < 0) | (target >= classes))
    if bad.any():
        raise IndexError(f"Target {int(target[bad][0])} is out of bounds.")


def _reduce_positions(loss, w, reduction):
    """A per-position loss reduced as torch's nll_loss does: the mean divides by sum(w[t])."""
    if reduction == "none":
        return loss
    total = loss.sum()
    return total if reduction == "sum" else total / w.sum()


def _spread_raw(xp, g, w, reduction):
    """The upstream gradient of a reduced loss, per position (the adjoint of the above)."""
    if reduction == "none":
        return g
    with _quiet(xp):
        return xp.broadcast_to(g if reduction == "sum" else g / w.sum(), w.shape)


# the same on Tensors (inside rules, so that they stay differentiable)

def _target_weight_tensors(target, weight, ignore_index, dtype):
    valid = target != ignore_index
    safe = where(valid, target, 0)
    valid = valid.to(dtype)
    w = valid if weight is None else weight.take(safe) * valid
    return safe, valid, w


def _spread(g, w, reduction):
    if reduction == "none":
        return g
    return (g if reduction == "sum" else g / w.sum()).expand(w.shape)


def _unspread(grad, w, reduction):
    if reduction == "none":
        return grad
    return grad.sum() if reduction == "sum" else grad.sum() / w.sum()


# ----------------------------------------------------------------------------------------------
# nll_loss


@op("none", name="nll_loss", node_name="NllLossBackward0", grad_inputs=("x",))
def _nll_loss(xp, x, target, weight, *, ignore_index, reduction):
    """-w[t] x[t] at each position of (N, C, d1, ...), reduced; ignored positions give 0."""
    target = target.astype(xp.int64, copy=False)
    safe, valid, w = _target_weights(xp, target, weight, ignore_index, x.dtype)
    _check_bounds(xp, target, valid, x.shape[1])
    picked = xp.take_along_axis(x, safe[:, None], axis=1)[:, 0]
    loss = xp.where(valid, -(picked * w), 0).astype(x.dtype, copy=False)
    return _reduce_positions(loss, w, reduction)


@_nll_loss.grad
def _nll_loss(g, x_shape, x_dtype, target, weight, ignore_index, reduction):
    safe, _, w = _target_weight_tensors(target, weight, ignore_index, x_dtype)
    picked_grad = -(_spread(g, w, reduction) * w)
    grad = g.new_zeros(x_shape, dtype=x_dtype).scatter(1, safe.unsqueeze(1),
                                                      picked_grad.unsqueeze(1))
    return grad, None, None


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """The negative log-likelihood of class-index targets, given log-probabilities: -input[t]
    (times weight[t]) per position of (N, C, d1, ...) or (C,)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_class_target("nll_loss_out_frame", input, target, weight)
    _refuse_grad("nll_loss_forward", "weight", weight)
    x, t = _batched(input, target)
    loss = _nll_loss(x, t.long(), weight, ignore_index=ignore_index, reduction=reduction)
    return _unbatched(loss, input, reduction)


# ----------------------------------------------------------------------------------------------
# cross_entropy


@op("none", name="cross_entropy", node_name="NllLossBackward0", grad_inputs=("x",))
def _cross_entropy(xp, x, target, weight, *, ignore_index, label_smoothing, reduction):
    """(loss, log-sum-exp per position) for logits (N, C, d1, ...) and class indices.

    -log p[t] = lse - x[t] with lse = m + log(sum(exp(x - m))), m the row maximum; the
    smoothing term sum_c w[c] (lse - x[c]) is formed as sum_c w[c] ((lse - m) - (x[c] - m)),
    a sum of non-negative terms, which loses nothing to cancellation when C or |x| is large."""
    classes = x.shape[1]
    target = target.astype(xp.int64, copy=False)
    safe, valid, w = _target_weights(xp, target, weight, ignore_index, x.dtype)
    _check_bounds(xp, target, valid, classes)
    work = _working(x)
    w = w.astype(work.dtype, copy=False)
    with _quiet(xp):
        top = work.max(axis=1, keepdims=True)
        shifted = work - top                                    # the one N*C temporary
        picked = xp.take_along_axis(shifted, safe[:, None], axis=1)[:, 0]
        if label_smoothing:
            if weight is None:
                spread, total_weight = -shifted.sum(axis=1), classes
            else:
                cw = weight.astype(work.dtype, copy=False)
                spread = -xp.matmul(xp.moveaxis(shifted, 1, -1), cw)
                total_weight = cw.sum()
        xp.exp(shifted, out=shifted)
        log_z = xp.log(shifted.sum(axis=1))                     # lse - m
        loss = (1 - label_smoothing) * w * (log_z - picked)
        if label_smoothing:
            loss += label_smoothing / classes * (total_weight * log_z + spread)
        loss = xp.where(valid, loss, 0)
        out = _reduce_positions(loss, w, reduction)
    return xp.asarray(out).astype(x.dtype, copy=False), (log_z + top[:, 0]).astype(x.dtype)


@_cross_entropy.grad
def _cross_entropy(g, x, target, weight, out, ignore_index, label_smoothing, reduction):
    grad = _cross_entropy_backward(g[0], x, out[1], target, weight, ignore_index=ignore_index,
                                   label_smoothing=label_smoothing, reduction=reduction)
    return grad, None, None


@op("none", name="cross_entropy_backward", node_name="NllLossBackwardBackward0")
def _cross_entropy_backward(xp, grad_loss, x, lse, target, weight, *, ignore_index,
                            label_smoothing, reduction):
    """d loss / d x = softmax(x) * k - (1 - eps) g w[t] at t - eps/C g w[c], per position, with
    k = g ((1 - eps) w[t] + eps/C sum(w)) (see the module docstring for the loss)."""
    classes = x.shape[1]
    eps = label_smoothing
    target = target.astype(xp.int64, copy=False)
    safe, valid, w = _target_weights(xp, target, weight, ignore_index, x.dtype)
    work = _working(x)
    g = _spread_raw(xp, _working(grad_loss), w, reduction)
    g = xp.where(valid, g, 0)              # ignored positions get nothing, smoothing included
    hard = (1 - eps) * g * w
    coef = hard
    if eps:
        total_weight = classes if weight is None else weight.astype(work.dtype).sum()
        coef = hard + eps / classes * total_weight * g
    grad = work - xp.expand_dims(lse, 1)
    xp.exp(grad, out=grad)
    grad *= xp.expand_dims(coef, 1)
    # subtract `hard` at (n, t[n, d], d): index arithmetic on an (N, C, D) view, no one-hot
    n, positions = x.shape[0], math.prod(x.shape[2:])
    flat = grad.reshape(n, classes, positions)
    rows = xp.arange(n)[:, None]
    cols = xp.arange(positions)[None, :]
    flat[rows, safe.reshape(n, positions), cols] -= hard.reshape(n, positions)
    if eps:
        per_class = 1 if weight is None else weight.astype(work.dtype).reshape(
            (1, classes) + (1,) * (x.ndim - 2))
        grad -= (eps / classes) * xp.expand_dims(g, 1) * per_class
    return grad.astype(x.dtype, copy=False)


@_cross_entropy_backward.grad
def _cross_entropy_backward(g, grad_loss, x, target, weight, ignore_index, label_smoothing,
                            reduction):
    """The backward above is B = p(x) k(gpos) - hard(gpos) onehot - eps/C gpos w; it is linear
    in the per-position gradient gpos, and p = softmax(x) gives the x-derivative."""
    classes = x.shape[1]
    eps = label_smoothing
    safe, valid, w = _target_weight_tensors(target, weight, ignore_index, x.dtype)
    gpos = _spread(grad_loss, w, reduction) * valid
    p = (x - x.logsumexp(1, keepdim=True)).exp()
    hard = (1 - eps) * w
    k = hard
    if eps:
        k = hard + eps / classes * (classes if weight is None else weight.sum()) * valid
    g_dot_p = (g * p).sum(1)
    d_gpos = k * g_dot_p - hard * g.gather(1, safe.unsqueeze(1)).squeeze(1)
    if eps:
        per_class = g if weight is None else g * weight.reshape((1, classes) +
                                                                 (1,) * (x.ndim - 2))
        d_gpos = d_gpos - eps / classes * valid * per_class.sum(1)
    d_x = (gpos * k).unsqueeze(1) * p * (g - g_dot_p.unsqueeze(1))
    return _unspread(d_gpos * valid, w, reduction), d_x, None, None, None


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing):
    """Soft targets (class probabilities, same shape as input): -sum_c w[c] q[c] log p[c]."""
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class "
                           f"probabilities, got {dt.scalar_name(target.dtype)}")
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    _check_class_weight("cross_entropy: ", classes, weight)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    log_p = input - input.logsumexp(class_dim, keepdim=True)
    terms = log_p * target
    if weight is not None:
        terms = terms * weight.reshape((classes,) + (1,) * (input.ndim - class_dim - 1))
    loss = -terms.sum(class_dim)
    if reduction == "mean":
        if input.numel() == 0:
            return loss.sum() * math.nan
        return loss.sum() / (input.numel() // classes)
    return _reduce(loss, reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy of logits `input` (N, C, d1, ...) or (C,) against class indices (N, d1,
    ...) or class probabilities (the input's shape); log-softmax and NLL fused in one op."""
    reduction = _reduction(size_average, reduce, reduction)
    if label_smoothing > 1.0:  # (torch ignores a negative one)
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    if input.shape == target.shape:
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    _check_class_target("log_softmax_lastdim_kernel_impl", input, target, weight)
    _refuse_grad("nll_loss_forward", "weight", weight)
    x, t = _batched(input, target)
    loss, _ = _cross_entropy(x, t.long(), weight, ignore_index=ignore_index,
                             label_smoothing=max(float(label_smoothing), 0.0),
                             reduction=reduction)
    return _unbatched(loss, input, reduction)


# ----------------------------------------------------------------------------------------------
# binary targets: bce, bce with logits, soft margin, multilabel soft margin


@op("none", name="binary_cross_entropy", node_name="BinaryCrossEntropyBackward0",
    grad_inputs=("x", "y"))
def _binary_cross_entropy(xp, x, y, weight, *, reduction):
    """-w (y log x + (1 - y) log(1 - x)), reduced, each log clamped at -100 so that x = 0 or 1
    stays finite."""
    if not bool(((x >= 0) & (x <= 1)).all()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not bool(((y >= 0) & (y <= 1)).all()):
        raise RuntimeError("all elements of target should be between 0 and 1")
    work = _working(x)
    with _quiet(xp):
        log_x = xp.maximum(xp.log(work), -100)
        log_1mx = xp.maximum(xp.log1p(-work), -100)
        loss = (y - 1) * log_1mx - y * log_x
        if weight is not None:
            loss *= weight
    return _reduce_raw(xp, loss, reduction).astype(x.dtype, copy=False)


@_binary_cross_entropy.grad
def _binary_cross_entropy(g, x, y, weight, reduction, needs_input_grad):
    g = _per_element(g, x, reduction, weight)
    grad_x = g * (x - y) / ((1 - x) * x).clamp_min(1e-12) if needs_input_grad[0] else None
    grad_y = -g * x.logit() if needs_input_grad[1] else None
    return grad_x, grad_y, None


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-w (y log x + (1 - y) log(1 - x)) for probabilities x in [0, 1], reduced."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.size()}) that is different to the "
                         f"input size ({input.size()}) is deprecated. Please ensure they have "
                         f"the same size.")
    if weight is not None:
        weight = weight.expand(broadcast_shapes(target.shape, weight.shape))
    _refuse_grad("binary_cross_entropy", "weight", weight)
    for t in (target, weight):
        if t is not None and t.dtype is not input.dtype:
            raise RuntimeError(f"Found dtype {dt.scalar_name(t.dtype)} but expected "
                               f"{dt.scalar_name(input.dtype)}")
    return _binary_cross_entropy(input, target, weight, reduction=reduction)


@op("float", name="binary_cross_entropy_with_logits",
    node_name="BinaryCrossEntropyWithLogitsBackward0", grad_inputs=("x", "y"))
def _bce_with_logits(xp, x, y, pos_weight, weight, *, reduction):
    """w ((1 - y) x + (1 + (pw - 1) y) softplus(-x)), reduced, with softplus(-x) = max(-x, 0)
    + log1p(exp(-|x|)): exp never sees a positive argument."""
    work = _working(x)
    with _quiet(xp):
        softplus_neg = xp.maximum(-work, 0) + xp.log1p(xp.exp(-xp.abs(work)))
        if pos_weight is None:
            loss = (1 - y) * work + softplus_neg
        else:
            loss = (1 - y) * work + ((pos_weight - 1) * y + 1) * softplus_neg
        if weight is not None:
            loss *= weight
    return _reduce_raw(xp, loss, reduction).astype(x.dtype, copy=False)


@_bce_with_logits.grad
def _bce_with_logits(g, x, y, pos_weight, weight, reduction, needs_input_grad):
    g = _per_element(g, x, reduction, weight)
    if pos_weight is None:
        grad_y = -g * x if needs_input_grad[1] else None
        return g * (x.sigmoid() - y), grad_y, None, None
    log_weight = (pos_weight - 1) * y + 1
    grad_x = g * (log_weight * x.sigmoid() - pos_weight * y)
    grad_y = -g * (x + (pos_weight - 1) * _log_sigmoid(x)) if needs_input_grad[1] else None
    return grad_x, grad_y, None, None


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """BCE of sigmoid(input) computed from the logits directly (no overflow, no clamping);
    pos_weight (broadcast over the last, class dim) weighs the positive term."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{dt.scalar_name(target.dtype)}")
    _refuse_grad("binary_cross_entropy_with_logits", "weight", weight)
    _refuse_grad("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    if all(t is None or t.dtype is target.dtype for t in (input, pos_weight, weight)):
        return _bce_with_logits(input, target, pos_weight, weight, reduction=reduction)
    # mixed dtypes: torch accumulates the loss in place into a target-typed buffer, so the
    # elements are rounded to the target's dtype before they are reduced
    loss = _bce_with_logits(input, target, pos_weight, weight, reduction="none")
    return _reduce(loss.to(target.dtype), reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-y x)) for labels y = +-1."""
    input, target = autocast_args("soft_margin_loss", input, target)
    reduction = _reduction(size_average, reduce, reduction)
    _refuse_grad("soft_margin_loss", "target", target)
    return _reduce((-target * input).exp().log1p(), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Per-class logistic loss on (N, C), averaged over the C classes of each sample."""
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * _log_sigmoid(input) + (1 - target) * _log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    if class_dim < 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    return _reduce(loss.sum(class_dim) / input.shape[class_dim], reduction)


# ----------------------------------------------------------------------------------------------
# distributions: kl_div, poisson_nll_loss, gaussian_nll_loss


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL(target || exp(input)) pointwise: target (log target - input); the input is
    log-probabilities, the target probabilities (or log-probabilities with log_target)."""
    input, target = autocast_args("kl_div", input, target)
    if size_average is not None or reduce is not None:
        applied = _legacy_reduction(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        applied = "sum" if reduction == "batchmean" else _valid_reduction(reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = target.xlogy(target) - target * input  # 0 log 0 = 0, as the definition wants
    reduced = _reduce(loss, applied)
    if reduction == "batchmean" and input.ndim != 0:
        reduced = reduced / input.shape[0]
    return reduced


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Negative log-likelihood of target ~ Poisson(rate): rate - target log(rate), with
    rate = exp(input) (log_input) or input; `full` adds Stirling's log(target!) for target > 1."""
    input, target = autocast_args("poisson_nll_loss", input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def _gaussian_variance(input, var):
    """var as a tensor that broadcasts against input, with torch's shape rules: the same shape,
    one dim short (homoscedastic: unsqueezed), or one mismatched dim of size 1."""
    if isinstance(var, numbers.Real) and not isinstance(var, bool):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        return var * _creation.ones_like(input)
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            return var.unsqueeze(-1)
        mismatched = [v for i, v in zip(input.shape, var.shape) if i != v]
        if not (input.ndim == var.ndim and sum(mismatched) == 1):
            raise ValueError("var is of incorrect size")
    return var


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log var + (input - target)^2 / var) (+ 0.5 log 2 pi with `full`); var is clamped to
    eps for the value only: the gradient passes as if unclamped, as in torch."""
    var = _gaussian_variance(input, var)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid")
    var = var.clone()
    with grad_mode.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# ----------------------------------------------------------------------------------------------
# margins and embeddings


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """x where y = 1, max(0, margin - x) where y = -1 (both where y is neither)."""
    input, target = autocast_args("hinge_embedding_loss", input, target)
    reduction = _reduction(size_average, reduce, reduction)
    below_margin = where(target != 1, (margin - input).clamp_min(0), 0.0)
    itself = where(target != -1, input, 0.0)
    return _reduce(below_margin + itself, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -y (x1 - x2) + margin): y = 1 wants x1 ranked above x2."""
    input1, input2, target = autocast_args("margin_ranking_loss", input1, input2, target)
    reduction = _reduction(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.size()}, input2: {input2.size()}, "
                           f"target: {target.size()} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1; the squared
    norms get 1e-12 each, as in torch."""
    input1, input2, target = autocast_args("cosine_embedding_loss", input1, input2, target)
    reduction = _reduction(size_average, reduce, reduction)
    dim = target.ndim
    if dim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if (input1.ndim, input2.ndim) != (dim + 1, dim + 1):
        raise RuntimeError(f"{dim}D target tensor expects {dim + 1}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    dot = (input1 * input2).sum(dim)
    norms = ((input1 * input1).sum(dim) + 1e-12) * ((input2 * input2).sum(dim) + 1e-12)
    cos = dot / norms.sqrt()
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - margin).clamp_min(0),
                                                     0.0)
    return _reduce(loss, reduction)


def _margin_frames(input, target, target_shape_ok, message):
    """(frames, classes) of a margin loss's input: (N, C), (C,) or a 0-d single score."""
    n = input.ndim
    if not (n == 2 and input.shape[1] != 0 or n == 1 and input.shape[0] != 0 or n == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    frames = 1 if n <= 1 else input.shape[0]
    classes = 1 if n == 0 else input.shape[-1]
    if not target_shape_ok(frames, classes):
        raise RuntimeError(message(frames, classes))
    if target.dtype is not dt.int64:
        raise RuntimeError(f"expected scalar type Long but found "
                           f"{dt.scalar_name(target.dtype)}")
    return frames, classes


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Multi-class hinge: sum over j != y of w[y] max(0, margin - x[y] + x[j])^p, over C."""
    input, weight = autocast_args("multi_margin_loss", input, weight)
    reduction = _reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    frames, classes = _margin_frames(
        input, target,
        lambda f, c: target.ndim <= 1 and target.numel() == f,
        lambda f, c: f"multi_margin_loss: target tensor should be 1-D with size equal to the "
                     f"number of input samples (batch size). Expected target size [{f}], but "
                     f"got {list(target.shape)}. Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got "
                           f"{list(weight.shape)}")
    if bool(((target < 0) | (target >= classes)).any()):
        raise RuntimeError("target out of range")
    _refuse_grad("multi_margin_loss", "weight", weight)
    x = input.reshape(frames, classes)
    t = target.reshape(frames, 1)
    # relu, not clamp: torch's gradient is 0 where the margin term is exactly 0
    z = (margin - x.gather(1, t) + x).relu()
    if p == 2:
        z = z * z
    z = where(_creation.arange(classes, device=input.device) != t, z, 0.0)
    if weight is not None:
        z = z * weight.take(t)
    loss = z.sum(1) / classes
    if reduction == "none":
        return loss.reshape(target.shape) if input.ndim <= 1 else loss
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Sum over target classes j (the prefix of each target row before the first -1) and
    non-target classes k of max(0, 1 - (x[j] - x[k])), over C. Builds (N, C, C) pairs."""
    input, = autocast_args("multilabel_margin_loss", input)
    reduction = _reduction(size_average, reduce, reduction)
    frames, classes = _margin_frames(
        input, target,
        lambda f, c: (target.ndim <= 1 and target.numel() == c) if input.ndim <= 1 else
        (target.ndim == 2 and tuple(target.shape) == (f, c)),
        lambda f, c: f"inconsistent target size: {list(target.shape)} for input of size: "
                     f"{list(input.shape)}")
    if target.numel() and bool(((target < -1) | (target >= classes)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    x = input.reshape(frames, classes)
    t = target.reshape(frames, classes)
    in_prefix = (t == -1).long().cumsum(1) == 0
    # how often each class is listed as a target (a repeated target counts twice, as in torch)
    listed = x.new_zeros((frames, classes)).scatter_add(
        1, where(in_prefix, t, 0), in_prefix.to(x.dtype))
    pair_weight = listed.unsqueeze(2) * (listed == 0).to(x.dtype).unsqueeze(1)
    z = (1 - x.unsqueeze(2) + x.unsqueeze(1)).relu()          # [n, j, k] = 1 - (x_j - x_k)
    loss = (z * pair_weight).sum((1, 2)) / classes
    if reduction == "none":
        return loss.reshape(()) if input.ndim <= 1 else loss
    return _reduce(loss, reduction)


def _same_ndim(anchor, positive, negative):
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {dims[0]}D, "
                           f"positive {dims[1]}D, and negative {dims[2]}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(0, d(a, p) - d(a, n) + margin) with the p-norm pairwise distance d; `swap` uses
    min(d(a, n), d(p, n)) as the negative distance."""
    anchor, positive, negative = autocast_args("triplet_margin_loss", anchor, positive, negative)
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_ndim(anchor, positive, negative)
    return _triplet(anchor, positive, negative,
                    lambda a, b: pairwise_distance(a, b, p, eps), margin, swap, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """The triplet loss with any distance (default: pairwise_distance)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _same_ndim(anchor, positive, negative)
    if distance_function is None:
        distance_function = pairwise_distance
    return _triplet(anchor, positive, negative, distance_function, margin, swap, reduction)


def _triplet(anchor, positive, negative, distance, margin, swap, reduction):
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


# ----------------------------------------------------------------------------------------------
# ctc_loss
#
# Extended labels: the target l (length S) with blanks around and between its labels,
#     l' = (blank, l1, blank, l2, ..., lS, blank)       length 2S + 1,
# and alpha_t(s) = log P(l'[:s+1] emitted by frames 0..t). A path moves right by 0 or 1
# positions per frame, or by 2 to skip a blank between two different labels:
#     alpha_t(s) = logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1), [alpha_{t-1}(s-2)]) + lp_t(l'_s)
# beta runs the same recursion backwards from the last frame. Both are vectorised over the
# batch and the positions s; the only Python loop is over time.


def _ctc_lattice(xp, log_probs, targets, blank):
    """Per-sample extended labels (N, L), the blank-skip mask, and lp_t(l'_s) as (T, N, L)."""
    frames, batch, _ = log_probs.shape
    width = 2 * targets.shape[1] + 1
    ext = xp.full((batch, width), blank, dtype=xp.int64)
    ext[:, 1::2] = targets
    skip = xp.zeros((batch, width), dtype=bool)
    skip[:, 3::2] = ext[:, 3::2] != ext[:, 1:-2:2]
    emit = xp.take_along_axis(log_probs, xp.broadcast_to(ext, (frames, batch, width)), axis=2)
    return ext, skip, emit


def _logsumexp3(xp, a, b, c):
    top = xp.maximum(xp.maximum(a, b), c)
    top = xp.where(xp.isinf(top), 0, top)  # all -inf: keep -inf instead of nan
    return xp.log(xp.exp(a - top) + xp.exp(b - top) + xp.exp(c - top)) + top


def _shift(xp, a, by, neg_inf):
    """a moved `by` positions along the last axis (right for by > 0), padded with -inf."""
    out = xp.full_like(a, neg_inf)
    if by > 0:
        out[..., by:] = a[..., :-by]
    else:
        out[..., :by] = a[..., -by:]
    return out


@op("none", name="ctc_loss", node_name="CtcLossBackward0")
def _ctc_loss(xp, log_probs, targets, *, input_lengths, target_lengths, blank, zero_infinity):
    """(negative log-likelihood per sample (N,), log_alpha (T, N, 2S + 1)); zero_infinity is
    for the backward (the caller zeroes infinite losses)."""
    frames, batch, _ = log_probs.shape
    lengths = xp.asarray(target_lengths, dtype=xp.int64)
    ext, skip, emit = _ctc_lattice(xp, log_probs, targets, blank)
    neg_inf = -xp.inf
    alpha = xp.full(emit.shape, neg_inf, dtype=log_probs.dtype)
    if not frames:  # every input length is 0: only empty targets have a (empty) path
        return xp.where(lengths == 0, 0, xp.inf).astype(log_probs.dtype), alpha
    with _quiet(xp):
        alpha[0, :, 0] = emit[0, :, 0]
        if ext.shape[1] > 1:
            alpha[0, :, 1] = xp.where(lengths > 0, emit[0, :, 1], neg_inf)
        for t in range(1, frames):
            prev = alpha[t - 1]
            skipped = xp.where(skip, _shift(xp, prev, 2, neg_inf), neg_inf)
            alpha[t] = _logsumexp3(xp, prev, _shift(xp, prev, 1, neg_inf), skipped) + emit[t]
        # a path ends at each sample's last frame, on its last label or the blank after it
        ends = xp.asarray(input_lengths, dtype=xp.int64) - 1
        last_frame = alpha[xp.maximum(ends, 0), xp.arange(batch)]            # (N, L)
        on_blank = xp.take_along_axis(last_frame, 2 * lengths[:, None], axis=1)[:, 0]
        on_label = xp.take_along_axis(last_frame, xp.maximum(2 * lengths - 1, 0)[:, None],
                                      axis=1)[:, 0]
        nll = -xp.logaddexp(on_blank, xp.where(lengths > 0, on_label, neg_inf))
        nll = xp.where(ends < 0, xp.where(lengths == 0, 0, xp.inf), nll)
    return nll.astype(log_probs.dtype, copy=False), alpha


@_ctc_loss.grad
def _ctc_loss(g, log_probs, targets, out, input_lengths, target_lengths, blank, zero_infinity):
    grad = _ctc_loss_backward(g[0], log_probs, targets, out[0], out[1],
                              input_lengths=input_lengths, target_lengths=target_lengths,
                              blank=blank, zero_infinity=zero_infinity)
    return grad, None


@op("none", name="ctc_loss_backward", node_name="CtcLossBackwardBackward0")
def _ctc_loss_backward(xp, grad_nll, log_probs, targets, nll, log_alpha, *, input_lengths,
                       target_lengths, blank, zero_infinity):
    """torch's CTC gradient w.r.t. log_probs, per frame t and class c:

        exp(lp_t(c)) - exp(logsumexp_{s: l'_s = c}(alpha_t(s) + beta_t(s)) + nll - lp_t(c))

    The first term is not part of the loss's derivative: torch adds it because it assumes
    log_probs = log_softmax(logits), through which it cancels (sum_c exp(lp_t(c)) = 1).
    Frames past a sample's input length get 0; with zero_infinity, so do the samples whose
    loss is infinite (no alignment: the formula would give nan there)."""
    frames, batch, classes = log_probs.shape
    lengths = xp.asarray(target_lengths, dtype=xp.int64)
    ends = xp.asarray(input_lengths, dtype=xp.int64) - 1
    ext, skip, emit = _ctc_lattice(xp, log_probs, targets, blank)
    width = ext.shape[1]
    neg_inf = -xp.inf
    positions = xp.arange(width)
    last_two = (positions == 2 * lengths[:, None]) | (positions == 2 * lengths[:, None] - 1)
    beta = xp.full(emit.shape, neg_inf, dtype=log_probs.dtype)
    skip_next = _shift(xp, skip, -2, False)  # may s jump to s + 2?
    with _quiet(xp):
        for t in range(frames - 1, -1, -1):
            start = xp.where(last_two, emit[t], neg_inf)
            if t + 1 < frames:
                nxt = beta[t + 1]
                skipped = xp.where(skip_next, _shift(xp, nxt, -2, neg_inf), neg_inf)
                step = _logsumexp3(xp, nxt, _shift(xp, nxt, -1, neg_inf), skipped) + emit[t]
            else:
                step = start
            at = (t == ends)[:, None]
            before = (t < ends)[:, None]
            beta[t] = xp.where(at, start, xp.where(before, step, neg_inf))
        both = log_alpha + beta                                # (T, N, L)
        top = both.max(axis=2, keepdims=True)
        top = xp.where(xp.isinf(top), 0, top)
        # sum exp(both - top) over the positions with the same label: one bincount
        index = (xp.arange(frames * batch)[:, None] * classes
                 + xp.broadcast_to(ext, (frames, batch, width)).reshape(frames * batch, width))
        summed = xp.bincount(index.ravel(), weights=xp.exp(both - top).ravel(),
                             minlength=frames * batch * classes)
        summed = summed.reshape(frames, batch, classes).astype(log_probs.dtype)
        grad = xp.exp(log_probs) - xp.exp(xp.log(summed) + top + nll[:, None] - log_probs)
    grad *= grad_nll[:, None]
    grad[xp.arange(frames)[:, None] > ends[None, :]] = 0
    if zero_infinity:
        grad[:, xp.isinf(nll)] = 0
    return grad.astype(log_probs.dtype, copy=False)


@_ctc_loss_backward.grad
def _ctc_loss_backward(g):
    raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


def _lengths(name, lengths, batch):
    """CTC lengths as a tuple of ints (from a tensor or a sequence), checked against the
    batch size."""
    from ..._tensor import Tensor

    if isinstance(lengths, Tensor):
        if lengths.dtype.is_floating_point or lengths.dtype is dt.bool:
            raise RuntimeError(f"{name} must be integral")
        values = lengths.reshape(-1).tolist()
    elif isinstance(lengths, (tuple, list)):
        values = [int(v) for v in lengths]
    else:
        raise TypeError(f"ctc_loss(): argument '{name}' must be a tuple of ints or a Tensor, "
                        f"not {type(lengths).__name__}")
    if len(values) != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    return tuple(values)


def _padded_targets(targets, target_lengths, batch):
    """Targets as (N, S) int64: padded input as it is, concatenated 1-d input split up."""
    suffix = " for argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)"
    if targets.ndim == 2:
        if targets.shape[0] != batch:
            raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got "
                               f"size {targets.shape[0]}{suffix}")
        longest = max(target_lengths, default=0)
        if longest > targets.shape[1]:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension "
                               f"1, but got size {targets.shape[1]}{suffix}")
        return targets.long()
    if targets.ndim != 1:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional "
                           f"tensor{suffix}")
    total = sum(target_lengths)
    if targets.shape[0] != total:
        raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                           f"size {targets.shape[0]}{suffix}")
    width = max(target_lengths, default=0)
    flat = targets.long()
    rows = []
    start = 0
    for length in target_lengths:  # one slice per sample, not per element
        rows.append(cat([flat[start:start + length], flat.new_zeros(width - length)]))
        start += length
    return stack(rows)


def _check_ctc(log_probs, padded, input_lengths, target_lengths, blank):
    """torch's argument checks; returns the padded targets with the padding set to blank (so
    that whatever the caller padded with is never used as an index)."""
    frames, _, classes = log_probs.shape
    suffix = " (while checking arguments for ctc_loss_allocate_outputs)"
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    for name, values in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        for v in values:
            if v < 0:
                raise RuntimeError(f"Expected {name} to have value at least 0, but got value "
                                   f"{v}{suffix}")
    for v in input_lengths:
        if v > frames:
            raise RuntimeError(f"Expected input_lengths to have value at most {frames}, but got "
                               f"value {v}{suffix}")
    columns = _creation.arange(padded.shape[1], device=padded.device)
    used = columns < _creation.tensor(list(target_lengths), dtype=dt.int64,
                                      device=padded.device).reshape(-1, 1)
    if bool((used & ((padded < 0) | (padded >= classes))).any()):
        raise RuntimeError(f"ctc_loss: target labels must be in [0, {classes})")
    return where(used, padded, blank)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist Temporal Classification loss of log_probs (T, N, C) or (T, C) against
    targets padded (N, S) or concatenated (sum(target_lengths),).

    'mean' divides each sample's loss by its target length (at least 1), then averages;
    zero_infinity replaces infinite losses (no alignment exists) and their gradients by 0."""
    reduction = _valid_reduction(reduction)
    if not log_probs.dtype.is_floating_point or log_probs.dtype in (dt.float16, dt.bfloat16):
        raise NotImplementedError(f'"ctc_loss_cpu" not implemented for '
                                  f"'{dt.scalar_name(log_probs.dtype)}'")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        if targets.ndim == 1:
            targets = targets.unsqueeze(0)
    batch = log_probs.shape[1]
    input_lengths = _lengths("input_lengths", input_lengths, batch)
    target_lengths = _lengths("target_lengths", target_lengths, batch)
    padded = _check_ctc(log_probs, _padded_targets(targets, target_lengths, batch),
                        input_lengths, target_lengths, blank)
    nll, _ = _ctc_loss(log_probs, padded, input_lengths=input_lengths,
                       target_lengths=target_lengths, blank=blank, zero_infinity=zero_infinity)
    if zero_infinity:
        nll = where(nll == math.inf, 0.0, nll)
    if reduction == "mean":
        divisor = _creation.tensor([max(n, 1) for n in target_lengths], dtype=nll.dtype,
                                   device=nll.device)
        return (nll / divisor).mean()
    if reduction == "sum":
        return nll.sum()
    return nll.reshape(()) if unbatched else nll


# ----------------------------------------------------------------------------------------------
# linear_cross_entropy: a linear layer's logits straight into cross_entropy


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """cross_entropy(linear(input, W, b), target, ...): W is (C, in_features) or, for a
    K-dimensional loss, (C, d_1, ..., d_K, in_features) with logits (N, C, d_1, ..., d_K).
    ignore_index None means -100 for class-index targets. `options` (chunking settings) are
    validated by their class; ember always computes this reference path, whose loss and
    gradients torch's chunked path reproduces up to rounding."""
    if input.ndim not in (1, 2):
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    classes, *extra, in_features = linear_weight.shape
    if extra and input.ndim != 2:
        raise RuntimeError("multi-dimensional linear_weight requires batched input "
                           "(N, in_features)")
    flat_bias = None if linear_bias is None else linear_bias.reshape(-1)
    logits = _linear(input, linear_weight.reshape(-1, in_features), flat_bias)
    if extra:
        logits = logits.reshape((input.shape[0], classes) + tuple(extra))
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)


# ----------------------------------------------------------------------------------------------
# the torch.* forms of the losses (ATen's argument orders; `reduction` is an int: 0 none,
# 1 mean, 2 sum). torch's Python binding of these reads their documented default
# (at::Reduction::Mean) as 0, so by default they do not reduce -- as here.

_BY_CODE = {0: "none", 1: "mean", 2: "sum"}


def _reduction_of(code):
    if isinstance(code, str):
        raise TypeError("argument 'reduction' must be int, not str")
    if code not in _BY_CODE:
        raise ValueError(f"{code} is not a valid value for reduction")
    return _BY_CODE[code]


def _native(name, fn, doc):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    export(fn, name=name, function=True, method=False)


def _reduced(loss, code):
    """The pointwise loss reduced by code (torch's 'mean' here is the plain mean: no
    batchmean warning)."""
    how = _reduction_of(code)
    return loss if how == "none" else (loss.mean() if how == "mean" else loss.sum())


_native("kl_div", lambda input, target, reduction=0, *, log_target=False: _reduced(
    kl_div(input, target, reduction="none", log_target=log_target), reduction),
    "torch.kl_div(input, target, reduction, *, log_target): F.kl_div with an int reduction.")
_native("binary_cross_entropy_with_logits",
        lambda input, target, weight=None, pos_weight=None, reduction=0:
        binary_cross_entropy_with_logits(input, target, weight,
                                         reduction=_reduction_of(reduction),
                                         pos_weight=pos_weight),
        "torch.binary_cross_entropy_with_logits: F.binary_cross_entropy_with_logits with an "
        "int reduction.")
_native("cosine_embedding_loss", lambda input1, input2, target, margin=0.0, reduction=0:
        cosine_embedding_loss(input1, input2, target, margin,
                              reduction=_reduction_of(reduction)),
        "torch.cosine_embedding_loss: F.cosine_embedding_loss with an int reduction.")
_native("margin_ranking_loss", lambda input1, input2, target, margin=0.0, reduction=0:
        margin_ranking_loss(input1, input2, target, margin,
                            reduction=_reduction_of(reduction)),
        "torch.margin_ranking_loss: F.margin_ranking_loss with an int reduction.")
_native("hinge_embedding_loss", lambda input, target, margin=1.0, reduction=0:
        hinge_embedding_loss(input, target, margin, reduction=_reduction_of(reduction)),
        "torch.hinge_embedding_loss: F.hinge_embedding_loss with an int reduction.")
_native("poisson_nll_loss", lambda input, target, log_input, full, eps, reduction:
        poisson_nll_loss(input, target, log_input, full, eps=eps,
                         reduction=_reduction_of(reduction)),
        "torch.poisson_nll_loss(input, target, log_input, full, eps, reduction): every "
        "argument given, reduction an int.")
_native("triplet_margin_loss",
        lambda anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
        reduction=0: triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                         reduction=_reduction_of(reduction)),
        "torch.triplet_margin_loss: F.triplet_margin_loss with an int reduction.")
_native("ctc_loss", lambda log_probs, targets, input_lengths, target_lengths, blank=0,
        reduction=0, zero_infinity=False: ctc_loss(
            log_probs, targets, input_lengths, target_lengths, blank,
            _reduction_of(reduction), zero_infinity),
        "torch.ctc_loss: F.ctc_loss with an int reduction.")

# vmap (see ops/_op.py); the losses' tangents come from their backward rules. A reduced loss
# reduces within each sample: the batch runs with reduction="none", then each sample's
# elements are summed or averaged (the class-index losses average over the target weights
# w[t], per sample). Their backward does the reverse: the per-sample gradient is spread over
# that sample's positions and the "none" backward runs once on the whole batch.


def _reduced_per_sample(loss, size, reduction, weights=None):
    """Per-position losses (B, ...) reduced within each sample."""
    if reduction == "none":
        return loss
    total = loss.reshape(size, -1).sum(1)
    if reduction == "sum":
        return total
    count = weights.reshape(size, -1).sum(1) if weights is not None else \
        math.prod(loss.shape[1:])
    return total / count  # the mean of nothing is nan, as in torch


def _elementwise_loss_batch(op, values, batched, attrs):
    size = batch_rules.size_of(values, batched)
    loss = batch_rules.same_shape(op, values, batched, dict(attrs, reduction="none"))
    return _reduced_per_sample(loss, size, attrs["reduction"])


def _fold(t):
    return t.reshape((t.shape[0] * t.shape[1],) + tuple(t.shape[2:]))


def _class_loss_batch(op, values, batched, attrs):
    """nll_loss / cross_entropy: positions of all samples at once, reduced per sample."""
    if batched[2]:
        from ..._functorch.vmap import per_sample

        return per_sample(op, values, batched, attrs)
    size = batch_rules.size_of(values, batched)
    x, target, weight = values
    x = batch_rules.as_batched(x, batched[0], size)
    target = batch_rules.as_batched(target, batched[1], size)
    result = op(_fold(x), _fold(target), weight, **dict(attrs, reduction="none"))
    loss, rest = (result[0], result[1:]) if type(result) is tuple else (result, ())
    loss = loss.reshape(tuple(target.shape))
    _, _, w = _target_weight_tensors(target, weight, attrs["ignore_index"], x.dtype)
    loss = _reduced_per_sample(loss, size, attrs["reduction"], w)
    if not rest:
        return loss
    return (loss,) + tuple(r.reshape(tuple(target.shape)) for r in rest)


def _cross_entropy_backward_batch(op, values, batched, attrs):
    """The per-sample loss gradient spread over the sample's positions (as the kernel's own
    _spread_raw does for one sample), then one "none" backward for every position."""
    if batched[4]:
        from ..._functorch.vmap import per_sample

        return per_sample(op, values, batched, attrs)
    size = batch_rules.size_of(values, batched)
    grad_loss, x, lse, target, weight = (batch_rules.as_batched(v, b, size)
                                         if v is not None and k < 4 else v
                                         for k, (v, b) in enumerate(zip(values, batched)))
    reduction = attrs["reduction"]
    if reduction != "none":
        _, _, w = _target_weight_tensors(target, weight, attrs["ignore_index"], x.dtype)
        if reduction == "mean":
            grad_loss = grad_loss / w.reshape(size, -1).sum(1)
        grad_loss = grad_loss.reshape((size,) + (1,) * (target.ndim - 1)).expand(target.shape)
    grad = op(_fold(grad_loss), _fold(x), _fold(lse), _fold(target), weight,
              **dict(attrs, reduction="none"))
    return grad.reshape(tuple(x.shape))


for _op in (_mse_loss, _smooth_l1_loss, _huber_loss, _binary_cross_entropy, _bce_with_logits):
    _op.batch(_elementwise_loss_batch)
for _op in (_nll_loss, _cross_entropy):
    _op.batch(_class_loss_batch)
_cross_entropy_backward.batch(_cross_entropy_backward_batch)
del _op
