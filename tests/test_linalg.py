"""Linear algebra beyond the op table (tests/specs/linalg.py): torch's errors, named results,
graph node names, second derivatives, and einsum corner cases."""
import numpy as np
import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")


def randn(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def spd(n, batch=(), seed=0):
    b = randn(*batch, n, n, dtype=np.float64, seed=seed)
    return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)


# ----------------------------------------------------------------------------------------------
# products: errors


@pytest.mark.parametrize("fn, shapes, match", [
    (lambda m, a, b: m.mm(a, b), [(64, 100), (784, 128)],
     "mat1 and mat2 shapes cannot be multiplied (64x100 and 784x128)"),
    (lambda m, a, b: a @ b, [(5, 2, 3), (4, 4)], "mat1 and mat2 shapes cannot be multiplied (10x3"),
    (lambda m, a, b: a @ b, [(3,), (4, 4)], "mat1 and mat2 shapes cannot be multiplied (1x3"),
    (lambda m, a, b: a @ b, [(3,), (4,)], "inconsistent tensor size"),
    (lambda m, a, b: a @ b, [(2, 3), (4,)], "size mismatch, got input (2), mat (2x3), vec (4)"),
    (lambda m, a, b: a @ b, [(5, 2, 3), (4, 3, 4)],
     "The size of tensor a (5) must match the size of tensor b (4) at non-singleton dimension 0"),
    (lambda m, a, b: a @ b, [(5, 2, 3), (5, 4, 4)],
     "Expected size for first two dimensions of batch2 tensor to be: [5, 3] but got: [5, 4]."),
    (lambda m, a, b: m.mm(a, b), [(2, 3), (3,)], "mat2 must be a matrix"),
    (lambda m, a, b: m.mm(a, b), [(3,), (3, 2)], "self must be a matrix"),
    (lambda m, a, b: m.bmm(a, b), [(2, 3), (3, 4)], "batch1 must be a 3D tensor"),
    (lambda m, a, b: m.bmm(a, b), [(2, 2, 3), (2, 3)], "batch2 must be a 3D tensor"),
    (lambda m, a, b: m.bmm(a, b), [(2, 2, 3), (3, 3, 4)],
     "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3]."),
    (lambda m, a, b: m.baddbmm(a[:, :, :1], a, b), [(2, 2, 3), (3, 3, 4)],
     "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3]."),
    (lambda m, a, b: m.addbmm(a[0, :, :1], a, b), [(2, 2, 3), (3, 3, 4)],
     "batch1 and batch2 must have same number of batches, got 2 and 3"),
    (lambda m, a, b: m.addbmm(a[0, :, :1], a, b), [(2, 2, 3), (2, 4, 4)],
     "Incompatible matrix sizes for bmm (2x3 and 4x4)"),
    (lambda m, a, b: m.dot(a, b), [(3,), (4,)], "inconsistent tensor size"),
    (lambda m, a, b: m.dot(a, b), [(3, 1), (3,)], "1D tensors expected, but got 2D and 1D"),
    (lambda m, a, b: m.mv(a, b), [(2, 3), (4,)], "size mismatch, got input (2), mat (2x3)"),
    (lambda m, a, b: m.mv(a, b), [(2, 3), (3, 1)], "vector + matrix @ vector expected"),
    (lambda m, a, b: m.addmm(a[:, 0], a, b), [(2, 3), (3, 4)], "The expanded size of the tensor"),
    (lambda m, a, b: m.addr(a, a[0], b[0]), [(2, 3), (3, 4)], ""),
    (lambda m, a, b: m.addr(a, a, b[0]), [(2, 3), (3, 4)], "addr: Expected 1-D argument vec1"),
    (lambda m, a, b: m.outer(a, b), [(3, 1), (2,)], "outer: Expected 1-D argument self"),
    (lambda m, a, b: m.inner(a, b), [(2, 3), (4, 4)], "inner() the last dimension must match"),
    (lambda m, a, b: m.tensordot(a, b, 1), [(2, 3), (4, 5)], "contracted dimensions need"),
    (lambda m, a, b: m.tensordot(a, b, -1), [(2, 3), (3, 5)], "tensordot expects dims >= 0"),
    (lambda m, a, b: m.tensordot(a, b, ([1], [0, 1])), [(2, 3), (3, 5)],
     "both dimension lists should have same length"),
    (lambda m, a, b: m.linalg.multi_dot([a]), [(2, 3), (3, 4)], "expected at least 2 tensors"),
    (lambda m, a, b: m.linalg.multi_dot([a, b, a]), [(2, 3), (3, 4)],
     "multi_dot(): tensors 1 and 2 with shapes [3, 4] and [2, 3] cannot be multiplied"),
    (lambda m, a, b: m.linalg.multi_dot([a, b[0], b]), [(2, 3), (3, 4)],
     "multi_dot(): tensor 1 must be 2D but got 1D"),
    (lambda m, a, b: m.linalg.cross(a, b), [(2, 2), (2, 2)], "must have length 3. Got 2 and 2"),
    (lambda m, a, b: m.linalg.cross(a, b), [(3,), (2, 3)], "same number of dimensions"),
    (lambda m, a, b: m.cross(a, b), [(2, 4), (2, 4)], "no dimension of size 3 in input"),
    (lambda m, a, b: m.trace(a[0]), [(2, 3), (3, 4)], "trace: expected a matrix"),
    (lambda m, a, b: m.matmul(a, b[0, 0]), [(2, 3), (3, 4)], "need to be at least 1D"),
])
def test_product_errors(fn, shapes, match):
    check_raises(fn, [randn(*s) for s in shapes], match=match)


