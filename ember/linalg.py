"""`ember.linalg`: torch.linalg's functions.

The implementations live in `ops/linalg.py` (kernels, backward rules and these wrappers, side by
side); this module is the public namespace. Every function works on batches `(..., m, n)` and is
differentiable where torch's is. Named results index, unpack and name their fields as torch's
`torch.return_types.linalg_*` do: `sign, logabsdet = slogdet(A)` or `slogdet(A).logabsdet`.

Read next: `ops/linalg.py`, then `ops/factorizations.py` (LU, LDL, Householder, matrix_exp).
"""
from .ops.factorizations import (
    cholesky_ex,
    eig,
    eigvals,
    householder_product,
    inv_ex,
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    matrix_exp,
    solve_ex,
)
from .ops.linalg import (
    LinAlgError,
    cholesky,
    cond,
    cross,
    det,
    diagonal,
    eigh,
    eigvalsh,
    inv,
    lstsq,
    matmul,
    matrix_norm,
    matrix_power,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    solve_triangular,
    svd,
    svdvals,
    tensorinv,
    tensorsolve,
    vander,
    vecdot,
    vector_norm,
)

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig",
           "eigh", "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
           "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot",
           "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd",
           "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]
