"""nn.init vs torch: gains, fans, errors and warnings; the deterministic initialisers exactly;
the random ones by their statistics on large tensors (bounds, mean, std against the formula and
against torch's own samples); the default initialisation of Linear / Conv2d / Bilinear."""
import math
import warnings

import numpy as np
import pytest

import ember
from ember.nn import init

from .test_nn_module import cases_of, outcome, register, same

INIT = {}
case = register(INIT)


def I(m):  # noqa: E743 (the module under test)
    return m.nn.init


@case
def gain_table(m):
    names = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
             "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"]
    return ([I(m).calculate_gain(n) for n in names],
            [I(m).calculate_gain("leaky_relu", p) for p in (0.2, 1, 0)],
            [outcome(m, lambda m: I(m).calculate_gain(*args)) for args in
             [("foo",), ("leaky_relu", True), ("leaky_relu", "x")]])


@case
def fans(m):
    shapes = [(3, 4), (5, 2, 3), (6, 3, 2, 2), (2, 4, 1, 2, 3), (0, 3)]
    return ([I(m)._calculate_fan_in_and_fan_out(m.empty(*s)) for s in shapes],
            outcome(m, lambda m: I(m)._calculate_fan_in_and_fan_out(m.empty(3))),
            outcome(m, lambda m: I(m).xavier_uniform_(m.empty(3))),
            outcome(m, lambda m: I(m).kaiming_uniform_(m.empty(3, 3), mode="fan_avg")),
            I(m).kaiming_normal_(m.empty(3, 3), mode="FAN_OUT").shape)


@case
def zero_element_kaiming_warns(m):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = I(m).kaiming_uniform_(m.empty(0, 3))
        I(m).kaiming_normal_(m.empty(3, 0))
    return [str(w.message) for w in caught], t.shape


@case
def eye(m):
    return (I(m).eye_(m.empty(3, 5)), I(m).eye_(m.empty(4, 2)),
            outcome(m, lambda m: I(m).eye_(m.empty(3, 3, 3))))


@case
def dirac(m):
    return (I(m).dirac_(m.empty(4, 3, 3)), I(m).dirac_(m.empty(6, 2, 3, 2), groups=3),
            I(m).dirac_(m.empty(2, 3, 3, 1, 2)), I(m).dirac_(m.empty(3, 5, 2, 2)),
            outcome(m, lambda m: I(m).dirac_(m.empty(3, 3))),
            outcome(m, lambda m: I(m).dirac_(m.empty(5, 2, 3), groups=2)))


@case
def constants(m):
    return (I(m).constant_(m.empty(2), 3), I(m).ones_(m.empty(2)), I(m).zeros_(m.ones(2)),
            I(m).constant_(m.empty(2, dtype=m.int64), 3))


@case
def every_initialiser_returns_its_argument(m):
    t = m.empty(4, 4)
    fns = [lambda t: I(m).uniform_(t), lambda t: I(m).normal_(t),
           lambda t: I(m).trunc_normal_(t), lambda t: I(m).xavier_uniform_(t),
           lambda t: I(m).xavier_normal_(t), lambda t: I(m).kaiming_uniform_(t),
           lambda t: I(m).kaiming_normal_(t), lambda t: I(m).orthogonal_(t),
           lambda t: I(m).sparse_(t, 0.5), lambda t: I(m).eye_(t),
           lambda t: I(m).constant_(t, 1), lambda t: I(m).zeros_(t), lambda t: I(m).ones_(t)]
    return [f(t) is t for f in fns]


@case
def parameters_stay_leaves(m):
    p = m.nn.Parameter(m.empty(3, 3))
    I(m).kaiming_uniform_(p)
    I(m).orthogonal_(p)
    I(m).sparse_(p, 0.3)
    I(m).eye_(p)
    I(m).trunc_normal_(p)
    I(m).dirac_(m.nn.Parameter(m.empty(2, 2, 3)))
    return p.requires_grad, p.is_leaf, p.grad_fn


@case
def orthogonal_and_sparse_errors(m):
    return (outcome(m, lambda m: I(m).orthogonal_(m.empty(3))),
            I(m).orthogonal_(m.empty(0, 3)).shape,
            outcome(m, lambda m: I(m).sparse_(m.empty(3, 3, 3), 0.1)))


@case
def sparse_zeros_per_column(m):
    t = I(m).sparse_(m.empty(10, 7), 0.25)
    return (t == 0).sum(0)


@case
def deprecated_aliases(m):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name in ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform",
                     "xavier_normal", "kaiming_uniform", "kaiming_normal", "orthogonal",
                     "sparse"]:
            t = m.empty(3, 3, 3) if name == "dirac" else m.empty(3, 3)
            args = (1.0,) if name == "constant" else (0.5,) if name == "sparse" else ()
            getattr(I(m), name)(t, *args)
    return [(w.category.__name__, str(w.message)) for w in caught]