@pytest.mark.parametrize("fn, match", [
    (lambda m, a, b: m.mm(a, b), "expected m1 and m2 to have the same dtype, but got: "
                                 "float != double"),
    (lambda m, a, b: a @ b, "expected m1 and m2 to have the same dtype, but got: float != double"),
    (lambda m, a, b: m.dot(a[0], b[:, 0]), "dot : expected both vectors to have same dtype, but "
                                           "found Float and Double"),
    (lambda m, a, b: m.bmm(a[None], b[None]), "expected scalar type Float but found Double"),
    (lambda m, a, b: m.addmm(b[:, :3], a, a.mT), "self and mat2 must have the same dtype"),
    (lambda m, a, b: m.linalg.multi_dot([a, b]), "multi_dot(): all tensors must have be the "
                                                 "same dtype but tensor 0 is float and tensor 1 "
                                                 "double"),
    (lambda m, a, b: m.einsum("ij,jk", a, b), "expected scalar type Float but found Double"),
    (lambda m, a, b: m.tensordot(a, b, 1), "both inputs should have same dtype"),
    (lambda m, a, b: m.linalg.solve(b[:, :3], a.mT), "linalg.solve: Expected A and B to have the "
                                                     "same dtype"),
    (lambda m, a, b: m.linalg.vecdot(a, b.mT), "linalg.vecdot: Expected x and y to have the same "
                                               "dtype"),
])
def test_dtype_mismatch(fn, match):
    check_raises(fn, [randn(2, 3), randn(3, 4, dtype=np.float64)], match=match)


@pytest.mark.parametrize("fn", [
    lambda m, a: a @ a, lambda m, a: m.mm(a, a), lambda m, a: m.dot(a[0], a[0]),
    lambda m, a: m.mv(a, a[0]), lambda m, a: m.bmm(a[None], a[None]), lambda m, a: m.trace(a),
])
def test_bool_products_are_not_implemented(fn):
    check_raises(fn, [np.ones((3, 3), dtype=bool)])


@pytest.mark.parametrize("fn", [
    lambda m, a: a @ 2, lambda m, a: 2 @ a, lambda m, a: m.mm(a, 2), lambda m, a: m.einsum("i", 3),
    lambda m, a: m.linalg.inv([[1.0]]), lambda m, a: m.addmm(a, a, [[1.0]]),
    lambda m, a: m.linalg.vector_norm([1.0]),
])
def test_non_tensor_arguments(fn):
    check_raises(fn, [randn(2, 2)])


