"""Factories: `tensor`, `zeros`, `arange`, `*_like`, `Tensor.new_*`, `from_numpy`, ...

Every factory takes `dtype=`, `device=` and `requires_grad=` as torch's do. Data is built with
NumPy on the host and moved once to the device, except for plain-size factories (`zeros`,
`ones`, `full`, `empty`), which allocate directly with the device's array module.

Read next: `_random.py` (the random factories).
"""
import math
import numbers

import numpy as np

from . import _backend
from . import _dtype as dt
from ._device import as_device
from ._tensor import Tensor
from ._utils import parse_size
from .ops._op import export

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
           "zeros_like", "ones_like", "full_like", "empty_like", "arange", "range", "linspace",
           "logspace", "eye", "scalar_tensor", "tril_indices", "triu_indices"]


def _finish(array, dtype, device, requires_grad):
    """Wrap a host array as a tensor of `dtype` on `device`."""
    if dtype is not None and array.dtype != dtype.np:
        array = array.astype(dtype.np)
    device = as_device(device)
    if device.type != "cpu":
        array = _backend.transfer(array, device)
    t = Tensor._make(array, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _allocate(fill, size, dtype, device, requires_grad):
    """A tensor of `size` made by xp.zeros / xp.ones / xp.empty directly on `device`."""
    device = as_device(device)
    dtype = dt.get_default_dtype() if dtype is None else dtype
    xp = _backend.namespace(device)
    t = Tensor._make(fill(xp, size, dtype.np), device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


# ----------------------------------------------------------------------------------------------
# from data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of `data` (nested lists, scalars, arrays or tensors)."""
    if isinstance(data, Tensor):
        source = data.detach()
        array = _backend.transfer(source._data, source.device if device is None else
                                  as_device(device)).copy()
        return _finish(array, dtype, source.device if device is None else device, requires_grad)
    return _finish(_to_array(data, copy=True), dtype, device, requires_grad)


def _to_array(data, copy):
    """Host array for Python data, with torch's dtype inference (floats -> default dtype)."""
    if isinstance(data, np.ndarray):
        dt.from_numpy_dtype(data.dtype)  # raises for unsupported types
        return data.copy() if copy else data
    if isinstance(data, np.generic):
        return np.asarray(data)
    try:
        array = np.array(_unwrap_tensors(data))
    except ValueError as e:
        raise ValueError(f"expected a sequence of equal lengths at every dim ({e})") from None
    if array.dtype == object:
        raise TypeError(f"Could not infer dtype of {type(_first_leaf(data)).__name__}")
    if array.dtype == np.float64 and not _has_numpy_float64(data):
        array = array.astype(dt.get_default_dtype().np)
    elif array.dtype.kind in "iu" and array.dtype != np.int64 and not _has_numpy_scalars(data):
        array = array.astype(np.int64)
    elif array.dtype.kind == "U":
        raise TypeError("new(): invalid data type 'str'")
    dt.from_numpy_dtype(array.dtype)
    return array


def _unwrap_tensors(data):
    """Nested lists may hold tensors (one element or more): turn them into arrays."""
    if isinstance(data, Tensor):
        return np.asarray(data.detach())
    if isinstance(data, (list, tuple)):
        return [_unwrap_tensors(x) for x in data]
    return data


def _first_leaf(data):
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return data


def _has_numpy_float64(data):
    leaf = _first_leaf(data)
    return isinstance(leaf, (np.float64, np.ndarray)) or (
        isinstance(leaf, Tensor) and leaf.dtype is dt.float64)


def _has_numpy_scalars(data):
    return isinstance(_first_leaf(data), (np.generic, np.ndarray, Tensor))


def as_tensor(data, dtype=None, device=None):
    """Like `tensor`, but shares memory with a NumPy array or tensor when it can."""
    if isinstance(data, Tensor):
        return data.to(device=device if device is not None else data.device,
                       dtype=dtype if dtype is not None else data.dtype)
    if isinstance(data, np.ndarray) and as_device(device).type == "cpu":
        t = from_numpy(data)
        return t if dtype is None or dtype is t.dtype else t.to(dtype)
    return _finish(_to_array(data, copy=False), dtype, device, False)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """torch.asarray: `as_tensor` with an explicit `copy=` choice."""
    t = tensor(obj, dtype=dtype, device=device) if copy else as_tensor(obj, dtype, device)
    return t.requires_grad_(requires_grad) if requires_grad else t


def from_numpy(ndarray):
    """A CPU tensor sharing memory with `ndarray` (writes show through both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dt.from_numpy_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if not ndarray.dtype.isnative:
        ndarray = ndarray.astype(ndarray.dtype.newbyteorder("="))
    return Tensor._make(ndarray)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    dtype = dt.get_default_dtype() if dtype is None else dtype
    return _finish(np.array(s, dtype=dtype.np), dtype, device, requires_grad)


# ----------------------------------------------------------------------------------------------
# from a size


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    return _allocate(lambda xp, s, d: xp.zeros(s, d), parse_size(size), dtype, device,
                     requires_grad)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, memory_format=None):
    return _allocate(lambda xp, s, d: xp.ones(s, d), parse_size(size), dtype, device,
                     requires_grad)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    return _allocate(lambda xp, s, d: xp.empty(s, d), parse_size(size), dtype, device,
                     requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    if dtype is None:
        dtype = _scalar_dtype(fill_value)
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    return _allocate(lambda xp, s, d: xp.full(s, value, d), parse_size((size,)), dtype, device,
                     requires_grad)


def _scalar_dtype(value):
    if isinstance(value, Tensor):
        return value.dtype
    if isinstance(value, bool):
        return dt.bool
    if isinstance(value, numbers.Integral):
        return dt.int64
    return dt.get_default_dtype()


def _like(fill, input, dtype, device, requires_grad, value=None):
    dtype = input.dtype if dtype is None else dtype
    device = input.device if device is None else device
    return fill(input.shape, dtype=dtype, device=device, requires_grad=requires_grad) \
        if value is None else full(input.shape, value, dtype=dtype, device=device,
                                   requires_grad=requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return _like(zeros, input, dtype, device, requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _like(ones, input, dtype, device, requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return _like(empty, input, dtype, device, requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _like(full, input, dtype, device, requires_grad, value=fill_value)


# ----------------------------------------------------------------------------------------------
# ranges


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Values start, start+step, ... < end; each is computed as start + i*step in float64
    (as torch does), not by repeated addition."""
    if end is None:
        start, end = 0, start
    start, end, step = (x.item() if isinstance(x, Tensor) else x for x in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        any_float = any(isinstance(x, float) for x in (start, end, step))
        dtype = dt.get_default_dtype() if any_float else dt.int64
    n = max(0, math.ceil((end - start) / step))
    if dtype.is_floating_point or any(isinstance(x, float) for x in (start, end, step)):
        values = np.arange(n, dtype=np.float64) * step + start
    else:
        values = np.arange(start, end, step, dtype=np.int64)
    return _finish(values, dtype, device, requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,
          requires_grad=False):
    """Deprecated torch.range: like arange but includes `end`; always the default float."""
    if end is None:
        start, end = 0, start
    n = int(math.floor((end - start) / step)) + 1
    values = np.arange(n, dtype=np.float64) * step + start
    return _finish(values, dtype or dt.get_default_dtype(), device, requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """`steps` evenly spaced values; like torch, the second half is computed from `end`
    backwards so both endpoints are exact."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = (x.item() if isinstance(x, Tensor) else x for x in (start, end))
    dtype = dt.get_default_dtype() if dtype is None else dtype
    i = np.arange(steps, dtype=np.float64)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    half = steps // 2
    values = np.where(i < half, start + i * step, end - (steps - 1 - i) * step)
    if not dtype.is_floating_point:
        values = np.trunc(values)
    return _finish(values, dtype, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    exponents = linspace(start, end, steps, dtype=dt.float64)._data
    dtype = dt.get_default_dtype() if dtype is None else dtype
    return _finish(np.power(base, exponents), dtype, device, requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False):
    dtype = dt.get_default_dtype() if dtype is None else dtype
    return _finish(np.eye(n, n if m is None else m, dtype=dtype.np), dtype, device,
                   requires_grad)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """2 x N indices of the lower triangle, row by row (torch's order)."""
    rows, cols = np.tril_indices(row, offset, col)
    return _finish(np.stack([rows, cols]).astype(np.int64), dtype or dt.int64, device, False)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    rows, cols = np.triu_indices(row, offset, col)
    return _finish(np.stack([rows, cols]).astype(np.int64), dtype or dt.int64, device, False)


# ----------------------------------------------------------------------------------------------
# Tensor.new_* (same dtype and device as self unless given)


def _new(fill):
    def method(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
        return fill(*size, dtype=self.dtype if dtype is None else dtype,
                    device=self.device if device is None else device,
                    requires_grad=requires_grad)
    method.__name__ = "new_" + fill.__name__
    return method


new_zeros = export(_new(zeros), function=False, method=True)
new_ones = export(_new(ones), function=False, method=True)
new_empty = export(_new(empty), function=False, method=True)


@export(function=False, method=True)
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
             layout=None, pin_memory=False):
    return full(size, fill_value, dtype=self.dtype if dtype is None else dtype,
                device=self.device if device is None else device, requires_grad=requires_grad)


@export(function=False, method=True)
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
    return tensor(data, dtype=self.dtype if dtype is None else dtype,
                  device=self.device if device is None else device, requires_grad=requires_grad)


def legacy_constructor(cls, args, device, dtype):
    """`ember.Tensor(2, 3)` -> uninitialised default-float tensor; `ember.Tensor([1, 2])` ->
    float data; `ember.Tensor()` -> empty. (torch's legacy constructor; prefer factories.)"""
    dtype = dt.get_default_dtype() if dtype is None else dtype
    if len(args) == 1 and not isinstance(args[0], numbers.Integral):
        data = args[0]
        if isinstance(data, Tensor):
            return data
        t = _finish(_to_array(data, copy=True), dtype, device, False)
    else:
        t = empty(parse_size(args), dtype=dtype, device=device)
    if cls is not Tensor:
        t = cls._make(t._data, device=t.device)
    return t
