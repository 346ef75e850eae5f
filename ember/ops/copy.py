"""Casts, device moves and copies: `to`, `type`, `float()`..., `clone`, `copy_`, `fill_`,
`zero_`, `contiguous`, `cpu`, `cuda`.

Read next: `pointwise.py`.
"""
import numbers
import warnings

from .. import _backend
from .. import _dtype as dt
from .._device import as_device
from .._functorch import batch_rules
from .._tensor import Tensor
from ._op import LINEAR, defop, export


def _real_part(a):
    """A complex array about to be stored as real: its real part, with torch's warning."""
    warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                  stacklevel=4)
    return a.real


def _cast_kernel(xp, a, *, dtype):
    if a.dtype.kind == "c" and dtype.category != dt.COMPLEX:
        a = _real_part(a)
    return a.astype(dtype.np)


def _cast_back(g, dtype):
    """The gradient of a cast: cast back (a real input of a complex result keeps the real part
    of its gradient, with no warning)."""
    if g._dtype.category == dt.COMPLEX and dtype.category != dt.COMPLEX:
        g = g.real
    return g.to(dtype)


def _copy_kernel(xp, a, b):
    return _real_part(b) if b.dtype.kind == "c" and a.dtype.kind != "c" else b


def _fill_kernel(xp, a, *, value):
    if isinstance(value, complex) and a.dtype.kind != "c":
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {dt._BY_NUMPY[a.dtype].name} "
                               "without overflow")
        value = value.real
    return xp.full_like(a, value)


# name        | promotion | forward                                   | backward
_cast = defop("to_dtype", "none", _cast_kernel,
              lambda g, a_dtype: (_cast_back(g, a_dtype),), node_name="ToCopyBackward0")
_move = defop("to_device", "none", lambda xp, a, *, device: _backend.transfer(a, device),
              lambda g, a: (g.to(a.device),), node_name="ToCopyBackward0", moves=True)
_clone = defop("clone", "none", lambda xp, a: a.copy(), lambda g: (g,))
_copy = defop("copy", "none", _copy_kernel, lambda g: (g.new_zeros(g.shape), g),
              node_name="CopyBackwards")
_fill = defop("fill", "none", _fill_kernel, lambda g: (g.new_zeros(g.shape),))
_fill_tensor = defop("fill_tensor", "none", lambda xp, a, v: xp.full_like(a, v),
                     lambda g: (g.new_zeros(g.shape), g.sum()), node_name="FillBackward1")
_zero = defop("zero", "none", lambda xp, a: xp.zeros_like(a),
              lambda g: (g.new_zeros(g.shape),))


@export(method=True)
def clone(input, *, memory_format=None):
    """A copy with its own memory; gradients flow back to `input`."""
    return _clone(input)


@export(function=False, method=True)
def copy_(self, other, non_blocking=False):
    """Write `other` (a tensor, broadcast and cast, or a number) into self; the gradient
    w.r.t. other is the incoming one."""
    if isinstance(other, Tensor):
        if other.device != self.device:
            other = other.to(self.device)
    elif isinstance(other, numbers.Number):
        other = self.new_full((), other)
    else:
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    return _copy.inplace(self, other)


