"""Sampling: sample means and variances within a few standard errors of the distribution's
own (torch-checked) mean and variance; rsample gradients, per sample against the exact
derivative of E[x] and E[x^2] (statistically) and, for the gamma family, against torch's
_standard_gamma_grad evaluated at ember's own draws (the same noise); the samplers
_standard_gamma, _sample_dirichlet and binomial. Seeds are fixed (conftest seeds ember)."""
import math

import numpy as np
import pytest

import ember

from ._distribution_cases import CASES

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("one_torch_thread")

N = 20000
SIGMAS = 5.0  # a correct sampler fails a check with probability ~6e-7
# cases whose fourth moment is infinite for some parameter (the sample variance's standard
# error is then not estimable), or whose mean is not the linear mean of the draws
HEAVY = {"Pareto", "StudentT", "FisherSnedecor", "InverseGamma", "GeneralizedPareto"}
CIRCULAR = {"VonMises"}


def _ember_dist(case, params=None):
    params = case.params if params is None else params
    return case.build(ember, *[ember.tensor(a) for a in params])


def _moment_or_none(d, name):
    try:
        value = getattr(d, name)
    except NotImplementedError:
        return None
    return value.detach().numpy()


def _assert_within(estimate, standard_error, exact, what):
    ok = np.isfinite(exact) & np.isfinite(standard_error)
    assert ok.any(), f"{what}: nothing to compare"
    gap = np.abs(estimate - exact)[ok]
    bound = (SIGMAS * standard_error + 1e-9 * (1 + np.abs(exact)))[ok]
    assert np.all(gap <= bound), f"{what}: |estimate - exact| {gap} > {bound}"


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES
                                  if c.name not in CIRCULAR])
def test_sample_moments(case):
    d = _ember_dist(case)
    mean, variance = _moment_or_none(d, "mean"), _moment_or_none(d, "variance")
    if mean is None or variance is None or not np.isfinite(mean).any():
        pytest.skip(f"{case.name} has no mean and variance to compare")
    x = d.sample((N,)).double().numpy()
    finite = np.isfinite(variance)
    _assert_within(x.mean(0), np.sqrt(np.where(finite, variance, np.nan) / N), mean, "mean")
    if case.name.split("_")[0] in HEAVY:
        return
    squares = (x - x.mean(0)) ** 2
    _assert_within(squares.mean(0) * N / (N - 1), squares.std(0) / math.sqrt(N), variance,
                   "variance")


def test_von_mises_circular_moments():
    """E[cos(x - loc)] = I1(k) / I0(k) = 1 - the circular variance; E[sin(x - loc)] = 0."""
    loc = ember.tensor([0.5, -2.0, 3.0], dtype=ember.float64)
    k = ember.tensor([0.3, 2.0, 20.0], dtype=ember.float64)
    d = ember.distributions.VonMises(loc, k)
    x = d.sample((N,))
    assert bool(((x >= -math.pi) & (x < math.pi)).all())
    c, s = (x - loc).cos().numpy(), (x - loc).sin().numpy()
    exact = 1 - d.variance.numpy()
    _assert_within(c.mean(0), c.std(0) / math.sqrt(N), exact, "E cos")
    _assert_within(s.mean(0), s.std(0) / math.sqrt(N), np.zeros(3), "E sin")


RSAMPLE = [pytest.param(c, id=c.name) for c in CASES
           if c.build(torch, *[torch.from_numpy(a) for a in c.params]).has_rsample
           and c.name != "MultivariateNormal_scale_tril"]  # (params of unequal batch ranks,
# which a leading per-draw dim cannot align; MultivariateNormal_cov covers the rsample)
M = 4000
# where the pathwise gradient is not that of E[f(x)], by design (as in torch):
#   straight-through: x^2 = x for one-hot x, but its gradient is 2x dprobs, not dprobs
#   ContinuousBernoulli: inside `lims` the draw is the uniform itself, with no gradient
POWERS = {"OneHotCategoricalStraightThrough": (1,)}
COMPARED = {"ContinuousBernoulli": lambda params: np.abs(params[0] - 0.5) > 1e-3}


