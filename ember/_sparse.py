"""Sparse COO tensors: `sparse_coo_tensor`, `Tensor.to_sparse`, and what a sparse tensor does.

A sparse COO tensor of size (3, 4) with 2 entries is two dense tensors:

    indices  int64, (sparse_dim, nnz)   [[0, 2],      entry k stands at (indices[0][k],
                                         [1, 3]]       indices[1][k], ...)
    values   (nnz, *dense dims)         [5., 7.]      and holds values[k]

Positions may repeat: they add up. `coalesce()` sums them and sorts the positions (row-major),
which `indices()` and `values()` require, as in torch. A sparse tensor is a `Tensor` (of a
subclass) whose dense array is a stand-in that refuses every use, so an op without sparse
support raises a clear NotImplementedError instead of computing on nothing.

Autograd runs on the values: the ops of `ops/sparse.py` take indices and values as separate
inputs, a sparse tensor's `grad_fn` is its values' node, and its `.grad` is the sparse tensor
of its values' gradient at its own positions -- which is what torch gives for `sparse.mm` and
`to_dense`.

What a sparse tensor supports: `indices`/`values` (and `_indices`/`_values`), `coalesce`,
`is_coalesced`, `to_dense`, `sparse_dim`, `dense_dim`, `_nnz`, `sparse @ dense` (`mm`,
`matmul`, `ember.sparse.mm`, `ember.spmm`; also dense @ sparse), `sum`, `+`/`-` of two sparse
tensors, `*` and `/` by a number, `neg`, `t`/`transpose` of sparse dims, `to`/`cpu`/`cuda`/
`float`/`double`/`half`, `detach`, `clone`, `requires_grad_`. Everything else raises.

Read next: `ember/sparse/__init__.py` (the `torch.sparse` namespace).
"""
import math
import numbers

import numpy as np

from . import _dtype as dt
from ._tensor import Size, Tensor, VersionCounter
from ._tensor_str import _body, _with_suffixes
from .autograd import grad_mode
from .ops import sparse as sparse_ops
from .ops._op import defop, export

__all__ = ["sparse_coo_tensor", "spmm"]


def _unsupported():
    return NotImplementedError(
        "this operation does not support sparse COO tensors (layout=ember.sparse_coo) in "
        "ember; convert with .to_dense() first")


