"""ember/ops/factorizations.py beyond the op table: failures reported as `info`, torch's errors,
graph node names, second derivatives, and ember's gradient where torch's own fails."""
import warnings

import numpy as np
import pytest

import ember

from .oracle import assert_close, check, check_raises

torch = pytest.importorskip("torch")

SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]], dtype=np.float32)
NOT_PD = np.array([[4.0, 2, 1], [2, 1, 3], [1, 3, 5]], dtype=np.float32)
INVERTIBLE = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)


def _both(fn, *arrays):
    """fn in both libraries on the same arrays (no gradients)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return (fn(ember, *[ember.tensor(a) for a in arrays]),
                fn(torch, *[torch.tensor(a) for a in arrays]))


@pytest.mark.parametrize("fn, arrays", [
    (lambda m, a: tuple(m.linalg.lu_factor_ex(a)), [SINGULAR]),
    (lambda m, a, b: tuple(m.linalg.lu_factor_ex(m.stack([a, b]))), [SINGULAR, INVERTIBLE]),
    (lambda m, a: tuple(m.linalg.lu(a)), [SINGULAR]),
    (lambda m, a: tuple(m.linalg.lu_factor_ex(a * 0)), [SINGULAR]),
    (lambda m, a: tuple(m.linalg.cholesky_ex(a)), [NOT_PD]),
    (lambda m, a: tuple(m.linalg.cholesky_ex(a, upper=True)), [NOT_PD]),
    (lambda m, a, b: tuple(m.linalg.cholesky_ex(m.stack([a, b @ b.mT + m.eye(3)]))),
     [NOT_PD, NOT_PD]),
    (lambda m, a: tuple(m.linalg.inv_ex(a)), [SINGULAR]),
    (lambda m, a, b: tuple(m.linalg.inv_ex(m.stack([b, a]))), [SINGULAR, INVERTIBLE]),
    (lambda m, a: tuple(m.linalg.solve_ex(a, m.ones(2))), [SINGULAR]),
    (lambda m, a: tuple(m.linalg.ldl_factor_ex(a * 0)), [SINGULAR]),
    (lambda m, a: tuple(m.lu(a, get_infos=True)), [SINGULAR]),
])
def test_failures_come_back_as_info(fn, arrays):
    e, t = _both(fn, *arrays)
    assert_close(e, t)


@pytest.mark.parametrize("fn, arrays, match", [
    (lambda m, a: m.linalg.lu_factor(a), [SINGULAR], "U[2,2] is zero"),
    (lambda m, a, b: m.linalg.lu_factor(m.stack([b, a])), [SINGULAR, INVERTIBLE],
     "(Batch element 1): U[2,2] is zero"),
    (lambda m, a: m.linalg.lu_factor_ex(a, check_errors=True), [SINGULAR], "U[2,2] is zero"),
    (lambda m, a: m.linalg.lu_factor(a, pivot=False), [INVERTIBLE],
     "LU without pivoting is not implemented on the CPU"),
    (lambda m, a: m.linalg.lu_factor(a[0]), [INVERTIBLE], "Expected tensor with 2 or more"),
    (lambda m, a: m.linalg.lu_factor(a.long()), [INVERTIBLE], "not implemented for 'Long'"),
    (lambda m, a: m.linalg.lu_factor(a.half()), [INVERTIBLE], "not implemented for 'Half'"),
    (lambda m, a: m.lu_unpack(a, a.long()), [INVERTIBLE], "torch.int32"),
    (lambda m, a: m.linalg.lu_solve(*m.linalg.lu_factor(a), a[0]), [INVERTIBLE],
     "at least 2 dimensions"),
    (lambda m, a: m.linalg.lu_solve(*m.linalg.lu_factor(a), m.ones(3, 1)), [INVERTIBLE],
     "Incompatible shapes"),
    (lambda m, a: m.linalg.matrix_exp(a.long()), [INVERTIBLE], "Got Long"),
    (lambda m, a: m.linalg.matrix_exp(m.ones(2, 3)), [INVERTIBLE], "square matrices"),
    (lambda m, a: m.linalg.matrix_exp(a[0]), [INVERTIBLE], "at least 2 dimensions"),
    (lambda m, a: m.cholesky_solve(a[0], a), [INVERTIBLE], "at least 2 dimensions"),
    (lambda m, a: m.cholesky_solve(a, a.double()), [INVERTIBLE], "same dtype"),
    (lambda m, a: m.cholesky_inverse(m.ones(2, 3)), [INVERTIBLE], "square matrices"),
    (lambda m, a: m.geqrf(a[0]), [INVERTIBLE], "at least 2 dimensions"),
    (lambda m, a: m.geqrf(a.long()), [INVERTIBLE], "not implemented for 'Long'"),
    (lambda m, a: m.linalg.householder_product(a, m.ones(3)), [INVERTIBLE],
     "greater than or equal to tau.shape[-1]"),
    (lambda m, a: m.linalg.householder_product(m.ones(2, 3), m.ones(2)), [INVERTIBLE],
     "input.shape[-2] must be greater than or equal to input.shape[-1]"),
    (lambda m, a: m.orgqr(a, m.ones(2, dtype=m.float64)), [INVERTIBLE], "does not match"),
    (lambda m, a: m.ormqr(a, m.ones(2), m.ones(3, 1)), [INVERTIBLE],
     "other.shape[-2] must be equal to input.shape[-2]"),
    (lambda m, a: m.ormqr(a, m.ones(1), m.ones(2, 2)), [INVERTIBLE],
     "tau.shape[-1] must be equal to min(other.shape[-2], input.shape[-1])"),
    (lambda m, a: m.ormqr(a, m.ones(2), m.ones(1, 2, 2)), [INVERTIBLE],
     "same number of dimensions"),
    (lambda m, a: m.linalg.ldl_factor(m.ones(2, 3)), [INVERTIBLE], "square matrices"),
    (lambda m, a: m.linalg.ldl_factor(a.int()), [INVERTIBLE], "Got Int"),
    (lambda m, a: m.linalg.ldl_solve(*m.linalg.ldl_factor(a + a.mT), m.ones(2)), [INVERTIBLE],
     "Dimension out of range"),
    (lambda m, a: m.linalg.tensorinv(m.ones(4, 6, 8, 3), ind=0), [INVERTIBLE],
     "strictly positive integer for 'ind'"),
    (lambda m, a: m.linalg.tensorinv(m.ones(4, 6, 8, 3), ind=1), [INVERTIBLE],
     "but got 144 != 4"),
    (lambda m, a: m.linalg.tensorsolve(m.ones(6, 4, 2, 3), m.ones(6, 4)), [INVERTIBLE],
     "but got 6 != 24"),
    (lambda m, a: m.linalg.vander(a[0, 0]), [INVERTIBLE], "N must be greater than 1."),
    (lambda m, a: m.linalg.vander(a[0], N=1), [INVERTIBLE], "N must be greater than 1."),
    (lambda m, a: m.linalg.vander(a[0] > 0), [INVERTIBLE], "but got Bool"),
    (lambda m, a: m.vander(a), [INVERTIBLE], "x must be a one-dimensional tensor."),
    (lambda m, a: m.dist(a.long(), a.long()), [INVERTIBLE], "Got Long instead."),
    (lambda m, a: m.nuclear_norm(a[0]), [INVERTIBLE], "Expected a tensor with 2 dimensions"),
])
def test_errors_match_torch(fn, arrays, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check_raises(fn, arrays, match=match)


@pytest.mark.parametrize("fn, match", [
    (lambda m: m.linalg.cholesky_ex(m.tensor(NOT_PD), check_errors=True),
     "linalg.cholesky_ex: The factorization could not be completed because the input is not "
     "positive-definite (the leading minor of order 2 is not positive-definite)."),
    (lambda m: m.linalg.inv_ex(m.tensor(SINGULAR), check_errors=True),
     "linalg.inv_ex: The diagonal element 2 is zero"),
    (lambda m: m.linalg.solve_ex(m.tensor(SINGULAR), m.ones(2), check_errors=True),
     "torch.linalg.solve_ex: The solver failed because the input matrix is singular."),
    (lambda m: m.linalg.tensorinv(m.zeros(2, 2), ind=1), "singular"),
])
def test_checked_failures_raise_linalg_error(fn, match):
    with pytest.raises(torch.linalg.LinAlgError):
        fn(torch)
    with pytest.raises(ember.linalg.LinAlgError) as info:
        fn(ember)
    assert match in str(info.value)


@pytest.mark.parametrize("fn, names", [
    (lambda m, a: m.linalg.lu(a)[1:], ["LinalgLuBackward0"] * 2),
    (lambda m, a: m.linalg.lu_factor(a)[:1], ["LinalgLuFactorExBackward0"]),
    (lambda m, a: m.linalg.inv_ex(a)[:1], ["LinalgInvExBackward0"]),
    (lambda m, a: m.linalg.solve_ex(a, a)[:1], ["LinalgSolveExBackward0"]),
    (lambda m, a: m.linalg.cholesky_ex(a @ a.mT + m.eye(2))[:1],
     ["LinalgCholeskyExBackward0"]),
    (lambda m, a: (m.linalg.matrix_exp(a),), ["LinalgMatrixExpBackward0"]),
    (lambda m, a: tuple(m.geqrf(a)), ["GeqrfBackward0"] * 2),
])
def test_graph_node_names(fn, names):
    for m in (ember, torch):
        a = m.tensor(INVERTIBLE, requires_grad=True)
        assert [out.grad_fn.name() for out in fn(m, a)] == names, m.__name__


def test_lu_pivots_and_permutation_do_not_require_grad():
    a = ember.tensor(INVERTIBLE, requires_grad=True)
    P, L, U = ember.linalg.lu(a)
    assert not P.requires_grad and L.requires_grad and U.requires_grad
    assert not ember.linalg.lu_factor(a).pivots.requires_grad


@pytest.mark.parametrize("fn", [
    lambda m, a: m.linalg.matrix_exp(a),
    lambda m, a: m.linalg.lu(a + 3 * m.eye(3))[2],
    lambda m, a: m.linalg.lu_factor(a + 3 * m.eye(3))[0],
    lambda m, a: m.linalg.householder_product(a, a[0]),
])
def test_second_derivatives(fn):
    a = ember.tensor(np.random.default_rng(0).standard_normal((3, 3)) / 2,
                     requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda x: fn(ember, x), [a])


def test_non_differentiable_like_torch():
    for m in (ember, torch):
        a = m.tensor(INVERTIBLE, requires_grad=True)
        with pytest.raises(NotImplementedError, match="the derivative for 'geqrf' is not "
                                                       "implemented"):
            m.geqrf(a).a.sum().backward()
        LD, pivots = m.linalg.ldl_factor(a + a.mT)
        assert LD.requires_grad and not pivots.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is "
                                               "not implemented"):
            LD.sum().backward()


def test_legacy_vander_gradient_is_linalg_vanders_flipped():
    # torch.vander's backward fails in torch 2.13 itself; ember's equals linalg.vander's
    x = ember.tensor([0.5, -1.0, 2.0], dtype=ember.float64, requires_grad=True)
    g = ember.tensor(np.random.default_rng(1).standard_normal((3, 4)))
    (legacy,) = ember.autograd.grad(ember.vander(x, N=4), x, g)
    (increasing,) = ember.autograd.grad(ember.linalg.vander(x, N=4), x, g.flip(-1))
    assert np.allclose(legacy.numpy(), increasing.numpy())
    assert ember.autograd.gradcheck(lambda t: ember.vander(t, N=4), [x])


def test_ldl_factor_singular_raises():
    # torch 2.13 hits an internal assertion here; ember names the zero pivot
    with pytest.raises(ember.linalg.LinAlgError, match="D\\[1,1\\] is exactly zero"):
        ember.linalg.ldl_factor(ember.zeros(2, 2))


@pytest.mark.parametrize("fn", [
    lambda m, a: m.lstsq(a, a), lambda m, a: m.symeig(a), lambda m, a: m.eig(a),
    lambda m, a: m.solve(a, a), lambda m, a: m.matrix_rank(a), lambda m, a: a.lstsq(a),
    lambda m, a: a.symeig(), lambda m, a: a.eig(), lambda m, a: a.solve(a),
])
def test_functions_removed_in_torch_raise_as_torch(fn):
    error = check_raises(fn, [INVERTIBLE], match="This function was deprecated since version "
                                                 "1.9 and is now removed.")
    assert "torch.linalg" in str(error)


def test_deprecation_warnings():
    a = ember.tensor(INVERTIBLE)
    for fn in (lambda: ember.triangular_solve(a, a), lambda: ember.frobenius_norm(a, (0, 1)),
               lambda: ember.nuclear_norm(a)):
        with pytest.warns(UserWarning, match="deprecated"):
            fn()


def test_matrix_exp_of_half_precision_computes_in_float32():
    # torch 2.13's CPU half-precision matrix_exp returns inf/nan; ember rounds a float32 result
    a = np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32) / 2
    for dtype in (ember.float16, ember.bfloat16):
        result = ember.linalg.matrix_exp(ember.tensor(a).to(dtype))
        expected = torch.linalg.matrix_exp(torch.tensor(a)).to(getattr(torch, str(dtype)[6:]))
        assert result.dtype is dtype
        assert np.allclose(result.float().numpy(), expected.float().numpy(), rtol=1e-2, atol=1e-2)


def test_lu_solve_gradient_reaches_the_factors():
    rng = np.random.default_rng(3)
    check(lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b),
          [rng.standard_normal((3, 3)) + 3 * np.eye(3), rng.standard_normal((3, 2))])


def _low_rank(rank=3, shape=(12, 9), seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((shape[0], rank)) @ rng.standard_normal((rank, shape[1]))


@pytest.mark.parametrize("shape", [(12, 9), (7, 11)])
def test_svd_lowrank_recovers_a_low_rank_matrix(shape):
    a = _low_rank(shape=shape)
    x = ember.tensor(a, requires_grad=True)
    U, S, V = ember.svd_lowrank(x, q=5, niter=2)
    assert (U.shape, S.shape, V.shape) == ((shape[0], 5), (5,), (shape[1], 5))
    assert np.allclose(((U * S) @ V.mT).detach().numpy(), a, atol=1e-10)
    t = torch.tensor(a, requires_grad=True)
    _, S_t, _ = torch.svd_lowrank(t, q=5, niter=2)
    assert np.allclose(S.detach().numpy()[:3], S_t.detach().numpy()[:3], rtol=1e-10)
    S[:3].sum().backward()
    S_t[:3].sum().backward()
    assert np.allclose(x.grad.numpy(), t.grad.numpy(), atol=1e-8)


def test_pca_lowrank_matches_torch_on_low_rank_data():
    a = _low_rank(shape=(20, 6)) + 3.0
    U, S, V = ember.pca_lowrank(ember.tensor(a), q=3)
    _, S_t, V_t = torch.pca_lowrank(torch.tensor(a), q=3)
    assert np.allclose(S.numpy(), S_t.numpy(), rtol=1e-10)
    assert np.allclose(np.abs(V.numpy().T @ V_t.numpy()), np.eye(3), atol=1e-8)  # up to signs
    _, S_plain, _ = ember.pca_lowrank(ember.tensor(a), q=3, center=False)
    assert S_plain[0] > S[0]
    for fn, match in ((lambda m: m.pca_lowrank(m.ones(3, 4), q=5), "must be non-negative"),
                      (lambda m: m.pca_lowrank(m.ones(3, 4), niter=-1), "niter(=-1)")):
        check_raises(fn, [], match=match)


@pytest.mark.parametrize("fn, match", [
    (lambda m, a: m.linalg.eig(a.long()), "Unknown Complex ScalarType for Long"),
    (lambda m, a: m.linalg.eig(m.ones(3, 4)), "square matrices"),
    (lambda m, a: m.linalg.eigvals(a.half()), "not implemented for 'Half'"),
    (lambda m, a: m.linalg.eig(a[0]), "at least 2 dimensions"),
])
def test_eig_errors(fn, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's ComplexHalf warning
        check_raises(fn, [INVERTIBLE], match=match)


def test_eig_results_are_complex_and_satisfy_the_definition():
    a = ember.tensor(np.random.default_rng(2).standard_normal((2, 4, 4)))
    L, V = ember.linalg.eig(a)
    assert L.dtype is ember.complex128 and V.dtype is ember.complex128
    assert np.allclose((a.to(ember.complex128) @ V).numpy(), (V * L.unsqueeze(-2)).numpy())
    assert ember.linalg.eig(a.float()).eigenvalues.dtype is ember.complex64
    assert ember.linalg.eig(a).eigenvalues.grad_fn is None
    x = a.clone().requires_grad_()
    assert ember.linalg.eigvals(x).grad_fn.name() == "LinalgEigBackward0"
