"""Random numbers: reproducibility, generator state, dtypes/shapes/errors against torch, and
the distributions' statistics (loose bounds on large samples; never fixed sample values)."""
import copy
import pickle

import numpy as np
import pytest

import ember

from .oracle import check_raises

torch = pytest.importorskip("torch")

N = 200_000  # large enough that the bounds below are many standard errors wide


def values(t):
    return t.detach().numpy(force=True).astype(np.float64)


# ----------------------------------------------------------------------------------------------
# reproducibility and generator state

DRAWS = {
    "rand": lambda g: ember.rand(5, generator=g),
    "randn": lambda g: ember.randn(2, 3, generator=g),
    "randint": lambda g: ember.randint(0, 100, (6,), generator=g),
    "randperm": lambda g: ember.randperm(8, generator=g),
    "rand_like": lambda g: ember.rand_like(ember.ones(3), generator=g),
    "randn_like": lambda g: ember.randn_like(ember.ones(3), generator=g),
    "randint_like": lambda g: ember.randint_like(ember.ones(3), 10, generator=g),
    "normal": lambda g: ember.normal(ember.zeros(4), ember.ones(4), generator=g),
    "normal-sized": lambda g: ember.normal(1.0, 2.0, (4,), generator=g),
    "bernoulli": lambda g: ember.bernoulli(ember.full((8,), 0.5), generator=g),
    "multinomial": lambda g: ember.multinomial(ember.ones(6), 3, generator=g),
    "poisson": lambda g: ember.poisson(ember.full((5,), 3.0), generator=g),
    "uniform_": lambda g: ember.empty(5).uniform_(-1, 1, generator=g),
    "normal_": lambda g: ember.empty(5).normal_(generator=g),
    "bernoulli_": lambda g: ember.empty(5).bernoulli_(0.3, generator=g),
    "random_": lambda g: ember.empty(5).random_(0, 1000, generator=g),
    "exponential_": lambda g: ember.empty(5).exponential_(generator=g),
    "geometric_": lambda g: ember.empty(5).geometric_(0.2, generator=g),
    "log_normal_": lambda g: ember.empty(5).log_normal_(generator=g),
    "cauchy_": lambda g: ember.empty(5).cauchy_(generator=g),
}


@pytest.mark.parametrize("name", list(DRAWS))
def test_same_seed_same_numbers(name):
    draw = DRAWS[name]
    first = values(draw(ember.Generator().manual_seed(123)))
    again = values(draw(ember.Generator().manual_seed(123)))
    other = values(draw(ember.Generator().manual_seed(124)))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    ember.manual_seed(5)
    global_first = values(draw(None))
    ember.manual_seed(5)
    np.testing.assert_array_equal(values(draw(None)), global_first)


def test_generators_are_independent():
    g1 = ember.Generator().manual_seed(1)
    g2 = ember.Generator().manual_seed(1)
    ember.manual_seed(9)
    expected_global = values(ember.rand(4))
    ember.manual_seed(9)
    a = values(ember.rand(4, generator=g1))
    ember.rand(100, generator=g1)  # advancing g1 changes neither g2 nor the global stream
    np.testing.assert_array_equal(values(ember.rand(4, generator=g2)), a)
    np.testing.assert_array_equal(values(ember.rand(4)), expected_global)


def test_state_round_trip():
    g = ember.Generator().manual_seed(77)
    ember.randn(3, generator=g)
    state = g.get_state()
    assert state.dtype is ember.uint8 and state.ndim == 1
    after = values(ember.randn(10, generator=g))
    g.set_state(state)
    np.testing.assert_array_equal(values(ember.randn(10, generator=g)), after)
    twin = ember.Generator()
    twin.set_state(state)
    assert twin.initial_seed() == 77
    np.testing.assert_array_equal(values(ember.randn(10, generator=twin)), after)


def test_state_keeps_the_cached_normal():
    """A lone normal draw leaves the second of its Box-Muller pair in the generator; the
    state must carry it (torch's normal_y / normal_is_valid fields)."""
    g = ember.Generator().manual_seed(3)
    ember.randn(1, generator=g)
    state = g.get_state()
    expected = values(ember.randn(1, generator=g))
    g.set_state(state)
    np.testing.assert_array_equal(values(ember.randn(1, generator=g)), expected)
    assert g.get_state().numpy()[5040] == 0 and state.numpy()[5040] == 1


