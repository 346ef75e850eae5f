"""Hyperparameter checks shared by the optimizers, raising torch's errors and messages.

Used as `from . import _checks as check; check.lr(lr); check.nonnegative(epsilon=eps)`.
"""
from .._tensor import Tensor


def flags(name, differentiable, fused, foreach):
    """The foreach/fused/differentiable flags: foreach and fused name faster kernels for the
    same math (accepted, one code path here); differentiable needs a graph through step."""
    if differentiable:
        if fused:
            raise RuntimeError("`fused` does not support `differentiable`")
        raise NotImplementedError(f"{name}(differentiable=True) is not supported by ember")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def nonnegative(**values):
    """`ValueError: Invalid eps value: -1` for the first negative hyperparameter, in order."""
    for name, value in values.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {name} value: {value}")


def betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
