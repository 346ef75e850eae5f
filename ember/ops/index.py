"""Indexing: `x[...]` for reading and writing, gather/scatter, masked ops, take/put, nonzero,
searchsorted.

`x[index]` runs in torch's two stages:

    x[0, 1:3, idx, None]   basic part   x[0, 1:3, :, None]   one view (ints, slices, None)
                           advanced     v[:, idx, :]         a copy (int arrays, bool masks)

so the ints are gone before the advanced part is placed: x[0, :, idx] has shape (4, len(idx))
for a (3, 4, 5) tensor, where NumPy (which counts the 0 as advanced) would answer (len(idx), 4).
The advanced part is an *index tuple*: one entry per dim of the view, `slice(None)` or an int64
array (bool masks become their nonzero() arrays, negative indices are wrapped). Every op below
that reads or writes scattered positions speaks that one form:

    index          a[index]                    backward: index_backward (adds g back)
    index_backward zeros, then += g at index   backward: index
    index_put      a[index] = v  (or +=)       backward: g with holes / g[index]

gather/scatter address `a` with an index tuple of arrays too: along `dim` the index values, along
every other dim the element's own position (`_along_dim`). Repeated positions must add up, which
NumPy's `a[i] += v` does not do: `_ufunc_at` uses `ufunc.at` on flat positions (about 4x faster
than the n-d form on a contiguous target).

Ops that write into their input ("writers": index_put, index_add, scatter, masked_fill, ...) are
declared once as a function that modifies an array in place; the out-of-place op runs it on a
copy and the in-place method runs it on the tensor's own memory (`Op.writes`), so
`x[idx] = v` costs the size of idx, not two copies of x.

Read next: `linalg.py`.
"""
import builtins
import numbers
import operator
import warnings

import numpy as np

from .. import _backend
from .. import _dtype as dt
from .._creation import _is_sequence as is_sequence
from .._functorch import batch_rules
from .._tensor import Tensor
from .._utils import wrap_dim
from ._dispatch import autocast_args, broadcast_error, call_unary
from ._op import LINEAR, defop, export, op
from .pointwise import where

# ----------------------------------------------------------------------------------------------
# shared helpers: shapes, index tuples, scattered writes


def _shape_str(shape):
    return "[" + ", ".join(str(n) for n in shape) + "]"


def _broadcast_shapes(*shapes):
    """The common shape of `shapes`, or None when they do not broadcast (pure Python, so it
    works the same for NumPy and CuPy)."""
    if len(shapes) == 1 or builtins.all(s == shapes[0] for s in shapes):
        return tuple(shapes[0]) if shapes else ()
    ndim = builtins.max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        for k, n in enumerate(s, ndim - len(s)):
            if n != 1:
                if out[k] not in (1, n):
                    return None
                out[k] = n
    return tuple(out)


def _layout(index, shape):
    """Where `a[index]` puts its dims, for an index tuple (slice(None) or int arrays):
    returns (result shape, first result dim of the broadcast index block, block shape).

    NumPy and torch agree here: the block goes where the first array was if the arrays are
    adjacent, else in front; the sliced dims keep their order around it."""
    arrays = [d for d, i in enumerate(index) if not isinstance(i, slice)]
    block = _broadcast_shapes(*(index[d].shape for d in arrays))
    adjacent = arrays[-1] - arrays[0] == len(arrays) - 1
    start = arrays[0] if adjacent else 0
    sliced = [shape[d] for d, i in enumerate(index) if isinstance(i, slice)]
    sliced += list(shape[len(index):])
    return tuple(sliced[:start]) + block + tuple(sliced[start:]), start, block


def _full_coords(xp, index, shape):
    """`index` as one int array per dim of `shape`, broadcasting to the shape of `a[index]`:
    for every element of `a[index]`, its coordinates in `a`."""
    index = tuple(index) + (slice(None),) * (len(shape) - len(index))
    result, start, block = _layout(index, shape)
    ndim, end = len(result), start + len(block)
    coords, slot = [], 0  # slot: the next result dim a sliced input dim lands on
    for d, i in enumerate(index):
        if isinstance(i, slice):
            slot += len(block) if slot == start else 0
            where = [1] * ndim
            where[slot] = shape[d]
            coords.append(xp.arange(shape[d]).reshape(where))
            slot += 1
        else:
            coords.append(i.reshape((1,) * (end - i.ndim) + i.shape + (1,) * (ndim - end)))
    return tuple(coords), result


# CuPy has no multiply.at (NotImplementedError), and its add/maximum/minimum.at refuse some
# dtypes (TypeError: no bool, int8, int16; no float16 for maximum); NumPy's never raise these
_MISSING_AT = (NotImplementedError, TypeError)


def _ufunc_at(xp, ufunc, target, index, values):
    """`target[index] = ufunc(target[index], values)` where repeated positions combine (NumPy's
    `target[index] += values` would keep only one of them)."""
    coords, result = _full_coords(xp, index, target.shape)
    values = xp.broadcast_to(xp.asarray(values, dtype=target.dtype), result)
    if not target.flags.c_contiguous:
        try:
            ufunc.at(target, coords, values)  # the slower n-d form works on any strides
        except _MISSING_AT:  # CuPy: combine in a contiguous copy
            work = xp.ascontiguousarray(target)
            _ufunc_at(xp, ufunc, work, index, values)
            target[...] = work
        return
    flat = 0
    stride = 1
    for c, n in zip(reversed(coords), reversed(target.shape)):
        flat = flat + c * stride
        stride *= n
    positions = xp.broadcast_to(flat, result).reshape(-1)
    try:
        ufunc.at(target.reshape(-1), positions, values.reshape(-1))
    except _MISSING_AT:
        _ufunc_at_in_rounds(xp, ufunc, target.reshape(-1), positions, values.reshape(-1))


def _ufunc_at_in_rounds(xp, ufunc, target, positions, values):
    """`ufunc.at` on a 1-d target for libraries without it (CuPy's multiply): each round
    combines the first remaining occurrence of every position, so no position repeats within
    a round and plain indexing is exact. Rounds = the largest number of repeats."""
    while positions.size:
        _, first = xp.unique(positions, return_index=True)
        hit = positions[first]
        target[hit] = ufunc(target[hit], values[first])
        rest = xp.ones(positions.size, dtype=bool)
        rest[first] = False
        positions, values = positions[rest], values[rest]


def _add_at(xp, target, index, values):
    _ufunc_at(xp, xp.add, target, index, values)


def _along(dim, index):
    """The index tuple that picks `index` along `dim` (index_select, index_add, ...)."""
    return (slice(None),) * dim + (index.reshape(-1),)


def _along_dim(xp, index, dim):
    """gather/scatter's index tuple: element i of `index` addresses `index[i]` along `dim` and
    its own position i_d along every other dim d."""
    coords = []
    for d, n in enumerate(index.shape):
        if d == dim:
            coords.append(index)
        else:
            coords.append(xp.arange(n).reshape([n if k == d else 1 for k in range(index.ndim)]))
    return tuple(coords)


def _corner(index_shape):
    """The slice of a gather/scatter source that the index covers (src may be larger)."""
    return tuple(slice(0, n) for n in index_shape)


def _scalar_for(value, dtype):
    """A Python number converted to `dtype` (1.7 -> 1 for integers, as torch), or torch's error
    when it does not fit; returned as a Python number, which every `xp` accepts."""
    if isinstance(value, complex) and not dtype.is_complex:
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")
    try:
        return np.asarray(value, dtype=dtype.np).item()
    except (OverflowError, ValueError):
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without "
                           "overflow") from None


def _writer(name, promote="none", **options):
    """Declare a writing op from `write(xp, a, ...)`, which modifies `a` in place (see
    `Op.writes`): out of place it runs on a copy, as a `_` method on the tensor's memory."""
    return op(promote, name, writes=True, **options)


