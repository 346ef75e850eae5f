"""Rows for ember/ops/factorizations.py: LU, the _ex variants, Cholesky and LDL solves,
Householder products and matrix_exp.

Inputs are built inside the lambda from random B (see linalg.py's `spd` and `shifted`) so the
gradient reaches B; pivoted factorizations get matrices whose pivots are clear (no near ties),
where the factors are smooth functions of the input.
"""
from ._spec import Spec, T
from .linalg import shifted, spd


def _lu_parts(m, a):
    P, L, U = m.linalg.lu(a)
    return P, L, U


def _lu_factor_parts(m, a):
    LU, pivots, info = m.linalg.lu_factor_ex(a)
    return LU, pivots, info


SPECS = [
    # ---------------------------------------------------------------- LU
    Spec("linalg_lu_factor_ex", _lu_factor_parts,
         [(T(4, 4),), (T(2, 3, 3),), (T(3, 5),), (T(5, 3),), (T(4, 4, t=True),), (T(0, 3),),
          (T(3, 3, dtype="float64"),)]),
    Spec("linalg_lu", _lu_parts, [(T(4, 4),), (T(2, 3, 5),), (T(5, 3),), (T(0, 3),)],
         ops=["linalg_lu", "lu_pivots_to_permutation"]),
    Spec("lu_factor", lambda m, a: tuple(m.linalg.lu_factor(shifted(m, a))),
         [(T(3, 3),)], ops=["linalg_lu_factor_ex"]),
    Spec("lu_unpack", lambda m, a: tuple(m.lu_unpack(*m.linalg.lu_factor(shifted(m, a)))),
         [(T(3, 3),), (T(2, 4, 4),)], ops=["linalg_lu_factor_ex", "lu_pivots_to_permutation"]),
    Spec("lu_unpack_partial", lambda m, a: (
        m.lu_unpack(*m.linalg.lu_factor(a), unpack_data=False).P,
        m.lu_unpack(*m.linalg.lu_factor(a), unpack_pivots=False)[1:]),
         [(T(3, 3),), (T(3, 5),)], ops=["linalg_lu_factor_ex"]),
    Spec("linalg_lu_solve", lambda m, a, b: (
        m.linalg.lu_solve(*m.linalg.lu_factor(shifted(m, a)), b),
        m.linalg.lu_solve(*m.linalg.lu_factor(shifted(m, a)), b, adjoint=True),
        m.linalg.lu_solve(*m.linalg.lu_factor(shifted(m, a)), b.mT, left=False),
        m.linalg.lu_solve(*m.linalg.lu_factor(shifted(m, a)), b.mT, left=False, adjoint=True)),
         [(T(3, 3), T(3, 2)), (T(2, 4, 4), T(2, 4, 4))], ops=["linalg_lu_factor_ex"]),
    Spec("legacy_lu", lambda m, a, b: (tuple(m.lu(shifted(m, a), get_infos=True)),
                                       m.lu_solve(b, *m.lu(shifted(m, a))),
                                       b.lu_solve(*shifted(m, a).lu())),
         [(T(3, 3), T(3, 2))], ops=["linalg_lu_factor_ex"]),
    # ---------------------------------------------------------------- _ex variants
    Spec("linalg_cholesky_ex", lambda m, b: (tuple(m.linalg.cholesky_ex(spd(m, b))),
                                             tuple(m.linalg.cholesky_ex(spd(m, b), upper=True))),
         [(T(3, 3),), (T(2, 4, 4),)]),
    Spec("linalg_inv_ex", lambda m, a: tuple(m.linalg.inv_ex(shifted(m, a))),
         [(T(3, 3),), (T(2, 4, 4),)]),
    Spec("linalg_solve_ex", lambda m, a, b: (tuple(m.linalg.solve_ex(shifted(m, a), b)),
                                             m.linalg.solve_ex(shifted(m, a), b.mT,
                                                               left=False).result),
         [(T(3, 3), T(3, 2)), (T(2, 3, 3), T(3, 3))]),
]

