"""The generalized Pareto distribution (peaks over a threshold; exponential at
concentration 0).

Read next: continuous_bernoulli.py.
"""
import math
import numbers

import ember

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GeneralizedPareto(loc, scale, concentration): survival (1 + xi z)^(-1/xi) with
    z = (x - loc) / scale and xi = concentration (e^-z at xi = 0)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalars = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        batch_shape = ember.Size() if scalars else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(GeneralizedPareto, batch_shape, _instance,
                              ("loc", "scale", "concentration"))

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(ember.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def _zero_and_safe(self):
        """Where the concentration is (close to) 0, and the concentration with 1 there (so
        the xi != 0 formulas stay finite in the branch that where() discards)."""
        xi = self.concentration
        at_zero = ember.isclose(xi, ember.zeros_like(xi))
        return at_zero, ember.where(at_zero, ember.ones_like(xi), xi)

    def _z(self, x):
        return (x - self.loc) / self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        at_zero, xi = self._zero_and_safe()
        y = 1 / xi + ember.ones_like(z)
        nonzero = ember.where(y == 0, y, y * ember.log1p(xi * z))
        log_scale = (math.log(self.scale) if isinstance(self.scale, numbers.Real)
                     else self.scale.log())
        return -log_scale - ember.where(at_zero, z, nonzero)

    def log_survival_function(self, value):
        """log P(X > value)."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        at_zero, xi = self._zero_and_safe()
        return ember.where(at_zero, -z, -ember.log1p(xi * z) / xi)

    def log_cdf(self, value):
        """log P(X <= value)."""
        return ember.log1p(-ember.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return ember.exp(self.log_cdf(value))

    def icdf(self, value):
        at_zero, xi = self._zero_and_safe()
        log_u = ember.log1p(-value)
        nonzero = self.loc + self.scale / xi * ember.expm1(-xi * log_u)
        return ember.where(at_zero, self.loc - self.scale * log_u, nonzero)

    @property
    def mean(self):
        """loc + scale / (1 - xi) for xi < 1, else nan."""
        valid = self.concentration < 1
        xi = ember.where(valid, self.concentration, 0.5)
        return ember.where(valid, self.loc + self.scale / (1 - xi), math.nan)

    @property
    def variance(self):
        """scale^2 / ((1 - xi)^2 (1 - 2 xi)) for xi < 1/2, else nan."""
        valid = self.concentration < 0.5
        xi = ember.where(valid, self.concentration, 0.25)
        return ember.where(valid, self.scale ** 2 / ((1 - xi) ** 2 * (1 - 2 * xi)), math.nan)

    def entropy(self):
        return ember.broadcast_to(ember.log(self.scale) + self.concentration + 1,
                                  self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = ember.where(self.concentration < 0, lower - self.scale / self.concentration,
                            math.inf)
        return constraints.interval(lower, upper)
