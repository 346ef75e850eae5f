"""Elementwise math: unary functions, arithmetic, comparisons, logical and bitwise ops.

Most ops are one table row (name | promotion | forward | backward); `_unary` and `_binary`
publish a row as `ember.<name>`, `Tensor.<name>` and the in-place `Tensor.<name>_`. Rules may
use `out` (the result) when that is cheaper than recomputing: `exp` saves only its output.

Sections, in order: helpers; unary math; rounding, clamping and friends; erf, erfc and erfinv
(NumPy has none, so they are built here from xp arithmetic); add ... pow; other binary math
(atan2 ... heaviside); three-input ops (lerp, addcmul, addcdiv, where); comparisons; logical and
bitwise ops; classification (isnan ...).

Dtypes follow torch. The promotion kind of each row (see `_op.py`) picks the result type; a
kernel raises NotImplementedError for a dtype torch has no kernel for (`hypot` of integers,
`abs` of bools), checked on the arrays it receives, which are already in the compute dtype.

Read next: `reduce.py`.
"""
import cmath
import functools
import math
import numbers
import operator
from types import MethodType

import numpy as np  # np.errstate, dtypes and Python-number casts only; kernels compute with `xp`

from .. import _dtype as dt
from .. import return_types
from .._functorch import batch_rules
from .._parallel import SPLIT_CHEAP_ELEMENTS, by_rows
from .._tensor import Tensor
from ._dispatch import call_binary, call_numbers, call_unary
from ._op import ELEMENTWISE, EXPORTS, REGISTRY, defop, export

_FIRST_OP = len(REGISTRY)  # the ops this module declares come after (see the end of the file)

_BOOL, _INT, _FLOAT, _COMPLEX = dt.BOOL, dt.INTEGER, dt.FLOATING, dt.COMPLEX
_LN2, _LN10 = math.log(2.0), math.log(10.0)

# ----------------------------------------------------------------------------------------------
# helpers


def _quiet(kernel):
    """Marks a kernel that makes inf and nan (log(0), 0/0, sqrt(-1)) where torch does, which
    NumPy would warn about: NumPy says nothing about ember's kernels (see `_numpy_errors.py`),
    so the kernel is returned as it is."""
    return kernel


def _category(a):
    """bool / integer / floating, of a raw array or NumPy scalar."""
    return dt._BY_NUMPY[a.dtype].category


def _refuse(name, a, *categories):
    """torch has no kernel of `name` for a's dtype when its category is one of `categories`."""
    d = dt._BY_NUMPY[a.dtype]
    if d.category in categories:
        raise NotImplementedError(f"\"{name}\" not implemented for '{dt.scalar_name(d)}'")


def _zeros(g):
    return g.new_zeros(g.shape)


def _real_only(name, kernel, message=None, error=NotImplementedError):
    """A kernel torch has for real types only (NumPy would order complex numbers, or apply a
    real formula to them): complex input raises `error` with torch's message."""
    @functools.wraps(kernel)  # Op reads the kernel's signature through __wrapped__
    def run(xp, a, *args, **attrs):
        if a.dtype.kind == "c":
            _refuse_complex(name, a, message, error)
        return kernel(xp, a, *args, **attrs)
    return run


def _refuse_complex(name, a, message=None, error=NotImplementedError):
    d = dt._BY_NUMPY[a.dtype]
    raise error(message or f"\"{name}\" not implemented for '{dt.scalar_name(d)}'")


def _conj(x):
    """The complex conjugate of a tensor or a Python number (itself when real: the rules of
    real graphs pay this one check)."""
    if isinstance(x, Tensor):
        return x if x._dtype.category != _COMPLEX else x.conj()
    return x.conjugate()


def _typed(a, value):
    """Python number `value` in a's dtype, wrapping out-of-range integers as torch does
    (NumPy 2 refuses uint8(-1))."""
    try:
        return a.dtype.type(value)
    except OverflowError:
        return np.asarray(value).astype(a.dtype)[()]


def _no_derivative(name):
    """A rule for ops torch cannot differentiate: their outputs require grad, backward fails."""
    def rule(g):
        raise RuntimeError(f"derivative for {name} is not implemented")
    return rule


def _is_number(x):
    return isinstance(x, numbers.Number) and not isinstance(x, Tensor)


def _plain_operands(input, other):
    """Whether a binary function (`add`, `mul`, ...) may hand its operands straight to
    `call_binary`: a tensor and a tensor or a Python float or int (not a bool), the common
    case, which no argument check can fail (callgrind, 16 elements under no_grad:
    `ember.mul(a, b)` 22.5k -> ~13k instructions, as `a * b`)."""
    kind = type(other)
    return isinstance(input, Tensor) and (kind is float or kind is int or
                                          isinstance(other, Tensor))


def _check_operands(name, input, other, numbers_ok):
    """torch's argument parsing: `numbers_ok` says which operands may be Python numbers --
    "either" (add(2, x) works), "other" (eq(x, 2) but not eq(2, x)) or "none" (atan2)."""
    if not isinstance(input, Tensor):
        if numbers_ok != "either" or not isinstance(other, Tensor) or not _is_number(input):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
    elif not isinstance(other, Tensor) and (numbers_ok == "none" or not _is_number(other)):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


def _check_plain(op):
    """The public functions of elementwise ops enter dispatch through `call_unary` /
    `call_binary`, which run the kernel directly: not for ops that write into, move or view
    their input (`call_binary` marks no views)."""
    if op.writes or op.moves or op.view:
        raise TypeError(f"op {op.name}: elementwise ops may not write, move or view")


def _publish(function, name, aliases=(), method=True):
    for public in (name,) + tuple(aliases):
        export(function, name=public, method=method)


def _publish_inplace(method, name, aliases=()):
    for public in (name,) + tuple(aliases):
        export(method, name=public + "_", function=False, method=True)


def _unary(name, promote, kernel, rule=None, *, aliases=(), inplace=True, **options):
    """Declare a unary op; publish `ember.<name>(input)`, `Tensor.<name>` and
    (when torch has it) `Tensor.<name>_`, under each alias too. Returns the Op."""
    op = defop(name, promote, kernel, rule, **options)
    _check_plain(op)

    def function(input):
        return call_unary(op, input)

    def method_(self):
        return op.inplace(self)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.{name}, elementwise."
    method_.__name__ = method_.__qualname__ = name + "_"
    method_.__doc__ = f"In place: self becomes {name}(self); returns self."
    _publish(function, name, aliases)
    if inplace:
        _publish_inplace(method_, name, aliases)
    return op


def _binary(name, op, numbers_ok, *, aliases=(), inplace=True):
    """Publish binary `op` as `ember.<name>(input, other)`, `Tensor.<name>` and
    `Tensor.<name>_` (see `_check_operands` for `numbers_ok`)."""
    _check_plain(op)

    def function(input, other):
        _check_operands(name, input, other, numbers_ok)
        return call_binary(op, input, other)

    def method_(self, other):
        _check_operands(name, self, other, numbers_ok)
        return op.inplace(self, other)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.{name}, elementwise with broadcasting."
    method_.__name__ = method_.__qualname__ = name + "_"
    method_.__doc__ = f"In place: self becomes {name}(self, other); returns self."
    _publish(function, name, aliases)
    if inplace:
        _publish_inplace(method_, name, aliases)
    return op


def _keep(g, mask):
    """g where `mask` holds, 0 elsewhere (a where, not a product: 0 * inf would be nan)."""
    return _where(g, 0, condition=mask._data)


# ----------------------------------------------------------------------------------------------
# unary math


def _neg_kernel(xp, a):
    if a.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return -a


def _abs_kernel(xp, a):
    _refuse("abs", a, _BOOL)
    return xp.abs(a)


# relu and its backward split inputs of SPLIT_CHEAP_ELEMENTS or more into row blocks on
# ember's threads (2 threads, (128, 32, 28, 28) float32, ms: forward 1.21 -> 0.74, backward
# 2.16 -> 1.46).
def _relu_kernel(xp, a):
    if a.dtype.kind in "bc":
        if a.dtype.kind == "c":
            raise NotImplementedError("clamp is not supported for complex types")
        raise RuntimeError("Boolean inputs not supported for relu")
    if a.size < SPLIT_CHEAP_ELEMENTS:
        return xp.maximum(a, 0)
    return by_rows(_relu_into, xp, (xp.empty(a.shape, a.dtype),), a)[0]


def _relu_into(xp, outs, a):
    xp.maximum(a, 0, out=outs[0])


def _sigmoid(xp, a):
    """1 / (1 + exp(-a)) in four passes, the last three in place. Where exp(-a) overflows to
    inf the result is 0, the right limit; half precisions are computed in float32, as torch
    does. (No output array made first, no cast back unless one is needed: 16 elements, 21.7k
    -> 19.1k instructions, callgrind.)"""
    x = a if a.dtype.itemsize >= 4 else a.astype(xp.float32)
    # (NumPy gives a scalar, which cannot be written in place, for a 0-d result)
    t = xp.negative(x) if x.ndim else xp.negative(x, out=xp.empty((), x.dtype))
    xp.exp(t, out=t)
    t += 1
    xp.reciprocal(t, out=t)
    return t if t.dtype == a.dtype else t.astype(a.dtype)