def _check_index_dtype(name, index, allowed=(dt.int64, dt.int32), expected="int32/int64"):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index.dtype not in allowed:
        raise RuntimeError(f"{name}(): Expected dtype {expected} for index but got: "
                           f"{dt.scalar_name(index.dtype)}")


def _check_range(index, size, dim):
    """torch's IndexError for indices (an array) outside [-size, size)."""
    if index.size == 0:
        return
    low, high = int(index.min()), int(index.max())
    if low < -size or high >= size:
        raise IndexError(f"index {high if high >= size else low} is out of bounds for dimension "
                         f"{dim} with size {size}")


def _wrap_negative(xp, index, size):
    """Negative indices count from the end; the result is always a fresh int64 array."""
    index = index.astype(np.int64)
    if index.size and int(index.min()) < 0:
        index = xp.where(index < 0, index + size, index)
    return index


def _pad(g, shape):
    """`g` in the leading corner of a zero tensor of `shape` (gradients of a source that was
    only partly read)."""
    if tuple(g.shape) == tuple(shape):
        return g
    return _basic_backward(g, shape=tuple(shape), index=_corner(g.shape) + (Ellipsis,))


# ----------------------------------------------------------------------------------------------
# basic indexing: a view
#
# One kernel, four ops that differ only in their node's name: torch names the node after the
# last view it applied (x[1] SelectBackward0, x[1:] SliceBackward0, x[None] UnsqueezeBackward0,
# x[...] AliasBackward0).


def _basic_backward_kernel(xp, g, *, shape, index):
    out = xp.zeros(shape, dtype=g.dtype)
    out[index] = g
    return out


_basic_backward = defop("basic_index_backward", "none", _basic_backward_kernel,
                        lambda g, index: (_getitem(g, index=index),))


def _basic_rule(g, a_shape, index):
    return (_basic_backward(g, shape=a_shape, index=index),)


def _basic_kernel(xp, a, *, index):
    return a[index]


_getitem = defop("getitem", "none", _basic_kernel, _basic_rule, view=True,
                 node_name="SliceBackward0")
_VIEWS = {
    "slice": _getitem,
    "select": defop("getitem_select", "none", _basic_kernel, _basic_rule, view=True,
                    node_name="SelectBackward0"),
    "unsqueeze": defop("getitem_unsqueeze", "none", _basic_kernel, _basic_rule, view=True,
                       node_name="UnsqueezeBackward0"),
    None: defop("getitem_alias", "none", _basic_kernel, _basic_rule, view=True,
                node_name="AliasBackward0"),
}
_SELECT = _VIEWS["select"]


# ----------------------------------------------------------------------------------------------
# parsing an index


def _as_index_array(item, device):
    """A tensor, NumPy array or (nested) sequence used as an index: a Python int or bool when
    it is 0-d, else an array on `device` -- bool (a mask) or int64."""
    if isinstance(item, Tensor):
        if item.dtype in (dt.bool, dt.uint8):
            arr = item._data.astype(np.bool_, copy=False)
        elif item.dtype in (dt.int64, dt.int32):
            arr = item._data
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    else:
        arr = np.asarray(item)
        if arr.dtype != np.bool_:
            if arr.dtype.kind not in "iuf" and arr.size:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long "
                                 f"or byte Variables are valid indices (got {type(item).__name__})")
            arr = arr.astype(np.int64)  # torch reads [0.5] or a float array as longs
    if arr.ndim == 0:
        value = arr.item()
        return builtins.bool(value) if arr.dtype == np.bool_ else builtins.int(value)
    return _backend.transfer(arr, device)


def _as_item(item, device):
    """One component of an index, converted: int, bool, slice, None, Ellipsis or an array."""
    if item is None or item is Ellipsis or isinstance(item, (builtins.bool, slice)):
        return item
    if isinstance(item, builtins.int) or isinstance(item, np.integer):
        return builtins.int(item)
    if isinstance(item, np.bool_):
        return builtins.bool(item)
    if isinstance(item, (Tensor, np.ndarray, list, tuple)) or is_sequence(item):
        return _as_index_array(item, device)  # a range or deque too, as torch
    if isinstance(item, str):
        raise TypeError(f"new(): invalid data type '{type(item).__name__}'")
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(item).__name__})")


def _sequence_as_tuple(index):
    """torch's legacy rule: a short list holding a slice, None, Ellipsis, a tensor or another
    sequence means a tuple (x[[0, [1]]] is x[0, [1]])."""
    if not isinstance(index, list) or len(index) >= 32:
        return False
    return builtins.any(i is None or i is Ellipsis or isinstance(
        i, (slice, Tensor, np.ndarray, list, tuple)) or is_sequence(i) for i in index)


def _dims_used(item):
    """How many input dims a converted index item consumes."""
    kind = type(item)
    if kind is builtins.int or kind is slice:
        return 1
    if item is None or item is Ellipsis or kind is builtins.bool:
        return 0
    return item.ndim if item.dtype == np.bool_ else 1


def _too_many(self, item):
    if self.ndim == 0 and isinstance(item, builtins.int):
        return IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                          "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    if self.ndim == 0 and isinstance(item, slice):
        return IndexError("slice() cannot be applied to a 0-dim tensor.")
    return IndexError(f"too many indices for tensor of dimension {self.ndim}")


class _Plan:
    """An index split into torch's two stages (see the module docstring).

    basic      ints, slices and None, applied to the input as one view
    last       the name of the last view torch would apply ("select", "slice", "unsqueeze")
    advanced   {view dim: int array} for the advanced part (masks as their nonzero())
    shape      the view's shape (grows as items are read)"""

    def __init__(self, self_tensor, items, single):
        self.t = self_tensor
        self.basic, self.advanced, self.shape = [], {}, []
        self.from_masks = set()  # view dims indexed by a mask's nonzero(): in range already
        self.last = None
        self.single = single  # x[1:] (not a tuple): torch applies even a full slice
        self.dim = 0          # the next input dim to consume
        self.in_shape = self_tensor._data.shape
        used = builtins.sum(_dims_used(i) for i in items)
        if used > len(self.in_shape):
            raise _too_many(self.t, next(i for i in items if _dims_used(i)))
        for item in items:
            self._read(item, used)
        self.shape.extend(self.in_shape[self.dim:])

    def _read(self, item, used):
        in_shape = self.in_shape
        size = in_shape[self.dim] if self.dim < len(in_shape) else None
        if size is None and _dims_used(item):  # only after a second Ellipsis
            raise _too_many(self.t, item)
        if item is Ellipsis:
            n = len(in_shape) - used
            self.basic += [slice(None)] * n
            self.shape.extend(in_shape[self.dim:self.dim + n])
            self.dim += n
        elif item is None or isinstance(item, builtins.bool):
            if isinstance(item, builtins.bool):  # True: x[None][[0]]; False: x[None][[]]
                xp = _backend.namespace(self.t.device)
                self.advanced[len(self.shape)] = xp.zeros(builtins.int(item), dtype=np.int64)
            self.basic.append(None)
            self.shape.append(1)
            self.last = "unsqueeze"
        elif isinstance(item, builtins.int):
            if not -size <= item < size:
                raise IndexError(f"index {item} is out of bounds for dimension {self.dim} with "
                                 f"size {size}")
            self.basic.append(item)
            self.dim += 1
            self.last = "select"
        elif isinstance(item, slice):
            self._read_slice(item, size)
        elif item.dtype == np.bool_:
            self._read_mask(item)
        else:
            self.advanced[len(self.shape)] = item
            self.basic.append(slice(None))
            self.shape.append(size)
            self.dim += 1

    def _read_slice(self, item, size):
        if item.step is not None:
            step = operator.index(item.step)
            if step == 0:
                raise ValueError("slice step cannot be zero")
            if step < 0:
                raise ValueError("step must be greater than zero")
        start, stop, step = item.indices(size)
        stop = builtins.max(stop, start)
        self.basic.append(slice(start, stop, step))
        self.shape.append(len(range(start, stop, step)))
        if self.single or (start, stop, step) != (0, size, 1):
            self.last = "slice"
        self.dim += 1

    def _read_mask(self, mask):
        here = len(self.shape)
        full = self.shape + list(self.in_shape[self.dim:])
        for k, n in enumerate(mask.shape):
            if n != full[here + k]:
                raise IndexError(f"The shape of the mask {_shape_str(mask.shape)} at index {k} "
                                 f"does not match the shape of the indexed tensor "
                                 f"{_shape_str(full)} at index {here + k}")
        xp = _backend.namespace(self.t.device)
        for k, positions in enumerate(xp.nonzero(mask)):
            self.advanced[here + k] = positions
            self.from_masks.add(here + k)
        self.basic += [slice(None)] * mask.ndim
        self.shape.extend(self.in_shape[self.dim:self.dim + mask.ndim])
        self.dim += mask.ndim

    def index_tuple(self):
        """The advanced part as an index tuple (bounds checked, negatives wrapped), or None."""
        if not self.advanced:
            return None
        xp = _backend.namespace(self.t.device)
        arrays = [self.advanced[d] for d in sorted(self.advanced)]
        if _broadcast_shapes(*(a.shape for a in arrays)) is None:
            shapes = ", ".join(_shape_str(a.shape) for a in arrays)
            raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together "
                             f"with shapes {shapes}")
        index = [slice(None)] * len(self.shape)
        for k, d in enumerate(sorted(self.advanced)):
            if d in self.from_masks:
                index[d] = self.advanced[d]
                continue
            _check_range(self.advanced[d], self.shape[d], dim=k)
            index[d] = _wrap_negative(xp, self.advanced[d], self.shape[d])
        return tuple(index)


