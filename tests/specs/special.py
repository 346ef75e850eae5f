"""Rows for ember/ops/special.py and ember/ops/sampling.py.

Each function runs over wide input ranges and its edge values: 0 and -0, the poles of the
gamma family at the negative integers, +-inf, nan, tiny and huge arguments. Gradients are
compared where torch defines them (the rows of gammainc and zeta detach the argument torch
cannot differentiate; tests/test_special.py checks that both refuse it). The Bessel J/Y rows
and airy_ai use atol 1e-6: torch's Cephes approximations are off by ~1e-7 near the zeros,
where SciPy's (ember's) values agree with mpmath. Samplers get rows on properties every sample
has (their moments are in tests/test_distributions_sampling.py).
"""
import numpy as np

from ._spec import I, Spec, T

try:  # imported now, at collection: SciPy's first import adds warnings filters, which the
    import scipy.special  # noqa: F401  state guard would blame on the first test to use it
except ImportError:
    pass

EDGES = np.array([0.0, -0.0, 1.0, 2.0, 0.5, -0.5, -1.0, -2.0, -2.5, 1e-30, 1e-8, 30.0, 1e10,
                  1e30, np.inf, -np.inf, np.nan], dtype=np.float64)
EDGES32 = EDGES.astype(np.float32)
_RNG = np.random.default_rng(18)
FLOAT_DEGREES = np.floor(_RNG.uniform(-2, 30, 12)).astype(np.float32)
COUNTS32 = np.floor(_RNG.uniform(0, 1e4, 6)).astype(np.float32)
COUNTS64 = np.floor(_RNG.uniform(0, 40, (3, 4)))


# float32 without the poles -1, -2: there torch's float32 trigamma (digamma's gradient) is
# pi^2 / sin(pi x)^2 of a float32 sin(pi x), rounding noise around 1e15; the float64 case keeps
# them (torch's float64 answer, ~6.6e32, is reproduced)
NO_POLES32 = EDGES32[(EDGES32 != -1) & (EDGES32 != -2)]


def cases(low, high, wide=None, edges=EDGES, edges32=None):
    """Shape cases in [low, high) (2-d, 0-d, empty, transposed, float64), a wide float64 range,
    the edge values in float64 and float32, and integers."""
    out = [(T(3, 4, low=low, high=high),), (T(low=low, high=high),), (T(0, 3, low=low, high=high),),
           (T(4, 3, low=low, high=high, t=True),), (T(6, dtype="float64", low=low, high=high),)]
    if wide is not None:
        out.append((T(40, dtype="float64", low=wide[0], high=wide[1]),))
    edges32 = edges.astype(np.float32) if edges32 is None else edges32
    return out + [(edges,), (edges32,), (I(5, low=1, high=6),)]


# torch's float32 Bessel J, Y and Airy kernels reduce large arguments in float32
SMALL_EDGES32 = EDGES32[~(np.abs(EDGES32) >= 1e10)]


def bessel(name, low=-30.0, high=30.0, edges32=None, **tolerances):
    return Spec(name, lambda m, a: getattr(m.special, name)(a),
                cases(low, high, edges32=edges32), ops=[f"special_{name}"], grad=False,
                **tolerances)


def polynomial(name, x_low=-1.2, x_high=1.2):
    return Spec(name, lambda m, a, n: (getattr(m.special, name)(a, n),
                                       getattr(m.special, name)(a, 5)),
                [(T(3, 12, low=x_low, high=x_high), FLOAT_DEGREES),
                 (T(20, dtype="float64", low=x_low, high=x_high), I(20, low=0, high=12)),
                 (np.array([1.0, -1.0, 0.0, 0.5, 1.0, -1.0]), np.array([3.0, 4.0, 7.0, 0.0, 12.0,
                                                                          13.0])),
                 (T(), I(low=3, high=4))],
                ops=[f"special_{name}"], grad=False, rtol=1e-4, atol=1e-5)