def _sign_kernel(xp, a):
    """-1, 0 or 1; torch gives 0 for nan (NumPy's sign would give nan)."""
    if a.dtype.kind in "bc":
        if a.dtype.kind == "c":
            raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support "
                                      "complex numbers. Please use torch.sgn instead.")
        return a.copy()
    return (a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)


_q = _quiet  # the table below is wide enough already
# Holomorphic functions take the conjugate of their derivative (`.conj()`, free on real
# tensors): torch's gradient of a complex input is dL/d(re) + i dL/d(im), which for
# y = f(z) is g * conj(f'(z)). See ops/complex.py.
# name               promotion forward                          backward
_abs = _unary("abs", "none",  _abs_kernel,                      lambda g, a: (g * a.sgn(),),
              aliases=("absolute",), inplace=False)
_unary("neg",        "same",  _neg_kernel,                      lambda g: (-g,),
       aliases=("negative",))
_unary("exp",        "float", _q(lambda xp, a: xp.exp(a)),      lambda g, out: (g * out.conj(),))
_unary("exp2",       "float", _q(lambda xp, a: xp.exp2(a)),
       lambda g, out: (g * out.conj() * _LN2,))
_unary("expm1",      "float", _q(lambda xp, a: xp.expm1(a)),
       lambda g, out: (g * (out + 1).conj(),))
_unary("log",        "float", _q(lambda xp, a: xp.log(a)),      lambda g, a: (g / a.conj(),))
_unary("log2",       "float", _q(lambda xp, a: xp.log2(a)),
       lambda g, a: (g / (a.conj() * _LN2),))
_unary("log10",      "float", _q(lambda xp, a: xp.log10(a)),
       lambda g, a: (g / (a.conj() * _LN10),))
_unary("log1p",      "float", _q(lambda xp, a: xp.log1p(a)),
       lambda g, a: (g / (a + 1).conj(),))
_unary("sqrt",       "float", _q(lambda xp, a: xp.sqrt(a)),
       lambda g, out: (g / (2 * out.conj()),))
_unary("rsqrt",      "float", _q(lambda xp, a: 1 / xp.sqrt(a)),
       lambda g, out: (-0.5 * g * (out ** 3).conj(),))
_unary("reciprocal", "float", _q(lambda xp, a: 1 / a),
       lambda g, out: (-g * (out * out).conj(),))
_unary("sin",        "float", lambda xp, a: xp.sin(a),          lambda g, a: (g * a.cos().conj(),))
_unary("cos",        "float", lambda xp, a: xp.cos(a),
       lambda g, a: (-g * a.sin().conj(),))
_unary("tan",        "float", lambda xp, a: xp.tan(a),
       lambda g, out: (g * (1 + out * out).conj(),))
_unary("asin",       "float", _q(lambda xp, a: xp.arcsin(a)),
       lambda g, a: (g * (1 - a * a).rsqrt().conj(),), aliases=("arcsin",))
_unary("acos",       "float", _q(lambda xp, a: xp.arccos(a)),
       lambda g, a: (-g * (1 - a * a).rsqrt().conj(),), aliases=("arccos",))
_unary("atan",       "float", lambda xp, a: xp.arctan(a),
       lambda g, a: (g / (a * a + 1).conj(),), aliases=("arctan",))
_unary("sinh",       "float", _q(lambda xp, a: xp.sinh(a)),
       lambda g, a: (g * a.cosh().conj(),))
_unary("cosh",       "float", _q(lambda xp, a: xp.cosh(a)),
       lambda g, a: (g * a.sinh().conj(),))
_unary("tanh",       "float", lambda xp, a: xp.tanh(a),
       lambda g, out: (_tanh_backward(g, out) if out._dtype.category != _COMPLEX
                       else g * (1 - out * out).conj(),))
_unary("asinh",      "float", lambda xp, a: xp.arcsinh(a),
       lambda g, a: (g * (a * a + 1).rsqrt().conj(),), aliases=("arcsinh",))
_unary("acosh",      "float", _q(lambda xp, a: xp.arccosh(a)),
       lambda g, a: (g * (a * a - 1).rsqrt().conj(),), aliases=("arccosh",))
_unary("atanh",      "float", _q(lambda xp, a: xp.arctanh(a)),
       lambda g, a: (g / (1 - a * a).conj(),), aliases=("arctanh",))
_unary("sigmoid",    "float", _q(_sigmoid),
       lambda g, out: (_sigmoid_backward(g, out) if out._dtype.category != _COMPLEX
                       else g * (out * (1 - out)).conj(),))
_unary("relu",       "same",  _relu_kernel,
       lambda g, out: (_threshold_backward(g, out, threshold=0),))
_unary("deg2rad",    "float", _real_only("deg2rad", lambda xp, a: a * (math.pi / 180),
                                        "deg2rad is not supported for complex tensors.",
                                        RuntimeError),
       lambda g: (g * (math.pi / 180),))
_unary("rad2deg",    "float", _real_only("rad2deg", lambda xp, a: a * (180 / math.pi),
                                        "rad2deg is not supported for complex tensors.",
                                        RuntimeError),
       lambda g: (g * (180 / math.pi),))
_unary("sign",       "same",  _sign_kernel,                     lambda g: (_zeros(g),))
_sgn = defop("sgn",  "same",  _sign_kernel,                     lambda g: (_zeros(g),))
_sgn_complex = defop("sgn_complex", "same", _quiet(lambda xp, a: xp.where(a == 0, 0, a / abs(a))),
                     lambda g, a, out: (_sgn_backward(g, a, out),), node_name="SgnBackward0",
                     # not holomorphic: its tangent is the rule's projection itself, unconjugated
                     jvp=lambda a_t, a, out: _sgn_backward(a_t, a, out))


def _sgn_backward(g, z, s):
    """s = z / |z| moves only with the angle of z: the gradient is the part of g across the
    unit circle at s, divided by |z| (i s Im(conj(s) g) / |z|), and 0 at z = 0."""
    r = _abs(z)
    return _keep((g - s * (s.conj() * g).real) / r, r != 0)


@export(method=True)
def sgn(input):
    """The sign, extended to complex numbers: z / |z| (0 at 0); torch.sign for real input."""
    op = _sgn_complex if input._dtype.category == _COMPLEX else _sgn
    return op(input)


@export(function=False, method=True)
def sgn_(self):
    """In-place sgn."""
    return (_sgn_complex if self._dtype.category == _COMPLEX else _sgn).inplace(self)


@export(function=False, method=True)
def abs_(self):
    """In-place abs; refused for complex tensors (the result is real), as in torch."""
    if self._dtype.category == _COMPLEX:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return _abs.inplace(self)


export(abs_, name="absolute_", function=False, method=True)


# The backward of the common activations is one op each (one pass over memory, one dispatch),
# with its own rule so that double backward works. Torch has the same ops under these names.
_tanh_backward = defop(
    "tanh_backward", "arith", lambda xp, dy, y: dy * (1 - y * y),
    lambda g, dy, y: (g * (1 - y * y), -2 * g * dy * y),
    node_name="TanhBackwardBackward0")
_sigmoid_backward = defop(
    "sigmoid_backward", "arith", lambda xp, dy, y: dy * y * (1 - y),
    lambda g, dy, y: (_sigmoid_backward(g, y), g * dy * (1 - 2 * y)),
    node_name="SigmoidBackwardBackward0")
_SAME_SIZE_INT = {2: np.int16, 4: np.int32, 8: np.int64}


def _threshold_backward_kernel(xp, dy, y, *, threshold):
    """dy, except 0 where y <= threshold (torch's test: a nan y keeps its gradient) -- 0 also
    where dy is inf or nan, as torch's where() gives (dy * keep would give nan there). Each
    element's bits are AND-ed with an all-ones or all-zeros word: as fast as dy * keep, where
    NumPy's where() with a scalar was 5x slower."""
    ints = _SAME_SIZE_INT.get(dy.dtype.itemsize)
    if ints is None or dy.dtype.kind != "f" or dy.ndim == 0 or dy.shape != y.shape:
        return xp.where(y <= threshold, xp.zeros((), dy.dtype), dy)
    word = xp.empty(dy.shape, ints)
    by_rows(_zeroed_into, xp, (word,), dy, y, split=dy.size >= SPLIT_CHEAP_ELEMENTS,
            threshold=threshold)
    return word.view(dy.dtype)


def _zeroed_into(xp, outs, dy, y, *, threshold):
    (word,) = outs
    drop = y <= threshold
    xp.subtract(drop.view(xp.int8), 1, out=word, dtype=word.dtype)  # -1 (every bit), or 0
    xp.bitwise_and(dy.view(word.dtype), word, out=word)


_threshold_backward = defop(
    "threshold_backward", "arith", _threshold_backward_kernel,
    lambda g, y, threshold: (_threshold_backward(g, y, threshold=threshold), None),
    node_name="ThresholdBackwardBackward0")


@export(method=True)
def positive(input):
    """`+input`: the input itself."""
    if input.dtype is dt.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ----------------------------------------------------------------------------------------------
# rounding, clamping and friends


def _rounding(name, fn):
    """A floor/ceil/trunc kernel: integers come back unchanged (as a copy), bools are refused."""
    def kernel(xp, a):
        _refuse(name, a, _BOOL)
        if a.dtype.kind == "c":
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        return fn(xp, a) if _category(a) == _FLOAT else a.copy()
    return kernel