def _split(self, index):
    """`self[index]` in two stages: (the basic part as a view, the advanced index tuple or
    None). With an advanced part and no basic op, the view is `self` itself."""
    single = not isinstance(index, tuple)
    if _sequence_as_tuple(index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated; "
                      "use x[tuple(seq)] instead of x[seq].", UserWarning, stacklevel=3)
        index = tuple(index)
    items = index if isinstance(index, tuple) else (index,)
    plan = _Plan(self, [_as_item(i, self.device) for i in items], single)
    advanced = plan.index_tuple()
    if advanced is not None and plan.last is None:
        return self, advanced
    return _VIEWS[plan.last](self, index=tuple(plan.basic) + (Ellipsis,)), advanced


# ----------------------------------------------------------------------------------------------
# advanced indexing: index / index_backward / index_put


def _index_backward_kernel(xp, g, *, shape, index):
    out = xp.zeros(shape, dtype=g.dtype)
    _add_at(xp, out, index, g)
    return out


_index_backward = defop("index_backward", "none", _index_backward_kernel,
                        lambda g, index: (_index(g, index=index),))
_index = defop("index", "none", lambda xp, a, *, index: a[index],
               lambda g, a_shape, index: (_index_backward(g, shape=a_shape, index=index),))


@_writer("index_put")
def _index_put(xp, a, values, *, index, accumulate):
    if accumulate:
        _add_at(xp, a, index, values)
    else:
        a[index] = values  # repeated positions: the last write wins, as on torch's CPU


@_index_put.grad
def _index_put(g, index, accumulate):
    keep = g if accumulate else _index_put(g, g.new_zeros(()), index=index, accumulate=False)
    return keep, _index(g, index=index)


@export(name="__getitem__", function=False, method=True)
def getitem(self, index):
    """`self[index]`: a view for ints, slices, None and Ellipsis; a copy when the index holds
    tensors, lists, arrays or bools (see the module docstring for how the two combine)."""
    if type(index) is int and self._data.ndim:  # the common x[i], without the general parser
        size = self._data.shape[0]
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {size}")
        return call_unary(_SELECT, self, {"index": (index, Ellipsis)})
    view, advanced = _split(self, index)
    return view if advanced is None else _index(view, index=advanced)


def _values_for(self, value):
    """The value of an advanced write: tensors must have self's dtype (as torch's index_put_);
    numbers become 0-d tensors of self's dtype."""
    if isinstance(value, Tensor):
        if value.dtype is not self.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{dt.scalar_name(self.dtype)} for the destination and "
                               f"{dt.scalar_name(value.dtype)} for the source.")
        if value.device != self.device:
            value = value.to(self.device)
        return value
    _check_number(self, value)
    xp = _backend.namespace(self.device)
    return Tensor._make(xp.asarray(_scalar_for(value, self.dtype), dtype=self.dtype.np),
                        device=self.device)


def _check_number(self, value):
    if not isinstance(value, (numbers.Number, np.bool_)):
        raise TypeError(f"can't assign a {type(value).__name__} to a "
                        f"ember.{dt.scalar_name(self.dtype)}Tensor")


def _fit_values(values, result_shape):
    """Values broadcast to a write's result shape; extra leading 1s are dropped (torch allows
    x[[0, 1]] = ones(1, 2, 4) for a (2, 4) result)."""
    shape = tuple(values.shape)
    extra = len(shape) - len(result_shape)
    if extra > 0 and builtins.all(n == 1 for n in shape[:extra]):
        values = values.reshape(shape[extra:])
        shape = shape[extra:]
    if _broadcast_shapes(shape, result_shape) != tuple(result_shape):
        raise RuntimeError(f"shape mismatch: value tensor of shape {_shape_str(values.shape)} "
                           f"cannot be broadcast to indexing result of shape "
                           f"{_shape_str(result_shape)}")
    return values


def _put_advanced(view, index, value, accumulate):
    values = _fit_values(_values_for(view, value), _layout(index, view.shape)[0])
    _index_put.inplace(view, values, index=index, accumulate=accumulate)


@export(name="__setitem__", function=False, method=True)
def setitem(self, index, value):
    """`self[index] = value`: a basic index writes through the view (copy_ / fill_); an
    advanced one is index_put_ on the view (so both get torch's in-place autograd)."""
    view, advanced = _split(self, index)
    if advanced is None:
        if isinstance(value, Tensor):
            view.copy_(value)
        else:
            _check_number(self, value)
            view.fill_(_scalar_for(value, self.dtype))
        return
    _put_advanced(view, advanced, value, accumulate=False)


