"""ember.distributions against torch.distributions: every class torch ships exists; for each
case of tests/_distribution_cases.py, shapes and flags, log_prob at torch's own samples,
entropy, cdf, icdf, mean, mode, variance, stddev and perplexity, with their gradients with
respect to the parameters (and the value); expand; enumerate_support; sample shapes, dtypes
and support. What torch does not implement, ember must refuse with NotImplementedError too.
"""
import numpy as np
import pytest

import ember

from ._distribution_cases import CASES, CLASSES_COVERED
from .oracle import check, check_raises

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("one_torch_thread")

PARAMS = [pytest.param(case, id=case.name) for case in CASES]


def _torch_inputs(arrays):
    return [torch.from_numpy(np.array(a)) for a in arrays]


def _torch_sample(case, shape=(2,)):
    """Values to score: torch's own draws (so they lie in the support), as NumPy."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return case.build(torch, *_torch_inputs(case.params)).sample(shape).numpy()


def _compare(case, fn, extra=()):
    """check() `fn(m, dist, *extra)`; where torch raises NotImplementedError, ember must too."""
    inputs = list(case.params) + list(extra)
    n = len(case.params)

    def run(m, *tensors):
        return fn(m, case.build(m, *tensors[:n]), *tensors[n:])

    try:
        run(torch, *_torch_inputs(inputs))
    except NotImplementedError:
        error = check_raises(run, inputs)
        assert isinstance(error, NotImplementedError)
        return
    try:
        _grad_of_sum(torch, run, inputs[:n], inputs[n:])
        differentiable = True
    except NotImplementedError:
        differentiable = False
    if not differentiable:
        # torch has no derivative for some parameter (gammainc's in Gamma.cdf): compare
        # values, and ember must refuse the same gradient
        check(run, inputs, grad=False, rtol=case.rtol)
        error = check_raises(lambda m: _grad_of_sum(m, run, inputs[:n], inputs[n:]))
        assert isinstance(error, NotImplementedError)
        return
    check(run, inputs, rtol=case.rtol, grad_rtol=case.grad_rtol)


def _grad_of_sum(m, run, params, extra):
    """Gradients of the (summed) results with respect to the parameters."""
    tensors = [m.tensor(a, requires_grad=True) for a in params]
    out = run(m, *tensors, *[m.tensor(a) for a in extra])
    outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])
            if isinstance(o, m.Tensor) and o.requires_grad]
    if not outs:
        return None
    return m.autograd.grad(sum(o.sum() for o in outs), tensors, allow_unused=True)


def test_every_distribution_torch_ships_exists():
    import torch.distributions

    missing = [name for name in torch.distributions.__all__
               if not hasattr(ember.distributions, name)]
    assert not missing
    assert sorted(ember.distributions.__all__) == sorted(torch.distributions.__all__)
    classes = {name for name in torch.distributions.__all__
               if isinstance(getattr(torch.distributions, name), type) and issubclass(
                   getattr(torch.distributions, name), torch.distributions.Distribution)}
    assert not classes - CLASSES_COVERED, "distributions without a test case"


@pytest.mark.parametrize("case", PARAMS)
def test_shapes_and_flags(case):
    e = case.build(ember, *[ember.tensor(a) for a in case.params])
    t = case.build(torch, *_torch_inputs(case.params))
    assert tuple(e.batch_shape) == tuple(t.batch_shape)
    assert tuple(e.event_shape) == tuple(t.event_shape)
    assert e.has_rsample == t.has_rsample
    assert e.has_enumerate_support == t.has_enumerate_support
    assert type(e.support).__name__ == type(t.support).__name__
    assert e.support.event_dim == t.support.event_dim
    assert e.support.is_discrete == t.support.is_discrete
    assert {k: type(v).__name__ for k, v in e.arg_constraints.items()} == {
        k: type(v).__name__ for k, v in t.arg_constraints.items()}


@pytest.mark.parametrize("case", PARAMS)
def test_log_prob(case):
    value = _torch_sample(case)
    _compare(case, lambda m, d, v: d.log_prob(v), [value])


@pytest.mark.parametrize("attribute", ["mean", "mode", "variance", "stddev", "entropy",
                                       "perplexity"])
@pytest.mark.parametrize("case", PARAMS)
def test_moments_and_entropy(case, attribute):
    if attribute in case.skip:
        pytest.skip(f"{case.name}.{attribute} differs from torch on purpose (see its docstring)")
    if attribute in ("entropy", "perplexity"):
        _compare(case, lambda m, d: getattr(d, attribute)())
    else:
        _compare(case, lambda m, d: getattr(d, attribute))


@pytest.mark.parametrize("case", PARAMS)
def test_cdf_and_icdf(case):
    _compare(case, lambda m, d, v: d.cdf(v), [_torch_sample(case)])
    probs = np.random.default_rng(3).uniform(0.05, 0.95, (2,) + tuple(
        case.build(torch, *_torch_inputs(case.params)).batch_shape))
    _compare(case, lambda m, d, p: d.icdf(p), [probs])


@pytest.mark.parametrize("case", PARAMS)
def test_expand(case):
    t = case.build(torch, *_torch_inputs(case.params))
    shape = (2,) + tuple(t.batch_shape)
    value = _torch_sample(case, (3,) + shape[:1])
    _compare(case, lambda m, d, v: (d.expand(shape).log_prob(v), d.expand(shape).batch_shape,
                                    d.expand(shape).event_shape), [value])


@pytest.mark.parametrize("case", PARAMS)
def test_enumerate_support(case):
    t = case.build(torch, *_torch_inputs(case.params))
    if not t.has_enumerate_support:
        e = case.build(ember, *[ember.tensor(a) for a in case.params])
        assert not e.has_enumerate_support
        return
    for expand in (True, False):
        _compare(case, lambda m, d: (d.enumerate_support(expand=expand),
                                     d.log_prob(d.enumerate_support(expand=expand))))


@pytest.mark.parametrize("case", PARAMS)
def test_samples_have_the_right_shape_dtype_and_support(case):
    e = case.build(ember, *[ember.tensor(a) for a in case.params])
    t = case.build(torch, *_torch_inputs(case.params))
    with torch.random.fork_rng():
        expected = t.sample((4, 2))
    got = e.sample((4, 2))
    assert tuple(got.shape) == tuple(expected.shape)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert not got.requires_grad
    assert bool(e.support.check(got).all())
    if t.has_rsample:
        x = e.rsample((3,))
        assert tuple(x.shape) == (3,) + tuple(t.batch_shape + t.event_shape)
        assert bool(e.support.check(x).all())


@pytest.mark.parametrize("case", PARAMS)
def test_float32_stays_float32(case):
    params = [ember.tensor(a, dtype=ember.float32) for a in case.params]
    d = case.build(ember, *params)
    assert d.log_prob(d.sample()).dtype in (ember.float32,)
    assert d.sample().dtype in (ember.float32, ember.int64)


def test_repr_and_sample_n():
    e = ember.distributions.Normal(ember.tensor([0.0, 1.0]), 1.0)
    t = torch.distributions.Normal(torch.tensor([0.0, 1.0]), 1.0)
    assert repr(e).replace("ember", "torch") == repr(t)
    assert repr(ember.distributions.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    with pytest.warns(UserWarning, match="sample_n will be deprecated"):
        assert tuple(e.sample_n(3).shape) == (3, 2)


def test_lazy_probs_and_logits():
    check(lambda m, p: (m.distributions.Bernoulli(probs=p).logits,
                        m.distributions.Categorical(probs=p).logits,
                        m.distributions.Geometric(probs=p).logits),
          [np.array([0.2, 0.5, 0.3])])
    check(lambda m, lg: (m.distributions.Binomial(3, logits=lg).probs,
                         m.distributions.Categorical(logits=lg).probs,
                         m.distributions.OneHotCategorical(logits=lg).probs),
          [np.array([-1.0, 0.5, 2.0])])


def test_mixture_components_and_mvn_matrices():
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    for form in ("covariance_matrix", "precision_matrix", "scale_tril"):
        matrix = np.linalg.cholesky(cov) if form == "scale_tril" else cov
        check(lambda m, loc, c: (lambda d: (d.covariance_matrix, d.precision_matrix,
                                            d.scale_tril, d.variance))(
            m.distributions.MultivariateNormal(loc, **{form: c})), [np.zeros(2), matrix])
    check(lambda m, loc, w, d: (lambda x: (x.covariance_matrix, x.precision_matrix,
                                           x.scale_tril))(
        m.distributions.LowRankMultivariateNormal(loc, w, d)),
        [np.zeros(3), np.array([[1.0], [0.5], [-0.3]]), np.array([1.0, 2.0, 0.5])])
