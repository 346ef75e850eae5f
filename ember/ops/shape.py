"""Views and reshaping: view, reshape, transpose, permute, expand, squeeze, unsqueeze, ...

Ops declared with `view=True` return NumPy views of their input: the result shares memory and
the version counter with its base (see `_dispatch._mark_views`). Their rules are views too, so
the backward of a chain of views costs no copies.

Read next: `index.py`.
"""
import numpy as np

from .._utils import parse_size, wrap_dim
from ._op import defop, export


def _view_kernel(xp, a, *, shape):
    try:
        return xp.reshape(a, shape, copy=False)
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.") from None


_view = defop("view", "none", _view_kernel, lambda g, a_shape: (g.reshape(a_shape),),
              view=True)


def _infer_shape(shape, numel):
    """Resolve a single -1 and check that the element count matches."""
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _fmt(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


@export(function=False, method=True)
def view(self, *shape):
    """Same memory, new shape; raises when the strides do not allow it (use reshape)."""
    from .. import _dtype as dt

    if len(shape) == 1 and isinstance(shape[0], dt.dtype):
        raise NotImplementedError("view(dtype) is not implemented yet")
    return _view(self, shape=_infer_shape(parse_size(shape), self.numel()))


@export(method=True)
def reshape(input, *shape):
    """A view when the memory layout allows it, else a copy."""
    shape = _infer_shape(parse_size(shape), input.numel())
    try:
        return _view(input, shape=shape)
    except RuntimeError:
        return _view(input.clone(), shape=shape)


def _transpose_rule(g, dim0, dim1):
    return (g.transpose(dim0, dim1),)


_transpose = defop("transpose", "none", lambda xp, a, *, dim0, dim1: xp.swapaxes(a, dim0, dim1),
                   _transpose_rule, view=True)


@export(method=True)
def transpose(input, dim0, dim1):
    n = input.ndim
    return _transpose(input, dim0=wrap_dim(dim0, n), dim1=wrap_dim(dim1, n))


@export(method=True)
def t(input):
    """Transpose a tensor of at most 2 dims."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    if input.ndim < 2:
        return input
    return _transpose(input, dim0=0, dim1=1)


_permute = defop("permute", "none", lambda xp, a, *, dims: xp.transpose(a, dims),
                 lambda g, dims: (g.permute(tuple(np.argsort(dims))),), view=True)


@export(method=True)
def permute(input, *dims):
    dims = parse_size(dims, "dims")
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {input.ndim} is not equal to len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _permute(input, dims=dims)


_expand = defop("expand", "none", lambda xp, a, *, shape: xp.broadcast_to(a, shape),
                lambda g, a_shape: (g.sum_to_size(a_shape),), view=True)


@export(function=False, method=True)
def expand(self, *sizes):
    """Broadcast to `sizes` without copying (-1 keeps a dim); the result is read-only memory."""
    sizes = parse_size(sizes)
    if len(sizes) < self.ndim:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(self.shape)}}}, size={list(sizes)})"
                           f": the number of sizes provided ({len(sizes)}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({self.ndim})")
    lead = len(sizes) - self.ndim
    shape = list(sizes)
    for i, n in enumerate(self.shape):
        want = sizes[lead + i]
        if want == -1:
            shape[lead + i] = n
        elif n != 1 and want != n:
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the "
                               f"existing size ({n}) at non-singleton dimension {lead + i}.  "
                               f"Target sizes: {list(sizes)}.  Tensor sizes: {list(self.shape)}")
    shape = tuple(shape)
    if shape == self._data.shape:
        return _view(self, shape=shape)
    return _expand(self, shape=shape)


@export(function=False, method=True)
def expand_as(self, other):
    return expand(self, other.shape)


_unsqueeze = defop("unsqueeze", "none", lambda xp, a, *, dim: xp.expand_dims(a, dim),
                   lambda g, dim: (g.squeeze(dim),), view=True)


@export(method=True)
def unsqueeze(input, dim):
    return _unsqueeze(input, dim=wrap_dim(dim, input.ndim + 1))


_squeeze = defop("squeeze", "none", lambda xp, a, *, dims: xp.squeeze(a, dims),
                 lambda g, a_shape: (g.reshape(a_shape),), view=True)


@export(method=True)
def squeeze(input, dim=None):
    """Drop size-1 dims (all of them, or those among `dim` that have size 1)."""
    shape = input.shape
    if dim is None:
        dims = tuple(i for i, n in enumerate(shape) if n == 1)
    else:
        wanted = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = tuple(sorted({wrap_dim(d, input.ndim) for d in wanted}))
        dims = tuple(d for d in dims if input.ndim and shape[d] == 1)
    return _squeeze(input, dims=dims)


def _unbind_kernel(xp, a, *, dim):
    lead = (slice(None),) * dim
    return tuple(a[lead + (i, Ellipsis)] for i in range(a.shape[dim]))


_unbind = defop("unbind", "none", _unbind_kernel, lambda g, dim: (stack(g, dim),), view=True)


@export(method=True)
def unbind(input, dim=0):
    """The slices along `dim`, as views."""
    return _unbind(input, dim=wrap_dim(dim, input.ndim))


def _stack_kernel(xp, *arrays, dim):
    return xp.stack(arrays, axis=dim)


_stack = defop("stack", "none", _stack_kernel, lambda g, dim: tuple(g.unbind(dim)))


@export
def stack(tensors, dim=0, *, out=None):
    tensors = tuple(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape)} at entry 0 and {list(t.shape)} at entry {i}")
    return _stack(*tensors, dim=wrap_dim(dim, len(shape) + 1))


@export(method=True)
def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, 1)
    start, end = wrap_dim(start_dim, input.ndim), wrap_dim(end_dim, input.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = input.shape
    middle = 1
    for n in shape[start:end + 1]:
        middle *= n
    return reshape(input, tuple(shape[:start]) + (middle,) + tuple(shape[end + 1:]))
