"""Reductions, scans and sorting: sum, mean, prod, max, var, norm, median, sort, topk, cumsum,
unique, bincount, ... over `dim` (int, tuple, negative or None) with `keepdim`.

This module defines `sum`, `any`, `all` as torch does (`builtins.sum` etc. for Python's own);
max/min are written as `reduce_max`/`reduce_min` and published under torch's names.

The file reads top to bottom in sections:
  helpers          dims, shapes, quiet NumPy, and the gradient helpers the rules share (the
                   backward of every op that *picks* elements -- max(dim), sort, topk, median,
                   cummax, ... -- scatters `g` back to where each picked value came from);
  sums             sum, mean, nansum, nanmean, prod
  extremes         max, min, amax, amin, argmax, argmin, aminmax
  moments, norms   var, std, var_mean, std_mean, logsumexp, norm
  order            sort, argsort, msort, topk, kthvalue, median, nanmedian, mode
  scans            cumsum, cumprod, cummax, cummin, logcumsumexp
  logical, counts  all, any, count_nonzero, unique, unique_consecutive, bincount, histc, diff
  sum_to_size      what the autograd engine uses to undo broadcasting

A reduction's rule gets `g` shaped like the output; `_unreduce` puts the reduced dims back (as
size-1 dims) and expands to the input's shape -- a view, no copy. Several results with names
(`values`, `indices`) come back as `ember.return_types` named tuples, as in torch.

Read next: `shape.py`.
"""
import builtins
import contextlib
import math

import numpy as np

from .. import _dtype as dt
from .. import return_types
from .._device import CPU
from .._functorch import batch_rules
from .._tensor import Tensor
from .._utils import warn, wrap_dim, wrap_dims
from ..autograd import grad_mode
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.graph import compile_recorder
from . import _dispatch
from ._dispatch import call_unary, not_a_tensor
from ._op import LINEAR, defop, export
from .shape import _expand

# ----------------------------------------------------------------------------------------------
# helpers

_HALF_TYPES = (dt.float16.np, dt.bfloat16.np)


def _accumulate_dtype(a):
    """NumPy would sum float16 in float16; torch accumulates in float32 and rounds once."""
    # (the itemsize first: a dtype comparison costs ~0.6k instructions, callgrind)
    return dt.float32.np if a.dtype.itemsize == 2 and a.dtype in _HALF_TYPES else None


def _running(xp, ufunc, x, axis):
    """`ufunc.accumulate(x, axis)`: a running max, min or logaddexp. CuPy accumulates only
    with add and multiply (cumsum, cumprod), so there the scan goes one slice at a time."""
    if xp.__name__ == "numpy":
        return ufunc.accumulate(x, axis=axis)
    out = xp.moveaxis(x.copy(), axis, 0)
    for i in range(1, out.shape[0]):
        ufunc(out[i - 1], out[i], out=out[i])
    return xp.moveaxis(out, 0, axis)


def _quiet(xp):
    """NumPy warns on log(0), 0/0, ... where torch silently gives -inf or nan (CuPy never
    warns, and has no errstate)."""
    errstate = getattr(xp, "errstate", None)
    return errstate(all="ignore") if errstate is not None else contextlib.nullcontext()


def _every_dim(dim):
    """None and an empty tuple both mean every dim: torch's rule for sum, mean, amax, var,
    norm, ... (all/any differ: there `dim=()` reduces nothing)."""
    return dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)


# every dim of an n-d tensor, made once (NumPy allows at most 64 dims)
_ALL_DIMS = tuple(tuple(range(n)) for n in range(65))


def _reduce_dims(dim, ndim):
    """`dim` as a sorted tuple of non-negative dims (see `_every_dim`)."""
    # Fast paths for `x.sum()` and `x.sum(1)` (callgrind: one int dim 6.1k -> 1.3k instructions,
    # all dims 1.7k -> 0.5k); anything else (tuples, bools, NumPy ints, a dim out of range)
    # takes the checked path, with its errors.
    if dim is None:
        return _ALL_DIMS[ndim]
    if type(dim) is int and -ndim <= dim < ndim:
        return (dim + ndim if dim < 0 else dim,)
    if type(dim) is bool:  # torch refuses x.sum(True) (a bool inside a tuple passes)
        raise TypeError("argument 'dim' must be an int or a tuple of ints, not bool")
    return tuple(range(ndim)) if _every_dim(dim) else wrap_dims(dim, ndim)


def _count(shape, dims):
    """How many elements each output element reduces over."""
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _result_dtype(a, dtype):
    """torch's sum/prod/cumsum: integers and bools widen to int64 unless a dtype is given."""
    if dtype is not None:
        return dtype
    return dt.int64 if a.dtype.kind in "biu" else dt._BY_NUMPY[a.dtype]


def _atleast_1d(a):
    """Kernels that work along one dim see a 0-d input as one element along dim 0."""
    return a.reshape(1) if a.ndim == 0 else a


def _squeeze_dims(xp, x, dims, keepdim):
    return x if keepdim else xp.squeeze(x, axis=dims)


def _finish(values, indices, dim, keepdim, ndim):
    """(values, indices) computed with the reduced dim kept: drop it unless keepdim."""
    if ndim == 0:
        return values.reshape(()), indices.reshape(())
    if not keepdim:
        return values.squeeze(dim), indices.squeeze(dim)
    return values, indices


def _slice_along(dim, start, stop):
    """An index that slices [start:stop] along `dim` only."""
    return (slice(None),) * dim + (slice(start, stop),)


def _require_elements(name, input, dims, *, full):
    """Reductions without an identity (max, median, ...) refuse to reduce over nothing."""
    if full and input.numel() == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    for d in dims:
        if input.ndim and input.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _require_float(name, input):
    """torch has no kernel for integer inputs of these ops (it names the kernel)."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{dt.scalar_name(input.dtype)}'")


def _require_real(name, input, message=None, error=NotImplementedError):
    """Complex numbers have no order: max, sort, median, ... refuse them (NumPy would compare
    them lexicographically), with torch's error."""
    if input.dtype.is_complex:
        raise error(message or f'"{name}" not implemented for '
                    f"'{dt.scalar_name(input.dtype)}'")


# gradient helpers (on Tensors, so that rules stay differentiable)

def _unreduce(g, shape, dims, keepdim):
    """Broadcast a reduced gradient back over the input's shape. Reduced leading dims (every
    dim of a whole-tensor sum, a bias gradient's batch dims) come back by broadcasting alone:
    no reshape op first, one dispatched op fewer in each such backward."""
    if not keepdim and dims and len(dims) != len(shape) and dims != tuple(range(len(dims))):
        g = g.reshape([1 if i in dims else n for i, n in enumerate(shape)])
    # the op itself (these shapes need no checking), through `call_unary`: a tiny sum's
    # backward 4.5k instructions cheaper than through `call` (callgrind)
    return call_unary(_expand, g, {"shape": tuple(shape)})


def _evenly(g, a, out, dims, keepdim, nan_aware=False):
    """torch's gradient for max/min/median/amax...: `g` split equally among the elements equal
    to the result, so ties share it. For the whole-tensor max/min/median a NaN result sends the
    gradient to the NaNs (`nan_aware`)."""
    if nan_aware and builtins.bool(out != out):  # `out` is 0-d here
        mask = a != a
    else:
        mask = a == _unreduce(out, a.shape, dims, keepdim)
    return _unreduce(g, a.shape, dims, keepdim) * mask / mask.sum(dims, keepdim=True)


def _select_grad(g, indices, dim, shape, keepdim):
    """The gradient of an op that picks elements (max(dim), sort, topk, cummax, ...): `g` goes
    back where each picked value came from, added up where an index repeats (cummax)."""
    if not keepdim and len(shape):
        g, indices = g.unsqueeze(dim), indices.unsqueeze(dim)
    return g.new_zeros(shape).scatter_add(dim, indices, g)


# ----------------------------------------------------------------------------------------------
# sums: sum, mean, nansum, nanmean, prod
#
# torch names the whole-tensor and the by-dim variants differently (SumBackward0 / 1), so each
# has two Ops sharing one kernel and one rule.


def _sum_leading(xp, a, dims):
    """a.sum(dims) for float32/float64 `a` summed over its leading dims (a bias gradient, a
    broadcast undone), as a vector-matrix product: BLAS adds the rows ~3x faster than NumPy's
    reduction loop, which accumulates row after row just the same. None where it does not
    apply (other dims, dtypes or layouts, small arrays)."""
    count = len(dims)
    if (a.size < _BLAS_SUM_MIN or not 0 < count < a.ndim or dims[-1] != count - 1
            or a.dtype.char not in "fd" or not a.flags.c_contiguous):
        return None
    rows = _count(a.shape, dims)
    total = xp.ones(rows, dtype=a.dtype) @ a.reshape(rows, -1)
    # a 1-d result is returned as made (not a reshaped view), so that the engine may hand it
    # to a leaf as its .grad without a copy
    return total if a.ndim - count == 1 else total.reshape(a.shape[count:])