class _NoDenseArray:
    """Stands where a dense tensor keeps its array: it knows the shape and dtype (so `shape`,
    `dim()`, `numel()` and `dtype` answer) and refuses everything else."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def __getattr__(self, name):
        raise _unsupported()

    def __array__(self, *args, **kwargs):
        raise _unsupported()

    def __array_ufunc__(self, *args, **kwargs):
        raise _unsupported()

    def __array_function__(self, *args, **kwargs):
        raise _unsupported()


def _refuse(self, *args, **kwargs):
    raise _unsupported()


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
              "xor", "lshift", "rshift", "lt", "le", "gt", "ge", "neg", "pos", "abs",
              "invert", "getitem", "setitem", "iter", "len", "float", "int", "bool", "index"):
    setattr(_NoDenseArray, f"__{_name}__", _refuse)
    if _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul"):
        setattr(_NoDenseArray, f"__r{_name}__", _refuse)


# the values of a new sparse tensor pass through this identity op, so that a sparse tensor
# made from values that require grad has torch's node (and is not a leaf)
_with_dims_and_tensors = defop(
    "sparse_coo_tensor_values", "same", lambda xp, a: a, lambda g: (g,), view=True,
    node_name="SparseCooTensorWithDimsAndTensorsBackward0")


class SparseTensor(Tensor):
    """A sparse COO tensor (torch's `layout=torch.sparse_coo`): see the module docstring."""

    __slots__ = ("_indices_t", "_values_t", "_coalesced", "_from_dense")

    @classmethod
    def _of(cls, indices, values, size, coalesced, from_dense=False):
        t = object.__new__(cls)
        t._data = _NoDenseArray(size, values._data.dtype)
        t._dtype = values._dtype
        t._device = values._device
        t._vc = VersionCounter()
        t._base = None
        t._grad_fn = None
        t._output_nr = 0
        t._requires_grad = values._requires_grad
        t._indices_t = indices
        t._values_t = values
        t._coalesced = coalesced
        t._from_dense = from_dense  # made (through to_sparse) from a tensor requiring grad
        return t

    # ------------------------------------------------------------------------------------------
    # what it is

    @property
    def layout(self):
        from . import sparse_coo

        return sparse_coo

    is_sparse = True

    def sparse_dim(self):
        """The number of sparse dims (rows of `indices`)."""
        return self._indices_t.shape[0]

    def dense_dim(self):
        """The number of dense dims (each value's own dims)."""
        return self._values_t.ndim - 1

    def _nnz(self):
        return self._indices_t.shape[1]

    def is_coalesced(self):
        """Whether every position appears once, in row-major order."""
        return self._coalesced

    def _indices(self):
        return self._indices_t

    def _values(self):
        return self._values_t

    def indices(self):
        """The positions, (sparse_dim, nnz); the tensor must be coalesced, as in torch."""
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._indices_t

    def values(self):
        """The values at `indices()`; the tensor must be coalesced, as in torch."""
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._values_t

    # ------------------------------------------------------------------------------------------
    # autograd: all of it is the values'

    @property
    def requires_grad(self):
        return self._values_t.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        """Make this sparse tensor (its values) a leaf that requires grad, or not."""
        self._values_t.requires_grad_(requires_grad)
        self._requires_grad = self._values_t._requires_grad
        return self

    @property
    def grad_fn(self):
        return self._values_t.grad_fn

    @property
    def is_leaf(self):
        return self._values_t.is_leaf

    @property
    def grad(self):
        """The gradient: a sparse tensor with this tensor's positions (None before backward),
        each position once. Every entry of a repeated position holds the same derivative (of
        the sum they make), so the first entry's stands for the position."""
        g = self._values_t.grad
        if g is None:
            return None
        if self._coalesced:
            return SparseTensor._of(self._indices_t, g, self.shape, True)
        indices, _, first = self._unique_positions()
        return SparseTensor._of(indices, g[first], self.shape, True)

    @grad.setter
    def grad(self, value):
        if value is not None:
            raise NotImplementedError("ember: assigning a gradient to a sparse tensor")
        self._values_t.grad = None

    def backward(self, *args, **kwargs):
        """Refused: ember's sparse tensors are not differentiated from."""
        raise NotImplementedError("ember: backward() from a sparse tensor")

    def register_hook(self, hook):
        """Refused: ember's sparse tensors take no gradient hooks."""
        raise NotImplementedError("ember: hooks on sparse tensors")

    # ------------------------------------------------------------------------------------------
    # conversions

    def coalesce(self):
        """The same tensor with each position once (repeats summed), positions sorted."""
        if self._coalesced:
            return self
        indices, inverse, _ = self._unique_positions()
        values = sparse_ops.sparse_coalesce(self._values_t, inverse, count=indices.shape[1])
        return SparseTensor._of(indices, values, self.shape, True, self._from_dense)

    def _unique_positions(self):
        """The distinct positions, sorted row-major (sparse_dim, n); for each entry, the
        number of its position among them; for each position, its first entry."""
        sizes = self.shape[:self.sparse_dim()]
        xp = _xp(self)
        linear = sparse_ops._linear(xp, self._indices_t._data, sizes)
        unique, first, inverse = xp.unique(linear, return_index=True, return_inverse=True)
        positions = xp.stack(xp.unravel_index(unique, sizes)) if sizes else \
            xp.zeros((0, unique.size), dtype=np.int64)
        device = self._device
        return (Tensor._make(positions.astype(np.int64), device=device),
                Tensor._make(inverse.reshape(-1).astype(np.int64), device=device),
                Tensor._make(first.astype(np.int64), device=device))

    def to_dense(self, dtype=None, *, masked_grad=None):
        """The dense tensor (repeated positions summed)."""
        out = sparse_ops.to_dense(self._indices_t, self._values_t, size=tuple(self.shape))
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        """Itself (already sparse COO with these dims), as torch."""
        _check_coo(layout, blocksize, dense_dim)
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError(f"to_sparse: conversion from Sparse to Sparse with sparse_dim="
                               f"{sparse_dim} is not supported (this tensor has "
                               f"{self.sparse_dim()})")
        return self

    to_sparse_coo = to_sparse

    def to(self, *args, **kwargs):
        """Values (and indices, for a device) moved or cast, as `Tensor.to`."""
        values = self._values_t.to(*args, **kwargs)
        indices = self._indices_t.to(values.device)
        return SparseTensor._of(indices, values, self.shape, self._coalesced,
                                self._from_dense)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to("cuda" if device is None else device)

    def float(self):
        return self.to(dt.float32)

    def double(self):
        return self.to(dt.float64)

    def half(self):
        return self.to(dt.float16)

    def detach(self):
        """The same entries, without history."""
        return SparseTensor._of(self._indices_t, self._values_t.detach(), self.shape,
                                self._coalesced)

    def clone(self, *, memory_format=None):
        """A copy of the entries (differentiable through the values)."""
        return SparseTensor._of(self._indices_t.clone(), self._values_t.clone(), self.shape,
                                self._coalesced, self._from_dense)

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            copy = self.detach().clone()
            copy.requires_grad_(self.requires_grad and self.is_leaf)
            memo[id(self)] = copy
        return memo[id(self)]

    # ------------------------------------------------------------------------------------------
    # arithmetic

    def mm(self, mat2):
        """sparse @ dense -> dense (see `sparse_mm` for the gradient)."""
        return sparse_mm(self, mat2, masked_grad=False)

    def matmul(self, other):
        """sparse @ dense -> dense (see `sparse_mm` for the gradient)."""
        return sparse_mm(self, other, masked_grad=False)

    __matmul__ = matmul

    def __rmatmul__(self, other):
        return sparse_mm(other, self, masked_grad=False)

    def mul(self, other):
        """Times a number (or a 0-d tensor): the values scaled."""
        return self._map_values(lambda v: v * _scalar(other, "mul"))

    __mul__ = __rmul__ = mul

    def div(self, other):
        """Divided by a number (or a 0-d tensor)."""
        return self._map_values(lambda v: v / _scalar(other, "div"))

    __truediv__ = div

    def neg(self):
        return self._map_values(lambda v: -v)

    __neg__ = neg

    def add(self, other, *, alpha=1):
        """The sum with another sparse tensor of the same size (coalesced)."""
        if not isinstance(other, SparseTensor):
            raise NotImplementedError("ember: sparse + dense; use a.to_dense() + b")
        if other.shape != self.shape or other.sparse_dim() != self.sparse_dim():
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self "
                               f"has size {list(self.shape)} while other has size "
                               f"{list(other.shape)}")
        from . import cat

        indices = cat([self._indices_t, other._indices_t], 1)
        values = cat([self._values_t, other._values_t * alpha if alpha != 1
                      else other._values_t], 0)
        return SparseTensor._of(indices, values, self.shape, False,
                                self._from_dense or other._from_dense).coalesce()

    __add__ = add

    def sub(self, other, *, alpha=1):
        return self.add(other, alpha=-alpha)

    __sub__ = sub

    def _map_values(self, fn):
        return SparseTensor._of(self._indices_t, fn(self._values_t), self.shape,
                                self._coalesced, self._from_dense)

    def t(self):
        """The transpose of a 2-d sparse tensor (its two index rows swapped)."""
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.ndim}D")
        return self.transpose(0, -1) if self.ndim == 2 else self

    def transpose(self, dim0, dim1):
        """Two sparse dims swapped."""
        d0, d1 = self._wrap_dim(dim0), self._wrap_dim(dim1)
        if max(d0, d1) >= self.sparse_dim():
            raise NotImplementedError("ember: transposing the dense dims of a sparse tensor")
        order = list(range(self.sparse_dim()))
        order[d0], order[d1] = order[d1], order[d0]
        size = list(self.shape)
        size[d0], size[d1] = size[d1], size[d0]
        return SparseTensor._of(self._indices_t[order], self._values_t, size, False,
                                self._from_dense)

    def sum(self, dim=None, keepdim=False, dtype=None):
        """As `ember.sparse.sum`."""
        if keepdim:
            raise NotImplementedError("ember: sum(keepdim=True) of a sparse tensor")
        return sparse_sum(self, dim, dtype=dtype)

    def __repr__(self, *, tensor_contents=None):
        return _repr(self)

    __str__ = __repr__


