"""LAPACK-style factorizations and what solves with them: LU, LDL^T, Householder QR, the `_ex`
variants that report failure as `info`, and the matrix exponential.

Sections, in reading order:

  1. LU            linalg.lu_factor(_ex), linalg.lu, lu_unpack, linalg.lu_solve and torch's
                   legacy torch.lu / torch.lu_solve. The kernel is partial pivoting, one column
                   per step for the whole batch at once (LAPACK getrf's answer: the packed `LU`
                   and 1-based int32 `pivots`, row i swapped with row pivots[i] in turn).
  2. _ex variants  cholesky_ex, inv_ex, solve_ex: the factorization's `info` instead of an error.
  3. Cholesky      cholesky_solve, cholesky_inverse; triangular_solve (the legacy one).
  4. LDL^T         ldl_factor(_ex), ldl_solve: Bunch-Kaufman pivoting (LAPACK sytrf's packed
                   form and pivots: a negative pair marks a 2x2 block).
  5. Householder   geqrf (NumPy's raw QR is LAPACK's geqrf), householder_product (= orgqr),
                   ormqr: the reflectors multiplied out with ember ops, so they differentiate.
  6. matrix_exp    scaling and squaring with a degree-13 Pade approximant; its gradient is the
                   exponential of a block matrix (Mathias' theorem), so it differentiates twice.

Rules are the textbook derivatives written with ember ops. For A = P L U (square):
L^-1 P^T dA U^-1 = L^-1 dL + dU U^-1, a strictly lower plus an upper triangle, which gives
    gA = P L^-T (tril_-1(L^T gL) + triu(gU U^T)) U^-T,
and a rectangular A reduces to that square case (section 1).

Read next: ../linalg.py (the public namespace).
"""
import builtins
import math

import numpy as np  # dtypes only: kernels use `xp`

from .. import _creation, return_types
from .. import _dtype as dt
from ._op import defop, export
from .linalg import (
    LinAlgError,
    _check_matrix,
    _cholesky_rule,
    _dims,
    _expect_tensors,
    _solve_operands,
    _solve_result,
    _solve_rule,
    solve_triangular,
)
from .shape import cat

__all__ = ["lu_factor_ex", "lu_factor", "lu", "lu_unpack", "lu_solve", "cholesky_ex", "inv_ex",
           "solve_ex", "cholesky_solve", "cholesky_inverse", "triangular_solve",
           "ldl_factor_ex", "ldl_factor", "ldl_solve", "geqrf", "householder_product", "orgqr",
           "ormqr", "matrix_exp", "eig", "eigvals"]


def _return_type(name, fields):
    cls = return_types._structseq(name, fields)
    setattr(return_types, name, cls)
    return cls


