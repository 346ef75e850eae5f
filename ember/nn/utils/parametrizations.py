"""weight_norm, spectral_norm and orthogonal as parametrizations (the forms torch recommends).

    weight_norm(linear)    stores (g, v) as parametrizations.weight.original0 / original1;
                           linear.weight = v * g / ||v||, recomputed on every access
    spectral_norm(linear)  stores the weight as parametrizations.weight.original and the power
                           iteration vectors as buffers parametrizations.weight.0._u / ._v;
                           linear.weight = W / sigma(W)
    orthogonal(linear)     linear.weight = base @ Q(X): Q an orthogonal matrix made from the
                           stored X by the matrix exponential or the Cayley map of a
                           skew-symmetric matrix, or a product of Householder reflections

All state_dicts have torch's keys, and weight_norm also loads state_dicts saved with the
classic hook form (weight_g / weight_v).

Read next: `fusion.py`.
"""
import math

from ... import _backend, _creation
from ..._dtype import finfo
from ..._random import randn
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...linalg import qr, solve
from ..modules.module import Module
from . import parametrize
from .spectral_norm import _default_dim, _normalize
from .weight_norm import _norm_except_dim, _weight_norm

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    """(g, v) -> v * g / ||v||; right_inverse splits a weight into its norm and itself."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrise `module.<name>` by magnitude and direction (see the module docstring)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def load_classic_keys(state_dict, prefix, local_metadata, strict, missing_keys,
                          unexpected_keys, error_msgs):
        """Rename a classic weight_norm checkpoint's <name>_g / <name>_v."""
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(load_classic_keys)
    return module


class _SpectralNorm(Module):
    """W -> W / sigma(W), sigma estimated by power iteration on the buffers _u and _v (which
    start from 15 iterations, then advance n_power_iterations per access in training)."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", _normalize(u, self.eps))
            self.register_buffer("_v", _normalize(v, self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        # u first, then v (the classic hook form goes the other way round)
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(_normalize(weight_mat.mv(self._v), self.eps))
                self._v.copy_(_normalize(weight_mat.H.mv(self._u), self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return _normalize(weight, self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # copies: the next in-place update must not touch what backward saved
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.vdot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide `module.<name>` by its spectral norm on every access (see the module
    docstring); dim defaults to 1 for transposed convolutions, else 0."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_dim(module)
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ----------------------------------------------------------------------------------------------
# orthogonal


def _eye_like(A, n):
    return _creation.eye(n, dtype=A.dtype, device=A.device).expand(*A.shape[:-2], n, n)


def _matrix_exp(A):
    """exp(A) by scaling and squaring: exp(A) = exp(A / 2^s)^(2^s), the inner exponential by
    its Taylor series to degree 18 (its error is below double rounding once ||A / 2^s|| <= 1/2).
    Built from matmuls, so it is differentiable."""
    norm = float(A.detach().abs().sum(-2).max()) if A.numel() else 0.0  # the 1-norm
    s = max(0, math.ceil(math.log2(norm)) + 1) if norm > 0 else 0
    B = A / 2.0 ** s
    eye = _eye_like(A, A.shape[-1])
    result = eye
    for k in range(18, 0, -1):  # Horner: I + B (I + B/2 (I + B/3 (...)))
        result = eye + (B @ result) / k
    for _ in range(s):
        result = result @ result
    return result


def _householder_product(A, tau):
    """torch.linalg.householder_product: the first k columns of H_1 ... H_k, where
    H_i = I - tau_i v_i v_i^H and v_i is column i of A below the diagonal, with a 1 on it."""
    n, k = A.shape[-2], A.shape[-1]
    rows = _creation.arange(n, device=A.device)
    Q = _eye_like(A, n)
    for i in range(k):
        v = A[..., :, i] * (rows > i) + (rows == i)
        Qv = Q @ v.unsqueeze(-1)
        Q = Q - tau[..., i, None, None] * Qv @ v.unsqueeze(-2)  # real: v^H = v^T
    return Q[..., :, :k]


def _geqrf(A):
    """torch.geqrf (LAPACK's Householder QR): R on and above the diagonal, the reflectors
    below it, and their scales tau. LAPACK's own routine, through the array module's "raw"
    QR, so that signs and zero reflectors are exactly torch's."""
    xp = _backend.namespace(A.device)
    h, tau = xp.linalg.qr(A.detach()._data, mode="raw")
    return Tensor._make(xp.swapaxes(h, -1, -2).copy(), device=A.device), \
        Tensor._make(tau, device=A.device)


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    eye = _creation.eye(k, dtype=Q.dtype, device=Q.device)
    return bool((Q.mH @ Q).sub(eye).abs().max() <= 10.0 * n * finfo(Q.dtype).eps)


def _make_orthogonal(A):
    """The Q of A's QR decomposition, its columns' signs taken from R's diagonal."""
    q, r = qr(A)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


_MAPS = ("matrix_exp", "cayley", "householder")


class _Orthogonal(Module):
    """X -> base @ Q(X) (transposed for wide matrices). With use_trivialization, assigning a
    weight stores it as `base` and resets X to the point where Q(X) = I."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map == "householder":
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            # the stored diagonal holds the signs (+-1) of Q's columns
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            Q = self._skew_map(X, n, k)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def _skew_map(self, X, n, k):
        """exp(A) or the Cayley transform of the skew-symmetric A = L - L^H (L: X's lower
        triangle, padded to n x n), first k columns."""
        X = X.tril()
        if n != k:
            X = _cat_zeros(X, n - k)
        A = X - X.mH
        if self.orthogonal_map == "matrix_exp":
            Q = _matrix_exp(A)
        else:
            eye = _eye_like(A, n)
            Q = solve(eye - 0.5 * A, eye + 0.5 * A)
        return Q[..., :k] if n != k else Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map != "householder":
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            A, tau = _geqrf(Q)
            # the diagonal keeps only signs; a reflector LAPACK skipped (tau = 0) flips it
            signs = A.diagonal(dim1=-2, dim2=-1).sign()
            signs = signs * (1 - 2 * (tau == 0.0).to(signs.dtype))
            on_diagonal = _creation.eye(n, k, dtype=A.dtype, device=A.device)
            A = A * (1 - on_diagonal) + on_diagonal * signs.unsqueeze(-2)
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            noise = randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(_cat(Q, noise))
        self.base = Q
        neg_eye = _creation.zeros_like(Q_init)
        neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_eye


def _cat(a, b):
    from ...ops.shape import cat

    return cat([a, b], dim=-1)


def _cat_zeros(X, columns):
    return _cat(X, X.new_zeros(X.shape[-2], columns).expand(*X.shape[:-2], -1, -1))


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Keep `module.<name>` (a matrix, or a batch of them) orthogonal (semi-orthogonal when not
    square): Q^H Q = I for tall, Q Q^H = I for wide matrices. orthogonal_map: "matrix_exp"
    (the default for square or complex), "cayley", or "householder" (the default otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    parametrize.register_parametrization(
        module, name, _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization),
        unsafe=True)
    return module
