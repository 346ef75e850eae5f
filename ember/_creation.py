"""Factories: `tensor`, `zeros`, `arange`, `*_like`, `Tensor.new_*`, `from_numpy`, ...

Every factory takes `dtype=`, `device=` and `requires_grad=` as torch's do. Data is built with
NumPy on the host and moved once to the device, except for plain-size factories (`zeros`,
`ones`, `full`, `empty`), which allocate directly with the device's array module.

dtype inference follows torch, not NumPy: Python floats take the default dtype (float32 unless
`set_default_dtype` changed it), complex numbers its complex type (complex64), ints int64, bools
bool, and a nested list takes the promotion of all its elements (`[1, 2.5]` -> float32,
`[np.int8(1), True]` -> int8, `[1, 2j]` -> complex64). NumPy arrays keep
their dtype. `pin_memory=True` is accepted and has no effect (pinning only speeds up copies).

Read next: `_mt19937.py` and `_generator.py` (torch's random generator), then `_random.py`
(the random factories).
"""
import builtins
import collections.abc
import math
import numbers
import operator

import numpy as np

from . import _backend
from . import _dtype as dt
from ._device import as_device
from ._tensor import Size, Tensor
from ._utils import parse_size
from .ops._op import export

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
           "empty_strided", "zeros_like", "ones_like", "full_like", "empty_like", "arange",
           "range", "linspace", "logspace", "eye", "scalar_tensor", "tril_indices",
           "triu_indices"]


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


def _check_options(out=None, layout=None):
    """Arguments ember accepts only in their default form. (`out=` never gets here through the
    public functions: ops/_public.py writes results into out; _random.py still passes its.)"""
    if out is not None:
        raise NotImplementedError("out= reaches ember's factories only through ember.<name>")
    if layout is not None and repr(layout) != "ember.strided":
        raise NotImplementedError(f"layout={layout} is not supported (only ember.strided)")


# ----------------------------------------------------------------------------------------------
# tensor(): walking nested Python data once for its shape and dtype

_SEQUENCES = (list, tuple, builtins.range, bytearray)  # the common ones, checked first
_NOT_SEQUENCES = (str, bytes, np.ndarray, np.generic, Tensor, collections.abc.Mapping)
_PYTHON_SCALARS = {builtins.bool: dt.bool, builtins.int: dt.int64}
_NUMBER_KINDS = {builtins.float, builtins.int, builtins.bool}
_WIDE = {dt.BOOL: np.bool_, dt.INTEGER: np.int64, dt.FLOATING: np.float64,
         dt.COMPLEX: np.complex128}  # the array Python data is read into first, per category


def _is_sequence(x):
    """Whether torch reads `x` as nested data: a list, tuple or range, or any other object with
    a length and indexing (a deque, an array.array, a Sequence), but not a string, bytes or a
    mapping."""
    if isinstance(x, _SEQUENCES):
        return True
    if isinstance(x, _NOT_SEQUENCES):
        return False
    return hasattr(type(x), "__len__") and hasattr(type(x), "__getitem__")


def _refuse_text(x):
    if isinstance(x, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(x).__name__}'")


def _first_shape(data):
    """The shape torch reads from nested data: each dim's length, following first elements."""
    shape = []
    while True:
        if isinstance(data, np.ndarray):
            return shape + list(data.shape)
        if isinstance(data, str) and shape:
            raise ValueError("too many dimensions 'str'")
        _refuse_text(data)
        if not _is_sequence(data):
            return shape
        shape.append(len(data))
        if not data:
            return shape
        data = data[0]