linalg_lu_factor_result = _return_type("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex_result = _return_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_lu_result = _return_type("linalg_lu", ["P", "L", "U"])
lu_unpack_result = _return_type("lu_unpack", ["P", "L", "U"])
lu_with_info_result = _return_type("_lu_with_info", ["LU", "pivots", "info"])
linalg_cholesky_ex_result = _return_type("linalg_cholesky_ex", ["L", "info"])
linalg_inv_ex_result = _return_type("linalg_inv_ex", ["inverse", "info"])
linalg_solve_ex_result = _return_type("linalg_solve_ex", ["result", "info"])
triangular_solve_result = _return_type("triangular_solve", ["solution", "cloned_coefficient"])
linalg_ldl_factor_result = _return_type("linalg_ldl_factor", ["LD", "pivots"])
linalg_ldl_factor_ex_result = _return_type("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
geqrf_result = _return_type("geqrf", ["a", "tau"])

_INT32 = dt.int32.np


def _check_lapack_dtype(kernel_name, A):
    """torch's LAPACK kernels exist for float and double only (and complex)."""
    if A.dtype not in (dt.float32, dt.float64):
        raise NotImplementedError(f'"{kernel_name}" not implemented for '
                                  f"'{dt.scalar_name(A.dtype)}'")


def _batch_element(info):
    """'(Batch element k): ' naming the first failing matrix, '' for a single one."""
    if info.ndim == 0:
        return ""
    k = int((info.reshape(-1) != 0).nonzero()[0, 0])
    return f"(Batch element {k}): "


# ==============================================================================================
# 1. LU


def _lu_steps(xp, a):
    """(LU packed, 1-based pivots, info) of every matrix in `a` (..., m, n).

    Step j picks the largest |entry| of column j at or below the diagonal (the first one on a
    tie, as LAPACK), swaps its row up, scales the column below by the pivot and subtracts the
    rank-1 update from the trailing block. A zero pivot leaves its column alone (nothing to
    eliminate) and is reported in `info` (1-based, 0 when every pivot is non-zero)."""
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    batch = a.shape[:-2]
    lu = a.reshape((math.prod(batch), m, n)).copy()
    rows = xp.arange(lu.shape[0])
    pivots = xp.empty((lu.shape[0], k), dtype=_INT32)
    info = xp.zeros(lu.shape[0], dtype=_INT32)
    for j in range(k):
        p = j + xp.argmax(xp.abs(lu[:, j:, j]), axis=1)
        pivots[:, j] = p + 1
        row = lu[rows, p, :]
        lu[rows, p, :] = lu[:, j, :]
        lu[:, j, :] = row
        pivot = lu[:, j, j]
        zero = pivot == 0
        info = xp.where((info == 0) & zero, j + 1, info).astype(_INT32)
        lu[:, j + 1:, j] /= xp.where(zero, 1, pivot)[:, None]
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    return lu.reshape(a.shape), pivots.reshape(batch + (k,)), info.reshape(batch)


def _permutation(xp, pivots, m):
    """perm with row i of P^T A = row perm[i] of A, from LAPACK's sequential swaps."""
    batch = pivots.shape[:-1]
    flat = pivots.reshape((math.prod(batch), pivots.shape[-1])).astype(np.int64) - 1
    perm = xp.broadcast_to(xp.arange(m), (flat.shape[0], m)).copy()
    rows = xp.arange(flat.shape[0])
    for i in range(flat.shape[1]):
        p = flat[:, i]
        swapped = perm[rows, p]
        perm[rows, p] = perm[:, i]
        perm[:, i] = swapped
    return perm.reshape(batch + (m,))


def _permutation_matrix_kernel(xp, pivots, *, m, dtype):
    """P (m x m) with A = P L U: P[perm[i], i] = 1."""
    perm = _permutation(xp, pivots, m)
    eye = xp.eye(m, dtype=dtype.np)
    return xp.swapaxes(eye[perm], -1, -2)


_permutation_matrix = defop("lu_pivots_to_permutation", "none", _permutation_matrix_kernel,
                            differentiable=False)


def _split_lu(LU):
    """(L unit lower m x k, U upper k x n) from the packed factors (ember ops: differentiable)."""
    m, n = LU.shape[-2:]
    k = builtins.min(m, n)
    eye = _creation.eye(m, k, dtype=LU.dtype, device=LU.device)
    return LU[..., :, :k].tril(-1) + eye, LU[..., :k, :].triu()


def _lu_square_grad(L, U, gL, gU):
    """P^T gA for square A = P L U (see the module docstring)."""
    phi = (L.mT @ gL).tril(-1) + (gU @ U.mT).triu()
    phi = solve_triangular(U.mT, phi, upper=False, left=False)
    return solve_triangular(L.mT, phi, upper=True, unitriangular=True)


def _lu_grad(L, U, gL, gU):
    """P^T gA for A = P L U of any shape. A wide A = P L [U1 U2] is the square LU of its first m
    columns plus U2 = L^-1 P^T A2, which adds -L^-T gU2 U2^T to gL; a tall A = P [L1; L2] U is
    the square LU of its first n rows plus L2 = (P^T A)_2 U^-1, which adds -L2^T gL2 U^-T to
    gU."""
    m, n = L.shape[-2], U.shape[-1]
    if m == n:
        return _lu_square_grad(L, U, gL, gU)
    if m < n:
        U1, U2, gU1, gU2 = U[..., :m], U[..., m:], gU[..., :m], gU[..., m:]
        gA2 = solve_triangular(L.mT, gU2, upper=True, unitriangular=True)
        gA1 = _lu_square_grad(L, U1, gL - gA2 @ U2.mT, gU1)
        return cat([gA1, gA2], -1)
    L1, L2, gL1, gL2 = L[..., :n, :], L[..., n:, :], gL[..., :n, :], gL[..., n:, :]
    gA2 = solve_triangular(U.mT, gL2, upper=False, left=False)
    gA1 = _lu_square_grad(L1, U, gL1, gU - L2.mT @ gA2)
    return cat([gA1, gA2], -2)


def _lu_factor_rule(g, out):
    LU, pivots = out[0], out[1]
    gLU = g[0]
    L, U = _split_lu(LU)
    k = L.shape[-1]
    P = _permutation_matrix(pivots, m=LU.shape[-2], dtype=LU.dtype)
    return (P @ _lu_grad(L, U, gLU[..., :, :k].tril(-1), gLU[..., :k, :].triu()),)


def _lu_kernel(xp, a):
    """(L, U, pivots): the factors unpacked (linalg.lu's P is built from pivots outside)."""
    lu, pivots, _ = _lu_steps(xp, a)
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    L = xp.tril(lu[..., :, :k], -1) + xp.eye(m, k, dtype=a.dtype)
    return L, xp.triu(lu[..., :k, :]), pivots


def _lu_rule(g, out):
    gL, gU = g[0], g[1]
    L, U, pivots = out
    P = _permutation_matrix(pivots, m=L.shape[-2], dtype=L.dtype)
    return (P @ _lu_grad(L, U, gL.tril(-1), gU.triu()),)


_lu_factor = defop("linalg_lu_factor_ex", "none", lambda xp, a: _lu_steps(xp, a),
                   _lu_factor_rule, node_name="LinalgLuFactorExBackward0")
_lu = defop("linalg_lu", "none", _lu_kernel, _lu_rule, node_name="LinalgLuBackward0")


def _check_lu_input(name, A, pivot):
    _expect_tensors(name.replace(".", "_"), A=A)
    if A.ndim < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(A.shape)} instead")
    _check_lapack_dtype("lu_cpu", A)
    if not pivot and A.device.type == "cpu":
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")


def _raise_lu_singular(name, info):
    bad = int(info.reshape(-1)[(info.reshape(-1) != 0).nonzero()[0, 0]])
    raise RuntimeError(f"{name}: {_batch_element(info)}U[{bad},{bad}] is zero and using it on "
                       "lu_solve would result in a division by zero. If you still want to "
                       "perform the factorization, consider calling linalg.lu(A, pivot) or "
                       "linalg.lu_factor_ex(A, pivot)")


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """(LU, pivots, info): A = P L U packed into one matrix (L's unit diagonal left out),
    1-based int32 row swaps, and info = k where U[k, k] (1-based) is the first zero pivot."""
    _check_lu_input("torch.linalg.lu_factor_ex", A, pivot)
    LU, pivots, info = _lu_factor(A)
    if check_errors and bool((info != 0).any()):
        _raise_lu_singular("torch.linalg.lu_factor_ex", info)
    return linalg_lu_factor_ex_result(LU, pivots, info)


def lu_factor(A, *, pivot=True):
    """(LU, pivots) of lu_factor_ex; raises when a matrix is singular (a zero pivot)."""
    _check_lu_input("torch.linalg.lu_factor", A, pivot)
    LU, pivots, info = _lu_factor(A)
    if bool((info != 0).any()):
        _raise_lu_singular("torch.linalg.lu_factor", info)
    return linalg_lu_factor_result(LU, pivots)


def lu(A, *, pivot=True):
    """(P, L, U) with A = P L U: P a permutation, L unit lower (m x k), U upper (k x n)."""
    _check_lu_input("torch.linalg.lu", A, pivot)
    L, U, pivots = _lu(A)
    return linalg_lu_result(_permutation_matrix(pivots, m=A.shape[-2], dtype=A.dtype), L, U)


@export
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from lu_factor's packed result; a part not asked for comes back empty."""
    _expect_tensors("lu_unpack", LU_data=LU_data, LU_pivots=LU_pivots)
    if LU_pivots.dtype is not dt.int32:
        raise RuntimeError("lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    empty = _creation.empty(0, dtype=LU_data.dtype, device=LU_data.device)
    L, U = _split_lu(LU_data) if unpack_data else (empty, empty)
    P = _permutation_matrix(LU_pivots, m=LU_data.shape[-2], dtype=LU_data.dtype) \
        if unpack_pivots else empty
    return lu_unpack_result(P, L, U)


def _apply_pivots(B, pivots, inverse=False):
    """P^T B (the rows of B in pivoting order), or P B when `inverse`."""
    perm = _permutation_matrix(pivots, m=B.shape[-2], dtype=B.dtype)
    return (perm if inverse else perm.mT) @ B


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with A X = B (left) or X A = B, A given by lu_factor; `adjoint` solves with A^T."""
    _expect_tensors("linalg_lu_solve", LU=LU, pivots=pivots, B=B)
    _check_lapack_dtype("linalg_lu_solve", LU)
    if LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError("linalg.lu_solve: A must be batches of square matrices, but they "
                           f"are {LU.shape[-2]} by {LU.shape[-1]} matrices")
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({_dims(LU.shape[-2:])} and "
                           f"{_dims(B.shape[-2:])})")
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return lu_solve(LU, pivots, B.mT, adjoint=not adjoint).mT
    L, U = _split_lu(LU)
    if adjoint:  # A^T = U^T L^T P^T
        Y = solve_triangular(U.mT, B, upper=False)
        Y = solve_triangular(L.mT, Y, upper=True, unitriangular=True)
        return _apply_pivots(Y, pivots, inverse=True)
    Y = solve_triangular(L, _apply_pivots(B, pivots), upper=False, unitriangular=True)
    return solve_triangular(U, Y, upper=True)


@export(name="lu", method=True)
def _legacy_lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu: (LU, pivots) or, with get_infos, (LU, pivots, info); a singular matrix does
    not raise (its info says so). Deprecated in torch for linalg.lu_factor(_ex)."""
    if out is not None:
        raise NotImplementedError("lu(out=...) is not supported by ember")
    _warn_deprecated("torch.lu is deprecated in favor of torch.linalg.lu_factor / "
                     "torch.linalg.lu_factor_ex and will be removed in a future PyTorch "
                     "release.")
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    if get_infos:
        return lu_with_info_result(LU, pivots, info)
    return LU, pivots


@export(name="lu_solve", method=True)
def _legacy_lu_solve(input, LU_data, LU_pivots):
    """torch.lu_solve(b, LU, pivots) = linalg.lu_solve(LU, pivots, b) (deprecated in torch)."""
    _warn_deprecated("torch.lu_solve is deprecated in favor of torch.linalg.lu_solve and will "
                     "be removed in a future PyTorch release.\nNote that torch.linalg.lu_solve "
                     "has its arguments reversed.")
    return lu_solve(LU_data, LU_pivots, input)


# ==============================================================================================
# 2. the _ex variants: failure as `info` (0: success) instead of an error
#
# Each kernel first tries NumPy's LAPACK call, which succeeds exactly when every matrix
# factors; only then is `info` all zeros. Otherwise it redoes the work with the step-by-step
# kernels here, which finish every matrix and report where each one failed, as LAPACK does.


def _substitute(xp, lu, pivots, b):
    """A^-1 b from packed LU factors, one row per step for the whole batch; a zero pivot gives
    inf/nan (LAPACK's getrs does not check either)."""
    n = lu.shape[-1]
    perm = _permutation(xp, pivots, n)
    y = xp.take_along_axis(b, perm[..., None], axis=-2)
    with np.errstate(all="ignore"):
        for i in range(1, n):  # L y = P^T b, L unit lower
            y[..., i:i + 1, :] -= lu[..., i:i + 1, :i] @ y[..., :i, :]
        for i in range(n - 1, -1, -1):  # U x = y
            if i + 1 < n:
                y[..., i:i + 1, :] -= lu[..., i:i + 1, i + 1:] @ y[..., i + 1:, :]
            y[..., i:i + 1, :] /= lu[..., i:i + 1, i:i + 1]
    return y


def _no_info(xp, a):
    return xp.zeros(a.shape[:-2], dtype=_INT32)


def _inv_ex_kernel(xp, a):
    try:
        return xp.linalg.inv(a), _no_info(xp, a)
    except np.linalg.LinAlgError:  # (CuPy raises NumPy's)
        lu, pivots, info = _lu_steps(xp, a)
        eye = xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape)
        return _substitute(xp, lu, pivots, eye), info


def _solve_ex_kernel(xp, a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    try:
        return xp.linalg.solve(a, b), _no_info(xp, a)
    except np.linalg.LinAlgError:
        lu, pivots, info = _lu_steps(xp, a)
        return _substitute(xp, lu, pivots, b.copy()), info


def _cholesky_steps(xp, a):
    """(L, info) as LAPACK's potf2: column j from the columns before it. A matrix that stops
    being positive-definite at column j keeps there the failing value on the diagonal, and its
    later columns keep the input's values."""
    n = a.shape[-1]
    L = xp.tril(a)
    info = xp.zeros(a.shape[:-2], dtype=_INT32)
    for j in range(n):
        row = L[..., j, :j]
        d = L[..., j, j] - (row * row).sum(-1)
        going = info == 0
        info = xp.where(going & ~(d > 0), j + 1, info).astype(_INT32)
        ok = info == 0
        L[..., j, j] = xp.where(ok, xp.sqrt(xp.where(ok, d, 1)), xp.where(going, d, L[..., j, j]))
        below = L[..., j + 1:, j] - (L[..., j + 1:, :j] @ row[..., :, None])[..., 0]
        with np.errstate(all="ignore"):  # a failed matrix divides by its zero pivot: unused
            below = below / L[..., j, j][..., None]
        L[..., j + 1:, j] = xp.where(ok[..., None], below, L[..., j + 1:, j])
    return L, info


def _cholesky_ex_kernel(xp, a, *, upper):
    try:
        L, info = xp.linalg.cholesky(a), _no_info(xp, a)
    except np.linalg.LinAlgError:
        L, info = _cholesky_steps(xp, a)
    return (xp.swapaxes(L, -1, -2).copy() if upper else L), info


_inv_ex = defop("linalg_inv_ex", "none", _inv_ex_kernel,
                lambda g, out: (-(out[0].mT @ g[0] @ out[0].mT),),
                node_name="LinalgInvExBackward0")
_solve_ex = defop("linalg_solve_ex", "none", _solve_ex_kernel,
                  lambda g, a, out, needs_input_grad: _solve_rule(g[0], a, out[0],
                                                                  needs_input_grad),
                  node_name="LinalgSolveExBackward0")
_cholesky_ex = defop("linalg_cholesky_ex", "none", _cholesky_ex_kernel,
                     lambda g, out, upper: _cholesky_rule(g[0], out[0], upper),
                     node_name="LinalgCholeskyExBackward0")


def _failed(info):
    return bool((info != 0).any())


def cholesky_ex(input, *, upper=False, check_errors=False):
    """(L, info): linalg.cholesky, with info > 0 -- the order of the first leading minor that
    is not positive-definite -- instead of an error (unless check_errors)."""
    _check_matrix("linalg.cholesky_ex", input)
    L, info = _cholesky_ex(input, upper=upper)
    if check_errors and _failed(info):
        order = int(info.reshape(-1)[(info.reshape(-1) != 0).nonzero()[0, 0]])
        raise LinAlgError(f"linalg.cholesky_ex: {_batch_element(info)}The factorization could "
                          f"not be completed because the input is not positive-definite (the "
                          f"leading minor of order {order} is not positive-definite).")
    return linalg_cholesky_ex_result(L, info)


def inv_ex(A, *, check_errors=False):
    """(inverse, info): linalg.inv, with info > 0 for a singular matrix (its first zero pivot)
    instead of an error; that matrix's inverse holds inf/nan, as torch's."""
    _check_matrix("linalg.inv_ex", A)
    inverse, info = _inv_ex(A)
    if check_errors and _failed(info):
        element = int(info.reshape(-1)[(info.reshape(-1) != 0).nonzero()[0, 0]])
        raise LinAlgError(f"linalg.inv_ex: {_batch_element(info)}The diagonal element "
                          f"{element} is zero, the inversion could not be completed because "
                          "the input matrix is singular.")
    return linalg_inv_ex_result(inverse, info)


def solve_ex(A, B, *, left=True, check_errors=False):
    """(result, info): linalg.solve, with info > 0 for a singular A instead of an error."""
    A, B2, vector = _solve_operands("linalg.solve_ex", A, B, left)
    X, info = _solve_ex(A, B2)
    result = _solve_result(X, vector, left)
    if check_errors and _failed(info):
        raise LinAlgError(f"torch.linalg.solve_ex: {_batch_element(info)}The solver failed "
                          "because the input matrix is singular.")
    return linalg_solve_ex_result(result, info)


# ==============================================================================================
# 3. Cholesky solves and the legacy triangular_solve
#
# Compositions of linalg.solve_triangular, whose gradient lands on the triangle it reads, as
# torch's does.


def _check_same_dtype(name, b, A, b_name="b"):
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected {b_name} and A to have the same dtype, but found "
                           f"{b_name} of type {dt.scalar_name(b.dtype)} and A of type "
                           f"{dt.scalar_name(A.dtype)} instead.")


def _check_rhs(name, b):
    if b.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {b.ndim} dimensions "
                           "instead")


