"""`kl_divergence(p, q)` = E_p[log p(x) - log q(x)], and `register_kl` to add a pair.

Implementations are registered per pair of distribution classes; a lookup takes the most
specific registered pair for the two types (along the class hierarchies), warning when the
two orders of specialisation disagree, and memoises the answer. A pair whose supports make the
divergence infinite (p puts mass where q has none) returns inf; pairs of one exponential
family fall back to the Bregman divergence of the log-normaliser.

Read next: ../distributions/__init__.py.
"""
import math
import warnings
from functools import total_ordering

import ember
import ember.nn.functional as F

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _sum_rightmost, euler_constant

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY = {}  # (type_p, type_q) -> function: the registered pairs
_KL_MEMOIZE = {}   # (type_p, type_q) -> function: lookups already resolved
_INF = math.inf


def register_kl(type_p, type_q):
    """Decorator registering `fn(p, q)` as the KL divergence of a pair of Distribution
    subclasses (and of their subclasses, unless a more specific pair is registered)."""
    for name, cls in (("type_p", type_p), ("type_q", type_q)):
        if not (isinstance(cls, type) and issubclass(cls, Distribution)):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {cls}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMOIZE.clear()  # a new pair may change earlier lookups
        return fn
    return decorator


@total_ordering
class _Match:
    """A registered pair, ordered so that the most specific pair is the smallest
    (lexicographically: by the first type, then the second)."""

    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    """The registered function for the most specific pair matching (type_p, type_q)."""
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left, right = _KL_REGISTRY[left_p, left_q], _KL_REGISTRY[right_p, right_q]
    if left is not right:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=2)
    return left


def kl_divergence(p, q):
    """KL(p || q) over the batch shape; NotImplementedError for pairs without a formula."""
    try:
        fn = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fn = _KL_MEMOIZE[type(p), type(q)] = _dispatch_kl(type(p), type(q))
    if fn is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fn(p, q)


def _infinite_like(tensor):
    return ember.full_like(tensor, _INF)


def _x_log_x(tensor):
    return ember.special.xlogy(tensor, tensor)  # 0 at 0


def _batch_trace_XXT(matrices):
    """trace(X X^T) = the sum of squares of each matrix."""
    return matrices.reshape(matrices.shape[:-2] + (-1,)).pow(2).sum(-1)


def _log_det_tril(L):
    return L.diagonal(dim1=-2, dim2=-1).log().sum(-1)


# ----------------------------------------------------------------------------------------------
# pairs of one family


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    ones = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    ones = ones.masked_fill(q.probs == 0, _INF).masked_fill(p.probs == 0, 0)
    zeros = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    zeros = zeros.masked_fill(q.probs == 1, _INF).masked_fill(p.probs == 1, 0)
    return ones + zeros


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    p_total = p.concentration1 + p.concentration0
    q_total = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + p_total.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + q_total.lgamma()
    t3 = (p.concentration1 - q.concentration1) * ember.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * ember.digamma(p.concentration0)
    t5 = (q_total - p_total) * ember.digamma(p_total)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is "
                                  "not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return kl.masked_fill(p.total_count > q.total_count, _INF)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill((q.probs == 0).expand_as(t), _INF)
    t = t.masked_fill((p.probs == 0).expand_as(t), 0)
    return t.sum(-1)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + ember.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - ember.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    p_total = p.concentration.sum(-1)
    q_total = q.concentration.sum(-1)
    t1 = p_total.lgamma() - q_total.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - p_total.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return -ratio.log() + ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log-normaliser F between the natural parameters:
    F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_params = [theta.detach().requires_grad_() for theta in p._natural_params]
    q_params = q._natural_params
    p_log_norm = p._log_normalizer(*p_params)
    grads = ember.autograd.grad(p_log_norm.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q_params) - p_log_norm
    for theta_p, theta_q, g in zip(p_params, q_params, grads):
        result = result - _sum_rightmost((theta_q - theta_p) * g, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = ember.lgamma(q.concentration) - ember.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ember.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    scale_ratio = p.scale / q.scale
    q_loc = q.loc / q.scale
    p_loc = p.loc / q.scale
    t1 = -scale_ratio.log() - q_loc + p_loc
    t2 = scale_ratio * euler_constant
    t3 = ember.exp(q_loc + (1 + scale_ratio).lgamma() - p_loc)
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - ember.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    distance = (p.loc - q.loc).abs()
    return (-scale_ratio.log() + distance / q.scale
            + scale_ratio * ember.exp(-distance / p.scale) - 1)


def _check_same_event(p, q, what):
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with different event shapes "
                         "cannot be computed")