def _leaf_dtype(x):
    """The dtype one element of nested data contributes to the promotion."""
    if type(x) is builtins.float:
        return dt.get_default_dtype()
    hit = _PYTHON_SCALARS.get(type(x))
    if hit is not None:
        return hit
    if isinstance(x, (np.generic, np.ndarray)):
        return dt.from_numpy_dtype(x.dtype)
    if isinstance(x, Tensor):
        if x.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return x.dtype
    if isinstance(x, (builtins.bool, builtins.int, builtins.float)):  # subclasses (IntEnum)
        return dt.scalar_dtype(x)
    if isinstance(x, complex):
        return dt.default_complex_dtype()
    _refuse_text(x)
    if _is_sequence(x):
        raise TypeError(f"expected a number but found a sequence ({type(x).__name__}): the "
                        "first elements had fewer dims")
    raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _scan(data, shape, depth, found):
    """Check that `data` matches `shape` below `depth`; add each element's dtype to `found`.
    Returns True if a Tensor or a sequence other than a list, tuple or range was met (the data
    must then be converted before NumPy sees it)."""
    if depth == len(shape):
        found.add(_leaf_dtype(data))
        return isinstance(data, Tensor)
    if isinstance(data, np.ndarray):
        if list(data.shape) != shape[depth:]:
            raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} "
                             f"(got {data.shape[0] if data.ndim else 0})")
        found.add(dt.from_numpy_dtype(data.dtype))
        return False
    if not _is_sequence(data):
        raise TypeError(f"not a sequence: expected a sequence of length {shape[depth]} at dim "
                        f"{depth}, got {type(data).__name__}")
    if len(data) != shape[depth]:
        raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} "
                         f"(got {len(data)})")
    if depth + 1 == len(shape):
        kinds = set(map(type, data))
        if kinds <= {builtins.float, builtins.int, builtins.bool}:  # the common, fast case
            found.update(_leaf_dtype(k()) for k in kinds)
            return False
    convert = not isinstance(data, (list, tuple, builtins.range))
    for item in data:
        convert |= _scan(item, shape, depth + 1, found)
    return convert


def _host_values(data):
    """Nested lists, with every Tensor replaced by its host array (NumPy reads neither Tensors
    nor every kind of sequence)."""
    if isinstance(data, Tensor):
        return _backend.transfer(data.detach()._data, as_device("cpu")).reshape(())
    if _is_sequence(data):
        return [_host_values(x) for x in data]
    return data


def _from_python(data, dtype):
    """A host array from Python data (scalars, nested sequences), cast to `dtype` if given."""
    kinds = set(map(type, data)) if type(data) is list or type(data) is tuple else None
    if kinds and kinds <= _NUMBER_KINDS:
        # a flat list of Python numbers (a literal, a list of rewards), or one number: nothing
        # to walk (`tensor([1.0, 2.0])` 62.6k -> 43.5k instructions, callgrind)
        shape, found, convert = [len(data)], {_leaf_dtype(k()) for k in kinds}, False
    elif type(data) in _NUMBER_KINDS:
        shape, found, convert = [], {_leaf_dtype(data)}, False
    else:
        shape = _first_shape(data)
        found = set()
        if math.prod(shape) == 0:  # nothing to read (torch does not even check the other rows)
            return np.zeros(shape, (dt.get_default_dtype() if dtype is None else dtype).np)
        convert = _scan(data, shape, 0, found)
    inferred = dt.get_default_dtype()
    if found:
        inferred = None
        for d in found:
            inferred = d if inferred is None else dt.promote_types(inferred, d)
    # Build wide (int64 or float64) first: values are then checked and cast once, as torch
    # converts each Python number to the target type.
    wide = _WIDE[inferred.category]
    if dtype is not None and inferred.category == dt.INTEGER and dtype.category != dt.INTEGER:
        wide = np.float64  # ints read as floats: torch takes 2**64 for a float or bool tensor
    values = _host_values(data) if convert else data
    try:
        array = np.array(values, dtype=wide)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    array = array.reshape(shape)
    target = inferred if dtype is None else dtype
    if inferred.is_complex and not target.is_complex:
        raise TypeError("must be real number, not complex")
    if dtype is not None:
        _check_fits(array, target)
    return _cast(array, target)


def _cast(array, dtype):
    """Cast a wide host array; float64 reaches half types through float32, as in torch.
    Values beyond a float type's range become inf silently, as in torch. A complex array cast
    to a real type has been checked to be real (its imaginary part is 0)."""
    if array.dtype.kind == "c" and dtype.category != dt.COMPLEX:
        array = array.real
    with np.errstate(over="ignore"):
        if array.dtype == np.float64 and dtype in (dt.float16, dt.bfloat16):
            array = array.astype(np.float32)
        return array.astype(dtype.np, copy=False)