def _indices_tuple(self, indices):
    """index_put's `indices` (a tuple of index tensors) as an index tuple on self."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    items = []
    for k, i in enumerate(indices):
        if not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got "
                            f"{type(i).__name__}")
        if i.ndim == 0 and i.dtype in (dt.int64, dt.int32):  # a 0-d index stays an index
            items.append(_backend.transfer(i._data, self.device))
        else:
            items.append(_as_index_array(i, self.device))
    if builtins.sum(_dims_used(i) for i in items) > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim} (got "
                         f"{len(indices)})")
    plan = _Plan(self, items, single=False)
    index = plan.index_tuple()
    if index is None or plan.last is not None:
        raise NotImplementedError("index_put needs at least one index tensor, and 0-d bool "
                                  "indices are not supported")
    return index


@export(function=False, method=True)
def index_put_(self, indices, values, accumulate=False):
    """`self[indices] = values` (or `+=` with accumulate=True, adding repeated positions)."""
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    _put_advanced(self, _indices_tuple(self, indices), values, accumulate)
    return self


@export(method=True)
def index_put(input, indices, values, accumulate=False):
    """Out-of-place index_put_: a copy of input with values written (or added) at indices."""
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    index = _indices_tuple(input, indices)
    values = _fit_values(_values_for(input, values), _layout(index, input.shape)[0])
    return _index_put(input, values, index=index, accumulate=accumulate)


# ----------------------------------------------------------------------------------------------
# along one dim: index_select, index_add, index_copy, index_fill


def _check_vector(name, index, message=None):
    if index.ndim > 1:
        raise IndexError(message or f"{name}(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {dt.scalar_name(index.dtype)} and size: "
                         f"{list(index.shape)}")


def _index_select_kernel(xp, a, index, *, dim):
    if a.ndim == 0:
        return a.reshape(1)[index.reshape(-1)].reshape(())
    return xp.take(a, index.reshape(-1), axis=dim)


_index_select = defop("index_select", "none", _index_select_kernel,
                      lambda g, a_shape, index, dim: (
                          _index_add(g.new_zeros(a_shape), index, g, dim=dim, alpha=1), None),
                      grad_inputs=("a",))


@export(method=True)
def index_select(input, dim, index):
    """The slices `index` (a vector of ints) of `input` along `dim`."""
    if not isinstance(index, Tensor) or index.dtype not in (dt.int64, dt.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    _check_vector("index_select", index, "index_select(): Index is supposed to be a vector")
    dim = wrap_dim(dim, input.ndim)
    size = input.shape[dim] if input.ndim else 1
    if index.numel() and (int(index._data.min()) < 0 or int(index._data.max()) >= size):
        raise IndexError("index out of range in self")
    return _index_select(input, index, dim=dim)


def _one_d(xp, a):
    """0-d tensors act as 1-d ones of one element in the along-a-dim ops."""
    return a.reshape(1) if a.ndim == 0 else a


@_writer("index_add")
def _index_add(xp, a, index, source, *, dim, alpha):
    if alpha != 1:
        source = source * xp.asarray(alpha).astype(a.dtype)
    _add_at(xp, _one_d(xp, a), _along(dim, index), _one_d(xp, source))


@_index_add.grad
def _index_add(g, index, source_shape, dim, alpha):
    grad = index_select(g, dim, index) if g.ndim else g.reshape(1)
    grad = grad.reshape(source_shape)
    return g, None, grad if alpha == 1 else grad * alpha


@_writer("index_copy")
def _index_copy(xp, a, index, source, *, dim):
    _one_d(xp, a)[_along(dim, index)] = _one_d(xp, source)


@_index_copy.grad
def _index_copy(g, index, source_shape, dim):
    grad = index_select(g, dim, index).reshape(source_shape)
    return _index_fill(g, index, dim=dim, value=0), None, grad


@_writer("index_fill")
def _index_fill(xp, a, index, *, dim, value):
    _one_d(xp, a)[_along(dim, index)] = value


_index_fill.grad(lambda g, index, dim: (_index_fill(g, index, dim=dim, value=0), None))


@_writer("index_fill_tensor", node_name="IndexFillBackward1")
def _index_fill_tensor(xp, a, index, value, *, dim):
    _one_d(xp, a)[_along(dim, index)] = value


@_index_fill_tensor.grad
def _index_fill_tensor(g, index, dim):
    filled = Tensor._make(_backend.namespace(g.device).unique(index._data), device=g.device)
    return _index_fill(g, index, dim=dim, value=0), None, index_select(g, dim, filled).sum()


def _check_along(name, self, dim, index, source=None):
    """Argument checks shared by index_add_/index_copy_/index_fill_ (torch words each a little
    differently; the exception types follow torch). Returns the wrapped dim."""
    dim = wrap_dim(dim, self.ndim)
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    allowed = (dt.int64, dt.int32) if name == "index_add_" else (dt.int64,)
    if index.dtype not in allowed:
        error = IndexError if name == "index_fill_" else RuntimeError
        raise error(f"{name}(): Expected dtype {'int32/int64' if len(allowed) > 1 else 'int64'}"
                    f" for index but got: {dt.scalar_name(index.dtype)}")
    if index.ndim > 1:
        error = RuntimeError if name == "index_fill_" else IndexError
        raise error(f"{name}(): Index is supposed to be a vector, but got dim: {index.ndim} "
                    f"with type: {dt.scalar_name(index.dtype)} and size: {list(index.shape)}")
    if source is not None:
        _check_source(name, self, dim, index, source)
    size = self.shape[dim] if self.ndim else 1
    if index.numel() and (int(index._data.min()) < 0 or int(index._data.max()) >= size):
        bad = int(index._data.max()) if int(index._data.max()) >= size else int(
            index._data.min())
        error = RuntimeError if name == "index_add_" else IndexError
        raise error(f"{name}(): index {bad} is out of bounds for dimension {dim} with size "
                    f"{size}")
    return dim


def _check_source(name, self, dim, index, source):
    if source.dtype is not self.dtype:
        raise RuntimeError(f"{name}(): self ({dt.scalar_name(self.dtype)}) and source "
                           f"({dt.scalar_name(source.dtype)}) must have the same scalar type")
    shape, src = list(self.shape or [1]), list(source.shape or [1])
    if len(src) != len(shape) or builtins.any(
            a != b for k, (a, b) in enumerate(zip(shape, src)) if k != dim):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(self.shape)} "
                           f"source.shape = {list(source.shape)}")
    if index.numel() != src[dim]:
        error = RuntimeError if name == "index_add_" else IndexError
        raise error(f"{name}(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({src[dim]}), for dim: {dim}")


@export(function=False, method=True)
def index_add_(self, dim, index, source, *, alpha=1):
    """self[..., index[i], ...] += alpha * source[..., i, ...] along `dim`; repeats add up."""
    dim = _check_along("index_add_", self, dim, index, source)
    return _index_add.inplace(self, index, source, dim=dim, alpha=alpha)


@export(method=True)
def index_add(input, dim, index, source, *, alpha=1):
    """A copy of input with `alpha * source[..., i, ...]` added to `input[..., index[i], ...]`
    along `dim`; repeated indices add up."""
    dim = _check_along("index_add_", input, dim, index, source)
    return _index_add(input, index, source, dim=dim, alpha=alpha)


@export(function=False, method=True)
def index_copy_(self, dim, index, source):
    """self[..., index[i], ...] = source[..., i, ...] along `dim`."""
    dim = _check_along("index_copy_", self, dim, index, source)
    return _index_copy.inplace(self, index, source, dim=dim)


@export(method=True)
def index_copy(input, dim, index, source):
    """input with input[..., index[i], ...] = source[..., i, ...] along `dim` (a copy)."""
    input, source = autocast_args("index_copy", input, source)  # promoted under CPU autocast
    dim = _check_along("index_copy_", input, dim, index, source)
    return _index_copy(input, index, source, dim=dim)


def _fill_args(self, dim, index, value):
    dim = _check_along("index_fill_", self, dim, index)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        return _index_fill_tensor, (index, value.to(self.dtype)), {"dim": dim}
    _check_number(self, value)
    return _index_fill, (index,), {"dim": dim, "value": _scalar_for(value, self.dtype)}


@export(function=False, method=True)
def index_fill_(self, dim, index, value):
    """self[..., index[i], ...] = value along `dim` (a number or a 0-d tensor)."""
    writer, args, attrs = _fill_args(self, dim, index, value)
    return writer.inplace(self, *args, **attrs)


@export(method=True)
def index_fill(input, dim, index, value):
    """A copy of input with `input[..., index[i], ...] = value` along `dim` (a number or a 0-d
    tensor)."""
    writer, args, attrs = _fill_args(input, dim, index, value)
    return writer(input, *args, **attrs)


# ----------------------------------------------------------------------------------------------
# gather / scatter


def _gather_kernel(xp, a, index, *, dim):
    if a.ndim == 0:
        return a.reshape(1)[index.reshape(1)].reshape(())
    return a[_along_dim(xp, index, dim)]


_gather = defop("gather", "none", _gather_kernel, lambda g, a_shape, index, dim: (
    _scatter_add(g.new_zeros(a_shape), index, g, dim=dim), None), grad_inputs=("a",))


def _check_gather(name, self, dim, index, src=None):
    """torch's checks for gather/scatter: same ndim; index no larger than self (except along
    dim) and than src; every index in range. Returns the wrapped dim."""
    dim = wrap_dim(dim, self.ndim)
    _check_index_dtype(name, index)
    if index.ndim != self.ndim and builtins.max(index.ndim, self.ndim) > 1:
        what = "input" if name == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} "
                           "tensor")
    too_big = [d for d in range(index.ndim) if d != dim and index.shape[d] > self.shape[d]]
    if src is not None and not too_big:
        too_big = [d for d in range(index.ndim) if index.shape[d] > src.shape[d]]
    if too_big and src is None:
        raise RuntimeError(f"Size does not match at dimension {too_big[0]} expected index "
                           f"{list(index.shape)} to be no larger than self {list(self.shape)} "
                           f"apart from dimension {dim}")
    if too_big:
        raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                           f"{list(self.shape)} apart from dimension {dim} and to be no larger "
                           f"size than src {list(src.shape)}")
    size = self.shape[dim] if self.ndim else 1
    xp = _backend.namespace(self.device)
    if index.numel():
        low, high = int(xp.min(index._data)), int(xp.max(index._data))
        if low < 0 or high >= size:
            raise RuntimeError(f"index {high if high >= size else low} is out of bounds for "
                               f"dimension {dim} with size {size}")
    return dim


@export(method=True)
def gather(input, dim, index, *, sparse_grad=False):
    """`out[i][j] = input[index[i][j]][j]` (dim=0): values picked along `dim`."""
    if sparse_grad:
        raise NotImplementedError("gather(sparse_grad=True) needs sparse tensors")
    dim = _check_gather("gather", input, dim, index)
    return _gather(input, index, dim=dim)


def _one_d_args(xp, a, index, src):
    if a.ndim == 0:
        return a.reshape(1), index.reshape(1), _one_d(xp, src) if hasattr(src, "ndim") else src
    return a, index, src


@_writer("scatter", grad_inputs=("a", "src"))
def _scatter(xp, a, index, src, *, dim):
    a, index, src = _one_d_args(xp, a, index, src)
    a[_along_dim(xp, index, dim)] = src[_corner(index.shape)]


_scatter.grad(lambda g, index, src_shape, dim: (
    _scatter_value(g, index, dim=dim, value=0), None, _pad(_gather(g, index, dim=dim),
                                                           src_shape)))


@_writer("scatter_value", node_name="ScatterBackward1", grad_inputs=("a",))
def _scatter_value(xp, a, index, *, dim, value):
    a, index, _ = _one_d_args(xp, a, index, None)
    a[_along_dim(xp, index, dim)] = value


_scatter_value.grad(lambda g, index, dim: (_scatter_value(g, index, dim=dim, value=0), None))


@_writer("scatter_add", grad_inputs=("a", "src"))
def _scatter_add(xp, a, index, src, *, dim):
    a, index, src = _one_d_args(xp, a, index, src)
    _add_at(xp, a, _along_dim(xp, index, dim), src[_corner(index.shape)])


_scatter_add.grad(lambda g, index, src_shape, dim: (
    g, None, _pad(_gather(g, index, dim=dim), src_shape)))


def _ufunc(xp, reduce):
    return {"sum": xp.add, "add": xp.add, "mean": xp.add, "prod": xp.multiply,
            "multiply": xp.multiply, "amax": xp.maximum, "amin": xp.minimum}[reduce]


@_writer("scatter_legacy_reduce", node_name="ScatterBackward0")
def _scatter_legacy(xp, a, index, src, *, dim, reduce):
    """scatter(..., reduce='add' | 'multiply'): torch keeps it without a derivative."""
    a, index, src = _one_d_args(xp, a, index, src)
    if hasattr(src, "ndim"):
        src = src[_corner(index.shape)]
    _ufunc_at(xp, _ufunc(xp, reduce), a, _along_dim(xp, index, dim), src)


@_scatter_legacy.grad
def _scatter_legacy(g):
    raise RuntimeError("derivative for aten::scatter is not implemented")


def _scatter_args(name, self, dim, index, src, value, reduce):
    """Parse scatter's overloads: (dim, index, src) or (dim, index, value), optional reduce."""
    if src is not None and not isinstance(src, Tensor):
        src, value = None, src  # scatter(dim, index, 2.0): the fourth argument is a value
    if (src is None) == (value is None):
        raise TypeError(f"{name}() expects exactly one of 'src' (a Tensor) or 'value'")
    if src is not None and src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    dim = _check_gather("scatter", self, dim, index, src)
    if reduce is not None:
        source = src if src is not None else _scalar_for(value, self.dtype)
        return _scatter_legacy, (index, source), {"dim": dim, "reduce": reduce}
    if src is not None:
        return _scatter, (index, src), {"dim": dim}
    _check_number(self, value)
    return _scatter_value, (index,), {"dim": dim, "value": _scalar_for(value, self.dtype)}


