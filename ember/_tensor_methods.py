"""Binds the op layer's public functions onto `Tensor` as methods and Python operators.

Each op module marks what it publishes with `export(..., method=True)`; this file attaches
those, then maps Python's operator protocol (`+`, `+=`, `@`, `<`, `~`, ...) to the same
functions, so `a + b`, `a.add(b)` and `ember.add(a, b)` run one op.
"""
import numbers

from ._tensor import Tensor
from .ops import _public as public
from .ops._op import EXPORTS

# operator -> public function; `__r*__` swap operands and `__i*__` use the in-place method
_BINARY = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "floordiv": "floor_divide",
    "mod": "remainder", "pow": "pow", "matmul": "matmul", "and": "bitwise_and",
    "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
    "rshift": "bitwise_right_shift",
}
_COMPARE = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}
_UNARY = {"neg": "neg", "abs": "abs", "invert": "bitwise_not"}


def _operand(x):
    return isinstance(x, (Tensor, numbers.Number))


def _forward(fn):
    def method(self, other):
        if not _operand(other):
            return NotImplemented
        return fn(self, other)
    return method


def _reflected(fn):
    def method(self, other):
        if not _operand(other):
            return NotImplemented
        return fn(other, self)
    return method


def _bind_methods():
    for name, (fn, _, as_method) in EXPORTS.items():
        if as_method:
            setattr(Tensor, name, public.method(fn, name))  # with torch's axis=/keepdims=


def _bind_operators():
    for py, name in _BINARY.items():
        fn = EXPORTS.get(name, (None,))[0]
        inplace = EXPORTS.get(name + "_", (None,))[0]
        if fn is not None:  # an op module may publish a faster operator itself
            if f"__{py}__" not in EXPORTS:
                setattr(Tensor, f"__{py}__", _forward(fn))
            if f"__r{py}__" not in EXPORTS:
                setattr(Tensor, f"__r{py}__", _reflected(fn))
        if inplace is not None:
            setattr(Tensor, f"__i{py}__", _forward(inplace))
    for py, name in _COMPARE.items():
        if name in EXPORTS:
            setattr(Tensor, f"__{py}__", _forward(EXPORTS[name][0]))
    for py, name in _UNARY.items():
        if name in EXPORTS:
            setattr(Tensor, f"__{py}__", EXPORTS[name][0])
    Tensor.__pos__ = lambda self: self


def _bind_properties():
    from .ops import complex as complex_ops
    from .ops import shape  # torch's checks and deprecation warnings live beside the views

    Tensor.T = property(shape.reversed_dims, doc=shape.reversed_dims.__doc__)
    Tensor.mT = property(shape.matrix_transpose, doc=shape.matrix_transpose.__doc__)
    Tensor.mH = property(shape.matrix_adjoint, doc=shape.matrix_adjoint.__doc__)
    Tensor.H = property(shape.adjoint_2d, doc=shape.adjoint_2d.__doc__)
    Tensor.real = property(complex_ops.real, complex_ops.set_real, doc=complex_ops.real.__doc__)
    Tensor.imag = property(complex_ops.imag, complex_ops.set_imag, doc=complex_ops.imag.__doc__)


Tensor.__array_priority__ = 1000  # NumPy defers `ndarray + tensor` to Tensor.__radd__


def bind():
    _bind_methods()
    _bind_operators()
    _bind_properties()


def missing_operators():
    """Operator names whose function no op module exports yet (checked by the tests)."""
    wanted = list(_BINARY.values()) + list(_COMPARE.values()) + list(_UNARY.values())
    return sorted({name for name in wanted if name not in EXPORTS})