def _check_fits(array, dtype):
    """torch refuses Python numbers an integer type cannot hold (unsigned types accept
    negative ints down to -max, which wrap around)."""
    if array.dtype.kind == "c" and dtype.category != dt.COMPLEX and np.any(array.imag != 0):
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")
    if array.dtype.kind == "c":
        array = array.real
    if dtype.category != dt.INTEGER or array.size == 0:
        return
    info = np.iinfo(dtype.np)
    if array.dtype.kind == "f":
        bad = not np.all(np.isfinite(array)) or array.min() < info.min or array.max() > info.max
    else:
        lowest = -builtins.int(info.max) if info.min == 0 else info.min
        bad = array.dtype.kind in "iu" and (array.min() < lowest or array.max() > info.max)
    if bad:
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")


def _to_array(data, dtype=None):
    """A new host array for any data `tensor()` accepts (not a Tensor)."""
    if isinstance(data, np.ndarray):
        _check_numpy(data)
        array = np.array(data, copy=True, order="K")  # order K: torch keeps the strides too
        return array if dtype is None else array.astype(dtype.np, copy=False)
    if isinstance(data, np.generic):
        return _to_array(np.asarray(data), dtype)
    return _from_python(data, dtype)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of `data` (nested lists, scalars, arrays or tensors)."""
    if isinstance(data, Tensor):
        source = data.detach()
        device = source.device if device is None else as_device(device)
        array = _backend.transfer(source._data, device)
        array = array.copy() if array is source._data else array
        return _finish(array, dtype, device, requires_grad)
    return _finish(_to_array(data, dtype), None, device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like `tensor`, but shares memory with a NumPy array or tensor when it can (same dtype,
    same device)."""
    if isinstance(data, Tensor):
        return data.to(device=data.device if device is None else device,
                       dtype=data.dtype if dtype is None else dtype)
    if isinstance(data, np.ndarray) and as_device(device).type == "cpu":
        t = from_numpy(data)
        return t if dtype is None or dtype is t.dtype else t.to(dtype)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """torch.asarray: share memory when possible (`copy=None`), always (`copy=False`, an error
    if impossible) or never (`copy=True`). Copies and conversions of a tensor stay differentiable
    unless `requires_grad=False`, which detaches them."""
    if isinstance(obj, Tensor):
        return _asarray_tensor(obj, dtype, device, copy, requires_grad)
    if isinstance(obj, np.ndarray):
        same_dtype = dtype is None or dtype.np == obj.dtype
        if copy is False and not same_dtype:
            raise ValueError(f"can't alias tensor with dtype "
                             f"'{dt.scalar_name(dt.from_numpy_dtype(obj.dtype))}' into dtype "
                             f"'{dt.scalar_name(dtype)}'.")
        shares = copy is not True and as_device(device).type == "cpu"
        result = as_tensor(obj, dtype, device) if shares else tensor(obj, dtype=dtype,
                                                                      device=device)
    else:
        if copy is False:
            if isinstance(obj, np.generic):
                raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or "
                                   "transform it in a ndarray. ")
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        result = tensor(obj, dtype=dtype, device=device)
    return result.requires_grad_(True) if requires_grad else result


def _asarray_tensor(t, dtype, device, copy, requires_grad):
    dtype = t.dtype if dtype is None else dtype
    device = t.device if device is None else as_device(device)
    converts = dtype is not t.dtype or device != t.device
    if copy is False and dtype is not t.dtype:
        raise ValueError(f"can't alias tensor with dtype '{dt.scalar_name(t.dtype)}' into "
                         f"dtype '{dt.scalar_name(dtype)}'.")
    if copy is False and device != t.device:
        raise ValueError(f"can't alias tensor from device '{t.device}' to '{device}'.")
    if not converts and not copy:
        result = t  # an alias is the tensor itself (requires_grad= then changes it, as torch)
    else:
        source = t.detach() if requires_grad is False else t
        result = source.to(device=device, dtype=dtype)
        result = result.clone() if copy and not converts else result
    return result if requires_grad is None else result.requires_grad_(requires_grad)


def from_numpy(ndarray):
    """A CPU tensor sharing memory with `ndarray` (writes show through both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _check_numpy(ndarray)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    return Tensor._make(ndarray)


def _check_numpy(ndarray):
    """Arrays ember can hold: a supported dtype in native byte order (as torch)."""
    if ndarray.dtype.byteorder not in "=|" and not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    dt.from_numpy_dtype(ndarray.dtype)  # raises TypeError for unsupported types


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A 0-d tensor of the default float dtype (whatever the type of `s`), as torch."""
    _check_options(layout=layout)
    dtype = dt.get_default_dtype() if dtype is None else dtype
    return _finish(_fill_array(_fill_scalar(s, "scalar_tensor"), dtype), None, device,
                   requires_grad)


