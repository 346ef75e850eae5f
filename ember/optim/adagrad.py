"""Adagrad (with learning-rate decay, weight decay and maximize), torch's single-tensor form.

    g = grad (negated if maximize) + weight_decay * p
    lr_t = lr / (1 + (t - 1) * lr_decay)
    s = s + g * g                               (s starts at initial_accumulator_value)
    p = p - lr_t * g / (sqrt(s) + eps)

State: step, sum. Like torch, the state of every parameter is created in the constructor;
a parameter added later gets its state on its first step, from the *defaults'*
initial_accumulator_value.
"""
from .._backend import array_namespace
from .._creation import full_like
from . import _checks as check
from .optimizer import Optimizer, _to_scalar

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad: per-element steps divided by the root of the sum of all past squared gradients.

        s = s + g * g;   p = p - lr / (1 + (t - 1) * lr_decay) * g / (sqrt(s) + eps)

    Arguments, torch's names and defaults: `lr=1e-2`, `lr_decay=0`, `weight_decay=0` (added to the
    gradient), `initial_accumulator_value=0` (the starting `s`), `eps=1e-10`, `foreach=None`, and
    keyword-only `maximize=False`, `differentiable=False`, `fused=None`. As in torch, the state of
    the constructor's parameters is created at once.

    `foreach` and `fused` are accepted and kept in the param groups, but ember has one
    implementation (torch's single-tensor math), so they change nothing (fused=True with
    foreach=True raises, as in torch). differentiable=True raises NotImplementedError."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        check.lr(lr)
        check.nonnegative(lr_decay=lr_decay, weight_decay=weight_decay,
                           initial_accumulator_value=initial_accumulator_value, epsilon=eps)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))
        check.flags("Adagrad", differentiable, fused, foreach)
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p] = self._new_state(p, group["initial_accumulator_value"])

    def _new_state(self, p, initial_value):
        return {"step": self._new_step(), "sum": full_like(p, initial_value)}

    def _init_state(self, p, state, group):
        state.update(self._new_state(p, self.defaults["initial_accumulator_value"]))

    def _update(self, param, grad, state, group, step):
        xp = array_namespace(param)
        lr = _to_scalar(group["lr"])
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        clr = lr / (1 + (step - 1) * group["lr_decay"])
        state_sum = state["sum"]._data
        state_sum += grad * grad
        std = xp.sqrt(state_sum)
        std += group["eps"]
        param += (-clr * grad) / std
