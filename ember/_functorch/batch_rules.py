"""The batching rules many ops share; an op module names one beside each op (`batch=`).

A batching rule runs an op once on a whole batch (see vmap.py):

    rule(op, values, batched, attrs) -> the result(s), batch dim first

`values` are the op's arguments with every batched tensor's batch dim at the front; `batched`
says which ones are (the others are the same for every sample: captured tensors, numbers).
The rules below cover the common layouts:

    pointwise        elementwise ops: the sample dims are aligned from the right by inserting
                     size-1 dims after the batch dim; unbatched operands broadcast as they are
    same_shape       elementwise kernels that want operands of one shape (fused backward
                     kernels): as pointwise, then every operand expanded to the full shape
    leading          ops that treat leading dims as independent (matrix ops on the last two
                     dims, layer norm, padding, linear): the batch dim is one more of them
    dims("dim", ..)  ops whose attributes name dims: each is shifted by one (`sum(dim=1)`
                     runs as `sum(dim=2)`); unbatched tensor arguments are expanded
    aligned("dim")   both: operands lined up as for pointwise ops, then dims shifted
                     (softmax's backward, cross products)
    sizes("shape")   ops whose attributes are shapes (view, expand): the batch size is
                     prepended
    fold             ops on (N, C, ...) inputs (convolution, pooling): the batch is folded
                     into N and unfolded from every result

The attribute rules (`dims`, `sizes`) can also `translate` attributes alone, which the
backward of a view (`view_scatter`) uses to place gradients in a batched buffer.

Read next: the rules beside the ops (ops/*.py), then `eager_transforms.py`.
"""
__all__ = ["pointwise", "same_shape", "leading", "dims", "aligned", "sizes", "fold", "size_of",
           "logical_ndim", "pad", "as_batched", "all_batched", "shift"]


def size_of(values, batched):
    """The batch size: dim 0 of any batched value."""
    for v, b in zip(values, batched):
        if b:
            return v.shape[0]
    raise AssertionError("a batching rule ran without a batched argument")


def logical_ndim(v, is_batched):
    """The number of dims of one sample of `v`."""
    return v.ndim - 1 if is_batched else v.ndim


def pad(v, ndim):
    """Batched `v` with size-1 dims inserted after the batch dim, to `ndim` sample dims."""
    missing = ndim - (v.ndim - 1)
    if missing <= 0:
        return v
    shape = tuple(v.shape)
    return v.reshape(shape[:1] + (1,) * missing + shape[1:])


def as_batched(v, is_batched, size):
    """`v` with a batch dim in front: itself when batched, else expanded (no copy)."""
    return v if is_batched else v.expand((size,) + tuple(v.shape))


def all_batched(values, batched):
    """Every tensor argument batched (unbatched ones expanded); other values kept."""
    from .._tensor import Tensor

    size = size_of(values, batched)
    return [as_batched(v, b, size) if isinstance(v, Tensor) else v
            for v, b in zip(values, batched)]


def shift(d):
    """A sample dim (or tuple of dims) as a dim of the batch."""
    if d is None:
        return None
    if isinstance(d, (tuple, list)):
        return tuple(x + 1 for x in d)
    return d + 1


def pointwise(op, values, batched, attrs):
    """Elementwise ops: batched operands get size-1 dims after the batch dim so that every
    operand's sample dims line up from the right, as broadcasting expects."""
    from .._tensor import Tensor

    ndim = max(logical_ndim(v, b) for v, b in zip(values, batched) if isinstance(v, Tensor))
    aligned = [pad(v, ndim) if b else v for v, b in zip(values, batched)]
    return op(*aligned, **attrs)


