"""The von Mises distribution: the circular analogue of the normal, on angles.

The normaliser is 2 pi I0(concentration); log I0 is computed as log(i0e(k)) + k (exact, and
differentiable through ember.special.i0e), where torch uses Abramowitz & Stegun's polynomial
approximations (relative error ~1e-7). Sampling is Best & Fisher's rejection method (1979),
in float64.

Read next: lkj_cholesky.py.
"""
import math

import ember

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_bessel_i(x, order):
    """log I_order(x) for x > 0, order 0 or 1."""
    scaled = ember.special.i0e(x) if order == 0 else ember.special.i1e(x)
    return scaled.log() + x


def _rejection_sample(loc, concentration, proposal_r, shape):
    """Best & Fisher's algorithm, vectorised: every element draws until accepted."""
    x = ember.zeros(shape, dtype=loc.dtype, device=loc.device)
    done = ember.zeros(shape, dtype=ember.bool, device=loc.device)
    while not bool(done.all()):
        u1, u2, u3 = ember.rand((3,) + tuple(shape), dtype=loc.dtype, device=loc.device).unbind()
        z = ember.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        fresh = accept & ~done
        x = ember.where(fresh, (u3 - 0.5).sign() * f.acos(), x)
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """VonMises(loc, concentration): density exp(k cos(x - loc)) / (2 pi I0(k)); samples in
    [-pi, pi). No rsample (as torch)."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, ember.Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        return k * ember.cos(value - self.loc) - math.log(2 * math.pi) - _log_bessel_i(k, 0)

    @lazy_property
    def _loc(self):
        return self.loc.to(ember.double)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(ember.double)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        r = (1 + rho ** 2) / (2 * rho)
        # rho -> 0 as kappa -> 0: the Taylor expansion there
        return ember.where(kappa < 1e-5, 1 / kappa + kappa, r)

    def sample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return _rejection_sample(self._loc, self._concentration, self._proposal_r,
                                     shape).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        return type(self)(self.loc.expand(batch_shape), self.concentration.expand(batch_shape),
                          validate_args=self.__dict__.get("_validate_args"))

    @property
    def mean(self):
        """The circular mean, loc."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance, 1 - I1(k) / I0(k)."""
        k = self.concentration
        return 1 - (_log_bessel_i(k, 1) - _log_bessel_i(k, 0)).exp()