def _capacitance_solve(q):
    """K_q^-1/2 W_q^T D_q^-1, for the trace terms of the low-rank pairs."""
    wt_dinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return ember.linalg.solve_triangular(q._capacitance_tril, wt_dinv, upper=False)


def _lowrank_logdet(d):
    return _batch_lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag,
                                 d._capacitance_tril)


def _lowrank_mahalanobis(q, x):
    return _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, x,
                                      q._capacitance_tril)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    """(log det S_q - log det S_p + tr(S_q^-1 S_p) + Mahalanobis - n) / 2, with the trace by
    Woodbury's identity."""
    _check_same_event(p, q, "Low Rank Multivariate Normals")
    log_det = _lowrank_logdet(q) - _lowrank_logdet(p)
    mahalanobis = _lowrank_mahalanobis(q, q.loc - p.loc)
    a = _capacitance_solve(q)
    p_w, p_d, q_d = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, \
        q._unbroadcasted_cov_diag
    trace = ((p_d / q_d).sum(-1) + _batch_trace_XXT(p_w * q_d.rsqrt().unsqueeze(-1))
             - _batch_trace_XXT(a * p_d.sqrt().unsqueeze(-2)) - _batch_trace_XXT(a.matmul(p_w)))
    return 0.5 * (log_det + trace + mahalanobis - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _check_same_event(p, q, "(Low Rank) Multivariate Normals")
    p_l = p._unbroadcasted_scale_tril
    log_det = _lowrank_logdet(q) - 2 * _log_det_tril(p_l)
    mahalanobis = _lowrank_mahalanobis(q, q.loc - p.loc)
    a = _capacitance_solve(q)
    q_d = q._unbroadcasted_cov_diag
    trace = _batch_trace_XXT(p_l * q_d.rsqrt().unsqueeze(-1)) - _batch_trace_XXT(a.matmul(p_l))
    return 0.5 * (log_det + trace + mahalanobis - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    _check_same_event(p, q, "(Low Rank) Multivariate Normals")
    q_l = q._unbroadcasted_scale_tril
    log_det = 2 * _log_det_tril(q_l) - _lowrank_logdet(p)
    mahalanobis = _batch_mahalanobis(q_l, q.loc - p.loc)
    batch = ember.broadcast_shapes(q_l.shape[:-2], p._unbroadcasted_cov_factor.shape[:-2])
    n = p.event_shape[0]
    q_l = q_l.expand(batch + (n, n))
    p_w = p._unbroadcasted_cov_factor.expand(batch + (n, p.cov_factor.size(-1)))
    p_d = ember.diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(batch + (n, n))
    solve = ember.linalg.solve_triangular
    trace = (_batch_trace_XXT(solve(q_l, p_w, upper=False))
             + _batch_trace_XXT(solve(q_l, p_d, upper=False)))
    return 0.5 * (log_det + trace + mahalanobis - p.event_shape[0])


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    _check_same_event(p, q, "Multivariate Normals")
    q_l, p_l = q._unbroadcasted_scale_tril, p._unbroadcasted_scale_tril
    half_log_det = _log_det_tril(q_l) - _log_det_tril(p_l)
    batch = ember.broadcast_shapes(q_l.shape[:-2], p_l.shape[:-2])
    n = p.event_shape[0]
    trace = _batch_trace_XXT(ember.linalg.solve_triangular(
        q_l.expand(batch + (n, n)), p_l.expand(batch + (n, n)), upper=False))
    mahalanobis = _batch_mahalanobis(q_l, q.loc - p.loc)
    return half_log_det + 0.5 * (trace + mahalanobis - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return result.masked_fill(p.support.lower_bound < q.support.lower_bound, _INF)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return result.masked_fill((q.low > p.low) | (q.high < p.high), _INF)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


# ----------------------------------------------------------------------------------------------
# pairs of different families: a cross-entropy minus p's entropy, or inf where p's support
# reaches outside q's


def _infinity(tensor_of):
    """A KL function returning inf over the batch (the supports are incompatible)."""
    def kl(p, q):
        return _infinite_like(tensor_of(p))
    return kl


_kl_beta_infinity = register_kl(Beta, Pareto)(_infinity(lambda p: p.concentration1))
_kl_continuous_bernoulli_infinity = register_kl(ContinuousBernoulli, Pareto)(
    _infinity(lambda p: p.probs))
_kl_exponential_infinity = _infinity(lambda p: p.rate)
_kl_gamma_infinity = _infinity(lambda p: p.concentration)
_kl_gumbel_infinity = _infinity(lambda p: p.loc)
_kl_laplace_infinity = _infinity(lambda p: p.loc)
_kl_normal_infinity = _infinity(lambda p: p.loc)
_kl_pareto_infinity = _infinity(lambda p: p.scale)
_kl_poisson_infinity = _infinity(lambda p: p.rate)
for _q in (Beta, ContinuousBernoulli, Pareto, Uniform):
    register_kl(Exponential, _q)(_kl_exponential_infinity)
    register_kl(Gamma, _q)(_kl_gamma_infinity)
for _q in (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform):
    register_kl(Gumbel, _q)(_kl_gumbel_infinity)
    register_kl(Laplace, _q)(_kl_laplace_infinity)
    register_kl(Normal, _q)(_kl_normal_infinity)
for _q in (Beta, ContinuousBernoulli, Uniform):
    register_kl(Pareto, _q)(_kl_pareto_infinity)
for _q in (Bernoulli, Binomial):
    register_kl(Poisson, _q)(_kl_poisson_infinity)
del _q


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - p.mean * q.logits - ember.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    mean = p.concentration1 / (p.concentration1 + p.concentration0)
    return -p.entropy() - q.rate.log() + q.rate * mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    total = p.concentration1 + p.concentration0
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (p.concentration1.digamma() - total.digamma())  # E[log x]
    t4 = q.rate * p.concentration1 / total
    return -p.entropy() + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    total = p.concentration1 + p.concentration0
    mean = p.concentration1 / total
    var_normal = q.scale.pow(2)
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    second_moment = (mean * (1 - mean) / (total + 1) + mean.pow(2)) * 0.5
    return -p.entropy() + t2 + (second_moment - q.loc * mean + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = (q.low > p.support.lower_bound) | (q.high < p.support.upper_bound)
    return result.masked_fill(outside, _INF)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - ember.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t2 = 0.5 * (math.log(2.0 * math.pi) + ember.square(q.loc / q.scale)) + ember.log(q.scale)
    t3 = ((p.variance + ember.square(p.mean) - 2.0 * q.loc * p.mean)
          / (2.0 * ember.square(q.scale)))
    return -p.entropy() + t2 + t3


def _inf_where(condition, result):
    return ember.where(condition, ember.ones_like(result) * _INF, result)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = ember.ge(q.low, p.support.lower_bound) | ember.le(q.high, p.support.upper_bound)
    return _inf_where(outside, result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    return (-q.concentration * ember.log(ratio) + ratio + q.concentration.lgamma()
            + q.concentration * euler_constant - (1 + euler_constant))


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    product = p.rate * q.scale
    loc_ratio = q.loc / q.scale
    t1 = product.log() - 1
    t2 = ember.exp(loc_ratio) * product / (product + 1)
    return t1 - loc_ratio + t2 + product.reciprocal()


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * ember.log(rate_sqr * var_normal * 2 * math.pi)
    return t1 - 1 + (rate_sqr.reciprocal() - q.loc / p.rate + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    product = p.rate * q.scale
    loc_ratio = q.loc / q.scale
    a = p.concentration
    t1 = (a - 1) * a.digamma() - a.lgamma() - a
    t2 = product.log() + a / product
    t3 = ember.exp(loc_ratio) * (1 + product.reciprocal()).pow(-a) - loc_ratio
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    a = p.concentration
    t1 = 0.5 * ember.log(rate_sqr * var_normal * 2 * math.pi) - a - a.lgamma()
    t2 = 0.5 * (a.pow(2) + a) / rate_sqr
    t3 = q.loc * a / p.rate
    return t1 + (a - 1) * a.digamma() + (t2 - t3 + 0.5 * q.loc.pow(2)) / var_normal


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    ratio = p.scale / q.scale
    t1 = (ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * euler_constant - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (euler_constant + 1)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * ember.log(2 * ratio / math.pi)
    squares = 0.5 * p.loc.pow(2) - p.loc * q.loc + 0.5 * q.loc.pow(2)
    return -t1 + ratio + squares / var_normal - 1


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_ratio = p.loc / q.scale
    var_ratio = (p.scale / q.scale).pow(2)
    loc_ratio = q.loc / q.scale
    t3 = ember.exp(-mean_ratio + 0.5 * var_ratio + loc_ratio)
    return (-var_ratio.log() * 0.5 + mean_ratio - loc_ratio + t3
            - (0.5 * (1 + math.log(2 * math.pi))))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    difference = p.loc - q.loc
    standardized = difference / p.scale
    t1 = ember.log(p.scale / q.scale)
    t2 = math.sqrt(2 / math.pi) * p.scale * ember.exp(-0.5 * standardized.pow(2))
    t3 = difference * ember.erf(math.sqrt(0.5) * standardized)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    product = p.scale * q.rate
    result = ((p.alpha / product).log() - p.alpha.reciprocal()
              + p.alpha * product / (p.alpha - 1) - 1)
    return result.masked_fill(p.alpha <= 1, _INF)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return (t1 + t2 + t3 + t4 - 1).masked_fill(p.alpha <= 1, _INF)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * common.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common - q.loc).pow(2)
    result = t1 - p.alpha.reciprocal() + (t3 + t4) / var_normal - 1
    return result.masked_fill(p.alpha <= 2, _INF)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = (q.concentration1.lgamma() + q.concentration0.lgamma()
          - (q.concentration1 + q.concentration0).lgamma())
    result = t3 + t4 - ember.log(width) - t2
    outside = (p.high > q.support.upper_bound) | (p.low < q.support.lower_bound)
    return result.masked_fill(outside, _INF)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() - p.mean * q.logits - ember.log1p(-q.probs) - q._cont_bern_log_norm()
    outside = ember.ge(p.high, q.support.upper_bound) | ember.le(p.low, q.support.lower_bound)
    return _inf_where(outside, result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponetial(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return result.masked_fill(p.low < q.support.lower_bound, _INF)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t4 = q.rate * (p.high + p.low) / 2
    result = -width.log() + t2 + t3 + t4
    return result.masked_fill(p.low < q.support.lower_bound, _INF)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    ratio = q.scale / (p.high - p.low)
    high = (p.high - q.loc) / q.scale
    low = (p.low - q.loc) / q.scale
    t1 = ratio.log() + 0.5 * (high + low)
    return t1 - ratio * (ember.exp(-high) - ember.exp(-low))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    result = t2 * (q.alpha + 1) - t1
    return result.masked_fill(p.low < q.support.lower_bound, _INF)