@export(method=True)
def cholesky_solve(input, input2, upper=False):
    """X with A X = input, where A = L L^T and input2 is L (U = L^T when upper)."""
    _expect_tensors("cholesky_solve", input=input, input2=input2)
    _check_rhs("cholesky_solve", input)
    _check_same_dtype("cholesky_solve", input, input2)
    _check_matrix("cholesky_solve", input2)
    L = input2.mT if upper else input2
    Y = solve_triangular(L, input, upper=False)
    return solve_triangular(L.mT, Y, upper=True)


@export(method=True)
def cholesky_inverse(input, upper=False):
    """(L L^T)^-1 from the Cholesky factor L (or U = L^T when upper)."""
    _expect_tensors("cholesky_inverse", input=input)
    if input.ndim < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 "
                           "dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, but they "
                           f"are {input.shape[-2]} by {input.shape[-1]} matrices")
    _check_matrix("cholesky_inverse", input)
    L = input.mT if upper else input
    eye = _creation.eye(L.shape[-1], dtype=L.dtype, device=L.device)
    L_inv = solve_triangular(L, eye, upper=False)
    return L_inv.mT @ L_inv


@export(method=True)
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """(solution, cloned_coefficient): X with op(A) X = input for the triangle of A, op(A) =
    A^T when `transpose`; deprecated in torch for linalg.solve_triangular."""
    _warn_deprecated("torch.triangular_solve is deprecated in favor of "
                     "torch.linalg.solve_triangular and will be removed in a future PyTorch "
                     "release.\ntorch.linalg.solve_triangular has its arguments reversed and "
                     "does not return a copy of one of the inputs.")
    _expect_tensors("triangular_solve", input=input, A=A)
    _check_rhs("triangular_solve", input)
    _check_same_dtype("triangular_solve", input, A)
    T = A.mT if transpose else A
    X = solve_triangular(T, input, upper=upper != transpose, unitriangular=unitriangular)
    return triangular_solve_result(X, A.clone())