def test_global_state_functions():
    state = ember.get_rng_state()
    a = values(ember.rand(6))
    ember.set_rng_state(state)
    np.testing.assert_array_equal(values(ember.rand(6)), a)
    assert ember.manual_seed(11) is ember.default_generator
    assert ember.initial_seed() == 11
    new = ember.seed()
    assert isinstance(new, int) and ember.initial_seed() == new
    assert ember.random.get_rng_state is ember.get_rng_state
    assert ember.random.manual_seed is ember.manual_seed
    assert ember.random.default_generator is ember.default_generator


def test_clone_state_and_copies():
    g = ember.Generator().manual_seed(8)
    twin = g.clone_state()
    np.testing.assert_array_equal(values(ember.rand(5, generator=g)),
                                  values(ember.rand(5, generator=twin)))
    for make in (copy.deepcopy, lambda x: pickle.loads(pickle.dumps(x))):
        clone = make(g)
        np.testing.assert_array_equal(values(ember.rand(5, generator=g)),
                                      values(ember.rand(5, generator=clone)))


def test_fork_rng_restores_the_global_stream():
    ember.manual_seed(4)
    expected = values(ember.rand(5))
    ember.manual_seed(4)
    with ember.random.fork_rng():
        ember.rand(50)
    np.testing.assert_array_equal(values(ember.rand(5)), expected)
    ember.manual_seed(4)
    with ember.random.fork_rng(enabled=False):
        ember.rand(50)
    assert not np.array_equal(values(ember.rand(5)), expected)


@pytest.mark.parametrize("seed", [0, 3, -1, 2**64 - 1, -(2**63), 2**63])
def test_seed_values_like_torch(seed):
    assert ember.Generator().manual_seed(seed).initial_seed() == \
        torch.Generator().manual_seed(seed).initial_seed()


@pytest.mark.parametrize("seed", ["12", 1.5, True, 9])
def test_global_manual_seed_takes_what_int_takes(seed):
    assert ember.manual_seed(seed).initial_seed() == torch.manual_seed(seed).initial_seed()
    check_raises(lambda m: m.Generator().manual_seed("12"))


def test_default_seed_and_device():
    assert ember.Generator().initial_seed() == torch.Generator().initial_seed()
    assert ember.Generator().device == ember.device("cpu")
    assert ember.Generator("cpu").device.type == "cpu"


@pytest.mark.parametrize("fn", [
    lambda m: m.manual_seed(2**64), lambda m: m.manual_seed(-(2**63) - 1),
    lambda m: m.set_rng_state(m.zeros(3)),
    lambda m: m.set_rng_state(m.get_rng_state().float()),
    lambda m: m.Generator().set_state(m.zeros(3, dtype=m.uint8)),
], ids=["too-big", "too-small", "float-state", "float-state-2", "short-state"])
def test_state_errors(fn):
    check_raises(fn)
    ember.manual_seed(0)
    torch.manual_seed(0)


# ----------------------------------------------------------------------------------------------
# dtypes, shapes, devices and requires_grad against torch

