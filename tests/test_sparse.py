"""Sparse COO tensors against torch: printing, attributes, coalescing, gradients of leaves and
values, sums, arithmetic, errors, and a graph convolutional network that trains as torch's.
(The ops themselves are rows of tests/specs/sparse.py.)"""
import copy
import warnings

import numpy as np
import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")

INDICES = [[0, 1, 1, 0], [2, 0, 2, 2]]  # (0, 2) appears twice
VALUES = [3.0, 4.0, 5.0, 1.5]


@pytest.fixture(autouse=True)
def _quiet_invariant_warning():
    """torch warns once per process that it does not check sparse invariants by default."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse invariant checks")
        yield


def both(fn):
    return fn(ember), fn(torch)


def same_repr(e, t):
    assert repr(e) == repr(t).replace("torch.", "ember.")


def dense(x):
    x = x.to_dense() if x.is_sparse else x
    return x.detach().numpy()


@pytest.mark.parametrize("make", [
    lambda m: m.sparse_coo_tensor(INDICES, VALUES, (2, 3)),
    lambda m: m.sparse_coo_tensor(INDICES, VALUES, (2, 3)).coalesce(),
    lambda m: m.sparse_coo_tensor(INDICES, m.tensor(VALUES, dtype=m.float64), (2, 3),
                                  requires_grad=True),
    lambda m: m.sparse_coo_tensor(INDICES, m.ones(4, 2), (2, 3, 2)),
    lambda m: m.sparse_coo_tensor(m.zeros(2, 0, dtype=m.long), m.zeros(0), (2, 3)),
    lambda m: m.sparse_coo_tensor(INDICES, m.tensor(VALUES, requires_grad=True), (2, 3)) * 2,
    lambda m: m.sparse_coo_tensor(INDICES, m.tensor(VALUES, requires_grad=True), (2, 3)),
    lambda m: m.sparse_coo_tensor(INDICES, [1, 2, 3, 4]),
], ids=["uncoalesced", "coalesced", "float64-leaf", "hybrid", "empty", "grad_fn", "from-values",
        "int64-inferred-size"])
def test_repr_and_attributes_match_torch(make):
    e, t = both(make)
    same_repr(e, t)
    for attribute in ("is_sparse", "requires_grad", "is_leaf"):
        assert getattr(e, attribute) == getattr(t, attribute), attribute
    for method in ("is_coalesced", "sparse_dim", "dense_dim", "_nnz", "numel", "dim"):
        assert getattr(e, method)() == getattr(t, method)(), method
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.layout) == "ember.sparse_coo" and str(e.dtype)[6:] == str(t.dtype)[6:]
    np.testing.assert_array_equal(dense(e), dense(t))


def test_indices_and_values_need_a_coalesced_tensor():
    for getter in ("indices", "values"):
        error = check_raises(lambda m: getattr(m.sparse_coo_tensor(INDICES, VALUES), getter)())
        assert "uncoalesced" in str(error)
    e, t = both(lambda m: m.sparse_coo_tensor(INDICES, VALUES).coalesce())
    np.testing.assert_array_equal(e.indices().numpy(), t.indices().numpy())
    np.testing.assert_array_equal(e.values().numpy(), t.values().numpy())
    np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())


def _leaf(m):
    return m.sparse_coo_tensor(INDICES, m.tensor(VALUES, dtype=m.float64), (2, 3),
                               requires_grad=True)


@pytest.mark.parametrize("use", [
    lambda m, s, d: m.sparse.mm(s, d),
    lambda m, s, d: s.to_dense() * d.sum(1),
    lambda m, s, d: m.sparse.sum(s) * d.sum(),
    lambda m, s, d: m.sparse.mm(s.coalesce() * 3, d),
], ids=["sparse.mm", "to_dense", "sparse.sum", "coalesce-mul"])
def test_a_sparse_leaf_gets_its_gradient_at_its_own_positions(use):
    d = np.random.default_rng(0).standard_normal((3, 4))
    grads = []
    for m in (ember, torch):
        s = _leaf(m)
        out = use(m, s, m.tensor(d))
        out.backward(m.ones_like(out))
        grads.append(s.grad)
    e, t = grads
    assert e.is_sparse and t.is_sparse
    np.testing.assert_allclose(dense(e), dense(t), rtol=1e-12)


def test_products_that_give_torch_a_dense_gradient_are_refused():
    """torch.mm / spmm / matmul give a sparse leaf (or the dense tensor behind to_sparse) the
    unmasked gradient g @ mat2^T, a dense tensor ember's sparse tensors cannot carry."""
    d = torch.ones(3, 2)
    s = _leaf(torch).float()
    s = torch.sparse_coo_tensor(INDICES, VALUES, (2, 3), requires_grad=True)
    torch.mm(s, d).sum().backward()
    assert not s.grad.is_sparse  # what ember would have to give
    for product in (ember.mm, ember.spmm, ember.matmul, lambda a, b: a @ b):
        leaf = ember.sparse_coo_tensor(INDICES, VALUES, (2, 3), requires_grad=True)
        x = ember.zeros(2, 3, requires_grad=True)
        for operand in (leaf, x.to_sparse(), x.to_sparse().t().t()):
            with pytest.raises(NotImplementedError, match="sparse.mm"):
                product(operand, ember.ones(3, 2))


