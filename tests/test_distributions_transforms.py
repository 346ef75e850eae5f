"""Transforms, constraints, biject_to / transform_to and validate_args against torch:
forward, inverse and log-det-Jacobian values and gradients, shapes, flags and caching; every
constraint's check on valid and invalid values; the transforms the registries pick; the
ValueErrors of argument validation."""
import math

import numpy as np
import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("one_torch_thread")

RNG = np.random.default_rng(5)
X = RNG.uniform(-1.5, 1.5, (2, 3))
POSITIVE = RNG.uniform(0.2, 2.0, (2, 3))


def T(m):
    return m.distributions.transforms


# name -> (transform builder, an input in its domain)
TRANSFORMS = {
    "Exp": (lambda m: T(m).ExpTransform(), X),
    "Power": (lambda m: T(m).PowerTransform(m.tensor([0.5, 2.0, -1.5], dtype=m.float64)),
              POSITIVE),
    "Sigmoid": (lambda m: T(m).SigmoidTransform(), X),
    "Softplus": (lambda m: T(m).SoftplusTransform(), X),
    "Tanh": (lambda m: T(m).TanhTransform(), X),
    "Abs": (lambda m: T(m).AbsTransform(), X),
    "Affine": (lambda m: T(m).AffineTransform(m.tensor([1.0, -2.0, 0.5], dtype=m.float64),
                                              m.tensor([2.0, -0.5, 3.0], dtype=m.float64)), X),
    "Affine_event": (lambda m: T(m).AffineTransform(0.5, -2.0, event_dim=1), X),
    "Softmax": (lambda m: T(m).SoftmaxTransform(), X),
    "StickBreaking": (lambda m: T(m).StickBreakingTransform(), X),
    "LowerCholesky": (lambda m: T(m).LowerCholeskyTransform(), RNG.uniform(-1, 1, (2, 3, 3))),
    "PositiveDefinite": (lambda m: T(m).PositiveDefiniteTransform(),
                         RNG.uniform(-1, 1, (2, 3, 3))),
    "CorrCholesky": (lambda m: T(m).CorrCholeskyTransform(), RNG.uniform(-1, 1, (2, 6))),
    "Reshape": (lambda m: T(m).ReshapeTransform((3,), (3, 1)), X),
    "Compose": (lambda m: T(m).ComposeTransform([T(m).AffineTransform(0.5, 2.0),
                                                 T(m).ExpTransform(),
                                                 T(m).PowerTransform(m.tensor(0.5))]), X),
    "Compose_empty": (lambda m: T(m).ComposeTransform([]), X),
    "Independent": (lambda m: T(m).IndependentTransform(T(m).ExpTransform(), 1), X),
    "Inverse": (lambda m: T(m).SigmoidTransform().inv, RNG.uniform(0.1, 0.9, (2, 3))),
    "Cat": (lambda m: T(m).CatTransform([T(m).ExpTransform(), T(m).AffineTransform(1.0, 3.0)],
                                        dim=-1, lengths=[1, 2]), X),
    "Stack": (lambda m: T(m).StackTransform([T(m).ExpTransform(), T(m).TanhTransform(),
                                             T(m).AffineTransform(1.0, 3.0)], dim=1), X),
    "CumulativeDistribution": (lambda m: T(m).CumulativeDistributionTransform(
        m.distributions.Normal(m.tensor(0.5, dtype=m.float64), 2.0)), X),
}
CASES = [pytest.param(name, id=name) for name in TRANSFORMS]


def _not_implemented_alike(fn, x):
    """fn's result in both libraries, or NotImplementedError in both."""
    try:
        fn(torch, torch.from_numpy(x))
    except NotImplementedError:
        error = check_raises(fn, [x])
        assert isinstance(error, NotImplementedError)
        return False
    return True


@pytest.mark.parametrize("name", CASES)
def test_forward_inverse_and_jacobian(name):
    build, x = TRANSFORMS[name]
    check(lambda m, a: build(m)(a), [x])
    check(lambda m, a: build(m).inv(build(m)(a.detach())), [x], grad=False)
    jacobian = lambda m, a: build(m).log_abs_det_jacobian(a, build(m)(a))  # noqa: E731
    if _not_implemented_alike(jacobian, x):
        check(jacobian, [x])


