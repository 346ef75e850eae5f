"""The multivariate normal distribution, given by a covariance matrix, a precision matrix or
the lower Cholesky factor of the covariance (`scale_tril`).

Everything is computed from one lower triangular factor L (covariance = L L^T): the
Mahalanobis distance by a triangular solve, the log-determinant from L's diagonal, samples as
loc + L eps.

Read next: lowrank_multivariate_normal.py.
"""
import math

import ember

from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(matrices, vectors):
    """Batched matrix-vector products, broadcasting the batch dims."""
    return ember.matmul(matrices, vectors.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(L, x):
    """|L^-1 x|^2 over x's batch shape, which ends with (or broadcasts with) L's. When x only
    adds leading (sample) dims, they become the columns of one solve per matrix."""
    n = x.size(-1)
    batch, l_batch = x.shape[:-1], L.shape[:-2]
    outer = len(batch) - len(l_batch)
    if outer > 0 and batch[outer:] == l_batch:
        columns = x.reshape((-1,) + l_batch + (n,)).movedim(0, -1)
        squares = ember.linalg.solve_triangular(L, columns, upper=False).pow(2).sum(-2)
        return squares.movedim(-1, 0).reshape(batch)
    shape = ember.broadcast_shapes(batch, l_batch)
    solved = ember.linalg.solve_triangular(L.expand(shape + (n, n)),
                                           x.expand(shape + (n,)).unsqueeze(-1), upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1 without inverting P: with J the order-reversing
    permutation, chol(J P J) = Lf gives P^-1 = L L^T for L = (J Lf J)^-T, lower triangular."""
    lf = ember.linalg.cholesky(ember.flip(P, (-2, -1)))
    l_inv = ember.transpose(ember.flip(lf, (-2, -1)), -2, -1)
    eye = ember.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return ember.linalg.solve_triangular(l_inv, eye, upper=False)


def _cholesky_inverse(L):
    """(L L^T)^-1 for a lower-triangular L (torch.cholesky_inverse). Written as the inverse of
    L L^T so that its gradient is torch's: that of the full matrix L, upper entries included."""
    return ember.linalg.inv(L @ L.mT)


def _cholesky_solve(b, L):
    """(L L^T)^-1 b for a lower-triangular L (torch.cholesky_solve, gradients as above)."""
    return ember.linalg.solve(L @ L.mT, b)


class MultivariateNormal(Distribution):
    """MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None,
    scale_tril=None): exactly one of the three matrix forms; batch dims broadcast."""

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = {"scale_tril": scale_tril, "covariance_matrix": covariance_matrix,
                 "precision_matrix": precision_matrix}
        given = {k: v for k, v in given.items() if v is not None}
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        (name, matrix), = given.items()
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        batch_shape = ember.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = ember.Size(batch_shape)
        matrix_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(matrix_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return ember.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return _cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (self._unbroadcasted_scale_tril.pow(2).sum(-1)
                .expand(self._batch_shape + self._event_shape))

    def rsample(self, sample_shape=ember.Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
