"""Embeddings: embedding (a row lookup) and embedding_bag (lookups reduced per bag).

embedding is one op, out = weight[indices]. Its gradient sends each row of g back to the
weight row it came from, repeated indices accumulating: `embedding_backward`, one `add.at`
over whole rows (no Python loop). That is an op too, linear in g, whose own rule is the lookup
again, so double backward works. Two options reweight g's rows before they are summed:
padding_idx (positions holding it contribute nothing, so that row never learns) and
scale_grad_by_freq (each position is divided by how often its index occurs in the batch).

max_norm renormalises, in place and outside autograd, every looked-up row whose norm exceeds
max_norm (to max_norm / (norm + 1e-7) times itself), as torch's embedding_renorm_ does.

embedding_bag is composed of ember ops: the lookup of every index, weighted by
per_sample_weights, then a per-bag reduction -- index_add for sum and mean (mean divides by
the bag's size without padding), scatter_reduce("amax") for max. Empty bags give zeros.

Read next: the modules in ember/nn/modules/ (sparse.py holds Embedding and EmbeddingBag).
"""
from ... import _creation
from ... import _dtype as dt
from ..._functorch import batch_rules
from ...autograd import grad_mode
from .._op import LINEAR, export, op
from ..index import searchsorted
from ..pointwise import where

__all__ = ["embedding", "embedding_bag"]


@op("none", name="embedding", node_name="EmbeddingBackward0", grad_inputs=("weight",))
def _embedding(xp, weight, indices, *, padding_idx, scale_grad_by_freq):
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    return xp.take(weight, indices, axis=0)


@_embedding.grad
def _embedding(g, indices, weight_shape, padding_idx, scale_grad_by_freq):
    scale = _position_scale(indices, weight_shape[0], padding_idx, scale_grad_by_freq, g.dtype)
    if scale is not None:
        g = g * scale.unsqueeze(-1)
    return _embedding_backward(g, indices, num_weights=weight_shape[0]), None


def _position_scale(indices, num_weights, padding_idx, scale_grad_by_freq, dtype):
    """The factor each looked-up position's gradient gets (None: all ones)."""
    scale = None
    if scale_grad_by_freq:
        counts = indices.flatten().bincount(minlength=num_weights)
        scale = counts[indices].to(dtype).reciprocal()
    if padding_idx is not None:
        keep = (indices != padding_idx).to(dtype)
        scale = keep if scale is None else scale * keep
    return scale


@op("none", name="embedding_backward")
def _embedding_backward(xp, g, indices, *, num_weights):
    """Rows of g summed into the (num_weights, dim) rows their indices name.

    `add.at` does this but pays per index. Instead: one scatter writes each index's first row
    (the other positions are sent to a scratch row past the end, so no target repeats); then
    the remaining positions, sorted by index so that each index's are consecutive, are added in
    rounds -- round r adds the r-th position of every index that has more than r of them, one
    fancy-indexed `+=` whose targets are distinct. Indices with more than _ROUNDS positions are
    summed group by group, so the number of NumPy calls stays bounded whatever the repetition."""
    dim = g.shape[-1]
    rows, index = g.reshape(-1, dim), indices.reshape(-1)
    out = xp.zeros((num_weights + 1, dim), dtype=g.dtype)  # row num_weights: the scratch row
    if index.size == 0:
        return out[:num_weights]
    order = xp.argsort(index, kind="stable")
    ordered = index[order]
    starts = xp.flatnonzero(xp.concatenate([xp.ones(1, bool), ordered[1:] != ordered[:-1]]))
    counts = xp.diff(xp.concatenate([starts, xp.asarray([index.size])]))
    target = xp.full(index.size, num_weights, dtype=index.dtype)
    target[order[starts]] = ordered[starts]
    out[target] = rows
    heavy = counts > _ROUNDS
    for start, count in zip(starts[heavy].tolist(), counts[heavy].tolist()):
        out[ordered[start]] += rows[order[start + 1:start + count]].sum(axis=0)
    starts, counts = starts[~heavy], counts[~heavy]
    for r in range(1, int(counts.max()) if counts.size else 0):
        live = starts[counts > r]
        out[ordered[live]] += rows[order[live + r]]
    return out[:num_weights]


_ROUNDS = 32  # at most this many `+=` rounds; more frequent indices are summed one by one


@_embedding_backward.grad
def _embedding_backward(g, indices):
    return _embedding(g, indices, padding_idx=None, scale_grad_by_freq=False), None


# ----------------------------------------------------------------------------------------------
# argument checks and max_norm


def _check_indices(indices, fn_name):
    if indices.dtype not in (dt.int64, dt.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {indices.type()} instead "
                           f"(while checking arguments for {fn_name})")


def _wrap_padding_idx(padding_idx, num_weights, message):
    """padding_idx in [0, num_weights), or None; negative values count from the end."""
    if padding_idx is None:
        return None
    if padding_idx >= num_weights or padding_idx < -num_weights:
        raise AssertionError(message)
    return padding_idx + num_weights if padding_idx < 0 else padding_idx