@export(method=True)
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """A copy of input with `input[index[i][j]][j] = src[i][j]` (dim=0); `src` may be a
    number."""
    writer, args, attrs = _scatter_args("scatter", input, dim, index, src, value, reduce)
    return writer(input, *args, **attrs)


@export(function=False, method=True)
def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    """In place: `self[index[i][j]][j] = src[i][j]` (dim=0), or `value` there; returns self.
    With `reduce='add'` or `'multiply'` it combines instead (not differentiable)."""
    writer, args, attrs = _scatter_args("scatter_", self, dim, index, src, value, reduce)
    return writer.inplace(self, *args, **attrs)


def _scatter_add_args(self, dim, index, src):
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add(): argument 'src' must be Tensor, not "
                        f"{type(src).__name__}")
    if src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    return _check_gather("scatter_add", self, dim, index, src)


@export(method=True)
def scatter_add(input, dim, index, src):
    """A copy of input with src added at the gather positions; repeated positions add up."""
    dim = _scatter_add_args(input, dim, index, src)
    return _scatter_add(input, index, src, dim=dim)


@export(function=False, method=True)
def scatter_add_(self, dim, index, src):
    """In place: add src to self at the gather positions; repeated positions add up."""
    dim = _scatter_add_args(self, dim, index, src)
    return _scatter_add.inplace(self, index, src, dim=dim)


def _is_float(np_dtype):
    return dt.from_numpy_dtype(np_dtype).is_floating_point  # bfloat16's NumPy kind is "V"


