"""Distances vs torch: cosine_similarity, pairwise_distance, pdist, cdist, normalize, one_hot --
values, gradients (including torch's choices at zero distances and ties), float64 gradcheck,
errors, and the PairwiseDistance / CosineSimilarity modules."""
import math

import numpy as np
import pytest

import ember

from .oracle import check, check_raises

rng = np.random.default_rng(1)


def R(*shape):
    return rng.uniform(-2, 2, shape)


def F(m):
    return m.nn.functional


# rows 0 and 2 coincide (zero distance), row 3 has a tie for the largest |difference| with row 0
A = np.array([[0.0, 1.0, 2.0], [1.5, -1.0, 0.5], [0.0, 1.0, 2.0], [2.0, 3.0, 2.5]])
B = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0], [-1.0, 0.5, 3.0]])
PS = [0, 0.5, 1, 1.5, 2, 3, math.inf]

CASES = []


def case(name, fn, inputs, gradcheck=True):
    CASES.append(pytest.param(fn, inputs, gradcheck, id=name))


for dim in (1, -1, 0):
    case(f"cosine_similarity-dim{dim}", lambda m, a, b, d=dim: F(m).cosine_similarity(a, b, d),
         (R(3, 4), R(3, 4)))
case("cosine_similarity_broadcast", lambda m, a, b: F(m).cosine_similarity(a, b, dim=-1),
     (R(3, 1, 4), R(5, 4)))
case("cosine_similarity_1d", lambda m, a, b: F(m).cosine_similarity(a, b, dim=0), (R(4), R(4)))
# norms below eps: clamped for the value only (the gradient is that of x / ||x||)
case("cosine_similarity_tiny", lambda m, a, b: F(m).cosine_similarity(a * 1e-9, b, eps=1e-8),
     (R(2, 3), R(2, 3)), gradcheck=False)
case("cosine_similarity_int", lambda m, a, b: F(m).cosine_similarity(a.long(), b), (R(3, 4) * 3,
                                                                                     R(3, 4)))
case("cosine_similarity_float32", lambda m, a, b: F(m).cosine_similarity(a, b),
     (R(3, 4).astype(np.float32), R(3, 4).astype(np.float32)))
for p in PS:
    case(f"pairwise_distance-p{p}", lambda m, a, b, q=p: F(m).pairwise_distance(a, b, q),
         (R(3, 4), R(3, 4)), gradcheck=p != 0)
    case(f"pdist-p{p}", lambda m, x, q=p: F(m).pdist(x, q), (A,), gradcheck=False)
    case(f"pdist_random-p{p}", lambda m, x, q=p: F(m).pdist(x, q), (R(4, 3),),
         gradcheck=p != 0)
    for mode in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        case(f"cdist-p{p}-{mode}", lambda m, a, b, q=p, c=mode: m.cdist(a, b, q, c), (A, B),
             gradcheck=False)
    case(f"cdist_random-p{p}", lambda m, a, b, q=p: m.cdist(a, b, q), (R(3, 4), R(2, 4)),
         gradcheck=p != 0)
case("pairwise_distance_keepdim_broadcast", lambda m, a, b: F(m).pairwise_distance(
    a, b, eps=1e-3, keepdim=True), (R(3, 4), R(4)))
case("pairwise_distance_1d", lambda m, a, b: F(m).pairwise_distance(a, b), (R(4), R(4)))
case("pairwise_distance_0d", lambda m, a, b: F(m).pairwise_distance(a, b), (R(), R()))
case("cdist_batched", lambda m, a, b: m.cdist(a, b), (R(2, 1, 3, 4), R(3, 2, 4)))
case("cdist_batched_p1", lambda m, a, b: m.cdist(a, b, 1), (R(2, 1, 3, 4), R(3, 2, 4)))
# more than 25 rows: torch (and ember) switch to the matmul expansion for p = 2
case("cdist_many_rows", lambda m, a, b: m.cdist(a, b), (R(30, 3), R(4, 3)))
case("cdist_many_rows_no_mm", lambda m, a, b: m.cdist(a, b, compute_mode="donot_use_mm_for_"
                                                      "euclid_dist"), (R(30, 3), R(4, 3)))
case("cdist_float32", lambda m, a, b: m.cdist(a, b), (R(30, 3).astype(np.float32),
                                                     R(5, 3).astype(np.float32)))
case("cdist_empty", lambda m, a, b: m.cdist(a, b), (R(0, 3), R(4, 3)), gradcheck=False)
case("cdist_no_columns", lambda m, a, b: m.cdist(a, b), (R(2, 0), R(3, 0)), gradcheck=False)
case("pdist_one_row", lambda m, x: F(m).pdist(x), (R(1, 3),), gradcheck=False)
for p, dim in ((2, 1), (1, 0), (3, -1), (math.inf, 1)):
    case(f"normalize-p{p}-dim{dim}", lambda m, x, q=p, d=dim: F(m).normalize(x, q, d),
         (R(3, 4),))
case("normalize_eps", lambda m, x: F(m).normalize(x * 1e-3, eps=0.1), (R(3, 4),))
case("normalize_0d", lambda m, x: F(m).normalize(x, dim=0), (R(),))


@pytest.mark.parametrize("fn,inputs,gradcheck", CASES)
def test_against_torch(fn, inputs, gradcheck):
    pytest.importorskip("torch")
    float32 = any(a.dtype == np.float32 for a in inputs)
    tight = {} if float32 else dict(rtol=1e-7, atol=1e-9, grad_rtol=1e-7, grad_atol=1e-9)
    check(fn, list(inputs), **tight)