def _round_kernel(xp, a, *, decimals):
    """Round half to even, at `decimals` digits after the point (negative: before it)."""
    _refuse("round", a, _BOOL, _COMPLEX)
    if _category(a) != _FLOAT:
        if decimals != 0:
            _refuse("round", a, _INT)
        return a.copy()
    if decimals == 0:
        return xp.rint(a)
    scale = a.dtype.type(10.0 ** abs(decimals))
    return xp.rint(a * scale) / scale if decimals > 0 else xp.rint(a / scale) * scale


def _frac_kernel(xp, a):
    _refuse("frac", a, _BOOL, _INT, _COMPLEX)
    return a - xp.trunc(a)


_unary("floor", "same", _rounding("floor", lambda xp, a: xp.floor(a)), lambda g: (_zeros(g),))
_unary("ceil",  "same", _rounding("ceil", lambda xp, a: xp.ceil(a)),   lambda g: (_zeros(g),))
_unary("trunc", "same", _rounding("trunc", lambda xp, a: xp.trunc(a)), lambda g: (_zeros(g),),
       aliases=("fix",))
_unary("frac",  "same", _frac_kernel,                                  lambda g: (g,))
_round = defop("round", "same", _quiet(_round_kernel), lambda g: (_zeros(g),))


@export(name="round", method=True)
def round_(input, *, decimals=0):
    """Round half to even (torch.round), optionally at `decimals` decimal digits."""
    return _round(input, decimals=decimals)


@export(name="round_", function=False, method=True)
def round_inplace(self, *, decimals=0):
    """In place: self becomes round(self, decimals=decimals); returns self."""
    return _round.inplace(self, decimals=decimals)


@_quiet
def _logit_kernel(xp, a, *, eps):
    if eps is not None:
        a = xp.minimum(xp.maximum(a, eps), 1 - eps)
    return xp.log(a / (1 - a))


def _logit_rule(g, a, eps):
    """g / (a (1 - a)); outside [eps, 1 - eps] the clamped input is constant (grad 0), and
    without eps torch gives nan outside [0, 1]."""
    grad = g / (a * (1 - a))
    if eps is None:
        return (where((a < 0) | (a > 1), math.nan, grad),)
    return (_keep(grad, (a >= eps) & (a <= 1 - eps)),)


_logit = defop("logit", "float", _real_only("logit", _logit_kernel), _logit_rule)


@export(method=True)
def logit(input, eps=None):
    """log(p / (1 - p)); with `eps`, p is first clamped to [eps, 1 - eps]."""
    return _logit(input, eps=eps)


@export(function=False, method=True)
def logit_(self, eps=None):
    """In place: self becomes logit(self, eps); returns self."""
    return _logit.inplace(self, eps=eps)


def _nan_to_num_kernel(xp, a, *, nan, posinf, neginf):
    if a.dtype.kind == "c":  # each part on its own, as torch
        out = xp.empty_like(a)
        out.real = _nan_to_num_kernel(xp, a.real, nan=nan, posinf=posinf, neginf=neginf)
        out.imag = _nan_to_num_kernel(xp, a.imag, nan=nan, posinf=posinf, neginf=neginf)
        return out
    if _category(a) != _FLOAT:
        return a.copy()
    info = dt.finfo(dt._BY_NUMPY[a.dtype])
    out = a.copy()
    out[xp.isnan(a)] = nan
    out[a == math.inf] = info.max if posinf is None else posinf
    out[a == -math.inf] = info.min if neginf is None else neginf
    return out


_nan_to_num = defop("nan_to_num", "same", _nan_to_num_kernel,
                    lambda g, a: (_keep(g, a.isfinite()),))