def _sum_trailing(xp, a, dims):
    """a.sum(dims) for float32/float64 `a` summed over its last dims in rows of at most
    `_BLAS_ROW_MAX` elements (a global average pool, a mean over features), as a matrix-vector
    product: NumPy's reduction loop restarts for every short row, which BLAS does not
    ((32, 512, 16) rows of 16: 0.31 -> 0.03 ms; rows of 1024: 0.34 -> 0.11 ms). Longer rows
    keep NumPy's pairwise sum, whose rounding error grows more slowly than BLAS's running
    sums. None where it does not apply."""
    count = len(dims)
    if (a.size < _BLAS_SUM_MIN or not 0 < count < a.ndim or dims[0] != a.ndim - count
            or a.dtype.char not in "fd" or not a.flags.c_contiguous):
        return None
    columns = _count(a.shape, dims)
    if columns > _BLAS_ROW_MAX:
        return None
    return a.reshape(-1, columns) @ xp.ones(columns, dtype=a.dtype)


def _blas_sum(xp, a, dims, keepdim):
    """`a.sum(dims, keepdims=keepdim)` as a BLAS product when the summed dims lead or trail
    (`_sum_leading`, `_sum_trailing`), or both (a convolution's bias gradient sums (N, C, H, W)
    over (0, 2, 3): the trailing ones by BLAS, then NumPy adds the few (N, C) rows; (128, 64,
    14, 14), 1 thread: 0.41 -> 0.10 ms), else None."""
    out = _sum_leading(xp, a, dims)
    if out is not None:
        return out.reshape((1,) * len(dims) + out.shape) if keepdim else out
    lead = 0
    while lead < len(dims) and dims[lead] == lead:
        lead += 1
    out = _sum_trailing(xp, a, dims[lead:])
    if out is None:
        return None
    out = out.reshape(a.shape[:a.ndim - len(dims) + lead])
    if lead:
        out = np.add.reduce(out, tuple(range(lead))) if xp is np else out.sum(tuple(range(lead)))
    if keepdim:
        return out.reshape(tuple(1 if d in dims else n for d, n in enumerate(a.shape)))
    return out


_make = Tensor._make
_grad = grad_mode.state
_BLAS_SUM_MIN = 1 << 14  # below this, a new ones vector and the call cost more than they save
_BLAS_ROW_MAX = 1 << 10


def _sum_kernel(xp, a, *, dims, keepdim, dtype):
    if dtype is None and xp is np and a.size < _BLAS_SUM_MIN and a.dtype.char in "fd":
        # small float32/float64 sums (losses, the tiny ops of issue 22): no dtype to work
        # out, nothing to cast -- ~3k of a 16-element sum's ~13k instructions (callgrind)
        return np.add.reduce(a, dims, None, None, keepdim)
    dtype = _result_dtype(a, dtype)
    if a.size >= _BLAS_SUM_MIN and dtype.np == a.dtype:
        out = _blas_sum(xp, a, dims, keepdim)
        if out is not None:
            return out
    accumulate = _accumulate_dtype(a) or dtype.np
    if xp is np:
        # the ufunc's own reduce, which NumPy's `a.sum()` and `np.sum` wrap in one and three
        # Python calls (callgrind, a 16-element sum: np.sum 23.1k, a.sum() 12.3k, this 7.9k)
        out = np.add.reduce(a, dims, accumulate, None, keepdim)
    else:
        out = a.sum(axis=dims, keepdims=keepdim, dtype=accumulate)
    return out if out.dtype is dtype.np else out.astype(dtype.np, copy=False)


def _sum_rule(g, a_shape, dims, keepdim):
    return (_unreduce(g, a_shape, dims, keepdim),)


_sum = defop("sum", "none", _sum_kernel, _sum_rule)
_sum_dim = defop("sum_dim", "none", _sum_kernel, _sum_rule, node_name="SumBackward1")


def _small_float_total(t, mean):
    """`t.sum()`, or `t.mean()` when `mean`, of a float32/float64 CPU tensor below
    _BLAS_SUM_MIN elements (a loss, a metric, the tiny ops of issue 22): NumPy's cheapest
    reduce, wrapped and recorded here. 16 elements: `x.sum()` costs 15.8k instructions instead
    of the general path's 22.3k (its keyword dict, call_unary, _run_plain, the kernel's
    keyword call and checks, and asarray of NumPy's scalar), `x.mean()` 17.8k instead of
    31.5k (torch's sum: 12.7k; callgrind). None where the general path is needed: another
    device, dtype or size (a mean of nothing too), an observer (vmap, a dispatch mode),
    autocast, or NumPy's warnings raised as errors (the general path reruns it quietly)."""
    x = t._data
    dtype = x.dtype
    if t._device is not CPU or x.size >= _BLAS_SUM_MIN or dtype.char not in "fd" or \
            _dispatch._observer is not None or _dispatch._autocast is not None or \
            (mean and x.size == 0):
        return None
    try:
        if mean:  # NumPy's scalar divided (an in-place divide of a 0-d array costs ~9k)
            total = np.asarray(np.add.reduce(x, None) / x.size)
        else:
            total = np.add.reduce(x, None, None, np.empty((), dtype))
    except RuntimeWarning:
        return None
    out = _make(total, False, None, 0, CPU)
    if t._requires_grad and _grad.grad_enabled:
        if mean:
            (_mean.recorder or compile_recorder(_mean))(
                (t,), {"dims": _ALL_DIMS[x.ndim], "keepdim": False}, out)
        else:
            (_sum.recorder or compile_recorder(_sum))(
                (t,), {"dims": _ALL_DIMS[x.ndim], "keepdim": False, "dtype": None}, out)
    return out


@export(method=True)
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over `dim` (all dims when None). Integers and bools sum to int64, as in torch."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("sum", input)
    if dim is None and dtype is None and not keepdim:
        total = _small_float_total(input, False)
        if total is not None:
            return total
    if dtype is not None and input.dtype is not dtype:
        input = input.to(dtype)
    # `call_unary` runs a floating tensor's sum without `call`'s passes over *args and
    # keywords: with `_reduce_dims`' fast paths, a 16-element `x.sum()` under no_grad costs
    # 22.0k instructions instead of 25.9k (callgrind), `x.sum(1)` 22.3k instead of 26.4k.
    if dim is None:  # the whole tensor (every loss): no dims to check
        return call_unary(_sum, input, {"dims": _ALL_DIMS[input._data.ndim],
                                        "keepdim": keepdim, "dtype": dtype})
    return call_unary(_sum_dim, input, {"dims": _reduce_dims(dim, input._data.ndim),
                                        "keepdim": keepdim, "dtype": dtype})


def _mean_kernel(xp, a, *, dims, keepdim):
    count = _count(a.shape, dims)
    total = _blas_sum(xp, a, dims, keepdim) if a.size >= _BLAS_SUM_MIN else None
    if total is None:
        total = a.sum(axis=dims, keepdims=keepdim, dtype=_accumulate_dtype(a))  # see _sum_kernel
    if count == 0:  # the mean of nothing is nan (and NumPy would warn)
        return xp.full(xp.shape(total), xp.nan, dtype=a.dtype)
    return (total / count).astype(a.dtype, copy=False)


def _mean_rule(g, a_shape, dims, keepdim):
    # divided before it is spread: the result is a broadcast view, not a pass over a_shape
    return (_unreduce(g / builtins.max(_count(a_shape, dims), 1), a_shape, dims, keepdim),)


_mean = defop("mean", "none", _mean_kernel, _mean_rule)
_mean_dim = defop("mean_dim", "none", _mean_kernel, _mean_rule, node_name="MeanBackward1")


@export(method=True)
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over `dim` (all dims when None); floating inputs only, as in torch."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("mean", input)
    if dim is None and dtype is None and not keepdim:
        total = _small_float_total(input, True)
        if total is not None:
            return total
    if dtype is not None:
        input = input.to(dtype)
    if input.dtype.category < dt.FLOATING:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: "
                           f"{dt.scalar_name(input.dtype)}")
    op = _mean if dim is None else _mean_dim
    return call_unary(op, input, {"dims": _reduce_dims(dim, input._data.ndim),  # as sum
                                  "keepdim": keepdim})


def _nansum_kernel(xp, a, *, dims, keepdim, dtype):
    dtype = _result_dtype(a, dtype)
    out = xp.nansum(a, axis=dims, keepdims=keepdim, dtype=_accumulate_dtype(a) or dtype.np)
    return out.astype(dtype.np, copy=False)


# `a == a` is False exactly at the NaNs, which contributed nothing
_nansum = defop("nansum", "none", _nansum_kernel, lambda g, a, dims, keepdim: (
    _unreduce(g, a.shape, dims, keepdim) * (a == a),))


@export(method=True)
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """sum() treating NaN as zero."""
    _require_real("nansum", input, "nansum on CPU does not support complex inputs", RuntimeError)
    if dtype is not None and input.dtype is not dtype:
        input = input.to(dtype)
    return _nansum(input, dims=_reduce_dims(dim, input.ndim), keepdim=keepdim, dtype=dtype)


