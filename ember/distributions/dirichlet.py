"""The Dirichlet distribution over the probability simplex.

Read next: beta.py.
"""
import ember
import ember.nn.functional as F

from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration): concentration's last dim are the K parameters (event_shape
    (K,)). rsample normalises reparameterised gamma draws, so its gradient is the gamma
    sampler's implicit one (an unbiased pathwise gradient, as torch's)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Dirichlet, batch_shape, _instance, ("concentration",),
                              self.event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        gammas = ember._standard_gamma(self.concentration.expand(shape))
        return gammas / gammas.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return (ember.xlogy(a - 1.0, value).sum(-1) + ember.lgamma(a.sum(-1))
                - ember.lgamma(a).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        """(a - 1) / sum(a - 1), with a - 1 clamped at 0; where every a < 1 the density grows
        toward the corners, and the mode is the corner of the largest a."""
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, True)
        corner = F.one_hot(mode.argmax(dim=-1), shifted.shape[-1]).to(mode)
        all_below_one = (self.concentration < 1).all(dim=-1, keepdim=True)
        return ember.where(all_below_one, corner, mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, True)
        return (self.concentration * (total - self.concentration)
                / (total.pow(2) * (total + 1)))

    def entropy(self):
        a = self.concentration
        k = a.size(-1)
        total = a.sum(-1)
        return (ember.lgamma(a).sum(-1) - ember.lgamma(total) - (k - total) * ember.digamma(total)
                - ((a - 1.0) * ember.digamma(a)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - ember.lgamma(x.sum(-1))