@pytest.mark.parametrize("name", CASES)
def test_flags_shapes_and_domains(name):
    build, x = TRANSFORMS[name]
    e, t = build(ember), build(torch)
    assert e.bijective == t.bijective
    for part in ("domain", "codomain"):
        assert type(getattr(e, part)).__name__ == type(getattr(t, part)).__name__
        assert getattr(e, part).event_dim == getattr(t, part).event_dim
    for shape in (x.shape, (5,) + x.shape):
        assert tuple(e.forward_shape(ember.Size(shape))) == tuple(t.forward_shape(
            torch.Size(shape)))
        y_shape = tuple(t.forward_shape(torch.Size(shape)))
        assert tuple(e.inverse_shape(ember.Size(y_shape))) == tuple(t.inverse_shape(
            torch.Size(y_shape)))
    assert e.inv.inv is e
    try:
        expected = t.sign
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            e.sign
    else:
        got = e.sign
        assert (got.tolist() if isinstance(got, ember.Tensor) else got) == (
            expected.tolist() if isinstance(expected, torch.Tensor) else expected)


def test_reprs_and_equality():
    D = ember.distributions
    for name in ("Exp", "Sigmoid", "Tanh", "Compose", "Independent", "Inverse"):
        assert repr(TRANSFORMS[name][0](ember)) == repr(TRANSFORMS[name][0](torch))
    assert D.ExpTransform() == D.ExpTransform() and D.ExpTransform() != D.SigmoidTransform()
    assert D.AffineTransform(1.0, 2.0) == D.AffineTransform(1.0, 2.0)
    assert D.AffineTransform(1.0, 2.0) != D.AffineTransform(1.0, 3.0)
    assert D.ExpTransform().inv == D.ExpTransform().inv
    assert D.ComposeTransform([D.ExpTransform()]) == D.ComposeTransform([D.ExpTransform()])


def test_cache():
    D = ember.distributions
    x = ember.tensor([0.3, 1.2])
    for t in (D.ExpTransform(cache_size=1), D.ExpTransform().with_cache(1),
              D.ComposeTransform([D.ExpTransform(), D.AffineTransform(1.0, 2.0)], cache_size=1)):
        y = t(x)
        assert t(x) is y and t.inv(y) is x
    assert D.ExpTransform().inv(D.ExpTransform()(x)) is not x
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.ExpTransform(cache_size=2)


