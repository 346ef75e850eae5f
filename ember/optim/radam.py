"""RAdam (rectified Adam), torch's single-tensor form.

    g = grad (negated if maximize) [+ weight_decay * p]  or  p = p * (1 - lr * weight_decay)
                                                             [decoupled_weight_decay]
    m = m + (1 - beta1) * (g - m);   v = beta2 * v + (1 - beta2) * g * g
    rho_inf = 2 / (1 - beta2) - 1;   rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
    m_hat = m / (1 - beta1^t)
    if rho_t > 5 (the variance is tractable):
        r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
        p = p - m_hat * lr * sqrt(1 - beta2^t) / (sqrt(v) + eps) * r
    else:
        p = p - m_hat * lr                                   (plain momentum SGD)

State: step, exp_avg, exp_avg_sq.
"""
from .._backend import array_namespace
from .._creation import zeros_like
from . import _checks as check
from .optimizer import Optimizer, _to_scalar

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam: Adam whose adaptive step is scaled by a rectification term `r_t`, and replaced by
    plain momentum SGD (`p = p - lr * m_hat`) in the first steps, while the variance estimate is not
    yet tractable (`rho_t <= 5`).

        rho_inf = 2 / (1 - beta2) - 1;   rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
        p = p - lr * m_hat * r_t * sqrt(1 - beta2^t) / (sqrt(v) + eps)

    Arguments, torch's names and defaults: `lr=1e-3`, `betas=(0.9, 0.999)`, `eps=1e-8`,
    `weight_decay=0`, `decoupled_weight_decay=False`, and keyword-only `foreach`, `maximize`,
    `capturable`, `differentiable`.

    `foreach` is accepted and kept in the param groups, but ember has one implementation (torch's
    single-tensor math), so it changes nothing. `capturable` is accepted and only decides, as in
    torch, where a loaded `step` lives. differentiable=True raises NotImplementedError."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        check.lr(lr)
        check.nonnegative(epsilon=eps)
        check.betas(betas)
        check.nonnegative(weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach,
                                      capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      differentiable=differentiable))
        check.flags("RAdam", differentiable, None, foreach)

    def _init_state(self, p, state, group):
        state["step"] = self._new_step()
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)

    def _update(self, param, grad, state, group, step):
        xp = array_namespace(param)
        lr, (beta1, beta2) = _to_scalar(group["lr"]), group["betas"]
        weight_decay = group["weight_decay"]
        if group["maximize"]:
            grad = -grad
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
        exp_avg += (1 - beta1) * (grad - exp_avg)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        bias_correction2 = 1 - beta2 ** step
        update = exp_avg / (1 - beta1 ** step) * lr
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * beta2 ** step / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            denom = xp.sqrt(exp_avg_sq)
            denom += group["eps"]
            update *= bias_correction2 ** 0.5 / denom
            update *= rect
        param -= update