def _xp(t):
    from ._backend import namespace

    return namespace(t.device)


def _scalar(x, fn_name):
    if isinstance(x, numbers.Number) and not isinstance(x, bool):
        return x
    if isinstance(x, Tensor) and not x.is_sparse and x.ndim == 0:
        return x
    raise NotImplementedError(f"ember: sparse {fn_name} by {type(x).__name__} (a number or a "
                              "0-d tensor is supported)")


def _check_coo(layout, blocksize, dense_dim):
    from . import sparse_coo

    if layout is not None and layout is not sparse_coo:
        raise NotImplementedError(f"ember has only the sparse_coo layout, not {layout}")
    if blocksize is not None or dense_dim is not None:
        raise NotImplementedError("ember: blocksize= and dense_dim= are for sparse "
                                  "compressed layouts, which ember lacks")


# ----------------------------------------------------------------------------------------------
# making sparse tensors


@export
def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None,
                      is_coalesced=None):
    """A sparse COO tensor from its `indices` (sparse_dim, nnz) and `values` (nnz, ...).

    Unlike torch, the positions are always checked against `size` (torch checks them only
    with `check_invariants=True`; an out-of-range position there corrupts memory later)."""
    from ._creation import as_tensor

    indices = as_tensor(indices, device=device)
    values = as_tensor(values, dtype=dtype, device=device)
    if indices.dtype.is_floating_point or indices.dtype is dt.bool:
        raise RuntimeError(f"indices must be an int64 tensor, but got {indices.dtype}")
    indices = indices.to(dt.int64)
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.ndim == 0 or indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{indices.shape[1]}, nnz from values: "
                           f"{values.shape[0] if values.ndim else 'scalar'}")
    size = _checked_size(indices, values, size)
    if requires_grad:
        values = values.detach().requires_grad_()
    elif values.requires_grad and grad_mode.is_grad_enabled():
        values = _with_dims_and_tensors(values)
    if is_coalesced is None:
        is_coalesced = indices.shape[1] <= 1  # one entry or none is coalesced, as torch says
    return SparseTensor._of(indices, values, size, bool(is_coalesced))


