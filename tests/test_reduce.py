"""Reductions, scans and sorting beyond the op table (tests/specs/reduce.py): grad_fn names,
named-tuple results, ties, NaN and infinities, zeros in prod/cumprod, double backward, dtypes of
results, empty inputs and torch's errors. Expected values come from torch (tests/oracle.py) or,
for ember-only checks, from finite differences (gradcheck / gradgradcheck).
"""
import math
import pickle

import numpy as np
import pytest

import ember
from ember.ops import reduce as reduce_ops

from .oracle import check, check_raises

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")
rng = np.random.default_rng(7)
X = rng.standard_normal((3, 4)).astype(np.float32)
X64 = X.astype(np.float64)
TIES = np.array([[1.0, 3.0, 3.0, 0.0, 3.0], [2.0, 2.0, 1.0, 1.0, 0.0], [4.0, 4.0, 4.0, 4.0, 4.0]],
                np.float32)
ZEROS = np.array([[1.5, 0.5, 2.0, -1.0], [1.5, 0.0, 2.0, -1.0], [0.0, 0.5, 0.0, -1.0]],
                 np.float32)
# a NaN in two rows and none in one (which index torch picks among several NaNs, or for
# kthvalue among ties, depends on its selection algorithm, so this data avoids both)
WITH_NAN = np.array([[1.0, NAN, 0.5, 2.0], [3.0, -1.0, 0.25, 1.5], [-2.0, 0.75, NAN, 4.0]],
                    np.float32)
ALL_NAN = np.full((2, 3), NAN, np.float32)


# ----------------------------------------------------------------------------------------------
# grad_fn names

GRAD_FNS = {
    "sum": lambda m, x: x.sum(), "sum_dim": lambda m, x: x.sum(1),
    "mean": lambda m, x: x.mean(), "mean_dim": lambda m, x: x.mean((0, 1)),
    "nansum": lambda m, x: x.nansum(1), "nanmean": lambda m, x: x.nanmean(),
    "prod": lambda m, x: x.prod(), "prod_dim": lambda m, x: x.prod(0),
    "max": lambda m, x: x.max(), "max_dim": lambda m, x: x.max(1).values,
    "min": lambda m, x: x.min(), "min_dim": lambda m, x: x.min(0)[0],
    "amax": lambda m, x: x.amax(1), "amin": lambda m, x: x.amin(),
    "aminmax": lambda m, x: m.aminmax(x).max, "var": lambda m, x: x.var(1),
    "std": lambda m, x: x.std(), "var_mean": lambda m, x: m.var_mean(x)[1],
    "std_mean": lambda m, x: m.std_mean(x, 0)[0], "logsumexp": lambda m, x: x.logsumexp(1),
    "norm": lambda m, x: m.norm(x), "norm_p": lambda m, x: x.norm(3, dim=0),
    "median": lambda m, x: x.median(), "median_dim": lambda m, x: x.median(0).values,
    "nanmedian": lambda m, x: x.nanmedian(), "nanmedian_dim": lambda m, x: x.nanmedian(1)[0],
    "mode": lambda m, x: x.mode(0).values, "kthvalue": lambda m, x: x.kthvalue(2).values,
    "topk": lambda m, x: x.topk(2).values, "sort": lambda m, x: x.sort().values,
    "sort_stable": lambda m, x: x.sort(stable=True).values, "msort": lambda m, x: x.msort(),
    "cumsum": lambda m, x: x.cumsum(0), "cumprod": lambda m, x: x.cumprod(1),
    "cummax": lambda m, x: x.cummax(1).values, "cummin": lambda m, x: x.cummin(0).values,
    "logcumsumexp": lambda m, x: x.logcumsumexp(0), "diff": lambda m, x: x.diff(),
}