def _warn_deprecated(message):
    import warnings

    warnings.warn(message, UserWarning, stacklevel=3)


# ==============================================================================================
# 4. LDL^T with Bunch-Kaufman pivoting
#
# A = P L D L^T P^T with D of 1x1 and 2x2 blocks, read from A's lower triangle; the packed LD
# and pivots follow LAPACK's sytrf (lower): pivots[k] = p > 0 for a 1x1 block after swapping
# rows/columns k and p (1-based), pivots[k] = pivots[k+1] = -p for a 2x2 block after swapping
# k+1 and p. Each matrix takes its own path of block sizes, so the batch is walked one matrix
# at a time; each step is one vectorised rank-1 or rank-2 update. torch differentiates neither
# the factorization nor the solve, and neither does ember.

_ALPHA = (1 + 17 ** 0.5) / 8  # Bunch-Kaufman's threshold: minimises the worst element growth


def _bunch_kaufman_pivot(xp, a, k):
    """(block size, row to swap in) for step k of one matrix: a 1x1 pivot when a[k, k] is large
    enough against its column, else the largest off-diagonal row as a 1x1 or 2x2 pivot."""
    n = a.shape[-1]
    akk = abs(float(a[k, k]))
    imax = k + 1 + int(xp.argmax(xp.abs(a[k + 1:, k]))) if k + 1 < n else k
    colmax = abs(float(a[imax, k])) if k + 1 < n else 0.0
    if akk >= _ALPHA * colmax:
        return 1, k
    rowmax = float(xp.abs(a[imax, k:imax]).max())
    if imax + 1 < n:
        rowmax = builtins.max(rowmax, float(xp.abs(a[imax + 1:, imax]).max()))
    if akk >= _ALPHA * colmax * (colmax / rowmax):
        return 1, k
    if abs(float(a[imax, imax])) >= _ALPHA * rowmax:
        return 1, imax
    return 2, imax