def _identity(reduce, dtype):
    """The start value of a reduction that ignores self (include_self=False)."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if _is_float(dtype):
        lowest, highest = -np.inf, np.inf
    elif dtype.kind == "b":
        lowest, highest = False, True
    else:
        lowest, highest = np.iinfo(dtype).min, np.iinfo(dtype).max
    return lowest if reduce == "amax" else highest


@_writer("scatter_reduce")
def _scatter_reduce(xp, a, index, src, *, dim, reduce, include_self):
    a, index, src = _one_d_args(xp, a, index, src)
    where = _along_dim(xp, index, dim)
    src = src[_corner(index.shape)]
    if not include_self:
        a[where] = _identity(reduce, a.dtype)
    _ufunc_at(xp, _ufunc(xp, reduce), a, where, src)
    if reduce == "mean":
        count = xp.zeros(a.shape, dtype=np.int64)
        _add_at(xp, count, where, 1)
        hit = count > 0
        total = (count + builtins.int(include_self))[hit]
        if _is_float(a.dtype):
            a[hit] = (a[hit] / total).astype(a.dtype)
        else:
            a[hit] = xp.floor_divide(a[hit], total)


@_scatter_reduce.grad
def _scatter_reduce(g, a, index, src, out, dim, reduce, include_self):
    """Derivatives per reduction; a rule of their own as each needs its own saved values."""
    if g.ndim == 0:
        raise NotImplementedError("the gradient of scatter_reduce on 0-d tensors")
    src_used = src[_corner(index.shape)]
    if reduce == "sum":
        grad_a, grad_src = g, _gather(g, index, dim=dim)
    elif reduce == "mean":
        count = _scatter_add(g.new_zeros(a.shape), index, g.new_ones(index.shape), dim=dim)
        count = count + builtins.int(include_self)
        share = g / count.masked_fill(count.eq(0), 1)
        grad_a, grad_src = share, _gather(share, index, dim=dim)
    elif reduce == "prod":
        grad_a, grad_src = _prod_grads(g, a, index, src_used, out, dim, include_self)
    else:
        grad_a, grad_src = _extreme_grads(g, a, index, src_used, out, dim)
    if not include_self:
        grad_a = _scatter_value(grad_a, index, dim=dim, value=0)
    return grad_a, None, _pad(grad_src, src.shape)


def _prod_grads(g, a, index, src, out, dim, include_self):
    """d prod / d x = the product of the others: out / x, except where x is 0 -- then the
    product is recomputed with that 0 replaced by 1 (and is 0 if another factor is 0 too)."""
    def reduce_with(base, source):
        return _scatter_reduce(base, index, source, dim=dim, reduce="prod",
                               include_self=include_self)

    nonzero_a = a.masked_fill(a.eq(0), 1)
    grad_a = g * reduce_with(nonzero_a, src) / nonzero_a
    src_zero = src.eq(0)
    zeros_here = _gather(_scatter_add(g.new_zeros(a.shape), index, src_zero.to(g.dtype),
                                      dim=dim), index, dim=dim)
    lone_zero = zeros_here.eq(1).masked_fill(src_zero.eq(False), False)
    without_it = reduce_with(a, src.masked_fill(lone_zero, 1))
    grad_src = where(lone_zero, _gather(g * without_it, index, dim=dim),
                       _gather(g * out, index, dim=dim) / src.masked_fill(src_zero, 1))
    return grad_a, grad_src


def _extreme_grads(g, a, index, src, out, dim):
    """amax / amin: the gradient is shared evenly among all elements equal to the result."""
    a_wins = a.eq(out).to(g.dtype)
    src_wins = src.eq(_gather(out, index, dim=dim)).to(g.dtype)
    share = g / _scatter_add(a_wins, index, src_wins, dim=dim)
    return a_wins * share, src_wins * _gather(share, index, dim=dim)


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_args(self, dim, index, src, reduce):
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    return _scatter_add_args(self, dim, index, src)


@export(method=True)
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Reduce src into a copy of input at the gather positions (sum, prod, mean, amax, amin)."""
    dim = _scatter_reduce_args(input, dim, index, src, reduce)
    return _scatter_reduce(input, index, src, dim=dim, reduce=reduce, include_self=include_self)


@export(function=False, method=True)
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """In place: reduce src into self at the gather positions (sum, prod, mean, amax, amin).
    `include_self=False` leaves self's own values out of the positions written to."""
    dim = _scatter_reduce_args(self, dim, index, src, reduce)
    return _scatter_reduce.inplace(self, index, src, dim=dim, reduce=reduce,
                                   include_self=include_self)


# ----------------------------------------------------------------------------------------------
# masked ops


@_writer("masked_fill", grad_inputs=("a",))
def _masked_fill(xp, a, mask, *, value):
    xp.copyto(a, value, where=mask, casting="unsafe")


_masked_fill.grad(lambda g, mask: (_masked_fill(g, mask, value=0), None))


@_writer("masked_fill_tensor", node_name="MaskedFillBackward1", grad_inputs=("a", "value"))
def _masked_fill_tensor(xp, a, mask, value):
    xp.copyto(a, value.astype(a.dtype), where=mask, casting="unsafe")


_masked_fill_tensor.grad(lambda g, mask: (_masked_fill(g, mask, value=0), None,
                                          _masked_select(g, mask).sum()))


def _check_mask(name, mask):
    if not isinstance(mask, Tensor):
        raise TypeError(f"{name}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask.dtype is not dt.bool:
        kind = {"uint8": "unsigned char", "float32": "float", "float64": "double",
                "int64": "long int", "int32": "int"}.get(mask.dtype.name, mask.dtype.name)
        if name == "masked_fill_":
            raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with "
                               f"dtype {kind}")
        raise RuntimeError(f"{name}: expected BoolTensor for mask")


def _broadcast_to(name, shape, mask_shape, inplace):
    """The shape the result has: in place, mask must broadcast to self's shape."""
    shape = tuple(shape)
    common = _broadcast_shapes(shape, tuple(mask_shape))
    if common is None:
        raise RuntimeError(broadcast_error([shape, tuple(mask_shape)]))
    if inplace and common != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(common)}")
    return common


def _fill_value_args(self, mask, value):
    _check_mask("masked_fill_", mask)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        return _masked_fill_tensor, (mask, value), {}
    _check_number(self, value)
    return _masked_fill, (mask,), {"value": _scalar_for(value, self.dtype)}


@export(function=False, method=True)
def masked_fill_(self, mask, value):
    """self[mask] = value, with mask broadcast to self's shape."""
    writer, args, attrs = _fill_value_args(self, mask, value)
    _broadcast_to("masked_fill_", self.shape, mask.shape, inplace=True)
    return writer.inplace(self, *args, **attrs)


@export(method=True)
def masked_fill(input, mask, value):
    """A copy of input (broadcast with mask) with value where mask is True."""
    writer, args, attrs = _fill_value_args(input, mask, value)
    shape = _broadcast_to("masked_fill", input.shape, mask.shape, inplace=False)
    if shape != tuple(input.shape):
        input = input.expand(shape)
    return writer(input, *args, **attrs)


@op("none", name="masked_select")
def _masked_select(xp, a, mask):
    shape = _broadcast_shapes(a.shape, mask.shape)
    return xp.broadcast_to(a, shape)[xp.broadcast_to(mask, shape)]


@_masked_select.grad
def _masked_select(g, a_shape, mask):
    shape = _broadcast_shapes(tuple(a_shape), tuple(mask.shape))
    return _masked_scatter(g.new_zeros(shape), mask, g), None


@export(method=True)
def masked_select(input, mask):
    """The elements of input (broadcast with mask) where mask is True, as a 1-d tensor."""
    _check_mask("masked_select", mask)
    _broadcast_to("masked_select", input.shape, mask.shape, inplace=False)
    return _masked_select(input, mask)


@_writer("masked_scatter")
def _masked_scatter(xp, a, mask, source):
    where = xp.broadcast_to(mask, a.shape)
    a[where] = source.reshape(-1)[:int(where.sum())]


@_masked_scatter.grad
def _masked_scatter(g, mask, source_shape):
    taken = _masked_select(g, mask)
    numel = 1
    for n in source_shape:
        numel *= n
    return (_masked_fill(g, mask, value=0), None,
            _pad(taken, (numel,)).reshape(source_shape))