META_CASES = [
    lambda m: m.rand(2, 3), lambda m: m.rand((2, 3)), lambda m: m.rand([4]), lambda m: m.rand(()),
    lambda m: m.rand(m.Size([2])), lambda m: m.rand(size=(2, 3)), lambda m: m.rand(0, 3),
    lambda m: m.rand(2, dtype=m.float64), lambda m: m.rand(2, dtype=m.float16),
    lambda m: m.rand(2, dtype=m.bfloat16), lambda m: m.rand(2, requires_grad=True),
    lambda m: m.randn(3, 1), lambda m: m.randn(2, dtype=m.float64),
    lambda m: m.randn(2, requires_grad=True), lambda m: m.randn(2, dtype=m.bfloat16),
    lambda m: m.randint(5, (3,)), lambda m: m.randint(2, 5, (3,)),
    lambda m: m.randint(5, (3,), dtype=m.float32), lambda m: m.randint(5, (3,), dtype=m.int32),
    lambda m: m.randint(low=1, high=5, size=(3,)), lambda m: m.randint(high=5, size=(3,)),
    lambda m: m.randint(5, size=(2, 2)), lambda m: m.randint(2, (3,), dtype=m.bool),
    lambda m: m.randint(5, (3,), dtype=m.float32, requires_grad=True),
    lambda m: m.randint(-5, 0, (3,), dtype=m.int8), lambda m: m.randint(0, 256, (3,),
                                                                        dtype=m.uint8),
    lambda m: m.randperm(5), lambda m: m.randperm(0), lambda m: m.randperm(5, dtype=m.float32),
    lambda m: m.randperm(4, dtype=m.int32),
    lambda m: m.rand_like(m.ones(2, dtype=m.float64)), lambda m: m.rand_like(m.ones(2, 3).t()),
    lambda m: m.rand_like(m.ones(2), dtype=m.float16),
    lambda m: m.rand_like(m.ones(2, requires_grad=True)),
    lambda m: m.randn_like(m.ones(2, 3).t()), lambda m: m.randn_like(m.ones(2), requires_grad=True),
    lambda m: m.randint_like(m.ones(2), 5),
    lambda m: m.randint_like(m.ones(2, dtype=m.int32), 2, 5),
    lambda m: m.randint_like(m.ones(2), high=5), lambda m: m.randint_like(m.ones(2, 3).t(), 3),
    lambda m: m.normal(m.zeros(3), m.ones(3)), lambda m: m.normal(m.zeros(3), 1.0),
    lambda m: m.normal(0.0, m.ones(3)), lambda m: m.normal(0.0, 1.0, (2, 3)),
    lambda m: m.normal(0.0, 1.0, size=(2, 3), dtype=m.float64),
    lambda m: m.normal(m.zeros(2, 1), m.ones(3)),
    lambda m: m.normal(m.zeros(3, dtype=m.float64), m.ones(3)), lambda m: m.normal(0, 1, (2,)),
    lambda m: m.normal(m.zeros(3, requires_grad=True), 1.0),
    lambda m: m.normal(0.0, m.ones(3, requires_grad=True)),
    lambda m: m.normal(m.zeros(3, requires_grad=True), m.ones(3)),
    lambda m: m.normal(0.0, 1.0, (2,), requires_grad=True),
    lambda m: m.bernoulli(m.full((3,), 0.5)), lambda m: m.bernoulli(m.full((3,), 0.5,
                                                                       dtype=m.float64)),
    lambda m: m.bernoulli(m.ones(3), 0.5), lambda m: m.bernoulli(m.ones(3, dtype=m.int64), 0.5),
    lambda m: m.bernoulli(m.full((2,), 0.5, requires_grad=True)),
    lambda m: m.ones(2, 2).bernoulli(), lambda m: m.ones(3).bernoulli(0.2),
    lambda m: m.multinomial(m.ones(4), 2), lambda m: m.multinomial(m.ones(4), 5, True),
    lambda m: m.multinomial(m.ones(3, 4), 2), lambda m: m.ones(3, 4).multinomial(4),
    lambda m: m.multinomial(m.ones(4, requires_grad=True), 2),
    lambda m: m.multinomial(m.ones(4, dtype=m.float64), 2, replacement=True),
    lambda m: m.poisson(m.ones(3)), lambda m: m.poisson(m.ones(3, dtype=m.float64)),
    lambda m: m.poisson(m.ones(2, 2, requires_grad=True)),
]


@pytest.mark.parametrize("fn", META_CASES, ids=range(len(META_CASES)))
def test_meta_like_torch(fn):
    e, t = fn(ember), fn(torch)
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert e.requires_grad == t.requires_grad
    assert e.device.type == t.device.type
    if t.numel():
        assert e.stride() == t.stride()


def test_zero_gradients_through_samplers():
    """torch treats samples as noise: parameters that require grad get zero gradients."""
    for lib in (ember, torch):
        mean = lib.zeros(3, requires_grad=True)
        std = lib.ones(3, requires_grad=True)
        p = lib.full((3,), 0.5, requires_grad=True)
        rate = lib.full((3,), 2.0, requires_grad=True)
        total = lib.normal(mean, std).sum() + lib.bernoulli(p).sum() + lib.poisson(rate).sum()
        total.backward()
        for x in (mean, std, p, rate):
            assert x.grad is not None and not x.grad.detach().numpy().any()