def _checked_size(indices, values, size):
    sparse_dim, dense = indices.shape[0], tuple(values.shape[1:])
    found = indices._data.max(axis=1) + 1 if indices.shape[1] else \
        np.zeros(sparse_dim, dtype=np.int64)
    if size is None:
        return Size(tuple(int(n) for n in found) + dense)
    size = Size(int(n) for n in size)
    if len(size) != sparse_dim + len(dense):
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) "
                           f"= {len(size)}, sparse_dim = {sparse_dim}, dense_dim = "
                           f"{len(dense)}")
    if tuple(size[sparse_dim:]) != dense:
        raise RuntimeError(f"values has incorrect size, expected {list(size[sparse_dim:])}, "
                           f"got {list(dense)}")
    if indices.shape[1] and int(indices._data.min()) < 0:
        raise RuntimeError("found negative index in the indices of a sparse tensor")
    for d in range(sparse_dim):
        if int(found[d]) > size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {int(found[d]) - 1}")
    return size


@export(function=False, method=True)
def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """The sparse COO tensor of this dense tensor's nonzero entries (of its first
    `sparse_dim` dims, all by default; the rest stay dense in each value), coalesced."""
    _check_coo(layout, blocksize, dense_dim)
    sparse_dim = self.ndim if sparse_dim is None else sparse_dim
    if not 0 <= sparse_dim <= self.ndim:
        raise RuntimeError(f"sparse_dim must be in [0, {self.ndim}], but got {sparse_dim}")
    xp = _xp(self)
    nonzero = self._data != 0
    if sparse_dim < self.ndim:
        nonzero = nonzero.any(axis=tuple(range(sparse_dim, self.ndim)))
    positions = xp.stack(xp.nonzero(nonzero)).astype(np.int64) if sparse_dim else \
        xp.zeros((0, 1), dtype=np.int64)
    indices = Tensor._make(positions.reshape(sparse_dim, -1), device=self._device)
    values = self[tuple(indices.unbind(0))] if sparse_dim else self.unsqueeze(0)
    return SparseTensor._of(indices, values, self.shape, True, values.requires_grad)


