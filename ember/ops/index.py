"""Indexing: `x[...]` for reading and writing, gather/scatter, masked ops, nonzero.

Basic indexing (ints, slices, None, Ellipsis) is a view op. Its backward writes `g` into a
zero tensor of the input's shape at the same index (`basic_index_backward`, itself an op whose
backward is the indexing again, so double backward works).

Read next: `linalg.py`.
"""
from .._tensor import Tensor
from ._op import defop, export


def _normalize_index(index):
    """A tuple index whose result NumPy always returns as an array (a view), never a scalar."""
    if not isinstance(index, tuple):
        index = (index,)
    if not any(i is Ellipsis for i in index):
        index = index + (Ellipsis,)
    return index


def _basic_backward_kernel(xp, g, *, shape, index):
    out = xp.zeros(shape, dtype=g.dtype)
    out[index] = g
    return out


_basic_backward = defop("basic_index_backward", "none", _basic_backward_kernel,
                        lambda g, index: (_getitem(g, index=index),))
_getitem = defop("getitem", "none", lambda xp, a, *, index: a[index],
                 lambda g, a_shape, index: (_basic_backward(g, shape=a_shape, index=index),),
                 view=True, node_name="SliceBackward0")


def _is_basic(index):
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, slice)) and not isinstance(
        i, bool) for i in items)


def _check_bounds(self, index):
    """torch raises IndexError for out-of-range integers, naming the dim and size."""
    items = index if isinstance(index, tuple) else (index,)
    dim = 0
    for i in items:
        if i is None:
            continue
        if i is Ellipsis:
            dim = self.ndim - sum(1 for j in items if j is not None and j is not Ellipsis) + dim
            continue
        if dim >= self.ndim:
            raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
        if isinstance(i, int) and not -self.shape[dim] <= i < self.shape[dim]:
            raise IndexError(f"index {i} is out of bounds for dimension {dim} with size "
                             f"{self.shape[dim]}")
        dim += 1


@export(name="__getitem__", function=False, method=True)
def getitem(self, index):
    if _is_basic(index):
        _check_bounds(self, index)
        return _getitem(self, index=_normalize_index(index))
    raise NotImplementedError("advanced indexing is not implemented yet")


@export(name="__setitem__", function=False, method=True)
def setitem(self, index, value):
    if _is_basic(index):
        target = getitem(self, index)
        if isinstance(value, Tensor):
            target.copy_(value)
        else:
            target.fill_(value)
        return
    raise NotImplementedError("advanced index assignment is not implemented yet")
