"""dtypes and torch's type-promotion rules.

An ember dtype wraps a NumPy dtype (bfloat16 comes from the small `ml_dtypes` package). Promotion
follows torch, not NumPy: types are ranked by *category* (bool < integer < floating < complex),
and 0-d tensors and Python scalars are "weak" -- they only matter when they belong to a higher
category than every dimensioned tensor. So `int32 * 1.5 -> float32` (the default dtype) and
`float16 + float64 0-d tensor -> float16`, where NumPy would answer float64 twice.

Complex is one more category, not a parallel set of types: complex64 and complex128 pair with
float32 and float64 (`to_real`, `to_complex`), a complex operand keeps a floating one's
precision (`float64 + complex64 -> complex128`, `float32 tensor * 1j -> complex64`), and a Python
complex alone takes the complex type of the default float dtype. complex32 (`chalf`) exists as a
dtype for promotion and for reading checkpoints, but NumPy has no half-precision complex type,
so making a tensor of it raises.

Two families have no promotion at all, as in torch: the wide unsigned integers (uint16,
uint32, uint64) promote only with themselves and with floats, and the 8-bit floats (float8_*,
from ml_dtypes) only with themselves. torch's kernels for them are few; ember's run NumPy's
(ml_dtypes computes float8 arithmetic through float32).

Read next: `_device.py`, then `_tensor.py`.
"""
import builtins

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
    "float64", "complex32", "complex64", "complex128", "half", "float", "double", "short", "int",
    "long", "chalf", "cfloat", "cdouble", "uint16", "uint32", "uint64", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "get_default_dtype",
    "set_default_dtype", "promote_types", "result_type", "can_cast", "finfo", "iinfo",
    "is_floating_point", "is_complex", "is_signed",
]

