"""Reductions: sum, mean, ... over `dim` (int, tuple, negative or None) with `keepdim`.

This module defines `sum`, `any`, `all`, `max`, `min` as torch does: use `builtins.any` etc.
for Python's own.

A reduction's rule gets `g` shaped like the output; `_unreduce` puts the reduced dims back (as
size-1 dims) and expands to the input's shape -- a view, no copy.

Read next: `shape.py`.
"""
import builtins

from .. import _dtype as dt
from .._utils import wrap_dims
from ._op import defop, export


def _unreduce(g, shape, dims, keepdim):
    """Broadcast a reduced gradient back over the input's shape."""
    if not keepdim and dims:
        g = g.reshape([1 if i in dims else n for i, n in enumerate(shape)])
    return g.expand(shape)


_HALF_TYPES = (dt.float16.np, dt.bfloat16.np)


def _accumulate_dtype(a):
    """NumPy would sum float16 in float16; torch accumulates in float32 and rounds once."""
    return dt.float32.np if a.dtype in _HALF_TYPES else None


def _sum_kernel(xp, a, *, dims, keepdim, dtype):
    if dtype is None:
        dtype = dt.int64 if a.dtype.kind in "biu" else dt._BY_NUMPY[a.dtype]
    out = xp.sum(a, axis=dims, keepdims=keepdim, dtype=_accumulate_dtype(a) or dtype.np)
    return out.astype(dtype.np, copy=False)


_sum = defop("sum", "none", _sum_kernel,
             lambda g, a_shape, dims, keepdim: (_unreduce(g, a_shape, dims, keepdim),),
             node_name="SumBackward1")


@export(method=True)
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum over `dim` (all dims when None). Integers and bools sum to int64, as in torch."""
    if dtype is not None and input.dtype is not dtype:
        input = input.to(dtype)
    return _sum(input, dims=wrap_dims(dim, input.ndim), keepdim=keepdim, dtype=dtype)


def _mean_kernel(xp, a, *, dims, keepdim):
    return xp.mean(a, axis=dims, keepdims=keepdim, dtype=_accumulate_dtype(a)).astype(
        a.dtype, copy=False)


def _mean_rule(g, a_shape, dims, keepdim):
    count = 1
    for d in dims:
        count *= a_shape[d]
    return (_unreduce(g, a_shape, dims, keepdim) / count,)


_mean = defop("mean", "none", _mean_kernel, _mean_rule, node_name="MeanBackward1")


@export(method=True)
def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: "
                           f"{dt.scalar_name(input.dtype)}")
    return _mean(input, dims=wrap_dims(dim, input.ndim), keepdim=keepdim)


def _sum_to_size_kernel(xp, a, *, size):
    lead = a.ndim - len(size)
    if lead < 0 or builtins.any(s != n and s != 1 for s, n in zip(size, a.shape[lead:])):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, a.shape))}}}.")
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size)
                                      if s == 1 and a.shape[lead + i] != 1)
    if not axes:
        return a.copy()
    return xp.sum(a, axis=axes, keepdims=True).reshape(size)


_sum_to_size = defop("sum_to_size", "none", _sum_to_size_kernel,
                     lambda g, a_shape: (g.expand(a_shape),))


@export(function=False, method=True)
def sum_to_size(self, *size):
    """Sum broadcast dims away so the result has `size` (what the engine does to gradients)."""
    from .._utils import parse_size

    return _sum_to_size(self, size=parse_size(size))


_any = defop("any", "none", lambda xp, a, *, dims, keepdim: xp.any(a, axis=dims,
                                                                    keepdims=keepdim))
_all = defop("all", "none", lambda xp, a, *, dims, keepdim: xp.all(a, axis=dims,
                                                                    keepdims=keepdim))


@export(method=True)
def any(input, dim=None, keepdim=False, *, out=None):
    return _any(input, dims=wrap_dims(dim, input.ndim), keepdim=keepdim)


@export(method=True)
def all(input, dim=None, keepdim=False, *, out=None):
    return _all(input, dims=wrap_dims(dim, input.ndim), keepdim=keepdim)