@export(method=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """nan -> `nan`, +inf -> `posinf`, -inf -> `neginf` (by default the dtype's max / min)."""
    return _nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


@export(function=False, method=True)
def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    """In place: self becomes nan_to_num(self, nan, posinf, neginf); returns self."""
    return _nan_to_num.inplace(self, nan=nan, posinf=posinf, neginf=neginf)


# clamp: one op for number bounds and tensor bounds; min or max may be None (not both)

def _clamp_kernel(xp, a, lo, hi):
    _refuse("clamp", a, _BOOL)
    if a.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    if lo is not None:
        a = xp.maximum(a, lo)  # nan stays nan, as in torch
    if hi is not None:
        a = xp.minimum(a, hi)  # so min > max gives max everywhere, as in torch
    return a


def _clamp_rule(g, a, lo, hi, needs_input_grad):
    """The input's grad flows where it was inside [lo, hi]; a tensor bound gets the grad where
    it won (max wins ties with min, as its clamp is applied last)."""
    inside = None
    if lo is not None:
        inside = a >= lo
    if hi is not None:
        inside = (a <= hi) if inside is None else inside & (a <= hi)
    ga = _keep(g, inside) if needs_input_grad[0] else None
    glo = ghi = None
    if needs_input_grad[1]:
        glo = _keep(g, (a < lo) if hi is None else (a < lo) & (lo < hi))
    if needs_input_grad[2]:
        ghi = _keep(g, (a > hi) if lo is None else (a > hi) | (hi < lo))
    return ga, glo, ghi


# torch names the node after the overload: number bounds (ClampBackward1) or tensor bounds
# (ClampBackward0), and clamp_min / clamp_max have nodes of their own
_clamp = defop("clamp", "arith", _clamp_kernel, _clamp_rule)
_clamp_scalar = defop("clamp_scalar", "arith", _clamp_kernel, _clamp_rule,
                      node_name="ClampBackward1", grad_inputs=("a",))
_clamp_min = defop("clamp_min", "arith", _clamp_kernel, _clamp_rule, grad_inputs=("a",))
_clamp_min_tensor = defop("clamp_min_tensor", "arith", _clamp_kernel, _clamp_rule,
                          node_name="ClampMinBackward1")
_clamp_max = defop("clamp_max", "arith", _clamp_kernel, _clamp_rule, grad_inputs=("a",))
_clamp_max_tensor = defop("clamp_max_tensor", "arith", _clamp_kernel, _clamp_rule,
                          node_name="ClampMaxBackward1")


def _by_bounds(number_op, tensor_op, *bounds):
    """The op of the pair for these bounds (the two differ only in their node's name)."""
    for b in bounds:  # (a loop: `any` over a generator cost ~3k instructions a clamp)
        if isinstance(b, Tensor):
            return tensor_op
    return number_op


def _clamp_bounds(min, max):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if min is not None and max is not None and isinstance(min, Tensor) != isinstance(max, Tensor):
        raise TypeError("clamp(): min and max must both be Tensors or both be numbers")


@export(method=True)
def clamp(input, min=None, max=None):
    """Clamp each element into [min, max]; bounds are numbers or (broadcast) tensors."""
    _clamp_bounds(min, max)
    return call_numbers(_by_bounds(_clamp_scalar, _clamp, min, max), input, min, max)


@export(function=False, method=True)
def clamp_(self, min=None, max=None):
    """In place: self becomes clamp(self, min, max); returns self."""
    _clamp_bounds(min, max)
    return _by_bounds(_clamp_scalar, _clamp, min, max).inplace(self, min, max)


@export(method=True)
def clamp_min(input, min):
    """Clamp each element to at least `min` (a number or a broadcast tensor)."""
    _clamp_bounds(min, None)
    return call_numbers(_by_bounds(_clamp_min, _clamp_min_tensor, min), input, min, None)


@export(method=True)
def clamp_max(input, max):
    """Clamp each element to at most `max` (a number or a broadcast tensor)."""
    _clamp_bounds(None, max)
    return call_numbers(_by_bounds(_clamp_max, _clamp_max_tensor, max), input, None, max)


@export(function=False, method=True)
def clamp_min_(self, min):
    """In place: self becomes clamp_min(self, min); returns self."""
    _clamp_bounds(min, None)
    return _by_bounds(_clamp_min, _clamp_min_tensor, min).inplace(self, min, None)


@export(function=False, method=True)
def clamp_max_(self, max):
    """In place: self becomes clamp_max(self, max); returns self."""
    _clamp_bounds(None, max)
    return _by_bounds(_clamp_max, _clamp_max_tensor, max).inplace(self, None, max)


export(clamp, name="clip", method=True)
export(clamp_, name="clip_", function=False, method=True)


# ----------------------------------------------------------------------------------------------
# erf, erfc, erfinv: computed in float64 from xp arithmetic alone, rounded once to the dtype

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
# erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1)): 13 terms reach 1e-18 for |x| < 0.5
_ERF_TAYLOR = tuple(_TWO_OVER_SQRT_PI * (-1) ** n / (math.factorial(n) * (2 * n + 1))
                    for n in range(13))
# Chebyshev coefficients of f(t) = (1 + 2x) exp(x^2) erfc(x), x = K (1 + t) / (1 - t), K = 4
# (the form of Shepherd & Laframboise, Math. Comp. 36, 1981). Fitted for ember by Chebyshev
# interpolation at 90 nodes in 50-digit arithmetic (mpmath); terms below 1e-17 dropped.
_ERFC_K = 4.0
_ERFC_CHEBYSHEV = (
    1.1774832005374487, -0.007260796620301901, -0.081265123236185, 0.06009212804122225,
    -0.02875393558027666, 0.01059566336347286, -0.003136927294554264, 0.0007456494372536184,
    -0.0001369696503010054, 1.7183861600300937e-05, -7.158364623450346e-07,
    -2.4261399442449534e-07, 5.5765709395703566e-08, -2.1057869513809494e-09,
    -1.1717889351884957e-09, 1.9098355172456688e-10, 1.408871764208813e-11,
    -6.901108320480815e-12, 9.167958364111294e-14, 2.1454508286554553e-13,
    -1.4716575027010623e-14, -6.668675118770408e-15, 7.504598509880083e-16,
    2.22009300666632e-16, -3.1704898956330886e-17, -8.193570309884333e-18,
)
# results rounded to float32 or coarser need fewer terms: the dropped ones are below 1e-9
_SHORT = {"taylor": _ERF_TAYLOR[:8], "chebyshev": _ERFC_CHEBYSHEV[:15]}
_FULL = {"taylor": _ERF_TAYLOR, "chebyshev": _ERFC_CHEBYSHEV}

# The series below update their buffers in place: on large inputs a fresh array per step costs
# more than the arithmetic.


def _exp_neg_square(xp, x):
    """exp(-x^2) without the rounding error of x*x, which exp would amplify for large x:
    x = hi + lo with hi a multiple of 1/16, so hi*hi is exact and the rest is small."""
    hi = xp.round(x * 16)
    hi /= 16
    rest = x - hi
    rest *= x + hi
    hi *= hi
    return xp.exp(-hi) * xp.exp(-rest)


def _erf_taylor(xp, x, terms):
    """erf(x) for |x| < 0.5: x times a polynomial in x^2 (Horner's rule)."""
    s = x * x
    acc = xp.full_like(x, terms[-1])
    for c in terms[-2::-1]:
        acc *= s
        acc += c
    acc *= x
    return acc


def _erfc_chebyshev(xp, x, terms):
    """erfc(x) for x >= 0, relative error ~4e-16: exp(-x^2) / (1 + 2x) * f(t), with f summed by
    Clenshaw's recurrence b_k = c_k + 2t b_(k+1) - b_(k+2); f = c_0 + t b_1 - b_2."""
    x = xp.minimum(x, 30.0)  # erfc(30) underflows anyway; keeps t finite at x = inf
    t = (x - _ERFC_K) / (x + _ERFC_K)
    two_t = 2 * t
    b1, b2, new = xp.zeros_like(t), xp.zeros_like(t), xp.empty_like(t)
    for c in terms[:0:-1]:
        xp.multiply(two_t, b1, out=new)
        new -= b2
        new += c
        b1, b2, new = new, b1, b2
    t *= b1
    t -= b2
    t += terms[0]  # t now holds f
    t /= 2 * x + 1
    t *= _exp_neg_square(xp, x)
    return t


def _erf_erfc(xp, x, terms):
    """(erf(x), erfc(x)) for x >= 0: erf from its Taylor series near 0 (where 1 - erfc would
    cancel), else 1 - erfc."""
    erfc = _erfc_chebyshev(xp, x, terms["chebyshev"])
    erf = xp.where(x < 0.5, _erf_taylor(xp, x, terms["taylor"]), 1 - erfc)
    return erf, erfc


def _erf64(xp, x, terms):
    return xp.copysign(_erf_erfc(xp, xp.abs(x), terms)[0], x)


# erf rounded to float32 or coarser needs neither series: erf(x) = tanh(x P(t)) with
# t = 2 x^2 / C^2 - 1, |x| clamped to C = 4.2 (beyond, erf rounds to +-1 in float32) and P of
# degree 11 (coefficients of t^0 up), fitted for ember by Lawson's weighted minimax against
# mpmath's artanh(erf(x)) / x: relative error of erf below 4e-10 -- evaluated in float64, the
# rounded result is the correctly rounded one or its neighbour, at a sixth of the series' cost.
_ERF_TANH_CLAMP = 4.2
_ERF_TANH = (1.8897083369226237, 0.6166402780173414, -0.10765302640520948,
             0.034914439370258725, -0.007629341613634335, 0.011463160702488463,
             0.0010817127676904649, -0.03356941633021211, -0.03376733718949502,
             0.0016922544857009686, 0.033613891589347335, 0.01583435317037707)


def _erf_tanh64(xp, x, terms):
    """erf of float64 `x` to ~4e-10 relative (see _ERF_TANH)."""
    shape = x.shape
    x = xp.clip(x.reshape(-1), -_ERF_TANH_CLAMP, _ERF_TANH_CLAMP)  # 1-d: 0-d math gives scalars
    t = x * x
    t *= 2 / _ERF_TANH_CLAMP ** 2
    t -= 1
    p = t * _ERF_TANH[-1]
    p += _ERF_TANH[-2]
    for c in _ERF_TANH[-3::-1]:
        p *= t
        p += c
    p *= x
    return xp.tanh(p, out=p).reshape(shape)


def _erfc64(xp, x, terms):
    erfc = _erfc_chebyshev(xp, xp.abs(x), terms["chebyshev"])
    return xp.where(x < 0, 2 - erfc, erfc)


def _erfinv64(xp, y, terms):
    """Winitzki's closed-form estimate (relative error ~1e-3), then two Halley steps on
    erf(x) = |y|, each about tripling the correct digits. Where |y| >= 0.5 the residual is
    taken as (1 - |y|) - erfc(x): 1 - |y| is exact there, 1 - erf(x) is not near |y| = 1."""
    a = xp.abs(y)
    w = xp.log((1 - a) * (1 + a))  # log(1 - y^2) without the cancellation in 1 - y*y
    k = 0.147
    b = 2 / (math.pi * k) + w / 2
    x = xp.sqrt(xp.sqrt(b * b - w / k) - b)
    for _ in range(2):
        erf, erfc = _erf_erfc(xp, x, terms)
        residual = xp.where(a < 0.5, erf - a, (1 - a) - erfc)
        slope = _TWO_OVER_SQRT_PI * _exp_neg_square(xp, x)  # erf' (and erf'' = -2x erf')
        x = x - residual / (slope + x * residual)
    return xp.copysign(xp.where(a == 1, math.inf, x), y)


_BLOCK = 8192  # elements per slice on the CPU, so that the series' ~100 passes stay in cache


def _in_float64(fn, block=_BLOCK):
    """A kernel that evaluates `fn` in float64 and rounds the result to the input's dtype.
    Large CPU inputs go through in slices of `block` elements: memory traffic, not arithmetic,
    limits a long series over a big array (a GPU gets the whole array at once)."""
    @_quiet
    def kernel(xp, a):
        terms = _FULL if a.dtype == xp.float64 else _SHORT
        if a.size <= block or xp.__name__ != "numpy":
            return fn(xp, a.astype(xp.float64, copy=False), terms).astype(a.dtype, copy=False)
        flat = a.reshape(-1)
        out = xp.empty(flat.shape, a.dtype)
        for start in range(0, flat.size, block):
            piece = flat[start:start + block].astype(xp.float64)
            out[start:start + block] = fn(xp, piece, terms)
        return out.reshape(a.shape)
    return kernel


def _erf_kernel(xp, a):
    """float64 results: the series (to ~1e-16); narrower ones: the tanh form, in larger slices
    (it is two dozen passes, not a hundred)."""
    return (_erf_series if a.dtype == xp.float64 else _erf_tanh)(xp, a)


_erf_series = _in_float64(_erf64)
_erf_tanh = _in_float64(_erf_tanh64, block=1 << 16)
_unary("erf", "float", _real_only("erf", _erf_kernel),
       lambda g, a: (g * _TWO_OVER_SQRT_PI * (-a * a).exp(),))
_unary("erfc", "float", _real_only("erfc", _in_float64(_erfc64)),
       lambda g, a: (-g * _TWO_OVER_SQRT_PI * (-a * a).exp(),))
_unary("erfinv", "float", _real_only("erfinv", _in_float64(_erfinv64)),
       lambda g, out: (g * (math.sqrt(math.pi) / 2) * (out * out).exp(),))


# ----------------------------------------------------------------------------------------------
# add, sub, mul, div, floor_divide, remainder, fmod


def _scaled(a, b, alpha):
    """alpha * b in the compute dtype, after torch's checks on alpha."""
    category = _category(a)
    if isinstance(alpha, bool) and category != _BOOL:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, complex) and category != _COMPLEX:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")
    if not isinstance(alpha, numbers.Integral) and category < _FLOAT:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    return b if alpha == 1 else b * _typed(a, alpha)


# The rules compute a gradient only for an operand that wants one (`needs_input_grad`):
# each is a pass over the whole result, and `pred - target` or `x * mask` need only the first.
_add = defop("add", "arith", lambda xp, a, b: a + b, lambda g: (g, g))
_sub = defop("sub", "arith", lambda xp, a, b: a - b,
             lambda g, needs_input_grad: (g, -g if needs_input_grad[1] else None))
_add_alpha = defop("add_alpha", "arith", lambda xp, a, b, *, alpha: a + _scaled(a, b, alpha),
                   lambda g, alpha, needs_input_grad: (
                       g, g * _conj(alpha) if needs_input_grad[1] else None),
                   node_name="AddBackward0")