@pytest.mark.parametrize("name", list(GRAD_FNS))
def test_grad_fn_name_matches_torch(name):
    fn = GRAD_FNS[name]
    e = fn(ember, ember.tensor(X, requires_grad=True))
    t = fn(torch, torch.tensor(X, requires_grad=True))
    assert e.grad_fn.name() == type(t.grad_fn).__name__


# ----------------------------------------------------------------------------------------------
# named tuples


@pytest.mark.parametrize("name,fn", [
    ("max", lambda m, x: m.max(x, 1)), ("min", lambda m, x: x.min(0, keepdim=True)),
    ("median", lambda m, x: x.median(1)), ("nanmedian", lambda m, x: x.nanmedian(0)),
    ("mode", lambda m, x: x.mode()), ("kthvalue", lambda m, x: x.kthvalue(1, 0)),
    ("topk", lambda m, x: x.topk(2)), ("sort", lambda m, x: m.sort(x, 0)),
    ("cummax", lambda m, x: x.cummax(1)), ("cummin", lambda m, x: m.cummin(x, 0)),
    ("aminmax", lambda m, x: m.aminmax(x, dim=1)),
])
def test_named_tuple_results(name, fn):
    e = fn(ember, ember.tensor(X))
    t = fn(torch, torch.tensor(X))
    assert type(e).__name__ == type(t).__name__ == name
    assert type(e) is getattr(ember.return_types, name)
    assert isinstance(e, tuple) and len(e) == len(t) == 2
    fields = ("min", "max") if name == "aminmax" else ("values", "indices")
    for i, field in enumerate(fields):
        np.testing.assert_array_equal(getattr(e, field).numpy(), getattr(t, field).numpy())
        np.testing.assert_array_equal(e[i].numpy(), t[i].numpy())
    first, second = e
    assert first is e[0] and second is e[1]
    assert repr(e).startswith(f"ember.return_types.{name}(\n{fields[0]}=")
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is type(e)
    np.testing.assert_array_equal(again[1].numpy(), e[1].numpy())


def test_var_mean_and_unique_return_plain_tuples():
    x = ember.tensor(X)
    assert type(ember.var_mean(x)) is tuple and type(ember.std_mean(x, 0)) is tuple
    assert type(ember.unique(x, return_counts=True)) is tuple


# ----------------------------------------------------------------------------------------------
# ties: which index wins, and how the gradient is shared


@pytest.mark.parametrize("fn", [
    lambda m, x: x.max(), lambda m, x: x.min(), lambda m, x: x.median(),
    lambda m, x: x.amax(1), lambda m, x: m.amin(x, (0, 1)), lambda m, x: m.amax(x, 0, True),
    lambda m, x: m.aminmax(x, dim=1), lambda m, x: m.norm(x, INF, 1),
    lambda m, x: x.max(1), lambda m, x: x.min(1, keepdim=True), lambda m, x: x.argmax(1),
    lambda m, x: x.argmin(1), lambda m, x: x.argmax(), lambda m, x: x.median(1),
    lambda m, x: x.sort(1), lambda m, x: x.sort(1, descending=True),
    lambda m, x: m.argsort(x, 0, descending=True), lambda m, x: x.sort(stable=True, dim=0),
    lambda m, x: x.cummax(1), lambda m, x: x.cummin(1), lambda m, x: x.mode(1),
    lambda m, x: m.mode(x, 0),
], ids=lambda f: "")
def test_ties_match_torch(fn):
    """Values, indices and gradients (shared evenly for max()/amax/median(), all to one index
    for max(dim) and sort, accumulated for cummax) agree with torch on tied inputs."""
    check(fn, [TIES])


@pytest.mark.parametrize("a", [np.array([2, 1, 2, 1, 3]), np.array([5, 5, 1, 1, 5, 1, 0]),
                               np.array([0.5, 0.5, 1.5]), np.array([1.0, NAN, NAN]),
                               np.array([7, 7, 7])])
def test_mode_picks_smallest_most_frequent_and_its_last_index(a):
    check(lambda m, x: x.mode(), [a.astype(np.float32) if a.dtype.kind == "f" else a])


