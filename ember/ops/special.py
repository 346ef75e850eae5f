"""torch.special's functions as ops: the gamma family, Bessel functions, the normal
distribution's functions, zeta, sinc and entr, and the orthogonal polynomials.

Kernels compute in float64 and dispatch rounds the result to the op's dtype, so float32 stays
float32. The numerics live in `_special_math.py` (NumPy or CuPy through `xp`, no SciPy); only
the Bessel functions J, Y and K and airy_ai call SciPy (`cupyx.scipy.special` on a GPU), an
optional dependency: without it they raise ImportError naming the `scipy` extra.

Gradients are torch's formulas, written with ember ops so that they differentiate again; where
torch has none (the Bessel functions, airy_ai and the polynomials) the outputs do not require
grad; where torch refuses one argument (gammainc's `input`, zeta's `input`) the rule raises
torch's NotImplementedError. Dtypes as torch: integers and bools go to the default float;
the functions torch has no half-precision kernel for refuse float16 and bfloat16.

`ember.special` (../special.py) gathers these with the existing erf, logit, softmax, ... into
torch.special's namespace; the names torch also has at the top level (lgamma, digamma,
polygamma, mvlgamma, i0, igamma, igammac, sinc) are published as `ember.<name>`, `Tensor.<name>`
and `Tensor.<name>_` here.

Read next: sampling.py (the samplers behind ember.distributions).
"""
import functools
import math

import numpy as np

from .. import _dtype as dt
from .._creation import arange
from . import _special_math as sm
from ._op import REGISTRY, defop, export
from .pointwise import (
    _check_operands,
    _elementwise_rules,
    _FunctionAndMethod,
    _keep,
    _refuse,
    _unary,
    where,
)

_FIRST_OP = len(REGISTRY)  # the ops this module declares come after (see the end of the file)
_SQRT_2PI = math.sqrt(2 * math.pi)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_HALVES = (dt.float16.np, dt.bfloat16.np)

# ----------------------------------------------------------------------------------------------
# kernels: flat float64 in, float64 out


def _kernel(fn, torch_name, *, halves=True, integers=True):
    """A kernel running `fn(xp, *flat_float64_inputs, **attrs)` on its (broadcast) inputs.
    `halves=False`: refuse float16/bfloat16 as torch does (it has no such kernel);
    `integers=False`: refuse integer and bool inputs (gammainc's arith promotion keeps them)."""
    @functools.wraps(fn)  # Op reads the kernel's signature through __wrapped__
    def kernel(xp, *arrays, **attrs):
        first = arrays[0]
        if not halves and first.dtype in _HALVES:
            name = dt.scalar_name(dt._BY_NUMPY[first.dtype])
            raise NotImplementedError(f"\"{torch_name}_cpu\" not implemented for '{name}'")
        if not integers:
            _refuse(f"{torch_name}_cpu", first, dt.BOOL, dt.INTEGER)
        with np.errstate(all="ignore"):  # (and rounding a huge float64 to float32 gives inf)
            wide = xp.broadcast_arrays(*(xp.asarray(a, dtype=xp.float64) for a in arrays))
            flat = [w.reshape(-1) for w in wide]
            out = fn(xp, *flat, **attrs).reshape(wide[0].shape)
            return out.astype(first.dtype, copy=False)
    return kernel


def _special(name, op, doc):
    """`ember.special.<name>(input)` for a unary op (not published elsewhere)."""
    def function(input):
        return op(input)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


def _special_binary(name, op, doc, numbers_ok="either"):
    """`ember.special.<name>(input, other)`; either operand may be a number."""
    def function(input, other):
        _check_operands(name, input, other, numbers_ok)
        return op(input, other)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


# ----------------------------------------------------------------------------------------------
# the gamma family

_lgamma = _unary("lgamma", "float", _kernel(lambda xp, a: sm.lgamma(xp, a), "lgamma"),
                 lambda g, a: (g * _digamma(a),))
_digamma = _unary("digamma", "float", _kernel(lambda xp, a: sm.digamma(xp, a), "digamma"),
                  lambda g, a: (g * _polygamma(a, n=1),))