def _swap_symmetric(a, kk, kp):
    """Swap rows and columns kk < kp of the trailing lower triangle."""
    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    between = a[kk + 1:kp, kk].copy()
    a[kk + 1:kp, kk] = a[kp, kk + 1:kp]
    a[kp, kk + 1:kp] = between
    a[[kk, kp], [kk, kp]] = a[[kp, kk], [kp, kk]]


def _ldl_one(xp, a):
    """Factor one matrix in place (lower triangle): (pivots, info)."""
    n = a.shape[-1]
    pivots = np.zeros(n, dtype=np.int32)
    info = 0
    k = 0
    while k < n:
        column_max = float(xp.abs(a[k + 1:, k]).max()) if k + 1 < n else 0.0
        if builtins.max(abs(float(a[k, k])), column_max) == 0 or np.isnan(float(a[k, k])):
            info = info or k + 1
            pivots[k] = k + 1
            k += 1
            continue
        step, kp = _bunch_kaufman_pivot(xp, a, k)
        kk = k + step - 1
        if kp != kk:
            _swap_symmetric(a, kk, kp)
            if step == 2:
                a[[k + 1, kp], k] = a[[kp, k + 1], k]
        (_ldl_update_1 if step == 1 else _ldl_update_2)(xp, a, k)
        pivots[k:k + step] = kp + 1 if step == 1 else -(kp + 1)
        k += step
    return pivots, info


