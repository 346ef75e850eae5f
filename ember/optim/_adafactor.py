"""Adafactor (Shazeer & Stern, 2018) as torch 2.13 computes it: second moments kept as a row
and a column factor for matrices (one value per row and per column instead of one per element).

    t = step;  w = t^beta2_decay  (1 - beta2_t);  rho = min(lr, 1 / sqrt(t))
    alpha = max(eps2, RMS(p)) * rho
    p = p * (1 - lr * weight_decay)
    matrices (dim > 1, over the last two dims):
        R = lerp(R, mean of g^2 over the last dim, w);  C = lerp(C, mean of g^2 over dim -2, w)
        V = R C / max(mean of R over dim -2, eps1)
    otherwise:  V = lerp(V, g^2, w)
    U = g / sqrt(max(V, eps1^2));  p = p - alpha / max(1, RMS(U) / d) * U

eps1 = None means the machine epsilon of p's dtype. State: step, and row_var + col_var
(matrices) or variance.
Read next: _muon.py.
"""
from .. import _dtype as dt
from .._backend import array_namespace
from .._creation import zeros_like
from .optimizer import Optimizer, _to_scalar

__all__ = ["Adafactor"]


def _lerp(xp, start, end, weight):
    """torch's lerp_ in place on `start` (its two formulas, for weights below and above 1/2)."""
    if weight < 0.5:
        start += weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)


def _rms(xp, x):
    return float(xp.sqrt((x.astype(xp.float64) ** 2).sum())) / (x.size ** 0.5)


class Adafactor(Optimizer):
    """Adafactor: Adam-like steps with factored second moments (see the module docstring)."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))

    def _init_state(self, p, state, group):
        state["step"] = self._new_step()
        if p.grad.ndim > 1:
            state["row_var"] = p.grad.new_zeros(tuple(p.grad.shape[:-1]) + (1,))
            state["col_var"] = p.grad.new_zeros(tuple(p.grad.shape[:-2]) + (1, p.grad.shape[-1]))
        else:
            state["variance"] = zeros_like(p.grad)

    def _update(self, param, grad, state, group, step):
        xp = array_namespace(param)
        lr = _to_scalar(group["lr"])
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = dt.finfo(dt._BY_NUMPY[param.dtype]).eps
        if group["maximize"]:
            grad = -grad
        weight = step ** group["beta2_decay"]
        alpha = max(eps2, _rms(xp, param)) * min(lr, 1 / step ** 0.5)
        if group["weight_decay"] != 0:
            param *= 1 - lr * group["weight_decay"]
        squares = grad * grad
        if grad.ndim > 1:
            row, col = state["row_var"]._data, state["col_var"]._data
            _lerp(xp, row, xp.sqrt(squares.sum(-1, keepdims=True)) ** 2 / grad.shape[-1], weight)
            _lerp(xp, col, xp.sqrt(squares.sum(-2, keepdims=True)) ** 2 / grad.shape[-2], weight)
            estimate = (row @ col) / xp.maximum(row.mean(-2, keepdims=True), eps1)
        else:
            variance = state["variance"]._data
            _lerp(xp, variance, squares, weight)
            estimate = variance.copy()
        update = grad / xp.sqrt(xp.maximum(estimate, eps1 * eps1))
        denom = max(1.0, _rms(xp, update) / group["d"])
        param -= (alpha / denom) * update