CONSTRAINT_VALUES = [
    ("real", np.array([0.0, -np.inf, np.nan, 3.0])),
    ("positive", np.array([0.0, 1e-3, -1.0, np.inf])),
    ("nonnegative", np.array([0.0, 1e-3, -1.0])),
    ("unit_interval", np.array([0.0, 1.0, 1.5, -0.1, 0.5])),
    ("boolean", np.array([0.0, 1.0, 0.5, 2.0])),
    ("nonnegative_integer", np.array([0.0, 3.0, -1.0, 2.5])),
    ("positive_integer", np.array([0.0, 3.0, 1.0])),
    ("simplex", np.array([[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1]])),
    ("one_hot", np.array([[0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])),
    ("real_vector", np.array([[0.0, 1.0], [np.nan, 1.0]])),
    ("lower_triangular", np.array([[[1.0, 0.0], [2.0, 3.0]], [[1.0, 1.0], [0.0, 1.0]]])),
    ("lower_cholesky", np.array([[[1.0, 0.0], [2.0, 3.0]], [[1.0, 0.0], [2.0, -3.0]]])),
    ("corr_cholesky", np.array([[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.6, 0.9]]])),
    ("square", np.ones((2, 2, 2))),
    ("symmetric", np.array([[[1.0, 2.0], [2.0, 1.0]], [[1.0, 2.0], [3.0, 1.0]]])),
    ("positive_semidefinite", np.array([[[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])),
    ("positive_definite", np.array([[[2.0, 1.0], [1.0, 2.0]], [[1.0, 1.0], [1.0, 1.0]]])),
]
FACTORY_CONSTRAINTS = [
    ("greater_than", lambda c: c.greater_than(1.0), np.array([0.5, 1.0, 2.0])),
    ("greater_than_eq", lambda c: c.greater_than_eq(1.0), np.array([0.5, 1.0, 2.0])),
    ("less_than", lambda c: c.less_than(1.0), np.array([0.5, 1.0, 2.0])),
    ("interval", lambda c: c.interval(-1.0, 1.0), np.array([-1.0, 1.0, 2.0])),
    ("half_open_interval", lambda c: c.half_open_interval(-1.0, 1.0), np.array([-1.0, 1.0])),
    ("integer_interval", lambda c: c.integer_interval(0, 3), np.array([0.0, 3.0, 4.0, 1.5])),
    ("multinomial", lambda c: c.multinomial(3), np.array([[1.0, 2.0], [2.0, 2.0]])),
    ("independent", lambda c: c.independent(c.positive, 1), np.array([[1.0, 2.0], [1.0, 0.0]])),
    ("cat", lambda c: c.cat([c.positive, c.real], dim=0, lengths=[1, 2]),
     np.array([-1.0, 0.0, 2.0])),
    ("stack", lambda c: c.stack([c.positive, c.unit_interval], dim=-1),
     np.array([[1.0, 0.5], [1.0, 1.5]])),
]


@pytest.mark.parametrize("name,value", CONSTRAINT_VALUES, ids=[n for n, _ in CONSTRAINT_VALUES])
def test_constraints_check(name, value):
    check(lambda m, v: getattr(m.distributions.constraints, name).check(v), [value],
          grad=False)
    e = getattr(ember.distributions.constraints, name)
    t = getattr(torch.distributions.constraints, name)
    assert (repr(e), e.event_dim, e.is_discrete) == (repr(t), t.event_dim, t.is_discrete)


@pytest.mark.parametrize("name,make,value", FACTORY_CONSTRAINTS,
                         ids=[n for n, _, _ in FACTORY_CONSTRAINTS])
def test_constraint_factories(name, make, value):
    check(lambda m, v: make(m.distributions.constraints).check(v), [value], grad=False)
    e = make(ember.distributions.constraints)
    t = make(torch.distributions.constraints)
    assert (e.event_dim, e.is_discrete) == (t.event_dim, t.is_discrete)
    if name not in ("cat", "stack", "multinomial"):
        assert repr(e) == repr(t)


def test_dependent_constraints():
    c = ember.distributions.constraints
    assert c.is_dependent(c.dependent) and not c.is_dependent(c.real)
    with pytest.raises(ValueError, match="Cannot determine validity"):
        c.dependent.check(ember.zeros(2))
    with pytest.raises(NotImplementedError):
        c.dependent.event_dim
    assert c.dependent(is_discrete=True, event_dim=1).event_dim == 1
    assert c.is_dependent(ember.distributions.Uniform.support)
    assert c.is_dependent(ember.distributions.Pareto.support)


REGISTRY_CONSTRAINTS = [
    lambda c: c.real, lambda c: c.positive, lambda c: c.nonnegative,
    lambda c: c.greater_than(-2.0), lambda c: c.greater_than_eq(1.5), lambda c: c.less_than(3.0),
    lambda c: c.unit_interval, lambda c: c.interval(-1.0, 4.0),
    lambda c: c.half_open_interval(0.5, 2.0), lambda c: c.simplex, lambda c: c.real_vector,
    lambda c: c.independent(c.positive, 2), lambda c: c.lower_cholesky,
    lambda c: c.positive_definite, lambda c: c.positive_semidefinite, lambda c: c.corr_cholesky,
    lambda c: c.cat([c.positive, c.real], -1, [1, 2]),
    lambda c: c.stack([c.positive, c.unit_interval, c.real], -1),
]


def _unconstrained_input(t):
    shape = (2, 3, 3) if t.domain.event_dim == 2 else (2, 3)
    return RNG.uniform(-1, 1, shape)


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("make", REGISTRY_CONSTRAINTS)
def test_biject_to_and_transform_to(registry, make):
    t_c = make(torch.distributions.constraints)
    try:
        t_t = getattr(torch.distributions, registry)(t_c)
    except NotImplementedError:
        error = check_raises(lambda m: getattr(m.distributions, registry)(
            make(m.distributions.constraints)))
        assert isinstance(error, NotImplementedError)
        return
    e_t = getattr(ember.distributions, registry)(make(ember.distributions.constraints))
    assert repr(e_t) == repr(t_t) or type(e_t).__name__ == type(t_t).__name__
    x = _unconstrained_input(t_t)
    check(lambda m, a: getattr(m.distributions, registry)(make(m.distributions.constraints))(a),
          [x])
    y = e_t(ember.tensor(x))
    assert bool(make(ember.distributions.constraints).check(y).all())


def test_registry_errors_and_registration():
    D = ember.distributions
    with pytest.raises(NotImplementedError, match="Cannot transform _Multinomial constraints"):
        D.biject_to(D.constraints.multinomial(3))
    with pytest.raises(TypeError):
        D.biject_to.register(int, lambda c: None)
    registry = D.constraint_registry.ConstraintRegistry()
    registry.register(D.constraints.positive, lambda c: D.SoftplusTransform())
    assert isinstance(registry(D.constraints.positive), D.SoftplusTransform)


# ----------------------------------------------------------------------------------------------
# validate_args


@pytest.mark.parametrize("fn", [
    lambda m: m.distributions.Normal(m.tensor([0.0]), m.tensor([-1.0])),
    lambda m: m.distributions.Normal(m.tensor([math.nan]), m.tensor([1.0])),
    lambda m: m.distributions.Gamma(m.tensor([1.0]), m.tensor([0.0])),
    lambda m: m.distributions.Bernoulli(probs=m.tensor([1.5])),
    lambda m: m.distributions.Bernoulli(probs=m.tensor([0.5]), logits=m.tensor([0.0])),
    lambda m: m.distributions.Bernoulli(),
    lambda m: m.distributions.Categorical(probs=m.tensor([[0.5, -0.1]])),
    lambda m: m.distributions.Categorical(probs=m.tensor(0.5)),
    lambda m: m.distributions.Dirichlet(m.tensor([1.0, 0.0])),
    lambda m: m.distributions.Dirichlet(m.tensor(1.0)),
    lambda m: m.distributions.Uniform(m.tensor([1.0]), m.tensor([0.5])),
    lambda m: m.distributions.Geometric(probs=m.tensor([0.0])),
    lambda m: m.distributions.Binomial(m.tensor([2.5]), probs=m.tensor([0.5])),
    lambda m: m.distributions.Multinomial(m.tensor(3), probs=m.tensor([0.5, 0.5])),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), covariance_matrix=-m.eye(2)),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2)),
    lambda m: m.distributions.MultivariateNormal(m.tensor(0.0), covariance_matrix=m.eye(2)),
    lambda m: m.distributions.LowRankMultivariateNormal(m.zeros(2), m.ones(3, 1), m.ones(2)),
    lambda m: m.distributions.Wishart(1.0, covariance_matrix=m.eye(3)),
    lambda m: m.distributions.LKJCholesky(1),
    lambda m: m.distributions.Independent(m.distributions.Normal(0.0, 1.0), 1),
    lambda m: m.distributions.MixtureSameFamily(m.distributions.Categorical(m.ones(3)),
                                                m.distributions.Normal(m.zeros(2), 1.0)),
    lambda m: m.distributions.TransformedDistribution(m.distributions.Normal(0.0, 1.0), 3),
    lambda m: m.distributions.VonMises(m.tensor(0.0), m.tensor(-1.0)),
    lambda m: m.distributions.StudentT(m.tensor([-1.0])),
])
def test_invalid_parameters_raise_like_torch(fn):
    error = check_raises(fn)
    with pytest.raises(Exception) as expected:
        fn(torch)
    if isinstance(error, ValueError):  # the same message, up to the library's name
        first_line = str(expected.value).split("\n")[0].replace("torch.", "")
        assert str(error).split("\n")[0].replace("ember.", "") == first_line