ERROR_CASES = [
    lambda m: m.rand(), lambda m: m.rand(2, dtype=m.int32), lambda m: m.randn(2, dtype=m.int64),
    lambda m: m.rand(-1), lambda m: m.randint(5, 3), lambda m: m.randint(5, 2, (3,)),
    lambda m: m.randint(5, 5, (2,)), lambda m: m.randint(5, (3,), requires_grad=True),
    lambda m: m.randint(0, 300, (3,), dtype=m.uint8),
    lambda m: m.randint(-5, 0, (3,), dtype=m.uint8), lambda m: m.randint(3, (3,), dtype=m.bool),
    lambda m: m.randint(5.5, (3,)), lambda m: m.randperm(-1),
    lambda m: m.randperm(5, requires_grad=True),
    lambda m: m.rand_like(m.ones(2, dtype=m.int64)),
    lambda m: m.randn_like(m.ones(2, dtype=m.int64)),
    lambda m: m.normal(m.zeros(2), m.ones(3)), lambda m: m.normal(m.zeros(3), -m.ones(3)),
    lambda m: m.normal(m.zeros(3, dtype=m.int64), 1.0), lambda m: m.normal(2.0, 3.0),
    lambda m: m.normal(m.zeros(3), -1.0), lambda m: m.normal(m.zeros(2, 3), m.ones(6)),
    lambda m: m.normal(0.0, -1.0, (2,)),
    lambda m: m.bernoulli(m.full((3,), 1.5)), lambda m: m.bernoulli(m.full((3,), -0.5)),
    lambda m: m.bernoulli(m.ones(3, dtype=m.int64)), lambda m: m.bernoulli(m.ones(3), 1.5),
    lambda m: m.multinomial(m.ones(4), 5), lambda m: m.multinomial(m.zeros(4), 2),
    lambda m: m.multinomial(-m.ones(4), 2), lambda m: m.multinomial(m.ones(2, 2, 2), 1),
    lambda m: m.multinomial(m.ones(4), 0), lambda m: m.multinomial(m.ones(4), -1),
    lambda m: m.multinomial(m.ones(4, dtype=m.int64), 1),
    lambda m: m.multinomial(m.tensor([1.0, float("inf")]), 1),
    lambda m: m.multinomial(m.tensor([1.0, float("nan")]), 1),
    lambda m: m.multinomial(m.ones(0), 1),
    lambda m: m.poisson(m.ones(3, dtype=m.int64)), lambda m: m.poisson(-m.ones(3)),
    lambda m: m.zeros(3).uniform_(3, 2), lambda m: m.zeros(3, dtype=m.int64).uniform_(),
    lambda m: m.zeros(3).normal_(0, -1), lambda m: m.zeros(3, dtype=m.int64).normal_(),
    lambda m: m.zeros(3).bernoulli_(1.5), lambda m: m.zeros(3).bernoulli_(m.full((2,), 0.5)),
    lambda m: m.zeros(3).random_(5, 2), lambda m: m.zeros(3, dtype=m.uint8).random_(300),
    lambda m: m.zeros(3, dtype=m.uint8).random_(-5, 0), lambda m: m.zeros(3).exponential_(0),
    lambda m: m.zeros(3).exponential_(-1), lambda m: m.zeros(3, dtype=m.int64).exponential_(),
    lambda m: m.zeros(3).geometric_(0), lambda m: m.zeros(3).geometric_(1),
    lambda m: m.zeros(3).geometric_(1.5), lambda m: m.zeros(3).log_normal_(0, 0),
    lambda m: m.zeros(3, dtype=m.int64).log_normal_(), lambda m: m.zeros(3).cauchy_(0, 0),
    lambda m: m.zeros(3, dtype=m.int64).cauchy_(),
    lambda m: m.zeros(3, requires_grad=True).uniform_(),
    lambda m: m.zeros(3, requires_grad=True)[:2].normal_(),
    lambda m: m.zeros(3, requires_grad=True).bernoulli_(),
]


@pytest.mark.parametrize("fn", ERROR_CASES, ids=range(len(ERROR_CASES)))
def test_errors_like_torch(fn):
    check_raises(fn)


# ----------------------------------------------------------------------------------------------
# in-place semantics