# ----------------------------------------------------------------------------------------------
# NaN and infinities


@pytest.mark.parametrize("fn", [
    lambda m, x: x.max(), lambda m, x: x.min(1), lambda m, x: x.argmax(1),
    lambda m, x: x.argmin(), lambda m, x: x.amax(1), lambda m, x: x.sort(1),
    lambda m, x: x.sort(1, descending=True), lambda m, x: x.argsort(0),
    lambda m, x: x.topk(2, 1), lambda m, x: x.median(), lambda m, x: x.median(1),
    lambda m, x: x.nanmedian(), lambda m, x: x.nanmedian(1), lambda m, x: x.nanmedian(0),
    lambda m, x: x.cummax(1), lambda m, x: x.cummin(1), lambda m, x: x.nansum(1),
    lambda m, x: x.nanmean(1), lambda m, x: x.kthvalue(2, 1), lambda m, x: x.mode(1),
], ids=lambda f: "")
def test_nan_handling_matches_torch(fn):
    check(fn, [WITH_NAN])


def test_nan_handling_without_gradients():
    check(lambda m, x: (m.unique(x, return_counts=True), m.histc(x, 4, -1, 3)), [WITH_NAN],
          grad=False)
    # all NaN: the value is NaN (which NaN's index torch reports depends on its algorithm)
    check(lambda m, x: (x.median(), x.nanmedian(), x.max(), x.median(1).values,
                        x.nanmedian(0).values, x.sort(1).values, x.amin(1)), [ALL_NAN])


@pytest.mark.parametrize("a", [np.array([[1000.0, 1000.0], [-1000.0, -1000.0]]),
                               np.array([[INF, 1.0], [-INF, -INF]]),
                               np.array([[-INF, 2.0], [1e30, -1e30]])])
def test_logsumexp_is_stable(a):
    check(lambda m, x: (x.logsumexp(1), m.logsumexp(x, 0, keepdim=True)),
          [a.astype(np.float32)], grad=not np.isinf(a).any())


def test_logcumsumexp_is_stable():
    big = np.array([[300.0, -200.0, 500.0, 499.0], [-INF, 1.0, INF, 0.0]], np.float32)
    check(lambda m, x: x.logcumsumexp(1), [big[:1]])
    check(lambda m, x: x.logcumsumexp(1), [big], grad=False)


def test_histc_ignores_values_outside_the_range_and_includes_the_right_edge():
    a = np.array([0.0, 1, 2, 3, -0.1, 3.1, 1.5, NAN], np.float32)
    check(lambda m, x: (m.histc(x, 3, 0, 3), x.histc(bins=1, min=1, max=2)), [a])
    check(lambda m, x: m.histc(x, 3), [np.array([2.0, 2.0], np.float32)])  # a one-point range


# ----------------------------------------------------------------------------------------------
# zeros in prod / cumprod, and double backward


def test_prod_and_cumprod_gradients_with_zeros():
    fns = lambda m, x: (x.prod(), x.prod(1), x.prod(0, keepdim=True), x.cumprod(1),  # noqa: E731
                        x.cumprod(0))
    check(fns, [ZEROS])
    check(lambda m, x: (x.prod(), x.cumprod(0)), [np.array([0.0, 0.0, 2.0], np.float32)])
    check(lambda m, x: (x.prod(), x.cumprod(0)), [np.array([3.0, 0.0, 2.0], np.float32)])


@pytest.mark.parametrize("fn", [lambda x: x.prod(), lambda x: x.prod(1), lambda x: x.cumprod(1),
                                lambda x: x.cumprod(0)], ids=["prod", "prod_dim", "cumprod1",
                                                              "cumprod0"])