_polygamma = defop("polygamma", "float",
                   _kernel(lambda xp, a, *, n: sm.polygamma(xp, n, a), "polygamma"),
                   lambda g, a, n: (g * _polygamma(a, n=n + 1),))


def _check_order(n):
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


def polygamma(n, input):
    """The n-th derivative of digamma (n = 0 is digamma itself)."""
    _check_order(n)
    return _polygamma(input, n=n)


def _polygamma_method(self, n):
    """Tensor.polygamma(n): polygamma(n, self)."""
    _check_order(n)
    return _polygamma(self, n=n)


export(_FunctionAndMethod(polygamma, _polygamma_method), name="polygamma", method=True)


@export(function=False, method=True)
def polygamma_(self, n):
    """In place: self = polygamma(n, self)."""
    _check_order(n)
    return _polygamma.inplace(self, n=n)


def _mvlgamma_kernel(xp, a, *, p):
    """log of the multivariate gamma function: sum_j lgamma(a - j/2) + p(p-1)/4 log pi."""
    shifted = a[..., None] - xp.arange(p) / 2
    total = sm.lgamma(xp, shifted.reshape(-1)).reshape(shifted.shape).sum(axis=-1)
    return total + p * (p - 1) / 4 * math.log(math.pi)


_mvlgamma = defop("mvlgamma", "float", _kernel(_mvlgamma_kernel, "mvlgamma"),
                  lambda g, a, p: (g * _digamma(a.unsqueeze(-1) - _halves(a, p)).sum(-1),))


def _halves(a, p):
    return arange(p, dtype=a.dtype, device=a.device) / 2


def _check_mvlgamma(input, p):
    if input.dtype is dt.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


@export(method=True)
def mvlgamma(input, p):
    """The log of the multivariate gamma function of dimension p (torch.special.multigammaln).
    Like torch, it does not check that every element exceeds (p - 1) / 2."""
    _check_mvlgamma(input, p)
    return _mvlgamma(input, p=p)


@export(function=False, method=True)
def mvlgamma_(self, p):
    """In place: self = mvlgamma(self, p)."""
    _check_mvlgamma(self, p)
    return _mvlgamma.inplace(self, p=p)


def _igamma_rule(upper):
    name = "igammac" if upper else "igamma"

    def rule(g, a, b, needs_input_grad):
        if needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        density = ((a - 1) * b.log() - b - _lgamma(a)).exp()  # d/dx P(a, x)
        return None, (-g * density if upper else g * density)
    return rule


_igamma = defop("igamma", "arith",
                _kernel(lambda xp, a, b: sm.gammainc(xp, a, b, False), "igamma", integers=False),
                _igamma_rule(False))
_igammac = defop("igammac", "arith",
                 _kernel(lambda xp, a, b: sm.gammainc(xp, a, b, True), "igammac",
                         integers=False), _igamma_rule(True))


def _publish_binary(name, op, doc):
    """torch.<name>(input, other), Tensor.<name> and Tensor.<name>_ (tensors only)."""
    def function(input, other):
        _check_operands(name, input, other, "none")
        return op(input, other)

    def method_(self, other):
        _check_operands(name + "_", self, other, "none")
        return op.inplace(self, other)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    method_.__name__ = method_.__qualname__ = name + "_"
    method_.__doc__ = f"In place: self = {name}(self, other)."
    export(function, name=name, method=True)
    export(method_, name=name + "_", function=False, method=True)
    return function


igamma = _publish_binary("igamma", _igamma, "The regularized lower incomplete gamma function "
                         "P(input, other) (torch.special.gammainc).")
igammac = _publish_binary("igammac", _igammac, "The regularized upper incomplete gamma "
                          "function Q(input, other) = 1 - P (torch.special.gammaincc).")


def _zeta_rule(g, a, b, needs_input_grad):
    if needs_input_grad[0]:
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")
    return None, -g * a * _zeta(a + 1, b)


_zeta = defop("special_zeta", "float",
              _kernel(lambda xp, a, b: sm.zeta(xp, a, b), "zeta", halves=False), _zeta_rule)
zeta = _special_binary("zeta", _zeta, "The Hurwitz zeta function sum_k (other + k)^-input.")

# ----------------------------------------------------------------------------------------------
# modified Bessel functions of the first kind