@case
def trunc_normal_warning(m):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        I(m).trunc_normal_(m.empty(3), mean=10)
    return [str(w.message) for w in caught]


@cases_of(INIT)
def test_init_like_torch(fn):
    same(fn)


# ----------------------------------------------------------------------------------------------
# statistics of the random initialisers (formulas from torch's docs; 4e5 samples)

SHAPE = (400, 250, 2, 2)  # fan_in 1000, fan_out 1600


def _sample(fn, *args, **kwargs):
    return fn(ember.empty(*SHAPE), *args, **kwargs).numpy().astype(np.float64)


@pytest.mark.parametrize("fn,args,kwargs,bound", [
    (init.uniform_, (-0.3, 0.7), {}, (-0.3, 0.7)),
    (init.xavier_uniform_, (), {"gain": 2.0}, 2.0 * math.sqrt(6 / 2600)),
    # a=0: leaky_relu with slope 0, so gain sqrt(2)
    (init.kaiming_uniform_, (), {}, math.sqrt(3) * math.sqrt(2) / math.sqrt(1000)),
    (init.kaiming_uniform_, (), {"a": math.sqrt(5)}, 1 / math.sqrt(1000)),
    (init.kaiming_uniform_, (), {"mode": "fan_out", "nonlinearity": "relu"},
     math.sqrt(3) * math.sqrt(2) / math.sqrt(1600)),
])
def test_uniform_initialisers_bounds_and_moments(fn, args, kwargs, bound):
    low, high = bound if isinstance(bound, tuple) else (-bound, bound)
    x = _sample(fn, *args, **kwargs)
    slack = 1e-6 * (high - low)  # the bounds themselves are rounded to float32
    assert low - slack <= x.min() and x.max() <= high + slack
    assert x.min() < low + 0.01 * (high - low) and x.max() > high - 0.01 * (high - low)
    assert abs(x.mean() - (low + high) / 2) < 0.01 * (high - low)
    assert abs(x.std() - (high - low) / math.sqrt(12)) < 0.01 * (high - low)


@pytest.mark.parametrize("fn,args,kwargs,mean,std", [
    (init.normal_, (0.5, 2.0), {}, 0.5, 2.0),
    (init.xavier_normal_, (), {"gain": 3.0}, 0.0, 3.0 * math.sqrt(2 / 2600)),
    (init.kaiming_normal_, (), {"a": 0.2}, 0.0, math.sqrt(2 / 1.04) / math.sqrt(1000)),
    (init.kaiming_normal_, (), {"mode": "fan_out", "nonlinearity": "tanh"}, 0.0,
     (5 / 3) / math.sqrt(1600)),
])
def test_normal_initialisers_moments(fn, args, kwargs, mean, std):
    x = _sample(fn, *args, **kwargs)
    assert abs(x.mean() - mean) < 0.01 * std
    assert abs(x.std() - std) < 0.01 * std


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (1.0, 0.5, 0.0, 3.0),
                                          (0.0, 1.0, 0.5, 1.0)])
def test_trunc_normal_bounds_and_moments(mean, std, a, b):
    x = _sample(init.trunc_normal_, mean, std, a, b)
    true_mean, true_std = _truncated_normal_moments(mean, std, a, b)
    assert a <= x.min() and x.max() <= b
    assert abs(x.mean() - true_mean) < 0.01 * true_std
    assert abs(x.std() - true_std) < 0.01 * true_std


def _truncated_normal_moments(mean, std, a, b):
    """Mean and std of N(mean, std^2) restricted to [a, b] (the textbook formulas)."""
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: (1 + math.erf(z / math.sqrt(2))) / 2  # noqa: E731
    mass = cdf(beta) - cdf(alpha)
    shift = (pdf(alpha) - pdf(beta)) / mass
    var = 1 + (alpha * pdf(alpha) - beta * pdf(beta)) / mass - shift ** 2
    return mean + std * shift, std * math.sqrt(var)


@pytest.mark.parametrize("name,args,bounded", [
    ("uniform_", (-1, 2), True), ("normal_", (1, 3), False),
    ("trunc_normal_", (0, 1, -1, 2), True), ("xavier_uniform_", (), True),
    ("xavier_normal_", (), False), ("kaiming_uniform_", (0.1,), True),
    ("kaiming_normal_", (0.1, "fan_out"), False)])