def test_prod_gradients_with_zeros_pass_gradcheck_twice(fn):
    x = ember.tensor(ZEROS.astype(np.float64), requires_grad=True)
    g = ember.tensor(rng.standard_normal(tuple(fn(x).shape)), requires_grad=True)
    assert ember.autograd.gradcheck(fn, (x,))
    assert ember.autograd.gradgradcheck(fn, (x,), (g,))


def _double_backward(m, fn, a, seed=0):
    """Second derivatives of fn's first output: d/d(x, g) of sum(v * dfn/dx . g)."""
    r = np.random.default_rng(seed)
    x = (ember.tensor if m is ember else torch.tensor)(a, requires_grad=True)
    out = fn(m, x)
    g0 = r.standard_normal(tuple(out.shape)).astype(a.dtype)
    v0 = r.standard_normal(a.shape).astype(a.dtype)
    g = (ember.tensor if m is ember else torch.tensor)(g0, requires_grad=True)
    v = (ember.tensor if m is ember else torch.tensor)(v0)
    (gx,) = m.autograd.grad(out, x, g, create_graph=True)
    if not gx.requires_grad:
        return [np.zeros_like(a), np.zeros_like(g0)]
    second = m.autograd.grad((gx * v).sum(), (x, g), allow_unused=True)
    return [np.zeros(s.shape) if d is None or (m is torch and d._is_zerotensor())
            else d.detach().numpy() for d, s in zip(second, (a, g0))]


DOUBLE = {
    "mean": lambda m, x: x.mean(1), "nansum": lambda m, x: x.nansum(0),
    "prod": lambda m, x: x.prod(), "prod_dim": lambda m, x: x.prod(1),
    "prod_zeros": lambda m, x: (x * m.tensor(ZEROS, dtype=x.dtype)).prod(1),
    "cumprod": lambda m, x: x.cumprod(1), "cumsum": lambda m, x: x.cumsum(0),
    "cumprod_zeros": lambda m, x: (x * m.tensor(ZEROS, dtype=x.dtype)).cumprod(1),
    "max_dim": lambda m, x: x.max(1).values, "amax": lambda m, x: x.amax(0),
    "max": lambda m, x: x.max(), "sort": lambda m, x: x.sort(1, descending=True).values,
    "topk": lambda m, x: x.topk(2).values, "cummax": lambda m, x: x.cummax(1).values,
    "median_dim": lambda m, x: x.median(0).values, "var": lambda m, x: x.var(1),
    "std": lambda m, x: x.std(0), "std_mean": lambda m, x: m.std_mean(x, 1)[0],
    "logsumexp": lambda m, x: x.logsumexp(1), "logcumsumexp": lambda m, x: x.logcumsumexp(1),
    "norm2": lambda m, x: m.norm(x, 2, 1), "norm3": lambda m, x: m.norm(x, 3, 0),
    "norm1": lambda m, x: m.norm(x, 1), "norm_half": lambda m, x: m.norm(x, 0.5, 1),
    "norm_inf": lambda m, x: m.norm(x, INF, 1),
}


@pytest.mark.parametrize("name", list(DOUBLE))
def test_double_backward_matches_torch(name):
    e = _double_backward(ember, DOUBLE[name], X64)
    t = _double_backward(torch, DOUBLE[name], X64)
    for k, (ei, ti) in enumerate(zip(e, t)):
        np.testing.assert_allclose(ei, ti, rtol=1e-6, atol=1e-8, err_msg=f"{name} wrt {k}")


@pytest.mark.parametrize("name", ["prod", "prod_dim", "cumprod", "cumsum", "norm2"])
def test_double_backward_through_zeros_matches_torch(name):
    """Zeros in the input: one and two per slice (the second derivatives of prod and cumprod
    there come from exclusive products, and from torch's quadratic formula for cumprod)."""
    a = ZEROS.astype(np.float64)
    for k, (ei, ti) in enumerate(zip(_double_backward(ember, DOUBLE[name], a),
                                     _double_backward(torch, DOUBLE[name], a))):
        np.testing.assert_allclose(ei, ti, rtol=1e-6, atol=1e-8, err_msg=f"{name} wrt {k}")


