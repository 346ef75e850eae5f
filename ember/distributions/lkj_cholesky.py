"""The LKJ distribution over Cholesky factors of correlation matrices (Lewandowski, Kurowicka
& Joe, 2009), sampled by the onion method: row i is a random direction scaled by the square
root of a Beta draw, completed to unit norm by the diagonal. Differs from torch 2.13 in one
Beta parameter of the sampler (see __init__): torch's draws do not have the LKJ marginals
for dim >= 3.

Read next: wishart.py.
"""
import math

import ember

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJCholesky(dim, concentration=1.): the density of the correlation matrix L L^T is
    proportional to det(L L^T)^(concentration - 1)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. Found "
                             f"dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        # row i (i >= 1) of the factor has i off-diagonal entries, of squared norm y_i ~
        # Beta(i/2, concentration + (dim - 1 - i)/2) (the onion method; row 0 takes row 1's
        # parameters, its draw is unused). torch 2.13 uses Beta(i - 1/2, ...), which gives rows
        # 2 and up the wrong marginals (tests/test_distributions_sampling.py checks them).
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = ember.arange(self.dim - 1, dtype=self.concentration.dtype,
                              device=self.concentration.device)
        offset = ember.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(0.5 * offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, ember.Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = ember.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=ember.Size()):
        with ember.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            normal = ember.randn(self._extended_shape(sample_shape), dtype=y.dtype,
                                 device=y.device).tril(-1)
            direction = normal / normal.norm(dim=-1, keepdim=True)
            direction[..., 0, :] = 0.0  # the first row has no off-diagonal part
            w = ember.sqrt(y) * direction
            tiny = ember.finfo(w.dtype).tiny
            diagonal = ember.clamp(1 - ember.sum(w ** 2, dim=-1), min=tiny).sqrt()
            return w + ember.diag_embed(diagonal)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = ember.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = ember.sum(order * diagonal.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = ember.lgamma(alpha) * dm1
        numerator = ember.mvlgamma(alpha - 0.5, dm1)
        normalizer = 0.5 * dm1 * math.log(math.pi) + numerator - denominator
        return unnormalized - normalizer