@pytest.mark.parametrize("fn", [
    lambda m: m.distributions.Normal(0.0, 1.0).log_prob(m.tensor([math.nan])),
    lambda m: m.distributions.Exponential(m.tensor([1.0])).log_prob(m.tensor([-1.0])),
    lambda m: m.distributions.Bernoulli(m.tensor([0.3])).log_prob(m.tensor([0.5])),
    lambda m: m.distributions.Categorical(m.ones(3)).log_prob(m.tensor([3])),
    lambda m: m.distributions.Beta(m.tensor(2.0), m.tensor(2.0)).log_prob(m.tensor(1.5)),
    lambda m: m.distributions.Dirichlet(m.ones(3)).log_prob(m.ones(2)),
    lambda m: m.distributions.Normal(m.zeros(3), 1.0).log_prob(m.zeros(2)),
    lambda m: m.distributions.Normal(0.0, 1.0).log_prob([0.5]),
    lambda m: m.distributions.Poisson(m.tensor([1.0])).log_prob(m.tensor([1.5])),
])
def test_invalid_values_raise_like_torch(fn):
    error = check_raises(fn)
    assert isinstance(error, ValueError)
    with pytest.raises(ValueError) as expected:
        fn(torch)
    first_line = str(expected.value).split("\n")[0].replace("torch.", "")
    assert str(error).split("\n")[0].replace("ember.", "") == first_line


def test_validate_args_off():
    D = ember.distributions
    d = D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]), validate_args=False)
    assert bool(d.log_prob(ember.tensor([0.0])).isnan().all())
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(ember.tensor([0.0]), ember.tensor([-1.0]))
        assert not D.Normal(0.0, 1.0)._validate_args
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(3)
    assert D.Normal(0.0, 1.0, validate_args=True)._validate_args
