"""Rprop (resilient backpropagation): per-element step sizes driven by gradient signs only.

    s = sign(g * g_prev)                          (g negated if maximize)
    step_size = clamp(step_size * (etaplus if s > 0, etaminus if s < 0, 1 if s == 0),
                      step_size_min, step_size_max)
    g = 0 where s < 0                             (after a sign flip, wait one step)
    p = p - sign(g) * step_size;   g_prev = g

State: step, prev (g_prev), step_size (starts at lr).
"""
from .._backend import array_namespace
from .._creation import full_like, zeros_like
from . import _checks as check
from .optimizer import Optimizer, _to_scalar

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop: each element has its own step size, grown by `etaplus` while its gradient keeps its
    sign and shrunk by `etaminus` when the sign flips (then that element skips one step); only the
    gradient's sign moves the parameter.

        step_size = clamp(step_size * eta, step_size_min, step_size_max)
        p = p - sign(g) * step_size

    Arguments, torch's names and defaults: `lr=1e-2` (the initial step size), `etas=(0.5, 1.2)`
    (etaminus, etaplus), `step_sizes=(1e-6, 50)` (min, max), and keyword-only `capturable`,
    `foreach`, `maximize`, `differentiable`.

    `foreach` is accepted and kept in the param groups, but ember has one implementation (torch's
    single-tensor math), so it changes nothing. `capturable` is accepted and only decides, as in
    torch, where a loaded `step` lives. differentiable=True raises NotImplementedError."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check.lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))
        check.flags("Rprop", differentiable, None, foreach)

    def _init_state(self, p, state, group):
        state["step"] = self._new_step()
        state["prev"] = zeros_like(p)
        state["step_size"] = full_like(p, _to_scalar(group["lr"]))

    def _update(self, param, grad, state, group, step):
        xp = array_namespace(param)
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        if group["maximize"]:
            grad = -grad
        prev, step_size = state["prev"]._data, state["step_size"]._data
        # the factors are written into the sign array, so they round to the parameter's
        # dtype exactly as torch's do (and a NaN product stays NaN)
        factor = xp.sign(grad * prev)
        factor[factor > 0] = etaplus
        factor[factor < 0] = etaminus
        factor[factor == 0] = 1
        step_size *= factor
        xp.clip(step_size, step_size_min, step_size_max, out=step_size)
        grad = grad.copy()
        grad[factor == etaminus] = 0
        param -= xp.sign(grad) * step_size
        prev[...] = grad