@export(method=True)
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """mean() of the non-NaN elements: nansum / their count (torch composes it the same way,
    so its grad_fn is DivBackward0)."""
    _require_real("nansum", input, "nansum on CPU does not support complex inputs", RuntimeError)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {dt.scalar_name(input.dtype)}")
    count = (input == input).sum(dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _prod_kernel(xp, a, *, dim, keepdim, dtype):
    dtype = _result_dtype(a, dtype)
    axis = None if a.ndim == 0 else dim
    out = xp.prod(a, axis=axis, keepdims=keepdim, dtype=_accumulate_dtype(a) or dtype.np)
    return out.astype(dtype.np, copy=False)


def _exclusive_cumprod(a, dim, reverse=False):
    """The product of the elements strictly before each position along `dim` (after it, with
    `reverse`): cumprod of [1, a_0, ..., a_{n-2}]."""
    from .shape import cat

    if reverse:
        return _exclusive_cumprod(a.flip(dim), dim).flip(dim)
    ones = a.new_ones([1 if i == dim else n for i, n in enumerate(a.shape)])
    return cat([ones, a[_slice_along(dim, 0, a.shape[dim] - 1)]], dim).cumprod(dim)


def _prod_grad(g, a, out, dim):
    """d prod / d a_k = the product of the other elements. Without zeros that is out / a_k;
    with zeros, (product before k) * (product after k), which never divides and stays
    differentiable for double backward. `g` and `out` keep the reduced dim."""
    if not (a == 0).any():
        return g * (out / a).conj()
    return g * (_exclusive_cumprod(a, dim) * _exclusive_cumprod(a, dim, reverse=True)).conj()


def _prod_rule(g, a, out, dim, keepdim):
    if dim is None:  # the whole tensor: the same math along its flattened elements
        flat = _prod_grad(g.reshape(1), a.reshape(-1), out.reshape(1), 0)
        return (flat.reshape(a.shape),)
    if a.ndim == 0:
        return (g,)
    if not keepdim:
        g, out = g.unsqueeze(dim), out.unsqueeze(dim)
    return (_prod_grad(g, a, out, dim),)


_prod = defop("prod", "none", _prod_kernel, _prod_rule)
_prod_dim = defop("prod_dim", "none", _prod_kernel, _prod_rule, node_name="ProdBackward1")


@export(method=True)
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product over one dim (all elements when None). Integers and bools give int64."""
    if dtype is not None and input.dtype is not dtype:
        input = input.to(dtype)
    if dim is None:
        return _prod(input, dim=None, keepdim=keepdim, dtype=dtype)
    return _prod_dim(input, dim=wrap_dim(dim, input.ndim), keepdim=keepdim, dtype=dtype)


# ----------------------------------------------------------------------------------------------
# extremes: max, min, amax, amin, argmax, argmin, aminmax
#
# max/min without a dim and amax/amin split the gradient among ties; max/min with a dim return
# the index of the first extreme (NaN counts as the extreme, as in torch) and send the whole
# gradient there.


def _extreme_kernel(xp, a, *, largest):
    if xp is np:  # the ufunc's reduce, which np.max wraps in Python (~6k instructions)
        return (np.maximum if largest else np.minimum).reduce(a, None)
    return xp.max(a) if largest else xp.min(a)


def _extreme_dim_kernel(xp, a, *, dim, keepdim, largest):
    x = _atleast_1d(a)
    pick = xp.argmax if largest else xp.argmin
    indices = pick(x, axis=dim, keepdims=True).astype(xp.int64, copy=False)
    values = xp.take_along_axis(x, indices, axis=dim)
    return _finish(values, indices, dim, keepdim, a.ndim)


def _amax_kernel(xp, a, *, dims, keepdim, largest):
    return (xp.amax if largest else xp.amin)(a, axis=dims, keepdims=keepdim)


def _extreme_rule(g, a, out):
    return (_evenly(g, a, out, tuple(range(a.ndim)), False, nan_aware=True),)


def _extreme_dim_rule(g, a_shape, out, dim, keepdim):
    return (_select_grad(g[0], out[1], dim, a_shape, keepdim),)


def _amax_rule(g, a, out, dims, keepdim):
    return (_evenly(g, a, out, dims, keepdim),)


_max = defop("max", "none", _extreme_kernel, _extreme_rule, node_name="MaxBackward1")
_min = defop("min", "none", _extreme_kernel, _extreme_rule, node_name="MinBackward1")
_max_dim = defop("max_dim", "none", _extreme_dim_kernel, _extreme_dim_rule,
                 node_name="MaxBackward0")
_min_dim = defop("min_dim", "none", _extreme_dim_kernel, _extreme_dim_rule,
                 node_name="MinBackward0")
_amax = defop("amax", "none", _amax_kernel, _amax_rule)
_amin = defop("amin", "none", _amax_kernel, _amax_rule)


def _extreme(name, largest, input, dim, keepdim):
    if isinstance(dim, Tensor):  # max(a, b) / min(a, b): torch's maximum / minimum
        return input.maximum(dim) if largest else input.minimum(dim)
    if dim is None:
        _require_real(name + "_all", input)
        _require_elements(name, input, (), full=True)
        return call_unary(_max if largest else _min, input, {"largest": largest})
    _require_real(name, input)
    dim = wrap_dim(dim, input.ndim)
    _require_elements(name, input, (dim,), full=False)
    op = _max_dim if largest else _min_dim
    values, indices = op(input, dim=dim, keepdim=keepdim, largest=largest)
    return getattr(return_types, name)(values, indices)


@export(name="max", method=True)
def reduce_max(input, dim=None, keepdim=False, *, other=None):
    """max(input) -> the largest value; max(input, dim, keepdim) -> (values, indices);
    max(input, other) -> elementwise maximum."""
    return _extreme("max", True, input, _dim_or_other("max", dim, other), keepdim)


@export(name="min", method=True)
def reduce_min(input, dim=None, keepdim=False, *, other=None):
    """min(input) -> the smallest value; min(input, dim, keepdim) -> (values, indices);
    min(input, other) -> elementwise minimum."""
    return _extreme("min", False, input, _dim_or_other("min", dim, other), keepdim)


def _dim_or_other(name, dim, other):
    """max/min take their second argument as `dim` or, by keyword, as `other` (a tensor)."""
    if other is None:
        return dim
    if dim is not None:
        raise TypeError(f"{name}() got both dim and other")
    return other


def _amax_like(name, largest, input, dim, keepdim):
    _require_real(("max" if largest else "min") + "_values_cpu", input)
    dims = _reduce_dims(dim, input.ndim)
    _require_elements(name, input, dims, full=_every_dim(dim))
    return (_amax if largest else _amin)(input, dims=dims, keepdim=keepdim, largest=largest)


@export(method=True)
def amax(input, dim=(), keepdim=False):
    """The largest values over `dim` (all dims by default); ties share the gradient."""
    return _amax_like("amax", True, input, dim, keepdim)


@export(method=True)
def amin(input, dim=(), keepdim=False):
    """The smallest values over `dim` (all dims by default); ties share the gradient."""
    return _amax_like("amin", False, input, dim, keepdim)


def _arg_extreme_kernel(xp, a, *, dim, keepdim, largest):
    pick = xp.argmax if largest else xp.argmin
    if dim is None:  # an index into the flattened tensor
        index = xp.asarray(pick(a.reshape(-1)), dtype=xp.int64)
        return index.reshape((1,) * a.ndim) if keepdim else index
    if a.ndim == 0:
        return xp.zeros((), dtype=xp.int64)
    return pick(a, axis=dim, keepdims=keepdim).astype(xp.int64, copy=False)


_argmax = defop("argmax", "none", _arg_extreme_kernel, differentiable=False)
_argmin = defop("argmin", "none", _arg_extreme_kernel, differentiable=False)


def _arg_extreme(name, largest, input, dim, keepdim):
    if input.dtype is dt.bool:
        raise RuntimeError(f"{name}(): does not support bool input")
    _require_real(name, input, f"{name}(): does not support complex input", RuntimeError)
    if dim is None:
        if input.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
    else:
        dim = wrap_dim(dim, input.ndim)
        _require_elements(name, input, (dim,), full=False)
    return (_argmax if largest else _argmin)(input, dim=dim, keepdim=keepdim, largest=largest)


@export(method=True)
def argmax(input, dim=None, keepdim=False):
    """Index of the first largest value (into the flattened tensor when dim is None)."""
    return _arg_extreme("argmax", True, input, dim, keepdim)


@export(method=True)
def argmin(input, dim=None, keepdim=False):
    """Index of the first smallest value (into the flattened tensor when dim is None)."""
    return _arg_extreme("argmin", False, input, dim, keepdim)


def _aminmax_kernel(xp, a, *, dims, keepdim):
    return xp.amin(a, axis=dims, keepdims=keepdim), xp.amax(a, axis=dims, keepdims=keepdim)


def _aminmax_rule(g, a, out, dims, keepdim):
    return (_evenly(g[0], a, out[0], dims, keepdim) + _evenly(g[1], a, out[1], dims, keepdim),)


_aminmax = defop("aminmax", "none", _aminmax_kernel, _aminmax_rule)


@export(method=True)
def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) in one call, over one dim or the whole tensor."""
    _require_real("aminmax_cpu", input)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        dims = tuple(range(input.ndim))
    else:
        dims = wrap_dims(dim, input.ndim)
        for d in dims:
            if input.shape[d] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    low, high = _aminmax(input, dims=dims, keepdim=keepdim)
    return return_types.aminmax(low, high)


# ----------------------------------------------------------------------------------------------
# moments and norms: var, std, var_mean, std_mean, logsumexp, norm


def _moments(xp, a, dims, correction):
    """(variance, mean), both with the reduced dims kept; half types computed in float32. The
    variance of complex numbers is the mean squared distance |a - mean|^2, a real number."""
    x = a.astype(_accumulate_dtype(a) or a.dtype, copy=False)
    n = _count(a.shape, dims)
    with _quiet(xp):  # no elements or no degrees of freedom: nan / inf, as in torch
        mean = xp.sum(x, axis=dims, keepdims=True) / n
        dev = x - mean
        square = dev.real * dev.real + dev.imag * dev.imag if dev.dtype.kind == "c" else dev * dev
        var = xp.sum(square, axis=dims, keepdims=True) / builtins.max(n - correction, 0)
    return var, mean


def _real_dtype(a):
    """The dtype of a's real part (a's own for real a)."""
    return a.real.dtype


def _var_kernel(xp, a, *, dims, keepdim, correction):
    var, _ = _moments(xp, a, dims, correction)
    return _squeeze_dims(xp, var, dims, keepdim).astype(_real_dtype(a), copy=False)


def _std_kernel(xp, a, *, dims, keepdim, correction):
    var, _ = _moments(xp, a, dims, correction)
    return _squeeze_dims(xp, xp.sqrt(var), dims, keepdim).astype(_real_dtype(a), copy=False)


def _var_mean_kernel(xp, a, *, dims, keepdim, correction):
    var, mean = _moments(xp, a, dims, correction)
    return (_squeeze_dims(xp, var, dims, keepdim).astype(_real_dtype(a), copy=False),
            _squeeze_dims(xp, mean, dims, keepdim).astype(a.dtype, copy=False))


def _std_mean_kernel(xp, a, *, dims, keepdim, correction):
    var, mean = _moments(xp, a, dims, correction)
    return (_squeeze_dims(xp, xp.sqrt(var), dims, keepdim).astype(_real_dtype(a), copy=False),
            _squeeze_dims(xp, mean, dims, keepdim).astype(a.dtype, copy=False))


def _var_grad(g, a, dims, keepdim, correction):
    """d var / d a = 2 (a - mean) / (N - correction)."""
    dof = _count(a.shape, dims) - correction
    scale = 2.0 / dof if dof != 0 else math.inf
    return _unreduce(g * scale, a.shape, dims, keepdim) * (a - a.mean(dims, keepdim=True))


def _std_to_var_grad(g, std):
    """d std = d var / (2 std); torch gives a zero gradient where std is 0 instead of 0/0."""
    return g / (2 * (std + (std == 0))) * (std != 0)


def _mean_grad(g, a, dims, keepdim):
    return _unreduce(g / builtins.max(_count(a.shape, dims), 1), a.shape, dims, keepdim)


_var = defop("var", "none", _var_kernel, lambda g, a, dims, keepdim, correction: (
    _var_grad(g, a, dims, keepdim, correction),))
_std = defop("std", "none", _std_kernel, lambda g, a, out, dims, keepdim, correction: (
    _var_grad(_std_to_var_grad(g, out), a, dims, keepdim, correction),))
_var_mean = defop("var_mean", "none", _var_mean_kernel,
                  lambda g, a, dims, keepdim, correction: (
                      _var_grad(g[0], a, dims, keepdim, correction)
                      + _mean_grad(g[1], a, dims, keepdim),))
_std_mean = defop("std_mean", "none", _std_mean_kernel,
                  lambda g, a, out, dims, keepdim, correction: (
                      _var_grad(_std_to_var_grad(g[0], out[0]), a, dims, keepdim, correction)
                      + _mean_grad(g[1], a, dims, keepdim),))


def _var_args(name, input, dim, unbiased, correction):
    """torch's three spellings: var(unbiased), var(dim, unbiased, keepdim) and
    var(dim, *, correction, keepdim). Returns (dims, correction)."""
    if isinstance(dim, builtins.bool):  # var(False): the first argument was `unbiased`
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}(): pass either `unbiased` or `correction`, not both")
    if correction is None:
        correction = 0 if unbiased is False else 1
    if input.dtype.category < dt.FLOATING:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = _reduce_dims(dim, input.ndim)
    if _count(input.shape, dims) - correction <= 0:
        warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than "
             "the reduction factor (input numel divided by output numel).")
    return dims, correction