def _ldl_update_1(xp, a, k):
    """A[k+1:, k+1:] -= x x^T / d with x = A[k+1:, k], d = A[k, k]; L's column is x / d."""
    x = a[k + 1:, k].copy()
    a[k + 1:, k + 1:] -= xp.outer(x, x) / a[k, k]
    a[k + 1:, k] = x / a[k, k]


def _ldl_update_2(xp, a, k):
    """The rank-2 update of a 2x2 pivot D = [[a, b], [b, c]]: L's two columns are
    [x y] D^-1 and the trailing block loses [x y] D^-1 [x y]^T."""
    x, y = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
    b = a[k + 1, k]
    d11 = a[k + 1, k + 1] / b
    d22 = a[k, k] / b
    scale = 1 / (d11 * d22 - 1) / b
    wk = scale * (d11 * x - y)
    wkp1 = scale * (d22 * y - x)
    a[k + 2:, k + 2:] -= xp.outer(x, wk) + xp.outer(y, wkp1)
    a[k + 2:, k] = wk
    a[k + 2:, k + 1] = wkp1


def _ldl_factor_kernel(xp, a, *, hermitian):
    n = a.shape[-1]
    batch = a.shape[:-2]
    flat = xp.tril(a).reshape((math.prod(batch), n, n)).copy()
    pivots = np.zeros((flat.shape[0], n), dtype=np.int32)
    info = np.zeros(flat.shape[0], dtype=np.int32)
    for i in range(flat.shape[0]):
        pivots[i], info[i] = _ldl_one(xp, flat[i])
    LD = xp.tril(flat).reshape(a.shape)
    return LD, xp.asarray(pivots.reshape(batch + (n,))), xp.asarray(info.reshape(batch))


def _ldl_solve_one(xp, ld, pivots, b):
    """Solve with one factorization in place (LAPACK's sytrs, lower): first L D Y = P^T B,
    then L^T P^T X = Y."""
    n = ld.shape[-1]
    k = 0
    while k < n:  # L D Y = B, swapping rows as the factorization did
        if pivots[k] > 0:
            b[[k, pivots[k] - 1]] = b[[pivots[k] - 1, k]]
            b[k + 1:] -= xp.outer(ld[k + 1:, k], b[k])
            b[k] /= ld[k, k]
            k += 1
            continue
        p = -pivots[k] - 1
        b[[k + 1, p]] = b[[p, k + 1]]
        b[k + 2:] -= xp.outer(ld[k + 2:, k], b[k]) + xp.outer(ld[k + 2:, k + 1], b[k + 1])
        off = ld[k + 1, k]
        d11, d22 = ld[k, k] / off, ld[k + 1, k + 1] / off
        denominator = d11 * d22 - 1
        top, bottom = b[k] / off, b[k + 1] / off
        b[k], b[k + 1] = (d22 * top - bottom) / denominator, (d11 * bottom - top) / denominator
        k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y, undoing the swaps
        step = 1 if pivots[k] > 0 else 2
        for j in range(k, k - step, -1):
            b[j] -= ld[k + 1:, j] @ b[k + 1:]
        p = abs(int(pivots[k])) - 1
        b[[k, p]] = b[[p, k]]
        k -= step
    return b


def _ldl_solve_kernel(xp, ld, pivots, b, *, hermitian):
    batch = np.broadcast_shapes(ld.shape[:-2], pivots.shape[:-1], b.shape[:-2])
    n, cols = ld.shape[-1], b.shape[-1]
    ld = xp.broadcast_to(ld, batch + (n, n)).reshape((-1, n, n))
    piv = xp.broadcast_to(pivots, batch + (n,)).reshape((-1, n))
    piv = piv if isinstance(piv, np.ndarray) else piv.get()  # the walk reads them on the host
    x = xp.broadcast_to(b, batch + (n, cols)).reshape((-1, n, cols)).copy()
    for i in range(x.shape[0]):
        _ldl_solve_one(xp, ld[i], piv[i], x[i])
    return x.reshape(batch + (n, cols))


def _not_differentiable(name):
    def rule(g):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return rule


_ldl_factor = defop("linalg_ldl_factor_ex", "none", _ldl_factor_kernel,
                    _not_differentiable("linalg_ldl_factor_ex"), node_name="NotImplemented")
_ldl_solve = defop("linalg_ldl_solve", "none", _ldl_solve_kernel,
                   _not_differentiable("linalg_ldl_solve"), node_name="NotImplemented")


def ldl_factor_ex(input, *, hermitian=False, check_errors=False):
    """(LD, pivots, info): A = P L D L^T P^T by Bunch-Kaufman pivoting, read from A's lower
    triangle; info = k when D[k, k] (1-based) is exactly zero. Not differentiable (nor is
    torch's)."""
    _check_matrix("torch.linalg.ldl_factor_ex", input)
    LD, pivots, info = _ldl_factor(input, hermitian=hermitian)
    if check_errors and _failed(info):
        _raise_ldl_singular("torch.linalg.ldl_factor_ex", info)
    return linalg_ldl_factor_ex_result(LD, pivots, info)