def test_integer_products():
    a, b = np.arange(6).reshape(2, 3), np.arange(12).reshape(3, 4)
    check(lambda m, a, b: (a @ b, m.addmm(b[0], a, b, beta=2, alpha=3), m.trace(a[:, :2]),
                           m.einsum("ij,jk->k", a, b)), [a, b], grad=False)


def test_addmm_beta_zero_ignores_nan():
    c = np.full((2, 4), np.nan, dtype=np.float32)
    check(lambda m, c, a, b: (m.addmm(c, a, b, beta=0), m.addmv(c[0, :2], a, b[:, 0], beta=0),
                              m.addr(c[:, :3], a[:, 0], a[0], beta=0)),
          [c, randn(2, 3), randn(3, 4)])


def test_inplace_addmm_checks_leaf():
    check_raises(lambda m, c, a, b: c.requires_grad_().addmm_(a, b),
                 [randn(2, 4), randn(2, 3), randn(3, 4)])


def test_deprecated_spellings_warn():
    a = ember.randn(2, 3)
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        ember.chain_matmul(a, a.mT)
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated"):
        ember.cholesky(a @ a.mT + ember.eye(2))
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        ember.cross(a.mT, a.mT)


# ----------------------------------------------------------------------------------------------
# graph node names


@pytest.mark.parametrize("fn, shapes", [
    (lambda m, a, b: a @ b, [(2, 3), (3, 4)]),
    (lambda m, a, b: a @ b, [(3,), (3,)]),
    (lambda m, a, b: a @ b, [(2, 3), (3,)]),
    (lambda m, a, b: a @ b, [(5, 2, 3), (5, 3, 4)]),
    (lambda m, a, b: m.bmm(a, b), [(5, 2, 3), (5, 3, 4)]),
    (lambda m, a, b: m.addmm(b[0], a, b), [(2, 3), (3, 4)]),
    (lambda m, a, b: m.addmv(a[:, 0], a, b[:, 0]), [(2, 3), (3, 4)]),
    (lambda m, a, b: m.addr(a, a[:, 0], b[:, 0]), [(2, 3), (3, 4)]),
    (lambda m, a, b: m.baddbmm(a, a, b), [(2, 2, 3), (2, 3, 3)]),
    (lambda m, a, b: m.addbmm(a[0], a, b), [(2, 2, 3), (2, 3, 3)]),
    (lambda m, a, b: m.vdot(a, b), [(3,), (3,)]),
    (lambda m, a, b: m.trace(a), [(3, 3), (1,)]),
    (lambda m, a, b: m.linalg.cross(a, b), [(3,), (3,)]),
    (lambda m, a, b: m.linalg.inv(a), [(3, 3), (1,)]),
    (lambda m, a, b: m.linalg.det(a), [(3, 3), (1,)]),
    (lambda m, a, b: m.linalg.slogdet(a)[1], [(3, 3), (1,)]),
    (lambda m, a, b: m.linalg.solve(a, b), [(3, 3), (3, 2)]),
    (lambda m, a, b: m.linalg.qr(a)[0], [(3, 2), (1,)]),
    (lambda m, a, b: m.linalg.svd(a)[1], [(3, 2), (1,)]),
    (lambda m, a, b: m.linalg.svdvals(a), [(3, 2), (1,)]),
    (lambda m, a, b: m.linalg.pinv(a), [(3, 2), (1,)]),
    (lambda m, a, b: m.linalg.lstsq(a, b)[0], [(3, 2), (3, 1)]),
    (lambda m, a, b: m.linalg.vector_norm(a), [(3, 2), (1,)]),
])
def test_node_names(fn, shapes):
    names = []
    for lib, make in ((ember, ember.tensor), (torch, torch.tensor)):
        inputs = [make(randn(*s), requires_grad=True) for s in shapes]
        names.append(fn(lib, *inputs).grad_fn.name())
    assert names[0] == names[1]