@export(method=True)
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over `dim` with Bessel's correction (`correction=1`) unless told otherwise."""
    dims, correction = _var_args("var", input, dim, unbiased, correction)
    return _var(input, dims=dims, keepdim=keepdim, correction=correction)


@export(method=True)
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation: the square root of var()."""
    dims, correction = _var_args("std", input, dim, unbiased, correction)
    return _std(input, dims=dims, keepdim=keepdim, correction=correction)


@export
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) in one pass; a plain tuple, as in torch."""
    dims, correction = _var_args("var_mean", input, dim, unbiased, correction)
    return _var_mean(input, dims=dims, keepdim=keepdim, correction=correction)


@export
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) in one pass; a plain tuple, as in torch."""
    dims, correction = _var_args("std_mean", input, dim, unbiased, correction)
    return _std_mean(input, dims=dims, keepdim=keepdim, correction=correction)


def _logsumexp_kernel(xp, a, *, dims, keepdim):
    """log(sum(exp(a))) without overflow: shift by the max first (unless it is infinite, where
    the shift would make inf - inf = nan)."""
    acc = _accumulate_dtype(a)
    with _quiet(xp):  # log(0) = -inf for empty or all -inf slices, as in torch
        if builtins.any(a.shape[d] == 0 for d in dims):
            out = xp.log(xp.sum(xp.exp(a), axis=dims, keepdims=keepdim, dtype=acc))
            return out.astype(a.dtype, copy=False)
        m = xp.amax(a.real, axis=dims, keepdims=True)  # complex: shift by the real part
        m = xp.where(xp.isinf(m), 0, m)
        out = xp.log(xp.sum(xp.exp(a - m), axis=dims, keepdims=True, dtype=acc)) + m
    return _squeeze_dims(xp, out, dims, keepdim).astype(a.dtype, copy=False)


_logsumexp = defop("logsumexp", "none", _logsumexp_kernel, lambda g, a, out, dims, keepdim: (
    _unreduce(g, a.shape, dims, keepdim)
    * (a - _unreduce(out, a.shape, dims, keepdim)).exp().conj(),))


@export(method=True)
def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over `dim`, computed stably; integers go to the default float."""
    if input.dtype.category < dt.FLOATING:
        input = input.to(dt.get_default_dtype())
    return _logsumexp(input, dims=_reduce_dims(dim, input.ndim), keepdim=keepdim)


def _norm_kernel(xp, a, *, ord, dims, keepdim):
    x = xp.abs(a).astype(_accumulate_dtype(a) or a.dtype, copy=False)
    with _quiet(xp):  # 0 ** negative = inf on the way to a norm of 0, as in torch
        if ord == math.inf:
            out = xp.amax(x, axis=dims, keepdims=keepdim)
        elif ord == -math.inf:
            out = xp.amin(x, axis=dims, keepdims=keepdim)
        elif ord == 0:
            out = xp.sum(x != 0, axis=dims, keepdims=keepdim, dtype=x.dtype)
        elif ord == 1:
            out = xp.sum(x, axis=dims, keepdims=keepdim)
        elif ord == 2:
            out = xp.sqrt(xp.sum(x * x, axis=dims, keepdims=keepdim))
        else:
            out = xp.sum(x ** ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)
    return xp.asarray(out).astype(_real_dtype(a), copy=False)


def _norm_rule(g, a, out, ord, dims, keepdim):
    """d ||a||_p / d a = sign(a) |a|^(p-1) / ||a||^(p-1), with torch's special cases: p=0 has
    zero gradient, inf-norms split it among the tied largest |a|, and a zero norm or a zero
    element gives zero instead of 0/0. For complex a, sign(a) is a / |a| (sgn)."""
    g = _unreduce(g, a.shape, dims, keepdim)
    out = _unreduce(out, a.shape, dims, keepdim)
    if ord == 0:
        return (a.new_zeros(a.shape),)
    sign = a.sgn()
    if ord == 1:
        return (g * sign,)
    if ord == 2:
        return (g * a / (out + (out == 0)),)
    if math.isinf(ord):
        mask = a.abs() == out
        return (g * sign * mask / mask.sum(dims, keepdim=True),)
    magnitude = (a.abs() + (a == 0)) ** (ord - 1) * (a != 0)
    return (g * sign * magnitude * (out + (out == 0)) ** (1 - ord),)


# torch.norm runs linalg.vector_norm, hence the node name
_norm = defop("norm", "none", _norm_kernel, _norm_rule, node_name="LinalgVectorNormBackward0")


