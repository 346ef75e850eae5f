"""ASGD (averaged SGD), torch's single-tensor form.

    g = grad (negated if maximize) + weight_decay * p
    p = p * (1 - lambd * eta) - eta * g
    ax = ax + mu * (p - ax)            (ax = p while mu == 1)
    eta = lr / (1 + lambd * lr * t)^alpha;   mu = 1 / max(1, t - t0)

State: step, eta, mu (0-d float32 tensors, as in torch), ax (the running average of p).
"""
from .. import _creation
from .. import _dtype as dt
from .._backend import array_namespace
from .._creation import zeros_like
from . import _checks as check
from .optimizer import Optimizer, _to_scalar

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD: SGD with a decaying step size that also keeps `ax`, the running average of the
    parameters (in `state[p]["ax"]`).

        p = p * (1 - lambd * eta) - eta * g;   ax = ax + mu * (p - ax)
        eta = lr / (1 + lambd * lr * t)^alpha;   mu = 1 / max(1, t - t0)

    Arguments, torch's names and defaults: `lr=1e-2`, `lambd=1e-4`, `alpha=0.75`, `t0=1e6`,
    `weight_decay=0` (added to the gradient), `foreach=None`, `maximize=False`,
    `differentiable=False`, `capturable=False`.

    `foreach` is accepted and kept in the param groups, but ember has one implementation (torch's
    single-tensor math), so it changes nothing. `capturable` is accepted and only decides, as in
    torch, where a loaded `step` lives. differentiable=True raises NotImplementedError."""

    _scalar_state_keys = ("step", "eta", "mu")

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        check.lr(lr)
        check.nonnegative(weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))
        check.flags("ASGD", differentiable, None, foreach)

    def _init_state(self, p, state, group):
        state["step"] = self._new_step()
        state["eta"] = _creation.tensor(float(_to_scalar(group["lr"])), dtype=dt.float32)
        state["mu"] = _creation.tensor(1.0, dtype=dt.float32)
        state["ax"] = zeros_like(p)

    def _update(self, param, grad, state, group, step):
        lr, lambd, alpha = _to_scalar(group["lr"]), group["lambd"], group["alpha"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        eta, mu, ax = state["eta"]._data, state["mu"]._data, state["ax"]._data
        eta_value = float(eta)
        param *= 1 - lambd * eta_value
        param -= eta_value * grad
        if float(mu) != 1:
            ax += (param - ax) * mu  # mu is a 0-d array: the product keeps its precision
        else:
            ax[...] = param
        # torch makes the new values default-dtype (float32) tensors first: they are rounded
        # to float32 even where eta and mu are float64 (loaded for float64 parameters)
        xp = array_namespace(param)
        eta[...] = xp.float32(lr / (1 + lambd * lr * step) ** alpha)
        mu[...] = xp.float32(1 / max(1, step - group["t0"]))