@pytest.mark.parametrize("case", RSAMPLE)
def test_rsample_gradients_are_unbiased(case):
    """Each of M draws gets its own copy of the parameters, so d x_i / d theta_i is one
    sample of the pathwise gradient; their mean must match d E[f(x)] / d theta for f(x) = x
    and x^2 (E from the distribution's mean and variance)."""
    d0 = _ember_dist(case)
    mean, variance = _moment_or_none(d0, "mean"), _moment_or_none(d0, "variance")
    if mean is None or variance is None or not np.all(np.isfinite(variance)):
        pytest.skip(f"{case.name}: no finite mean and variance")
    if case.name.split("_")[0] in HEAVY:
        pytest.skip(f"{case.name}: the per-sample gradients' variance may be infinite")
    compared = COMPARED.get(case.name, lambda params: True)(case.params)
    for power in POWERS.get(case.name, (1, 2)):
        leaves = [ember.tensor(np.broadcast_to(a, (M,) + a.shape).copy(), requires_grad=True)
                  for a in case.params]
        x = case.build(ember, *leaves).rsample()
        grads = ember.autograd.grad((x ** power).sum(), leaves, allow_unused=True)
        exact_leaves = [ember.tensor(a, requires_grad=True) for a in case.params]
        dist = case.build(ember, *exact_leaves)
        moment = dist.mean if power == 1 else dist.variance + dist.mean ** 2
        exact = ember.autograd.grad(moment.sum(), exact_leaves, allow_unused=True)
        for g, e, name in zip(grads, exact, range(len(leaves))):
            if e is None:
                continue
            samples = np.zeros((M,) + e.shape) if g is None else g.numpy()
            exact_value = np.where(compared, e.numpy(), np.nan) if name == 0 else e.numpy()
            _assert_within(samples.mean(0), samples.std(0) / math.sqrt(M), exact_value,
                           f"d E[x^{power}] / d param {name}")


def test_gamma_rsample_gradient_is_torchs_on_the_same_draws():
    alpha = ember.tensor(np.linspace(0.05, 30, 400), requires_grad=True)
    x = ember._standard_gamma(alpha)
    (g,) = ember.autograd.grad(x.sum(), alpha)
    expected = torch._standard_gamma_grad(torch.from_numpy(alpha.detach().numpy()),
                                          torch.from_numpy(x.detach().numpy()))
    np.testing.assert_allclose(g.numpy(), expected.numpy(), rtol=5e-3, atol=1e-6)
    # Gamma(a, rate).rsample() = _standard_gamma(a) / rate
    a = ember.tensor([2.0, 0.5], requires_grad=True)
    rate = ember.tensor([3.0, 0.25], requires_grad=True)
    y = ember.distributions.Gamma(a, rate).rsample((50,))
    ga, grate = ember.autograd.grad(y.sum(), [a, rate])
    np.testing.assert_allclose(grate.numpy(), (-y / rate).sum(0).detach().numpy(), rtol=1e-5)


@pytest.mark.parametrize("alpha", [0.01, 0.3, 1.0, 2.5, 150.0, 1e5])
def test_standard_gamma_moments(alpha):
    for dtype in (ember.float32, ember.float64):
        x = ember._standard_gamma(ember.full((N,), alpha, dtype=dtype))
        assert x.dtype is dtype and bool((x > 0).all())
        x = x.double().numpy()
        _assert_within(np.array(x.mean()), np.array(math.sqrt(alpha / N)), np.array(alpha),
                       "mean")
        squares = (x - x.mean()) ** 2
        _assert_within(np.array(squares.mean()), np.array(squares.std() / math.sqrt(N)),
                       np.array(alpha), "variance")


def test_standard_gamma_edges_as_torch():
    a = ember.tensor([0.0, -1.0, float("nan"), 1e-3])
    x = ember._standard_gamma(a)
    assert bool((x[:3] == ember.finfo(ember.float32).tiny).all()) and x[3].item() > 0


def test_sample_dirichlet():
    alpha = ember.tensor([[0.3, 1.0, 4.0], [2.0, 2.0, 2.0]], dtype=ember.float64)
    x = ember._sample_dirichlet(alpha.expand(N, 2, 3)).numpy()
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12)
    mean = (alpha / alpha.sum(-1, keepdim=True)).numpy()
    total = alpha.sum(-1, keepdim=True).numpy()
    variance = mean * (1 - mean) / (total + 1)
    _assert_within(x.mean(0), np.sqrt(variance / N), mean, "Dirichlet mean")


@pytest.mark.parametrize("count,p", [(7.0, 0.3), (16.0, 0.9), (17.0, 0.5), (1000.0, 0.02),
                                     (1e6, 0.4), (0.0, 0.5), (50.0, 0.0), (50.0, 1.0)])
def test_binomial_moments(count, p):
    x = ember.binomial(ember.full((N,), count, dtype=ember.float64),
                       ember.full((N,), p, dtype=ember.float64)).numpy()
    assert np.all(x == np.round(x)) and np.all((x >= 0) & (x <= count))
    mean, variance = count * p, count * p * (1 - p)
    if variance == 0:
        assert np.all(x == mean)
        return
    _assert_within(np.array(x.mean()), np.array(math.sqrt(variance / N)), np.array(mean), "mean")
    squares = (x - x.mean()) ** 2
    _assert_within(np.array(squares.mean()), np.array(squares.std() / math.sqrt(N)),
                   np.array(variance), "variance")