@pytest.mark.parametrize("fn,inputs,gradcheck", CASES)
def test_gradcheck(fn, inputs, gradcheck):
    if not gradcheck:
        pytest.skip("kinks or no elements: compared with torch instead")
    tensors = [ember.from_numpy(a.astype(np.float64)).requires_grad_() for a in inputs]
    assert ember.autograd.gradcheck(lambda *a: fn(ember, *a), tensors)


def test_cdist_pdist_double_backward():
    x = ember.from_numpy(R(4, 3)).requires_grad_()
    y = ember.from_numpy(R(5, 3)).requires_grad_()
    for p in (1.5, 2.0, 3.0):
        assert ember.autograd.gradgradcheck(lambda a, b: ember.cdist(a, b, p), [x, y])
        assert ember.autograd.gradgradcheck(lambda a: ember.nn.functional.pdist(a, p), [x])


def test_normalize_out():
    pytest.importorskip("torch")

    def fn(m, x):
        out = m.empty(3, 4, dtype=x.dtype)
        result = F(m).normalize(x, out=out)
        assert result is out
        return out

    check(fn, [R(3, 4)], grad=False)


def test_one_hot():
    pytest.importorskip("torch")
    check(lambda m, t: F(m).one_hot(t), [np.array([0, 2, 1])], grad=False)
    check(lambda m, t: F(m).one_hot(t, 5), [np.array([[0, 2], [4, 1]])], grad=False)
    check(lambda m, t: F(m).one_hot(t), [np.array(2)], grad=False)
    check(lambda m, t: F(m).one_hot(t, 3), [np.zeros(0, dtype=np.int64)], grad=False)


ERRORS = [
    ("one_hot_negative", lambda m: F(m).one_hot(m.tensor([0, -1])), "non-negative"),
    ("one_hot_too_large", lambda m: F(m).one_hot(m.tensor([0, 3]), 3), "smaller than num_classes"),
    ("one_hot_int32", lambda m: F(m).one_hot(m.tensor([0, 3], dtype=m.int32)), "LongTensor"),
    ("one_hot_empty", lambda m: F(m).one_hot(m.zeros(0, dtype=m.int64)), "empty tensor"),
    ("pdist_3d", lambda m: F(m).pdist(m.zeros(2, 3, 4)), "pdist only supports 2D tensors"),
    ("pdist_negative_p", lambda m: F(m).pdist(m.zeros(2, 3), -1), "non-negative p"),
    ("pdist_int", lambda m: F(m).pdist(m.zeros(2, 3, dtype=m.int64)), "floating-point"),
    ("cdist_1d", lambda m: m.cdist(m.zeros(3), m.zeros(3)), "at least 2D tensors, X1 got: 1D"),
    ("cdist_columns", lambda m: m.cdist(m.zeros(2, 3), m.zeros(2, 4)),
     "X1: 3 X2: 4"),
    ("cdist_negative_p", lambda m: m.cdist(m.zeros(2, 3), m.zeros(2, 3), -1), "non-negative p"),
    ("cdist_mode", lambda m: m.cdist(m.zeros(2, 3), m.zeros(2, 3), compute_mode="x"),
     "x is not a valid value for compute_mode"),
    ("cdist_int", lambda m: m.cdist(m.zeros(2, 3, dtype=m.int64), m.zeros(2, 3, dtype=m.int64)),
     "X1 got: Long"),
    ("cdist_dtypes", lambda m: m.cdist(m.zeros(2, 3), m.zeros(2, 3, dtype=m.float64)),
     "expected scalar type Float but found Double"),
    ("cdist_batch", lambda m: m.cdist(m.zeros(2, 2, 3), m.zeros(3, 2, 3)), None),
    ("cosine_similarity_int", lambda m: F(m).cosine_similarity(m.ones(2, 3, dtype=m.int64),
                                                                m.ones(2, 3, dtype=m.int64)),
     "common dtype is Long"),
    ("cosine_similarity_dim", lambda m: F(m).cosine_similarity(m.ones(3), m.ones(3)),
     "Dimension out of range"),
    ("cosine_similarity_shapes", lambda m: F(m).cosine_similarity(m.ones(2, 3), m.ones(2, 4)),
     None),
    ("normalize_int", lambda m: F(m).normalize(m.ones(2, 3, dtype=m.int64)), None),
]


@pytest.mark.parametrize("fn,match", [pytest.param(f, s, id=n) for n, f, s in ERRORS])
def test_errors(fn, match):
    pytest.importorskip("torch")
    check_raises(fn, match=match)


def test_modules():
    torch = pytest.importorskip("torch")
    for name, kwargs in (("PairwiseDistance", {"p": 1.0, "keepdim": True}),
                         ("CosineSimilarity", {"dim": 0, "eps": 1e-3})):
        for kw in ({}, kwargs):
            e, t = getattr(ember.nn, name)(**kw), getattr(torch.nn, name)(**kw)
            assert repr(e) == repr(t)
            for attr in ("norm", "eps", "keepdim", "dim"):
                assert getattr(e, attr, None) == getattr(t, attr, None)
    check(lambda m, a, b: (m.nn.PairwiseDistance(p=3.0, keepdim=True)(a, b),
                           m.nn.CosineSimilarity(dim=0)(a, b)), [R(3, 4), R(3, 4)],
          rtol=1e-7, atol=1e-9)
