"""Distances and normalisation: `F.cosine_similarity`, `F.pairwise_distance`, `F.pdist`,
`torch.cdist`, `F.normalize`, and `F.one_hot`.

cosine_similarity, pairwise_distance and normalize are short compositions of ember ops, as in
torch. `pdist` and `cdist` are primitives: their gradients follow torch's rules at the kinks
(`_distance_grad`), which differ from differentiating a norm -- 0 where a distance is 0, and
for the inf-norm the full gradient to every tied coordinate. For p = 2, cdist computes

    ||a - b||^2 = ||a||^2 + ||b||^2 - 2 a.b        (one matmul, no (P, R, M) difference tensor)

when torch would (compute_mode, or more than 25 rows by default), clamped at 0 before the
square root; otherwise every distance comes from the explicit differences.

Read next: ../../nn/modules/loss.py (the loss modules).
"""
import math

from ... import _dtype as dt
from ..._functorch import batch_rules
from ...autograd import grad_mode
from .._op import export, op
from .._public import write_out
from ..shape import broadcast_shapes, broadcast_tensors

__all__ = ["cosine_similarity", "pairwise_distance", "pdist", "normalize", "one_hot"]

_COMPUTE_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                  "donot_use_mm_for_euclid_dist": 2}


# ----------------------------------------------------------------------------------------------
# helpers


def _p_norm(xp, diff, p):
    """The p-norm of `diff` along its last axis (p = 0 counts the non-zero entries)."""
    if diff.shape[-1] == 0:
        return xp.zeros(diff.shape[:-1], dtype=diff.dtype)
    size = xp.abs(diff)
    if p == 0:
        return (size != 0).sum(axis=-1).astype(diff.dtype)
    if p == 1:
        return size.sum(axis=-1)
    if p == 2:
        return xp.sqrt((size * size).sum(axis=-1))
    if p == math.inf:
        return size.max(axis=-1)
    return (size ** p).sum(axis=-1) ** (1 / p)


def _distance_grad(diff, dist, g, p):
    """g * d dist / d diff, on Tensors (diff (..., M); dist and g broadcast over M), with torch's
    values at the kinks: 0 where the distance is 0, 0 where a coordinate difference is 0 and
    p < 1, and for p = inf the full g for each coordinate that attains the maximum."""
    if p == 0:
        return diff.new_zeros(diff.shape)
    if p == 1:
        return g * diff.sign()
    if p == math.inf:
        return g * diff.sign() * (diff.abs() == dist)
    safe_dist = dist + (dist == 0)                  # dist = 0 only where diff = 0 everywhere
    if p == 2:
        return g * diff / safe_dist
    size = diff.abs()
    nonzero = size != 0
    return g * diff.sign() * (size + ~nonzero) ** (p - 1) * nonzero / safe_dist ** (p - 1)


# ----------------------------------------------------------------------------------------------
# pdist and cdist


@op("none", name="pdist", node_name="PdistBackward0")
def _pdist(xp, x, *, p):
    rows, cols = xp.triu_indices(x.shape[0], 1)
    return _p_norm(xp, x[rows] - x[cols], p)


@_pdist.grad
def _pdist(g, x, out, p):
    from ..._creation import triu_indices

    pairs = triu_indices(x.shape[0], x.shape[0], 1, device=x.device)
    rows, cols = pairs[0], pairs[1]
    diff = x.index_select(0, rows) - x.index_select(0, cols)
    part = _distance_grad(diff, out.unsqueeze(-1), g.unsqueeze(-1), p)
    return (x.new_zeros(x.shape).index_add(0, rows, part).index_add(0, cols, -part),)