def _norm_order(p, dim):
    """torch.norm's `p` as a number: 'fro' is the 2-norm of the elements."""
    if p is None:
        p = "fro"
    if not isinstance(p, str):
        return builtins.float(p)
    if p == "fro":
        if dim is not None and not isinstance(dim, int) and len(dim) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                               f"{' '.join(map(str, dim))}")
        return 2.0
    if p == "nuc":
        raise NotImplementedError("norm(p='nuc') needs singular values, which ember.norm does "
                                  "not compute yet")
    raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")


@export(method=True)
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector p-norm of the elements over `dim` (p = 'fro', any number, inf or -inf)."""
    ord = _norm_order(p, dim)
    if input.dtype.category < dt.FLOATING:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {dt.scalar_name(input.dtype)}")
    if dtype is not None and input.dtype is not dtype:
        input = input.to(dtype)
    dims = _reduce_dims(dim, input.ndim)
    if input.numel() == 0 and (ord < 0 or ord == math.inf):  # no identity to start from
        if dim is None:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an empty "
                               "tensor because the operation does not have an identity")
        for d in dims:
            if input.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on the "
                                   f"dimension {d}because this dimension is empty and the "
                                   "operation does not have an identity")
    return _norm(input, ord=ord, dims=dims, keepdim=keepdim)


# ----------------------------------------------------------------------------------------------
# order statistics: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode
#
# Everything here sorts stably (ties keep their order), with NaN above every number, as torch
# does on CPU; the backward puts `g` back at the picked indices.


def _argsort(xp, x, dim, descending):
    """Stable ascending or descending order along `dim`."""
    if not descending:
        return xp.argsort(x, axis=dim, kind="stable")
    # descending and still stable: sort the reversed slice ascending, then read it backwards
    order = xp.flip(xp.argsort(xp.flip(x, axis=dim), axis=dim, kind="stable"), axis=dim)
    return (x.shape[dim] - 1) - order


def _sort_kernel(xp, a, *, dim, descending):
    x = _atleast_1d(a)
    indices = _argsort(xp, x, dim, descending)
    return xp.take_along_axis(x, indices, axis=dim).reshape(a.shape), indices.reshape(a.shape)


def _sort_rule(g, a_shape, out, dim):
    return (_select_grad(g[0], out[1], dim, a_shape, keepdim=True),)


_sort = defop("sort", "none", _sort_kernel, _sort_rule)
_sort_stable = defop("sort_stable", "none", _sort_kernel, _sort_rule, node_name="SortBackward1")
_argsort_op = defop("argsort", "none", lambda xp, a, *, dim, descending: _argsort(
    xp, _atleast_1d(a), dim, descending).reshape(a.shape), differentiable=False)


@export(method=True)
def sort(input, dim=-1, descending=False, stable=None):
    """(values, indices) sorted along `dim`. Always stable; passing `stable` (True or False)
    only changes the grad_fn name, as in torch (SortBackward1)."""
    _require_real("sort", input, "Sort does not support complex dtypes on CPU", RuntimeError)
    op = _sort if stable is None else _sort_stable
    values, indices = op(input, dim=wrap_dim(dim, input.ndim), descending=bool(descending))
    return return_types.sort(values, indices)


@export(method=True)
def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort `input` along `dim`. Always stable (ties keep their order), which
    is also a valid answer when `stable` is False."""
    _require_real("sort", input, "Sort does not support complex dtypes on CPU", RuntimeError)
    return _argsort_op(input, dim=wrap_dim(dim, input.ndim), descending=bool(descending))


@export(method=True)
def msort(input):
    """Sort along dim 0; values only."""
    return sort(input, 0).values


def _topk_kernel(xp, a, *, k, dim, largest):
    """Partition first (linear time: the k best land at one end, NaN counting as the largest),
    then sort only those k -- a 50,000-word vocabulary needs no full sort for top-5."""
    x = _atleast_1d(a)
    n = x.shape[dim]
    if 0 < k < n:
        split = xp.argpartition(x, n - k if largest else k - 1, axis=dim)
        best = split[_slice_along(dim, n - k, n) if largest else _slice_along(dim, 0, k)]
        order = _argsort(xp, xp.take_along_axis(x, best, axis=dim), dim, descending=largest)
        indices = xp.take_along_axis(best, order, axis=dim)
    else:
        indices = _argsort(xp, x, dim, descending=largest)[_slice_along(dim, 0, k)]
    values = xp.take_along_axis(x, indices, axis=dim)
    if a.ndim == 0:
        return values.reshape(()), indices.reshape(())
    return values, indices


_topk = defop("topk", "none", _topk_kernel, _sort_rule)


@export(method=True)
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) values along `dim` and their indices, best first. The order
    is sorted whether or not `sorted` is set (torch leaves it unspecified then)."""
    _require_real("topk", input, "topk does not support complex dtypes on CPU", RuntimeError)
    dim = wrap_dim(dim, input.ndim)
    if input.dtype is dt.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    size = input.shape[dim] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    values, indices = _topk(input, k=k, dim=dim, largest=bool(largest))
    return return_types.topk(values, indices)


def _kthvalue_kernel(xp, a, *, k, dim, keepdim):
    x = _atleast_1d(a)
    indices = _argsort(xp, x, dim, descending=False)[_slice_along(dim, k - 1, k)]
    return _finish(xp.take_along_axis(x, indices, axis=dim), indices, dim, keepdim, a.ndim)


_kthvalue = defop("kthvalue", "none", _kthvalue_kernel, _extreme_dim_rule)


@export(method=True)
def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest value along `dim` (k counts from 1) and its index."""
    _require_real("kthvalue_cpu", input)
    dim = wrap_dim(dim, input.ndim)
    _require_elements("kthvalue", input, (dim,), full=False)
    size = input.shape[dim] if input.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    values, indices = _kthvalue(input, k=k, dim=dim, keepdim=keepdim)
    return return_types.kthvalue(values, indices)


def _median_dim_kernel(xp, a, *, dim, keepdim, ignore_nan):
    """The lower median along `dim`. NaNs sort last, so with `valid` non-NaN elements the median
    sits at (valid - 1) // 2 (nanmedian), while median answers NaN -- the first NaN -- if there
    is one."""
    x = _atleast_1d(a)
    order = xp.argsort(x, axis=dim, kind="stable")
    n = x.shape[dim]
    valid = xp.sum(x == x, axis=dim, keepdims=True)
    if ignore_nan:
        position = xp.maximum(valid - 1, 0) // 2
    else:
        position = xp.where(valid < n, valid, (n - 1) // 2)
    indices = xp.take_along_axis(order, position.astype(xp.int64, copy=False), axis=dim)
    return _finish(xp.take_along_axis(x, indices, axis=dim), indices, dim, keepdim, a.ndim)


def _median_kernel(xp, a, *, ignore_nan):
    if a.size == 0:
        if a.dtype.kind not in "fV":
            raise RuntimeError("median() of an empty integer tensor has no value")
        return xp.full((), xp.nan, dtype=a.dtype)
    values, _ = _median_dim_kernel(xp, a.reshape(-1), dim=0, keepdim=False,
                                   ignore_nan=ignore_nan)
    return values


_median = defop("median", "none", _median_kernel, _extreme_rule)
_nanmedian = defop("nanmedian", "none", _median_kernel, _extreme_rule)
_median_dim = defop("median_dim", "none", _median_dim_kernel, _extreme_dim_rule,
                    node_name="MedianBackward1")
_nanmedian_dim = defop("nanmedian_dim", "none", _median_dim_kernel, _extreme_dim_rule,
                       node_name="NanmedianBackward1")


def _median_like(name, ignore_nan, input, dim, keepdim):
    _require_real(name + "_cpu", input)
    if input.dtype is dt.bool:
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'Bool\'')
    if dim is None:
        return (_nanmedian if ignore_nan else _median)(input, ignore_nan=ignore_nan)
    dim = wrap_dim(dim, input.ndim)
    _require_elements(name, input, (dim,), full=False)
    op = _nanmedian_dim if ignore_nan else _median_dim
    values, indices = op(input, dim=dim, keepdim=keepdim, ignore_nan=ignore_nan)
    return getattr(return_types, name)(values, indices)


@export(method=True)
def median(input, dim=None, keepdim=False):
    """The lower median: of all elements (a value), or along `dim` (values, indices). NaN
    anywhere in a slice makes its median NaN."""
    return _median_like("median", False, input, dim, keepdim)


@export(method=True)
def nanmedian(input, dim=None, keepdim=False):
    """median() ignoring NaNs (NaN only when a slice is all NaN)."""
    return _median_like("nanmedian", True, input, dim, keepdim)