def _i1_rule(g, a, out):
    """d/dx I1 = I0 - I1 / x, which is 1/2 at 0 (and, as torch answers, at nan)."""
    return (g * where(a.abs() > 0, _i0(a) - out / a, 0.5),)


def _i1e_rule(g, a, out):
    """d/dx e^-|x| I1 = I0e - I1e (sgn x + 1/x), 1/2 at 0 (and at nan, as torch)."""
    return (g * where(a.abs() > 0, _i0e(a) - out * (a.sgn() + 1 / a), 0.5),)


_i0 = _unary("i0", "float", _kernel(lambda xp, a: sm.bessel_i(xp, a, 0, False), "i0"),
             lambda g, a: (g * _i1(a),))
_i0e = defop("special_i0e", "float",
             _kernel(lambda xp, a: sm.bessel_i(xp, a, 0, True), "i0e"),
             lambda g, a, out: (g * (_i1e(a) - a.sgn() * out),), node_name="SpecialI0EBackward0")
_i1 = defop("special_i1", "float", _kernel(lambda xp, a: sm.bessel_i(xp, a, 1, False), "i1"),
            _i1_rule)
_i1e = defop("special_i1e", "float", _kernel(lambda xp, a: sm.bessel_i(xp, a, 1, True), "i1e"),
             _i1e_rule, node_name="SpecialI1EBackward0")
i0e = _special("i0e", _i0e, "The exponentially scaled modified Bessel function of order 0, "
               "e^-|x| I0(x).")
i1 = _special("i1", _i1, "The modified Bessel function of the first kind of order 1.")
i1e = _special("i1e", _i1e, "The exponentially scaled modified Bessel function of order 1, "
               "e^-|x| I1(x).")

# ----------------------------------------------------------------------------------------------
# the normal distribution's functions, erfcx


def _ndtr_rule(g, a):
    return (g * (-0.5 * a * a).exp() / _SQRT_2PI,)


_erfcx = defop("special_erfcx", "float",
               _kernel(lambda xp, a: sm.erfcx(xp, a), "erfcx", halves=False),
               lambda g, a, out: (g * (2 * a * out - _TWO_OVER_SQRT_PI),))
_ndtr = defop("special_ndtr", "float", _kernel(lambda xp, a: sm.ndtr(xp, a), "ndtr"),
              _ndtr_rule)
_ndtri = defop("special_ndtri", "float",
               _kernel(lambda xp, a: sm.ndtri(xp, a), "ndtri", halves=False),
               lambda g, out: (g * _SQRT_2PI * (0.5 * out * out).exp(),))
_log_ndtr = defop("special_log_ndtr", "float",
                  _kernel(lambda xp, a: sm.log_ndtr(xp, a), "log_ndtr", halves=False),
                  lambda g, a, out: (g * (-0.5 * a * a - out).exp() / _SQRT_2PI,))
erfcx = _special("erfcx", _erfcx, "The scaled complementary error function exp(x^2) erfc(x).")
ndtr = _special("ndtr", _ndtr, "The standard normal CDF. Computed from erfc, so it stays "
                "accurate in the lower tail, where torch's (1 + erf(x/sqrt2))/2 rounds to 0.")
ndtri = _special("ndtri", _ndtri, "The inverse of the standard normal CDF (its quantile).")
log_ndtr = _special("log_ndtr", _log_ndtr, "log of the standard normal CDF, accurate far into "
                    "the lower tail.")

# ----------------------------------------------------------------------------------------------
# entr, sinc, xlog1py


def _entr(xp, a):
    """-x log x, 0 at 0, -inf below 0."""
    out = xp.where(a == 0, 0.0, -a * xp.log(xp.where(a > 0, a, 1.0)))
    return xp.where(a < 0, -math.inf, out)


def _sinc(xp, a):
    """sin(pi x) / (pi x), 1 at 0 (sin(pi x) unreduced, as torch: tiny, not 0, at integers)."""
    x = math.pi * a
    return xp.where(a == 0, 1.0, xp.sin(x) / xp.where(a == 0, 1.0, x))