_sub_alpha = defop("sub_alpha", "arith", lambda xp, a, b, *, alpha: a - _scaled(a, b, alpha),
                   lambda g, alpha, needs_input_grad: (
                       g, g * -_conj(alpha) if needs_input_grad[1] else None),
                   node_name="SubBackward0")
_mul = defop("mul", "arith", lambda xp, a, b: a * b,
             lambda g, a, b, needs_input_grad: (g * _conj(b) if needs_input_grad[0] else None,
                                                g * _conj(a) if needs_input_grad[1] else None))
_div = defop("div", "float", _quiet(lambda xp, a, b: a / b),
             lambda g, a, b, needs_input_grad: (
                 g / _conj(b) if needs_input_grad[0] else None,
                 -g * _conj(a / (b * b)) if needs_input_grad[1] else None))
# With a Python number as `b` only that number is kept for backward (as torch does): the tensor
# operand is not saved, so modifying it in place later cannot invalidate the graph.
_mul_scalar = defop("mul_scalar", "arith", lambda xp, a, b: a * b,
                    lambda g, b: (g * _conj(b), None), node_name="MulBackward0")
_div_scalar = defop("div_scalar", "float", _quiet(lambda xp, a, b: a / b),
                    lambda g, b: (g / _conj(b), None), node_name="DivBackward0")


def _alpha_op(plain, scaled, alpha):
    """(op, attrs): the plain op when alpha is 1, else the op that scales `other` by alpha."""
    if alpha == 1 and not isinstance(alpha, bool):
        return plain, {}
    return scaled, {"alpha": alpha}


def _is_bool(x):
    return x.dtype is dt.bool if isinstance(x, Tensor) else isinstance(x, bool)


def _check_sub(input, other):
    if _is_bool(input) and _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


@export(method=True)
def add(input, other, *, alpha=1):
    """input + alpha * other."""
    if alpha == 1 and type(alpha) is int and _plain_operands(input, other):
        return call_binary(_add, input, other)
    _check_operands("add", input, other, "either")
    op, attrs = _alpha_op(_add, _add_alpha, alpha)
    return op(input, other, **attrs)


@export(method=True)
def sub(input, other, *, alpha=1):
    """input - alpha * other."""
    if alpha == 1 and type(alpha) is int and _plain_operands(input, other) and \
            input._dtype is not dt.bool and not _is_bool(other):
        return call_binary(_sub, input, other)
    _check_operands("sub", input, other, "either")
    _check_sub(input, other)
    op, attrs = _alpha_op(_sub, _sub_alpha, alpha)
    return op(input, other, **attrs)


# `number - tensor` and torch.rsub: torch's node is RsubBackward1 for a number, RsubBackward0
# for a tensor (a plain `a - b` of two tensors is SubBackward0)
_rsub = defop("rsub", "arith", lambda xp, a, b: b - a,
              lambda g, needs_input_grad: (-g if needs_input_grad[0] else None,
                                           g if needs_input_grad[1] else None))
_rsub_scalar = defop("rsub_scalar", "arith", lambda xp, a, b: b - a, lambda g: (-g, None),
                     node_name="RsubBackward1", grad_inputs=("a",))


@export
def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    if alpha != 1 or _is_bool(input) or _is_bool(other) or not isinstance(input, Tensor):
        return sub(other, input, alpha=alpha)
    _check_operands("rsub", input, other, "either")
    return (_rsub if isinstance(other, Tensor) else _rsub_scalar)(input, other)


@export(function=False, method=True)
def add_(self, other, *, alpha=1):
    """In place: self becomes self + alpha * other; returns self.
    The result must be castable to self's dtype and other must broadcast to self's shape."""
    _check_operands("add_", self, other, "other")
    op, attrs = _alpha_op(_add, _add_alpha, alpha)
    return op.inplace(self, other, **attrs)


@export(function=False, method=True)
def sub_(self, other, *, alpha=1):
    """In place: self becomes self - alpha * other; returns self (bool tensors are refused)."""
    _check_operands("sub_", self, other, "other")
    _check_sub(self, other)
    op, attrs = _alpha_op(_sub, _sub_alpha, alpha)
    return op.inplace(self, other, **attrs)


export(sub, name="subtract", method=True)
export(sub_, name="subtract_", function=False, method=True)
@export(method=True)
def mul(input, other):
    """input * other, broadcast, with the promoted dtype; either side may be a number."""
    if _plain_operands(input, other):
        return call_binary(_mul if isinstance(other, Tensor) else _mul_scalar, input, other)
    _check_operands("mul", input, other, "either")
    if _is_number(other):
        return _mul_scalar(input, other)
    if _is_number(input):
        return _mul_scalar(other, input)
    return _mul(input, other)


@export(function=False, method=True)
def mul_(self, other):
    """In place: self becomes self * other; returns self."""
    _check_operands("mul_", self, other, "other")
    return (_mul_scalar if _is_number(other) else _mul).inplace(self, other)


export(mul, name="multiply", method=True)
export(mul_, name="multiply_", function=False, method=True)


def _check_int_divisor(b):
    if (b == 0).any():
        raise RuntimeError("ZeroDivisionError")


@_quiet
def _div_trunc_kernel(xp, a, b):
    """Quotient rounded toward zero (C's integer division)."""
    _refuse("div_trunc", a, _BOOL, _COMPLEX)
    if _category(a) == _FLOAT:
        return xp.trunc(a / b)
    _check_int_divisor(b)
    return (a - xp.fmod(a, b)) // b  # a - fmod(a, b) is an exact multiple of b


@_quiet
def _div_floor_kernel(xp, a, b):
    """Quotient rounded down (Python's //; for floats NumPy and torch use the same fmod-based
    algorithm, so results agree to the bit)."""
    _refuse("div_floor", a, _BOOL, _COMPLEX)
    if _category(a) != _FLOAT:
        _check_int_divisor(b)
    return xp.floor_divide(a, b)


_div_trunc = defop("div_trunc", "arith", _div_trunc_kernel,
                   lambda g: (_zeros(g), _zeros(g)), node_name="DivBackward2")
_div_floor = defop("div_floor", "arith", _div_floor_kernel,
                   lambda g: (_zeros(g), _zeros(g)), node_name="DivBackward2")
_DIV_MODES = {None: _div, "trunc": _div_trunc, "floor": _div_floor}


def _div_op(rounding_mode):
    op = _DIV_MODES.get(rounding_mode) if isinstance(rounding_mode, (str, type(None))) else None
    if op is None:
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    return op


@export(method=True)
def div(input, other, *, rounding_mode=None):
    """True division (always floating), or rounded toward zero ('trunc') or down ('floor'),
    which keep the promoted dtype and have zero gradient."""
    if rounding_mode is None and _plain_operands(input, other):
        return call_binary(_div if isinstance(other, Tensor) else _div_scalar, input, other)
    _check_operands("div", input, other, "either")
    op = _div_op(rounding_mode)
    if op is _div and _is_number(other):
        op = _div_scalar
    return op(input, other)


@export(function=False, method=True)
def div_(self, other, *, rounding_mode=None):
    """In place: self becomes div(self, other, rounding_mode=rounding_mode); returns self.
    True division of an integer self is refused: its float result cannot be cast back."""
    _check_operands("div_", self, other, "other")
    return _div_op(rounding_mode).inplace(self, other)


export(div, name="divide", method=True)
export(div_, name="divide_", function=False, method=True)
_binary("true_divide", _div, "either")


# ----------------------------------------------------------------------------------------------
# Python operators: `a + b`, `2 * x`, ... The common operand types go straight to the op; all
# else takes the full function (argument checks, torch's errors) or returns NotImplemented so
# Python can try the other operand.


def _operator(name, tensor_op, scalar_op, full, reflected=False, no_bools=False):
    """`no_bools`: bool operands take the full path (sub's torch-specific errors)."""
    def method(self, other):
        kind = type(other)
        if no_bools and (self._dtype is dt.bool or kind is Tensor and other._dtype is dt.bool):
            return full(other, self) if reflected else full(self, other)
        if kind is float or kind is int:
            return scalar_op(other, self) if reflected else call_binary(scalar_op, self, other)
        if kind is Tensor:
            return call_binary(tensor_op, other, self) if reflected else \
                call_binary(tensor_op, self, other)
        if not isinstance(other, (Tensor, numbers.Number)):
            return NotImplemented
        return full(other, self) if reflected else full(self, other)
    method.__name__ = method.__qualname__ = name
    export(method, name=name, function=False, method=True)


_operator("__add__", _add, _add, add)
_operator("__radd__", _add, _add, add, reflected=True)
_operator("__sub__", _sub, _sub, sub, no_bools=True)
_operator("__rsub__", _sub, lambda number, tensor: _rsub_scalar(tensor, number), sub,
          reflected=True, no_bools=True)
_operator("__mul__", _mul, _mul_scalar, mul)
_operator("__rmul__", _mul, lambda number, tensor: _mul_scalar(tensor, number), mul,
          reflected=True)
_operator("__truediv__", _div, _div_scalar, div)


def _rdiv(number, tensor):
    """`number / tensor` is `tensor.reciprocal() * number` in torch (Tensor.__rdiv__), which
    rounds twice: 255 / x differs from a true division in the last bit."""
    return REGISTRY["reciprocal"](tensor) * number


_operator("__rtruediv__", _div, _rdiv, _rdiv, reflected=True)