# ----------------------------------------------------------------------------------------------
# from a size


def _size(args, fn_name):
    """A size given as varargs, a tuple, a list or a Size; negative dims raise as in torch."""
    if not args:
        raise TypeError(f'{fn_name}() missing 1 required positional arguments: "size"')
    if len(args) == 1 and isinstance(args[0], (Tensor, np.generic)) and args[0].ndim == 0:
        args = (operator.index(args[0]),)  # zeros(tensor(3)) means zeros(3)
    size = parse_size(args)
    _check_size(size)
    return size


def _check_size(size):
    for n in size:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"{list(size)}")


def _allocate(fill, size, dtype, device, requires_grad, order=None):
    """A tensor of `size` made by `fill(xp, shape, np_dtype)` directly on `device`; `order`
    lists the dims from outermost to innermost in memory (None: row-major)."""
    device = as_device(device)
    dtype = dt.get_default_dtype() if dtype is None else dtype
    xp = _backend.namespace(device)
    if order is None:
        array = fill(xp, size, dtype.np)
    else:  # allocate in memory order, then view the dims in the order asked for
        array = fill(xp, tuple(size[d] for d in order), dtype.np).transpose(np.argsort(order))
    t = Tensor._make(array, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _format_order(memory_format, ndim):
    """Dims from outermost to innermost for a memory format (None: row-major)."""
    name = None if memory_format is None else repr(memory_format).split(".")[-1]
    if name in (None, "contiguous_format", "preserve_format"):
        return None
    if name == "channels_last":
        if ndim != 4:
            raise RuntimeError("required rank 4 tensor to use channels_last format")
        return (0, 2, 3, 1)
    raise NotImplementedError(f"memory_format={memory_format} is not supported")


def zeros(*size, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    """A tensor of zeros of the given size (varargs, a sequence or `size=`)."""
    _check_options(layout=layout)
    return _allocate(lambda xp, s, d: xp.zeros(s, d), _size(size, "zeros"), dtype, device,
                     requires_grad)


def ones(*size, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """A tensor of ones of the given size (varargs, a sequence or `size=`)."""
    _check_options(layout=layout)
    return _allocate(lambda xp, s, d: xp.ones(s, d), _size(size, "ones"), dtype, device,
                     requires_grad)


def empty(*size, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    """An uninitialised tensor of the given size (its values are whatever memory held)."""
    _check_options(layout=layout)
    size = _size(size, "empty")
    return _allocate(lambda xp, s, d: xp.empty(s, d), size, dtype, device, requires_grad,
                     _format_order(memory_format, len(size)))


def full(size, fill_value, *, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """A tensor filled with `fill_value`; its dtype follows the value (bool, int64, the
    default float or its complex type) unless `dtype` is given."""
    _check_options(layout=layout)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    size = parse_size((size,))
    _check_size(size)
    value = _fill_scalar(fill_value, "full")
    dtype = _scalar_dtype(value) if dtype is None else dtype
    fill = _fill_array(value, dtype)
    return _allocate(lambda xp, s, d: xp.full(s, fill[()], d), size, dtype, device,
                     requires_grad)


def _fill_scalar(value, fn_name):
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise TypeError(f"{fn_name}(): argument 'fill_value' (position 2) must be Number, "
                            f"not Tensor")
        return value.item()
    if isinstance(value, np.generic):
        return value.item()
    if not isinstance(value, numbers.Number):
        raise TypeError(f"{fn_name}(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(value).__name__}")
    return value


def _scalar_dtype(value):
    if isinstance(value, builtins.bool):
        return dt.bool
    if isinstance(value, numbers.Integral):
        return dt.int64
    if isinstance(value, complex):
        return dt.default_complex_dtype()
    return dt.get_default_dtype()


def _fill_array(value, dtype):
    """`value` as a 0-d host array of `dtype`, refusing what torch refuses."""
    wide = np.array(value)
    _check_fits(wide, dtype)
    return _cast(wide, dtype)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor with the given element strides (over a fresh buffer)."""
    _check_options(layout=layout)
    size, stride = parse_size((size,)), parse_size((stride,), "stride")
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality "
                           f"of strides ({len(stride)})")
    _check_size(size)
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    device = as_device(device)
    dtype = dt.get_default_dtype() if dtype is None else dtype
    xp = _backend.namespace(device)
    count = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    buffer = xp.empty(count, dtype.np)
    array = xp.lib.stride_tricks.as_strided(
        buffer, shape=size, strides=tuple(s * dtype.itemsize for s in stride))
    t = Tensor._make(array, device=device)
    return t.requires_grad_(True) if requires_grad else t


# ----------------------------------------------------------------------------------------------
# *_like: the input's size, dtype and device; torch's preserve_format keeps its memory order


def like_order(input, memory_format):
    """Dims from outermost to innermost for a `*_like` result (None: row-major).

    preserve_format follows the input's memory order (a transposed input gives a transposed
    result), except when broadcast (stride-0) dims make that order ambiguous."""
    name = None if memory_format is None else repr(memory_format).split(".")[-1]
    if name not in (None, "preserve_format"):
        return _format_order(memory_format, input.ndim)
    shape, strides = input._data.shape, input._data.strides
    if input._data.flags.c_contiguous or any(s == 0 and n > 1 for n, s in zip(shape, strides)):
        return None
    return tuple(sorted(builtins.range(len(shape)), key=lambda d: -abs(strides[d])))


def _like(fill, input, dtype, device, requires_grad, memory_format):
    return _allocate(fill, tuple(input.shape), input.dtype if dtype is None else dtype,
                     input.device if device is None else device, requires_grad,
                     like_order(input, memory_format))


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               pin_memory=False, memory_format=None):
    """Zeros with the input's size, dtype and device (and memory order by default)."""
    _check_options(layout=layout)
    return _like(lambda xp, s, d: xp.zeros(s, d), input, dtype, device, requires_grad,
                 memory_format)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              pin_memory=False, memory_format=None):
    """Ones with the input's size, dtype and device (and memory order by default)."""
    _check_options(layout=layout)
    return _like(lambda xp, s, d: xp.ones(s, d), input, dtype, device, requires_grad,
                 memory_format)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               pin_memory=False, memory_format=None):
    """Uninitialised, with the input's size, dtype, device and memory order."""
    _check_options(layout=layout)
    return _like(lambda xp, s, d: xp.empty(s, d), input, dtype, device, requires_grad,
                 memory_format)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              pin_memory=False, memory_format=None):
    """Filled with `fill_value` cast to the input's dtype (not inferred from the value)."""
    _check_options(layout=layout)
    fill = _fill_array(_fill_scalar(fill_value, "full_like"),
                       input.dtype if dtype is None else dtype)
    return _like(lambda xp, s, d: xp.full(s, fill[()], d), input, dtype, device, requires_grad,
                 memory_format)


# ----------------------------------------------------------------------------------------------
# ranges


def _number(x, name):
    """A range bound as a Python number (0-d tensors and NumPy scalars accepted)."""
    if isinstance(x, (Tensor, np.generic)):
        return x.item()
    if not isinstance(x, numbers.Number):
        raise TypeError(f"argument '{name}' must be Number, not {type(x).__name__}")
    return x


def arange(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Values start, start+step, ... < end.

    Float results are computed as start + i*step in float64 and then rounded (not by repeated
    addition), so arange(0, 1, 0.1) has no drift. torch's vectorised CPU kernel rounds some
    elements through float32 sums instead, so a float32 result may differ from torch's in the
    last bit (how much depends on the CPU's vector width). Integer dtypes truncate the bounds
    and step to ints first, as torch does."""
    _check_options(layout=layout)
    if end is None:
        start, end = 0, start
    start, end, step = (_number(x, n) for x, n in ((start, "start"), (end, "end"),
                                                    (step, "step")))
    if dtype is None:
        any_float = any(isinstance(x, builtins.float) for x in (start, end, step))
        dtype = dt.get_default_dtype() if any_float else dt.int64
    if dtype is dt.bool or dtype.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for "
                                  f"'{dt.scalar_name(dtype)}'")
    if not dtype.is_floating_point:
        truncated = builtins.int(step)
        if truncated == 0 and step != 0:
            raise ValueError("step must be nonzero")  # torch's type for a step lost to int
        start, end, step = builtins.int(start), builtins.int(end), truncated
    n = _range_length(start, end, step)
    if dtype.is_floating_point:
        values = np.arange(n, dtype=np.float64) * step + start
    else:
        values = np.arange(n, dtype=np.int64) * step + start
    return _finish(_cast(values, dtype), None, device, requires_grad)


def _range_length(start, end, step):
    for x in (start, end):
        if not math.isfinite(x):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if all(isinstance(x, numbers.Integral) for x in (start, end, step)):
        return -((start - end) // step)  # exact ceil((end - start) / step) for huge ints
    return math.ceil((end - start) / step)


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Deprecated torch.range: like arange but includes `end`; default float dtype."""
    _check_options(layout=layout)
    if end is None:
        start, end = 0, start
    start, end, step = (_number(x, n) for x, n in ((start, "start"), (end, "end"),
                                                    (step, "step")))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    n = builtins.int(math.floor((end - start) / step)) + 1
    values = np.arange(max(n, 0), dtype=np.float64) * step + start
    return _finish(_cast(values, dtype or dt.get_default_dtype()), None, device, requires_grad)


def _spaced(start, end, steps, dtype):
    """`steps` evenly spaced values from start to end, as torch computes them: the first half
    counts up from start, the second half down from end, so both ends are exact. Floats are
    computed in the result type (float32 for half types), integers in float64 from integer
    bounds."""
    if not isinstance(steps, numbers.Integral) or isinstance(steps, builtins.bool):
        raise TypeError(f"argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = _number(start, "start"), _number(end, "end")
    if dtype is dt.bool:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    if dtype.category >= dt.FLOATING:
        compute = dtype.np.type  # half types round after every operation, as in torch
        start, end = compute(start), compute(end)
    else:
        compute = np.float64
        start, end = compute(builtins.int(start)), compute(builtins.int(end))
    i = np.arange(steps).astype(compute)
    step = (end - start) / compute(steps - 1) if steps > 1 else compute(0)
    if compute is np.float32:
        # torch's vectorised kernel computes start + step * i as one fused multiply-add; a
        # float32 product is exact in float64, so adding there and rounding once matches it
        up = (np.float64(start) + np.float64(step) * i).astype(compute)
        down = (np.float64(end) - np.float64(step) * (compute(steps - 1) - i)).astype(compute)
    else:
        up = start + step * i
        down = end - step * (compute(steps - 1) - i)
    return np.where(np.arange(steps) < max(steps // 2, 1), up, down), compute


def _spaced_dtype(dtype, start, end):
    """linspace's result type: the default float, or its complex type for complex bounds."""
    if dtype is not None:
        return dtype
    if any(isinstance(_number(x, "start"), complex) for x in (start, end)):
        return dt.default_complex_dtype()
    return dt.get_default_dtype()


def linspace(start, end, steps, *, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """`steps` values from start to end inclusive (see `_spaced`)."""
    _check_options(layout=layout)
    dtype = _spaced_dtype(dtype, start, end)
    values, _ = _spaced(start, end, steps, dtype)
    return _finish(_cast(values, dtype), None, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """base ** linspace(start, end, steps), the power taken in the compute type."""
    _check_options(layout=layout)
    dtype = _spaced_dtype(dtype, start, end)
    exponents, compute = _spaced(start, end, steps, dtype)
    with np.errstate(invalid="ignore", over="ignore"):  # negative bases give nan, as in torch
        values = np.power(compute(base), exponents)
    return _finish(_cast(values, dtype), None, device, requires_grad)


def eye(n, m=None, *, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False):
    """The n x m identity (m defaults to n)."""
    _check_options(layout=layout)
    for name, value in (("n", n), ("m", m)):
        if value is not None:
            _int_arg("eye", name, value, 1 if name == "n" else 2)
            if value < 0:
                raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    dtype = dt.get_default_dtype() if dtype is None else dtype
    return _allocate(lambda xp, s, d: xp.eye(s[0], s[1], dtype=d), (n, n if m is None else m),
                     dtype, device, requires_grad)


def _int_arg(fn_name, name, value, position):
    if isinstance(value, builtins.bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{fn_name}(): argument '{name}' (position {position}) must be int, "
                        f"not {type(value).__name__}")


def _triangle_indices(kind, row, col, offset, dtype, device, layout, requires_grad):
    _check_options(layout=layout)
    dtype = dt.int64 if dtype is None else dtype
    if dtype not in (dt.int32, dt.int64):
        raise NotImplementedError(f"\"{kind}_indices\" not implemented for "
                                  f"'{dt.scalar_name(dtype)}'")
    for name, value in (("row", row), ("col", col)):
        if value < 0:
            raise RuntimeError(f"{name} must be non-negative, got{value}")
    picker = np.tril_indices if kind == "tril" else np.triu_indices
    rows, cols = picker(row, offset, col)  # row-major order, as torch's
    return _finish(np.stack([rows, cols]).astype(dtype.np), None, device, requires_grad)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 requires_grad=False, pin_memory=False):
    """2 x N (row, col) indices of the lower triangle of a row x col matrix."""
    return _triangle_indices("tril", row, col, offset, dtype, device, layout, requires_grad)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 requires_grad=False, pin_memory=False):
    """2 x N (row, col) indices of the upper triangle of a row x col matrix."""
    return _triangle_indices("triu", row, col, offset, dtype, device, layout, requires_grad)


# ----------------------------------------------------------------------------------------------
# Tensor.new_* (same dtype and device as self unless given)


def _new(factory):
    def method(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
        return factory(*size, dtype=self.dtype if dtype is None else dtype,
                       device=self.device if device is None else device,
                       requires_grad=requires_grad, layout=layout)
    method.__name__ = method.__qualname__ = "new_" + factory.__name__
    method.__doc__ = f"`ember.{factory.__name__}` with self's dtype and device by default."
    return method


new_zeros = export(_new(zeros), function=False, method=True)
new_ones = export(_new(ones), function=False, method=True)
new_empty = export(_new(empty), function=False, method=True)


@export(function=False, method=True)
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
             layout=None, pin_memory=False):
    """`ember.full(size, fill_value)` with self's dtype and device by default."""
    return full(size, fill_value, dtype=self.dtype if dtype is None else dtype,
                device=self.device if device is None else device, requires_grad=requires_grad,
                layout=layout)


@export(function=False, method=True)
def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                      layout=None, pin_memory=False):
    """`ember.empty_strided(size, stride)` with self's dtype and device by default."""
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                         device=self.device if device is None else device,
                         requires_grad=requires_grad, layout=layout)


@export(function=False, method=True)
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
    """A copy of `data` (detached if a tensor) with self's dtype and device by default."""
    _check_options(layout=layout)
    return tensor(data, dtype=self.dtype if dtype is None else dtype,
                  device=self.device if device is None else device, requires_grad=requires_grad)


@export(function=False, method=True)
def new(self, *args, device=None):
    """Legacy `x.new(2, 3)` / `x.new([1, 2])` / `x.new()`: like `ember.Tensor(...)` with self's
    dtype and device."""
    if len(args) == 1 and isinstance(args[0], Tensor) and args[0].dtype is not self.dtype:
        raise TypeError(f"expected dtype {self.dtype} (got {args[0].dtype})")
    return legacy_constructor(Tensor, args, self.device if device is None else device,
                              self.dtype)


def legacy_constructor(cls, args, device, dtype):
    """`ember.Tensor(2, 3)` -> uninitialised default-float tensor; `ember.Tensor([1, 2])` ->
    float data; `ember.Tensor()` -> empty. (torch's legacy constructor; prefer factories.)"""
    dtype = dt.get_default_dtype() if dtype is None else dtype
    if len(args) == 1 and not isinstance(args[0], (numbers.Integral, Size)):
        data = args[0]
        if isinstance(data, Tensor):
            return data
        t = _finish(_to_array(data, dtype), None, device, False)
    else:
        size = parse_size(args) if args else (0,)
        _check_size(size)
        t = empty(size, dtype=dtype, device=device)
    if cls is not Tensor:
        t = cls._make(t._data, device=t.device)
    return t


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """empty(size) whose memory runs through the dims in the order `physical_layout` (its
    first dim outermost): empty_permuted((N, C, H, W), (0, 2, 3, 1)) is channels-last."""
    size = _size((size,), "empty_permuted")
    order = tuple(physical_layout)
    if len(order) != len(size):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    if sorted(order) != list(builtins.range(len(size))):
        raise RuntimeError("Duplicate dim not allowed")
    physical = empty(tuple(size[d] for d in order), dtype=dtype, layout=layout, device=device,
                     requires_grad=False, pin_memory=pin_memory)
    inverse = sorted(builtins.range(len(order)), key=order.__getitem__)
    result = physical.permute(inverse)
    return result.requires_grad_() if requires_grad else result

