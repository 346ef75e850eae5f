"""The half-Cauchy distribution: |X| for X ~ Cauchy(0, scale) (the folding is half_normal.py's
`_Folded`).

Read next: gumbel.py.
"""
import math

import ember

from .cauchy import Cauchy
from .half_normal import _Folded

__all__ = ["HalfCauchy"]


class HalfCauchy(_Folded):
    """HalfCauchy(scale): density 2 Cauchy(x; 0, scale) on x >= 0."""

    _base = Cauchy

    @property
    def mean(self):
        return ember.full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                          device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        # unlike HalfNormal (as in torch), a number or a list is taken as a tensor first
        value = ember.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        return super().log_prob(value)
