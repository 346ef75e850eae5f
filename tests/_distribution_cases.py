"""One case per distribution torch 2.13 ships: a builder run in both libraries on the same
float64 parameters (NumPy arrays, so tests/oracle.py's `check` can compare gradients too).

    Case(name, build, params)   build(m, *tensors) -> m.distributions.<something>

Parameters lie well inside their domains; matrices that must be positive definite are built
inside the builder from a free matrix (A A^T + I), so gradients reach A.
"""
from dataclasses import dataclass, field

import numpy as np

_RNG = np.random.default_rng(2024)


def uniform(low, high, *shape):
    return _RNG.uniform(low, high, shape)


def _pd(m, a):
    """A A^T + I: positive definite, differentiable in A."""
    return a @ a.mT + m.eye(a.shape[-1], dtype=a.dtype)


def _tril(m, a):
    """A lower-triangular factor with a positive diagonal."""
    return a.tril(-1) + m.diag_embed(a.diagonal(dim1=-2, dim2=-1).abs() + 0.5)


@dataclass
class Case:
    name: str
    build: object
    params: list
    rtol: float = None       # forward tolerance (None: tests/oracle.py's float64 default)
    grad_rtol: float = None
    continuous: bool = True  # draws are real numbers, so log_prob has a gradient in them
    skip: tuple = field(default_factory=tuple)  # attributes ember computes differently

    def __post_init__(self):
        self.params = [np.asarray(a, dtype=self.dtype) for a in self.params]

    dtype: str = "float64"


def D(m):
    return m.distributions