def test_samplers_refuse_what_torch_refuses():
    with pytest.raises(RuntimeError, match="expected Double"):
        ember.binomial(ember.tensor([3.0], dtype=ember.float64), ember.tensor([0.5]))
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    d = ember._sample_dirichlet(a)
    assert d.requires_grad
    with pytest.raises(NotImplementedError):
        d.sum().backward()


def test_generator_makes_draws_reproducible():
    alpha = ember.tensor([0.5, 3.0, 40.0])
    draws = []
    for _ in range(2):
        g = ember.Generator().manual_seed(7)
        draws.append((ember._standard_gamma(alpha, generator=g),
                      ember.binomial(ember.tensor([20.0]), ember.tensor([0.3]), generator=g)))
    assert ember.equal(draws[0][0], draws[1][0]) and ember.equal(draws[0][1], draws[1][1])


def _has_cdf(case):
    d = case.build(torch, *[torch.from_numpy(a) for a in case.params])
    try:
        d.cdf(d.sample())
    except NotImplementedError:
        return False
    return not d.support.is_discrete


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES if _has_cdf(c)])
def test_cdf_of_the_samples_is_uniform(case):
    """The probability integral transform: cdf(X) ~ Uniform(0, 1), checked at the mean and at
    the fractions below 0.1, 0.5 and 0.9 (this covers distributions without moments)."""
    d = _ember_dist(case)
    u = d.cdf(d.sample((N,))).double().numpy()
    _assert_within(u.mean(0), np.full(u.shape[1:], math.sqrt(1 / 12 / N)),
                   np.full(u.shape[1:], 0.5), "mean of cdf(X)")
    for level in (0.1, 0.5, 0.9):
        _assert_within((u <= level).mean(0), np.full(u.shape[1:], math.sqrt(
            level * (1 - level) / N)), np.full(u.shape[1:], level), f"P(cdf(X) <= {level})")


def test_categorical_frequencies():
    probs = np.array([[0.1, 0.6, 0.3], [0.25, 0.25, 0.5]])
    for d in (ember.distributions.Categorical(ember.tensor(probs)),
              ember.distributions.OneHotCategorical(ember.tensor(probs)),
              ember.distributions.RelaxedOneHotCategorical(ember.tensor(0.3),
                                                           ember.tensor(probs))):
        x = d.sample((N,))
        picks = x if x.dim() == 2 else x.argmax(-1)  # Gumbel-max: the argmax is Categorical
        freq = np.stack([(picks.numpy() == k).mean(0) for k in range(3)], -1)
        _assert_within(freq, np.sqrt(probs * (1 - probs) / N), probs, type(d).__name__)


def test_relaxed_and_logistic_normal_through_their_transforms():
    """The inverse transforms recover the base draws: Logistic(logits/T, 1/T) for the relaxed
    Bernoulli, Normal(loc, scale) for the logistic-normal."""
    T, logits = 0.5, np.array([-1.0, 0.3, 2.0])
    y = ember.distributions.RelaxedBernoulli(ember.tensor(T), logits=ember.tensor(logits))
    z = y.sample((N,)).double().logit().numpy()
    _assert_within(z.mean(0), np.full(3, math.pi / T / math.sqrt(3 * N)), logits / T,
                   "mean of logit(X)")
    loc, scale = np.array([0.5, -1.0]), np.array([1.0, 0.3])
    d = ember.distributions.LogisticNormal(ember.tensor(loc), ember.tensor(scale))
    base = ember.distributions.StickBreakingTransform().inv(d.sample((N,))).numpy()
    _assert_within(base.mean(0), scale / math.sqrt(N), loc, "mean of the base draws")


def test_lkj_correlations():
    """Off-diagonal correlations of LKJ(d, eta): mean 0, variance 1 / (2 eta + d - 1)."""
    for eta in (0.5, 1.0, 3.0):
        L = ember.distributions.LKJCholesky(3, ember.tensor(eta, dtype=ember.float64)).sample((N,))
        r = (L @ L.mT).numpy()[:, [1, 2, 2], [0, 0, 1]]
        np.testing.assert_allclose(np.diagonal((L @ L.mT).numpy(), axis1=1, axis2=2), 1.0,
                                   rtol=1e-12)
        var = 1 / (2 * eta + 3 - 1)
        _assert_within(r.mean(0), np.full(3, math.sqrt(var / N)), np.zeros(3), "mean")
        squares = r ** 2
        _assert_within(squares.mean(0), squares.std(0) / math.sqrt(N), np.full(3, var), "var")
