"""NAdam (Adam with Nesterov momentum and momentum decay), torch's single-tensor form.

    g = grad (negated if maximize) [+ weight_decay * p]  or  p = p * (1 - lr * weight_decay)
                                                             [decoupled_weight_decay]
    mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay))       (and mu_{t+1} likewise)
    P_t = P_{t-1} * mu_t                                       (state "mu_product")
    m = m + (1 - beta1) * (g - m);   v = beta2 * v + (1 - beta2) * g * g
    d = sqrt(v / (1 - beta2^t)) + eps
    p = p - lr * (1 - mu_t) / (1 - P_t) * g / d - lr * mu_{t+1} / (1 - P_t * mu_{t+1}) * m / d

State: step, mu_product (0-d float32, as in torch), exp_avg, exp_avg_sq.
"""
from .. import _creation
from .. import _dtype as dt
from .._backend import array_namespace
from .._creation import zeros_like
from . import _checks as check
from .optimizer import Optimizer, _to_scalar

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam: Adam with Nesterov momentum, whose momentum coefficient `mu_t = beta1 * (1 - 0.5 *
    0.96^(t * momentum_decay))` warms up over the steps.

        m, v as in Adam;   P_t = mu_1 * ... * mu_t
        p = p - lr * ((1 - mu_t) / (1 - P_t) * g + mu_{t+1} / (1 - P_t * mu_{t+1}) * m)
                  / (sqrt(v / (1 - beta2^t)) + eps)

    Arguments, torch's names and defaults: `lr=2e-3`, `betas=(0.9, 0.999)`, `eps=1e-8`,
    `weight_decay=0`, `momentum_decay=4e-3`, `decoupled_weight_decay=False` (decay `p` directly
    instead of adding to the gradient), and keyword-only `foreach`, `maximize`, `capturable`,
    `differentiable`.

    `foreach` is accepted and kept in the param groups, but ember has one implementation (torch's
    single-tensor math), so it changes nothing. `capturable` is accepted and only decides, as in
    torch, where a loaded `step` lives. differentiable=True raises NotImplementedError."""

    _scalar_state_keys = ("step", "mu_product")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        check.lr(lr)
        check.nonnegative(epsilon=eps)
        check.betas(betas)
        check.nonnegative(weight_decay=weight_decay, momentum_decay=momentum_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable))
        check.flags("NAdam", differentiable, None, foreach)

    def _init_state(self, p, state, group):
        state["step"] = self._new_step()
        state["mu_product"] = _creation.tensor(1.0, dtype=dt.float32)
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)

    def _update(self, param, grad, state, group, step):
        xp = array_namespace(param)
        lr, (beta1, beta2) = _to_scalar(group["lr"]), group["betas"]
        weight_decay, momentum_decay = group["weight_decay"], group["momentum_decay"]
        if group["maximize"]:
            grad = -grad
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
        mu_product = state["mu_product"]._data
        mu_product *= mu  # in the state's own precision (float32), as torch
        mu_product = float(mu_product)
        exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
        exp_avg += (1 - beta1) * (grad - exp_avg)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        denom = xp.sqrt(exp_avg_sq / (1 - beta2 ** step))
        denom += group["eps"]
        param += (-lr * (1.0 - mu) / (1.0 - mu_product) * grad) / denom
        param += (-lr * mu_next / (1.0 - mu_product * mu_next) * exp_avg) / denom
