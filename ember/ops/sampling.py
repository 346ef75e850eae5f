"""The samplers torch's distributions are built on: `_standard_gamma` (with its
reparameterised gradient), `_standard_gamma_grad`, `_sample_dirichlet` and `binomial`.

Their noise comes from ember's public random functions (`ember.rand`, `ember.randn`, with
`generator=`), drawn in float64 and moved to the input's device; the transformations are
vectorised rejection or splitting steps on raw arrays:

    _standard_gamma   Marsaglia & Tsang's squeeze method (ACM TOMS 26, 2000) for alpha >= 1;
                      alpha < 1 as Gamma(alpha + 1) * U^(1/alpha). Every pending element draws
                      again until all are accepted (about 1.05 draws each).
    binomial          beta splitting (Knuth, TAOCP 3.4.1): the median order statistic of n
                      uniforms, a Beta draw, halves n each step; n <= 16 counts uniforms.

The gradient of a gamma sample with respect to alpha is the implicit one (Figurnov et al.,
2018): dx/dalpha = -(dP/dalpha) / (dP/dx) for the regularized incomplete gamma P(alpha, x),
which a sample holds fixed; dP/dalpha is a central difference of P (relative error ~1e-9).

Read next: ../distributions/__init__.py.
"""
import numpy as np

from .. import _dtype as dt
from .._random import rand, randn
from . import _special_math as sm
from ._op import defop, export

_SMALL_COUNT = 16


def _draw(xp, draw, size, generator):
    """`size` float64 samples of ember.rand or ember.randn, on xp's device."""
    sample = draw(size, dtype=dt.float64, generator=generator)._data
    return sample if xp is np else xp.asarray(sample)


def _gamma_at_least_one(xp, alpha, generator):
    """Gamma(alpha) samples for alpha >= 1 (Marsaglia-Tsang), by vectorised rejection."""
    d = alpha - 1 / 3
    c = 1 / xp.sqrt(9 * d)
    out = xp.empty_like(alpha)
    pending = xp.arange(alpha.size)
    while pending.size:
        z = _draw(xp, randn, pending.size, generator)
        u = _draw(xp, rand, pending.size, generator)
        dp = d[pending]
        v = (1 + c[pending] * z) ** 3
        with np.errstate(invalid="ignore", divide="ignore"):
            accept = (v > 0) & (xp.log(u) < 0.5 * z * z + dp - dp * v + dp * xp.log(v))
        out[pending[accept]] = (dp * v)[accept]
        pending = pending[~accept]
    return out


def gamma_samples(xp, alpha, generator):
    """Gamma(alpha, 1) samples of a flat float64 array; 0 where alpha is not > 0 (torch then
    clamps to the dtype's smallest normal number, as _standard_gamma does below)."""
    valid = alpha > 0  # also false for nan
    a = xp.where(valid, alpha, 1.0)
    boost = a < 1
    x = _gamma_at_least_one(xp, xp.where(boost, a + 1, a), generator)
    if boost.any():
        u = _draw(xp, rand, a.size, generator)
        with np.errstate(divide="ignore", under="ignore"):
            x = xp.where(boost, x * xp.exp(xp.log(u) / a), x)
    return xp.where(valid & xp.isfinite(alpha), x, xp.where(alpha == np.inf, np.inf, 0.0))


def _standard_gamma_kernel(xp, a, *, generator):
    tiny = dt.finfo(dt._BY_NUMPY[a.dtype]).tiny
    flat = xp.asarray(a, dtype=xp.float64).reshape(-1)
    x = gamma_samples(xp, flat, generator).reshape(a.shape).astype(a.dtype)
    return xp.maximum(x, tiny)


def _gamma_grad_kernel(xp, a, x):
    """dx/dalpha of a Gamma(alpha) sample x (see the module docstring). The difference is
    taken of whichever of P and Q = 1 - P is the smaller (dQ/dalpha = -dP/dalpha), so that no
    digits are lost to P being close to 1."""
    shape = xp.broadcast_shapes(xp.shape(a), xp.shape(x))
    with np.errstate(all="ignore"):
        a64 = xp.broadcast_to(xp.asarray(a, dtype=xp.float64), shape).reshape(-1)
        x64 = xp.broadcast_to(xp.asarray(x, dtype=xp.float64), shape).reshape(-1)
        h = 1e-5 * a64
        upper = x64 > a64
        difference = xp.empty_like(a64)
        for tail, chosen in ((True, upper), (False, ~upper)):
            ac, xc, hc = a64[chosen], x64[chosen], h[chosen]
            step = sm.gammainc(xp, ac + hc, xc, tail) - sm.gammainc(xp, ac - hc, xc, tail)
            difference[chosen] = -step if tail else step
        dp_da = difference / (2 * h)
        dp_dx = xp.exp((a64 - 1) * xp.log(x64) - x64 - sm.lgamma(xp, a64))
        return (-dp_da / dp_dx).reshape(shape)