@_quiet
def _remainder_kernel(xp, a, b):
    """Python's %: the result has the divisor's sign."""
    _refuse("remainder", a, _BOOL, _COMPLEX)
    if _category(a) != _FLOAT:
        _check_int_divisor(b)
    return xp.remainder(a, b)


@_quiet
def _fmod_kernel(xp, a, b):
    """C's fmod: the result has the dividend's sign."""
    _refuse("fmod", a, _BOOL, _COMPLEX)
    if _category(a) != _FLOAT:
        _check_int_divisor(b)
    return xp.fmod(a, b)


def _remainder_rule(g, a, b, needs_input_grad):
    if not isinstance(a, Tensor):  # torch has no derivative for remainder(number, tensor)
        raise RuntimeError("derivative for remainder is not implemented")
    return g, (-g * _div_floor(a, b) if needs_input_grad[1] else None)


def _fmod_rule(g, a, b, needs_input_grad):
    return g, (-g * _div_trunc(a, b) if needs_input_grad[1] else None)


_binary("floor_divide", defop("floor_divide", "arith", _div_floor_kernel,
                              _no_derivative("floor_divide")), "either")
_binary("remainder", defop("remainder", "arith", _remainder_kernel, _remainder_rule), "either")
_binary("fmod", defop("fmod", "arith", _fmod_kernel, _fmod_rule), "other")


# ----------------------------------------------------------------------------------------------
# pow: three torch nodes -- tensor ** number (0), tensor ** tensor (1), number ** tensor (2)


def _int_power(xp, a, b):
    """Integer a ** b with torch's answer for negative b (NumPy refuses): 1 ** b = 1,
    (-1) ** b = +-1, anything else truncates to 0."""
    negative = b < 0
    if not negative.any():
        return xp.power(a, b)
    result = xp.power(a, xp.where(negative, 0, b))
    odd = (b & 1) == 1
    inverse = xp.where(a == 1, 1, xp.where(a == -1, xp.where(odd, -1, 1), 0))
    return xp.where(negative, inverse, result).astype(result.dtype, copy=False)


@_quiet
def _pow_kernel(xp, a, b):
    _refuse("pow", a, _BOOL)
    return xp.power(a, b) if _category(a) >= _FLOAT else _int_power(xp, a, b)


@_quiet
def _pow_tensor_scalar_kernel(xp, a, b):
    category = _category(a)
    if category == _BOOL:  # x ** True is x, x ** False is all True
        return a.copy() if b else xp.ones_like(a)
    if category == _INT and b < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return xp.power(a, b)


def _pow_tensor_scalar_rule(g, a, b):
    return (_zeros(g) if b == 0 else g * _conj(b * a ** (b - 1))), None


def _nonnegative(b):
    """b >= 0, where a complex b counts only if it is real (the exponents for which torch
    takes d/db 0^b as 0)."""
    if b._dtype.category == _COMPLEX:
        return (b.imag == 0) & (b.real >= 0)
    return b >= 0


def _pow_tensor_tensor_rule(g, a, b, out, needs_input_grad):
    """d/da = b a^(b-1), taken as 0 where b = 0; d/db = a^b log a, taken as 0 where a = 0 and
    b >= 0. The masks go on the factors (exponent 0, log 0), so no 0 * inf is ever formed.
    A real base of a complex power takes the complex log (log -2 = log 2 + i pi)."""
    ga = gb = None
    if needs_input_grad[0]:
        ga = g * _conj(b * a ** _keep(b - 1, b != 0))
    if needs_input_grad[1]:
        base = a if a._dtype is out._dtype else a.to(out._dtype)
        gb = g * _conj(out * _keep(base.log(), (a != 0) | ~_nonnegative(b)))
    return ga, gb


def _log_number(x):
    if isinstance(x, complex):
        return cmath.log(x) if x != 0 else -math.inf
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)


def _pow_scalar_tensor_rule(g, a, b, out):
    """d/db a^b = a^b log a; for a = 0 that is inf * -inf where b < 0, and torch takes 0 where
    b >= 0. A complex power of a real number takes its complex log."""
    if out._dtype.category == _COMPLEX:
        if a == 0:
            return None, _keep(g * _conj(out * -math.inf), ~_nonnegative(b))
        return None, g * _conj(out * _log_number(complex(a)))
    if a == 0:
        return None, _keep(g * -math.inf, b < 0)
    return None, g * out * _log_number(a)


_pow_tensor_scalar = defop("pow_tensor_scalar", "arith", _pow_tensor_scalar_kernel,
                           _pow_tensor_scalar_rule, node_name="PowBackward0",
                           grad_inputs=("a",))
_pow_tensor_tensor = defop("pow_tensor_tensor", "arith", _pow_kernel,
                           _pow_tensor_tensor_rule, node_name="PowBackward1")
_pow_scalar_tensor = defop("pow_scalar_tensor", "arith", _pow_kernel,
                           _pow_scalar_tensor_rule, node_name="PowBackward2",
                           grad_inputs=("b",))


def _pow_op(input, exponent):
    if isinstance(input, Tensor):
        if isinstance(exponent, Tensor):
            return _pow_tensor_tensor
        if _is_number(exponent):
            return _pow_tensor_scalar
    elif _is_number(input) and isinstance(exponent, Tensor):
        return _pow_scalar_tensor
    raise TypeError(f"pow() received an invalid combination of arguments - got "
                    f"({type(input).__name__}, {type(exponent).__name__})")


@export(method=True)
def pow(input, exponent):
    """input ** exponent; either side may be a number (not both)."""
    return call_binary(_pow_op(input, exponent), input, exponent)


@export(function=False, method=True)
def pow_(self, exponent):
    """In place: self becomes self ** exponent; returns self."""
    return _pow_op(self, exponent).inplace(self, exponent)


@export(method=True)
def square(input):
    """input ** 2 (so bools square to int64, as in torch)."""
    return pow(input, 2)


@export(function=False, method=True)
def square_(self):
    """In place: self becomes self ** 2; returns self."""
    return pow_(self, 2)


def _as_double(x):
    """float_power's compute type: float64, or complex128 for complex operands."""
    if isinstance(x, Tensor):
        return x.to(dt.complex128 if x._dtype.category == _COMPLEX else dt.float64)
    return x


@export(method=True)
def float_power(input, exponent):
    """pow computed in float64 (the result is float64 whatever the inputs)."""
    _pow_op(input, exponent)  # the same argument checks as pow
    return pow(_as_double(input), _as_double(exponent))


@export(function=False, method=True)
def float_power_(self, exponent):
    """In place: self becomes float_power(self, exponent); self must be float64.
    Unlike torch, a complex128 self is refused too (RuntimeError)."""
    if self.dtype is not dt.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{dt.scalar_name(self.dtype)} but the operation's result requires "
                           "dtype Double")
    return pow_(self, _as_double(exponent))


# ----------------------------------------------------------------------------------------------
# other binary math


def _float_only(name, fn):
    """A kernel for ops torch defines on real floating types only (hypot, logaddexp2, ...)."""
    @_quiet
    def kernel(xp, a, b):
        _refuse(name, a, _BOOL, _INT, _COMPLEX)
        return fn(xp, a, b)
    return kernel


def _atan2_rule(g, a, b):
    d = a * a + b * b
    return _keep(g * b / d, d != 0), _keep(-g * a / d, d != 0)


def _maximum_rule(g, a, b):
    """Ties split the gradient in half; with a nan both sides get all of it (as torch)."""
    half = g / 2
    return (where(a == b, half, _keep(g, ~(a < b))), where(a == b, half, _keep(g, ~(a > b))))


def _minimum_rule(g, a, b):
    half = g / 2
    return (where(a == b, half, _keep(g, ~(a > b))), where(a == b, half, _keep(g, ~(a < b))))


def _fmax_rule(g, a, b):
    """fmax ignores nan: a wins where a >= b or b is nan (ties go to a)."""
    a_wins = (a >= b) | b.isnan()
    return _keep(g, a_wins), _keep(g, ~a_wins)


def _fmin_rule(g, a, b):
    a_wins = (a <= b) | b.isnan()
    return _keep(g, a_wins), _keep(g, ~a_wins)


def _copysign_rule(g, a, out, needs_input_grad):
    """d/da copysign(a, b) = sign flip = out / a (0 at a = 0); the sign source gets 0."""
    return _keep(g * (out / a), a != 0), (_zeros(g) if needs_input_grad[1] else None)


@_quiet
def _xlogy_kernel(xp, a, b):
    """a * log(b), with 0 where a = 0 (0 * log 0 = 0) unless b is nan."""
    return xp.where((a == 0) & ~xp.isnan(b), 0, a * xp.log(b))


def _xlogy_rule(g, a, b, needs_input_grad):
    ga = gb = None
    if needs_input_grad[0]:
        ga = _keep(_xlogy(g, b), ~((a == 0) & (b <= 0)))
    if needs_input_grad[1]:
        gb = g * a / b
    return ga, gb


def _heaviside_kernel(xp, a, b):
    """0 for a < 0, `b` where a == 0, 1 for a > 0 (nan counts as < 0, as in torch)."""
    return xp.where(a == 0, b, a > 0).astype(a.dtype, copy=False)


_binary("atan2", defop("atan2", "float", _real_only("atan2", lambda xp, a, b: xp.arctan2(a, b)),
                       _atan2_rule), "none", aliases=("arctan2",))