def _masked_scatter_args(name, self, mask, source):
    _check_mask(name, mask)
    if not isinstance(source, Tensor):
        raise TypeError(f"{name}(): argument 'source' must be Tensor, not "
                        f"{type(source).__name__}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{dt.scalar_name(self.dtype)} and {dt.scalar_name(source.dtype)}")
    shape = _broadcast_to(name, self.shape, mask.shape, inplace=name.endswith("_"))
    xp = _backend.namespace(self.device)
    if int(xp.broadcast_to(mask._data, shape).sum()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return shape


@export(function=False, method=True)
def masked_scatter_(self, mask, source):
    """Copy the elements of source, in order, to the positions where mask is True."""
    _masked_scatter_args("masked_scatter_", self, mask, source)
    return _masked_scatter.inplace(self, mask, source)


@export(method=True)
def masked_scatter(input, mask, source):
    """A copy of input with the elements of source, in order, where mask is True.
    input and mask broadcast together; source needs at least as many elements as mask has Trues."""
    shape = _masked_scatter_args("masked_scatter", input, mask, source)
    if shape != tuple(input.shape):
        input = input.expand(shape)
    return _masked_scatter(input, mask, source)


# ----------------------------------------------------------------------------------------------
# flat positions: take, put_, take_along_dim


def _take_kernel(xp, a, index):
    flat = a.reshape(-1)
    return flat[xp.where(index < 0, index + flat.size, index)]


_take = defop("take", "none", _take_kernel, lambda g, a_shape, index: (
    _put(g.new_zeros(a_shape), index, g, accumulate=True), None))


def _check_flat(name, self, index):
    if not isinstance(index, Tensor) or index.dtype is not dt.int64:
        got = dt.scalar_name(index.dtype) if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {got}")
    n = self.numel()
    if index.numel():
        low, high = int(index._data.min()), int(index._data.max())
        if low < -n or high >= n:
            bad = high if high >= n else low
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             "elements.")


@export(method=True)
def take(input, index):
    """input.flatten()[index] (negative indices count from the end); shaped like index."""
    _check_flat("take", input, index)
    return _take(input, index)


@_writer("put")
def _put(xp, a, index, source, *, accumulate):
    flat = index.reshape(-1)
    flat = xp.where(flat < 0, flat + a.size, flat)
    where = xp.unravel_index(flat, a.shape) if a.ndim else (flat,)
    target = a if a.ndim else a.reshape(1)
    if accumulate:
        _add_at(xp, target, where, source.reshape(-1))
    else:
        target[where] = source.reshape(-1)


@_put.grad
def _put(g, index, source_shape, accumulate):
    keep = g if accumulate else _put(g, index, g.new_zeros(index.shape), accumulate=False)
    return keep, None, _take(g, index).reshape(source_shape)


def _put_args(self, index, source):
    _check_flat("put_", self, index)
    if source.dtype is not self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {dt.scalar_name(self.dtype)} and source.dtype = "
                           f"{dt.scalar_name(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() "
                         f"= {index.numel()}")


@export(function=False, method=True)
def put_(self, index, source, accumulate=False):
    """self.flatten()[index] = source (or += with accumulate), in place."""
    _put_args(self, index, source)
    return _put.inplace(self, index, source, accumulate=accumulate)


@export(method=True)
def put(input, index, source, accumulate=False):
    """A copy of input with `flatten()[index] = source` (or `+=` with accumulate).
    index is int64 (negative counts from the end); source has index's number of elements."""
    _put_args(input, index, source)
    return _put(input, index, source, accumulate=accumulate)


@export(method=True)
def take_along_dim(input, indices, dim=None):
    """gather after broadcasting input and indices over every dim but `dim` (dim=None: over
    the flattened input)."""
    if indices.dtype is not dt.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{dt.scalar_name(indices.dtype)}")
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, and "
                           f"{indices.ndim} dimensions for indices")
    dim = wrap_dim(dim, input.ndim)
    sizes = list(input.shape)
    sizes[dim] = indices.shape[dim]
    common = _broadcast_shapes(tuple(sizes), tuple(indices.shape))
    if common is None:
        raise RuntimeError(broadcast_error([tuple(sizes), tuple(indices.shape)]))
    wanted = list(common)
    wanted[dim] = input.shape[dim]
    if tuple(wanted) != tuple(input.shape):
        input = input.expand(wanted)
    if common != tuple(indices.shape):
        indices = indices.expand(common)
    return gather(input, dim, indices)


# ----------------------------------------------------------------------------------------------
# positions of nonzero elements; sorted search (never differentiable)

_nonzero = defop("nonzero", "none", lambda xp, a: xp.argwhere(a), differentiable=False)
_nonzero_tuple = defop("nonzero_tuple", "none", lambda xp, a: xp.nonzero(_one_d(xp, a)),
                       differentiable=False)


@export(method=True)
def nonzero(input, *, as_tuple=False):
    """The indices of nonzero elements: an (n, ndim) int64 tensor, or one tensor per dim."""
    if as_tuple:
        return tuple(_nonzero_tuple(input))
    return _nonzero(input)


@export(method=True)
def argwhere(input):
    """nonzero(input) as an (n, ndim) tensor."""
    return _nonzero(input)


def where_condition(condition):
    """torch.where(condition) with one argument: nonzero(condition, as_tuple=True).

    The three-argument where lives in pointwise.py, which calls this for the one-argument
    form."""
    return nonzero(condition, as_tuple=True)


def _binary_search(xp, seq, values, right):
    """Insertion points of `values` rows in sorted `seq` rows, all rows at once: log2(n)
    vectorised halvings instead of a Python loop over the rows."""
    n = seq.shape[-1]
    lo = xp.zeros(values.shape, dtype=np.int64)
    hi = xp.full(values.shape, n, dtype=np.int64)
    for _ in range(n.bit_length()):
        mid = (lo + hi) // 2
        pivot = xp.take_along_axis(seq, xp.minimum(mid, n - 1), axis=-1)
        go_right = (pivot <= values) if right else (pivot < values)
        go_right &= lo < hi
        lo = xp.where(go_right, mid + 1, lo)
        hi = xp.where(go_right | (lo >= hi), hi, mid)
    return lo


def _searchsorted_kernel(xp, seq, values, *, right, out_int32):
    dtype = np.int32 if out_int32 else np.int64
    if seq.ndim == 1:
        return xp.searchsorted(seq, values, side="right" if right else "left").astype(dtype)
    if seq.shape[-1] == 0:
        return xp.zeros(values.shape, dtype=dtype)
    return _binary_search(xp, seq, values, right).astype(dtype)


_searchsorted = defop("searchsorted", "none", _searchsorted_kernel, differentiable=False)


@export
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """Indices where `input` would be inserted to keep each innermost row of
    `sorted_sequence` sorted (right=True / side='right': after equal values)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
        right = side == "right"
    if sorted_sequence.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    scalar = not isinstance(input, Tensor)
    if not scalar and sorted_sequence.ndim > 1 and (
            sorted_sequence.shape[:-1] != input.shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           f"the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor "
                           f"{list(sorted_sequence.shape)} and input value tensor "
                           f"{list(input.shape)}")
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    return _searchsorted(sorted_sequence, input, right=right, out_int32=out_int32)


@export
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each input value among 1-d `boundaries` (searchsorted, operands
    swapped)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return _searchsorted(boundaries, input, right=right, out_int32=out_int32)


def _isin_kernel(xp, a, b, *, invert, assume_unique):
    return xp.isin(xp.asarray(a), xp.asarray(b), invert=invert, assume_unique=assume_unique)


_isin = defop("isin", "none", _isin_kernel, differentiable=False)


@export
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of `elements` is in `test_elements` (either may be a number)."""
    return _isin(elements, test_elements, invert=invert, assume_unique=assume_unique)


# ----------------------------------------------------------------------------------------------
# index_reduce, nonzero_static, fill_diagonal_, unravel_index

_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def _index_reduce_args(self, dim, index, source, reduce):
    """index_reduce as scatter_reduce: the index repeated across source's other dims."""
    warnings.warn("index_reduce() is in beta and the API may change at any time.",
                  UserWarning, stacklevel=3)
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    _check_index_dtype("index_reduce_", index)
    if index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {dt.scalar_name(index.dtype)} and size: "
                         f"{list(index.shape)}")
    dim = wrap_dim(dim, self.ndim)
    _check_source("index_reduce_", self, dim, index, source)
    size = self.shape[dim] if self.ndim else 1
    if index.numel() and (int(index._data.min()) < -size or int(index._data.max()) >= size):
        raise IndexError("index out of range in self")
    shape = [1] * builtins.max(source.ndim, 1)
    shape[dim] = -1
    spread = (index.long() % size).reshape(shape).expand(source.shape)
    return dim, spread