def _mode_kernel(xp, a, *, dim, keepdim):
    """The most frequent value along `dim` (the smallest one on a tie in counts) and the index
    of its last occurrence, as torch. Sorting makes equal values into runs; each position learns
    where its run starts and ends, and the longest run wins."""
    x = xp.moveaxis(_atleast_1d(a), dim, -1)
    order = xp.argsort(x, axis=-1, kind="stable")
    s = xp.take_along_axis(x, order, axis=-1)
    n = s.shape[-1]
    position = xp.arange(n)
    starts = xp.ones(s.shape, dtype=bool)
    starts[..., 1:] = s[..., 1:] != s[..., :-1]
    ends = xp.ones(s.shape, dtype=bool)
    ends[..., :-1] = starts[..., 1:]
    run_start = _running(xp, xp.maximum, xp.where(starts, position, 0), -1)
    run_end = xp.flip(_running(xp, xp.minimum, xp.flip(xp.where(ends, position, n), axis=-1),
                               -1), axis=-1)
    best = xp.argmax(run_end - run_start, axis=-1, keepdims=True)  # first = smallest value
    last = xp.take_along_axis(run_end, best, axis=-1)  # stable sort: the last occurrence
    values = xp.moveaxis(xp.take_along_axis(s, last, axis=-1), -1, dim)
    indices = xp.moveaxis(xp.take_along_axis(order, last, axis=-1), -1, dim)
    return _finish(values, indices.astype(xp.int64, copy=False), dim, keepdim, a.ndim)


_mode = defop("mode", "none", _mode_kernel, _extreme_dim_rule)


@export(method=True)
def mode(input, dim=-1, keepdim=False):
    """(values, indices) of the most frequent value along `dim`."""
    _require_real("mode_cpu", input)
    dim = wrap_dim(dim, input.ndim)
    _require_elements("mode", input, (dim,), full=False)
    values, indices = _mode(input, dim=dim, keepdim=keepdim)
    return return_types.mode(values, indices)


# ----------------------------------------------------------------------------------------------
# scans: cumsum, cumprod, cummax, cummin, logcumsumexp


def _reverse_cumsum(t, dim):
    """out_i = sum over j >= i of t_j (the adjoint of cumsum)."""
    if t.ndim == 0:
        return t
    return cumsum(t.flip(dim), dim).flip(dim)


def _cumsum_kernel(xp, a, *, dim, dtype):
    dtype = _result_dtype(a, dtype)
    out = xp.cumsum(_atleast_1d(a), axis=dim, dtype=_accumulate_dtype(a) or dtype.np)
    return out.astype(dtype.np, copy=False).reshape(a.shape)


_cumsum = defop("cumsum", "none", _cumsum_kernel,
                lambda g, dim: (_reverse_cumsum(g, dim),))


@export(method=True)
def cumsum(input, dim, *, dtype=None):
    """Running sums along `dim`; integers and bools give int64."""
    if dtype is not None and input.dtype is not dtype:
        input = input.to(dtype)
    return _cumsum(input, dim=wrap_dim(dim, input.ndim), dtype=dtype)


@export(function=False, method=True)
def cumsum_(self, dim, *, dtype=None):
    """In place: self becomes its running sums along `dim` (kept in self's dtype)."""
    return _cumsum.inplace(self, dim=wrap_dim(dim, self.ndim), dtype=dtype)


def _cumprod_kernel(xp, a, *, dim, dtype):
    dtype = _result_dtype(a, dtype)
    out = xp.cumprod(_atleast_1d(a), axis=dim, dtype=_accumulate_dtype(a) or dtype.np)
    return out.astype(dtype.np, copy=False).reshape(a.shape)


def _cumprod_rule(g, a, out, dim):
    """grad_k = sum over i >= k of g_i * prod_{j <= i, j != k} a_j. Without zeros that is
    reverse_cumsum(g * out)_k / a_k. With zeros: before a slice's first zero the same formula
    holds (later outputs are 0); at the first zero z it is the reverse cumsum of g times the
    cumprod of the slice with a_z replaced by one; after z every term holds a_z = 0. That masked
    formula is right but its own derivative is not (the zeros after z hide how they depend on
    a_z), so a backward that records a graph uses `_cumprod_grad_quadratic` instead, as torch.
    Complex inputs take the conjugate of every product (see ops/complex.py)."""
    if a.ndim == 0:
        return (g,)
    zero = a == 0
    if not zero.any():
        return (_reverse_cumsum(g * out.conj(), dim) / a.conj(),)
    if is_grad_enabled():
        return (_cumprod_grad_quadratic(g, a, dim),)
    seen = zero.cumsum(dim)
    before = seen == 0
    first = zero * (seen == 1)
    safe = a * before + (seen != 0)  # a before the first zero, 1 from there on
    part1 = _reverse_cumsum(g * out.conj(), dim) / safe.conj() * before
    part2 = _reverse_cumsum(g * (a + first).cumprod(dim).conj(), dim) * first
    return (part1 + part2,)


def _cumprod_grad_quadratic(g, a, dim):
    """The cumprod gradient written out for every k at once, so it is differentiable through
    zeros: row k of `c` is the slice with a_k replaced by one, its cumprod is prod_{j<=i, j!=k},
    and only i >= k count. Costs n times the memory of the input (n = the dim's size)."""
    from .._creation import arange, eye

    n = a.shape[dim]
    a_last, g_last = a.transpose(dim, -1), g.transpose(dim, -1)
    identity = eye(n, dtype=a.dtype, device=a.device)
    c = a_last.unsqueeze(-2) * (1 - identity) + identity  # (..., k, j)
    steps = arange(n, device=a.device)
    later = steps.unsqueeze(0) >= steps.unsqueeze(1)  # (k, i): i >= k
    grad = (c.cumprod(-1).conj() * g_last.unsqueeze(-2) * later).sum(-1)
    return grad.transpose(dim, -1)


_cumprod = defop("cumprod", "none", _cumprod_kernel, _cumprod_rule)


@export(method=True)
def cumprod(input, dim, *, dtype=None):
    """Running products along `dim`; integers and bools give int64."""
    if dtype is not None and input.dtype is not dtype:
        input = input.to(dtype)
    return _cumprod(input, dim=wrap_dim(dim, input.ndim), dtype=dtype)


@export(function=False, method=True)
def cumprod_(self, dim, *, dtype=None):
    """In place: self becomes its running products along `dim` (kept in self's dtype)."""
    return _cumprod.inplace(self, dim=wrap_dim(dim, self.ndim), dtype=dtype)


def _cum_extreme_kernel(xp, a, *, dim, largest):
    """Running max/min and where it was last attained. An element takes over the index when it
    equals the running value (so ties move it to the latest one) or is NaN, as in torch."""
    x = _atleast_1d(a)
    values = _running(xp, xp.maximum if largest else xp.minimum, x, dim)
    shape = [1] * x.ndim
    shape[dim] = x.shape[dim]
    position = xp.arange(x.shape[dim]).reshape(shape)
    hit = (x == values) | (x != x)
    indices = _running(xp, xp.maximum, xp.where(hit, position, 0), dim)
    return values.reshape(a.shape), indices.astype(xp.int64, copy=False).reshape(a.shape)


def _cum_extreme_rule(g, a_shape, out, dim):
    return (_select_grad(g[0], out[1], dim, a_shape, keepdim=True),)


_cummax = defop("cummax", "none", _cum_extreme_kernel, _cum_extreme_rule)
_cummin = defop("cummin", "none", _cum_extreme_kernel, _cum_extreme_rule)


@export(method=True)
def cummax(input, dim):
    """(values, indices) of the running maximum along `dim`."""
    _require_real("cummax_cpu", input)
    values, indices = _cummax(input, dim=wrap_dim(dim, input.ndim), largest=True)
    return return_types.cummax(values, indices)


@export(method=True)
def cummin(input, dim):
    """(values, indices) of the running minimum along `dim`."""
    _require_real("cummin_cpu", input)
    values, indices = _cummin(input, dim=wrap_dim(dim, input.ndim), largest=False)
    return return_types.cummin(values, indices)


def _logcumsumexp_kernel(xp, a, *, dim):
    x = _atleast_1d(a).astype(_accumulate_dtype(a) or a.dtype, copy=False)
    with _quiet(xp):
        out = _running(xp, xp.logaddexp, x, dim)
    return out.astype(a.dtype, copy=False).reshape(a.shape)


def _logcumsumexp_rule(g, a, out, dim):
    """grad_k = sum over i >= k of g_i exp(a_k - out_i), summed in log space so nothing
    overflows: exp(a_k + reverse_logcumsumexp(log g_i - out_i)). `g` can be negative, so its
    positive and negative parts go separately. The log of a zero part is a quarter of the
    dtype's lowest value: far below anything that matters, and finite (a -inf would turn into
    NaN in the double backward) even after subtracting `out`."""
    if a.ndim == 0:
        return (g,)
    lowest = dt.finfo(g.dtype).min / 4

    def part(h):  # h >= 0
        empty = (h == 0).to(h.dtype)
        log_h = (h + empty).log() + empty * lowest
        return (a + logcumsumexp((log_h - out).flip(dim), dim).flip(dim)).exp()

    return (part(g.relu()) - part((-g).relu()),)


_logcumsumexp = defop("logcumsumexp", "none", _logcumsumexp_kernel, _logcumsumexp_rule)


