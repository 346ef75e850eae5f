"""Adamax (Adam with the infinity norm), torch's single-tensor form.

    g = grad (negated if maximize) + weight_decay * p
    m = m + (1 - beta1) * (g - m)
    u = max(beta2 * u, |g| + eps)
    p = p - lr / (1 - beta1^t) * m / u

State: step, exp_avg (m), exp_inf (u).
"""
from .._backend import array_namespace
from .._creation import zeros_like
from . import _checks as check
from .optimizer import Optimizer, _to_scalar

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax: Adam with the infinity norm in place of the running average of squared gradients.

        m = beta1 * m + (1 - beta1) * g;   u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1^t) * m / u

    Arguments, torch's names and defaults: `lr=2e-3`, `betas=(0.9, 0.999)`, `eps=1e-8`,
    `weight_decay=0` (added to the gradient), `foreach=None`, and keyword-only `maximize=False`,
    `differentiable=False`, `capturable=False`.

    `foreach` is accepted and kept in the param groups, but ember has one implementation (torch's
    single-tensor math), so it changes nothing. `capturable` is accepted and only decides, as in
    torch, where a loaded `step` lives. differentiable=True raises NotImplementedError."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        check.lr(lr)
        check.nonnegative(epsilon=eps)
        check.betas(betas)
        check.nonnegative(weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))
        check.flags("Adamax", differentiable, None, foreach)

    def _init_state(self, p, state, group):
        state["step"] = self._new_step()
        state["exp_avg"] = zeros_like(p)
        state["exp_inf"] = zeros_like(p)

    def _update(self, param, grad, state, group, step):
        xp = array_namespace(param)
        lr, (beta1, beta2) = _to_scalar(group["lr"]), group["betas"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        exp_avg, exp_inf = state["exp_avg"]._data, state["exp_inf"]._data
        exp_avg += (1 - beta1) * (grad - exp_avg)
        exp_inf *= beta2
        norm = xp.abs(grad)
        norm += group["eps"]
        xp.maximum(exp_inf, norm, out=exp_inf)
        clr = lr / (1 - beta1 ** step)
        param += (-clr * exp_avg) / exp_inf