@pytest.mark.parametrize("name,call", [
    ("uniform_", lambda t: t.uniform_(2, 3)), ("normal_", lambda t: t.normal_(5, 0.1)),
    ("bernoulli_", lambda t: t.bernoulli_(1.0)), ("random_", lambda t: t.random_(1, 4)),
    ("exponential_", lambda t: t.exponential_()), ("geometric_", lambda t: t.geometric_(0.5)),
    ("log_normal_", lambda t: t.log_normal_()), ("cauchy_", lambda t: t.cauchy_(10, 0.001)),
])
def test_in_place_on_views(name, call):
    base = ember.zeros(4, 3)
    column = base[:, 1]
    before = base._version
    assert call(column) is column
    assert base._version > before and column._version == base._version
    data = values(base)
    assert np.all(data[:, [0, 2]] == 0) and np.all(data[:, 1] != 0)


def test_in_place_under_no_grad_keeps_requires_grad():
    w = ember.empty(3, 4, requires_grad=True)
    with ember.no_grad():
        w.uniform_(-1, 1)
        w[0].normal_()
    assert w.requires_grad and w.is_leaf
    assert np.all(np.abs(values(w[1:])) <= 1)


def test_in_place_on_a_non_leaf_cuts_the_gradient():
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y.uniform_()
        assert y.requires_grad
        y.sum().backward()
        assert not x.grad.numpy().any()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "int32", "uint8", "bool"])
def test_in_place_keeps_dtype(dtype):
    t = ember.zeros(100, dtype=getattr(ember, dtype))
    if t.is_floating_point():
        t.uniform_()
        t.normal_()
    t.bernoulli_(0.5)
    t.random_()
    t.random_(0, 2)
    assert t.dtype is getattr(ember, dtype)


# ----------------------------------------------------------------------------------------------
# statistics (bounds are several standard errors wide)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_rand_uniform(dtype):
    u = values(ember.rand(N, dtype=getattr(ember, dtype)))
    assert u.min() >= 0 and u.max() < 1  # rounding to a half type must not reach 1.0
    assert abs(u.mean() - 0.5) < 0.01
    assert abs(u.var() - 1 / 12) < 0.01
    assert np.histogram(u, bins=10, range=(0, 1))[0].min() > N / 10 * 0.9


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_randn_normal(dtype):
    z = values(ember.randn(N, dtype=getattr(ember, dtype)))
    assert abs(z.mean()) < 0.02
    assert abs(z.std() - 1) < 0.02
    assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 0.01


def test_randint_and_randperm():
    k = ember.randint(-3, 4, (N,)).numpy()
    assert k.min() == -3 and k.max() == 3
    counts = np.bincount(k + 3)
    assert np.all(np.abs(counts / N - 1 / 7) < 0.01)
    big = ember.randint(0, 2**62, (1000,)).numpy()
    assert big.max() > 2**60
    p = ember.randperm(1000).numpy()
    np.testing.assert_array_equal(np.sort(p), np.arange(1000))
    assert not np.array_equal(p, np.arange(1000))
    like = ember.randint_like(ember.zeros(N, dtype=ember.int16), 5, 8).numpy()
    assert like.min() == 5 and like.max() == 7


def test_normal_forms():
    mean = ember.tensor([[0.0], [10.0]])
    std = ember.tensor([1.0, 2.0, 3.0])
    draws = np.stack([values(ember.normal(mean, std)) for _ in range(4000)])
    np.testing.assert_allclose(draws.mean(0), [[0, 0, 0], [10, 10, 10]], atol=0.2)
    np.testing.assert_allclose(draws.std(0), [[1, 2, 3], [1, 2, 3]], rtol=0.06)
    z = values(ember.normal(3.0, 0.5, (N,)))
    assert abs(z.mean() - 3) < 0.01 and abs(z.std() - 0.5) < 0.01
    z = values(ember.normal(ember.full((N,), -2.0), 2.0))
    assert abs(z.mean() + 2) < 0.03 and abs(z.std() - 2) < 0.03
    z = values(ember.normal(1.0, ember.full((N,), 0.1)))
    assert abs(z.mean() - 1) < 0.01 and abs(z.std() - 0.1) < 0.01
    assert np.all(values(ember.normal(ember.arange(4.0), 0.0)) == np.arange(4.0))