def test_bincount_weights_gradient():
    """torch leaves it unimplemented; ember reads `g` at each element's bin."""
    idx = ember.tensor([0, 2, 2, 1, 0])
    w = ember.tensor(rng.standard_normal(5), requires_grad=True)
    assert ember.bincount(idx, w).requires_grad
    assert ember.autograd.gradcheck(lambda w: ember.bincount(idx, w, minlength=4), (w,))


def test_unique_records_but_refuses_backward_like_torch():
    a = np.array([1.5, 0.5, 1.5])
    check(lambda m, x: m.unique(x).requires_grad, [a])
    check_raises(lambda m, x: m.unique(x.requires_grad_()).sum().backward(), [a],
                 match="derivative for")
    check_raises(lambda m, x: m.unique_consecutive(x.requires_grad_()).sum().backward(), [a])


# ----------------------------------------------------------------------------------------------
# result dtypes, empty inputs, argument spellings

INT_TYPES = ["int8", "uint8", "int16", "int32", "int64", "bool"]


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_integer_and_bool_results(dtype):
    a = rng.integers(0, 3, (3, 4)).astype(dtype)
    check(lambda m, x: (x.sum(), x.sum(0), x.prod(), x.prod(1), x.nansum(), x.cumsum(1),
                        x.cumprod(0), x.max(), x.min(1), x.amax(0), m.aminmax(x), x.all(1),
                        x.any(), m.count_nonzero(x), x.sort(1), x.cummax(0), m.unique(x),
                        x.sum(dtype=m.float64), x.cumsum(0, dtype=m.float32), x.logsumexp(1)),
          [a])


def test_float_dtype_arguments():
    check(lambda m, x: (x.sum(dtype=m.float64), x.prod(1, dtype=m.float64),
                        x.mean(dtype=m.float64), x.nansum(0, dtype=m.float64),
                        m.norm(x, dtype=m.float64), x.cumprod(0, dtype=m.float64)), [X])


@pytest.mark.parametrize("wdtype", ["float16", "float32", "float64", "int32"])
def test_bincount_result_dtype_follows_torch(wdtype):
    idx = np.array([0, 3, 3, 1])
    w = np.array([0.5, 1, 2, 4]).astype(wdtype)
    check(lambda m, i, w: m.bincount(i, w, minlength=6), [idx, w], grad=False)


def test_histc_keeps_the_float_dtype():
    for dtype in ("float16", "float64"):
        check(lambda m, x: m.histc(x, 5), [X.astype(dtype)], grad=False)


def test_all_any_on_uint8_keep_uint8():
    a = np.array([[1, 0, 2], [3, 4, 5]], np.uint8)
    check(lambda m, x: (x.all(), x.any(1), m.all(x, (0, 1), keepdim=True)), [a])


def test_reductions_of_empty_tensors():
    e = np.zeros((0, 3), np.float32)
    with pytest.warns(UserWarning):  # torch warns too: no degrees of freedom
        check(lambda m, x: x.var(), [e])
    check(lambda m, x: (x.sum(), x.prod(), x.mean(), x.nansum(), x.logsumexp(0), m.norm(x),
                        x.median(), x.nanmedian(), x.sum(0), x.prod(0), x.amax(1), x.max(1),
                        x.logsumexp(1), m.count_nonzero(x), x.all(), x.any(), x.cumsum(0),
                        x.sort(0), x.argmax(1), m.norm(x, INF, 1)), [e])
    check(lambda m, x: m.unique(x, return_inverse=True, return_counts=True), [e], grad=False)


def test_var_std_argument_spellings():
    check(lambda m, x: (x.var(False), x.std(True), x.var(0, False, True), x.std(1, True),
                        x.var(correction=0.5), m.var(x, dim=None, correction=0),
                        x.std(dim=(0, 1), unbiased=False, keepdim=True),
                        m.var_mean(x, 1, False), m.std_mean(x, correction=2)), [X])
    with pytest.warns(UserWarning, match="degrees of freedom"):
        check(lambda m, x: x.std(0, correction=3), [X])