BOOL, INTEGER, FLOATING, COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type; `ember.float32` and friends are the only instances."""

    __slots__ = ("name", "np", "category", "itemsize", "is_signed")

    def __init__(self, name, np_dtype, category):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize
        self.is_signed = category >= FLOATING or self.np.kind == "i"

    @property
    def is_floating_point(self):
        return self.category == FLOATING

    @property
    def is_complex(self):
        return self.category == COMPLEX

    def to_real(self):
        """The real dtype of the same precision (complex64 -> float32); others map to
        themselves."""
        return _REAL_OF.get(self, self)

    def to_complex(self):
        """The complex dtype of the same precision (float32 -> complex64, bfloat16 ->
        complex64 as in torch); complex dtypes map to themselves."""
        if self.category == COMPLEX:
            return self
        if self.category != FLOATING:
            raise RuntimeError(f"Unknown Complex ScalarType for {scalar_name(self)}")
        return _COMPLEX_OF[self]

    def __repr__(self):
        return f"ember.{self.name}"

    def __reduce__(self):
        return (_from_name, (self.name,))


def _from_name(name):
    return globals()[name]


class _NoArrayDtype(dtype):
    """A dtype torch has that NumPy cannot store (complex32): usable in promotion and dtype
    questions; asking for its array type -- that is, making a tensor -- raises."""

    __slots__ = ()

    def __init__(self, name, category, itemsize):  # noqa: D107 (dtype's fields, minus np)
        self.name = name
        self.category = category
        self.itemsize = itemsize
        self.is_signed = True

    @property
    def np(self):
        raise NotImplementedError(f"ember does not support {self.name} tensors: NumPy has no "
                                  "half-precision complex type; use ember.complex64")


bool = dtype("bool", np.bool_, BOOL)
uint8 = dtype("uint8", np.uint8, INTEGER)
int8 = dtype("int8", np.int8, INTEGER)
int16 = dtype("int16", np.int16, INTEGER)
int32 = dtype("int32", np.int32, INTEGER)
int64 = dtype("int64", np.int64, INTEGER)
float16 = dtype("float16", np.float16, FLOATING)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, FLOATING)
float32 = dtype("float32", np.float32, FLOATING)
float64 = dtype("float64", np.float64, FLOATING)
complex32 = _NoArrayDtype("complex32", COMPLEX, 4)
complex64 = dtype("complex64", np.complex64, COMPLEX)
complex128 = dtype("complex128", np.complex128, COMPLEX)
uint16 = dtype("uint16", np.uint16, INTEGER)
uint32 = dtype("uint32", np.uint32, INTEGER)
uint64 = dtype("uint64", np.uint64, INTEGER)
float8_e4m3fn = dtype("float8_e4m3fn", ml_dtypes.float8_e4m3fn, FLOATING)
float8_e4m3fnuz = dtype("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz, FLOATING)
float8_e5m2 = dtype("float8_e5m2", ml_dtypes.float8_e5m2, FLOATING)
float8_e5m2fnuz = dtype("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz, FLOATING)
float8_e8m0fnu = dtype("float8_e8m0fnu", ml_dtypes.float8_e8m0fnu, FLOATING)
_WIDE_UNSIGNED = (uint16, uint32, uint64)
_FLOAT8 = (float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu)

# torch's aliases
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
chalf, cfloat, cdouble = complex32, complex64, complex128

_REAL_OF = {complex32: float16, complex64: float32, complex128: float64}
_COMPLEX_OF = {float16: complex32, bfloat16: complex64, float32: complex64, float64: complex128}

# the names torch uses for dtypes in error messages ("result type Float can't be cast to ...")
_SCALAR_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                 "int32": "Int", "int64": "Long", "float16": "Half", "bfloat16": "BFloat16",
                 "float32": "Float", "float64": "Double", "complex32": "ComplexHalf",
                 "complex64": "ComplexFloat", "complex128": "ComplexDouble", "uint16": "UInt16",
                 "uint32": "UInt32", "uint64": "UInt64", "float8_e4m3fn": "Float8_e4m3fn",
                 "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2": "Float8_e5m2",
                 "float8_e5m2fnuz": "Float8_e5m2fnuz", "float8_e8m0fnu": "Float8_e8m0fnu"}


def scalar_name(d):
    return _SCALAR_NAMES[d.name]


ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
              complex64, complex128) + _WIDE_UNSIGNED + _FLOAT8
_BY_NUMPY = {d.np: d for d in ALL_DTYPES}


def from_numpy_dtype(np_dtype):
    """The ember dtype of a NumPy dtype; TypeError for types ember lacks (uint16, ...)."""
    try:
        return _BY_NUMPY[np_dtype]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only supported "
            "types are: float64, float32, float16, bfloat16, complex64, complex128, int64, int32, "
            "int16, int8, uint8, and bool.") from None


# ----------------------------------------------------------------------------------------------
# default dtype

_default_float = float32


def get_default_dtype():
    """The dtype Python floats take (float32 unless set_default_dtype changed it)."""
    return _default_float


def default_complex_dtype():
    """The dtype Python complex numbers take: the complex type of the default float dtype
    (torch has no public name for this)."""
    if _default_float is bfloat16:
        raise RuntimeError("invalid default scalar type for complex")
    return _COMPLEX_OF[_default_float]


# caches whose entries depend on the default dtype (dispatch's promotion cache registers here)
DEFAULT_DTYPE_CACHES = []


def set_default_dtype(d):
    """Make `d` the type of Python floats in factories and promotion (`tensor([1.5])`,
    `int_tensor * 1.5`). Only floating types are allowed."""
    global _default_float
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    if d is not _default_float:
        for cache in DEFAULT_DTYPE_CACHES:
            cache.clear()
    _default_float = d


# ----------------------------------------------------------------------------------------------
# promotion

_promote_cache = {}


def promote_types(type1, type2):
    """torch.promote_types: the smallest type both can be cast to without leaving their category."""
    key = (type1, type2)
    hit = _promote_cache.get(key)
    if hit is None:
        hit = _promote_cache[key] = _promote_uncached(type1, type2)
    return hit


def _promote_uncached(a, b):
    if a is b:
        return a
    if a in _FLOAT8 or b in _FLOAT8:
        raise RuntimeError(f"Promotion for Float8 Types is not supported, attempted to promote "
                           f"{scalar_name(a)} and {scalar_name(b)}")
    if (a in _WIDE_UNSIGNED or b in _WIDE_UNSIGNED) and FLOATING not in (a.category,
                                                                      b.category):
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {scalar_name(a)} and {scalar_name(b)}")
    if COMPLEX in (a.category, b.category) and FLOATING in (a.category, b.category):
        # keep the wider precision of the two: float64 + complex64 -> complex128
        return promote_types(a.to_real(), b.to_real()).to_complex()
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == COMPLEX:
        return a if a.itemsize > b.itemsize else b
    if a.category == FLOATING:
        if {a, b} == {float16, bfloat16}:
            return float32  # neither holds the other: torch goes up to float32
        return a if a.itemsize > b.itemsize else b
    return _BY_NUMPY[np.promote_types(a.np, b.np)]  # integers: NumPy agrees (uint8+int8 -> int16)


def scalar_dtype(value):
    """The dtype a Python scalar takes when it stands alone (`ember.tensor(1.5)`)."""
    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, builtins.int):
        return int64
    if isinstance(value, builtins.float):
        return _default_float
    if isinstance(value, complex):
        return default_complex_dtype()
    raise TypeError(f"expected a Python number, got {type(value).__name__}")


def _combine(higher, lower):
    """Merge the result of a stronger group with a weaker one (torch's combine_categories)."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == COMPLEX:
        return higher
    if lower.category == COMPLEX:
        # a weak complex operand makes the result complex, keeping a floating precision
        return higher.to_complex() if higher.category == FLOATING else lower
    if higher.category == FLOATING:
        return higher
    if higher is bool or lower.category == FLOATING:
        return promote_types(higher, lower)
    return higher


def _weak_category_default(category):
    if category == COMPLEX:
        return default_complex_dtype()
    return (bool, int64, _default_float)[category]


def result_dtype(dims, zeros, scalar_category):
    """Promotion from three groups: dtypes of dimensioned tensors, of 0-d tensors, and the highest
    category among Python scalars (None if there are none)."""
    dim_result = zero_result = None
    for d in dims:
        dim_result = d if dim_result is None else promote_types(dim_result, d)
    for d in zeros:
        zero_result = d if zero_result is None else promote_types(zero_result, d)
    wrapped = None if scalar_category is None else _weak_category_default(scalar_category)
    return _combine(dim_result, _combine(zero_result, wrapped))


def result_type(tensor, other):
    """torch.result_type for two operands (tensors or Python numbers)."""
    from ._tensor import Tensor

    dims, zeros, cat = [], [], None
    for x in (tensor, other):
        if isinstance(x, Tensor):
            (dims if x.ndim else zeros).append(x.dtype)
        else:
            c = scalar_dtype(x).category
            cat = c if cat is None else max(cat, c)
    return result_dtype(dims, zeros, cat)


def can_cast(from_, to):
    """torch.can_cast: casting may not lower the category (float -> int, int -> bool)."""
    return from_.category <= to.category


# ----------------------------------------------------------------------------------------------
# finfo / iinfo


def _check_dtype(fn_name, value):
    if not isinstance(value, dtype):
        raise TypeError(f"{fn_name}(): argument 'type' (position 1) must be ember.dtype, not "
                        f"{type(value).__name__}")


class finfo:
    """Machine limits of a floating dtype (torch.finfo); `finfo()` describes the default dtype.
    A complex dtype is described by its real dtype (finfo(complex64) is float32's), as in torch.

    Fields: bits, eps (gap from 1.0 to the next value), max, min, tiny = smallest_normal,
    resolution (10 ** -decimal digits, as a Python float) and dtype (its name)."""

    def __init__(self, type=None):
        type = _default_float if type is None else type
        _check_dtype("finfo", type)
        type = type.to_real()
        if not type.is_floating_point:
            raise TypeError(f"ember.finfo() requires a floating point input type. Use "
                            f"ember.iinfo to handle '{type}'")
        info = ml_dtypes.finfo(type.np) if type is bfloat16 or type in _FLOAT8 else \
            np.finfo(type.np)
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        # NumPy's resolution is a float32 for float32 (9.9999997e-07); torch gives 1e-06
        self.resolution = 10.0 ** -builtins.int(info.precision)
        if type in _FLOAT8:  # torch: whole decimal digits of the mantissa (ml_dtypes says 1)
            import math

            self.resolution = 10.0 ** -math.floor(builtins.int(info.nmant) * math.log10(2))
        if type is float8_e5m2fnuz:
            self.eps = 0.125  # what torch 2.13 reports (c10's epsilon() for this format)

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    __hash__ = None  # torch's finfo is unhashable too

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype (torch.iinfo): bits, max, min, dtype. bool has none."""

    def __init__(self, type):
        _check_dtype("iinfo", type)
        if type.category >= FLOATING:
            raise TypeError(f"ember.iinfo() requires an integer input type. Use ember.finfo "
                            f"to handle '{type}'")
        if type is bool:
            raise TypeError("ember.bool is not supported by ember.iinfo")
        info = np.iinfo(type.np)
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.max = builtins.int(info.max)
        self.min = builtins.int(info.min)

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    __hash__ = None

    def __repr__(self):
        # torch formats with %g too: iinfo(min=-2.14748e+09, max=2.14748e+09, dtype=int32)
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


# ----------------------------------------------------------------------------------------------
# dtype questions asked of a tensor (torch.is_floating_point(t), ...)


def _tensor_dtype(fn_name, input):
    from ._tensor import Tensor

    if not isinstance(input, Tensor):
        raise TypeError(f"{fn_name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.dtype


def is_floating_point(input):
    """Whether `input`'s dtype is a floating-point type (float16, bfloat16, float32, float64, ...).
    """
    return _tensor_dtype("is_floating_point", input).is_floating_point


def is_complex(input):
    """Whether input's dtype is complex (complex64, complex128)."""
    return _tensor_dtype("is_complex", input).is_complex


def is_signed(input):
    """Whether `input`'s dtype can hold negative values (every dtype but bool and the unsigned
    integers)."""
    return _tensor_dtype("is_signed", input).is_signed