def test_random_initialisers_match_torch_statistics(name, args, bounded):
    torch = pytest.importorskip("torch")
    e = getattr(init, name)(ember.empty(*SHAPE), *args).numpy().astype(np.float64)
    t = getattr(torch.nn.init, name)(torch.empty(*SHAPE), *args).numpy().astype(np.float64)
    spread = t.std()
    assert abs(e.mean() - t.mean()) < 0.01 * spread
    assert abs(e.std() - t.std()) < 0.01 * spread
    if bounded:  # the same support (unbounded tails are too random to compare)
        assert abs(e.min() - t.min()) < 0.01 * spread and abs(e.max() - t.max()) < 0.01 * spread


@pytest.mark.parametrize("shape,gain", [((30, 30), 1.0), ((20, 50), 2.0), ((50, 20), 0.5),
                                        ((8, 3, 2, 2), 1.0)])
def test_orthogonal_gives_orthonormal_rows_or_columns(shape, gain):
    q = init.orthogonal_(ember.empty(*shape, dtype=ember.float64), gain=gain).numpy()
    flat = q.reshape(shape[0], -1) / gain
    rows, cols = flat.shape
    gram = flat @ flat.T if rows <= cols else flat.T @ flat
    np.testing.assert_allclose(gram, np.eye(min(rows, cols)), atol=1e-10)


def test_orthogonal_is_not_always_the_same_matrix():
    a = init.orthogonal_(ember.empty(5, 5)).numpy().copy()
    b = init.orthogonal_(ember.empty(5, 5)).numpy()
    assert not np.allclose(a, b)


def test_orthogonal_respects_generator():
    g1 = ember.Generator().manual_seed(3)
    g2 = ember.Generator().manual_seed(3)
    a = init.orthogonal_(ember.empty(4, 6), generator=g1).numpy()
    b = init.orthogonal_(ember.empty(4, 6), generator=g2).numpy()
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_dirac_convolution_is_identity(dims):
    conv = getattr(ember.nn.functional, f"conv{dims}d")
    w = init.dirac_(ember.empty(4, 4, *([3] * dims), dtype=ember.float64))
    x = ember.from_numpy(np.random.default_rng(0).standard_normal((2, 4) + (5,) * dims))
    np.testing.assert_allclose(conv(x, w, padding=1).numpy(), x.numpy(), atol=1e-12)


def test_dirac_groups_preserve_each_group():
    w = init.dirac_(ember.empty(6, 2, 3, 3, dtype=ember.float64), groups=3)
    x = ember.from_numpy(np.random.default_rng(1).standard_normal((1, 6, 4, 4)))
    out = ember.nn.functional.conv2d(x, w, padding=1, groups=3).numpy()
    np.testing.assert_allclose(out[:, [0, 1, 2, 3, 4, 5]], x.numpy(), atol=1e-12)


def test_sparse_values_and_sparsity():
    t = init.sparse_(ember.empty(200, 300), 0.3, std=0.5).numpy()
    assert ((t == 0).sum(0) >= 60).all()  # ceil(0.3 * 200) zeros in each column
    nonzero = t[t != 0]
    assert abs(nonzero.std() - 0.5) < 0.02 and abs(nonzero.mean()) < 0.02


def test_init_bumps_the_version_and_records_no_history():
    p = ember.nn.Parameter(ember.empty(3, 3))
    before = p._version
    init.eye_(p)
    assert p._version > before and p.grad_fn is None


# ----------------------------------------------------------------------------------------------
# default initialisation of layers


@pytest.mark.parametrize("make", [
    lambda m: m.nn.Linear(600, 500),
    lambda m: m.nn.Conv2d(40, 600, 3),
    lambda m: m.nn.Bilinear(30, 20, 600),
])
def test_default_layer_initialisation_matches_torch(make):
    torch = pytest.importorskip("torch")
    e_layer, t_layer = make(ember), make(torch)
    assert [n for n, _ in e_layer.named_parameters()] == [n for n, _ in t_layer.named_parameters()]
    for name, t_param in t_layer.named_parameters():
        e = e_layer.get_parameter(name).detach().numpy().astype(np.float64)
        t = t_param.detach().numpy().astype(np.float64)
        assert e.shape == t.shape
        # both uniform on the same [-bound, bound]: the largest |value| of each sample is
        # within a few 1/n of the bound, and the spreads agree within sampling error
        bound = max(np.abs(e).max(), np.abs(t).max())
        assert min(np.abs(e).max(), np.abs(t).max()) > bound * (1 - 20 / e.size), name
        tolerance = 4 * 0.45 * math.sqrt(2 / e.size)  # the relative error of a uniform's std
        assert abs(e.std() / t.std() - 1) < tolerance, name
        assert abs(e.mean()) < 4 * t.std() / math.sqrt(e.size), name