def test_reduce_over_empty_dim_list_means_all_dims():
    check(lambda m, x: (x.sum(()), x.sum([]), x.mean(()), x.amax(()), m.count_nonzero(x, ()),
                        x.nansum(())), [X])
    check(lambda m, x: x.var(()), [X], grad=False)  # torch's backward divides by zero here
    check(lambda m, x: (x.all(()), x.any(())), [X])  # ...except for all/any: nothing


def test_topk_unsorted_returns_the_same_elements():
    check(lambda m, x: [r.sort().values for r in x.topk(3, 1, sorted=False)], [X[:, :4]])


def test_diff_prepend_append():
    check(lambda m, x: m.diff(x, prepend=x[:, :1], append=x), [X])


def test_max_min_with_a_tensor_are_elementwise():
    check(lambda m, a, b: (m.max(a, b), a.min(b)), [X, X[::-1].copy()])


def test_out_arguments_are_written():
    def fn(m, x):
        outs = [m.empty(0) for _ in range(4)]
        m.sum(x, 0, out=outs[0])
        m.mean(x, 1, out=outs[1])
        m.prod(x, 0, out=outs[2])
        m.cumsum(x, 0, out=outs[3])
        return outs

    check(fn, [X], grad=False)


# ----------------------------------------------------------------------------------------------
# errors: the same exception type as torch, with torch's message gist

ERRORS = [
    (lambda m, x: x.sum(2), "Dimension out of range"),
    (lambda m, x: x.max(-3), "Dimension out of range"),
    (lambda m, x: x.sort(5), "Dimension out of range"),
    (lambda m, x: x.cumsum(-3), "Dimension out of range"),
    (lambda m, x: x.var((0, 4)), "Dimension out of range"),
    (lambda m, x: x.sum((0, 0)), "appears multiple times"),
    (lambda m, x: x.amax((1, -1)), "appears multiple times"),
    (lambda m, x: x.max((0, 1)), None),
    (lambda m, x: x.prod((0, 1)), None),
    (lambda m, x: x.var(0, True, correction=1), None),
    (lambda m, x: x.kthvalue(5, 1), "selected number k out of range"),
    (lambda m, x: x.kthvalue(0), "selected number k out of range"),
    (lambda m, x: x.topk(5, 1), "selected index k out of range"),
    (lambda m, x: x.int().mean(), "could not infer output dtype"),
    (lambda m, x: x.int().nanmean(), "expected input to have floating point"),
    (lambda m, x: x.long().var(), "only support floating point"),
    (lambda m, x: x.long().std(0), "only support floating point"),
    (lambda m, x: m.norm(x.int()), "Expected a floating point"),
    (lambda m, x: x.long().logcumsumexp(0), "not implemented for 'Long'"),
    (lambda m, x: x.int().histc(), "not implemented for 'Int'"),
    (lambda m, x: (x > 0).argmax(), "does not support bool"),
    (lambda m, x: (x > 0).median(), "not implemented for 'Bool'"),
    (lambda m, x: (x > 0).topk(1), "does not support bool"),
    (lambda m, x: m.norm(x, "abc"), "not supported"),
    (lambda m, x: m.norm(x[None], "fro", (0, 1, 2)), "dim must be a 2-tuple"),
    (lambda m, x: m.histc(x, 0), "bins must be > 0"),
    (lambda m, x: m.histc(x, 5, 2, 1), "max must be larger than min"),
    (lambda m, x: m.histc(x * np.inf, 5), "is not finite"),
    (lambda m, x: m.diff(x[0, 0]), "at least one-dimensional"),
    (lambda m, x: m.diff(x, -1), "order must be non-negative"),
    (lambda m, x: m.bincount(x), "not implemented for 'Float'"),
    (lambda m, x: m.bincount(x.long()), "1-d non-negative integral"),
    (lambda m, x: m.bincount(x[0].long() - 5), "1-d non-negative integral"),
    (lambda m, x: m.bincount(x[0].abs().long(), minlength=-1), "minlength should be >= 0"),
    (lambda m, x: m.bincount(x[0].abs().long(), x[1, :2]), "same length as input"),
    (lambda m, x: m.bincount((x[0] > 0)), "not implemented for 'Bool'"),
    (lambda m, x: m.unique(x[0, 0], dim=0), "tensor has no dimensions"),
]