@export(method=True)
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Reduce source's slices into a copy of input at input's slices `index` along `dim`
    (prod, mean, amax, amin; input's own value joins unless include_self=False)."""
    dim, spread = _index_reduce_args(input, dim, index, source, reduce)
    return scatter_reduce(input, dim, spread, source, reduce, include_self=include_self)


@export(function=False, method=True)
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """In-place index_reduce."""
    dim, spread = _index_reduce_args(self, dim, index, source, reduce)
    return scatter_reduce_(self, dim, spread, source, reduce, include_self=include_self)


@export(method=True)
def nonzero_static(input, *, size, fill_value=-1):
    """nonzero(input) with exactly `size` rows: cut off, or padded with `fill_value`."""
    if not isinstance(size, numbers.Integral) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = _nonzero(input)
    if found.shape[0] >= size:
        return found[:size]
    from .. import _creation

    padding = _creation.full((size - found.shape[0], found.shape[1]), fill_value,
                             dtype=found.dtype, device=found.device)
    from .shape import cat

    return cat([found, padding])


@export(function=False, method=True)
def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal (all indices equal; every dim the same size when ndim > 2) with
    `fill_value`; a tall matrix with wrap=True starts over every ncols + 1 rows, as NumPy's
    fill_diagonal. Written into diagonal views, so autograd sees CopySlices, as in torch."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if self.ndim > 2:
        n = self.shape[0]
        self.as_strided((n,), (builtins.sum(self.stride()),), self.storage_offset()).fill_(
            fill_value)
        return self
    rows, cols = self.shape
    step = cols + 1 if wrap else builtins.max(rows, 1)
    for start in range(0, rows, step):
        self[start:start + cols].diagonal().fill_(fill_value)
    return self


@export
def unravel_index(indices, shape):
    """The coordinates, one int64 tensor per dim of `shape`, of flat indices into a tensor of
    that shape (row-major). Negative and too large indices wrap around, as in torch."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a tensor, but got {type(indices).__name__}")
    if indices.dtype.is_floating_point or indices.dtype is dt.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"ember.{indices.dtype.name}")
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    for size in shape:
        if not isinstance(size, numbers.Integral):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                            f"{type(size)}")
    if builtins.any(size < 0 for size in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    flat = indices.long()
    coordinates = []
    for size in reversed(shape):
        coordinates.append(flat.remainder(size))
        flat = flat.div(size, rounding_mode="floor")
    return tuple(reversed(coordinates))
# forward mode and vmap (see ops/_op.py). Reading scattered positions (x[idx], gather,
# index_select, take) is linear, and so is adding them back or writing them (writing a number
# writes a zero tangent); the reducing scatters take their tangents from their backward rules.
# Batching: an index tuple gets a full slice in front for the batch
# dim -- where NumPy then puts the index block in front (its arrays are not adjacent), the
# batch dim is moved back to the front; ops along one dim shift it; a batched index tensor runs
# once per sample.


def _batch_index(index):
    """A sample's index tuple, for the batch."""
    return (slice(None),) + tuple(index)


def _block_in_front(index):
    """The number of dims of the advanced block when NumPy puts it in front of a batch's
    result (the arrays of `index` are not adjacent), else 0."""
    arrays = [d for d, i in enumerate(index) if not isinstance(i, slice)]
    if not arrays or arrays[-1] - arrays[0] == len(arrays) - 1:
        return 0
    return len(_broadcast_shapes(*(index[d].shape for d in arrays)))


def _basic_batch(op, values, batched, attrs):
    return op(values[0], index=_batch_index(attrs["index"]))


def _basic_backward_batch(op, values, batched, attrs):
    g = values[0]
    return op(g, shape=(g.shape[0],) + tuple(attrs["shape"]),
              index=_batch_index(attrs["index"]))


def _index_batch(op, values, batched, attrs):
    index = attrs["index"]
    out = _index(values[0], index=_batch_index(index))
    block = _block_in_front(index)
    return out.movedim(block, 0) if block else out


def _batch_layout(values, index):
    """Batched values of an indexed write, laid out as NumPy lays out the batch's result."""
    block = _block_in_front(index)
    return values.movedim(0, block) if block else values


def _index_backward_batch(op, values, batched, attrs):
    g, index = values[0], attrs["index"]
    return _index_backward(_batch_layout(g, index), shape=(g.shape[0],) + tuple(attrs["shape"]),
                           index=_batch_index(index))


def _index_put_batch(op, values, batched, attrs):
    a, v = values
    size = batch_rules.size_of(values, batched)
    index = attrs["index"]
    if batched[1]:
        result_ndim = len(_layout(tuple(index), tuple(a.shape[1:] if batched[0] else a.shape))[0])
        v = _batch_layout(batch_rules.pad(v, result_ndim), index)
    return _index_put(batch_rules.as_batched(a, batched[0], size), v,
                      index=_batch_index(index), accumulate=attrs["accumulate"])


def _along_batch(op, values, batched, attrs):
    """index_select / index_add / index_copy / index_fill: the index vector is shared by the
    samples; a batched one (or a batched fill value) runs once per sample."""
    if batched[1] or (op is _index_fill_tensor and batched[2]):
        from .._functorch.vmap import per_sample

        return per_sample(op, values, batched, attrs)
    size = batch_rules.size_of(values, batched)
    values = [v if k == 1 or not isinstance(v, Tensor) else batch_rules.as_batched(v, b, size)
              for k, (v, b) in enumerate(zip(values, batched))]
    return op(*values, **dict(attrs, dim=attrs["dim"] + 1))


def _masked_fill_batch(op, values, batched, attrs):
    """The mask lined up with the batched input (a fill value tensor must be shared)."""
    if op is _masked_fill_tensor and batched[2]:
        from .._functorch.vmap import per_sample

        return per_sample(op, values, batched, attrs)
    a, mask = values[:2]
    size = batch_rules.size_of(values, batched)
    a = batch_rules.as_batched(a, batched[0], size)
    if batched[1]:
        mask = batch_rules.pad(mask, a.ndim - 1)
    return op(a, mask, *values[2:], **attrs)


for _op in (_getitem, *_VIEWS.values(), _basic_backward, _index, _index_backward,
            _index_select, _gather, _take, _masked_select, _index_put, _index_add, _index_copy,
            _index_fill_tensor, _scatter, _scatter_add, _masked_fill_tensor, _masked_scatter,
            _put):
    _op.jvp(LINEAR)  # writers: the same write applied to the tangents (the last one wins)
_index_fill.jvp(lambda a_t, index, dim: _index_fill(a_t, index, dim=dim, value=0))
_scatter_value.jvp(lambda a_t, index, dim: _scatter_value(a_t, index, dim=dim, value=0))
_masked_fill.jvp(lambda a_t, mask: _masked_fill(a_t, mask, value=0))
for _op in (_getitem, *_VIEWS.values()):
    _op.batch(_basic_batch)
for _op in (_gather, _scatter, _scatter_value, _scatter_add, _scatter_legacy, _scatter_reduce):
    _op.batch(batch_rules.dims("dim"))
for _op in (_index_select, _index_add, _index_copy, _index_fill, _index_fill_tensor):
    _op.batch(_along_batch)
_basic_backward.batch(_basic_backward_batch)
_index.batch(_index_batch)
_index_backward.batch(_index_backward_batch)
_index_put.batch(_index_put_batch)
_masked_fill.batch(_masked_fill_batch)
_masked_fill_tensor.batch(_masked_fill_batch)
del _op
