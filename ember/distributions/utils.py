"""Helpers shared by the distributions: broadcasting parameters, probabilities <-> logits,
lazily computed attributes, and packing lower-triangular matrices into vectors.

Read next: constraints.py.
"""
import math
import numbers
from functools import update_wrapper

import ember

__all__ = ["broadcast_all", "clamp_probs", "euler_constant", "lazy_property",
           "logits_to_probs", "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant


def broadcast_all(*values):
    """The arguments as tensors of one broadcast shape. Python numbers become tensors of the
    first tensor argument's dtype and device (the default dtype if there is none)."""
    if not all(isinstance(v, (ember.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    first = next((v for v in values if isinstance(v, ember.Tensor)), None)
    options = ({"dtype": ember.get_default_dtype()} if first is None
               else {"dtype": first.dtype, "device": first.device})
    tensors = [v if isinstance(v, ember.Tensor) else ember.tensor(v, **options) for v in values]
    return ember.broadcast_tensors(*tensors)


def _standard_normal(shape, dtype, device):
    """N(0, 1) noise of `shape`."""
    return ember.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """Sum over the `dim` rightmost dimensions of `value`."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: sigmoid for one binary event, else softmax over the last dim
    (the logits may then be unnormalised log-probabilities)."""
    if is_binary:
        return ember.sigmoid(logits)
    return ember.softmax(logits, dim=-1)


def clamp_probs(probs):
    """probs clamped to [eps, 1 - eps] of their dtype, so that their logs are finite."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities: log-odds for binary events, else log-probabilities."""
    clamped = clamp_probs(probs)
    if is_binary:
        return ember.log(clamped) - ember.log1p(-clamped)
    return ember.log(clamped)


class lazy_property:
    """A property computed on first access and then stored in the instance (the `probs` and
    `logits` of a distribution built from the other). Computed with grad mode on, so the
    stored value keeps its graph."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _LazyPropertyDescriptor(self.wrapped)
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _LazyPropertyDescriptor(lazy_property, property):
    """What `type(d).probs` returns: a property too, so introspection treats it as one."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)
        lazy_property.__init__(self, wrapped)


def _tril_mask(n, diag, device):
    """n x n bool mask of the entries on or below diagonal `diag`."""
    index = ember.arange(n, device=device)
    return index < index.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The entries of the last two dims on or below diagonal `diag`, row by row, as the last
    dim of a (batched) vector."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of `tril_matrix_to_vec`: the last dim unpacked row by row into the lower
    triangle of an n x n matrix (zeros elsewhere)."""
    # n is the positive root of n^2 + (1 + 2 diag) n - |diag| (diag + 1) - 2 k = 0
    k = vec.shape[-1]
    n = (-(1 + 2 * diag) + math.sqrt((1 + 2 * diag) ** 2 + 8 * k + 4 * abs(diag) * (diag + 1))) / 2
    if abs(round(n) - n) > ember.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {k} which cannot be expressed as the "
                         "lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat


def require_one(probs, logits):
    """torch's check for the distributions given either `probs` or `logits`: exactly one."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class BinaryParameter:
    """What a distribution with one event probability shares (Bernoulli, Binomial,
    NegativeBinomial, LogitRelaxedBernoulli): the probability given as `probs` or as `logits`
    (log-odds), each derived from the other on first use, and kept as `_param`."""

    def _set_parameter(self, probs, logits, *others):
        """Check that exactly one of probs/logits is given, broadcast it with `others`, and keep
        it; returns the broadcast (others..., parameter)."""
        require_one(probs, logits)
        *others, param = broadcast_all(*others, probs if probs is not None else logits)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        return (*others, param)

    def _keep_parameter(self, new):
        """After `expand`: `new` keeps the parameter this one was given."""
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @lazy_property
    def logits(self):
        """The log-odds (derived from `probs` when those were given)."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """The event probability (derived from `logits` when those were given)."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        """The shape of the parameter tensor (probs or logits)."""
        return self._param.size()
