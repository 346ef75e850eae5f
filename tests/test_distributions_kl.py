"""kl_divergence against torch for every pair torch registers (the test enumerates
torch.distributions.kl._KL_REGISTRY), values and gradients; register_kl and the dispatch
rules (most specific pair, the ambiguity warning, NotImplementedError for unknown pairs)."""
import numpy as np
import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _params(seed, *specs):
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, shape) for low, high, shape in specs]


def _pd(m, a):
    return a @ a.mT + m.eye(a.shape[-1], dtype=a.dtype)


# class name -> (builder, parameter specs (low, high, shape)); the registry's abstract bases
# use a concrete member: ExponentialFamily -> Wishart, TransformedDistribution -> LogNormal
FACTORIES = {
    "Bernoulli": (lambda m, p: m.distributions.Bernoulli(probs=p), [(0.1, 0.9, (3,))]),
    "Beta": (lambda m, a, b: m.distributions.Beta(a, b), [(0.5, 3, (3,)), (0.5, 3, (3,))]),
    "Binomial": (lambda m, p: m.distributions.Binomial(m.tensor([5.0, 6.0, 5.0],
                                                                dtype=p.dtype), probs=p),
                 [(0.1, 0.9, (3,))]),
    "Categorical": (lambda m, p: m.distributions.Categorical(probs=p), [(0.1, 1, (2, 3))]),
    "Cauchy": (lambda m, loc, s: m.distributions.Cauchy(loc, s), [(-1, 1, (3,)), (0.5, 2, (3,))]),
    "ContinuousBernoulli": (lambda m, p: m.distributions.ContinuousBernoulli(probs=p),
                            [(0.1, 0.9, (3,))]),
    "Dirichlet": (lambda m, a: m.distributions.Dirichlet(a), [(0.5, 3, (2, 3))]),
    "Exponential": (lambda m, r: m.distributions.Exponential(r), [(0.5, 2, (3,))]),
    "ExponentialFamily": (lambda m, df, a: m.distributions.Wishart(df, covariance_matrix=_pd(m, a)),
                          [(3.5, 6, (2,)), (-1, 1, (2, 3, 3))]),
    "Gamma": (lambda m, a, r: m.distributions.Gamma(a, r), [(0.5, 3, (3,)), (0.5, 2, (3,))]),
    "Geometric": (lambda m, p: m.distributions.Geometric(probs=p), [(0.2, 0.9, (3,))]),
    "Gumbel": (lambda m, loc, s: m.distributions.Gumbel(loc, s), [(-1, 1, (3,)), (0.5, 2, (3,))]),
    "HalfNormal": (lambda m, s: m.distributions.HalfNormal(s), [(0.5, 2, (3,))]),
    "Independent": (lambda m, loc, s: m.distributions.Independent(
        m.distributions.Normal(loc, s), 1), [(-1, 1, (2, 3)), (0.5, 2, (2, 3))]),
    "Laplace": (lambda m, loc, s: m.distributions.Laplace(loc, s), [(-1, 1, (3,)), (0.5, 2, (3,))]),
    "LowRankMultivariateNormal": (lambda m, loc, w, d: m.distributions.LowRankMultivariateNormal(
        loc, w, d), [(-1, 1, (2, 3)), (-1, 1, (2, 3, 2)), (0.5, 2, (2, 3))]),
    "MultivariateNormal": (lambda m, loc, a: m.distributions.MultivariateNormal(
        loc, covariance_matrix=_pd(m, a)), [(-1, 1, (2, 3)), (-1, 1, (2, 3, 3))]),
    "Normal": (lambda m, loc, s: m.distributions.Normal(loc, s), [(-1, 1, (3,)), (0.5, 2, (3,))]),
    "OneHotCategorical": (lambda m, p: m.distributions.OneHotCategorical(probs=p),
                          [(0.1, 1, (2, 3))]),
    "Pareto": (lambda m, s, a: m.distributions.Pareto(s, a), [(0.1, 0.3, (3,)), (2.5, 4, (3,))]),
    "Poisson": (lambda m, r: m.distributions.Poisson(r), [(0.5, 4, (3,))]),
    "TransformedDistribution": (lambda m, loc, s: m.distributions.LogNormal(loc, s),
                                [(-1, 1, (3,)), (0.5, 2, (3,))]),
    # p = Uniform(0.3.., 0.6..) lies inside every q's support; q = Uniform(-1.., 2..) covers
    # every p's, so most pairs are finite
    "Uniform": (lambda m, low, high: m.distributions.Uniform(low, high),
                [(0.3, 0.4, (3,)), (0.6, 0.7, (3,))]),
}
Q_OVERRIDES = {"Uniform": [(-1.5, -1, (3,)), (2, 2.5, (3,))],
               "Pareto": [(0.05, 0.1, (3,)), (2.5, 4, (3,))],
               "Binomial": [(0.1, 0.9, (3,))]}