@export(method=True)
def logcumsumexp(input, dim):
    """log(cumsum(exp(input))) along `dim`, computed without overflow."""
    _require_float("logcumsumexp_out_cpu", input)
    return _logcumsumexp(input, dim=wrap_dim(dim, input.ndim))


# ----------------------------------------------------------------------------------------------
# logical reductions and counting: all, any, count_nonzero, unique, unique_consecutive,
# bincount, histc, diff


def _logical_kernel(reduce):
    def kernel(xp, a, *, dims, keepdim):
        out = getattr(xp, reduce)(a, axis=dims, keepdims=keepdim)
        return out.astype(a.dtype) if a.dtype == xp.uint8 else out  # torch keeps uint8
    return kernel


_any = defop("any", "none", _logical_kernel("any"), differentiable=False)
_all = defop("all", "none", _logical_kernel("all"), differentiable=False)


@export(method=True)
def any(input, dim=None, keepdim=False):
    """Whether any element is nonzero (over `dim`; `dim=()` reduces nothing, as in torch)."""
    return _any(input, dims=wrap_dims(dim, input.ndim), keepdim=keepdim)


@export(method=True)
def all(input, dim=None, keepdim=False):
    """Whether every element is nonzero (over `dim`; `dim=()` reduces nothing, as in torch)."""
    return _all(input, dims=wrap_dims(dim, input.ndim), keepdim=keepdim)


_count_nonzero = defop("count_nonzero", "none", lambda xp, a, *, dims: xp.sum(
    a != 0, axis=dims, dtype=xp.int64), differentiable=False)


@export(method=True)
def count_nonzero(input, dim=None):
    """The number of nonzero elements, as int64: over `dim` (an int or a tuple), or all of them."""
    return _count_nonzero(input, dims=_reduce_dims(dim, input.ndim))


def _unique_kernel(xp, a, *, dim):
    """Sorted unique values (or slices along `dim`), the inverse map and the counts. NaNs stay
    distinct from each other, as in torch."""
    if dim is None:
        values, inverse, counts = xp.unique(a.reshape(-1), return_inverse=True,
                                            return_counts=True, equal_nan=False)
        inverse = inverse.reshape(a.shape)
    else:
        values, inverse, counts = xp.unique(a, return_inverse=True, return_counts=True,
                                            axis=dim)
        inverse = inverse.reshape(-1)
    return values, inverse.astype(xp.int64, copy=False), counts.astype(xp.int64, copy=False)


def _unique_consecutive_kernel(xp, a, *, dim):
    """Collapse runs of equal neighbours (elements, or slices along `dim`)."""
    x = a.reshape(-1) if dim is None else xp.moveaxis(a, dim, 0)
    n = x.shape[0]
    rows = x.reshape(n, math.prod(x.shape[1:]))
    new = xp.ones(n, dtype=bool)
    new[1:] = xp.any(rows[1:] != rows[:-1], axis=1)
    starts = xp.flatnonzero(new)
    values = x[starts] if dim is None else xp.moveaxis(x[starts], 0, dim)
    inverse = xp.cumsum(new, dtype=xp.int64) - 1
    counts = xp.diff(xp.append(starts, n)).astype(xp.int64, copy=False)
    return values, inverse.reshape(a.shape) if dim is None else inverse, counts


def _no_derivative(name):
    """torch records these ops (their float results require grad) but refuses to backward."""
    def rule(g):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return rule


_unique = defop("unique", "none", _unique_kernel, _no_derivative("unique"))
_unique_consecutive = defop("unique_consecutive", "none", _unique_consecutive_kernel,
                            _no_derivative("unique_consecutive"))


def _unique_result(values, inverse, counts, return_inverse, return_counts):
    if not return_inverse and not return_counts:
        return values
    return (values,) + ((inverse,) if return_inverse else ()) + (
        (counts,) if return_counts else ())