def _sinc_rule(g, a):
    """d/dx sinc = (pi x cos(pi x) - sin(pi x)) / (pi x^2); below |x| = 1e-3 its series
    -pi^2 x / 3, which the formula would lose to cancellation (0 at 0, as torch)."""
    x = a * math.pi
    small = a.abs() < 1e-3
    safe = where(small, 1.0, a)
    slope = (x * x.cos() - x.sin()) / (safe * safe * math.pi)
    return (g * where(small, a * (-math.pi ** 2 / 3), slope),)


def _xlog1py(xp, a, b):
    """a * log1p(b), with 0 where a = 0 unless b is nan."""
    return xp.where((a == 0) & ~xp.isnan(b), 0.0, a * xp.log1p(b))


def _xlog1py_rule(g, a, b, needs_input_grad):
    ga = gb = None
    if needs_input_grad[0]:
        ga = _keep(_xlog1py_op(g, b), ~((a == 0) & (b <= -1)))
    if needs_input_grad[1]:
        gb = g * a / (b + 1)
    return ga, gb


_entr_op = defop("special_entr", "float", _kernel(_entr, "entr"),
                 lambda g, a: (-g * (1 + a.log()),))
_unary("sinc", "float", _kernel(_sinc, "sinc"), _sinc_rule)
_xlog1py_op = defop("special_xlog1py", "float", _kernel(_xlog1py, "xlog1py"), _xlog1py_rule,
                    node_name="SpecialXlog1PyBackward0")
entr = _special("entr", _entr_op, "Elementwise entropy -x log x (0 at 0, -inf below 0).")
xlog1py = _special_binary("xlog1py", _xlog1py_op, "input * log1p(other), 0 where input is 0 "
                          "(unless other is nan).")

# ----------------------------------------------------------------------------------------------
# functions torch does not differentiate: Bessel functions (SciPy for J, Y, K and Airy's Ai),
# the spherical Bessel j0, the orthogonal polynomials


def _scipy_special(xp, function):
    """scipy.special (cupyx.scipy.special on a GPU), or ImportError naming the extra."""
    if xp is np:
        try:
            import scipy.special
        except ImportError:
            raise ImportError(f"ember.special.{function} needs SciPy: pip install "
                              "'ember[scipy]' (or pip install scipy)") from None
        return scipy.special
    import cupyx.scipy.special

    return cupyx.scipy.special


def _scipy_kernel(torch_name, pick):
    """A kernel calling `pick(scipy.special, xp, x)` on float64 x."""
    def kernel(xp, a):
        if a.dtype in _HALVES:
            name = dt.scalar_name(dt._BY_NUMPY[a.dtype])
            raise NotImplementedError(f"\"{torch_name}_cpu\" not implemented for '{name}'")
        special = _scipy_special(xp, torch_name)
        with np.errstate(all="ignore"):
            return xp.asarray(pick(special, xp, xp.asarray(a, dtype=xp.float64))).astype(a.dtype)
    return kernel


def _airy_ai(special, xp, x):
    """Ai(x); 0 beyond x = 104, where it underflows (SciPy answers nan there, torch 0)."""
    return xp.where((x > 104) & (x < math.inf), 0.0, special.airy(x)[0])


def _spherical_j0(xp, a):
    """sin(x) / x, by its Taylor series below 0.5 (where the division loses digits); 0 at
    +-inf, as torch."""
    s = a * a
    series = 1 + s * (-1 / 6 + s * (1 / 120 + s * (-1 / 5040 + s * (1 / 362880
                                                                   - s / 39916800))))
    out = xp.where(xp.abs(a) < 0.5, series, xp.sin(a) / xp.where(a == 0, 1.0, a))
    return xp.where(xp.isinf(a), 0.0, out)


