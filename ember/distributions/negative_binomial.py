"""The negative binomial distribution: successes before `total_count` failures, success
probability `probs`.

Read next: exponential.py.
"""
import ember
import ember.nn.functional as F

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import BinaryParameter, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryParameter, Distribution):
    """NegativeBinomial(total_count, probs=None, logits=None); total_count may be real."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        total_count, param = self._set_parameter(probs, logits, total_count)
        self.total_count = total_count.type_as(param)
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(NegativeBinomial, batch_shape, _instance,
                             ("total_count", "probs", "logits"))
        return self._keep_parameter(new)

    @property
    def mean(self):
        return self.total_count * ember.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / ember.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        # the negative binomial is a Poisson whose rate is Gamma(total_count, e^-logits)
        return Gamma(concentration=self.total_count, rate=ember.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            return ember.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalized = n * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = -ember.lgamma(n + value) + ember.lgamma(1.0 + value) + ember.lgamma(n)
        # n = k = 0: the probability of 0 is 1
        log_normalization = log_normalization.masked_fill(n + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