SPECS += [
    # ---------------------------------------------------------------- Cholesky, triangular
    Spec("cholesky_solve", lambda m, b, c: (
        m.cholesky_solve(c, m.linalg.cholesky(spd(m, b))),
        m.cholesky_solve(c, m.linalg.cholesky(spd(m, b), upper=True), upper=True),
        c.cholesky_solve(m.linalg.cholesky(spd(m, b)))),
         [(T(3, 3), T(3, 2)), (T(2, 4, 4), T(4, 1))], ops=["linalg_cholesky", "linalg_solve"]),
    Spec("cholesky_inverse", lambda m, b: (
        m.cholesky_inverse(m.linalg.cholesky(spd(m, b))),
        m.cholesky_inverse(m.linalg.cholesky(spd(m, b), upper=True), upper=True),
        m.linalg.cholesky(spd(m, b)).cholesky_inverse()),
         [(T(3, 3),), (T(2, 4, 4),)], ops=["linalg_cholesky", "linalg_solve"]),
    Spec("triangular_solve", lambda m, b, a: (
        tuple(m.triangular_solve(b, shifted(m, a))),
        m.triangular_solve(b, shifted(m, a), upper=False).solution,
        m.triangular_solve(b, shifted(m, a), transpose=True).solution,
        b.triangular_solve(shifted(m, a), unitriangular=True).solution),
         [(T(3, 2), T(3, 3)), (T(3, 2), T(2, 3, 3))], ops=["linalg_solve"]),
    # ---------------------------------------------------------------- Householder
    Spec("geqrf", lambda m, a: tuple(m.geqrf(a)), [(T(4, 3),), (T(2, 3, 4),), (T(0, 3),)],
         grad=False),
    Spec("householder_product", lambda m, a, tau: (
        m.linalg.householder_product(a, tau), m.orgqr(a, tau[..., :2]), a.orgqr(tau)),
         [(T(4, 3), T(3)), (T(2, 5, 3), T(2, 3)), (T(3, 3), T(2))], ops=[]),
    Spec("orgqr_of_geqrf", lambda m, a: m.orgqr(*m.geqrf(a)), [(T(4, 3),)], ops=["geqrf"],
         grad=False),
    Spec("ormqr", lambda m, a, tau, c: (
        m.ormqr(a, tau, c), m.ormqr(a, tau, c, transpose=True),
        m.ormqr(a, tau, c.mT, left=False), a.ormqr(tau, c.mT, left=False, transpose=True)),
         [(T(4, 3), T(3), T(4, 2)), (T(2, 3, 3), T(2, 3), T(2, 3, 3))], ops=[]),
    # ---------------------------------------------------------------- matrix_exp
    Spec("linalg_matrix_exp", lambda m, a: (m.linalg.matrix_exp(a), m.matrix_exp(3 * a),
                                            (a / 4).matrix_exp()),
         [(T(3, 3),), (T(2, 4, 4),), (T(1, 1),), (T(0, 0),), (T(3, 3, dtype="float64"),),
          (T(3, 3, t=True),)], grad_rtol=1e-3, grad_atol=1e-4),
    Spec("matrix_exp_large_norm", lambda m, a: m.linalg.matrix_exp(20 * a),
         [(T(3, 3, dtype="float64"),)], ops=["linalg_matrix_exp"], rtol=1e-9),
]

SPECS += [
    # ---------------------------------------------------------------- LDL (not differentiable)
    Spec("linalg_ldl_factor_ex", lambda m, a: (tuple(m.linalg.ldl_factor_ex(a + a.mT)),
                                               tuple(m.linalg.ldl_factor(a, hermitian=True))),
         [(T(4, 4),), (T(2, 5, 5),), (T(3, 3, dtype="float64"),), (T(0, 0),)], grad=False),
    Spec("linalg_ldl_solve", lambda m, a, b: (
        m.linalg.ldl_solve(*m.linalg.ldl_factor(a + a.mT), b),
        m.linalg.ldl_solve(*m.linalg.ldl_factor(a + a.mT), b.unsqueeze(0).expand(2, -1, -1))),
         [(T(4, 4), T(4, 2)), (T(2, 3, 3), T(3, 1))], grad=False,
         ops=["linalg_ldl_solve", "linalg_ldl_factor_ex"]),
]


def _eig_parts(m, a):
    """eig's results as real, phase-free quantities (eigenvectors are defined up to a phase)."""
    L, V = m.linalg.eig(a)
    weights = m.arange(1, L.shape[-1] + 1, dtype=a.dtype)
    return L.real, L.imag, V.abs() ** 2 * weights


SPECS += [
    Spec("linalg_eig", _eig_parts, [(T(4, 4),), (T(2, 3, 3, dtype="float64"),),
                                    (T(3, 3, t=True),)]),
    Spec("linalg_eigvals", lambda m, a: (m.linalg.eigvals(a).real, m.linalg.eigvals(a).imag),
         [(T(3, 3),), (T(2, 4, 4),)], ops=["linalg_eig"]),
    # Eigenvectors are unique only up to a phase per column, so compare the complex
    # eigenvalues directly and the eigenvectors through their moduli.
    Spec("linalg_eig_complex_results",
         lambda m, a: (m.linalg.eig(a).eigenvalues, m.linalg.eig(a).eigenvectors.abs()),
         [(T(3, 3),)], ops=["linalg_eig"], grad=False),
]