def _registered_pairs():
    from torch.distributions.kl import _KL_REGISTRY

    return sorted((p.__name__, q.__name__) for p, q in _KL_REGISTRY)


PAIRS = [pytest.param(p, q, id=f"{p}-{q}") for p, q in _registered_pairs()]


def test_every_registered_pair_of_torch_is_registered_in_ember():
    from ember.distributions.kl import _KL_REGISTRY

    ours = sorted((p.__name__, q.__name__) for p, q in _KL_REGISTRY)
    assert ours == _registered_pairs()


@pytest.mark.parametrize("p_name,q_name", PAIRS)
def test_kl_divergence_matches_torch(p_name, q_name):
    build_p, p_specs = FACTORIES[p_name]
    build_q, q_specs = FACTORIES[q_name]
    p_params = _params(1, *p_specs)
    q_params = _params(2, *Q_OVERRIDES.get(q_name, q_specs))
    n = len(p_params)

    def kl(m, *tensors):
        return m.distributions.kl_divergence(build_p(m, *tensors[:n]), build_q(m, *tensors[n:]))

    check(kl, p_params + q_params)


def test_binomial_pair_refuses_a_larger_q_count():
    check_raises(lambda m: m.distributions.kl_divergence(
        m.distributions.Binomial(3, probs=m.tensor([0.5])),
        m.distributions.Binomial(5, probs=m.tensor([0.5]))))


def test_unregistered_pairs_raise():
    error = check_raises(lambda m: m.distributions.kl_divergence(
        m.distributions.VonMises(m.tensor(0.0), m.tensor(1.0)),
        m.distributions.Normal(0.0, 1.0)))
    assert isinstance(error, NotImplementedError) and "No KL(p || q)" in str(error)
    error = check_raises(lambda m: m.distributions.kl_divergence(
        m.distributions.Gamma(m.tensor(1.0), m.tensor(1.0)),
        m.distributions.Wishart(3.0, covariance_matrix=m.eye(2))))
    assert isinstance(error, NotImplementedError)


def test_register_kl_and_dispatch():
    D = ember.distributions

    class MyNormal(D.Normal):
        pass

    class MyOther(D.Normal):
        pass

    p = MyNormal(ember.tensor(0.0), ember.tensor(1.0))
    q = MyNormal(ember.tensor(1.0), ember.tensor(2.0))
    # a subclass pair without its own entry uses the parent pair
    assert D.kl_divergence(p, q).item() == pytest.approx(
        D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 2.0)).item())
    try:
        @D.register_kl(MyNormal, D.Normal)
        def _mine(p, q):
            return ember.tensor(42.0)

        assert D.kl_divergence(p, q).item() == 42.0

        @D.register_kl(D.Normal, MyOther)
        def _other(p, q):
            return ember.tensor(7.0)

        with pytest.warns(RuntimeWarning, match="Ambiguous kl_divergence"):
            D.kl_divergence(p, MyOther(ember.tensor(0.0), ember.tensor(1.0)))
    finally:
        from ember.distributions import kl

        kl._KL_REGISTRY.pop((MyNormal, D.Normal), None)
        kl._KL_REGISTRY.pop((D.Normal, MyOther), None)
        kl._KL_MEMOIZE.clear()
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


@pytest.mark.parametrize("fn,inputs", [
    (lambda m, a, b: m.distributions.kl_divergence(m.distributions.Uniform(a, a + 1),
                                                   m.distributions.Uniform(b, b + 1.5)),
     [np.array([0.0, 0.2, -0.4]), np.array([0.0, -0.5, 0.1])]),
    (lambda m, s, t: m.distributions.kl_divergence(m.distributions.Pareto(s, 3.0),
                                                   m.distributions.Pareto(t, 2.0)),
     [np.array([1.0, 0.5, 2.0]), np.array([0.8, 0.9, 2.0])]),
    (lambda m, p, q: m.distributions.kl_divergence(m.distributions.Bernoulli(p),
                                                   m.distributions.Bernoulli(q)),
     [np.array([0.0, 1.0, 0.3, 0.3, 0.0]), np.array([0.5, 0.5, 0.0, 1.0, 0.0])]),
    (lambda m, p, q: m.distributions.kl_divergence(m.distributions.Categorical(p),
                                                   m.distributions.Categorical(q)),
     [np.array([[0.0, 0.5, 0.5], [0.2, 0.3, 0.5]]), np.array([[0.3, 0.7, 0.0], [0.1, 0.1, 0.8]])]),
])
def test_kl_edges_of_the_supports(fn, inputs):
    check(fn, inputs)