_standard_gamma_grad_op = defop("_standard_gamma_grad", "arith", _gamma_grad_kernel,
                                differentiable=False)
_standard_gamma_op = defop("_standard_gamma", "same", _standard_gamma_kernel,
                           lambda g, a, out: (g * _standard_gamma_grad_op(a, out),),
                           node_name="StandardGammaBackward0")


def _check_floating(name, input):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for "
                                  f"'{dt.scalar_name(input.dtype)}'")


@export
def _standard_gamma(input, generator=None):
    """Gamma(input, 1) samples, differentiable in `input` (the implicit reparameterisation
    gradient); at least the dtype's smallest normal number, as in torch."""
    _check_floating("standard_gamma", input)
    return _standard_gamma_op(input, generator=generator)


@export
def _standard_gamma_grad(input, output):
    """d output / d input for gamma samples `output` of concentrations `input`."""
    return _standard_gamma_grad_op(input, output)


def _dirichlet_kernel(xp, a, *, generator):
    tiny = dt.finfo(dt._BY_NUMPY[a.dtype]).tiny
    gammas = gamma_samples(xp, xp.asarray(a, dtype=xp.float64).reshape(-1), generator)
    gammas = xp.maximum(gammas.reshape(a.shape), tiny)
    return (gammas / gammas.sum(axis=-1, keepdims=True)).astype(a.dtype)


def _not_implemented(name):
    def rule(g):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return rule


_sample_dirichlet_op = defop("_sample_dirichlet", "same", _dirichlet_kernel,
                             _not_implemented("_sample_dirichlet"), node_name="NotImplemented")


@export
def _sample_dirichlet(input, generator=None):
    """Dirichlet(input) samples along the last dim (normalised gamma draws); not
    differentiable (Dirichlet.rsample differentiates through _standard_gamma instead)."""
    _check_floating("dirichlet", input)
    return _sample_dirichlet_op(input, generator=generator)


def _binomial_kernel(xp, count, prob, *, generator):
    """Binomial(count, prob) samples by beta splitting, then counting uniforms."""
    n = xp.floor(xp.maximum(xp.asarray(count, dtype=xp.float64), 0)).reshape(-1)
    p = xp.broadcast_to(xp.asarray(prob, dtype=xp.float64), count.shape).reshape(-1).copy()
    total = xp.zeros_like(n)
    big = xp.nonzero(n > _SMALL_COUNT)[0]
    while big.size:
        nb, pb = n[big], p[big]
        a = xp.floor(nb / 2) + 1  # X, the a-th smallest of nb uniforms, is Beta(a, nb + 1 - a)
        ga = gamma_samples(xp, a, generator)
        x = ga / (ga + gamma_samples(xp, nb + 1 - a, generator))
        below = pb < x  # then only the a - 1 uniforms under X can be below p: rescale to (0, X)
        with np.errstate(invalid="ignore", divide="ignore"):
            n[big] = xp.where(below, a - 1, nb - a)
            p[big] = xp.where(below, pb / x, (pb - x) / (1 - x))
        total[big] += xp.where(below, 0, a)
        big = big[n[big] > _SMALL_COUNT]
    u = _draw(xp, rand, n.size * _SMALL_COUNT, generator).reshape(n.size, _SMALL_COUNT)
    hits = (u < p[:, None]) & (xp.arange(_SMALL_COUNT) < n[:, None])
    total += hits.sum(axis=1)
    return xp.where(xp.isnan(p) | xp.isnan(n), np.nan, total).reshape(count.shape)


_binomial_op = defop("binomial", "same", _binomial_kernel, _not_implemented("binomial"),
                     node_name="NotImplemented")


@export
def binomial(count, prob, generator=None):
    """Binomial(count, prob) samples (floating tensors of one dtype; count is floored)."""
    for name, x in (("count", count), ("prob", prob)):
        if not hasattr(x, "dtype"):
            raise TypeError(f"binomial(): argument '{name}' must be Tensor, not "
                            f"{type(x).__name__}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {dt.scalar_name(prob.dtype)} but expected "
                           f"{dt.scalar_name(count.dtype)}")
    _check_floating("binomial_cpu", count)
    return _binomial_op(count, prob, generator=generator)