export(to_sparse, name="to_sparse_coo", function=False, method=True)


@export(function=False, method=True)
def sparse_mask(self, mask):
    """This dense tensor's entries at the positions of the sparse tensor `mask`, as a sparse
    tensor with mask's positions, repeats included (differentiable through the entries)."""
    if not isinstance(mask, SparseTensor):
        raise RuntimeError("sparse_mask expects mask to be sparse coordinate tensor layout but "
                           "got Strided")
    if tuple(mask.shape) != tuple(self.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask.shape)}")
    values = self[tuple(mask._indices_t.unbind(0))]
    return SparseTensor._of(mask._indices_t, values, self.shape, mask._coalesced)


def _layout_error(name, what="sparse coordinate tensor"):
    def method(self):
        raise RuntimeError(f"{name} expected {what} layout but got Strided")
    method.__name__ = method.__qualname__ = name
    method.__doc__ = "Only for sparse tensors: a dense one raises, as in torch."
    return method


def _sparse_only(name):
    def method(self):
        raise NotImplementedError(f"{name}() is only for sparse tensors; this one is dense")
    method.__name__ = method.__qualname__ = name
    method.__doc__ = "Only for sparse tensors: a dense one raises, as in torch."
    return method


for _name in ("coalesce", "indices", "is_coalesced"):
    export(_layout_error(_name), name=_name, function=False, method=True)
export(_layout_error("values", "sparse tensor"), name="values", function=False, method=True)
for _name in ("_indices", "_values", "_nnz"):
    export(_sparse_only(_name), name=_name, function=False, method=True)


@export(function=False, method=True)
def sparse_dim(self):
    """A dense tensor has no sparse dims."""
    return 0


@export(function=False, method=True)
def dense_dim(self):
    """Every dim of a dense tensor is dense."""
    return self.ndim


@export(function=False, method=True)
def to_dense(self, dtype=None, *, masked_grad=None):
    """A dense tensor is its own dense form (a sparse one densifies)."""
    return self if dtype is None else self.to(dtype)


# ----------------------------------------------------------------------------------------------
# products and sums


