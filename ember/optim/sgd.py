"""SGD with momentum, dampening, Nesterov, weight decay and maximize (torch's formulation).

    g = grad (negated if maximize) + weight_decay * p
    b = g                                   on the first step (a copy)
    b = momentum * b + (1 - dampening) * g  afterwards
    g = g + momentum * b  (nesterov)  or  g = b
    p = p - lr * g

State: `momentum_buffer` only when momentum != 0 (no `step`), as in torch.
Read next: adam.py.
"""
from . import _checks as check
from .optimizer import Optimizer, _as_tensor, _to_scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum (Nesterov or not), dampening, weight
    decay and maximize.

        g = grad + weight_decay * p;   b = momentum * b + (1 - dampening) * g   (b = g at first)
        p = p - lr * (g + momentum * b  if nesterov else  b)

    Arguments, torch's names and defaults: `lr=1e-3`, `momentum=0`, `dampening=0`, `weight_decay=0`,
    `nesterov=False` (needs momentum > 0 and dampening 0), and keyword-only `maximize=False` (ascend
    instead), `foreach=None`, `differentiable=False`, `fused=None`.

    `foreach` and `fused` are accepted and kept in the param groups, but ember has one
    implementation (torch's single-tensor math), so they change nothing (fused=True with
    foreach=True raises, as in torch). differentiable=True raises NotImplementedError."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        check.lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))
        check.flags("SGD", differentiable, fused, foreach)

    def _update(self, param, grad, state, group, step):
        lr, momentum = _to_scalar(group["lr"]), group["momentum"]
        weight_decay = _to_scalar(group["weight_decay"])
        if group["maximize"]:
            grad = -grad
        if weight_decay != 0:
            grad = grad + weight_decay * param
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = grad.copy()
                state["momentum_buffer"] = _as_tensor(buf)
            else:
                buf = buf._data
                buf *= momentum
                dampening = group["dampening"]
                buf += grad if dampening == 0 else (1 - dampening) * grad
            grad = grad + momentum * buf if group["nesterov"] else buf
        param -= lr * grad