_binary("hypot", defop("hypot", "arith", _float_only("hypot", lambda xp, a, b: xp.hypot(a, b)),
                       lambda g, a, b, out: (g * a / out, g * b / out)), "none")
def _ordered(name, fn):
    """maximum / minimum / fmax / fmin: complex numbers have no order (RuntimeError, as torch)."""
    return _real_only(name, fn, f"{name} not implemented for complex tensors.", RuntimeError)


_binary("maximum", defop("maximum", "arith", _ordered("maximum", lambda xp, a, b: xp.maximum(a, b)),
                         _maximum_rule), "none", inplace=False)
_binary("minimum", defop("minimum", "arith", _ordered("minimum", lambda xp, a, b: xp.minimum(a, b)),
                         _minimum_rule), "none", inplace=False)
_binary("fmax", defop("fmax", "arith", _ordered("fmax", lambda xp, a, b: xp.fmax(a, b)),
                      _fmax_rule), "none", inplace=False)
_binary("fmin", defop("fmin", "arith", _ordered("fmin", lambda xp, a, b: xp.fmin(a, b)),
                      _fmin_rule), "none", inplace=False)


@_quiet
def _logaddexp_kernel(xp, a, b):
    """log(exp(a) + exp(b)); NumPy's ufunc is real only, so complex numbers factor out the one
    with the larger real part: m + log(1 + exp(other - m))."""
    _refuse("logaddexp", a, _BOOL, _INT)
    if a.dtype.kind != "c":
        return xp.logaddexp(a, b)
    a, b = xp.broadcast_arrays(a, b)
    m = xp.where(a.real >= b.real, a, b)
    other = xp.where(a.real >= b.real, b, a)
    return m + xp.log1p(xp.exp(other - m))


_binary("logaddexp", defop("logaddexp", "arith", _logaddexp_kernel,
                           lambda g, a, b: (g * (a - b).sigmoid().conj(),
                                            g * (b - a).sigmoid().conj())),
        "none", inplace=False)
_binary("logaddexp2", defop("logaddexp2", "arith",
                            _float_only("logaddexp2", lambda xp, a, b: xp.logaddexp2(a, b)),
                            lambda g, a, b: (g * ((a - b) * _LN2).sigmoid(),
                                             g * ((b - a) * _LN2).sigmoid())),
        "none", inplace=False)
_binary("copysign", defop("copysign", "float",
                          _real_only("copysign", lambda xp, a, b: xp.copysign(a, b)),
                          _copysign_rule), "other")
_binary("nextafter", defop("nextafter", "arith",
                           _float_only("nextafter", lambda xp, a, b: xp.nextafter(a, b)),
                           lambda g, a, b: (_keep(g, a != b), _zeros(g))), "none")
_xlogy = _binary("xlogy", defop("xlogy", "float", _real_only("xlogy", _xlogy_kernel),
                                _xlogy_rule), "either")
_heaviside = defop("heaviside", "arith", _heaviside_kernel, _no_derivative("heaviside"))


def _check_heaviside(input, values):
    _check_operands("heaviside", input, values, "none")
    if input.dtype.is_complex or values.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")


@export(method=True)
def heaviside(input, values):
    """The step function: 0 below zero, 1 above, `values` at zero."""
    _check_heaviside(input, values)
    return _heaviside(input, values)


@export(function=False, method=True)
def heaviside_(self, values):
    """In place: self becomes heaviside(self, values); returns self."""
    _check_heaviside(self, values)
    return _heaviside.inplace(self, values)



# ----------------------------------------------------------------------------------------------
# three inputs: lerp, addcmul, addcdiv, where


def _lerp_kernel(xp, a, b, w):
    """a + w (b - a), evaluated from the nearer end (as torch) so w = 1 gives b exactly."""
    d = b - a
    return xp.where(xp.abs(w) < 0.5, a + w * d, b - d * (1 - w))


def _lerp_rule(g, a, b, w, needs_input_grad):
    gw = g * _conj(b - a) if needs_input_grad[2] else None
    return g * _conj(1 - w), g * _conj(w), gw


# torch's overloads: a number weight (LerpBackward0, no edge for it) or a tensor (LerpBackward1)
_lerp = defop("lerp", "arith", _lerp_kernel, _lerp_rule, grad_inputs=("a", "b"))
_lerp_tensor = defop("lerp_tensor", "arith", _lerp_kernel, _lerp_rule,
                     node_name="LerpBackward1")


def _check_lerp(input, end, weight):
    _check_operands("lerp", input, end, "none")
    for name, x in (("end", end), ("weight", weight)):
        if isinstance(x, Tensor) and x.dtype is not input.dtype and (name == "end" or x.ndim):
            raise RuntimeError(f"expected dtype {input.dtype} for `{name}` but got dtype "
                               f"{x.dtype}")
    if not isinstance(weight, Tensor) and not _is_number(weight):
        raise TypeError(f"lerp(): argument 'weight' must be Tensor or Number, not "
                        f"{type(weight).__name__}")
    if input.dtype.category < _FLOAT:
        raise NotImplementedError(f"\"lerp\" not implemented for "
                                  f"'{dt.scalar_name(input.dtype)}'")


@export(method=True)
def lerp(input, end, weight):
    """input + weight * (end - input); `end` has input's dtype, weight is a number or tensor."""
    _check_lerp(input, end, weight)
    return (_lerp_tensor if isinstance(weight, Tensor) else _lerp)(input, end, weight)


@export(function=False, method=True)
def lerp_(self, end, weight):
    """In place: self becomes self + weight * (end - self); returns self."""
    _check_lerp(self, end, weight)
    return (_lerp_tensor if isinstance(weight, Tensor) else _lerp).inplace(self, end, weight)


def _addcmul_kernel(xp, a, b, c, *, value):
    _refuse("addcmul", a, _BOOL)
    return a + _typed(a, value) * b * c  # value in the compute dtype (2.5 -> 2 for ints)


def _addcdiv_kernel(xp, a, b, c, *, value):
    return a + _typed(a, value) * b / c


_addcmul = defop("addcmul", "arith", _addcmul_kernel,
                 lambda g, b, c, value: (g, g * _conj(value * c), g * _conj(value * b)))
_addcdiv = defop("addcdiv", "arith", _quiet(_addcdiv_kernel),
                 lambda g, b, c, value: (g, g * _conj(value / c),
                                         -g * _conj(value * b / (c * c))))


def _check_addc(name, tensors):
    for position, (arg, x) in enumerate(zip(("input", "tensor1", "tensor2"), tensors), 1):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                            f"not {type(x).__name__}")
    if name.startswith("addcdiv") and not (tensors[1].dtype.category >= _FLOAT
                                           or tensors[2].dtype.category >= _FLOAT):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")


@export(method=True)
def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2."""
    _check_addc("addcmul", (input, tensor1, tensor2))
    return _addcmul(input, tensor1, tensor2, value=value)


@export(method=True)
def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2 (true division; integer tensor1/tensor2 refused)."""
    _check_addc("addcdiv", (input, tensor1, tensor2))
    return _addcdiv(input, tensor1, tensor2, value=value)


@export(function=False, method=True)
def addcmul_(self, tensor1, tensor2, *, value=1):
    """In place: self becomes self + value * tensor1 * tensor2; returns self."""
    _check_addc("addcmul_", (self, tensor1, tensor2))
    return _addcmul.inplace(self, tensor1, tensor2, value=value)


@export(function=False, method=True)
def addcdiv_(self, tensor1, tensor2, *, value=1):
    """In place: self becomes self + value * tensor1 / tensor2; returns self."""
    _check_addc("addcdiv_", (self, tensor1, tensor2))
    return _addcdiv.inplace(self, tensor1, tensor2, value=value)


# where: the condition is an attribute (a raw bool array), so promotion and the graph see only
# the two value operands

_where = defop("where", "arith", lambda xp, a, b, *, condition: xp.where(condition, a, b),
               lambda g, condition: (_where(g, 0, condition=condition),
                                     _where(0, g, condition=condition)))


def where(condition, input=None, other=None):
    """input where condition holds, else other (either may be a number); with the condition
    alone, nonzero(condition, as_tuple=True)."""
    if input is None and other is None:
        from .index import where_condition

        return where_condition(condition)
    if not isinstance(condition, Tensor) or input is None or other is None:
        raise TypeError("where() takes a condition Tensor and either both `input` and `other` "
                        "(Tensors or numbers) or neither")
    if condition.dtype not in (dt.bool, dt.uint8):
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {dt.scalar_name(condition.dtype)}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        from .._creation import tensor

        input = tensor(input, device=condition.device)  # a 0-d tensor keeps the number's kind
    for x in (input, other):
        if isinstance(x, Tensor) and x.device != condition.device and x.ndim:
            raise RuntimeError("Expected all tensors to be on the same device, but found at "
                               f"least two devices, {condition.device} and {x.device}!")
    return _where(input, other, condition=condition._data)


def _where_method(self, condition, other):
    """`self.where(condition, other)` is where(condition, self, other)."""
    return where(condition, self, other)


class _FunctionAndMethod:
    """One export whose function and method take different arguments (torch.where(c, x, y) but
    x.where(c, y)): called, it is the function; looked up on Tensor, it is the method."""

    def __init__(self, function, method):
        functools.update_wrapper(self, function)
        self.function = function
        self.method = method

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)

    def __get__(self, instance, owner):
        return self.method if instance is None else MethodType(self.method, instance)