def test_gradients_through_values_and_to_sparse_match_torch():
    d = np.random.default_rng(1).standard_normal((3, 2)).astype(np.float32)
    x = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], np.float32)
    check(lambda m, v, d: m.mm(m.sparse_coo_tensor(INDICES, v, (2, 3)), d),
          [np.array(VALUES, np.float32), d])
    check(lambda m, x, d: m.sparse.mm(x.to_sparse(), d), [x, d])
    check(lambda m, x: (x.to_sparse() * 2).to_dense(), [x])
    check(lambda m, x: x.to_sparse(1).coalesce().values(), [x])


@pytest.mark.parametrize("dim", [None, 0, 1, 2, (0, 1), (1, 2), (0, 2), -1])
def test_sparse_sum_matches_torch(dim):
    rng = np.random.default_rng(2)
    values = rng.standard_normal((4, 2)).astype(np.float32)
    e, t = both(lambda m: m.sparse_coo_tensor(INDICES, m.tensor(values), (2, 3, 2)))
    es = ember.sparse.sum(e) if dim is None else ember.sparse.sum(e, dim)
    ts = torch.sparse.sum(t) if dim is None else torch.sparse.sum(t, dim)
    assert es.is_sparse == ts.is_sparse and tuple(es.shape) == tuple(ts.shape)
    np.testing.assert_allclose(dense(es), dense(ts), rtol=1e-6)
    if ts.is_sparse:
        same_repr(es, ts.coalesce())


@pytest.mark.parametrize("fn", [
    lambda m, a, b: a + b, lambda m, a, b: a - b, lambda m, a, b: a.add(b, alpha=2),
    lambda m, a, b: a * 2.5, lambda m, a, b: 2 * a, lambda m, a, b: a / 4, lambda m, a, b: -a,
    lambda m, a, b: a.t(), lambda m, a, b: a.transpose(0, 1), lambda m, a, b: a.double(),
    lambda m, a, b: a.detach(), lambda m, a, b: a.clone(), lambda m, a, b: a.coalesce(),
    lambda m, a, b: a.to_sparse(), lambda m, a, b: a @ m.ones(3, 2),
    lambda m, a, b: m.ones(4, 3) @ a.t(), lambda m, a, b: a.sum(),
    lambda m, a, b: m.sparse.addmm(m.ones(2, 2), a, m.ones(3, 2), beta=0.5, alpha=2.0),
])
def test_arithmetic_and_conversions_match_torch(fn):
    def run(m):
        a = m.sparse_coo_tensor(INDICES, VALUES, (2, 3))
        b = m.sparse_coo_tensor([[1, 0], [1, 1]], [1.0, -2.0], (2, 3))
        return fn(m, a, b)
    e, t = both(run)
    assert e.is_sparse == t.is_sparse and e.dtype.itemsize == t.dtype.itemsize
    np.testing.assert_allclose(dense(e), dense(t), rtol=1e-6)


def test_dense_to_sparse_matches_torch():
    x = np.array([[[0.0, 0.0], [1.0, 0.0]], [[0.0, 2.0], [0.0, 0.0]]], np.float32)
    for sparse_dim in (None, 1, 2, 3):
        e, t = both(lambda m: m.tensor(x).to_sparse() if sparse_dim is None
                    else m.tensor(x).to_sparse(sparse_dim))
        same_repr(e, t)


