"""Adam and AdamW (with amsgrad, weight decay and maximize), torch's single-tensor form.

    g = grad (negated if maximize) [+ weight_decay * p  for Adam]
    p = p * (1 - lr * weight_decay)                     [AdamW: decoupled decay]
    m = m + (1 - beta1) * (g - m)                       (torch's lerp)
    v = beta2 * v + (1 - beta2) * g * g
    v_max = max(v_max, v)                               [amsgrad: use v_max below]
    p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

State: step (0-d float32), exp_avg, exp_avg_sq, max_exp_avg_sq (amsgrad only).
Read next: the other optimizers in any order; each is this pattern with different math.
"""
from .._backend import array_namespace
from .._creation import zeros_like
from .._tensor import Tensor
from . import _checks as check
from .optimizer import Optimizer, _to_scalar

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam: steps scaled by bias-corrected running averages of the gradient and of its square.

        m = beta1 * m + (1 - beta1) * g;   v = beta2 * v + (1 - beta2) * g * g
        p = p - lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)

    Arguments, torch's names and defaults: `lr=1e-3`, `betas=(0.9, 0.999)` (two floats or two
    1-element tensors), `eps=1e-8`, `weight_decay=0` (added to the gradient, or, with
    `decoupled_weight_decay=True`, applied to `p` directly as in AdamW), `amsgrad=False` (use the
    running maximum of `v`), and keyword-only `foreach`, `maximize`, `capturable`, `differentiable`,
    `fused`, `decoupled_weight_decay`.

    `foreach` and `fused` are accepted and kept in the param groups, but ember has one
    implementation (torch's single-tensor math), so they change nothing (fused=True with
    foreach=True raises, as in torch). `capturable` is accepted and only decides, as in torch, where
    a loaded `step` lives. differentiable=True raises NotImplementedError."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        check.lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check.betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        both_floats = isinstance(betas[0], float) and isinstance(betas[1], float)
        both_tensors = isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor)
        if not (both_floats or both_tensors):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, beta in enumerate(betas):
            if isinstance(beta, Tensor) and beta.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(_to_scalar(beta) for beta in betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))
        check.flags(type(self).__name__, differentiable, fused, foreach)

    def _init_state(self, p, state, group):
        state["step"] = self._new_step()
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = zeros_like(p)

    def _update(self, param, grad, state, group, step):
        xp = array_namespace(param)
        lr, (beta1, beta2), eps = _to_scalar(group["lr"]), group["betas"], group["eps"]
        weight_decay = group["weight_decay"]
        if group["maximize"]:
            grad = -grad
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        # one scratch array for the temporaries (the hot loop of most training runs)
        tmp = xp.subtract(grad, m)
        tmp *= 1 - beta1
        m += tmp                                    # m += (1 - beta1) * (g - m)
        v *= beta2
        xp.multiply(grad, 1 - beta2, out=tmp)
        tmp *= grad
        v += tmp                                    # v = beta2 v + (1 - beta2) g g
        if group["amsgrad"]:
            v_max = state["max_exp_avg_sq"]._data
            xp.maximum(v_max, v, out=v_max)
            v = v_max
        step_size = lr / (1 - beta1 ** step)
        denom = xp.sqrt(v)
        denom /= (1 - beta2 ** step) ** 0.5
        denom += eps
        xp.multiply(m, -step_size, out=tmp)        # torch's addcdiv order: (value * m) / denom
        tmp /= denom
        param += tmp


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