@pytest.mark.parametrize("fn,match", ERRORS, ids=lambda v: "" if callable(v) else str(v))
def test_errors_match_torch(fn, match):
    check_raises(fn, [X], match=match)


EMPTY = np.zeros((0, 3), np.float32)
EMPTY_ERRORS = [
    (lambda m, x: x.max(), "Expected reduction dim to be specified"),
    (lambda m, x: x.min(), "Expected reduction dim to be specified"),
    (lambda m, x: x.amax(), "Expected reduction dim to be specified"),
    (lambda m, x: x.amin(), "Expected reduction dim to be specified"),
    (lambda m, x: x.argmax(), "Expected reduction dim to be specified"),
    (lambda m, x: m.aminmax(x), "cannot compute aminmax over an empty dimension"),
    (lambda m, x: x.max(0), "Expected reduction dim 0 to have non-zero size"),
    (lambda m, x: x.min(0), "Expected reduction dim 0 to have non-zero size"),
    (lambda m, x: x.amax((1, 0)), "Expected reduction dim 0 to have non-zero size"),
    (lambda m, x: x.argmin(0), "Expected reduction dim 0 to have non-zero size"),
    (lambda m, x: m.aminmax(x, dim=0), "Expected reduction dim 0 to have non-zero size"),
    (lambda m, x: x.median(0), "Expected reduction dim 0 to have non-zero size"),
    (lambda m, x: x.nanmedian(0), "Expected reduction dim 0 to have non-zero size"),
    (lambda m, x: x.mode(0), "Expected reduction dim 0 to have non-zero size"),
    (lambda m, x: x.kthvalue(1, 0), "Expected reduction dim 0 to have non-zero size"),
    (lambda m, x: m.norm(x, INF), "cannot compute the inf norm on an empty tensor"),
    (lambda m, x: m.norm(x, -1), "cannot compute the -1 norm"),
    (lambda m, x: m.norm(x, -INF, 0), "cannot compute the -inf norm on the dimension 0"),
]


@pytest.mark.parametrize("fn,match", EMPTY_ERRORS, ids=lambda v: "" if callable(v) else str(v))
def test_empty_reduction_errors_match_torch(fn, match):
    check_raises(fn, [EMPTY], match=match)


def test_nuclear_norm_is_not_implemented():
    with pytest.raises(NotImplementedError, match="nuc"):
        ember.norm(ember.tensor(X), "nuc")


@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum, np.logaddexp])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_running_scan_without_accumulate_equals_numpys(ufunc, axis):
    """CuPy has no maximum/minimum/logaddexp.accumulate; the slice-by-slice scan ember runs
    there is NumPy-generic, so NumPy (under another module name) checks it here."""
    import types

    from ember.ops.reduce import _running

    not_numpy = types.SimpleNamespace(__name__="not_numpy", moveaxis=np.moveaxis)
    x = np.random.default_rng(0).standard_normal((4, 5, 3))
    np.testing.assert_allclose(_running(not_numpy, ufunc, x, axis), ufunc.accumulate(x, axis),
                               rtol=1e-12)