def sparse_mm(mat1, mat2, masked_grad=True):
    """sparse @ dense or dense @ sparse, both 2-d: a dense result.

    `masked_grad`: ember.sparse.mm gives the sparse operand a gradient at its own positions
    only, as torch.sparse.mm does (and so does ember for the products below). torch.mm,
    torch.matmul and torch.spmm give a sparse *leaf* (or the dense tensor a sparse operand
    was made from with `to_sparse`) the full dense gradient g @ mat2^T, which ember's sparse
    tensors cannot carry: with `masked_grad=False` such an operand is refused rather than
    given a different gradient. Gradients reaching `values` (and the dense operand) agree
    with torch's either way."""
    if isinstance(mat1, SparseTensor) and isinstance(mat2, SparseTensor):
        raise NotImplementedError("ember: sparse @ sparse; densify one operand")
    sparse = mat1 if isinstance(mat1, SparseTensor) else mat2
    if not masked_grad and sparse.requires_grad and (sparse.is_leaf or sparse._from_dense):
        raise NotImplementedError(
            "ember: torch.mm / matmul / spmm give this sparse operand a dense gradient, "
            "which ember's sparse tensors do not carry; use ember.sparse.mm (whose gradient "
            "is the sparse operand's, at its own positions, as torch.sparse.mm's), or "
            "detach the sparse operand")
    if not isinstance(mat1, SparseTensor):
        return sparse_mm(mat2.t(), mat1.t()).t()  # dense @ sparse = (sparse^T @ dense^T)^T
    if mat1.ndim != 2 or mat1.dense_dim() != 0 or mat2.ndim != 2:
        raise NotImplementedError(f"ember: sparse mm of a {mat1.ndim}-d sparse tensor with "
                                  f"{mat1.dense_dim()} dense dims and a {mat2.ndim}-d dense "
                                  "one (2-d and 2-d only)")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"expected scalar type {dt.scalar_name(mat2.dtype)} but found "
                           f"{dt.scalar_name(mat1.dtype)}")
    return sparse_ops.sparse_mm(mat1._indices_t, mat1._values_t, mat2, rows=mat1.shape[0])


@export
def spmm(input, mat2):
    """`input @ mat2` with `input` a 2-d sparse COO tensor (torch.spmm): a dense result (see
    `sparse_mm` for the gradient)."""
    return sparse_mm(input, mat2, masked_grad=False)


def sparse_sum(input, dim=None, dtype=None):
    """The sum over all elements (a dense 0-d tensor) or over `dim`: dense when every sparse
    dim is summed, else sparse over the sparse dims that remain."""
    s = input.coalesce()
    values = s._values_t if dtype is None else s._values_t.to(dtype)
    if dim is None:
        return values.sum()
    dims = sorted({input._wrap_dim(d) for d in ((dim,) if isinstance(dim, int) else dim)})
    sparse_dim = s.sparse_dim()
    dense_dims = [d - sparse_dim + 1 for d in dims if d >= sparse_dim]
    if dense_dims:
        values = values.sum(dense_dims)
    summed = [d for d in dims if d < sparse_dim]
    kept = [d for d in range(sparse_dim) if d not in summed]
    if not summed:
        size = [n for d, n in enumerate(s.shape) if d not in dims]
        return SparseTensor._of(s._indices_t, values, size, True)
    if not kept:
        return values.sum(0)
    size = [n for d, n in enumerate(s.shape) if d not in dims]
    return SparseTensor._of(s._indices_t[kept], values, size, False).coalesce()


# ----------------------------------------------------------------------------------------------
# printing


def _repr(t):
    """torch's layout: indices, values, then size, nnz, dtype, layout and autograd."""
    indent = len("tensor(")
    text = ("tensor(indices=" + _inner(t._indices_t, indent + len("indices=")) + ",\n" +
            " " * indent + "values=" + _inner(t._values_t, indent + len("values=")) + ",\n" +
            " " * indent + f"size={tuple(t.shape)}")
    suffixes = [f"nnz={t._nnz()}"]
    if t.dtype is not dt.get_default_dtype() and t.dtype not in (dt.int64, dt.bool):
        suffixes.append(f"dtype={t.dtype}")
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    suffixes.append("layout=ember.sparse_coo")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(text, suffixes, indent)


def _inner(t, column):
    """`tensor(...)` of an indices or values tensor, without dtype or autograd suffixes (the
    outer repr says them once); an empty one says its size."""
    if t.numel() == 0:
        return f"tensor([], size={tuple(t.shape)})"
    return "tensor(" + _body(t.detach(), column + len("tensor(")) + ")"