CASES = [
    Case("Normal", lambda m, loc, scale: D(m).Normal(loc, scale),
         [uniform(-2, 2, 3), uniform(0.5, 2, 3)]),
    Case("Normal_scalar_scale", lambda m, loc: D(m).Normal(loc, 1.5), [uniform(-1, 1, 2, 3)]),
    Case("Uniform", lambda m, low, width: D(m).Uniform(low, low + width),
         [uniform(-2, 0, 4), uniform(0.5, 3, 4)]),
    Case("Bernoulli_probs", lambda m, p: D(m).Bernoulli(probs=p), [uniform(0.1, 0.9, 5)],
         continuous=False),
    Case("Bernoulli_logits", lambda m, lg: D(m).Bernoulli(logits=lg), [uniform(-3, 3, 2, 3)],
         continuous=False),
    Case("Categorical_probs", lambda m, p: D(m).Categorical(probs=p), [uniform(0.1, 1, 3, 4)],
         continuous=False),
    Case("Categorical_logits", lambda m, lg: D(m).Categorical(logits=lg), [uniform(-2, 2, 5)],
         continuous=False),
    Case("OneHotCategorical", lambda m, lg: D(m).OneHotCategorical(logits=lg),
         [uniform(-2, 2, 2, 4)], continuous=False),
    Case("OneHotCategoricalStraightThrough",
         lambda m, p: D(m).OneHotCategoricalStraightThrough(probs=p), [uniform(0.1, 1, 3)],
         continuous=False),
    Case("Multinomial", lambda m, p: D(m).Multinomial(6, probs=p), [uniform(0.1, 1, 2, 3)],
         continuous=False),
    Case("Binomial", lambda m, n, p: D(m).Binomial(n.detach().round(), probs=p),
         [np.array([3.0, 7.0, 10.0]), uniform(0.1, 0.9, 3)], continuous=False),
    Case("Binomial_logits", lambda m, lg: D(m).Binomial(5, logits=lg), [uniform(-2, 2, 4)],
         continuous=False),
    Case("NegativeBinomial", lambda m, n, p: D(m).NegativeBinomial(n, probs=p),
         [uniform(1, 5, 3), uniform(0.1, 0.8, 3)], continuous=False),
    Case("Geometric", lambda m, p: D(m).Geometric(probs=p), [uniform(0.2, 0.9, 4)],
         continuous=False),
    Case("Poisson", lambda m, rate: D(m).Poisson(rate), [uniform(0.5, 8, 4)], continuous=False),
    Case("Exponential", lambda m, rate: D(m).Exponential(rate), [uniform(0.5, 3, 4)]),
    Case("Laplace", lambda m, loc, scale: D(m).Laplace(loc, scale),
         [uniform(-1, 1, 3), uniform(0.5, 2, 3)]),
    Case("Cauchy", lambda m, loc, scale: D(m).Cauchy(loc, scale),
         [uniform(-1, 1, 3), uniform(0.5, 2, 3)]),
    Case("HalfCauchy", lambda m, scale: D(m).HalfCauchy(scale), [uniform(0.5, 2, 3)]),
    Case("HalfNormal", lambda m, scale: D(m).HalfNormal(scale), [uniform(0.5, 2, 3)]),
    Case("Gamma", lambda m, a, rate: D(m).Gamma(a, rate), [uniform(0.5, 4, 4), uniform(0.5, 3, 4)]),
    Case("Chi2", lambda m, df: D(m).Chi2(df), [uniform(1, 6, 3)]),
    Case("Beta", lambda m, a, b: D(m).Beta(a, b), [uniform(0.5, 4, 4), uniform(0.5, 4, 4)]),
    Case("Dirichlet", lambda m, a: D(m).Dirichlet(a), [uniform(0.5, 4, 2, 3)]),
    Case("LogNormal", lambda m, loc, scale: D(m).LogNormal(loc, scale),
         [uniform(-1, 1, 3), uniform(0.3, 1, 3)]),
    Case("StudentT", lambda m, df, loc, scale: D(m).StudentT(df, loc, scale),
         [np.array([0.8, 1.5, 3.0, 6.0]), uniform(-1, 1, 4), uniform(0.5, 2, 4)]),
    Case("FisherSnedecor", lambda m, d1, d2: D(m).FisherSnedecor(d1, d2),
         [np.array([1.5, 3.0, 5.0, 8.0]), np.array([1.5, 3.0, 5.0, 9.0])]),
    Case("Gumbel", lambda m, loc, scale: D(m).Gumbel(loc, scale),
         [uniform(-1, 1, 3), uniform(0.5, 2, 3)]),
    Case("Weibull", lambda m, scale, k: D(m).Weibull(scale, k),
         [uniform(0.5, 2, 3), uniform(0.7, 3, 3)]),
    Case("Pareto", lambda m, scale, alpha: D(m).Pareto(scale, alpha),
         [uniform(0.5, 2, 4), np.array([0.8, 1.5, 2.5, 4.0])]),
    Case("Kumaraswamy", lambda m, a, b: D(m).Kumaraswamy(a, b),
         [uniform(0.8, 3, 3), uniform(0.8, 3, 3)], skip=("mode",)),
    Case("VonMises", lambda m, loc, k: D(m).VonMises(loc, k),
         [uniform(-2, 2, 4), np.array([0.3, 1.0, 3.0, 10.0])], rtol=2e-6, grad_rtol=1e-4),
    Case("ContinuousBernoulli", lambda m, p: D(m).ContinuousBernoulli(probs=p),
         [np.array([0.1, 0.3, 0.4995, 0.7])]),
    Case("ContinuousBernoulli_logits", lambda m, lg: D(m).ContinuousBernoulli(logits=lg),
         [uniform(-2, 2, 3)]),
    Case("LogisticNormal", lambda m, loc, scale: D(m).LogisticNormal(loc, scale),
         [uniform(-1, 1, 2, 3), uniform(0.5, 1.5, 2, 3)]),
    Case("RelaxedBernoulli", lambda m, p: D(m).RelaxedBernoulli(m.tensor(0.7, dtype=p.dtype),
                                                                probs=p),
         [uniform(0.2, 0.8, 3)]),
    Case("RelaxedOneHotCategorical",
         lambda m, lg: D(m).RelaxedOneHotCategorical(m.tensor(0.8, dtype=lg.dtype), logits=lg),
         [uniform(-1, 1, 2, 3)]),
    Case("GeneralizedPareto", lambda m, loc, scale, xi: D(m).GeneralizedPareto(loc, scale, xi),
         [uniform(-1, 1, 4), uniform(0.5, 2, 4), np.array([-0.3, 0.0, 0.2, 0.6])],
         dtype="float32"),  # torch 2.13's GeneralizedPareto fails in float64 (isclose)
    Case("InverseGamma", lambda m, a, rate: D(m).InverseGamma(a, rate),
         [np.array([0.8, 1.5, 3.0]), uniform(0.5, 2, 3)]),
    Case("MultivariateNormal_cov",
         lambda m, loc, a: D(m).MultivariateNormal(loc, covariance_matrix=_pd(m, a)),
         [uniform(-1, 1, 2, 3), uniform(-1, 1, 2, 3, 3)]),
    Case("MultivariateNormal_precision",
         lambda m, loc, a: D(m).MultivariateNormal(loc, precision_matrix=_pd(m, a)),
         [uniform(-1, 1, 3), uniform(-1, 1, 3, 3)]),
    Case("MultivariateNormal_scale_tril",
         lambda m, loc, a: D(m).MultivariateNormal(loc, scale_tril=_tril(m, a)),
         [uniform(-1, 1, 4, 2), uniform(-1, 1, 2, 2)]),
    Case("LowRankMultivariateNormal",
         lambda m, loc, w, d: D(m).LowRankMultivariateNormal(loc, w, d),
         [uniform(-1, 1, 2, 4), uniform(-1, 1, 2, 4, 2), uniform(0.5, 2, 2, 4)]),
    Case("Wishart", lambda m, df, a: D(m).Wishart(df, covariance_matrix=_pd(m, a)),
         [np.array([4.0, 6.5]), uniform(-1, 1, 2, 3, 3)]),
    Case("Wishart_scale_tril", lambda m, a: D(m).Wishart(5.0, scale_tril=_tril(m, a)),
         [uniform(-1, 1, 2, 2)]),
    Case("LKJCholesky", lambda m, c: D(m).LKJCholesky(3, c), [np.array([0.5, 1.0, 2.5])]),
    Case("Independent", lambda m, loc, scale: D(m).Independent(D(m).Normal(loc, scale), 1),
         [uniform(-1, 1, 2, 3), uniform(0.5, 2, 2, 3)]),
    Case("MixtureSameFamily",
         lambda m, lg, loc, scale: D(m).MixtureSameFamily(D(m).Categorical(logits=lg),
                                                          D(m).Normal(loc, scale)),
         [uniform(-1, 1, 2, 3), uniform(-2, 2, 2, 3), uniform(0.5, 1.5, 2, 3)]),
    Case("TransformedDistribution",
         lambda m, loc, scale: D(m).TransformedDistribution(
             D(m).Normal(loc, scale), [D(m).transforms.AffineTransform(1.0, 2.0),
                                       D(m).transforms.ExpTransform()]),
         [uniform(-1, 1, 3), uniform(0.3, 1, 3)]),
]

# every distribution class torch ships has at least one case
CLASSES_COVERED = {c.name.split("_")[0] for c in CASES} | {"Distribution", "ExponentialFamily"}
