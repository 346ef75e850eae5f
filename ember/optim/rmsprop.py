"""RMSprop (with momentum, centering, weight decay and maximize), torch's single-tensor form.

    g = grad (negated if maximize) + weight_decay * p
    v = alpha * v + (1 - alpha) * g * g
    a = a + (1 - alpha) * (g - a)              [centered: running mean of g]
    s = sqrt(v - a * a)  [centered]  or  sqrt(v);   s = s + eps
    b = momentum * b + g / s;   p = p - lr * b   [momentum > 0]
    p = p - lr * g / s                            [otherwise]

State: step, square_avg, momentum_buffer (momentum > 0), grad_avg (centered).
"""
from .._backend import array_namespace
from .._creation import zeros_like
from . import _checks as check
from .optimizer import Optimizer, _to_scalar

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop: steps divided by the root of a running average of squared gradients (minus the
    squared running mean of the gradient when centered).

        v = alpha * v + (1 - alpha) * g * g;   s = sqrt(v) + eps
        p = p - lr * g / s,   or with momentum: b = momentum * b + g / s;  p = p - lr * b

    Arguments, torch's names and defaults: `lr=1e-2`, `alpha=0.99`, `eps=1e-8`, `weight_decay=0`,
    `momentum=0`, `centered=False`, `capturable=False`, `foreach=None`, `maximize=False`,
    `differentiable=False`.

    `foreach` is accepted and kept in the param groups, but ember has one implementation (torch's
    single-tensor math), so it changes nothing. `capturable` is accepted and only decides, as in
    torch, where a loaded `step` lives. differentiable=True raises NotImplementedError."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check.lr(lr)
        check.nonnegative(epsilon=eps, momentum=momentum, weight_decay=weight_decay,
                           alpha=alpha)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))
        check.flags("RMSprop", differentiable, None, foreach)

    def _init_state(self, p, state, group):
        state["step"] = self._new_step()
        state["square_avg"] = zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = zeros_like(p)

    def _update(self, param, grad, state, group, step):
        xp = array_namespace(param)
        lr, alpha, eps = _to_scalar(group["lr"]), group["alpha"], group["eps"]
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        square_avg = state["square_avg"]._data
        square_avg *= alpha
        square_avg += (1 - alpha) * grad * grad
        if group["centered"]:
            grad_avg = state["grad_avg"]._data
            grad_avg += (1 - alpha) * (grad - grad_avg)
            avg = xp.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = xp.sqrt(square_avg)
        avg += eps
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]._data
            buf *= group["momentum"]
            buf += grad / avg
            param -= lr * buf
        else:
            param += (-lr * grad) / avg
