"""block_diag, cartesian_prod, combinations, the *_copy functions, index_reduce,
nonzero_static, fill_diagonal_ and unravel_index beyond the op table: errors, autograd."""
import warnings

import numpy as np
import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")

A = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("fn, match", [
    (lambda m, a: m.block_diag(a[None]), "must have 2 or fewer dimensions. Input 0 has 3"),
    (lambda m, a: m.cartesian_prod(a[0], a[0].long()), "same dtype"),
    (lambda m, a: m.cartesian_prod(a), "Expect a 1D vector, but got shape [3, 4]"),
    (lambda m, a: m.combinations(a), "Expect a 1D vector"),
    (lambda m, a: m.combinations(a[0], r=-1), "Expect a non-negative number, but got -1"),
    (lambda m, a: m.nonzero_static(a, size=-1), "'size' must be an non-negative integer"),
    (lambda m, a: a[0].clone().fill_diagonal_(1), "dimensions must larger than 1"),
    (lambda m, a: m.ones(2, 2, 3).fill_diagonal_(1), "all dimensions of input must be of equal"),
    (lambda m, a: m.unravel_index(a, (3, 4)), "expected 'indices' to be integer dtype"),
    (lambda m, a: m.unravel_index(a.long(), (-3, 4)), "'shape' cannot have negative values"),
    (lambda m, a: m.unravel_index(a.long(), (3.5, 4)), "to only contain ints"),
    (lambda m, a: a.index_reduce(0, m.tensor([0, 1]), a[:2], "sum"),
     "Expected reduce to be one of prod, mean, amax or amin but got sum."),
    (lambda m, a: a.index_reduce(0, m.tensor([0.0, 1.0]), a[:2], "mean"),
     "Expected dtype int32/int64 for index but got: Float"),
    (lambda m, a: a.index_reduce(0, m.tensor([0, 1]), a[:2].long(), "mean"),
     "must have the same scalar type"),
    (lambda m, a: a.index_reduce(0, m.tensor([0, 3]), a[:2], "mean"), "index out of range"),
    (lambda m, a: a.index_reduce(0, m.tensor([0, 1]), a[:2, :3], "mean"),
     "source tensor shape must match self tensor shape"),
    (lambda m, a: m.view_copy(a, (5, 3)), "invalid for input of size 12"),
])
def test_errors_match_torch(fn, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check_raises(fn, [A], match=match)


def test_index_reduce_warns_it_is_beta():  # (torch warns once per process)
    with pytest.warns(UserWarning, match="index_reduce\\(\\) is in beta"):
        ember.ones(3).index_reduce(0, ember.tensor([0]), ember.ones(1), "prod")


def test_as_strided_scatter_gradient():
    # torch 2.13 routes the input's gradient to the overwritten elements (its own gradcheck
    # fails); ember's is the finite-difference one: zero where src was written
    a = ember.tensor(np.random.default_rng(0).standard_normal((3, 3)), requires_grad=True)
    s = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, s: ember.as_strided_scatter(a, s, (2,), (4,), 1),
                                    [a, s])


def test_fill_diagonal_records_a_copy_slices_node():
    for m in (ember, torch):
        x = m.ones(3, 3, requires_grad=True).clone()
        assert x.fill_diagonal_(2.0).grad_fn.name().endswith("CopySlices")
    check(lambda m, a: (a * 1).fill_diagonal_(0.0).sum(0), [A[:3, :3]])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        ember.ones(2, 2, requires_grad=True).fill_diagonal_(1)


def test_fill_diagonal_casts_the_value_like_fill():
    check(lambda m, a: a.long().fill_diagonal_(2.7), [A], grad=False)


def test_detach_copy_has_no_history():
    x = ember.ones(3, requires_grad=True)
    copy = ember.detach_copy(x)
    assert not copy.requires_grad and copy.data_ptr() != x.data_ptr()


def test_copies_do_not_share_memory():
    x = ember.tensor(A)
    for copy in (ember.view_copy(x, (4, 3)), ember.permute_copy(x, (1, 0)),
                 ember.alias_copy(x), ember.diagonal_copy(x), ember.t_copy(x)):
        copy.fill_(-1)
    assert np.array_equal(x.numpy(), A)
    assert ember.t_copy(x).is_contiguous()