def test_cholesky_and_eigh_node_names():
    for lib, make in ((ember, ember.tensor), (torch, torch.tensor)):
        a = make(spd(3), requires_grad=True)
        assert lib.linalg.cholesky(a).grad_fn.name() == "LinalgCholeskyExBackward0"
        assert lib.linalg.eigh(a)[0].grad_fn.name() == "LinalgEighBackward0"
        assert lib.linalg.eigvalsh(a).grad_fn.name() == "LinalgEighBackward0"


# ----------------------------------------------------------------------------------------------
# named results


@pytest.mark.parametrize("fn, fields", [
    (lambda m, a: m.linalg.slogdet(a), ("sign", "logabsdet")),
    (lambda m, a: m.slogdet(a), ("sign", "logabsdet")),
    (lambda m, a: m.linalg.qr(a), ("Q", "R")),
    (lambda m, a: m.qr(a), ("Q", "R")),
    (lambda m, a: m.linalg.svd(a), ("U", "S", "Vh")),
    (lambda m, a: m.svd(a), ("U", "S", "V")),
    (lambda m, a: m.linalg.eigh(a), ("eigenvalues", "eigenvectors")),
    (lambda m, a: m.linalg.lstsq(a, a), ("solution", "residuals", "rank", "singular_values")),
])
def test_named_results(fn, fields):
    a = spd(3)
    e = fn(ember, ember.tensor(a))
    t = fn(torch, torch.tensor(a))
    assert type(e).__name__ == type(t).__name__
    assert len(e) == len(t) == len(fields)
    first, *rest = e  # unpacks like a tuple
    for i, name in enumerate(fields):
        ours, theirs = getattr(e, name), getattr(t, name)
        assert ours is e[i]
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert first is e[0] and e[-1] is e[len(fields) - 1]
    assert getattr(ember.return_types, type(e).__name__) is type(e)


def test_named_result_values_and_legacy_svd():
    a = randn(4, 3, dtype=np.float64)
    check(lambda m, a: (m.linalg.slogdet(a[:3]).logabsdet, m.linalg.lstsq(a, a[:, :2]).rank,
                        m.svd(a).S, m.svd(a, compute_uv=False).V), [a], grad=False)


# ----------------------------------------------------------------------------------------------
# decompositions: errors


@pytest.mark.parametrize("fn, inputs, match", [
    (lambda m, a: m.linalg.inv(a), [np.zeros((3, 3))], "the input matrix is singular"),
    (lambda m, a: m.linalg.inv(a), [np.zeros((2, 3, 3))], "(Batch element 0)"),
    (lambda m, a: m.inverse(a), [np.stack([np.eye(2), np.zeros((2, 2))])], "(Batch element 1)"),
    (lambda m, a: m.linalg.matrix_power(a, -1), [np.zeros((3, 3))], "singular"),
    (lambda m, a: m.linalg.solve(a, a[0]), [np.zeros((3, 3))], "torch.linalg.solve: The solver "
                                                               "failed because the input matrix "
                                                               "is singular."),
    (lambda m, a: m.linalg.cholesky(a), [-np.eye(3)], "linalg.cholesky: The factorization could "
                                                      "not be completed because the input is not "
                                                      "positive-definite (the leading minor of "
                                                      "order 1 is not positive-definite)."),
    (lambda m, a: m.linalg.cholesky(a), [np.stack([np.eye(3), np.diag([1.0, 2.0, -1.0])])],
     "(Batch element 1): The factorization could not be completed because the input is not "
     "positive-definite (the leading minor of order 3 is not positive-definite)."),
])
def test_singular_inputs_raise_linalg_error(fn, inputs, match):
    # torch raises torch.linalg.LinAlgError; ember its own RuntimeError subclass of that name
    with pytest.raises(torch.linalg.LinAlgError):
        fn(torch, *[torch.tensor(x) for x in inputs])
    with pytest.raises(ember.linalg.LinAlgError) as info:
        fn(ember, *[ember.tensor(x) for x in inputs])
    assert isinstance(info.value, RuntimeError)
    assert type(info.value).__name__ == "LinAlgError"
    assert match in str(info.value)


