"""ember.special beyond the op table (tests/specs/special.py): the namespace against torch's,
in-place and out= forms, errors, the gradients torch refuses, double backward, node names,
the SciPy-less error, and the gamma sampler's gradient against mpmath."""
import builtins
import math

import numpy as np
import pytest

import ember
import ember.special

from .oracle import check, check_raises

try:  # imported now, at collection: SciPy's first import adds warnings filters, which the
    import scipy.special  # noqa: F401  state guard would blame on the first test to use it
except ImportError:
    pass

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("one_torch_thread")

X = np.array([0.3, 1.7, 4.2, 9.5])


def test_namespace_has_all_of_torch_special():
    import torch.special

    missing = [name for name in torch.special.__all__ if not hasattr(ember.special, name)]
    assert not missing
    assert sorted(ember.special.__all__) == sorted(torch.special.__all__)


@pytest.mark.parametrize("name", ["lgamma", "digamma", "i0", "sinc"])
def test_unary_inplace_and_out(name):
    check(lambda m, a: getattr(a.clone(), name + "_")(), [X], grad=False)
    check(lambda m, a: getattr(m, name)(a, out=m.empty(4, dtype=m.float64)), [X], grad=False)
    check(lambda m, a: getattr(m.special, "gammaln" if name == "lgamma" else name)(a), [X])


def test_inplace_with_arguments():
    check(lambda m, a: a.clone().polygamma_(2), [X], grad=False)
    check(lambda m, a: (a.clone() + 3).mvlgamma_(3), [X], grad=False)
    check(lambda m, a, b: (a.clone().igamma_(b), a.clone().igammac_(b)), [X, X[::-1].copy()],
          grad=False)


def test_inplace_records_the_gradient():
    check(lambda m, a: (a * 1).lgamma_() * 2, [X])
    check(lambda m, a: (a * 1).polygamma_(1), [X])


def test_out_of_special_functions():
    check(lambda m, a: m.special.erfcx(a, out=m.empty(4, dtype=m.float64)), [X], grad=False)
    check(lambda m, a: m.special.zeta(a + 1, a, out=m.empty(4, dtype=m.float64)), [X],
          grad=False)


def test_aliases_of_existing_ops():
    check(lambda m, a: [m.special.expit(a), m.special.erf(a), m.special.erfc(a),
                        m.special.erfinv(a / 10), m.special.exp2(a), m.special.expm1(a),
                        m.special.log1p(a), m.special.logit(a / 10, eps=0.01),
                        m.special.logsumexp(a, 0), m.special.round(a),
                        m.special.softmax(a, 0), m.special.log_softmax(a, dim=0),
                        m.special.xlogy(a, a), m.special.xlogy(2.0, a)], [X])


def test_softmax_dtype():
    check(lambda m, a: m.special.softmax(a, 0, dtype=m.float64), [X.astype(np.float32)])


@pytest.mark.parametrize("fn", [
    lambda m, a: m.polygamma(-1, a),
    lambda m, a: m.special.multigammaln(a, 0),
    lambda m, a: m.mvlgamma(a > 0, 2),
    lambda m, a: m.special.gammainc(a.long(), a.long()),
    lambda m, a: m.igamma(a.bool(), a.bool()),
    lambda m, a: m.special.zeta(2.0, 3.0),
    lambda m, a: m.special.zeta(a.half(), a.half()),
    lambda m, a: m.special.erfcx(a.half()),
    lambda m, a: m.special.ndtri(a.bfloat16()),
    lambda m, a: m.special.log_ndtr(a.half()),
    lambda m, a: m.special.bessel_j0(a.half()),
    lambda m, a: m.special.chebyshev_polynomial_t(a.half(), 3),
    lambda m, a: m.special.spherical_bessel_j0(a.bfloat16()),
    lambda m, a: m.polygamma(1.5, a),
    lambda m, a: m.igamma(a, 2.0),
])
def test_errors_match_torch(fn):
    check_raises(fn, [X])


def test_torch_refuses_some_gradients_and_so_does_ember():
    def grad_of(m, f):
        a = m.tensor(X, requires_grad=True)
        return m.autograd.grad(f(m, a).sum(), a)

    for f, message in ((lambda m, a: m.special.gammainc(a, a + 1), "igamma: input"),
                       (lambda m, a: m.special.gammaincc(a, a + 1), "igammac: input"),
                       (lambda m, a: m.special.zeta(a + 1, 2.0), "zeta")):
        error = check_raises(lambda m: grad_of(m, f))
        assert isinstance(error, NotImplementedError) and message in str(error)


def test_non_differentiable_functions_give_outputs_without_grad():
    names = ["bessel_j0", "bessel_y1", "modified_bessel_i0", "modified_bessel_k1",
             "scaled_modified_bessel_k0", "airy_ai", "spherical_bessel_j0"]
    for name in names:
        check(lambda m, a: getattr(m.special, name)(a), [X])
    check(lambda m, a: m.special.hermite_polynomial_h(a, 4), [X])


