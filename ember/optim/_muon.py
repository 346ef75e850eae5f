"""Muon (Jordan et al., 2024): momentum, then the update orthogonalized by a Newton-Schulz
iteration, for 2-d parameters only -- torch 2.13's formulation.

    B = lerp(B, g, 1 - momentum);  M = lerp(g, B, momentum) (nesterov) or B
    X = M / max(|M|_F, eps) in bfloat16 (transposed when tall); k times:
        A = X X^T;  X = a X + (b A + c A A) X          (ns_coefficients (a, b, c), ns_steps k)
    p = p * (1 - lr * weight_decay);  p = p - lr' X,
    lr' = lr * sqrt(max(1, rows / cols)) ("original", the default) or
          lr * 0.2 * sqrt(max(rows, cols)) ("match_rms_adamw")

The iteration runs in bfloat16 as torch's does: each product is computed in float32 from
bfloat16 operands and rounded back to bfloat16, so results agree with torch's to bfloat16
precision. State: momentum_buffer.
Read next: optimizer.py.
"""
import math

import ml_dtypes

from .._backend import array_namespace
from .._creation import zeros_like
from .optimizer import Optimizer, _to_scalar

__all__ = ["Muon"]

_BF16 = ml_dtypes.bfloat16


def _bf16(xp, x):
    """Round float32 values to bfloat16 and back (the precision torch stores between ops)."""
    return x.astype(_BF16).astype(xp.float32)


def _lerp(start, end, weight):
    """torch's lerp (two formulas, for weights below and above 1/2), out of place."""
    if weight < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1 - weight)


def zeropower_via_newtonschulz(xp, g, ns_coefficients, ns_steps, eps):
    """An approximately orthogonal matrix U S' V^T (S' near 1) from G = U S V^T."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if g.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = _bf16(xp, g.astype(xp.float32))
    tall = g.shape[0] > g.shape[1]
    if tall:
        x = x.T
    norm = _bf16(xp, xp.sqrt((x * x).sum(dtype=xp.float32)).reshape(()))
    x = _bf16(xp, x / _bf16(xp, xp.maximum(norm, eps)))
    for _ in range(ns_steps):
        gram = _bf16(xp, x @ x.T)
        mix = _bf16(xp, b * gram + c * (gram @ gram))
        x = _bf16(xp, a * x + mix @ x)
    return x.T if tall else x


def _adjusted_lr(lr, adjust_lr_fn, shape):
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    return lr * 0.2 * math.sqrt(max(rows, cols))


class Muon(Optimizer):
    """Muon for 2-d parameters (see the module docstring)."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(3.4445, -4.775, 2.0315), eps=1e-7, ns_steps=5,
                 adjust_lr_fn=None):
        if hasattr(lr, "numel") and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                                      nesterov=nesterov, ns_coefficients=ns_coefficients,
                                      eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _init_state(self, p, state, group):
        state["momentum_buffer"] = zeros_like(p.grad)

    def _update(self, param, grad, state, group, step):
        xp = array_namespace(param)
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        lr, momentum = _to_scalar(group["lr"]), group["momentum"]
        buf = state["momentum_buffer"]._data
        buf[...] = _lerp(buf, grad, 1 - momentum)
        update = _lerp(grad, buf, momentum) if group["nesterov"] else buf
        update = zeropower_via_newtonschulz(xp, update, group["ns_coefficients"],
                                            group["ns_steps"], group["eps"])
        param *= 1 - lr * group["weight_decay"]
        param -= (_adjusted_lr(lr, group["adjust_lr_fn"], param.shape) * update).astype(
            param.dtype)