def same_shape(op, values, batched, attrs):
    """As `pointwise`, with every tensor operand expanded to the common shape (no copy)."""
    from .._tensor import Tensor

    ndim = max(logical_ndim(v, b) for v, b in zip(values, batched) if isinstance(v, Tensor))
    aligned = [pad(v, ndim) if b else v for v, b in zip(values, batched)]
    shape = _broadcast_shape([tuple(v.shape) for v in aligned if isinstance(v, Tensor)])
    full = [v.expand(shape) if isinstance(v, Tensor) and tuple(v.shape) != shape else v
            for v in aligned]
    return op(*full, **attrs)


def _broadcast_shape(shapes):
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n != 1:
                out[i] = n
    return tuple(out)


def leading(op, values, batched, attrs):
    """Ops whose leading dims are independent: the batch is one more leading dim of the first
    argument. Other batched tensor arguments run once per sample."""
    if any(batched[1:]):
        from .vmap import per_sample

        return per_sample(op, values, batched, attrs)
    return op(*values, **attrs)


class _AttrRule:
    """A rule that rewrites attributes only: `translate(attrs, batched)` gives the attributes
    of the op on the batch (so other rules can reuse the mapping)."""

    def __call__(self, op, values, batched, attrs):
        return op(*all_batched(values, batched), **self.translate(attrs, size_of(values,
                                                                                 batched)))

    def translate(self, attrs, size):
        raise NotImplementedError


class dims(_AttrRule):
    """Shift the named dim attributes by one; unbatched tensor arguments are expanded."""

    def __init__(self, *names):
        self.names = names

    def translate(self, attrs, size):
        return {k: shift(v) if k in self.names else v for k, v in attrs.items()}


class aligned(dims):
    """Line the operands up as `pointwise` does, then shift the named dims (which count the
    dims of the broadcast sample shape)."""

    def __call__(self, op, values, batched, attrs):
        from .._tensor import Tensor

        ndim = max(logical_ndim(v, b) for v, b in zip(values, batched) if isinstance(v, Tensor))
        lined_up = [pad(v, ndim) if b else v for v, b in zip(values, batched)]
        return super().__call__(op, lined_up, batched, attrs)


class sizes(_AttrRule):
    """Prepend the batch size to the named shape attributes (and shift named dims)."""

    def __init__(self, *names, dims=()):
        self.names = names
        self.dim_names = dims

    def translate(self, attrs, size):
        out = {}
        for k, v in attrs.items():
            if k in self.names:
                v = (size,) + tuple(v)
            elif k in self.dim_names:
                v = shift(v)
            out[k] = v
        return out


class fold:
    """Ops on (N, C, ...) inputs (convolution, pooling): the batch is folded into N -- a
    (B, N, C, ...) batch runs as (B * N, C, ...) -- and unfolded from every result. `inputs`
    are the positions of the (N, ...) tensors (None: all; unbatched ones are expanded; other
    tensors must be shared by the samples, else the op runs per sample); `shapes` name
    attributes holding such a tensor's shape, whose N is multiplied by B."""

    def __init__(self, inputs=(0,), shapes=()):
        self.inputs = inputs
        self.shapes = shapes

    def __call__(self, op, values, batched, attrs):
        from .._tensor import Tensor

        inputs = range(len(values)) if self.inputs is None else self.inputs
        if any(b for k, b in enumerate(batched) if k not in inputs):
            from .vmap import per_sample

            return per_sample(op, values, batched, attrs)
        size = size_of(values, batched)
        values = list(values)
        for k in inputs:
            if isinstance(values[k], Tensor):
                v = as_batched(values[k], batched[k], size)
                values[k] = v.reshape((size * v.shape[1],) + tuple(v.shape[2:]))
        attrs = {k: _times_batch(v, size) if k in self.shapes else v for k, v in attrs.items()}
        return unfold(op(*values, **attrs), size)


def _times_batch(shape, size):
    return (shape[0] * size,) + tuple(shape[1:])


def unfold(result, size):
    """Results of a folded op, (B * N, ...) -> (B, N, ...)."""
    if type(result) is tuple:
        return tuple(unfold(r, size) for r in result)
    return result.reshape((size, result.shape[0] // size) + tuple(result.shape[1:]))