SPECS = [
    # ------------------------------------------------------------------------ the gamma family
    Spec("lgamma", lambda m, a: (m.lgamma(a), m.special.gammaln(a), a.lgamma()),
         cases(0.1, 6.0, wide=(-60, 60))),
    Spec("lgamma_large", lambda m, a: m.lgamma(a), [(T(8, dtype="float64", low=1e3, high=1e9),),
                                                    (T(8, low=-1e3, high=-10),)],
         ops=["lgamma"], gradcheck=False),
    Spec("digamma", lambda m, a: (m.digamma(a), m.special.psi(a), m.special.digamma(a)),
         cases(0.1, 6.0, wide=(-40, 40), edges32=NO_POLES32)),
    Spec("polygamma", lambda m, a: (m.polygamma(1, a), m.special.polygamma(2, a),
                                    a.polygamma(3), m.polygamma(0, a)),
         cases(0.2, 6.0, wide=(-20, 20), edges32=NO_POLES32), rtol=1e-6, grad_rtol=1e-4),
    Spec("polygamma_high", lambda m, a: (m.polygamma(6, a), m.polygamma(12, a)),
         [(T(10, dtype="float64", low=0.5, high=20),), (T(6, low=-4.5, high=-0.2),)],
         ops=["polygamma"], rtol=1e-6, grad_rtol=1e-5, gradcheck=False),
    Spec("mvlgamma", lambda m, a: (m.mvlgamma(a, 1), m.special.multigammaln(a, 3),
                                   a.mvlgamma(p=5)),
         [(T(3, 4, low=2.5, high=8),), (T(low=3, high=4),), (T(0, 2, low=3, high=4),),
          (T(6, dtype="float64", low=2.1, high=30),), (I(4, low=3, high=9),)]),
    Spec("igamma", lambda m, a, x: (m.igamma(a.detach(), x), m.special.gammainc(a.detach(), x),
                                    a.detach().igamma(x)),
         [(T(3, 4, low=0.1, high=5), T(4, low=0.1, high=8)),
          (T(low=1, high=2), T(3, low=0.0, high=3)),
          (T(0, 3, low=1, high=2), T(3, low=1, high=3)),
          (T(20, dtype="float64", low=0.01, high=200), T(20, dtype="float64", low=0.01, high=250)),
          (np.array([0.0, 1.0, 2.0, -1.0, 1e3, np.inf, 0.0, 1.0, 5.0, 1e7, 1e7]),
           np.array([1.0, 0.0, np.inf, 1.0, 1e3, 1.0, 0.0, -1.0, np.nan, 1e7 + 3e3, 9.99e6]))],
         gradcheck=False),
    Spec("igammac", lambda m, a, x: (m.igammac(a.detach(), x), m.special.gammaincc(a.detach(), x)),
         [(T(3, 4, low=0.1, high=5), T(4, low=0.1, high=8)),
          (T(20, dtype="float64", low=0.01, high=200), T(20, dtype="float64", low=0.01, high=250)),
          (np.array([0.0, 1.0, 2.0, 1e3, np.inf, 1e7]),
           np.array([1.0, 0.0, np.inf, 1e3, 1.0, 1e7 - 2e3]))], gradcheck=False),
    Spec("zeta", lambda m, s, q: (m.special.zeta(s.detach(), q), m.special.zeta(3.0, q),
                                  m.special.zeta(s.detach(), 2.5)),
         [(T(3, 4, low=1.5, high=8), T(4, low=0.2, high=5)),
          (T(low=2, high=3), T(3, low=0.5, high=3)),
          (T(0, 3, low=2, high=3), T(3, low=0.5, high=3)),
          (T(12, dtype="float64", low=1.01, high=60), T(12, dtype="float64", low=-6.5, high=30)),
          (np.array([1.0, 0.5, 2.0, 2.5, 3.0, 4.0, np.inf, 1e3, 200.0, 3.0]),
           np.array([2.0, 2.0, -2.0, -2.5, -2.5, np.inf, 2.0, 1.0, 0.9, 1e30]))],
         ops=["special_zeta"], rtol=1e-6, grad_rtol=1e-5, gradcheck=False),

    # ------------------------------------------------------------- modified Bessel functions I
    Spec("i0", lambda m, a: (m.i0(a), m.special.i0(a), a.i0()), cases(-5, 5, wide=(-700, 700))),
    Spec("i0e", lambda m, a: m.special.i0e(a), cases(-5, 5, wide=(-1e4, 1e4)),
         ops=["special_i0e"]),
    Spec("i1", lambda m, a: m.special.i1(a), cases(-5, 5, wide=(-700, 700)),
         ops=["special_i1"]),
    Spec("i1e", lambda m, a: m.special.i1e(a), cases(-5, 5, wide=(-1e4, 1e4)),
         ops=["special_i1e"]),
    bessel("modified_bessel_i0", rtol=1e-6),
    bessel("modified_bessel_i1", rtol=1e-6),

    # ------------------------------------------------------- the normal distribution's functions
    Spec("erfcx", lambda m, a: m.special.erfcx(a), cases(-3, 5, wide=(-25, 1e4)),
         ops=["special_erfcx"]),
    Spec("ndtr", lambda m, a: m.special.ndtr(a), cases(-4, 4, wide=(-8, 8)),
         ops=["special_ndtr"]),
    Spec("ndtri", lambda m, a: m.special.ndtri(a),
         cases(0.02, 0.98, edges=np.array([0.0, 1.0, 0.5, 1e-300, 1e-30, 1e-10, 1 - 1e-10,
                                           1 - 1e-16, -1.0, 2.0, np.nan]))[:-1],
         ops=["special_ndtri"], rtol=1e-6, grad_rtol=1e-4),
    Spec("log_ndtr", lambda m, a: m.special.log_ndtr(a), cases(-5, 5, wide=(-200, 40)),
         ops=["special_log_ndtr"]),

    # ------------------------------------------------------------------- entr, sinc, xlog1py
    Spec("entr", lambda m, a: m.special.entr(a), cases(0.05, 3, wide=(-2, 1e6)),
         ops=["special_entr"]),
    Spec("sinc", lambda m, a: (m.sinc(a), m.special.sinc(a), a.sinc()),
         cases(-3, 3, wide=(-1e3, 1e3)), atol=1e-6),
    Spec("xlog1py", lambda m, a, b: (m.special.xlog1py(a, b), m.special.xlog1py(2.0, b),
                                     m.special.xlog1py(a, 3.0)),
         [(T(3, 4), T(4, low=-0.9, high=3)), (T(), T(2, 3, low=-0.5, high=2)),
          (T(0, 3), T(3, low=0, high=1)), (T(4, 3, t=True), T(4, 3, low=-0.5, high=2)),
          (T(2, 3, dtype="float64"), T(3, low=0, high=2)),
          (np.array([0.0, 0.0, 1.0, 0.0, 2.0]), np.array([-1.0, np.nan, -1.0, 5.0, np.inf]))],
         ops=["special_xlog1py"]),

    # ------------------------------------------------- not differentiable: Bessel, Airy, polys
    bessel("bessel_j0", edges32=SMALL_EDGES32, atol=1e-6, rtol=1e-5),
    bessel("bessel_j1", edges32=SMALL_EDGES32, atol=1e-6, rtol=1e-5),
    bessel("bessel_y0", edges32=SMALL_EDGES32, low=0.0, high=30.0, atol=1e-6, rtol=1e-5),
    bessel("bessel_y1", edges32=SMALL_EDGES32, low=0.0, high=30.0, atol=1e-6, rtol=1e-5),
    bessel("modified_bessel_k0", low=0.0, high=30.0, rtol=1e-6),
    bessel("modified_bessel_k1", low=0.0, high=30.0, rtol=1e-6),
    bessel("scaled_modified_bessel_k0", low=0.0, high=30.0, rtol=1e-6),
    bessel("scaled_modified_bessel_k1", low=0.0, high=30.0, rtol=1e-6),
    bessel("airy_ai", edges32=SMALL_EDGES32, low=-10.0, high=10.0, atol=1e-6, rtol=1e-5),
    bessel("spherical_bessel_j0", rtol=1e-6),
    polynomial("chebyshev_polynomial_t"),
    polynomial("chebyshev_polynomial_u"),
    polynomial("chebyshev_polynomial_v"),
    polynomial("chebyshev_polynomial_w"),
    polynomial("shifted_chebyshev_polynomial_t", 0.0, 1.0),
    polynomial("shifted_chebyshev_polynomial_u", 0.0, 1.0),
    polynomial("shifted_chebyshev_polynomial_v", 0.0, 1.0),
    polynomial("shifted_chebyshev_polynomial_w", 0.0, 1.0),
    polynomial("hermite_polynomial_h", -3.0, 3.0),
    polynomial("hermite_polynomial_he", -3.0, 3.0),
    polynomial("laguerre_polynomial_l", -2.0, 6.0),
    polynomial("legendre_polynomial_p"),

    # ---------------------------------------------------------------------------- samplers
    Spec("_standard_gamma", lambda m, a: m._standard_gamma(a) > 0,
         [(T(3, 4, low=0.01, high=5),), (T(6, dtype="float64", low=1, high=1e4),),
          (np.array([0.0, 1e-3, np.nan, 2.0], dtype=np.float32),)], grad=False),
    # samples x near their alpha (torch's approximation is ~1e-4 there, ember's ~1e-9 exact:
    # tests/test_special.py checks it against mpmath)
    Spec("_standard_gamma_grad", lambda m, a, u: m._standard_gamma_grad(a, a * u),
         [(T(3, 4, low=0.05, high=8), T(3, 4, low=0.3, high=2)),
          (T(10, dtype="float64", low=10, high=300), T(10, dtype="float64", low=0.7, high=1.3))],
         grad=False, rtol=2e-3, atol=1e-5),
    Spec("_sample_dirichlet", lambda m, a: m._sample_dirichlet(a).sum(-1),
         [(T(4, 3, low=0.1, high=5),), (T(2, 5, dtype="float64", low=0.5, high=50),)],
         grad=False),
    Spec("binomial", lambda m, c, p: ((m.binomial(c, p) <= c), m.binomial(c, p * 0)),
         [(COUNTS32, T(6, low=0, high=1)), (COUNTS64, T(3, 4, dtype="float64", low=0, high=1))],
         grad=False),
]