_SCIPY_FUNCTIONS = {
    "bessel_j0": lambda s, xp, x: s.j0(x), "bessel_j1": lambda s, xp, x: s.j1(x),
    "bessel_y0": lambda s, xp, x: s.y0(x), "bessel_y1": lambda s, xp, x: s.y1(x),
    "modified_bessel_k0": lambda s, xp, x: s.k0(x), "modified_bessel_k1": lambda s, xp, x: s.k1(x),
    "scaled_modified_bessel_k0": lambda s, xp, x: s.k0e(x),
    "scaled_modified_bessel_k1": lambda s, xp, x: s.k1e(x),
    "airy_ai": _airy_ai,
}
_NUMPY_FUNCTIONS = {
    "modified_bessel_i0": lambda xp, x: sm.bessel_i(xp, x, 0, False),
    "modified_bessel_i1": lambda xp, x: sm.bessel_i(xp, x, 1, False),
    "spherical_bessel_j0": _spherical_j0,
}
_DOCS = {
    "bessel_j0": "The Bessel function of the first kind of order 0 (needs SciPy).",
    "bessel_j1": "The Bessel function of the first kind of order 1 (needs SciPy).",
    "bessel_y0": "The Bessel function of the second kind of order 0 (needs SciPy).",
    "bessel_y1": "The Bessel function of the second kind of order 1 (needs SciPy).",
    "modified_bessel_k0": "The modified Bessel function of the second kind of order 0 "
                          "(needs SciPy).",
    "modified_bessel_k1": "The modified Bessel function of the second kind of order 1 "
                          "(needs SciPy).",
    "scaled_modified_bessel_k0": "e^x K0(x) (needs SciPy).",
    "scaled_modified_bessel_k1": "e^x K1(x) (needs SciPy).",
    "airy_ai": "The Airy function Ai (needs SciPy).",
    "modified_bessel_i0": "The modified Bessel function of the first kind of order 0.",
    "modified_bessel_i1": "The modified Bessel function of the first kind of order 1.",
    "spherical_bessel_j0": "The spherical Bessel function of the first kind of order 0, "
                           "sin(x) / x.",
}


def _non_differentiable(name, kernel):
    op = defop(f"special_{name}", "float", kernel, differentiable=False)
    return _special(name, op, _DOCS[name])


BESSEL = {name: _non_differentiable(name, _scipy_kernel(name, pick))
          for name, pick in _SCIPY_FUNCTIONS.items()}
BESSEL.update({name: _non_differentiable(name, _kernel(fn, name, halves=False))
               for name, fn in _NUMPY_FUNCTIONS.items()})

_POLYNOMIALS = {
    "chebyshev_polynomial_t": lambda xp, x, n: sm.chebyshev(xp, x, n, "t"),
    "chebyshev_polynomial_u": lambda xp, x, n: sm.chebyshev(xp, x, n, "u"),
    "chebyshev_polynomial_v": lambda xp, x, n: sm.chebyshev(xp, x, n, "v"),
    "chebyshev_polynomial_w": lambda xp, x, n: sm.chebyshev(xp, x, n, "w"),
    "shifted_chebyshev_polynomial_t": lambda xp, x, n: sm.chebyshev(xp, x, n, "t", True),
    "shifted_chebyshev_polynomial_u": lambda xp, x, n: sm.chebyshev(xp, x, n, "u", True),
    "shifted_chebyshev_polynomial_v": lambda xp, x, n: sm.chebyshev(xp, x, n, "v", True),
    "shifted_chebyshev_polynomial_w": lambda xp, x, n: sm.chebyshev(xp, x, n, "w", True),
    "hermite_polynomial_h": lambda xp, x, n: sm.hermite(xp, x, n, False),
    "hermite_polynomial_he": lambda xp, x, n: sm.hermite(xp, x, n, True),
    "laguerre_polynomial_l": lambda xp, x, n: sm.laguerre(xp, x, n),
    "legendre_polynomial_p": lambda xp, x, n: sm.legendre(xp, x, n),
}


def _polynomial(name, fn):
    op = defop(f"special_{name}", "float", _kernel(fn, name, halves=False),
               differentiable=False)
    pretty = name.replace("_polynomial_", " polynomial ").replace("_", " ")
    return _special_binary(name, op, f"The {pretty} of degree n (truncated to an integer; "
                           "0 for n < 0) at input. Not differentiable, as in torch.")


POLYNOMIALS = {name: _polynomial(name, fn) for name, fn in _POLYNOMIALS.items()}


# ----------------------------------------------------------------------------------------------
# forward mode and vmap: every op here is elementwise -- its forward-mode rule is its backward
# rule (ELEMENTWISE, autograd/forward_ad.py), and it batches by lining up the sample dims


_elementwise_rules(list(REGISTRY.values())[_FIRST_OP:])