@pytest.mark.parametrize("call", [
    lambda m: m.sparse_coo_tensor(INDICES, m.ones(3), (2, 3)),      # nnz differs
    lambda m: m.sparse_coo_tensor(INDICES, VALUES, (2, 3, 4)),      # size has too many dims
    lambda m: m.sparse_coo_tensor(INDICES, m.ones(4, 2), (2, 3, 3)),  # values' dense dims
    lambda m: m.sparse_coo_tensor([0, 1], VALUES[:2], (2,)),        # indices not 2-d
    lambda m: m.exp(m.sparse_coo_tensor(INDICES, VALUES)),          # an op without sparse support
    lambda m: m.sparse.mm(m.sparse_coo_tensor(INDICES, VALUES), m.ones(4, 2)),
])
def test_errors_match_torch(call):
    check_raises(call)


def test_positions_are_checked_against_the_size():
    """torch checks them only with check_invariants=True; ember always does."""
    with pytest.raises(RuntimeError, match="for dim 0, size is 1 but found index 1"):
        ember.sparse_coo_tensor(INDICES, VALUES, (1, 3))
    with pytest.raises(RuntimeError, match="negative"):
        ember.sparse_coo_tensor([[0, -1], [0, 0]], [1.0, 2.0], (2, 2))
    with pytest.raises(RuntimeError):
        torch.sparse_coo_tensor(INDICES, VALUES, (1, 3), check_invariants=True)


def test_copies_and_legacy_constructor():
    s = ember.sparse_coo_tensor(INDICES, VALUES, (2, 3), requires_grad=True)
    c = copy.deepcopy(s)
    assert c.requires_grad and c.is_leaf and c._values() is not s._values()
    np.testing.assert_array_equal(dense(c), dense(s))
    with pytest.warns(UserWarning, match="deprecated"):
        legacy = ember.sparse.FloatTensor(ember.tensor(INDICES), ember.tensor(VALUES),
                                          ember.Size([2, 3]))
    with pytest.warns(UserWarning, match="deprecated"):
        reference = torch.sparse.FloatTensor(torch.tensor(INDICES), torch.tensor(VALUES),
                                             torch.Size([2, 3]))
    same_repr(legacy, reference)


def _gcn_losses(m, adjacency, features, labels, weights, steps=15):
    """A two-layer graph convolutional network, as public GCN code writes it: the normalised
    adjacency D^-1/2 (A + I) D^-1/2 made sparse with to_sparse, layers multiplied with spmm."""
    a = m.tensor(adjacency) + m.eye(adjacency.shape[0])
    d = a.sum(1).pow(-0.5)
    adj = (d[:, None] * a * d[None, :]).to_sparse()
    w1, w2 = (m.tensor(w).requires_grad_() for w in weights)
    x, y = m.tensor(features), m.tensor(labels)
    opt = m.optim.Adam([w1, w2], lr=0.05)
    losses = []
    for _ in range(steps):
        hidden = m.relu(m.spmm(adj, m.mm(x, w1)))
        out = m.spmm(adj, m.mm(hidden, w2))
        loss = m.nn.functional.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_a_graph_convolutional_network_trains_like_torch():
    rng = np.random.default_rng(3)
    n = 30
    adjacency = (rng.random((n, n)) < 0.1).astype(np.float32)
    adjacency = np.maximum(adjacency, adjacency.T)
    features = rng.standard_normal((n, 8)).astype(np.float32)
    labels = rng.integers(0, 3, n)
    weights = [rng.standard_normal((8, 16)).astype(np.float32) * 0.3,
               rng.standard_normal((16, 3)).astype(np.float32) * 0.3]
    e = _gcn_losses(ember, adjacency, features, labels, weights)
    t = _gcn_losses(torch, adjacency, features, labels, weights)
    np.testing.assert_allclose(e, t, rtol=1e-4)
    assert e[-1] < 0.8 * e[0]


@pytest.mark.parametrize("method", ["coalesce", "indices", "values", "is_coalesced", "_nnz",
                                    "_indices", "_values"])
def test_sparse_only_methods_refuse_a_dense_tensor_like_torch(method):
    check_raises(lambda m: getattr(m.ones(2, 3), method)())


def test_dense_tensors_answer_the_layout_questions_and_sparse_mask():
    e, t = both(lambda m: m.ones(2, 3))
    assert (e.sparse_dim(), e.dense_dim()) == (t.sparse_dim(), t.dense_dim())
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    check(lambda m, x: x.sparse_mask(m.sparse_coo_tensor(INDICES, VALUES, (2, 3))).to_dense(),
          [x])
    e, t = both(lambda m: m.tensor(x).sparse_mask(m.sparse_coo_tensor(INDICES, VALUES, (2, 3))))
    same_repr(e, t)