export(_FunctionAndMethod(where, _where_method), name="where", method=True)


# ----------------------------------------------------------------------------------------------
# comparisons (never differentiable; in-place versions store 0/1 in self's dtype)


def _ordering(name, compare):
    """lt, le, gt, ge: complex numbers have no order (NumPy would compare them
    lexicographically)."""
    def kernel(xp, a, b):
        if a.dtype.kind == "c":
            _refuse_complex(name + "_cpu", a)
        return compare(a, b)
    return kernel


for _name, _alias, _kernel in (
        ("eq", None, lambda xp, a, b: a == b),
        ("ne", "not_equal", lambda xp, a, b: a != b),
        ("lt", "less", _ordering("lt", operator.lt)),
        ("le", "less_equal", _ordering("le", operator.le)),
        ("gt", "greater", _ordering("gt", operator.gt)),
        ("ge", "greater_equal", _ordering("ge", operator.ge))):
    _binary(_name, defop(_name, "compare", _kernel, differentiable=False), "other",
            aliases=() if _alias is None else (_alias,))


@export(method=True)
def equal(input, other):
    """True if both have the same shape and the same values (a Python bool)."""
    _check_operands("equal", input, other, "none")
    return input.shape == other.shape and bool((input == other).all())


def _isclose_kernel(xp, a, b, *, rtol, atol, equal_nan):
    """|a - b| <= atol + rtol |b|, or equal (so inf matches inf), or both nan if equal_nan."""
    if _category(a) < _FLOAT:
        a, b = a.astype(xp.float64), b.astype(xp.float64)  # no wrap-around in a - b
    close = a == b
    diff = xp.abs(a - b)
    close |= xp.isfinite(diff) & (diff <= atol + rtol * xp.abs(b))
    if equal_nan:
        close |= xp.isnan(a) & xp.isnan(b)
    return close


_isclose = defop("isclose", "none", _quiet(_isclose_kernel), differentiable=False)


@export(method=True)
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise `|input - other| <= atol + rtol * |other|` (or exactly equal), as a bool tensor.
    `other` must be a tensor of input's dtype; with `equal_nan`, nan matches nan."""
    _check_operands("isclose", input, other, "none")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{dt.scalar_name(input.dtype)} did not match "
                           f"{dt.scalar_name(other.dtype)}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if value < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {value}")
    return _isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


@export(method=True)
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """isclose everywhere (a Python bool)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


# ----------------------------------------------------------------------------------------------
# logical ops (any dtype in, bool out) and bitwise ops (integers and bools only)

for _name, _kernel in (("logical_and", lambda xp, a, b: xp.logical_and(a, b)),
                       ("logical_or", lambda xp, a, b: xp.logical_or(a, b)),
                       ("logical_xor", lambda xp, a, b: xp.logical_xor(a, b))):
    _binary(_name, defop(_name, "none", _kernel, differentiable=False), "none")
_unary("logical_not", "none", lambda xp, a: xp.logical_not(a), differentiable=False)


def _bitwise(name, fn):
    def kernel(xp, a, b):
        _refuse(name, a, _FLOAT, _COMPLEX)
        return fn(a, b)
    return kernel


def _shift_kernel(name, left):
    """Shifts by a negative count or by at least the bit width give 0 (or the sign, for a right
    shift of a signed type), as in torch; NumPy leaves those to the hardware."""
    def kernel(xp, a, b):
        _refuse(name, a, _FLOAT, _BOOL, _COMPLEX)
        bits = a.dtype.itemsize * 8
        outside = (b < 0) | (b >= bits)
        count = xp.where(outside, 0, b)
        if left:
            return xp.where(outside, 0, xp.left_shift(a, count))
        if a.dtype.kind == "i":
            return xp.right_shift(a, xp.where(outside, bits - 1, b))
        return xp.where(outside, 0, xp.right_shift(a, count))
    return kernel


for _name, _fn in (("bitwise_and", lambda a, b: a & b), ("bitwise_or", lambda a, b: a | b),
                   ("bitwise_xor", lambda a, b: a ^ b)):
    _binary(_name, defop(_name, "arith", _bitwise(_name, _fn), differentiable=False), "either")
for _name, _left in (("bitwise_left_shift", True), ("bitwise_right_shift", False)):
    _binary(_name, defop(_name, "arith", _shift_kernel(_name, _left), differentiable=False),
            "either")


def _bitwise_not_kernel(xp, a):
    _refuse("bitwise_not", a, _FLOAT, _COMPLEX)
    return xp.invert(a)


_unary("bitwise_not", "same", _bitwise_not_kernel, differentiable=False)


# ----------------------------------------------------------------------------------------------
# classification: bool results, never differentiable


def _classify(name, test, otherwise, refuse_complex=None):
    """A test on floats (and complex numbers, where NumPy's test looks at both parts, as
    torch's; `refuse_complex`: torch's error for those it does not take); for integers and
    bools the answer is `otherwise` everywhere."""
    def kernel(xp, a):
        if refuse_complex and a.dtype.kind == "c":
            raise refuse_complex[0](refuse_complex[1])
        if _category(a) >= _FLOAT:
            return test(xp, a)
        return xp.full(a.shape, otherwise)
    _unary(name, "none", kernel, inplace=False, differentiable=False)


_classify("isnan", lambda xp, a: xp.isnan(a), False)
_classify("isinf", lambda xp, a: xp.isinf(a), False)
_classify("isfinite", lambda xp, a: xp.isfinite(a), True)
_classify("isposinf", lambda xp, a: a == math.inf, False,
          (RuntimeError, "isposinf does not support complex inputs."))
_classify("isneginf", lambda xp, a: a == -math.inf, False,
          (RuntimeError, "isneginf does not support complex inputs."))
_classify("isreal", lambda xp, a: a.imag == 0 if a.dtype.kind == "c" else xp.ones(a.shape, bool),
          True)
_unary("signbit", "none",
       _real_only("signbit", lambda xp, a: xp.signbit(a) if _category(a) == _FLOAT else a < 0,
                  "signbit is not implemented for complex tensors."),
       inplace=False, differentiable=False)


# ----------------------------------------------------------------------------------------------
# number theory and the float's parts: gcd, lcm (integers only, not differentiable), ldexp,
# frexp


def _integers_only(name, fn):
    def kernel(xp, a, b):
        _refuse(name + "_cpu", a, _BOOL, _FLOAT)
        return fn(xp, a, b)
    return kernel


_gcd = defop("gcd", "arith", _integers_only("gcd", lambda xp, a, b: xp.gcd(a, b)),
             differentiable=False)
_lcm = defop("lcm", "arith", _integers_only("lcm", lambda xp, a, b: xp.lcm(a, b)),
             differentiable=False)
for _name, _op in (("gcd", _gcd), ("lcm", _lcm)):
    _binary(_name, _op, "none")


def _ldexp_rule(g, b, out, needs_input_grad):
    """out = a 2^b:  d/da = 2^b,  d/db = out ln 2."""
    ga = _ldexp(g, b) if needs_input_grad[0] else None
    gb = g * out * _LN2 if needs_input_grad[1] else None
    return ga, gb


_ldexp = defop("ldexp", "float", _quiet(lambda xp, a, b: a * xp.exp2(b)), _ldexp_rule)
_binary("ldexp", _ldexp, "none")


def _frexp_kernel(xp, a):
    """(mantissa in (-1, 1), int32 exponent) with a = mantissa 2^exponent; inf and nan keep
    their value with exponent 0. bfloat16 splits in float32 (its values are exact there)."""
    if _category(a) != _FLOAT:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = a.astype(np.float32) if a.dtype == dt.bfloat16.np else a
    mantissa, exponent = xp.frexp(x)
    return mantissa.astype(a.dtype), exponent.astype(np.int32)


_frexp = defop("frexp", "none", _frexp_kernel,
               lambda g, out: (_ldexp(g[0], -out[1]),))  # mantissa = a 2^-exponent


@export(method=True)
def frexp(input):
    """(mantissa, exponent): input = mantissa * 2 ** exponent, |mantissa| in [0.5, 1)."""
    return return_types.frexp(*_frexp(input))


for _name in ("gcd_", "lcm_", "ldexp_"):  # torch has these in-place ones as functions too
    export(EXPORTS[_name][0], name=_name, function=True, method=True)
# forward mode and vmap: every op above is elementwise, so its forward-mode rule is its backward
# rule (ELEMENTWISE, see autograd/forward_ad.py) and it batches by lining up the sample dims
# (batch_rules.pointwise) -- unless a row gave it rules of its own


for _op in (_tanh_backward, _sigmoid_backward, _threshold_backward):  # fused: one shape only
    _op.batch(batch_rules.same_shape)
del _op


def _elementwise_rules(ops):
    """Give each elementwise op without rules of its own the forward-mode rule ELEMENTWISE and
    the batching rule batch_rules.pointwise (special.py does the same for its ops)."""
    for op in ops:
        if op.jvp_rule is None and op.rule is not None:
            op.jvp(ELEMENTWISE)
        if op.batch_rule is None:
            op.batch(batch_rules.pointwise)


_elementwise_rules(list(REGISTRY.values())[_FIRST_OP:])