def _raise_ldl_singular(name, info):
    k = int(info.reshape(-1)[(info.reshape(-1) != 0).nonzero()[0, 0]])
    raise LinAlgError(f"{name}: {_batch_element(info)}The factorization could not be completed "
                      f"because D[{k},{k}] is exactly zero.")


def ldl_factor(input, *, hermitian=False):
    """(LD, pivots) of ldl_factor_ex; raises LinAlgError where D has an exact zero (torch 2.13
    fails there with an internal assertion)."""
    LD, pivots, info = ldl_factor_ex(input, hermitian=hermitian)
    if _failed(info):
        _raise_ldl_singular("torch.linalg.ldl_factor", info)
    return linalg_ldl_factor_result(LD, pivots)


def ldl_solve(LD, pivots, B, *, hermitian=False):
    """X with A X = B, A given by ldl_factor's (LD, pivots); batch dimensions broadcast."""
    _expect_tensors("linalg_ldl_solve", LD=LD, pivots=pivots, B=B)
    _check_matrix("torch.linalg.ldl_solve", LD)
    if B.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got "
                         "-2)")
    if pivots.dtype is not dt.int32:
        raise RuntimeError("torch.linalg.ldl_solve: Expected pivots to be integers. Got "
                           f"{dt.scalar_name(pivots.dtype)}")
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(f"torch.linalg.ldl_solve: Incompatible shapes of A and B for the "
                           f"equation AX = B ({_dims(LD.shape[-2:])} and {_dims(B.shape[-2:])})")
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected LD and B to have the same dtype, "
                           f"but found LD of type {dt.scalar_name(LD.dtype)} and B of type "
                           f"{dt.scalar_name(B.dtype)} instead")
    return _ldl_solve(LD, pivots, B, hermitian=hermitian)


# ==============================================================================================
# 5. Householder reflectors
#
# geqrf packs A = QR as R on and above the diagonal and, below it, the vectors v_i of the
# reflectors H_i = I - tau_i v_i v_i^T (v_i[i] = 1 implied), Q = H_1 H_2 ... H_k. Multiplying
# them out is a short loop of ember ops, so every product here differentiates for free.


def _geqrf_kernel(xp, a):
    m, n = a.shape[-2:]
    if a.size == 0:
        return a.copy(), xp.zeros(a.shape[:-2] + (builtins.min(m, n),), dtype=a.dtype)
    h, tau = xp.linalg.qr(a, mode="raw")  # LAPACK's geqrf, in Fortran order (transposed)
    return xp.swapaxes(h, -1, -2).copy(), tau


def _geqrf_rule(g):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


_geqrf = defop("geqrf", "none", _geqrf_kernel, _geqrf_rule, node_name="GeqrfBackward0")


@export(method=True)
def geqrf(input):
    """(a, tau): the QR factorization in LAPACK's packed Householder form (not
    differentiable, as in torch)."""
    _expect_tensors("geqrf", input=input)
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_lapack_dtype("geqrf_cpu", input)
    return geqrf_result(*_geqrf(input))


def _reflect(V, tau, C, left, transpose):
    """op(Q) C (left) or C op(Q), Q = H_1 ... H_k with v_i the columns of V; op(Q) = Q^T when
    `transpose`. Each reflector is applied as C - tau v (v^T C): a rank-1 update."""
    k = tau.shape[-1]
    order = range(k - 1, -1, -1) if left != transpose else range(k)
    for i in order:
        v = V[..., :, i:i + 1]
        t = tau[..., i:i + 1].unsqueeze(-1)
        C = C - t * (v @ (v.mT @ C)) if left else C - t * ((C @ v) @ v.mT)
    return C


def _reflectors(input):
    """V: input's strictly lower part with ones on the diagonal (the Householder vectors)."""
    m, n = input.shape[-2:]
    return input.tril(-1) + _creation.eye(m, n, dtype=input.dtype, device=input.device)


def _check_tau(name, input, tau):
    _expect_tensors(name.replace("torch.", "").replace(".", "_"), input=input, tau=tau)
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if tau.ndim != input.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{input.ndim}")
    if tau.dtype is not input.dtype:
        raise RuntimeError(f"{name}: tau dtype {dt.scalar_name(tau.dtype)} does not match "
                           f"input dtype {dt.scalar_name(input.dtype)}")
    _check_lapack_dtype(name.split(".")[-1] + "_cpu", input)


def householder_product(input, tau):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T with v_i the i-th column
    of input below the diagonal (and 1 on it): the Q of geqrf's packed result."""
    name = "torch.linalg.householder_product"
    _check_tau(name, input, tau)
    m, n = input.shape[-2:]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if n < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    eye = _creation.eye(m, n, dtype=input.dtype, device=input.device)
    return _reflect(_reflectors(input), tau, eye, left=True, transpose=False)


@export(method=True)
def orgqr(input, input2):
    """torch.orgqr(input, tau) = linalg.householder_product(input, tau)."""
    return householder_product(input, input2)


@export(method=True)
def ormqr(input, input2, input3, left=True, transpose=False):
    """op(Q) @ other (left) or other @ op(Q), Q the m x m product of geqrf's reflectors
    (input, tau = input2; other = input3); op(Q) = Q^T when `transpose`."""
    name = "torch.ormqr"
    input, tau, other = input, input2, input3
    _check_tau(name, input, tau)
    if other.ndim != input.ndim:
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {other.ndim} and input.ndim is "
                           f"equal to {input.ndim}")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.shape[-1] != builtins.min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           "input.shape[-1])")
    return _reflect(_reflectors(input), tau, other, left, transpose)