@export
def embedding_renorm_(input, indices, max_norm, norm_type):
    """Scale each row of `input` named in `indices` whose `norm_type`-norm exceeds max_norm
    down to norm max_norm, in place (torch.embedding_renorm_)."""
    with grad_mode.no_grad():
        rows = indices.flatten().unique()
        picked = input.index_select(0, rows)
        norms = picked.norm(norm_type, dim=1, keepdim=True)
        scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).to(input.dtype)
        input.index_copy_(0, rows, picked * scale)
    return input


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` picked by the integer tensor `input`: shape input.shape + (dim,)."""
    if sparse:
        raise NotImplementedError("ember has no sparse tensors: embedding(sparse=True) is not "
                                  "supported; use sparse=False")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_indices(input, "embedding")
    padding_idx = _wrap_padding_idx(padding_idx, weight.shape[0],
                                    "Padding_idx must be within num_embeddings")
    if max_norm is not None:
        embedding_renorm_(weight.detach(), input, max_norm, norm_type)
    return _embedding(weight, input, padding_idx=padding_idx,
                      scale_grad_by_freq=bool(scale_grad_by_freq))


@export(name="embedding")
def _torch_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """torch.embedding(weight, indices, ...): weight first; padding_idx=-1 means none."""
    return embedding(indices, weight, None if padding_idx < 0 else padding_idx, None, 2.0,
                     scale_grad_by_freq, sparse)


# ----------------------------------------------------------------------------------------------
# embedding_bag


def _bag_layout(input, offsets, per_sample_weights, include_last_offset):
    """Flat indices, bag starts, the number of bags and flat per-sample weights."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        bags, length = input.shape
        offsets = _creation.arange(bags, dtype=input.dtype, device=input.device) * length
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        return input.reshape(-1), offsets, bags, per_sample_weights
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    return input, offsets, bags, per_sample_weights


def _bag_of_each_index(indices, offsets, bags, include_last_offset):
    """Which bag each flat position belongs to, and which positions belong to any bag."""
    if offsets.numel() and int(offsets[0]) != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {int(offsets[0])}")
    positions = _creation.arange(indices.numel(), dtype=indices.dtype, device=indices.device)
    starts = offsets[:bags].to(positions.dtype)
    bag = searchsorted(starts, positions, right=True) - 1
    inside = bag >= 0
    if include_last_offset and offsets.numel():
        inside = inside & (positions < offsets[-1])
    return bag, inside


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Sum, mean or max of the embeddings of each bag of indices: input (B, L) holds B bags of
    L indices; a 1-d input is cut into bags at `offsets`. Returns (B, dim)."""
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    indices, offsets, bags, per_sample_weights = _bag_layout(input, offsets, per_sample_weights,
                                                             include_last_offset)
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    if sparse:
        raise NotImplementedError("ember has no sparse tensors: embedding_bag(sparse=True) is "
                                  "not supported; use sparse=False")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    _check_indices(indices, "embedding_bag")
    padding_idx = _wrap_padding_idx(padding_idx, weight.shape[0],
                                    "padding_idx must be within num_embeddings")
    if max_norm is not None:
        embedding_renorm_(weight.detach(), indices, max_norm, norm_type)
    return _reduce_bags(weight, indices, offsets, bags, per_sample_weights, mode, padding_idx,
                        include_last_offset, scale_grad_by_freq)


def _reduce_bags(weight, indices, offsets, bags, per_sample_weights, mode, padding_idx,
                 include_last_offset, scale_grad_by_freq):
    bag, inside = _bag_of_each_index(indices, offsets, bags, include_last_offset)
    if padding_idx is not None:
        inside = inside & (indices != padding_idx)
    if not bool(inside.all()):  # drop padding and positions past the last bag
        indices, bag = indices[inside], bag[inside]
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights[inside]
    rows = _embedding(weight, indices, padding_idx=None,
                      scale_grad_by_freq=bool(scale_grad_by_freq))
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    out = rows.new_zeros((bags, weight.shape[1]))
    if mode == "max":
        where_to = bag.unsqueeze(1).expand(rows.shape)
        return out.scatter_reduce(0, where_to, rows, "amax", include_self=False)
    out = out.index_add(0, bag, rows)
    if mode == "mean":
        sizes = bag.bincount(minlength=bags).clamp(min=1).to(out.dtype)
        out = out / sizes.unsqueeze(1)
    return out


# ----------------------------------------------------------------------------------------------
# forward mode and vmap (see ops/_op.py). A lookup is linear in the table. Batching: batched
# indices look up the shared table as any index shape does; per-sample tables (and the
# per-sample table gradients of vmap(grad(...))) are one table of B * num_weights rows, each
# sample's indices offset by its own rows.


def _offset(indices, size, rows):
    """Each sample's indices moved to its own block of `rows` rows."""
    from ..._creation import arange

    shift = arange(size, device=indices.device).reshape((size,) + (1,) * (indices.ndim - 1))
    return indices + shift * rows


def _embedding_batch(op, values, batched, attrs):
    weight, indices = values
    if not batched[0]:
        return _embedding(weight, indices, **attrs)
    size, rows = weight.shape[0], weight.shape[1]
    indices = batch_rules.as_batched(indices, batched[1], size)
    flat = weight.reshape((size * rows,) + tuple(weight.shape[2:]))
    return _embedding(flat, _offset(indices, size, rows), **dict(attrs, padding_idx=None))


def _embedding_backward_batch(op, values, batched, attrs):
    g, indices = values
    size = batch_rules.size_of(values, batched)
    g = batch_rules.as_batched(g, batched[0], size)
    rows = attrs["num_weights"]
    indices = _offset(batch_rules.as_batched(indices, batched[1], size), size, rows)
    grad = _embedding_backward(g, indices, num_weights=size * rows)
    return grad.reshape((size, rows) + tuple(grad.shape[1:]))


_embedding.jvp(LINEAR).batch(_embedding_batch)
_embedding_backward.jvp(LINEAR).batch(_embedding_backward_batch)