@export
def pdist(input, p=2):
    """The p-norm distance between every pair of rows of (N, M) input, as the N (N - 1) / 2
    upper-triangle entries of the distance matrix, row by row."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return _pdist(input, p=float(p))


def _squared_distances(xp, x1, x2):
    """||a||^2 + ||b||^2 - 2 a.b for all row pairs, through one matmul."""
    norms1 = (x1 * x1).sum(axis=-1)[..., :, None]
    norms2 = (x2 * x2).sum(axis=-1)[..., None, :]
    return norms1 + norms2 - 2 * xp.matmul(x1, xp.swapaxes(x2, -1, -2))


@op("none", name="cdist", node_name="CdistBackward0")
def _cdist(xp, x1, x2, *, p, use_mm):
    if use_mm:
        return xp.sqrt(xp.maximum(_squared_distances(xp, x1, x2), 0))
    return _p_norm(xp, x1[..., :, None, :] - x2[..., None, :, :], p)


@_cdist.grad
def _cdist(g, x1, x2, out, p, use_mm):
    if p == 2:
        # sum_j g_ij (a_i - b_j) / d_ij, as two matmuls (torch's _euclidean_dist_backward)
        ratio = g * (out != 0) / (out + (out == 0))
        grad1 = x1 * ratio.sum(-1, keepdim=True) - ratio @ x2
        grad2 = x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT @ x1
        return grad1, grad2
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    part = _distance_grad(diff, out.unsqueeze(-1), g.unsqueeze(-1), p)
    return part.sum(-2), -part.sum(-3)


@export
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between the rows of x1 (B, P, M) and of x2 (B, R, M): (B, P, R), with
    broadcast batch dims B."""
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{x.ndim}D")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{dt.scalar_name(x.dtype)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {dt.scalar_name(x1.dtype)} but found "
                           f"{dt.scalar_name(x2.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    broadcast_shapes(x1.shape[:-2], x2.shape[:-2])  # torch's error for batch dims that clash
    mode = _COMPUTE_MODES[compute_mode]
    use_mm = (p == 2 and x1.numel() > 0 and x2.numel() > 0 and
              (mode == 1 or mode is None and (x1.shape[-2] > 25 or x2.shape[-2] > 25)))
    return _cdist(x1, x2, p=float(p), use_mm=use_mm)


# ----------------------------------------------------------------------------------------------
# composites


@export
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim (eps keeps the gradient finite at x1 = x2)."""
    dim = max(x1.ndim, x2.ndim) - 1
    return (x1 - x2 + eps).norm(p, dim, keepdim)


@export
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 x2) / (max(||x1||, eps) max(||x2||, eps)) along `dim` of the broadcast shape.

    Each input is divided by its own norm before the product (the result stays in [-1, 1]).
    As in torch, the norms are clamped without autograd seeing it: the gradient is that of
    x / ||x|| even where the clamp is active."""
    common = dt.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{dt.scalar_name(common)}")
    if not x1.dtype.is_floating_point:
        x1 = x1.to(common)
    if not x2.dtype.is_floating_point:
        x2 = x2.to(common)
    x1, x2 = broadcast_tensors(x1, x2)
    norm1 = x1.norm(2, dim, keepdim=True).clone()  # clone: norm's saved output stays intact
    norm2 = x2.norm(2, dim, keepdim=True).clone()
    with grad_mode.no_grad():
        norm1.clamp_min_(eps)
        norm2.clamp_min_(eps)
    return ((x1 / norm1) * (x2 / norm2)).sum(dim)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps) along `dim`."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return write_out(out, input / denom, "normalize")


# ----------------------------------------------------------------------------------------------
# one_hot


@op("none", name="one_hot", differentiable=False)
def _one_hot(xp, a, *, num_classes):
    if a.size == 0 and num_classes == -1:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if a.size:
        if a.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        largest = int(a.max())
        if num_classes == -1:
            num_classes = largest + 1
        elif largest >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (a[..., None] == xp.arange(num_classes)).astype(xp.int64)


def one_hot(tensor, num_classes=-1):
    """int64 indices (*) -> (*, num_classes) with a 1 at each index; num_classes=-1 uses
    max + 1."""
    if tensor.dtype is not dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    return _one_hot(tensor, num_classes=int(num_classes))


# vmap (see ops/_op.py): cdist takes leading batch dims (both operands batched); one_hot
# adds a trailing dim; pdist runs per sample. Their tangents come from their backward rules.
_cdist.batch(lambda op, values, batched, attrs: _cdist(
    *batch_rules.all_batched(values, batched), **attrs))
_one_hot.batch(batch_rules.leading)
