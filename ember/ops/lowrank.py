"""Randomized low-rank SVD and PCA (Halko, Martinsson & Tropp, 2011): svd_lowrank and
pca_lowrank.

A random Gaussian test matrix R (n x q) sketches A's range, Q = qr(A R).Q, refined by `niter`
power iterations (qr(A^T Q), then qr(A Q)); the SVD of the small matrix Q^T A then gives A's
leading singular triplets. Everything is ember ops, so the results are differentiable; the
sketch is drawn from ember's generator, so for a given seed they differ from torch's by the
random part only (exactly low-rank inputs give the same factors up to signs).

Read next: `shape.py`.
"""
from .. import _random
from ._op import export
from .linalg import qr, svd


def _approximate_basis(A, q, niter, M):
    """An orthonormal (m x q) basis approximating the range of A - M."""
    def product(X):
        return A @ X if M is None else A @ X - M @ X

    def adjoint_product(X):
        return A.mT @ X if M is None else A.mT @ X - M.mT @ X

    R = _random.randn(A.shape[-1], q, dtype=A.dtype, device=A.device)
    Q = qr(product(R)).Q
    for _ in range(niter):
        Q = qr(adjoint_product(Q)).Q
        Q = qr(product(Q)).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = m < n
    if wide:
        A = A.mT
        M = None if M is None else M.mT
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mT @ A if M is None else Q.mT @ A - Q.mT @ M
    U, S, Vh = svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mT
    return (V, S, U) if wide else (U, S, V)


@export
def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^T of rank q (q = 6 by default), by randomized
    range finding with niter power iterations; V, not V^T, as torch returns it."""
    return _svd_lowrank(A, 6 if q is None else q, niter, M)


@export
def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V): the rank-q principal components of A's rows (columns centred first unless
    center=False); q defaults to min(6, m, n)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(-2, keepdim=True), q, niter, None)