@export(method=True)
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The unique elements (or slices along `dim`), always sorted; optionally the index of each
    input element in the result and how often each occurs."""
    _require_real("unique", input)
    if dim is not None:
        if input.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        dim = wrap_dim(dim, input.ndim)
    return _unique_result(*_unique(input, dim=dim), return_inverse, return_counts)


@export(method=True)
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """unique() of each run of equal neighbours, in order (no sorting)."""
    _require_real("unique_consecutive", input)
    if dim is not None:
        dim = wrap_dim(dim, input.ndim)
    return _unique_result(*_unique_consecutive(input, dim=dim), return_inverse, return_counts)


def _bincount_kernel(xp, a, weights, *, minlength):
    out = xp.bincount(a, weights=weights, minlength=minlength)
    if weights is None:
        return out.astype(xp.int64, copy=False)
    # torch keeps float32 weights in float32 and gives float64 for every other weight type
    return out.astype(weights.dtype if weights.dtype == xp.float32 else xp.float64, copy=False)


# torch leaves the weights' derivative unimplemented; it is just `g` read at each bin
_bincount = defop("bincount", "none", _bincount_kernel,
                  lambda g, a: (None, g.gather(0, a)))


@export(method=True)
def bincount(input, weights=None, minlength=0):
    """How many times each non-negative integer occurs in a 1-D tensor (summing `weights`)."""
    if input.dtype.is_floating_point or input.dtype is dt.bool:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{dt.scalar_name(input.dtype)}'")
    if input.ndim != 1 or (input.numel() and builtins.bool((input < 0).any())):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    return _bincount(input, weights, minlength=minlength)


def _histc_kernel(xp, a, *, bins, low, high):
    """Counts in `bins` equal-width bins over [low, high] (the data's range when low == high);
    elements outside, and NaNs, are ignored; the last bin includes its right edge. The bin of x
    is (x - low) * bins / (high - low) in the input's dtype, as torch computes it."""
    x = a.reshape(-1)
    if low == high and x.size:
        low, high = builtins.float(x.min()), builtins.float(x.max())
        if not (math.isfinite(low) and math.isfinite(high)):
            raise RuntimeError(f"torch.histc: range of [{low:g}, {high:g}] is not finite")
    if low == high:
        low, high = low - 1, high + 1
    low, high = a.dtype.type(low), a.dtype.type(high)
    x = x[(x >= low) & (x <= high)]
    bin_of = ((x - low) * bins / (high - low)).astype(xp.int64)
    counts = xp.bincount(xp.minimum(bin_of, bins - 1), minlength=bins)
    return counts.astype(a.dtype)


_histc = defop("histc", "none", _histc_kernel, differentiable=False)


@export(method=True)
def histc(input, bins=100, min=0, max=0):
    """A histogram of the elements with `bins` equal bins over [min, max]."""
    _require_float("histogram_cpu", input)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    return _histc(input, bins=bins, low=builtins.float(min), high=builtins.float(max))


@export(method=True)
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """n-th forward difference along `dim` (bools: whether neighbours differ). Built from views
    and subtraction, so its grad_fn is SubBackward0, as in torch."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = wrap_dim(dim, input.ndim)
    if prepend is not None or append is not None:
        from .shape import cat

        input = cat([t for t in (prepend, input, append) if t is not None], dim)
    for _ in range(n):
        later, earlier = input[_slice_along(dim, 1, None)], input[_slice_along(dim, None, -1)]
        input = later != earlier if input.dtype is dt.bool else later - earlier
    return input


# ----------------------------------------------------------------------------------------------
# renorm: rescale the slices whose p-norm exceeds maxnorm


def _renorm_kernel(xp, a, *, p, dims, maxnorm):
    """a * factor, factor = maxnorm / (norm + 1e-7) on the slices whose p-norm over `dims`
    exceeds maxnorm, 1 elsewhere (torch's epsilon)."""
    norms = _norm_kernel(xp, a, ord=p, dims=dims, keepdim=True)
    with _quiet(xp):
        factor = xp.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return a * factor.astype(a.dtype)


def _renorm_rule(g, a, p, dims, maxnorm):
    """d(a f(n))/da with n the slice's norm: g f + a's part through n, which is the norm's
    rule applied to sum(g a) f'(n), f'(n) = -maxnorm / (n + 1e-7)^2 where rescaled."""
    norms = _norm(a, ord=p, dims=dims, keepdim=True)
    over = norms > maxnorm
    factor = (maxnorm / (norms + 1e-7)).where(over, 1.0)
    slope = (-maxnorm / ((norms + 1e-7) * (norms + 1e-7))).where(over, 0.0)
    through_norm = (g * a).sum(dims, keepdim=True) * slope
    return (g * factor + _norm_rule(through_norm, a, norms, p, dims, True)[0],)


_renorm = defop("renorm", "none", _renorm_kernel, _renorm_rule)


def _renorm_args(input, p, dim, maxnorm):
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           "dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {dt.scalar_name(input.dtype)}")
    dim = wrap_dim(dim, input.ndim)
    others = tuple(d for d in range(input.ndim) if d != dim)
    return {"p": builtins.float(p), "dims": others, "maxnorm": builtins.float(maxnorm)}


@export(method=True)
def renorm(input, p, dim, maxnorm):
    """Each slice input.select(dim, i) whose p-norm exceeds maxnorm, scaled down to maxnorm."""
    return _renorm(input, **_renorm_args(input, p, dim, maxnorm))


@export(function=False, method=True)
def renorm_(self, p, dim, maxnorm):
    """In-place renorm."""
    return _renorm.inplace(self, **_renorm_args(self, p, dim, maxnorm))


# ----------------------------------------------------------------------------------------------
# segment_reduce: reductions over consecutive runs (segments) along one dim

_SEGMENT_REDUCTIONS = {"sum": "sum", "prod": "prod", "mean": "sum", "max": "amax",
                       "amax": "amax", "min": "amin", "amin": "amin"}
_SEGMENT_IDENTITY = {"sum": 0.0, "prod": 1.0, "mean": 0.0, "max": -math.inf,
                     "amax": -math.inf, "min": math.inf, "amin": math.inf}


def _segment_ids_kernel(xp, lengths, *, size):
    """For each position along the reduced dim, the index of the segment holding it."""
    ends = xp.cumsum(lengths, axis=-1)
    positions = xp.arange(size)
    return (positions >= ends[..., :, None]).sum(axis=-2).astype(xp.int64)


_segment_ids = defop("segment_ids", "none", _segment_ids_kernel, differentiable=False)


@export
def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduce `data` over consecutive segments along `axis` given by `lengths` (or `offsets`,
    their running boundaries): sum, prod, mean, max or min; `initial` joins every segment
    (and is an empty segment's value; without it an empty segment is the reduction's
    identity, nan for mean)."""
    if reduce not in _SEGMENT_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if not data.dtype.is_floating_point:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for "
                                  f"'{dt.scalar_name(data.dtype)}'")
    if lengths is None:
        if offsets is None:
            raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
        lengths = offsets[..., 1:] - offsets[..., :-1]
    axis = wrap_dim(axis, data.ndim)
    if axis != lengths.ndim - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"lengths but got {axis}.")
    size = data.shape[axis]
    if not unsafe and builtins.bool((lengths.sum(-1) != size).any()):
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                           "to data.size(lengths.dim()-1) when !unsafe.")
    ids = _segment_ids(lengths, size=size)
    ids = ids.reshape(tuple(ids.shape) + (1,) * (data.ndim - axis - 1)).expand(data.shape)
    shape = list(data.shape)
    shape[axis] = lengths.shape[-1]
    extreme = reduce in ("max", "amax", "min", "amin")
    start = _SEGMENT_IDENTITY[reduce] if initial is None or extreme else float(initial)
    out = data.new_full(shape, start).scatter_reduce(axis, ids, data,
                                                     _SEGMENT_REDUCTIONS[reduce])
    if extreme:  # `initial` as a bound: a tie with it leaves the gradient to the data
        if initial is None:
            return out
        wins = out >= initial if reduce in ("max", "amax") else out <= initial
        return out.where(wins, float(initial))
    if reduce != "mean":
        return out
    counts = lengths.to(data.dtype).reshape(tuple(lengths.shape) +
                                            (1,) * (data.ndim - axis - 1))
    return out / (counts.clamp(min=1) if initial is not None else counts)


# ----------------------------------------------------------------------------------------------
# hash_tensor: the xor of every element's 64-bit pattern


def _hash_kernel(xp, a, *, dims, keepdim):
    """Each element as a 64-bit float (floating dtypes) or integer, its bits read as uint64,
    xor-reduced over `dims`."""
    wide = a.astype(xp.float64 if a.dtype.kind == "f" or a.dtype.kind == "V" or
                    a.dtype.type.__module__.startswith("ml_dtypes") else xp.int64)
    return xp.bitwise_xor.reduce(wide.view(xp.uint64), axis=dims, keepdims=keepdim)


_hash_tensor = defop("hash_tensor", "none", _hash_kernel, differentiable=False)


@export(method=True)
def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    """A uint64 hash of the elements (of each slice along `dim`): the xor of their bit
    patterns after widening to float64 / int64 (mode 0, the only mode torch has)."""
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if _every_dim(dim) and input.numel() == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' "
                           "argument.")
    return _hash_tensor(input, dims=_reduce_dims(dim, input.ndim), keepdim=keepdim)


# ----------------------------------------------------------------------------------------------
# sum_to_size: what the autograd engine uses to sum broadcast gradients


def _sum_to_size_kernel(xp, a, *, size):
    lead = a.ndim - len(size)
    if lead < 0 or builtins.any(s != n and s != 1 for s, n in zip(size, a.shape[lead:])):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, a.shape))}}}.")
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size)
                                      if s == 1 and a.shape[lead + i] != 1)
    if not axes:
        return a.copy()
    out = _sum_leading(xp, a, axes)
    if out is None:
        out = xp.sum(a, axis=axes, keepdims=True)
    return out.reshape(size)


_sum_to_size = defop("sum_to_size", "none", _sum_to_size_kernel,
                     lambda g, a_shape: (g.expand(a_shape),))


@export(function=False, method=True)
def sum_to_size(self, *size):
    """Sum broadcast dims away so the result has `size` (what the engine does to gradients)."""
    from .._utils import parse_size

    return _sum_to_size(self, size=parse_size(size))


# ----------------------------------------------------------------------------------------------
# forward mode and vmap (see ops/_op.py). Sums, means and cumsum are linear; ops that pick
# elements (max over a dim, sort, median, ...) pass on the tangent at the picked indices; the
# rest take their tangent from their backward rules. Batching shifts the reduced dims past the
# batch dim; a reduction over every dim becomes one over every dim but the batch.


def _picked(t, indices, dim, keepdim):
    """The tangent at `indices` along `dim` (the indices of a reduction, kept or not)."""
    if t.ndim == 0:
        return t
    index = indices if keepdim else indices.unsqueeze(dim)
    picked = t.gather(dim, index)
    return picked if keepdim else picked.squeeze(dim)


def _pick_jvp(a_t, out, dim, keepdim):
    return (_picked(a_t, out[1], dim, keepdim), None)


def _sort_jvp(a_t, out, dim):
    return (_picked(a_t, out[1], dim, True), None)


def _sample_dims(a):
    """Every dim of one sample of batched `a`."""
    return tuple(range(1, a.ndim))


def _flat_samples(a):
    return a.reshape(a.shape[0], -1)


def _all_dims_batch(op, values, batched, attrs):
    """max(), median() of every element: the same over each sample's elements."""
    a = values[0]
    if op is _max or op is _min:
        return _amax(a, dims=_sample_dims(a), keepdim=False, largest=attrs["largest"])
    if op is _prod:
        return _prod_dim(_flat_samples(a), dim=1, keepdim=False, dtype=attrs["dtype"])
    median = _nanmedian_dim if op is _nanmedian else _median_dim
    return median(_flat_samples(a), dim=1, keepdim=False, ignore_nan=attrs["ignore_nan"])[0]


def _arg_batch(op, values, batched, attrs):
    a, dim = values[0], attrs["dim"]
    if dim is not None:
        return op(a, **batch_rules.dims("dim").translate(attrs, a.shape[0]))
    index = op(_flat_samples(a), dim=1, keepdim=False, largest=attrs["largest"])
    return index.reshape((a.shape[0],) + (1,) * (a.ndim - 1)) if attrs["keepdim"] else index


def _logical_batch(op, values, batched, attrs):
    a, dims = values[0], attrs["dims"]
    return op(a, dims=_sample_dims(a) if dims is None else batch_rules.shift(dims),
              keepdim=attrs["keepdim"])


def _sum_to_size_batch(op, values, batched, attrs):
    a, size = values[0], tuple(attrs["size"])
    padded = (a.shape[0],) + (1,) * (a.ndim - 1 - len(size)) + size
    return _sum_to_size(a, size=padded).reshape((a.shape[0],) + size)


for _op in (_sum, _sum_dim, _mean, _mean_dim, _cumsum, _sum_to_size):
    _op.jvp(LINEAR)
for _op in (_max_dim, _min_dim, _kthvalue, _median_dim, _nanmedian_dim, _mode):
    _op.jvp(_pick_jvp)
for _op in (_sort, _sort_stable, _topk, _cummax, _cummin):
    _op.jvp(_sort_jvp)
for _op in (_sum, _sum_dim, _mean, _mean_dim, _nansum, _amax, _amin, _aminmax, _var, _std,
            _var_mean, _std_mean, _logsumexp, _norm, _count_nonzero):
    _op.batch(batch_rules.dims("dims"))
for _op in (_prod_dim, _max_dim, _min_dim, _sort, _sort_stable, _argsort_op, _topk, _kthvalue,
            _median_dim, _nanmedian_dim, _mode, _cumsum, _cumprod, _cummax, _cummin,
            _logcumsumexp):
    _op.batch(batch_rules.dims("dim"))
for _op in (_max, _min, _prod, _median, _nanmedian):
    _op.batch(_all_dims_batch)
_argmax.batch(_arg_batch)
_argmin.batch(_arg_batch)
_any.batch(_logical_batch)
_all.batch(_logical_batch)
_sum_to_size.batch(_sum_to_size_batch)
_renorm.batch(batch_rules.dims("dims"))
_hash_tensor.batch(batch_rules.dims("dims"))
del _op