LEADING_SUMS = {
    "sum_dim0": lambda m, x: x.sum(0),
    "sum_dims01_keepdim": lambda m, x: x.sum((0, 1), keepdim=True),
    "sum_to_size": lambda m, x: x.sum_to_size(1, 1, x.shape[-1]),
    "transposed_falls_back": lambda m, x: x.transpose(0, 2).sum(0),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(LEADING_SUMS))
def test_sums_over_leading_dims_of_large_tensors(name, dtype):
    """Large sums over leading dims run as a BLAS vector-matrix product (reduce.py's
    _sum_leading); the op table's small tensors stay below its size threshold."""
    x = rng.standard_normal((40, 16, 96)).astype(dtype) + 3  # an offset: long sums drift
    check(LEADING_SUMS[name], [x], rtol=1e-5, atol=1e-4)


TRAILING_SUMS = {
    "sum_last": lambda m, x: x.sum(-1),
    "sum_last_two_keepdim": lambda m, x: x.sum((1, 2), keepdim=True),
    "mean_last": lambda m, x: x.mean(2),
    "mean_last_two": lambda m, x: x.mean((-2, -1)),
    "mean_last_two_keepdim": lambda m, x: x.mean((1, 2), keepdim=True),
    "mean_leading": lambda m, x: x.mean(0),
    "global_avg_pool": lambda m, x: m.nn.functional.adaptive_avg_pool2d(x.unsqueeze(0), 1),
    "global_avg_pool_unbatched": lambda m, x: m.nn.functional.adaptive_avg_pool1d(x, 1),
    "leading_and_trailing": lambda m, x: x.sum((0, 2)),
    "leading_and_trailing_keepdim": lambda m, x: x.sum((0, 2), keepdim=True),
    "mean_leading_and_trailing": lambda m, x: x.mean((0, -1)),
    "conv_bias_gradient": lambda m, x: x.reshape(10, 4, 16, 96).sum((0, 2, 3)),
    "transposed_falls_back": lambda m, x: x.transpose(1, 2).sum(-1),
    "middle_dim_falls_back": lambda m, x: x.mean(1),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(TRAILING_SUMS))
def test_sums_over_trailing_dims_of_large_tensors(name, dtype):
    """Large sums and means over trailing dims in short rows run as a BLAS matrix-vector
    product (reduce.py's _sum_trailing), global average pooling as such a mean; the same
    values and gradients as torch's."""
    x = rng.standard_normal((40, 16, 96)).astype(dtype) + 3
    check(TRAILING_SUMS[name], [x], rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("shape, dims", [((40, 16, 96), (2,)), ((60, 8, 40), (1, 2)),
                                         ((16, 2048), (1,)), ((8, 4096), (0, 1)),
                                         ((40, 16, 96), (0, 2)), ((8, 4, 24, 24), (0, 2, 3)),
                                         ((8, 4, 2048), (0, 2))])
def test_blas_sums_match_numpy_reduction(shape, dims):
    """The BLAS paths give NumPy's sums to float32 rounding, and hand back None for rows
    longer than _BLAS_ROW_MAX or a whole-tensor sum (NumPy's pairwise sum keeps those)."""
    x = rng.standard_normal(shape).astype(np.float32) + 3
    out = reduce_ops._blas_sum(np, x, dims, False)
    columns = math.prod(shape[d] for d in dims if d > 0 or len(dims) == x.ndim)
    if columns > reduce_ops._BLAS_ROW_MAX or len(dims) == x.ndim:
        assert out is None
    else:
        expected = x.astype(np.float64).sum(dims)
        np.testing.assert_allclose(out, expected, rtol=1e-6 * columns ** 0.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_broadcast_gradient_sums_over_leading_dims_of_large_tensors(dtype):
    """The engine undoes a bias's broadcast with sum_to_size, the same BLAS path."""
    x = rng.standard_normal((40, 16, 96)).astype(dtype)
    bias = rng.standard_normal(96).astype(dtype)
    check(lambda m, x, b: x * 2 + b, [x, bias], rtol=1e-5, atol=1e-4)