def test_gradients_of_the_argument_torch_differentiates():
    a = ember.tensor(X + 0.5, dtype=ember.float64)
    q = ember.tensor(X, dtype=ember.float64)
    gradcheck = ember.autograd.gradcheck
    assert gradcheck(lambda x: ember.special.gammainc(a, x), [q.clone().requires_grad_()])
    assert gradcheck(lambda x: ember.special.gammaincc(a, x), [q.clone().requires_grad_()])
    assert gradcheck(lambda x: ember.special.zeta(a + 1, x), [q.clone().requires_grad_()])


def test_double_backward():
    check(lambda m, a: m.autograd.grad(m.lgamma(a).sum(), a, create_graph=True)[0], [X])
    check(lambda m, a: m.autograd.grad(m.special.i1e(a).sum(), a, create_graph=True)[0], [X])
    check(lambda m, a: m.autograd.grad(m.special.log_ndtr(-a).sum(), a,
                                       create_graph=True)[0], [X])
    t = ember.tensor(X, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda x: ember.special.ndtri(x / 10), [t])
    assert ember.autograd.gradgradcheck(lambda x: ember.special.erfcx(x), [t])


@pytest.mark.parametrize("fn", [
    lambda m, a, b: m.lgamma(a), lambda m, a, b: m.special.psi(a),
    lambda m, a, b: m.special.polygamma(2, a), lambda m, a, b: m.special.multigammaln(a + 2, 3),
    lambda m, a, b: m.special.i0(a), lambda m, a, b: m.special.i0e(a),
    lambda m, a, b: m.special.i1(a), lambda m, a, b: m.special.i1e(a),
    lambda m, a, b: m.special.gammainc(a, b), lambda m, a, b: m.special.gammaincc(a, b),
    lambda m, a, b: m.special.zeta(a + 2, b), lambda m, a, b: m.special.erfcx(a),
    lambda m, a, b: m.special.ndtri(a / 10), lambda m, a, b: m.special.log_ndtr(a),
    lambda m, a, b: m.special.entr(a), lambda m, a, b: m.special.sinc(a),
    lambda m, a, b: m.special.xlog1py(a, b), lambda m, a, b: m._standard_gamma(a),
])
def test_node_names_match_torch(fn):
    names = []
    for m in (torch, ember):
        a = m.tensor(X, requires_grad=True)
        b = m.tensor(X[::-1].copy(), requires_grad=True)
        names.append(fn(m, a, b).grad_fn.name())
    assert names[0] == names[1]


def test_bessel_functions_without_scipy_name_the_extra(monkeypatch):
    real_import = builtins.__import__

    def no_scipy(name, *args, **kwargs):
        if name == "scipy" or name.startswith("scipy."):
            raise ImportError("No module named 'scipy'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_scipy)
    with pytest.raises(ImportError, match=r"ember\[scipy\]"):
        ember.special.bessel_j0(ember.tensor([1.0]))
    # the functions ember computes itself need no SciPy
    assert ember.special.i1(ember.tensor([1.0])).item() == pytest.approx(0.565159103992485)
    assert ember.special.gammainc(ember.tensor([2.0]), ember.tensor([1.0])).item() == \
        pytest.approx(1 - 2 / math.e)


def test_standard_gamma_grad_is_exact():
    """dx/dalpha = -(dP/dalpha) / (dP/dx) at a gamma sample x (P held fixed), from mpmath."""
    mpmath = pytest.importorskip("mpmath")
    alphas = [0.05, 0.7, 2.0, 7.8, 150.0]
    xs = [1e-4, 0.3, 1.5, 10.4, 140.0]
    got = ember._standard_gamma_grad(ember.tensor(alphas, dtype=ember.float64),
                                     ember.tensor(xs, dtype=ember.float64))
    for a, x, value in zip(alphas, xs, got.tolist()):
        a, x = mpmath.mpf(a), mpmath.mpf(x)
        d_alpha = mpmath.diff(lambda s: mpmath.gammainc(s, 0, x, regularized=True), a)
        d_x = x ** (a - 1) * mpmath.exp(-x) / mpmath.gamma(a)
        assert value == pytest.approx(float(-d_alpha / d_x), rel=1e-7)


def test_float32_stays_float32():
    a = ember.tensor([0.5, 2.0])
    for fn in (ember.lgamma, ember.special.ndtri, ember.special.i1e, ember.special.erfcx,
               ember.special.log_ndtr, lambda t: ember.special.zeta(t + 1, t),
               lambda t: ember.special.gammaincc(t, t), lambda t: ember._standard_gamma(t),
               lambda t: ember.special.legendre_polynomial_p(t, 3)):
        assert fn(a).dtype is ember.float32
