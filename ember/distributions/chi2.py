"""The chi-squared distribution: Gamma(df / 2, 1 / 2).

Read next: beta.py.
"""
import ember

from . import constraints
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["Chi2"]


class Chi2(Gamma):
    """Chi2(df): the sum of df squared standard normals."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, ember.tensor(0.5, dtype=df.dtype, device=df.device),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        """The degrees of freedom."""
        return self.concentration * 2