def test_bernoulli():
    p = ember.tensor([0.0, 0.2, 0.9, 1.0]).expand(N // 4, 4)
    b = values(ember.bernoulli(p))
    assert set(np.unique(b)) <= {0.0, 1.0}
    np.testing.assert_allclose(b.mean(0), [0, 0.2, 0.9, 1], atol=0.01)
    assert abs(values(ember.bernoulli(ember.zeros(N), 0.3)).mean() - 0.3) < 0.01
    assert abs(values(ember.zeros(N).bernoulli_(0.7)).mean() - 0.7) < 0.01
    q = ember.zeros(N // 4, 4).bernoulli_(ember.tensor([0.1, 0.5, 0.0, 1.0]))
    np.testing.assert_allclose(values(q).mean(0), [0.1, 0.5, 0, 1], atol=0.01)


def test_multinomial_with_replacement():
    w = ember.tensor([[1.0, 0.0, 3.0, 6.0], [5.0, 5.0, 0.0, 0.0]])
    draws = ember.multinomial(w, 50_000, replacement=True).numpy()
    for row, weights in zip(draws, values(w)):
        freq = np.bincount(row, minlength=4) / row.size
        np.testing.assert_allclose(freq, weights / weights.sum(), atol=0.01)


def test_multinomial_without_replacement():
    w = ember.tensor([0.0, 1.0, 2.0, 0.0, 7.0])
    picks = np.stack([ember.multinomial(w, 3).numpy() for _ in range(3000)])
    assert all(len(set(row)) == 3 for row in picks)  # no repeats within a draw
    assert set(np.unique(picks)) == {1, 2, 4}  # zero weights never beat positive ones
    first = np.bincount(picks[:, 0], minlength=5) / len(picks)
    np.testing.assert_allclose(first, [0, 0.1, 0.2, 0, 0.7], atol=0.03)
    full = ember.multinomial(w, 5).numpy()
    np.testing.assert_array_equal(np.sort(full), np.arange(5))
    rows = ember.multinomial(ember.ones(100, 10), 10).numpy()
    assert all(sorted(r) == list(range(10)) for r in rows)
    assert len({tuple(r) for r in rows}) > 90


def test_poisson():
    rates = ember.tensor([0.0, 0.5, 4.0, 30.0]).expand(N // 4, 4)
    k = values(ember.poisson(rates))
    assert np.all(k == np.round(k)) and np.all(k[:, 0] == 0)
    np.testing.assert_allclose(k.mean(0), [0, 0.5, 4, 30], rtol=0.03, atol=0.01)
    np.testing.assert_allclose(k.var(0), [0, 0.5, 4, 30], rtol=0.06, atol=0.01)


def test_in_place_distributions():
    u = values(ember.empty(N).uniform_(-2, 6))
    assert u.min() >= -2 and u.max() < 6 and abs(u.mean() - 2) < 0.05
    z = values(ember.empty(N, dtype=ember.float64).normal_(4, 3))
    assert abs(z.mean() - 4) < 0.05 and abs(z.std() - 3) < 0.05
    e = values(ember.empty(N).exponential_(4.0))
    assert e.min() >= 0 and abs(e.mean() - 0.25) < 0.01 and abs(e.std() - 0.25) < 0.01
    g = values(ember.empty(N).geometric_(0.25))
    assert g.min() == 1 and np.all(g == np.round(g)) and abs(g.mean() - 4) < 0.1
    ln = values(ember.empty(N).log_normal_(1.0, 0.5))
    assert ln.min() > 0
    logs = np.log(ln)
    assert abs(logs.mean() - 1) < 0.01 and abs(logs.std() - 0.5) < 0.01
    c = values(ember.empty(N).cauchy_(3.0, 2.0))
    assert abs(np.median(c) - 3) < 0.05
    q1, q3 = np.percentile(c, [25, 75])  # the quartiles of Cauchy are median -+ sigma
    assert abs(q1 - 1) < 0.1 and abs(q3 - 5) < 0.1


@pytest.mark.parametrize("dtype,top", [("uint8", 255), ("int8", 127), ("float16", 2**11),
                                       ("bfloat16", 2**8), ("bool", 1)])
def test_random_default_range(dtype, top):
    r = values(ember.zeros(N, dtype=getattr(ember, dtype)).random_())
    assert r.min() == 0 and r.max() == top
    assert np.all(r == np.round(r))
    assert values(ember.zeros(1000, dtype=ember.float64).random_()).max() > 2**40


def test_random_bounds():
    r = values(ember.zeros(N).random_(5))
    assert r.min() == 0 and r.max() == 4
    r = values(ember.zeros(N).random_(-5, 0))
    assert r.min() == -5 and r.max() == -1
    r = values(ember.zeros(N, dtype=ember.int64).random_(to=3))
    assert set(np.unique(r)) == {0, 1, 2}
