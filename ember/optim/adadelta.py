"""Adadelta (with weight decay and maximize), torch's single-tensor form.

    g = grad (negated if maximize) + weight_decay * p
    v = rho * v + (1 - rho) * g * g
    d = sqrt(u + eps) / sqrt(v + eps) * g
    u = rho * u + (1 - rho) * d * d
    p = p - lr * d

State: step, square_avg (v), acc_delta (u).
"""
from .._backend import array_namespace
from .._creation import zeros_like
from . import _checks as check
from .optimizer import Optimizer, _to_scalar

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta: the step is the gradient rescaled by the ratio of running RMS values of past steps
    and past gradients.

        v = rho * v + (1 - rho) * g * g;   d = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * d * d;   p = p - lr * d

    Arguments, torch's names and defaults: `lr=1.0`, `rho=0.9`, `eps=1e-6`, `weight_decay=0` (added
    to the gradient), `foreach=None`, and keyword-only `capturable=False`, `maximize=False`,
    `differentiable=False`.

    `foreach` is accepted and kept in the param groups, but ember has one implementation (torch's
    single-tensor math), so it changes nothing. `capturable` is accepted and only decides, as in
    torch, where a loaded `step` lives. differentiable=True raises NotImplementedError."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check.lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check.nonnegative(epsilon=eps, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable,
                                      foreach=foreach, differentiable=differentiable))
        check.flags("Adadelta", differentiable, None, foreach)

    def _init_state(self, p, state, group):
        state["step"] = self._new_step()
        state["square_avg"] = zeros_like(p)
        state["acc_delta"] = zeros_like(p)

    def _update(self, param, grad, state, group, step):
        xp = array_namespace(param)
        lr, rho, eps = _to_scalar(group["lr"]), group["rho"], group["eps"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        square_avg, acc_delta = state["square_avg"]._data, state["acc_delta"]._data
        square_avg *= rho
        square_avg += (1 - rho) * grad * grad
        std = xp.sqrt(square_avg + eps)
        delta = xp.sqrt(acc_delta + eps)
        delta /= std
        delta *= grad
        acc_delta *= rho
        acc_delta += (1 - rho) * delta * delta
        param -= lr * delta
