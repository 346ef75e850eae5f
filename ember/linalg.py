"""`ember.linalg`: torch.linalg's functions.

The implementations live in `ops/linalg.py` (kernels, backward rules and these wrappers, side by
side); this module is the public namespace. Every function works on batches `(..., m, n)` and is
differentiable where torch's is. Named results index, unpack and name their fields as torch's
`torch.return_types.linalg_*` do: `sign, logabsdet = slogdet(A)` or `slogdet(A).logabsdet`.

Read next: `ops/linalg.py`, then `ops/factorizations.py` (LU, LDL, Householder, matrix_exp).
"""
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
    vecdot,
    vector_norm,
)
from .ops.factorizations import (
    cholesky_ex,
    householder_product,
    inv_ex,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    matrix_exp,
    solve_ex,
)

__all__ = ["LinAlgError", "cholesky", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh",
           "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot",
           "norm", "pinv", "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals",
           "vecdot", "vector_norm", "cholesky_ex", "inv_ex", "lu", "lu_factor", "lu_factor_ex",
           "lu_solve", "solve_ex", "householder_product", "matrix_exp"]