@export(function=False, method=True)
def fill_(self, value):
    """In place: set every element of self to `value` (a number or a 0-d tensor); returns self.
    A tensor value carries gradient: self's gradient sums into it."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return _fill_tensor.inplace(self, value)
    return _fill.inplace(self, value=value)


@export(function=False, method=True)
def zero_(self):
    """In place: set every element of self to zero; returns self."""
    return _zero.inplace(self)


@export(function=False, method=True)
def contiguous(self, memory_format=None):
    """Self if already contiguous in memory, else a contiguous copy."""
    if self._data.flags.c_contiguous:
        return self
    return _clone(self)


# ----------------------------------------------------------------------------------------------
# to() and friends


@export(function=False, method=True)
def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False,
       memory_format=None):
    """`to(dtype)`, `to(device)`, `to(device, dtype)`, `to(other_tensor)`; returns self when
    nothing changes (unless copy=True)."""
    for arg in args:
        if isinstance(arg, dt.dtype):
            dtype = arg
        elif isinstance(arg, Tensor):
            dtype, device = arg.dtype, arg.device
        elif arg is not None:
            device = arg
    result = self
    if device is not None and as_device(device) != self.device:
        result = _move(result, device=as_device(device))
    if dtype is not None and dtype is not result.dtype:
        result = _cast(result, dtype=dtype)
    if copy and result is self:
        result = _clone(self)
    return result


def _caster(dtype):
    def method(self, memory_format=None):
        return to(self, dtype)
    method.__doc__ = f"`self.to({dtype})`"
    return method


# registered by name only: binding `float`, `int`, `type`... here would shadow the builtins
for _dtype, _name in ((dt.float32, "float"), (dt.float64, "double"), (dt.float16, "half"),
                      (dt.bfloat16, "bfloat16"), (dt.int64, "long"), (dt.int32, "int"),
                      (dt.int16, "short"), (dt.int8, "char"), (dt.uint8, "byte"),
                      (dt.bool, "bool"), (dt.complex64, "cfloat"), (dt.complex128, "cdouble")):
    export(_caster(_dtype), name=_name, function=False, method=True)

@export(name="type", function=False, method=True)
def type_(self, dtype=None, non_blocking=False):
    """With no argument: torch's type name ('torch.FloatTensor', as torch spells it, since
    programs compare it); else a cast to a dtype, a legacy type (ember.DoubleTensor, which may
    move the tensor to its device) or a type name ('torch.LongTensor')."""
    from .._legacy import parse_type, type_name

    if dtype is None:
        return type_name(self.dtype, self.device.type)
    dtype, device_type = parse_type(dtype)
    if device_type is None or device_type == self.device.type:
        return to(self, dtype)
    return to(self, device_type, dtype)


@export(function=False, method=True)
def type_as(self, other):
    """`self.to(other.dtype)`: self in other's dtype (self itself if it already has it)."""
    return to(self, other.dtype)


@export(function=False, method=True)
def cpu(self, memory_format=None):
    """`self.to("cpu")`: self itself if it is already on the CPU, else a copy there.
    `memory_format` is accepted and has no effect."""
    return to(self, "cpu")


@export(function=False, method=True)
def cuda(self, device=None, non_blocking=False, memory_format=None):
    """`self.to(device)` for a CUDA device (`"cuda"` when None; an int is a device index).
    `non_blocking` and `memory_format` are accepted and have no effect."""
    if device is None:
        device = "cuda"
    elif isinstance(device, int):
        device = f"cuda:{device}"
    return to(self, device)


# ----------------------------------------------------------------------------------------------
# forward mode and vmap (see ops/_op.py): copies and casts are linear (copy's result is its
# source); fill's result does not depend on its input (a zero tangent), fill_tensor's only on
# the value; all are elementwise


def _fill_tensor_jvp(a_t, v_t):
    if v_t is None:
        return a_t.new_zeros(a_t.shape)
    return v_t if a_t is None else v_t + a_t * 0


def _copy_jvp(a_t, b_t, a):
    """copy_(a, b) is b: its tangent is b's (zeros when only a had one)."""
    return b_t if b_t is not None else a_t.new_zeros(a.shape)


for _op in (_cast, _move, _clone, _zero):
    _op.jvp(LINEAR)
_copy.jvp(_copy_jvp)
_fill.jvp(lambda a_t: a_t.new_zeros(a_t.shape))
_fill_tensor.jvp(_fill_tensor_jvp)
for _op in (_cast, _move, _clone, _copy, _fill, _fill_tensor, _zero):
    _op.batch(batch_rules.pointwise)
del _op
