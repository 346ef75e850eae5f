"""Elementwise math: unary functions, arithmetic, comparisons, logical and bitwise ops.

Most ops are one table row (name | promotion | forward | backward); `_unary` publishes a row
as `ember.<name>`, `Tensor.<name>` and the in-place `Tensor.<name>_`. Rules may use `out` (the
result) when that is cheaper than recomputing: `exp` saves only its output.

Read next: `reduce.py`.
"""
from .._tensor import Tensor
from ._op import defop, export


def _unary(name, promote, kernel, rule, **options):
    """Declare a unary op and publish it as a function, a method and an in-place method."""
    op = defop(name, promote, kernel, rule, **options)
    export(op, name=name, method=True)
    export(lambda self: op.inplace(self), name=name + "_", function=False, method=True)
    return op


# ----------------------------------------------------------------------------------------------
# unary ops
#       name       promotion  forward                               backward

_unary("neg",     "same",  lambda xp, a: -a,                  lambda g: (-g,))
_unary("exp",     "float", lambda xp, a: xp.exp(a),           lambda g, out: (g * out,))
_unary("log",     "float", lambda xp, a: xp.log(a),           lambda g, a: (g / a,))
_unary("tanh",    "float", lambda xp, a: xp.tanh(a),          lambda g, out: (g * (1 - out * out),))
_unary("sigmoid", "float", lambda xp, a: _sigmoid(xp, a),     lambda g, out: (g * out * (1 - out),))
_unary("relu",    "same",  lambda xp, a: xp.maximum(a, 0),    lambda g, out: (g * (out > 0),))


def _sigmoid(xp, a):
    """1 / (1 + exp(-a)), written so neither branch overflows: exp(-|a|) is at most 1."""
    e = xp.exp(-xp.abs(a))
    return xp.where(a >= 0, 1 / (1 + e), e / (1 + e)).astype(a.dtype, copy=False)


# ----------------------------------------------------------------------------------------------
# binary arithmetic

_add = defop("add", "arith", lambda xp, a, b: a + b, lambda g: (g, g))
_sub = defop("sub", "arith", lambda xp, a, b: a - b, lambda g: (g, -g))
_mul = defop("mul", "arith", lambda xp, a, b: a * b, lambda g, a, b: (g * b, g * a))
_div = defop("div", "float", lambda xp, a, b: a / b, lambda g, a, b: (g / b, -g * a / (b * b)))


def _scaled(other, alpha):
    return other if alpha == 1 else other * alpha


@export(method=True)
def add(input, other, *, alpha=1, out=None):
    """input + alpha * other."""
    return _add(input, _scaled(other, alpha))


@export(method=True)
def sub(input, other, *, alpha=1, out=None):
    """input - alpha * other."""
    return _sub(input, _scaled(other, alpha))


@export(method=True)
def mul(input, other, *, out=None):
    return _mul(input, other)


@export(method=True)
def div(input, other, *, rounding_mode=None, out=None):
    """True division (always floating); rounding_mode 'trunc' or 'floor' is not in this slice."""
    if rounding_mode is not None:
        raise NotImplementedError("div(rounding_mode=...) is not implemented yet")
    return _div(input, other)


@export(function=False, method=True)
def add_(self, other, *, alpha=1):
    return _add.inplace(self, _scaled(other, alpha))


@export(function=False, method=True)
def sub_(self, other, *, alpha=1):
    return _sub.inplace(self, _scaled(other, alpha))


@export(function=False, method=True)
def mul_(self, other):
    return _mul.inplace(self, other)


@export(function=False, method=True)
def div_(self, other, *, rounding_mode=None):
    if rounding_mode is not None:
        raise NotImplementedError("div_(rounding_mode=...) is not implemented yet")
    return _div.inplace(self, other)


# pow: three torch nodes -- tensor**scalar (0), tensor**tensor (1), scalar**tensor (2)

_pow_scalar = defop("pow_scalar", "arith", lambda xp, a, *, exponent: a ** exponent,
                    lambda g, a, exponent: (g * exponent * a ** (exponent - 1),),
                    node_name="PowBackward0")


@export(method=True)
def pow(input, exponent, *, out=None):
    if isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        if exponent == 0:
            return input.new_ones(input.shape)
        return _pow_scalar(input, exponent=exponent)
    raise NotImplementedError("pow with a tensor exponent is not implemented yet")


# ----------------------------------------------------------------------------------------------
# comparisons (never differentiable)

for _name, _kernel in (("eq", lambda xp, a, b: a == b), ("ne", lambda xp, a, b: a != b),
                       ("lt", lambda xp, a, b: a < b), ("le", lambda xp, a, b: a <= b),
                       ("gt", lambda xp, a, b: a > b), ("ge", lambda xp, a, b: a >= b)):
    _cmp = defop(_name, "compare", _kernel, differentiable=False)
    export(_cmp, name=_name, method=True)
    export(_cmp.inplace, name=_name + "_", function=False, method=True)

_isnan = defop("isnan", "none", lambda xp, a: xp.isnan(a), differentiable=False)
export(_isnan, name="isnan", method=True)
