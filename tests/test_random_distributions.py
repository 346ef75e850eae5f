"""torch's random streams through the distributions' samplers: `_standard_gamma`,
`_sample_dirichlet` and `binomial` (per-element rejection loops) give torch's numbers, bit for
bit, after the same seed, with the global generator and explicit ones, and leave the
generator where torch leaves it; so do the distributions built on them (those that transform
their draws with exp, log, pow... equal torch's to float rounding). Not compared:
LKJCholesky (ember's sampler corrects a Beta parameter of torch's, see its module) and
Wishart (torch 2.13 resamples every non-singular draw, its singularity test inverted)."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

rng = np.random.default_rng(19)


def same_stream(fn, seed=0):
    """fn(lib, generator, tensor) equal for torch and ember (bit patterns), and the next
    draws after it too (the generator moved as far, its normal cache alike)."""
    for explicit in (False, True):
        results = []
        for lib in (torch, ember):
            lib.manual_seed(seed)
            g = lib.Generator().manual_seed(seed + 7) if explicit else None
            out = fn(lib, g, lambda a: lib.from_numpy(np.array(a)))
            after = [lib.rand(3, generator=g), lib.randn(3, dtype=lib.float64, generator=g)]
            results.append([out.detach().contiguous()] + after)
        for e, t in zip(results[1], results[0]):
            assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
            np.testing.assert_array_equal(e.numpy().view(np.uint8), t.numpy().view(np.uint8))


CONCENTRATIONS = {
    "around-one": np.linspace(0.0, 5.0, 301),
    "small": np.geomspace(1e-6, 1.0, 50),
    "large": np.geomspace(1.0, 1e6, 50),
    "special": np.array([0.0, -1.0, -0.5, np.nan, np.inf, 1e-30, 1.0]),
}


@pytest.mark.parametrize("name", ["float32", "float64"])
@pytest.mark.parametrize("kind", list(CONCENTRATIONS))
def test_standard_gamma(kind, name):
    alpha = CONCENTRATIONS[kind].astype(name)
    same_stream(lambda m, g, T: m._standard_gamma(T(alpha), generator=g))


def test_standard_gamma_non_contiguous_and_after_a_cached_normal():
    alpha = rng.random((6, 5)) * 3
    same_stream(lambda m, g, T: m._standard_gamma(T(alpha).t(), generator=g))
    # an odd number of double normals leaves a sine cached in the generator: gamma uses it
    same_stream(lambda m, g, T: m.cat([m.randn(3, dtype=m.float64, generator=g),
                                       m._standard_gamma(T(alpha[0]), generator=g)]))


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_sample_dirichlet(name):
    # the normalising sums too are added in torch's order (rows of 1 to 287 categories)
    for alpha in (rng.random((40, 4)) * 2 + 0.01, np.full((30, 3), 1e-3), rng.random(5) + 3,
                  rng.random((3, 2, 37)) + 0.5, np.full((2, 2), 1e-20)):
        same_stream(lambda m, g, T: m._sample_dirichlet(T(alpha.astype(name)), generator=g))


BINOMIAL = {
    "inversion": (np.full(300, 10.0), np.linspace(0, 1, 300)),
    "btrs": (np.full(300, 1000.0), np.linspace(0, 1, 300)),
    "mixed": (rng.integers(0, 300, 400).astype(float), rng.random(400)),
    "fractional": (rng.random(100) * 80, rng.random(100)),
    "special": (np.array([5.0, 0.0, -3.0, 7.5, 1e7, 20.0, 3.0]),
                np.array([np.nan, 0.5, 0.5, 0.3, 0.2, 1.0, -0.1])),
}


@pytest.mark.parametrize("name", ["float32", "float64"])
@pytest.mark.parametrize("kind", list(BINOMIAL))
def test_binomial(kind, name):
    count, prob = (a.astype(name) for a in BINOMIAL[kind])
    same_stream(lambda m, g, T: m.binomial(T(count), T(prob), generator=g))


def test_binomial_broadcasts_prob():
    prob = rng.random(4)
    same_stream(lambda m, g, T: m.binomial(T(np.full((3, 4), 40.0)), T(prob), generator=g))


DISTRIBUTIONS = {
    "Gamma": lambda D, T: D.Gamma(T([2.0, 0.5, 9.0]), T([1.0, 2.0, 0.5])),
    "Chi2": lambda D, T: D.Chi2(T([2.0, 7.0])),
    "StudentT": lambda D, T: D.StudentT(T([2.0, 7.0])),
    "Beta": lambda D, T: D.Beta(T([2.0, 0.3]), T([3.0, 0.4])),
    "Dirichlet": lambda D, T: D.Dirichlet(T([2.0, 0.3, 1.0])),
    "Dirichlet-float64": lambda D, T: D.Dirichlet(T(np.array([2.0, 0.3, 1.0]))),
    "Binomial": lambda D, T: D.Binomial(50, T([0.1, 0.7])),
    "Binomial-counts": lambda D, T: D.Binomial(T([5.0, 500.0]), T([0.3, 0.6])),
    "InverseGamma": lambda D, T: D.InverseGamma(T([2.0, 3.0]), T([1.0, 2.0])),
    "FisherSnedecor": lambda D, T: D.FisherSnedecor(T([3.0, 5.0]), T([4.0, 6.0])),
    "NegativeBinomial": lambda D, T: D.NegativeBinomial(T([3.0, 30.0]), T([0.3, 0.6])),
    "VonMises": lambda D, T: D.VonMises(T([0.0, 1.0]), T([1.0, 5.0])),
    "Bernoulli": lambda D, T: D.Bernoulli(T([0.3, 0.8])),
    "Categorical": lambda D, T: D.Categorical(T([0.2, 0.3, 0.5])),
    "OneHotCategorical": lambda D, T: D.OneHotCategorical(T([0.2, 0.3, 0.5])),
    "Multinomial": lambda D, T: D.Multinomial(10, T([0.2, 0.3, 0.5])),
    "Normal": lambda D, T: D.Normal(T([0.0, 1.0]), T([1.0, 2.0])),
    "Uniform": lambda D, T: D.Uniform(T([0.0, 1.0]), T([1.0, 2.0])),
    "Exponential": lambda D, T: D.Exponential(T([1.0, 2.0])),
    "Cauchy": lambda D, T: D.Cauchy(T([0.0, 1.0]), T([1.0, 2.0])),
    "HalfNormal": lambda D, T: D.HalfNormal(T([1.0, 2.0])),
    "HalfCauchy": lambda D, T: D.HalfCauchy(T([1.0, 2.0])),
    "Geometric": lambda D, T: D.Geometric(T([0.3, 0.8])),
    "Poisson": lambda D, T: D.Poisson(T([3.0, 30.0])),
    "MixtureSameFamily": lambda D, T: D.MixtureSameFamily(
        D.Categorical(T([0.3, 0.7])), D.Normal(T([0.0, 5.0]), T([1.0, 1.0]))),
}

# the same draws, then transformed by exp, log, pow, a Cholesky factor...: equal to rounding
TRANSFORMED = {
    "MultivariateNormal": lambda D, T: D.MultivariateNormal(T([0.0, 1.0]),
                                                            T([[2.0, 0.5], [0.5, 1.0]])),
    "LogNormal": lambda D, T: D.LogNormal(T([0.0, 1.0]), T([1.0, 2.0])),
    "Laplace": lambda D, T: D.Laplace(T([0.0, 1.0]), T([1.0, 2.0])),
    "Gumbel": lambda D, T: D.Gumbel(T([0.0, 1.0]), T([1.0, 2.0])),
    "Pareto": lambda D, T: D.Pareto(T([1.0, 2.0]), T([1.0, 2.0])),
    "Weibull": lambda D, T: D.Weibull(T([1.0, 2.0]), T([1.0, 2.0])),
    "Kumaraswamy": lambda D, T: D.Kumaraswamy(T([1.0, 2.0]), T([1.0, 2.0])),
    "RelaxedBernoulli": lambda D, T: D.RelaxedBernoulli(T([0.5]), probs=T([0.3, 0.8])),
    "RelaxedOneHotCategorical": lambda D, T: D.RelaxedOneHotCategorical(
        T([0.5]), probs=T([0.2, 0.3, 0.5])),
    "ContinuousBernoulli": lambda D, T: D.ContinuousBernoulli(T([0.3, 0.8])),
    "GeneralizedPareto": lambda D, T: D.GeneralizedPareto(T([0.0, 1.0]), T([1.0, 2.0]),
                                                          T([0.1, 0.5])),
    "LogisticNormal": lambda D, T: D.LogisticNormal(T([0.0, 1.0]), T([1.0, 2.0])),
}


def _samples(table, name):
    def run(m, g, T):
        def tensor(values):
            a = np.asarray(values)
            return T(a if a.dtype == np.float64 else a.astype(np.float32))
        return table[name](m.distributions, tensor).sample((20,))
    return run


@pytest.mark.parametrize("name", list(DISTRIBUTIONS))
def test_distributions_sample_torchs_numbers(name):
    same_stream(_samples(DISTRIBUTIONS, name))


@pytest.mark.parametrize("name", list(TRANSFORMED))
def test_transformed_distributions_draw_alike(name):
    run = _samples(TRANSFORMED, name)
    for lib in (torch, ember):
        lib.manual_seed(0)
    t = run(torch, None, lambda a: torch.from_numpy(np.array(a)))
    e = run(ember, None, lambda a: ember.from_numpy(np.array(a)))
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    assert ember.rand(4).tolist() == torch.rand(4).tolist()  # as many draws


def test_dirichlet_rsample_keeps_a_gradient():
    a = ember.tensor([2.0, 0.3, 1.0], requires_grad=True)
    x = ember.distributions.Dirichlet(a).rsample((4,))
    (x[:, 0] * 3).sum().backward()
    assert a.grad is not None and bool(ember.isfinite(a.grad).all())


@pytest.mark.parametrize("fn", [
    lambda m: m._standard_gamma(m.ones(3, dtype=m.float16)),
    lambda m: m._standard_gamma(m.ones(3, dtype=m.int64)),
    lambda m: m._sample_dirichlet(m.ones(3, dtype=m.bfloat16)),
    lambda m: m.binomial(m.ones(3, dtype=m.float16), m.ones(3, dtype=m.float16)),
])
def test_cpu_dtypes_as_torch(fn):
    with pytest.raises(NotImplementedError) as t_info:
        fn(torch)
    with pytest.raises(NotImplementedError, match=str(t_info.value).replace('"', '.')):
        fn(ember)
