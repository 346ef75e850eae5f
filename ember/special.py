"""`ember.special`: torch.special's namespace.

The new functions are ops in ops/special.py (gamma family, Bessel functions, zeta, the normal
distribution's functions, the orthogonal polynomials); the rest are the existing ops under
torch.special's names (`expit` is sigmoid, `gammaln` is lgamma, `psi` is digamma, ...).

Which functions need SciPy: bessel_j0, bessel_j1, bessel_y0, bessel_y1, modified_bessel_k0,
modified_bessel_k1, scaled_modified_bessel_k0, scaled_modified_bessel_k1 and airy_ai. Without
it they raise ImportError naming the `scipy` extra; every other function is ember's own.

Read next: ops/special.py.
"""
from .ops import _op
from .ops import special as _special
from .ops.nn import activation as _activation

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "sinc", "softmax",
    "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]


def _exported(name):
    return _op.EXPORTS[name][0]


erf, erfc, erfinv = _exported("erf"), _exported("erfc"), _exported("erfinv")
exp2, expm1, log1p = _exported("exp2"), _exported("expm1"), _exported("log1p")
expit = _exported("sigmoid")
logit, xlogy, round = _exported("logit"), _exported("xlogy"), _exported("round")  # noqa: A001
logsumexp = _exported("logsumexp")
gammaln, digamma, i0, sinc = (_exported("lgamma"), _exported("digamma"), _exported("i0"),
                              _exported("sinc"))
psi = digamma
polygamma = _special.polygamma
multigammaln = _special.mvlgamma
gammainc, gammaincc = _special.igamma, _special.igammac
i0e, i1, i1e = _special.i0e, _special.i1, _special.i1e
zeta, entr, xlog1py = _special.zeta, _special.entr, _special.xlog1py
erfcx, ndtr, ndtri, log_ndtr = _special.erfcx, _special.ndtr, _special.ndtri, _special.log_ndtr
bessel_j0 = _special.BESSEL["bessel_j0"]
bessel_j1 = _special.BESSEL["bessel_j1"]
bessel_y0 = _special.BESSEL["bessel_y0"]
bessel_y1 = _special.BESSEL["bessel_y1"]
modified_bessel_i0 = _special.BESSEL["modified_bessel_i0"]
modified_bessel_i1 = _special.BESSEL["modified_bessel_i1"]
modified_bessel_k0 = _special.BESSEL["modified_bessel_k0"]
modified_bessel_k1 = _special.BESSEL["modified_bessel_k1"]
scaled_modified_bessel_k0 = _special.BESSEL["scaled_modified_bessel_k0"]
scaled_modified_bessel_k1 = _special.BESSEL["scaled_modified_bessel_k1"]
airy_ai = _special.BESSEL["airy_ai"]
spherical_bessel_j0 = _special.BESSEL["spherical_bessel_j0"]
chebyshev_polynomial_t = _special.POLYNOMIALS["chebyshev_polynomial_t"]
chebyshev_polynomial_u = _special.POLYNOMIALS["chebyshev_polynomial_u"]
chebyshev_polynomial_v = _special.POLYNOMIALS["chebyshev_polynomial_v"]
chebyshev_polynomial_w = _special.POLYNOMIALS["chebyshev_polynomial_w"]
shifted_chebyshev_polynomial_t = _special.POLYNOMIALS["shifted_chebyshev_polynomial_t"]
shifted_chebyshev_polynomial_u = _special.POLYNOMIALS["shifted_chebyshev_polynomial_u"]
shifted_chebyshev_polynomial_v = _special.POLYNOMIALS["shifted_chebyshev_polynomial_v"]
shifted_chebyshev_polynomial_w = _special.POLYNOMIALS["shifted_chebyshev_polynomial_w"]
hermite_polynomial_h = _special.POLYNOMIALS["hermite_polynomial_h"]
hermite_polynomial_he = _special.POLYNOMIALS["hermite_polynomial_he"]
laguerre_polynomial_l = _special.POLYNOMIALS["laguerre_polynomial_l"]
legendre_polynomial_p = _special.POLYNOMIALS["legendre_polynomial_p"]


def softmax(input, dim, *, dtype=None):
    """softmax along `dim` (required here); `dtype` casts the input first."""
    return _activation.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """log_softmax along `dim` (required here); `dtype` casts the input first."""
    return _activation.log_softmax(input, dim, dtype=dtype)