@pytest.mark.parametrize("fn, inputs, match", [
    (lambda m, a: m.linalg.inv(a), [randn(2, 3)], "linalg.inv: A must be batches of square "
                                                  "matrices, but they are 2 by 3 matrices"),
    (lambda m, a: m.linalg.det(a), [randn(3)], "linalg.det: The input tensor A must have at "
                                               "least 2 dimensions."),
    (lambda m, a: m.linalg.det(a), [np.ones((3, 3), dtype=np.int64)],
     "linalg.det: Expected a floating point or complex tensor as input. Got Long"),
    (lambda m, a: m.linalg.inv(a), [np.eye(3, dtype=np.float16)],
     "linalg.inv: Low precision dtypes not supported. Got Half"),
    (lambda m, a: m.linalg.eigh(a), [randn(2, 3)], "linalg.eigh: A must be batches of square"),
    (lambda m, a: m.linalg.eigh(a, UPLO="X"), [randn(3, 3)], "Expected UPLO argument"),
    (lambda m, a: m.linalg.svd(a), [randn(3)], "linalg.svd: The input tensor A must have at "
                                               "least 2 dimensions."),
    (lambda m, a: m.linalg.svd(a, driver="gesvd"), [randn(3, 3)], "driver"),
    (lambda m, a: m.linalg.qr(a, mode="x"), [randn(3, 3)], "qr received unrecognized mode 'x'"),
    (lambda m, a: m.linalg.solve(a, a[0, :2]), [randn(3, 3)], "Incompatible shapes of A and B "
                                                              "for the equation AX = B"),
    (lambda m, a: m.linalg.solve(a, a[:2, :2], left=False), [randn(3, 3)],
     "Incompatible shapes of A and B for the equation XA = B"),
    (lambda m, a: m.linalg.matrix_power(a, 2), [randn(2, 3)], "linalg.matrix_power: A must be "
                                                              "batches of square matrices"),
    (lambda m, a: m.linalg.matrix_power(a, -1), [np.eye(3, dtype=np.int64)],
     "Expected a floating point or complex tensor as input. Got Long"),
    (lambda m, a: m.linalg.vector_norm(a), [np.ones(3, dtype=np.int64)],
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    (lambda m, a: m.linalg.vector_norm(a, "fro"), [randn(3)], "must be Number, not str"),
    (lambda m, a: m.linalg.vector_norm(a, float("inf")), [randn(0, 3)],
     "cannot compute the inf norm on an empty tensor"),
    (lambda m, a: m.linalg.matrix_norm(a), [randn(3)], "linalg.matrix_norm: The input tensor A "
                                                       "must have at least 2 dimensions."),
    (lambda m, a: m.linalg.matrix_norm(a, 3), [randn(3, 3)], "linalg.matrix_norm: Order 3 not "
                                                             "supported."),
    (lambda m, a: m.linalg.matrix_norm(a, dim=(0, 0)), [randn(3, 3)], "dims must be different"),
    (lambda m, a: m.linalg.norm(a, 2), [randn(2, 2, 2)], "linalg.norm: If dim is not specified "
                                                         "but ord is, the input must be 1D or "
                                                         "2D. Got 3D."),
    (lambda m, a: m.linalg.lstsq(a, a, driver="foo"), [randn(3, 3)], "parameter `driver`"),
    (lambda m, a: m.linalg.lstsq(a, a[:2]), [randn(3, 3)], "input.size(-2) should match "
                                                           "other.size(-2)"),
    (lambda m, a: m.linalg.pinv(a), [randn(3)], "expected a tensor with 2 or more dimensions"),
])
def test_decomposition_errors(fn, inputs, match):
    check_raises(fn, inputs, match=match)


@pytest.mark.parametrize("fn, match", [
    (lambda m, a: m.linalg.qr(a, mode="r").R.sum(), "depends on Q, which is not computed"),
    (lambda m, a: m.linalg.qr(a, mode="complete").Q.sum(), "not differentiable when "
                                                           "mode='complete' and nrows > ncols"),
])
def test_qr_backward_errors(fn, match):
    check_raises(lambda m, a: fn(m, a.requires_grad_()).backward(), [randn(4, 3)], match=match)


# ----------------------------------------------------------------------------------------------
# second derivatives (rules are written with ember ops)


@pytest.mark.parametrize("fn, shapes", [
    (lambda a, b: a @ b, [(2, 3), (3, 4)]),
    (lambda a, b: a @ b, [(3,), (2, 3, 4)]),
    (lambda a, b: ember.addmm(b[0], a, b, beta=0.5, alpha=2), [(2, 3), (3, 4)]),
    (lambda a, b: ember.einsum("ij,jk->ik", a, b), [(2, 3), (3, 4)]),
    (lambda a, b: ember.einsum("ii,ij->j", a, b), [(3, 3), (3, 2)]),
    (lambda a, b: ember.einsum("...ij,jk->...k", a, b), [(2, 2, 3), (3, 4)]),
    (lambda a, b: ember.linalg.solve(a + 3 * ember.eye(3, dtype=a.dtype), b), [(3, 3), (3, 2)]),
    (lambda a, b: ember.linalg.inv(a + 3 * ember.eye(3, dtype=a.dtype)) @ b, [(3, 3), (3, 2)]),
    (lambda a, b: ember.linalg.det(a + 3 * ember.eye(3, dtype=a.dtype)) * b, [(3, 3), (2,)]),
    (lambda a, b: ember.linalg.pinv(a) @ b, [(4, 3), (4, 2)]),
])
def test_second_derivatives(fn, shapes):
    inputs = [ember.tensor(randn(*s, dtype=np.float64, seed=i), requires_grad=True)
              for i, s in enumerate(shapes)]
    assert ember.autograd.gradgradcheck(fn, inputs)


@pytest.mark.parametrize("fn", [
    lambda b: ember.linalg.cholesky(b @ b.mT + 3 * ember.eye(3, dtype=b.dtype)),
    lambda b: tuple(ember.linalg.qr(b)),
    lambda b: ember.linalg.eigvalsh(b @ b.mT),
    lambda b: ember.linalg.svdvals(b),
    lambda b: ember.linalg.slogdet(b @ b.mT + ember.eye(3, dtype=b.dtype)).logabsdet.reshape(1),
    lambda b: ember.linalg.eigh(b @ b.mT).eigenvectors ** 2,
    lambda b: (ember.linalg.svd(b[:2]).U ** 2, ember.linalg.svd(b[:, :2]).Vh ** 2),
    lambda b: tuple(ember.linalg.qr(b[:2])),
])
def test_second_derivatives_of_decompositions(fn):
    b = ember.tensor(randn(3, 3, dtype=np.float64, seed=3), requires_grad=True)
    assert ember.autograd.gradgradcheck(fn, [b])


# ----------------------------------------------------------------------------------------------
# einsum corner cases


@pytest.mark.parametrize("equation, shapes, match", [
    ("ij,jk", [(2, 3)], "fewer operands were provided than specified in the equation"),
    ("ij", [(2, 3), (3, 4)], "more operands were provided than specified in the equation"),
    ("ijk", [(2, 3)], "the number of subscripts in the equation (3) does not match the number "
                      "of dimensions (2) for operand 0 and no ellipsis was given"),
    ("ii", [(2, 3)], "subscript i is repeated for operand 0 but the sizes don't match, 2 != 3"),
    ("ij,jk", [(2, 3), (4, 4)], "subscript j has size 4 for operand 1 which does not broadcast "
                                "with previously seen size 3"),
    ("ij,jk->ii", [(2, 3), (3, 4)], "output subscript i appears more than once in the output"),
    ("ij,jk->l", [(2, 3), (3, 4)], "output subscript l does not appear in the equation for any "
                                   "input operand"),
    ("i.j", [(2, 3)], "found '.' for operand 0 that is not part of any ellipsis"),
    ("i1", [(2, 3)], "invalid subscript given at index 1"),
    ("...i,...i", [(2, 3), (4, 3)], "covered by ellipsis in operand 1"),
    ("...ij", [(2,)], "number of subscripts in the equation (2) is more than the number of "
                      "dimensions (1) for operand 0"),
])
def test_einsum_errors(equation, shapes, match):
    check_raises(lambda m, *ops: m.einsum(equation, *ops), [randn(*s) for s in shapes],
                 match=match)


def test_einsum_call_form_errors():
    check_raises(lambda m: m.einsum("ij"))
    check_raises(lambda m, a: m.einsum(a, [0, 60]), [randn(2, 3)])


@pytest.mark.parametrize("equation, shapes", [
    ("i,j->...", [(2,), (3,)]),       # an output ellipsis that covers no dims
    ("...i->i", [(2, 3)]),            # ellipsis dims summed away
    ("ij->ij", [(1, 3)]),             # identity
    ("->", [()]),                     # scalar
    ("i,j", [(2,), (3,)]),            # implicit outer product
    ("Ab,bA->A", [(2, 3), (3, 2)]),   # upper-case labels
    ("i...,i", [(2, 3, 4), (2,)]),    # leading label with trailing ellipsis
    ("iij,jkk->ik", [(3, 3, 2), (2, 4, 4)]),  # diagonals on both operands
    ("ab,cd,bc->ad", [(2, 3), (4, 5), (3, 4)]),  # greedy order
])
def test_einsum_more_equations(equation, shapes):
    check(lambda m, *ops: m.einsum(equation, *ops),
          [randn(*s, seed=k) for k, s in enumerate(shapes)])


def test_einsum_result_does_not_alias_its_input():
    a = ember.randn(3, 3)
    out = ember.einsum("ij->ji", a)
    out.add_(1)
    assert not np.shares_memory(np.asarray(out), np.asarray(a))


def test_einsum_float32_uses_matrix_products():
    """The attention contraction runs as one batched matmul: float32 in, float32 out, and
    the answer equals a @ b^T computed directly."""
    q, k = ember.randn(2, 3, 16, 8), ember.randn(2, 3, 16, 8)
    out = ember.einsum("bhqd,bhkd->bhqk", q, k)
    assert out.dtype is ember.float32
    np.testing.assert_allclose(np.asarray(out), np.asarray(q @ k.mT), rtol=1e-5, atol=1e-5)


STACKS = {
    "matmul_4d": (lambda m, a, b: a @ b, (6, 3, 20, 30), (6, 3, 30, 25)),
    "matmul_transposed_operand": (lambda m, a, b: a @ b.transpose(-2, -1), (6, 3, 20, 30),
                                  (6, 3, 25, 30)),
    "bmm": (lambda m, a, b: m.bmm(a, b), (9, 40, 30), (9, 30, 20)),
    "broadcast_keeps_plain_path": (lambda m, a, b: a @ b, (6, 3, 20, 30), (3, 30, 25)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(STACKS))
def test_stacked_products_on_threads(name, dtype, monkeypatch):
    """On two threads a stack of products is shared out among ember's threads
    (linalg._stacked_matmul): the same values as one NumPy call on one thread, and torch's
    values and gradients."""
    from ember.ops import linalg as linalg_ops

    fn, a_shape, b_shape = STACKS[name]
    a, b = randn(*a_shape, dtype=dtype, seed=1), randn(*b_shape, dtype=dtype, seed=2)
    monkeypatch.setattr(linalg_ops, "_STACK_SPLIT_MIN", 0)
    regions = []

    def counted(fn, items):
        regions.append(len(items))
        return real(fn, items)
    real = linalg_ops.parallel_map
    monkeypatch.setattr(linalg_ops, "parallel_map", counted)
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        plain = fn(ember, ember.tensor(a), ember.tensor(b)).numpy()
        ember.set_num_threads(2)
        split = fn(ember, ember.tensor(a), ember.tensor(b)).numpy()
        forward_regions = list(regions)
        check(fn, [a, b], rtol=1e-5, atol=1e-5)
    finally:
        ember.set_num_threads(before)
    np.testing.assert_allclose(split, plain, rtol=1e-6, atol=1e-6)
    assert bool(forward_regions) == (name != "broadcast_keeps_plain_path")
