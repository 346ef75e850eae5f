"""`ExponentialFamily`: distributions with density p(x) = h(x) exp(<theta, t(x)> - F(theta)).

A subclass gives its natural parameters theta (`_natural_params`), the log-normaliser F
(`_log_normalizer`) and E[log h(x)] (`_mean_carrier_measure`); the entropy then follows by
autograd, H = F(theta) - <theta, grad F(theta)> - E[log h(x)], and so does the KL divergence
between two members of one family (the Bregman divergence of F, in kl.py).

Read next: normal.py.
"""
import ember

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of the exponential-family distributions (Normal, Gamma, Beta, ...)."""

    @property
    def _natural_params(self):
        """The natural parameters theta, a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """The log-normaliser F(theta)."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """E[log h(x)]: the expected log of the carrier measure."""
        raise NotImplementedError

    def entropy(self):
        """F(theta) - <theta, grad F(theta)> - E[log h(x)], by autograd."""
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*params)
        grads = ember.autograd.grad(log_norm.sum(), params, create_graph=True)
        result = result + log_norm
        for theta, g in zip(params, grads):
            result = result - (theta * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