# ==============================================================================================
# 6. matrix_exp
#
# exp(A) = r(A / 2^s)^(2^s) with r the degree-13 Pade approximant and s the smallest number of
# halvings that brings |A|_1 under theta_13 (Higham, "The scaling and squaring method for the
# matrix exponential revisited", 2005). Each matrix of a batch gets its own s.

_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _pade13(xp, a):
    b = _PADE13
    eye = xp.eye(a.shape[-1], dtype=a.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
             + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * eye
    return xp.linalg.solve(v - u, v + u)


def _matrix_exp_kernel(xp, a):
    if a.size == 0:
        return a.copy()
    norm = xp.abs(a).sum(axis=-2).max(axis=-1)  # the 1-norm of each matrix
    with np.errstate(divide="ignore"):
        s = xp.maximum(0, xp.ceil(xp.log2(norm / _THETA13))).astype(np.int64)
    s = xp.where(xp.isfinite(norm), s, 0)
    r = _pade13(xp, a / (2.0 ** s)[..., None, None].astype(a.dtype))
    for step in range(int(s.max())):
        r = xp.where((s > step)[..., None, None], r @ r, r)
    return r


def _matrix_exp_rule(g, a):
    """The adjoint of the Frechet derivative: the top-right block of exp([[A^T, g], [0, A^T]])
    (computed by this same op, so the rule differentiates again)."""
    n = a.shape[-1]
    top = cat([a.mT, g], -1)
    bottom = cat([g.new_zeros(g.shape), a.mT], -1)
    return (_matrix_exp(cat([top, bottom], -2))[..., :n, n:],)


_matrix_exp = defop("linalg_matrix_exp", "none",
                    lambda xp, a: _in_float32(xp, _matrix_exp_kernel, a), _matrix_exp_rule,
                    node_name="LinalgMatrixExpBackward0")


def _in_float32(xp, kernel, a):
    """Half precision computes in float32 and rounds once (NumPy's solve has no float16)."""
    if a.dtype in (dt.float16.np, dt.bfloat16.np):
        return kernel(xp, a.astype(np.float32)).astype(a.dtype)
    return kernel(xp, a)


@export(method=True)
def matrix_exp(input):
    """exp(A) = sum A^k / k! of every square matrix in `input`."""
    _expect_tensors("linalg_matrix_exp", input=input)
    _check_matrix("linalg.matrix_exp", input, low_precision_ok=True)
    return _matrix_exp(input)


# ==============================================================================================
# 7. eig: the eigendecomposition of a general (non-symmetric) matrix, always complex
#
# A V = V diag(L), each column of V of unit length (LAPACK's geev, through NumPy). For gradients
# g_L and g_V (of a loss that does not depend on the eigenvectors' phases), with
# E_ij = conj(L_j - L_i) off the diagonal and R = V^H g_V:
#     gA = V^-H (diag(g_L) + off-diagonal of (R - V^H V Re(diag R)) / E) V^H,
# taken real when A is real. eigvals is the same op with only g_L.

linalg_eig_result = _return_type("linalg_eig", ["eigenvalues", "eigenvectors"])


def _eig_kernel(xp, a):
    w, v = xp.linalg.eig(a)
    complex_type = (a + 0j).dtype if a.dtype.kind == "c" else \
        (xp.complex64 if a.dtype == xp.float32 else xp.complex128)
    return w.astype(complex_type, copy=False), v.astype(complex_type, copy=False)


def _eig_rule(g, a_dtype, out):
    gL, gV = g
    L, V = out
    Vh = V.mH
    R = Vh @ gV
    R = R - Vh @ (V * R.diagonal(0, -2, -1).real.unsqueeze(-2))
    E = (L.conj().unsqueeze(-2) - L.conj().unsqueeze(-1))
    n = L.shape[-1]
    eye = _creation.eye(n, dtype=E.dtype, device=E.device)
    off = (R / (E + eye)) * (1 - eye)
    gA = _linalg_solve_for_eig(Vh, (off + gL.diag_embed()) @ Vh)
    return (gA if a_dtype.is_complex else gA.real,)


def _linalg_solve_for_eig(A, B):
    from .linalg import solve

    return solve(A, B)


_eig = defop("linalg_eig", "none", _eig_kernel, _eig_rule, node_name="LinalgEigBackward0")


def _check_eig(name, input):
    _expect_tensors(name.replace(".", "_"), input=input)
    if input.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{input.shape[-2]} by {input.shape[-1]} matrices")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"Unknown Complex ScalarType for {dt.scalar_name(input.dtype)}")
    if input.dtype in (dt.float16, dt.bfloat16):
        raise NotImplementedError(f'"linalg_eig_out_cpu" not implemented for '
                                  f"'{dt.scalar_name(input.dtype)}'")


def eig(input):
    """(eigenvalues, eigenvectors) of square matrices, complex (complex64 for float32 input,
    complex128 for float64); each eigenvector has unit length."""
    _check_eig("linalg.eig", input)
    return linalg_eig_result(*_eig(input))


def eigvals(input):
    """The (complex) eigenvalues of square matrices: linalg.eig's first result."""
    _check_eig("linalg.eigvals", input)
    return _eig(input)[0]
